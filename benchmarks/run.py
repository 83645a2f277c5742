"""All benchmarks in one run, printed as one table: ``python benchmarks/run.py [--quick]``.

Every ratio compares two things measured side by side in this process, alternating, so that
load on a shared machine affects both alike. Figures are medians over repeats.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable

import numpy as np


def _median_seconds(fn: Callable[[], object], repeats: int) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def _side_by_side(fns: dict[str, Callable[[], object]], repeats: int) -> dict[str, float]:
    times: dict[str, list[float]] = {name: [] for name in fns}
    for _ in range(repeats):
        for name, fn in fns.items():
            start = time.perf_counter()
            fn()
            times[name].append(time.perf_counter() - start)
    return {name: statistics.median(ts) for name, ts in times.items()}


def bench_trajectory(repeats: int) -> list[dict]:
    from grpodyn.numerics.compiled import compiled
    from grpodyn.numerics.trajectory import closed_form, trajectory

    t = np.linspace(0, 2000, 1_000_000)
    e0, v0, zeta, omega0 = 0.6, 0.0, 2.0, 0.01

    def hand_written():  # the unified formula, as a user would type it
        gamma, s = zeta * omega0, omega0 * np.sqrt(zeta**2 - 1)
        return np.exp(-gamma * t) * (e0 * np.cosh(s * t) + (v0 + gamma * e0) * np.sinh(s * t) / s)

    generated = compiled("trajectory")
    med = _side_by_side({
        "hand-written numpy": hand_written,
        "trajectory (validated, stable)": lambda: trajectory(t, e0=e0, v0=v0, zeta=zeta,
                                                              omega0=omega0),
        "closed_form (no validation)": lambda: closed_form(t, e0, v0, zeta, omega0),
        "generated from sympy": lambda: generated(t, e0, v0, zeta, omega0),
    }, repeats)
    base = med["hand-written numpy"]
    return [{"benchmark": f"trajectory, 1e6 points: {name}",
             "figure": f"{1e6 / sec / 1e6:.1f} M points/s",
             "ratio": f"{base / sec:.2f}x hand-written"
             + (" (target >= 2x; numpy, blocked in place: a numba loop measured 0.76x)"
                if name.startswith(("trajectory", "closed")) else "")}
            for name, sec in med.items()]


def _synthetic(seed: int, n: int = 1000) -> tuple[np.ndarray, np.ndarray]:
    from grpodyn.numerics.simulate import simulate_sde

    e = simulate_sde(momentum=0.9, stiffness=0.002, e0=-0.5, steps=n - 1, noise=1e-7, seed=seed)
    noise = 0.03 * np.random.default_rng(seed + 1).standard_normal(n)
    return np.arange(n), 0.7 + e[0] + noise


def bench_fits(repeats: int, batch: int) -> list[dict]:
    from grpodyn.numerics.fit import fit_curve
    from grpodyn.numerics.fit_many import fit_many

    t, y = _synthetic(0)
    rows = []
    for label, kwargs in [("inertial, momentum known", {"momentum": 0.9}),
                          ("inertial, free", {}), ("exponential", {}), ("sigmoid", {})]:
        name = label.split(",")[0]
        sec = _median_seconds(lambda n=name, kw=kwargs: fit_curve(n, t, y, **kw).covariance,
                              repeats)
        rows.append({"benchmark": f"fit of a 1000-point log: {label} (with the process "
                                  "covariance)",
                     "figure": f"{1e3 * sec:.1f} ms (median)", "ratio": ""})
    series = [_synthetic(seed) for seed in range(batch)]
    for name, kwargs, label in [("exponential", {}, "exponential"),
                                ("inertial", {"momentum": 0.9}, "inertial, momentum known")]:
        def singles(name: str = name, kwargs: dict = kwargs) -> None:
            for ts, ys in series:  # one call per log, as a user fitting logs one by one
                _ = fit_curve(name, ts, ys, **kwargs).covariance

        def batched(name: str = name, kwargs: dict = kwargs) -> None:
            for fit in fit_many(name, series, executor="serial", **kwargs):
                _ = fit.covariance

        def pooled(name: str = name, kwargs: dict = kwargs) -> None:
            for fit in fit_many(name, series, progress=False, **kwargs):  # auto: all cores
                _ = fit.covariance

        med = _side_by_side({"single": singles, "batch": batched, "pool": pooled}, 3)
        rows.append({"benchmark": f"batch of {batch} fits ({label}, fit_many, serial), 1000 "
                                  "points each, with the process covariance",
                     "figure": f"{1e3 * med['batch'] / batch:.2f} ms per log vs "
                               f"{1e3 * med['single'] / batch:.2f} ms per single fit",
                     "ratio": f"{med['batch'] / med['single']:.2f}x the single fits' time per "
                              "log (target <= 1x; the same series, side by side)"})
        rows.append({"benchmark": f"batch of {batch} fits ({label}, fit_many, default: "
                                  f"process pool, {os.cpu_count()} cores)",
                     "figure": f"{1e3 * med['pool'] / batch:.2f} ms per log",
                     "ratio": f"{med['pool'] / med['single']:.2f}x the single fits' time per "
                              "log (side by side)"})
    return rows


def bench_fit_vs_curve_fit(repeats: int) -> list[dict]:
    """``fit_curve`` against ``scipy.optimize.curve_fit`` on the same data, alternating.

    curve_fit returns the optimum and the plain covariance s^2 (J^T J)^-1: the like-for-like
    row reads ``FitResult.plain_covariance``. ``fit_curve`` can do more: the theory's process
    covariance (``FitResult.covariance``, computed when first read: FFTs, nnls) and, with
    ``every_start=True``, every start of its multi-start; those rows have no target. curve_fit
    runs one start from ``fit_curve``'s first starting point.
    """
    from scipy.optimize import curve_fit

    from grpodyn.numerics.fit import closed_form, curve_model, fit_curve

    t, y = _synthetic(0)
    rows = []

    def exponential(t, r0, r_star, tau):
        return r_star + (r0 - r_star) * np.exp(-t / tau)

    def inertial(t, r0, r_star, zeta, omega0):
        return r_star + (r0 - r_star) * closed_form(t, 1.0, 0.0, zeta, omega0)

    for name, law, method in [("exponential", exponential, "lm"), ("inertial", inertial, "trf")]:
        model = curve_model(name, t, y)
        p0 = [y[0], y[-1], *model.starts[0]]
        bounds = ((-np.inf, -np.inf, *model.lower), (np.inf, np.inf, *model.upper))
        kwargs = {"method": method} if method == "lm" else {"method": method, "bounds": bounds}
        ours = fit_curve(name, t, y)
        theirs, _ = curve_fit(law, t, y, p0=p0, **kwargs)
        sse_theirs = float(np.sum((law(t, *theirs) - y) ** 2))
        fns = {"plain": lambda n=name: fit_curve(n, t, y).plain_covariance,
               "process": lambda n=name: fit_curve(n, t, y).covariance,
               "curve_fit": lambda f=law, p=p0, k=kwargs: curve_fit(f, t, y, p0=p, **k)}
        if name == "exponential":
            fns["every start"] = lambda n=name: fit_curve(n, t, y,
                                                          every_start=True).plain_covariance
        med = _side_by_side(fns, repeats)
        sse = (f"SSE {ours.rss:.10g} vs {sse_theirs:.10g} (difference "
               f"{ours.rss - sse_theirs:.1e})")
        what = {"plain": ("optimum + plain covariance (like for like)", "target <= 1.5x"),
                "process": ("optimum + the theory's process covariance", "no target: more "
                            "work than curve_fit"),
                "every start": ("every start + plain covariance", "no target: all starts")}
        for key, (label, note) in what.items():
            if key not in med:
                continue
            rows.append({"benchmark": f"fit_curve({name}) vs curve_fit(method={method!r}), "
                                      f"1000 points, side by side: {label}",
                         "figure": f"{1e3 * med[key]:.2f} ms vs {1e3 * med['curve_fit']:.2f} "
                                   f"ms; {sse}",
                         "ratio": f"{med[key] / med['curve_fit']:.2f}x curve_fit ({note})"})
    return rows


def bench_fit_growth(repeats: int) -> list[dict]:
    """The exponential fit at 1e3, 1e4 and 1e5 points: time per point should stay flat."""
    from grpodyn.numerics.fit import fit_curve

    rows, per_point = [], {}
    for n in (1_000, 10_000, 100_000):
        t, y = _synthetic(5, n)
        sec = _median_seconds(lambda t=t, y=y: fit_curve("exponential", t, y),
                              max(3, repeats // (n // 1000)))
        per_point[n] = sec / n
        rows.append({"benchmark": f"fit of a {n}-point log (exponential, whole fit)",
                     "figure": f"{1e3 * sec:.1f} ms",
                     "ratio": f"{1e6 * sec / n:.2f} us per point"
                     + (" (target < 0.5 s)" if n == 100_000 else "")})
    growth = per_point[100_000] / per_point[1_000]
    rows.append({"benchmark": "fit: time per point at 1e5 over 1e3 points",
                 "figure": f"x{growth:.2f}", "ratio": "linear growth: about x1 (up to log n)"})
    return rows


def bench_stability(repeats: int) -> list[dict]:
    from grpodyn.numerics.stability import refresh_stable, regime_map

    beta = np.linspace(0, 0.99, 1000)[:, None]
    k = np.geomspace(1e-4, 3, 1000)[None, :]
    sec = _median_seconds(lambda: refresh_stable(beta, k, 10), repeats)
    sec_regime = _median_seconds(lambda: regime_map(beta, k), repeats)
    return [{"benchmark": "refresh-interval stability map, 1e6 grid points (K = 10)",
             "figure": f"{1e3 * sec:.0f} ms", "ratio": f"{1e6 / sec / 1e6:.1f} M points/s"},
            {"benchmark": "regime map, 1e6 grid points",
             "figure": f"{1e3 * sec_regime:.0f} ms",
             "ratio": f"{1e6 / sec_regime / 1e6:.1f} M points/s"}]


def _plain_loop(seeds: int, steps: int, group: int, lr: float, kl: float, seed: int) -> None:
    """The same GRPO bandit update as a plain per-seed Python loop, completion by completion:
    sample G answers, score them, normalise within the group, sum the score-function terms.
    """
    rng = np.random.default_rng(seed)
    p_ref = 0.5
    for _ in range(seeds):
        x = 0.0
        for _ in range(steps):
            p = 1.0 / (1.0 + np.exp(-x))
            rewards = (rng.random(group) < p).astype(float)
            adv = (rewards - rewards.mean()) / (rewards.std(ddof=1) + 1e-4)
            score = rewards - p  # d log pi(answer) / dx
            ref_over_pi = np.where(rewards == 1.0, p_ref / p, (1 - p_ref) / (1 - p))
            kl_grad = np.mean((1.0 - ref_over_pi) * score)  # TRL's k3, differentiated
            x += lr * (np.mean(adv * score) - kl * kl_grad)


def bench_bandit(repeats: int) -> list[dict]:
    from grpodyn.empirical.bandit.simulation import BanditConfig, simulate_bandit

    config = BanditConfig(lr=0.1, group_size=16, prompts=1, estimator="grpo", kl=0.5)
    seeds, steps = 1000, 300
    rng = np.random.default_rng(0)
    probs = np.full(seeds, 0.7)

    def draws_only():
        for _ in range(steps):
            rng.binomial(16, probs)

    from grpodyn.numerics import fast

    numba_installed = fast.ENABLED

    def simulator(fused: bool) -> None:
        fast.ENABLED = fused and numba_installed
        try:
            simulate_bandit(config, steps=steps, seeds=seeds, seed=1)
        finally:
            fast.ENABLED = numba_installed

    simulator(True)  # compile (or load) the kernel outside the timing
    # the draws the simulator itself makes: one success probability per seed, varying along
    # its path (numpy's binomial sets up per distinct p; the floor's constant p sets up once)
    path = np.ascontiguousarray(simulate_bandit(config, steps=steps, seeds=seeds, seed=1)
                                .p[:steps])

    def own_draws() -> None:
        for n in range(steps):
            rng.binomial(16, path[n])

    loop_seeds = 10
    med = _side_by_side({
        "with numba": lambda: simulator(True),
        "numpy only": lambda: simulator(False),
        "binomial draws alone": draws_only,
        "its own draws": own_draws,
        "plain loop": lambda: _plain_loop(loop_seeds, steps, 16, 0.1, 0.5, 2),
    }, repeats)
    floor = seeds * steps / med["binomial draws alone"]
    loop = loop_seeds * steps / med["plain loop"]
    rows = []
    for name in ("with numba", "numpy only"):
        if name == "with numba" and not numba_installed:
            continue
        rate = seeds * steps / med[name]
        rows.append({"benchmark": f"bandit simulator, G = 16, 1000 seeds, {name}",
                     "figure": f"{rate / 1e6:.2f} M seed-steps/s",
                     "ratio": f"{rate / floor:.2f}x the draw-only rate (target >= 0.5x); "
                              f"{rate / loop:.0f}x the plain per-seed loop"})
    return rows + [{"benchmark": "bandit: plain per-seed Python loop, same update",
                    "figure": f"{loop / 1e3:.1f} k seed-steps/s", "ratio": ""},
                   {"benchmark": "bandit: the binomial draws alone (the floor)",
                    "figure": f"{floor / 1e6:.2f} M seed-steps/s", "ratio": "1.00x"},
                   {"benchmark": "bandit: the simulator's own draws alone (its p path, one p "
                                 "per seed)",
                    "figure": f"{seeds * steps / med['its own draws'] / 1e6:.2f} M seed-steps/s",
                    "ratio": f"{med['binomial draws alone'] / med['its own draws']:.2f}x the "
                             "floor; the simulator with numba runs at "
                             f"{med['its own draws'] / med['with numba']:.2f}x its own draws"}]


def _child(code: str, env: dict | None = None) -> dict:
    """Run ``code`` in a fresh interpreter (``env`` added to, or replacing, os.environ)."""
    out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True,
                         env={**os.environ, **(env or {})}).stdout
    return json.loads(out.strip().splitlines()[-1])


def bench_derivation_and_import(repeats: int) -> list[dict]:
    derive = ("import json, time; from grpodyn.theory import registry, build_info; "
              "t = time.perf_counter(); registry(); print(json.dumps({'s': "
              "time.perf_counter() - t, 'source': build_info().source}))")
    cold, warm = [], []
    for _ in range(repeats):
        with tempfile.TemporaryDirectory() as cache:
            first = _child(derive, {"GRPODYN_CACHE_DIR": cache})
            second = _child(derive, {"GRPODYN_CACHE_DIR": cache})
        assert first["source"] == "derived" and second["source"] == "cache"
        cold.append(first["s"])
        warm.append(second["s"])
    imports = [_child("import json, sys, time; t = time.perf_counter(); "
                      "import grpodyn.numerics.predict, grpodyn.numerics.fit; "
                      "print(json.dumps({'s': time.perf_counter() - t, "
                      "'sympy': 'sympy' in sys.modules}))") for _ in range(repeats)]
    return [{"benchmark": "cold derivation of the whole registry (no cache)",
             "figure": f"{statistics.median(cold):.2f} s", "ratio": "target < 60 s"},
            {"benchmark": "warm derivation (disk cache)",
             "figure": f"{statistics.median(warm):.2f} s", "ratio": "target < 2 s"},
            {"benchmark": "import grpodyn.numerics (predict, fit)",
             "figure": f"{1e3 * statistics.median(i['s'] for i in imports):.0f} ms",
             "ratio": "sympy imported: " + str(any(i["sympy"] for i in imports))}]


def _wall(argv: list[str], env: dict | None = None) -> float:
    start = time.perf_counter()
    subprocess.run(argv, check=True, capture_output=True, env=env)
    return time.perf_counter() - start


def bench_import_and_cli(repeats: int) -> list[dict]:
    """Import of the numeric layer and ``grpodyn fit LOG`` against the numpy + scipy.optimize
    floor, each in fresh interpreters, alternating.

    Every interpreter reads compiled bytecode, as from an installed package: the children run
    with a bytecode cache of their own (``PYTHONPYCACHEPREFIX``, warmed once), whatever
    ``PYTHONDONTWRITEBYTECODE`` says here. Without bytecode, grpodyn's modules (not numpy's and
    scipy's, compiled at their install) are compiled from source in every process: about 0.1 s
    more, not import work.
    """
    timing = ("import json, time; t = time.perf_counter(); import {modules}; "
              "print(json.dumps({{'s': time.perf_counter() - t}}))")
    floor_code = timing.format(modules="numpy, scipy.optimize")
    ours_code = timing.format(modules="grpodyn.numerics.predict, grpodyn.numerics.fit")
    floor, ours, floor_wall, cli_wall = [], [], [], []
    with tempfile.TemporaryDirectory() as tmp:
        env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "",  # empty: bytecode is written
               "PYTHONPYCACHEPREFIX": os.path.join(tmp, "bytecode")}
        log = os.path.join(tmp, "rewards.csv")
        t, y = _synthetic(3)
        with open(log, "w") as handle:
            rows = "".join(f"{a},{float(b)!r}\n" for a, b in zip(t, y, strict=True))
            handle.write("step,reward\n" + rows)
        cli = [sys.executable, "-m", "grpodyn", "fit", log, "--json"]
        for code in (floor_code, ours_code):  # write the bytecode of everything imported
            _child(code, env)
        _wall(cli, env)
        floor_argv = [sys.executable, "-c", "import numpy, scipy.optimize"]
        for _ in range(repeats):
            floor.append(_child(floor_code, env)["s"])
            ours.append(_child(ours_code, env)["s"])
            floor_wall.append(_wall(floor_argv, env))
            cli_wall.append(_wall(cli, env))
    imp = statistics.median(ours) / statistics.median(floor)
    end = statistics.median(cli_wall) / statistics.median(floor_wall)
    return [{"benchmark": "import grpodyn.numerics (predict, fit) vs import numpy, "
             "scipy.optimize (bytecode cached)",
             "figure": f"{1e3 * statistics.median(ours):.0f} ms vs "
                       f"{1e3 * statistics.median(floor):.0f} ms",
             "ratio": f"{imp:.2f}x the floor (target <= 1.2x)"},
            {"benchmark": "grpodyn fit LOG --json (1000 points, all models), whole process "
                          "(bytecode cached)",
             "figure": f"{statistics.median(cli_wall):.2f} s vs "
                       f"{statistics.median(floor_wall):.2f} s (python -c 'import numpy, "
                       "scipy.optimize')",
             "ratio": f"{end:.2f}x the floor (target <= 1.5x)"}]


def bench_lab_pieces() -> list[dict]:
    """The lab's former hot spots, each timed once (seconds; the old cost in the note)."""
    from grpodyn.empirical.bandit import lab
    from grpodyn.numerics import stability
    from grpodyn.numerics.bandit import bandit_theory

    theory = bandit_theory(group_size=64, kl=0.5, kl_estimator="k3")
    lr = lab.THRESHOLD_CONFIG.lr

    def seconds(fn: Callable[[], object]) -> float:
        start = time.perf_counter()
        try:
            fn()
        except stability.InputError:
            pass  # the cap: no threshold, as in the lab
        return time.perf_counter() - start

    mixed = seconds(lambda: [stability.first_unstable_mixed_refresh(
        momentum=b, stiffness_current=lr * theory.kappa_current,
        stiffness_lagged=lr * theory.kappa_stale, cap=2000) for b in (0.0, 0.5, 0.9)])
    stale = {tau: seconds(lambda tau=tau: stability.staleness_max(momentum=0.0,
                                                                   stiffness=1 / tau))
             for tau in (2e2, 2e3, 2e4)}
    transition = seconds(lambda: lab.transition_experiment(steps=3000))
    return [{"benchmark": "first_unstable_mixed_refresh, K up to 2000, three momenta",
             "figure": f"{1e3 * mixed:.0f} ms", "ratio": "was 15.5 s (cycle rebuilt per K)"},
            {"benchmark": "staleness_max at tau = 2e2, 2e3, 2e4",
             "figure": ", ".join(f"{1e3 * v:.1f} ms" for v in stale.values()),
             "ratio": f"growth x{stale[2e4] / stale[2e2]:.1f} over tau x100 (was ~tau^2: "
                      "14 s at 2e4)"},
            {"benchmark": "transition_experiment (61 momenta x 3000 steps)",
             "figure": f"{transition:.2f} s",
             "ratio": "was ~23% of the report (183 000 scalar enumerations)"}]


def bench_jacobians(repeats: int) -> list[dict]:
    """Analytic Jacobians (sympy derivatives, theory/jacobians.py) against forward
    differences of the model, 1000 points: time and the largest relative difference.
    """
    from grpodyn.numerics.compiled import compiled
    from grpodyn.theory.jacobians import FIT_PARAMETERS

    t = np.linspace(0.0, 999.0, 1000)
    rows = []
    for model, point in (("saturation_law", {"r0": 0.2, "r_star": 0.85, "tau": 150.0}),
                         ("trajectory", {"e0": -0.6, "v0": 0.0, "zeta": 1.8, "omega0": 0.01})):
        params = FIT_PARAMETERS[model]
        columns = [compiled(f"{model}_d_{p}") for p in params]
        fn = compiled(model)
        base = [point[p] for p in params]

        def analytic(columns=columns, base=base):
            return [np.broadcast_to(c(t, *base), t.shape) for c in columns]

        def forward(fn=fn, base=base):
            f0 = fn(t, *base)
            out = []
            for i, value in enumerate(base):
                h = 1.49e-8 * max(abs(value), 1e-3)
                shifted = list(base)
                shifted[i] = value + h
                out.append((fn(t, *shifted) - f0) / h)
            return out

        med = _side_by_side({"analytic": analytic, "forward": forward}, repeats)
        worst = max(float(np.max(np.abs(a - f)) / max(np.max(np.abs(a)), 1e-300))
                    for a, f in zip(analytic(), forward(), strict=True))
        rows.append({"benchmark": f"Jacobian of {model}, {len(params)} parameters, 1000 points "
                     "(analytic from sympy vs forward differences)",
                     "figure": f"{1e6 * med['analytic']:.0f} us vs {1e6 * med['forward']:.0f} us",
                     "ratio": f"{med['forward'] / med['analytic']:.2f}x faster; forward "
                              f"differences off by {worst:.1e} (relative)"})
    return rows


def bench_report() -> list[dict]:
    """``grpodyn report`` (the main job) end to end, local process pool."""
    with tempfile.TemporaryDirectory() as out:
        sec = _wall([sys.executable, "-m", "grpodyn", "report", "--out", out, "--json"])
    return [{"benchmark": f"grpodyn report (main job), {os.cpu_count()} cores, process pool",
             "figure": f"{sec:.0f} s", "ratio": "target < 60 s (was ~200 s)"}]


def bench_callback(events: int = 1000) -> list[dict]:
    """Cost of the TRL callback per log event, over a whole run of log events."""
    try:
        from transformers import TrainerControl, TrainerState, TrainingArguments
    except ImportError:
        return [{"benchmark": "TRL callback per log event", "figure": "skipped",
                 "ratio": "needs the trl extra"}]
    from grpodyn.empirical.callback import GRPODynamicsCallback

    rng = np.random.default_rng(0)
    t = np.arange(1, events + 1)
    rewards = 0.85 - 0.6 * np.exp(-t / 200) + 0.05 * rng.normal(size=events)
    args = TrainingArguments(output_dir=tempfile.gettempdir(), report_to=[], use_cpu=True)
    state, control = TrainerState(), TrainerControl()
    callback = GRPODynamicsCallback()
    times = []
    for step, reward in enumerate(rewards, start=1):
        state.global_step = step
        logs = {"reward": float(reward), "reward_std": 0.4, "entropy": 0.5, "kl": 0.01,
                "frac_reward_zero_std": 0.3}
        state.log_history.append({**logs, "step": step})
        start = time.perf_counter()
        callback.on_log(args, state, control, logs=logs)
        times.append(time.perf_counter() - start)
    times_ms = 1e3 * np.asarray(times)
    return [{"benchmark": f"TRL callback per log event ({events} events, fit every "
             f"{callback.refit_every}, diagnosis every {callback.diagnose_every})",
             "figure": f"mean {times_ms.mean():.2f} ms, median {np.median(times_ms):.3f} ms",
             "ratio": f"max {times_ms.max():.0f} ms (a refit or diagnosis); target mean < 5 ms"}]


def _benchmarks(quick: bool) -> dict[str, Callable[[], list[dict]]]:
    """Return each benchmark by name (its bench_* function's), called as the full table calls it."""
    repeats, batch = (5, 100) if quick else (21, 1000)
    few = max(3, repeats // 4)
    return {"trajectory": lambda: bench_trajectory(repeats),
            "fits": lambda: bench_fits(repeats, batch),
            "fit_vs_curve_fit": lambda: bench_fit_vs_curve_fit(repeats),
            "fit_growth": lambda: bench_fit_growth(repeats),
            "bandit": lambda: bench_bandit(few),
            "stability": lambda: bench_stability(few),
            "derivation_and_import": lambda: bench_derivation_and_import(1 if quick else 3),
            "import_and_cli": lambda: bench_import_and_cli(3 if quick else 9),
            "lab_pieces": bench_lab_pieces,
            "jacobians": lambda: bench_jacobians(repeats),
            "callback": lambda: bench_callback(300 if quick else 1000),
            "report": lambda: [] if quick else bench_report()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true", help="fewer repeats, smaller batch")
    parser.add_argument("--json", action="store_true", help="print the rows as JSON")
    parser.add_argument("--only", nargs="+", metavar="NAME",
                        help="run only these benchmarks, as the full table runs them (names of "
                             "the bench_* functions without the prefix, e.g. fit_vs_curve_fit "
                             "callback)")
    args = parser.parse_args()
    benchmarks = _benchmarks(args.quick)
    unknown = [name for name in args.only or () if name not in benchmarks]
    if unknown:
        parser.error(f"--only: no benchmark {', '.join(unknown)} (one of "
                     f"{', '.join(benchmarks)})")
    rows = [row for name in args.only or benchmarks for row in benchmarks[name]()]
    _print(rows, as_json=args.json)


def _print(rows: list[dict], *, as_json: bool) -> None:
    if as_json:
        print(json.dumps(rows, indent=1))
        return
    print("| benchmark | figure | ratio / note |\n|---|---|---|")
    for row in rows:
        print(f"| {row['benchmark']} | {row['figure']} | {row['ratio']} |")


if __name__ == "__main__":
    main()
