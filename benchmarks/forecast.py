"""Forecasts of the rest of a run against naive baselines: ``python benchmarks/forecast.py``.

By default it prints the stratified matrix (all / still moving / quiet) of every grpodyn
forecaster against the forecasting field's baselines on the public logs, the tiny grids, the
bandit and the deep-network relaxation runs (``forecast_matrix``, ``forecast_baselines``;
``--only SOURCE``, ``--quick``, ``--json PATH``). ``--legacy`` gives the per-fraction tables of
the earlier revisions described below, with their own options.

Designed on one source, scored on another: the forecaster's member set, noise model and
stacking were chosen on the DESIGN runs (the seven shipped tiny-model TRL runs and simulated
bandit runs of the diagnosis test bed); the SCORE runs are the public logs of
``../shared/data/real_logs`` (those that load). Three more sources were never used to design
the method: the 42 runs of the tiny-model hyperparameter grid
(``studies/tiny_grids/data/tiny_grid``),
the deep-network runs' reward curves (``studies/deepnet/data``, stable runs of seed 0, with
their momentum) and fresh seeded synthetic runs (``synthetic_runs``). Two more were scored
once, after revision 4 was frozen: ``tiny_grid2`` (the 70 runs of seeds 0-4 of the second
tiny-model grid, ``studies/tiny_grids/data/tiny_grid2``, momentum logged) and ``synthetic_fresh``
(seeds 4000-4039). Revision 5 (a damped-trend member) was designed on the public logs,
synthetic seeds 2000-2039 and 4000-4039, ``tiny_grid`` and ``tiny_grid2`` seeds 0-4, frozen
(``FROZEN``), then scored once on ``tiny_grid2_new`` (seeds 5 and 6 of the second grid),
``tiny_grid2_late`` (seeds 7 and 8, made after that freeze; folder
``--grid2``) and ``synthetic_new`` (seeds 5000-5039); ``--members`` without ``damped`` is
revision 4 (the control). Revision 6 (the band made of the members' quantiles averaged
with the stacking weights instead of their mixture's quantiles) was designed on the same sources
as revision 5, frozen, then scored once on ``synthetic_r6`` (seeds 6000-6039) and
``tiny_grid2_r6`` (seeds 9 and 10 of the second grid, folder ``--grid2``, when there);
``--band mixture`` is revision 5 (the control). The learned prior (``learned_prior``, a network
trained on curves drawn from the theory's prior, :mod:`numerics.learned_prior`; no real run in
its training) was designed on ``design``, ``tiny_grid``, ``synthetic_design`` and ``deepnet``,
frozen (``FROZEN``), then scored once on ``score``, ``tiny_grid2_all`` (seeds 0-10 of the second
grid), ``deepnet_relax`` (the deep-network study's relaxation runs, never forecast before),
``synthetic_lp`` (seeds 7000-7039, new) and the synthetic seeds 3000-6039;
``deepnet_relax_burnin`` (the deep-network study's runs on seeds 1000-1002, made around the
freeze and read only after it) and
``tiny_grid2_s9`` and ``tiny_grid2_s9b`` (seeds 11-12 and 13-14 of the second grid, made after
the freeze) were scored later, once. The learned prior's revision 2 (the noise's colour in the
summary; a prior with a logger's running mean and heavy-tailed steps) was designed on every
source above including ``score`` (the public logs, design data; seen),
frozen (``FROZEN``), then scored once, side by side with the first learned prior (frozen
a02ead2, run from its own checkout) and the ensemble, on ``synthetic_lp2`` (seeds 8000-8039),
``tiny_grid2_s10`` (seeds 15-16 of the second grid, made after the freeze),
``deepnet_relax_moreseeds`` (the deep-network study's seeds 1003-1008, never forecast) and its
runs made after the freeze (``deepnet_relax_linear``, seeds 1100-1108, and ``deepnet_relax_long``,
seeds 1200-1208). Rules fixed at the freeze, on those fresh source x F (0.3, 0.5) cells:
revision 2 replaces the first learned prior if (a) it has at least as many cells with pooled
coverage in 0.85-0.95, and (b) the geometric means over the cells of its median MAE and of its
median interval score, each divided by the first learned prior's, are at most 1.01 and 1.03;
otherwise the first is restored. The default forecaster becomes the learned prior only if it
beats the ensemble on both median MAE and median interval score in every fresh cell and at
F = 0.3 and 0.5 on ``score``. Applied to all 10 cells, condition (a) failed (6 cells against
7), so the first learned prior is shipped again (studies/learned_prior/findings.md 8g); the
default stays the ensemble. ``tiny_grid2_s11`` (seeds 17-18 of the second grid, made long
after both freezes) and ``deepnet_relax_precise`` (the deep network's runs on seeds
1300-1308, made after both freezes) score the shipped learned prior and the ensemble once more.
Nothing is tuned per run.
One table per source (``--only design,score,...`` to choose) is printed; a JSON of every number
goes to ``--json PATH``.

Methods: ``forecaster`` (the stacked curve models, :func:`numerics.forecast.forecast_curve`;
the shipped ``ensemble`` takes its point and band from the calibrated prior and its plateau from
them), each of its members alone
(``m:<name>``, its own noise-model band), ``learned_prior`` (its median and quantile band), and
the naive baselines ``last_value``, ``mean_last20``
(mean of the last 20% of the training part), ``linear`` (least-squares line), ``power_law``
(a + b (t + 1)^c) and ``exponential`` (a - b exp(-t/c)), the last two by plain
``scipy.optimize.curve_fit``. A baseline's band is its forecast +- z times the standard
deviation of its training residuals (for last value and mean-of-last-20%: of the last 20%).

Scores per run, fraction F of the points used for training (F = 0.2, 0.3, 0.5, 0.7): MAE over
the held-out points divided by the noise floor sigma sqrt(2/pi) (the mean absolute deviation of
the white noise, sigma from first differences of the whole run); coverage of the 90% band;
interval score (Gneiting & Raftery 2007) divided by sigma. A reference row ``oracle_smooth``
(not a forecast: a centred moving average of the held-out part itself, window a tenth of it)
shows how close to the noise floor a smoother of the future itself comes; two more reference
rows bound what a forecast of this kind can reach: ``oracle_level`` (the held-out part's own
mean, a constant that knows the future level) and ``oracle_members`` (the forecaster's members
combined with the weights that minimise the absolute error on the held-out part itself: the
best any weighting of the member set could do). The reference rows' bands have zero width
(their coverage and interval score mean nothing). Per method: median
over runs of MAE / floor, pooled coverage (all held-out points), the share of runs with
coverage >= 0.6, and the median interval score / sigma.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
import warnings
from pathlib import Path

import numpy as np
from scipy.optimize import curve_fit
from scipy.stats import norm

from grpodyn.empirical.logs.loaders import LogFormatError, Run, load_run
from grpodyn.empirical.logs.meta import Hyperparameter, RunMeta
from grpodyn.empirical.logs.run_analysis import infer_reward_range, learning_rate_of, momentum_of
from grpodyn.ground import InputError
from grpodyn.numerics.fit import estimate_noise
from grpodyn.numerics.forecast import MEMBERS, _point_weights, forecast_curve
from grpodyn.numerics.learned_prior import WEIGHTS_PATH, load_learned_prior

ROOT = Path(__file__).resolve().parents[1]
FRACTIONS = (0.2, 0.3, 0.5, 0.7)
LEVEL = 0.9
BASELINES = ("last_value", "mean_last20", "linear", "power_law", "exponential")
DEEPNET = ROOT / "studies" / "deepnet" / "data"


def design_runs() -> list[tuple[str, Run]]:
    """Return the shipped tiny-model runs and simulated bandit runs (the design source)."""
    from grpodyn.empirical.diagnostics.testbed import bandit_testbed

    runs = [(p.stem, load_run(p))
            for p in sorted((ROOT / "empirical" / "data" / "tiny_runs").glob("*.json"))]
    runs += [(case.name, case.run) for case in bandit_testbed(seeds=2, steps=400)]
    return runs


def tiny_grid_runs() -> list[tuple[str, Run]]:
    """Return the 42 tiny-model TRL runs of the hyperparameter grid (never design data)."""
    folder = ROOT / "studies" / "tiny_grids" / "data" / "tiny_grid"
    return [(p.stem, load_run(p)) for p in sorted(folder.glob("*.json"))]


def tiny_grid2_runs(*, seeds: tuple[int, ...] = (0, 1, 2, 3, 4),
                    folder: Path | None = None
                    ) -> list[tuple[str, Run]]:
    """Return the runs of ``seeds`` of the second tiny-model grid (``studies/tiny_grids/data``).

    Chosen by file name (``..._seed<k>.json``): seeds 0-4 were never used by the forecaster;
    seeds added later are left out unless asked for. ``folder``: the grid's folder (default
    the shipped one).
    """
    folder = folder or ROOT / "studies" / "tiny_grids" / "data" / "tiny_grid2"
    return [(p.stem, load_run(p)) for p in sorted(folder.glob("*.json"))
            if p.stem.rsplit("_seed", 1)[-1].isdigit()
            and int(p.stem.rsplit("_seed", 1)[-1]) in seeds]


def _deepnet_run(name: str, entry: dict) -> Run | None:
    """Return a run record of the deep-network file ``name`` as a Run, None if unusable.

    Unstable or non-finite runs are left out; the momentum goes into the metadata (the
    inertial member is in play here).
    """
    reward = np.asarray(entry["reward"], dtype=float)
    if entry["unstable"] or not np.all(np.isfinite(reward)):
        return None
    meta = RunMeta(momentum=Hyperparameter(float(entry["setting"]["momentum"]), "logged",
                                           "deepnet setting"))
    return Run(f"deepnet/{name}", "deepnet", np.arange(1.0, reward.size + 1), reward, {},
               meta=meta)


def _deepnet_records(name: str) -> list[dict]:
    """Return the run records of the deep-network data file ``name``."""
    return json.loads((DEEPNET / name).read_text())["runs"]


def deepnet_runs(*, seeds: tuple[int, ...] = (0,)) -> list[tuple[str, Run]]:
    """Return the deep-network runs' reward curves (stable, finite runs of ``seeds``)."""
    out = []
    for size in ("70k", "330k"):
        for entry in _deepnet_records(f"runs_{size}.json"):
            run = _deepnet_run(f"runs_{size}.json", entry) if entry["seed"] in seeds else None
            if run is None:
                continue
            setting = entry["setting"]
            label = "_".join(f"{k}{v}" for k, v in setting.items() if k != "sweep")
            out.append((f"deepnet{size}_{setting['sweep']}_{label}_s{entry['seed']}", run))
    return out


def deepnet_relaxation_runs(prefixes: tuple[str, ...]) -> list[tuple[str, Run]]:
    """Return the deep-network relaxation runs of ``<prefix>_<size>.json`` (momentum 0).

    Made for the deep-network study's relaxation predictions (``relaxruns``, seeds 800-802;
    ``relaxruns_slow``, 900-902; ``relaxruns_burnin``, 1000-1002, and
    ``moreseeds_relaxruns_burnin``, 1003-1008;
    ``relaxruns_linear``, 1100-1108; ``relaxruns_long``, 1200-1208, and ``relaxruns_precise``,
    1300-1308 (70k only), 600 steps, the others 300), sizes 70k then 330k for each prefix where
    made; never used to design a forecaster.
    """
    out = []
    for name in (f"{prefix}_{size}.json" for prefix in prefixes for size in ("70k", "330k")):
        if not (DEEPNET / name).is_file():
            continue
        for entry in _deepnet_records(name):
            run = _deepnet_run(name, entry)
            if run is not None:
                out.append((f"{Path(name).stem}_lr{entry['setting']['lr']}_s{entry['seed']}",
                             run))
    return out


def synthetic_runs(seeds: range) -> list[tuple[str, Run]]:
    """Return seeded synthetic runs: a saturating, flat or sigmoid mean plus AR(1) + white noise.

    Means (one per seed, in turn): exponential r* - (r* - r0) exp(-t / tau), power law
    r* - (r* - r0) (1 + t / tau)^(-1/2), flat, sigmoid; 80-400 steps; the process noise an AR(1)
    (rho 0.5-0.95) and white noise, rewards clipped to [0, 1] (docs/theory.md section 6's noise
    model; the truth is known, nothing here is fitted to a log).
    """
    out = []
    for seed in seeds:
        rng = np.random.default_rng(seed)
        n = int(rng.integers(80, 401))
        t = np.arange(1.0, n + 1)
        r0, r_star = rng.uniform(0.05, 0.4), rng.uniform(0.5, 0.95)
        tau = rng.uniform(0.1, 1.0) * n
        kind = ("exponential", "power", "flat", "sigmoid")[seed % 4]
        if kind == "exponential":
            mean = r_star - (r_star - r0) * np.exp(-t / tau)
        elif kind == "power":
            mean = r_star - (r_star - r0) * (1 + t / tau) ** -0.5
        elif kind == "flat":
            mean = np.full(n, r0 + 0.3)
        else:
            mean = r0 + (r_star - r0) / (1 + np.exp(-(t - rng.uniform(0.2, 0.8) * n) / (tau / 6)))
        rho, sd_x, sd_w = rng.uniform(0.5, 0.95), rng.uniform(0.005, 0.03), rng.uniform(0.02, 0.08)
        x = np.zeros(n)
        for i in range(1, n):
            x[i] = rho * x[i - 1] + sd_x * np.sqrt(1 - rho**2) * rng.standard_normal()
        reward = np.clip(mean + x + sd_w * rng.standard_normal(n), 0.0, 1.0)
        out.append((f"synthetic_{kind}_{seed}",
                    Run(f"synthetic:{seed}", "synthetic", t, reward, {},
                        reward_key="accuracy")))
    return out


def score_runs(folder: Path) -> tuple[list[tuple[str, Run]], list[str]]:
    """Return the public logs that load (the scoring source) and the skipped ones."""
    out, skipped = [], []
    for path in sorted(p for p in folder.iterdir() if p.suffix != ".md"):
        try:
            run = load_run(path)
        except (LogFormatError, InputError) as exc:
            skipped.append(f"{path.name}: {str(exc)[:80]}")
            continue
        out.append((path.name.split("__")[0] + "/" + path.name[-40:], run))
    return out, skipped


def _baseline(name: str, t: np.ndarray, y: np.ndarray, future: np.ndarray
              ) -> tuple[np.ndarray, float]:
    tail = y[int(0.8 * y.size):]
    if name == "last_value":
        return np.full(future.size, y[-1]), float(np.std(tail))
    if name == "mean_last20":
        return np.full(future.size, tail.mean()), float(np.std(tail))
    x, xf = t - t[0], future - t[0]
    if name == "linear":
        coef = np.polyfit(x, y, 1)
        return np.polyval(coef, xf), float(np.std(y - np.polyval(coef, x)))
    if name == "power_law":
        def f(s: np.ndarray, a: float, b: float, c: float) -> np.ndarray:
            return a + b * (s + 1.0) ** c
        p0 = (y[0], (y[-1] - y[0]) / max(np.sqrt(x[-1] + 1), 1), 0.5)
    else:
        def f(s: np.ndarray, a: float, b: float, c: float) -> np.ndarray:
            return a - b * np.exp(-s / c)
        p0 = (y[-1], y[-1] - y[0], max(x[-1] / 3, 1.0))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        popt, _ = curve_fit(f, x, y, p0=p0, maxfev=5000)
    return f(xf, *popt), float(np.std(y - f(x, *popt)))


def _scores(y: np.ndarray, mean: np.ndarray, lower: np.ndarray, upper: np.ndarray,
            sigma: float) -> dict[str, float]:
    alpha = 1 - LEVEL
    penalty = (2 / alpha) * (np.maximum(lower - y, 0) + np.maximum(y - upper, 0))
    floor = sigma * np.sqrt(2 / np.pi)
    inside = (y >= lower) & (y <= upper)
    return {"mae_floor": float(np.mean(np.abs(y - mean)) / floor),
            "coverage": float(np.mean(inside)), "inside": int(inside.sum()), "n": int(y.size),
            "is_sigma": float(np.mean(upper - lower + penalty) / sigma)}


def evaluate(name: str, run: Run, fraction: float, members: tuple[str, ...] = MEMBERS,
             band: str = "averaged", *, ensemble: bool = True,
             learned_prior: Path | None = WEIGHTS_PATH) -> dict[str, dict] | None:
    """Score every method on one run cut at ``fraction`` (None when the cut leaves too little).

    Parameters
    ----------
    name : str
        The run's label (for messages).
    run : Run
        The run.
    fraction : float
        Leading fraction of the points used for training.
    members : tuple of str
        The forecaster's member set.
    band : str
        How the members make the band (``forecast_curve``'s ``band``: ``averaged``, revision
        6; ``mixture``, revision 5).
    ensemble : bool
        Score the stacked forecaster, its members and ``oracle_members`` (False: only the
        baselines, the learned prior and the other oracles, for a quick look).
    learned_prior : Path or None
        Weights of the learned-prior forecaster (None: leave it out).

    Returns
    -------
    dict or None
        Method -> scores (``_scores``; None for a baseline whose fit failed).
    """
    n_train = int(np.floor(fraction * run.n_points))
    if n_train < 8 or run.n_points - n_train < 3 or np.ptp(run.reward[:n_train]) == 0:
        return None
    t, y = run.steps, run.reward
    future, held = t[n_train:], y[n_train:]
    sigma = estimate_noise(y).sigma
    if not sigma > 0:
        return None
    bounds, _ = infer_reward_range(run)
    beta, _ = momentum_of(run, None)
    lr = learning_rate_of(run)
    out = {}
    z = norm.ppf(0.5 + LEVEL / 2)
    if ensemble:
        fc = forecast_curve(t, y, n_train=n_train, future_steps=future, members=members,
                            momentum=beta,
                            learning_rate=None if lr is None else (t, lr), bounds=bounds,
                            level=LEVEL, band=band)
        out["forecaster"] = _scores(held, fc.point, fc.lower, fc.upper, sigma)
        out["forecaster"]["weights"] = fc.weights
        out["forecaster"]["point_weights"] = fc.point_weights
        out["forecaster_mean"] = _scores(held, fc.mean, fc.lower, fc.upper, sigma)
        out["forecaster_median"] = _scores(held, fc.median, fc.lower, fc.upper, sigma)
        for member_name, member in fc.members.items():
            mean, var = member.predictive(future, bounds)
            sd = np.sqrt(var)
            low, high = mean - z * sd, mean + z * sd
            if bounds is not None:
                low, high = np.clip(low, *bounds), np.clip(high, *bounds)
            out[f"m:{member_name}"] = _scores(held, mean, low, high, sigma)
        futures = np.array([m.predictive(future, bounds)[0] for m in fc.members.values()])
        hindsight = _point_weights(futures, held) @ futures
        out["oracle_members"] = _scores(held, hindsight, hindsight, hindsight, sigma)
    if learned_prior is not None:
        try:
            median, low, high = load_learned_prior(learned_prior).band(
                t[:n_train], y[:n_train], future, level=LEVEL, bounds=bounds)
            out["learned_prior"] = _scores(held, median, low, high, sigma)
        except InputError:  # e.g. a training part without step-to-step noise
            out["learned_prior"] = None
    level = np.full(held.size, held.mean())
    out["oracle_level"] = _scores(held, level, level, level, sigma)
    window = max(3, held.size // 10)
    smooth = np.convolve(held, np.ones(window) / window, mode="same") / np.convolve(
        np.ones(held.size), np.ones(window) / window, mode="same")
    out["oracle_smooth"] = _scores(held, smooth, smooth, smooth, sigma)
    for base in BASELINES:
        try:
            mean, sd = _baseline(base, t[:n_train], y[:n_train], future)
        except (RuntimeError, ValueError, TypeError):
            out[base] = None
            continue
        out[base] = _scores(held, mean, mean - z * sd, mean + z * sd, sigma)
    return out


def summarise(results: list[dict], methods: list[str]) -> dict[str, dict]:
    """Summarise per method: median MAE / floor, pooled and per-run coverage, interval score."""
    table = {}
    for method in methods:
        rows = [r[method] for r in results if r.get(method) is not None]
        failed = sum(1 for r in results if method in r and r[method] is None)
        if not rows:
            continue
        table[method] = {
            "runs": len(rows), "failed": failed,
            "median_mae_floor": float(np.median([r["mae_floor"] for r in rows])),
            "pooled_coverage": float(sum(r["inside"] for r in rows) / sum(r["n"] for r in rows)),
            "share_runs_cov_ge_0.6": float(np.mean([r["coverage"] >= 0.6 for r in rows])),
            "median_is_sigma": float(np.median([r["is_sigma"] for r in rows]))}
    return table


def _print_table(title: str, summary: dict[str, dict]) -> None:
    print(f"\n### {title}\n")
    print("| F | method | runs | median MAE / noise floor | pooled 90% coverage | runs with "
          "coverage >= 0.6 | median interval score / sigma |")
    print("|---|---|---|---|---|---|---|")
    for fraction, table in summary.items():
        for method, s in table.items():
            fail = f" ({s['failed']} failed)" if s["failed"] else ""
            print(f"| {fraction} | {method} | {s['runs']}{fail} | {s['median_mae_floor']:.2f} | "
                  f"{s['pooled_coverage']:.2f} | {s['share_runs_cov_ge_0.6']:.2f} | "
                  f"{s['median_is_sigma']:.2f} |")


#: Sources: design (chose the method), score (the public logs, the design logs), and
#: three the method never saw while it was designed: the tiny-model grid, the deep-network runs,
#: fresh synthetic seeds (3000-3039; seeds 0-23, 1000-1039 and 2000-2039 were used while
#: choosing revisions). Revision 4 was frozen before two more were scored once: the second
#: tiny-model grid (``tiny_grid2``, seeds 0-4) and synthetic seeds 4000-4039
#: (``synthetic_fresh``). Revision 5 was designed on ``score``, ``synthetic_design`` (seeds
#: 2000-2039), ``synthetic_fresh``, ``tiny_grid`` and ``tiny_grid2``, then frozen before
#: ``tiny_grid2_new`` (seeds 5-6), ``tiny_grid2_late`` (seeds 7-8) and ``synthetic_new``
#: (seeds 5000-5039) were scored once. Revision 6 (the band of averaged quantiles) was
#: designed on the same sources as revision 5, then frozen before ``synthetic_r6`` (seeds
#: 6000-6039) and ``tiny_grid2_r6`` (seeds 9 and 10 of the second grid, folder ``--grid2``)
#: were scored once.
SOURCES = ("design", "score", "tiny_grid", "deepnet", "synthetic", "tiny_grid2",
           "synthetic_fresh", "synthetic_design", "tiny_grid2_new", "tiny_grid2_late",
           "synthetic_new", "synthetic_r6", "tiny_grid2_r6", "tiny_grid2_all", "deepnet_relax",
           "synthetic_lp", "deepnet_relax_burnin", "tiny_grid2_s9", "tiny_grid2_s9b",
           "deepnet_relax_moreseeds", "synthetic_lp2", "tiny_grid2_s10", "deepnet_relax_linear",
           "deepnet_relax_long", "tiny_grid2_s11", "deepnet_relax_precise")
#: Commits at which a revision was frozen, before the sources new to it were scored.
FROZEN = {"revision 4": "5238bfe", "revision 5": "1386ebc", "revision 6": "a436544",
          "learned prior": "a02ead2", "learned prior revision 2": "a6302b1"}


def load_source(source: str, logs: Path, *, grid2: Path | None = None
                ) -> list[tuple[str, Run]]:
    """Return the runs of ``source`` (one of ``SOURCES``).

    ``logs``: the public logs' folder; ``grid2``: the second tiny grid's folder (default the
    shipped one), for ``tiny_grid2_late`` and ``tiny_grid2_r6``.
    """
    if source == "score":
        runs, skipped = score_runs(logs)
        print(f"public logs skipped (do not load): {len(skipped)}", file=sys.stderr)
        return runs
    loaders = {"design": design_runs, "tiny_grid": tiny_grid_runs, "deepnet": deepnet_runs,
               "synthetic": lambda: synthetic_runs(range(3000, 3040)),
               "tiny_grid2": tiny_grid2_runs,
               "synthetic_fresh": lambda: synthetic_runs(range(4000, 4040)),
               "synthetic_design": lambda: synthetic_runs(range(2000, 2040)),
               "tiny_grid2_new": lambda: tiny_grid2_runs(seeds=(5, 6)),
               "tiny_grid2_late": lambda: tiny_grid2_runs(seeds=(7, 8), folder=grid2),
               "synthetic_new": lambda: synthetic_runs(range(5000, 5040)),
               "synthetic_r6": lambda: synthetic_runs(range(6000, 6040)),
               "tiny_grid2_r6": lambda: tiny_grid2_runs(seeds=(9, 10), folder=grid2),
               "tiny_grid2_all": lambda: tiny_grid2_runs(seeds=tuple(range(11)), folder=grid2),
               "deepnet_relax": lambda: deepnet_relaxation_runs(("relaxruns", "relaxruns_slow")),
               "tiny_grid2_s9": lambda: tiny_grid2_runs(seeds=(11, 12), folder=grid2),
               "tiny_grid2_s9b": lambda: tiny_grid2_runs(seeds=(13, 14), folder=grid2),
               "deepnet_relax_burnin": lambda: deepnet_relaxation_runs(("relaxruns_burnin",)),
               "synthetic_lp": lambda: synthetic_runs(range(7000, 7040)),
               "deepnet_relax_moreseeds": lambda: deepnet_relaxation_runs(
                   ("moreseeds_relaxruns_burnin",)),
               "synthetic_lp2": lambda: synthetic_runs(range(8000, 8040)),
               "tiny_grid2_s10": lambda: tiny_grid2_runs(seeds=(15, 16), folder=grid2),
               "deepnet_relax_linear": lambda: deepnet_relaxation_runs(("relaxruns_linear",)),
               "deepnet_relax_long": lambda: deepnet_relaxation_runs(("relaxruns_long",)),
               "tiny_grid2_s11": lambda: tiny_grid2_runs(seeds=(17, 18), folder=grid2),
               "deepnet_relax_precise": lambda: deepnet_relaxation_runs(("relaxruns_precise",))}
    return loaders[source]()


def legacy_main(argv: list[str]) -> None:
    """The per-fraction tables of the earlier revisions (``--legacy``): one table per source."""
    parser = argparse.ArgumentParser(description="per-fraction tables (the earlier revisions)")
    parser.add_argument("--logs",
                        default=str(ROOT.parent / "shared" / "data" / "real_logs"))
    parser.add_argument("--json", help="write every number to this JSON file")
    parser.add_argument("--grid2",
                        default=str(ROOT / "studies" / "tiny_grids" / "data" / "tiny_grid2"),
                        help="the second tiny grid's folder (for tiny_grid2_late, _r6)")
    parser.add_argument("--only", default=",".join(SOURCES),
                        help=f"comma-separated sources, of {', '.join(SOURCES)}")
    parser.add_argument("--members", default=",".join(MEMBERS),
                        help="the forecaster's member set, for ablations on the design runs")
    parser.add_argument("--no-ensemble", action="store_true",
                        help="leave out the stacked forecaster and its members (quick look at "
                             "the baselines and the learned prior)")
    parser.add_argument("--learned-prior", default=str(WEIGHTS_PATH),
                        help="weights of the learned-prior forecaster ('none': leave it out)")
    parser.add_argument("--band", default="averaged", choices=("averaged", "mixture"),
                        help="how the members make the band: averaged quantiles (revision 6) "
                             "or the mixture's (revision 5, the control)")
    args = parser.parse_args(argv)
    learned_prior = None if args.learned_prior == "none" else Path(args.learned_prior)
    sources = {}
    for source in args.only.split(","):
        if source not in SOURCES:
            parser.error(f"--only: unknown source {source!r} (known: {', '.join(SOURCES)})")
        sources[source] = load_source(source, Path(args.logs), grid2=Path(args.grid2))
    everything = {}
    for source, runs in sources.items():
        summary, per_run = {}, {}
        for fraction in FRACTIONS:
            results = []
            for name, run in runs:
                start = time.time()
                try:
                    result = evaluate(name, run, fraction, tuple(args.members.split(",")),
                                      args.band, ensemble=not args.no_ensemble,
                                      learned_prior=learned_prior)
                except InputError as exc:
                    print(f"{name} F={fraction}: {exc}", file=sys.stderr)
                    continue
                if result is None:
                    continue
                results.append(result)
                per_run[f"{name}@{fraction}"] = result
                lead = "forecaster" if "forecaster" in result else "learned_prior"
                if lead in result:
                    print(f"[{source}] {name} F={fraction} ({time.time() - start:.1f} s): "
                          f"{lead} {result[lead]['mae_floor']:.2f}, last "
                          f"{result['last_value']['mae_floor']:.2f}", file=sys.stderr)
            members = sorted({k for r in results for k in r if k.startswith("m:")})
            methods = ["forecaster", "forecaster_mean", "forecaster_median", *members,
                       "learned_prior", *BASELINES, "oracle_smooth", "oracle_level",
                       "oracle_members"]
            summary[fraction] = summarise(results, methods)
        _print_table(f"{source} runs ({len(runs)})", summary)
        everything[source] = {"summary": summary, "per_run": per_run}
    if args.json:
        Path(args.json).write_text(json.dumps(everything, indent=1, default=float))


def main() -> None:
    """Print the stratified matrix (``--legacy``: the earlier per-fraction tables)."""
    if "--legacy" in sys.argv[1:]:
        legacy_main([a for a in sys.argv[1:] if a != "--legacy"])
        return
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from forecast_matrix import matrix_main  # a sibling script

    matrix_main(sys.argv[1:])


if __name__ == "__main__":
    main()
