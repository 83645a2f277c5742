"""The relaxation time from the mean-field drift measured at finite steps across reward levels.

docs/theory.md section 1 projects training on the reward: r_{n+1} = r_n + a F(r_n) (momentum 0), the
drift F a function of r alone, and section 3 reads the relaxation time off its slope at the fixed
point, tau = 1 / (a kappa), kappa = -dF/dr at r*. The earlier routes failed
(``studies/deepnet/findings.md`` 10, 10b): kappa measured at initialisation is negative
(learning first accelerates), and the curvatures of the start are 20-1000x too stiff. Here the
drift is measured where the run goes:

- States spanning r: briefly trained copies of the warmed-up model, checkpoints every ``every``
  steps of one GRPO run of their own (``copy_lr``, momentum 0, seeds of their own).
- At each state and each lr to be predicted, the finite-step drift per step
  D_lr(r) = E[r(theta after ``segment`` steps) - r(theta)] / ``segment``: ``repeats`` short
  segments of the real loop with fresh seeds, each difference evaluated with common random
  numbers (the same evaluation seed before and after; 2048 completions), standard error over
  the repeats. It includes what first order misses (sampling noise and the curvature along the
  step; findings 10 and 10b: first order overstates the change 3x at 70k, lr 0.2). It is
  assigned to the segment's mid reward r + mean difference / 2.
- D_lr(r) is the weighted quadratic a + b r + c r^2 through those points (the smallest form with a
  rise and a fall: a logistic start and a saturation).

Predictions, rules fixed before the runs they predict:

- ``relaxation_time``: the mean-field curve r_{n+1} = r_n + D_lr(r_n) from the measured reward
  of the warmed-up model, over the run's length, passed through the fixed observation rule
  (:func:`.sweeps.fit_relaxation`: r* - (r* - r0) exp(-n / tau) fitted, undetermined beyond
  twice the run), so prediction and observation are the same functional of a curve. Error:
  parametric bootstrap of the quadratic's coefficients and of r0.
- ``relaxation_time_late``: 1 / kappa_lr at the stable root of D_lr (docs/theory.md section 3's
  tau = 1 / (a kappa) with the measured per-step slope a kappa = -dD_lr/dr there); None when
  D_lr has no stable root in [0, 1].

Both are judged against the observed relaxation time of new runs (fixed rule, seed mean) within
25 %.
"""

from __future__ import annotations

import copy
import json
from typing import Any

import numpy as np

from grpodyn.empirical.deepnet.grpo import RunSettings, mean_curve, run
from grpodyn.empirical.deepnet.measure import sample_batches

from .sweeps import fit_relaxation, is_unstable

__all__ = ["EVAL_PROMPTS", "copy_states", "segment_drift", "fit_drift", "mean_field_curve",
           "stable_root", "predict_relaxation", "measure_drift_curve", "run_relaxation",
           "observe_relaxation", "relaxation_rows", "join_relaxation", "state_regression",
           "window_slopes", "ROUTE_SUFFIX", "BURNED_IN_ROUTES", "LINEAR_ROUTES", "LONG_COPY_ROUTES",
           "route_suffix", "route_curve", "weighted_fit", "trend_and_deviation"]

EVAL_PROMPTS = 256  # x group size 8 = 2048 completions per evaluation
#: The relaxation routes and the suffix of their files: the state route's drift at single states
#: (``drift_<size>.json``, ``predictions_relaxation.json``, ``relaxruns_<size>.json``) and the
#: slow drift of :mod:`.slow` (``drift_slow_<size>.json``, ...) and the drift read after a burn-in
#: at the segment's own lr of :mod:`.burnin` (``drift_burnin_<size>.json``, ...) and the linear
#: drift of :mod:`.linear` (``drift_linear_<size>.json``, ...), its long variant (600-step copy
#: run and runs, ``drift_long_<size>.json``, ...) and its precise variant (the long one with 96
#: repeats per state, ``drift_precise_<size>.json``, ...).
ROUTE_SUFFIX = {"state": "", "slow": "_slow", "burnin": "_burnin", "linear": "_linear",
                "long": "_long", "precise": "_precise"}
#: The routes whose segments are read after a burn-in at their own lr and whose predicted curve
#: starts through the measured burn-in (:mod:`.burnin`, :mod:`.linear`).
BURNED_IN_ROUTES = ("burnin", "linear", "long", "precise")
#: The routes with the linear drift of :mod:`.linear` (one stiffness).
LINEAR_ROUTES = ("linear", "long", "precise")
#: The linear routes measured on the 600-step copy run and judged on 600-step runs.
LONG_COPY_ROUTES = ("long", "precise")


def route_suffix(route: str) -> str:
    """Return the file-name suffix of the relaxation ``route``; ValueError for an unknown one."""
    if route not in ROUTE_SUFFIX:
        raise ValueError(f"route must be one of {tuple(ROUTE_SUFFIX)}, got {route!r}")
    return ROUTE_SUFFIX[route]


def weighted_fit(design: np.ndarray, drift: np.ndarray,
                 drift_se: np.ndarray) -> tuple[np.ndarray, np.ndarray, float]:
    """Weighted least squares of ``drift`` (+- ``drift_se``) on the columns of ``design``.

    Weights 1 / se^2. Returns the coefficients, their covariance scaled by the reduced
    chi-square when it exceeds 1 (scatter beyond the stated errors widens the error, never
    narrows it), and the reduced chi-square.
    """
    w = 1.0 / np.maximum(drift_se, 1e-12) ** 2
    cov = np.linalg.inv(design.T @ (design * w[:, None]))
    coef = cov @ (design.T @ (w * drift))
    chi2 = float(np.sum(w * (drift - design @ coef) ** 2)
                 / max(drift.size - design.shape[1], 1))
    return coef, cov * max(chi2, 1.0), chi2


def trend_and_deviation(points: list[dict[str, Any]]) -> tuple[np.ndarray, np.ndarray]:
    """Split the copy states' rewards into a smooth trend and each state's deviation from it.

    The trend is a quadratic in the copy step (``copy_step``) fitted to the states' ``reward``.
    """
    n = np.array([p["copy_step"] for p in points], dtype=float)
    r = np.array([p["reward"] for p in points])
    trend = np.polyval(np.polyfit(n, r, 2), n)
    return trend, r - trend


def _reward(model: Any, tokenizer: Any, seed: int) -> float:
    (batch,) = sample_batches(model, tokenizer, 1, prompts=EVAL_PROMPTS, group_size=8, seed=seed)
    return float(batch.rewards.mean())


def copy_states(model: Any, tokenizer: Any, *, lr: float, steps: int, every: int,
                seed: int) -> list[dict[str, Any]]:
    """Checkpoints (state dicts) every ``every`` steps of one run at ``lr``, the start included.

    The run is made of segments of ``every`` steps with seeds ``seed``, ``seed + 1``, ...;
    momentum 0, so the segments join into one run.
    """
    if every < 1 or steps < every:
        raise ValueError(f"need 1 <= every <= steps, got every={every}, steps={steps}")
    work = copy.deepcopy(model)
    states = [{"step": 0, "state": copy.deepcopy(work.state_dict())}]
    for i, start in enumerate(range(0, steps - every + 1, every)):
        run(work, tokenizer, RunSettings(lr=lr, steps=every, seed=seed + i))
        states.append({"step": start + every, "state": copy.deepcopy(work.state_dict())})
    return states


def segment_drift(model: Any, tokenizer: Any, *, lr: float, segment: int, repeats: int,
                  seed: int, burn_in: int = 0) -> dict[str, Any]:
    """Finite-step drift per step at ``lr`` from the weights of ``model`` (left unchanged).

    Each repeat j: r_j = reward at the weights, ``segment`` steps at ``lr`` with run seed
    ``seed + j`` on a copy, r'_j = the copy's reward with the same evaluation seed (common random
    numbers). Returns the mean start reward, D = mean(r' - r) / segment with its s.e., and the
    mid reward mean(r + (r' - r) / 2) to which D is assigned. ``burn_in`` > 0: the copy first
    runs ``burn_in`` steps at ``lr`` (seed ``seed + 500 + j``) and the segment starts there;
    the state's own rewards (``state_rewards``) and the burn-in's changes (same evaluation
    seed) are returned too.
    """
    if repeats < 2:
        raise ValueError(f"repeats must be >= 2 for a standard error, got {repeats}")
    if burn_in < 0:
        raise ValueError(f"burn_in must be >= 0, got {burn_in}")
    starts, changes, burned, states = [], [], [], []
    for j in range(repeats):
        evaluation = 7_000_000 + seed + j
        moved = copy.deepcopy(model)
        if burn_in:
            states.append(_reward(model, tokenizer, evaluation))
            run(moved, tokenizer, RunSettings(lr=lr, steps=burn_in, seed=seed + 500 + j))
        before = _reward(moved, tokenizer, evaluation)
        if burn_in:
            burned.append(before - states[-1])
        result = run(moved, tokenizer, RunSettings(lr=lr, steps=segment, seed=seed + j))
        after = _reward(moved, tokenizer, evaluation) if result["finite"] else float("nan")
        starts.append(before)
        changes.append(after - before)
    s, c = np.asarray(starts), np.asarray(changes)
    extra = {"burn_in": burn_in, "burn_in_changes": burned,
             "state_rewards": states} if burn_in else {}
    return {"lr": lr, "reward": float(s.mean()),
            "reward_se": float(s.std(ddof=1) / np.sqrt(s.size)),
            "reward_mid": float(s.mean() + c.mean() / 2), "drift": float(c.mean() / segment),
            "drift_se": float(c.std(ddof=1) / np.sqrt(c.size) / segment),
            "changes": c.tolist(), "segment": segment, **extra}


def fit_drift(points: list[dict[str, float]]) -> dict[str, Any]:
    """Weighted least squares D(r) = a + b r + c r^2 through (reward_mid, drift +- drift_se).

    Returns the coefficients (a, b, c) and their covariance, scaled by the reduced chi-square
    when it exceeds 1 (scatter beyond the stated errors widens the error, never narrows it).
    """
    if len(points) < 4:
        raise ValueError(f"a quadratic drift needs at least 4 points, got {len(points)}")
    r = np.array([p["reward_mid"] for p in points])
    coef, cov, chi2 = weighted_fit(np.vstack([np.ones_like(r), r, r * r]).T,
                                   np.array([p["drift"] for p in points]),
                                   np.array([p["drift_se"] for p in points]))
    return {"coef": coef.tolist(), "cov": cov.tolist(),
            "reduced_chi2": chi2, "r_range": [float(r.min()), float(r.max())]}


def mean_field_curve(coef: list[float], r0: float, steps: int) -> np.ndarray:
    """Iterate r_{n+1} = r_n + D(r_n) (D: the quadratic ``coef``) in [0, 1]; ``steps`` values."""
    a, b, c = coef
    r = np.empty(steps)
    r[0] = r0
    for n in range(1, steps):
        x = r[n - 1]
        r[n] = min(max(x + a + b * x + c * x * x, 0.0), 1.0)
    return r


def stable_root(coef: list[float]) -> dict[str, float] | None:
    """Find the root r* in [0, 1] where the quadratic drift falls (dD/dr < 0), and its slope.

    Returns r* and the per-step stiffness -dD/dr at r*; None when no falling root lies in [0, 1]
    (if two do, the smaller one: the first a rising reward meets).
    """
    a, b, c = coef
    roots = np.roots([c, b, a]) if c != 0 else np.array([-a / b]) if b != 0 else np.array([])
    found = sorted(float(z.real) for z in np.atleast_1d(roots)
                   if abs(complex(z).imag) < 1e-12 and 0.0 <= z.real <= 1.0
                   and b + 2 * c * z.real < 0)
    if not found:
        return None
    root = found[0]
    return {"plateau": root, "stiffness": float(-(b + 2 * c * root))}


def route_curve(coef: list[float], r0: float, burned: float | None, burn_in: int,
                steps: int) -> np.ndarray:
    """Return the predicted curve of a route, ``steps`` values.

    The mean-field curve from ``r0``; for the burn-in and linear routes (``burned`` given),
    :func:`.burnin.burnin_curve` through the measured burn-in reward.
    """
    from .burnin import burnin_curve

    if burned is None:
        return mean_field_curve(coef, r0, steps)
    return burnin_curve(coef, r0, burned, burn_in, steps)


def predict_relaxation(model: str, measured: dict[str, Any], *, steps: int,
                       seed: int = 0, boot: int = 400,
                       route: str = "state") -> list[dict[str, Any]]:
    """Relaxation-time predictions at each lr of ``measured`` (momentum 0), runs of ``steps``.

    ``measured``: :func:`measure_drift_curve`'s record. Items ``relaxation_time`` (the fixed
    rule applied to the mean-field curve, with a bootstrap interval) and
    ``relaxation_time_late`` (1 / stiffness at the stable root), setting
    ``{"lr", "momentum": 0.0, "runs": "relaxation", "steps"}``. ``boot``: bootstrap draws.
    ``route="slow"``: the drift is :func:`.slow.fit_slow_drift` (the slow drift at zero
    deviation), the setting's ``runs`` is ``"relaxation_slow"`` and ``relaxation_time`` carries
    the predicted ``path`` (:func:`.slow.path_windows` of the mean-field curve).
    ``route="burnin"`` (:mod:`.burnin`): ``measured`` is a burn-in measurement, the drift
    :func:`fit_drift` through its segments, the curve :func:`.burnin.burnin_curve` from
    :func:`.burnin.run_start` (whose burn-in reward is drawn in the bootstrap too), ``runs``
    ``"relaxation_burnin"``, with the ``path``. ``route="linear"`` (:mod:`.linear`): as the
    burn-in route with the linear drift :func:`.linear.fit_linear_drift`; a drift with no
    positive stiffness (the central fit or a bootstrap draw) predicts ``undetermined``, beyond
    twice the run; ``runs`` ``"relaxation_linear"``. ``route="long"``: the linear route's
    rules on the long variant's measurement (:mod:`.linear`), ``runs`` ``"relaxation_long"``;
    ``route="precise"``: the same on the precise variant's, ``runs`` ``"relaxation_precise"``.
    """
    from .burnin import run_start
    from .linear import fit_linear_drift, no_stiffness
    from .slow import fit_slow_drift, path_windows

    fitters = {"state": fit_drift, "slow": fit_slow_drift, "burnin": fit_drift,
               **{name: fit_linear_drift for name in LINEAR_ROUTES}}

    def rule(coef: list[float], curve: np.ndarray) -> dict[str, Any]:
        if route in LINEAR_ROUTES and no_stiffness(coef):
            return {"value": None, "status": "undetermined", "lower_bound": 2.0 * steps,
                    "reason": "the linear drift has no positive stiffness (kappa <= 0): no "
                    "relaxation, beyond twice the run"}
        return fit_relaxation(curve, steps)

    runs = "relaxation" + route_suffix(route)
    rng = np.random.default_rng(seed)
    items = []
    for lr_key, points in sorted(measured["drift"].items(), key=lambda kv: float(kv[0])):
        lr = float(lr_key)
        start = run_start(measured, lr_key) if route in BURNED_IN_ROUTES else measured["start"]
        r0, r0_se = start["reward"], start["reward_se"]
        fit = fitters[route](points)
        setting = {"lr": lr, "momentum": 0.0, "runs": runs, "steps": steps}
        burned, burn_in = start.get("burned"), start.get("burn_in", 0)
        curve = route_curve(list(fit["coef"]), r0, burned, burn_in, steps)
        central = rule(list(fit["coef"]), curve)
        draws = rng.multivariate_normal(fit["coef"], fit["cov"], size=boot)
        starts = rng.normal(r0, r0_se, size=boot)
        burns = (rng.normal(burned, start["burned_se"], size=boot) if burned is not None
                 else [None] * boot)
        taus = []
        for coef, r, b in zip(draws, starts, burns, strict=True):
            value = rule(list(coef), route_curve(list(coef), float(r), b, burn_in,
                                                 steps)).get("value")
            taus.append(np.inf if value is None else value)
        lo, mid, hi = np.percentile(taus, [16, 50, 84], method="nearest")
        base = {"model": model, "setting": setting, "drift_fit": fit, "start_reward": r0,
                **({"burned_reward": burned, "burn_in": burn_in}
                   if burned is not None else {})}
        items.append({**base, "quantity": "relaxation_time", "value": central.get("value"),
                      **({"status": central["status"], "reason": central["reason"]}
                         if central.get("value") is None else {}),
                      "plateau": central.get("plateau"),
                      "interval_68": [float(lo), float(hi)], "bootstrap_median": float(mid),
                      "curve_end": float(curve[-1]),
                      "extrapolated": bool(curve.max() > fit["r_range"][1] + 0.01
                                           or curve.min() < fit["r_range"][0] - 0.01),
                      **({"path": path_windows(curve)} if route != "state" else {}),
                      "source": {"state": "mean-field curve of the measured finite-step drift, "
                                 "fixed observation rule applied to it",
                                 "slow": "mean-field curve of the slow drift (errors in "
                                 "variables, zero deviation), fixed observation rule applied "
                                 "to it",
                                 "burnin": "measured burn-in from the warmed model, then the "
                                 "mean-field curve of the drift read after a burn-in at the "
                                 "lr, fixed observation rule applied to it",
                                 "linear": "measured burn-in from the warmed model, then the "
                                 "mean-field curve of the linear drift kappa (r* - r) read "
                                 "after a burn-in at the lr, fixed observation rule applied "
                                 "to it",
                                 "long": "measured burn-in from the warmed model, then the "
                                 "mean-field curve of the linear drift kappa (r* - r) read "
                                 "after a burn-in at the lr at copy steps 0, 300, 600 of a "
                                 "600-step copy run, fixed observation rule applied to "
                                 "it",
                                 "precise": "measured burn-in from the warmed model, then the "
                                 "mean-field curve of the linear drift kappa (r* - r) read "
                                 "after a burn-in at the lr at copy steps 0, 300, 600 of a "
                                 "600-step copy run, 96 repeats per state, fixed observation "
                                 "rule applied to it"}[route]})
        root = stable_root(fit["coef"])
        late: dict[str, Any] = {"value": None, "status": "no stable root of the drift in [0, 1]"}
        if root is not None:
            ks = [s["stiffness"] for s in (stable_root(list(c)) for c in draws) if s]
            late = {"value": 1.0 / root["stiffness"], "plateau": root["plateau"],
                    "kappa_per_unit_lr": root["stiffness"] / lr,
                    "interval_68": [float(1.0 / np.percentile(ks, 84)),
                                    float(1.0 / np.percentile(ks, 16))] if ks else None,
                    "bootstrap_share_with_root": len(ks) / boot}
        items.append({**base, "quantity": "relaxation_time_late", **late,
                      "source": "1 / (a kappa) at the stable root of the measured drift "
                      "(docs/theory.md section 3)"})
    return items


def measure_drift_curve(model: Any, tokenizer: Any, *, lrs: list[float], copy_lr: float,
                        copy_steps: int, every: int, segment: int, repeats: int,
                        seed: int, segment_seed: int | None = None,
                        burn_in: int = 0, keep: tuple[int, ...] | None = None) -> dict[str, Any]:
    """Measure D_lr(r) at the checkpoints of a copy run (module docstring); no run predicted.

    Seeds: the copy run ``seed``, ``seed + 1``, ...; the segments at state i and lr index k
    ``base + 1000 (1 + i) + 100 k + j`` with ``base`` = ``segment_seed`` (default ``seed``: a new
    measurement from the same copy states takes a base of its own). ``burn_in``: steps each
    segment's copy runs at the segment's lr before the segment (:func:`segment_drift`).
    ``keep``: the copy steps whose states are measured (default all; the seeds keep each state's
    index i in the copy run).
    """
    if keep is not None and not set(keep) <= set(range(0, copy_steps + 1, every)):
        raise ValueError(f"keep {keep} names copy steps the copy run does not have")
    base = seed if segment_seed is None else segment_seed
    states = copy_states(model, tokenizer, lr=copy_lr, steps=copy_steps, every=every, seed=seed)
    work = copy.deepcopy(model)
    drift: dict[str, list[dict[str, Any]]] = {str(lr): [] for lr in lrs}
    for i, state in enumerate(states):
        if keep is not None and state["step"] not in keep:
            continue
        work.load_state_dict(state["state"])
        for k, lr in enumerate(lrs):
            point = segment_drift(work, tokenizer, lr=lr, segment=segment, repeats=repeats,
                                  seed=base + 1000 * (1 + i) + 100 * k, burn_in=burn_in)
            drift[str(lr)].append({**point, "copy_step": state["step"]})
    first = drift[str(lrs[0])][0]
    return {"start": {"reward": first["reward"], "reward_se": first["reward_se"]},
            "drift": drift, "copy": {"lr": copy_lr, "steps": copy_steps, "every": every,
                                     "seed": seed}, "segment_seed": base, "burn_in": burn_in,
            "segment": segment, "repeats": repeats, "evaluation_completions": EVAL_PROMPTS * 8,
            **({"states": list(keep)} if keep is not None else {})}


def run_relaxation(model: Any, tokenizer: Any, settings: list[dict[str, Any]], *, seeds: int,
                   seed_offset: int, progress: Any = None) -> list[dict[str, Any]]:
    """Run each setting (lr, momentum, steps) for seeds ``seed_offset`` ...; the run records."""
    records = []
    for setting in (progress or (lambda x: x))(settings):
        for seed in range(seed_offset, seed_offset + seeds):
            result = run(copy.deepcopy(model), tokenizer,
                         RunSettings(lr=setting["lr"], momentum=setting["momentum"],
                                     steps=setting["steps"], seed=seed))
            records.append({"setting": setting, "seed": seed, "reward": result["reward"],
                            "finite": result["finite"], "unstable": is_unstable(result),
                            "update_norm": result["update_norm"]})
    return records


def observe_relaxation(model: str, records: list[dict[str, Any]],
                       runs_label: str = "relaxation") -> list[dict[str, Any]]:
    """Observed relaxation time of each setting by the fixed rule of :mod:`.sweeps`.

    The seed-mean reward curve fitted by :func:`.sweeps.fit_relaxation`; a setting with two of
    three seeds unstable is observed unstable (no relaxation time), as in :func:`.sweeps.observe`.
    ``runs_label``: the setting's ``runs`` (``"relaxation_slow"`` for the slow route's runs, whose
    observations also carry the seed-mean ``path``, :func:`.slow.path_windows`).
    """
    from .slow import path_windows

    groups: dict[str, list[dict[str, Any]]] = {}
    for rec in records:
        groups.setdefault(json.dumps(rec["setting"], sort_keys=True), []).append(rec)
    items = []
    for key, runs in groups.items():
        setting = json.loads(key)
        steps = setting["steps"]
        curve = mean_curve([r["reward"] for r in runs])
        fit = fit_relaxation(curve, steps)
        fit.pop("start", None)
        if sum(r["unstable"] for r in runs) >= 2:
            fit = {"value": None, "status": "unstable", "reason": "setting observed unstable"}
        value = fit.pop("value")
        items.append({"model": model, "quantity": "relaxation_time",
                      "setting": {**setting, "runs": runs_label}, "value": value, **fit,
                      **({"path": path_windows(curve)} if runs_label != "relaxation" else {}),
                      "seeds": sorted(r["seed"] for r in runs)})
    return items


def relaxation_rows(out: Any) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Observations of ``relaxruns_<size>.json`` and their comparison rows, every route.

    The state route: ``relaxruns_<size>.json`` against ``predictions_relaxation.json``; the
    slow route (:mod:`.slow`): ``relaxruns_slow_<size>.json`` against
    ``predictions_relaxation_slow.json``; every later route likewise with its suffix
    (``ROUTE_SUFFIX``). Both predicted quantities are joined with the one
    observed ``relaxation_time``. A prediction beyond twice the run (undetermined) against an
    observed value is not met; an observation beyond twice the run refutes a prediction below
    0.75 x that bound (as :func:`.sweeps.join` does); both beyond twice the run is recorded but
    not counted (``within_target`` None). Rows of every route but the state route carry both
    paths and ``path_within`` (:func:`.slow.path_within`), reported beside the target, never in
    place of it.
    """
    from .slow import path_within

    observed, rows = [], []
    others = tuple(f"relaxruns{s}_" for s in ROUTE_SUFFIX.values() if s)
    for suffix in ROUTE_SUFFIX.values():
        label = "relaxation" + suffix
        found = []
        for path in sorted(out.glob(f"relaxruns{suffix}_*.json")):
            if suffix == "" and path.name.startswith(others):
                continue
            data = json.loads(path.read_text())
            found.extend(observe_relaxation(data["size"], data["runs"], label))
        observed += found
        path = out / f"predictions_relaxation{suffix}.json"
        if path.is_file():
            for row in join_relaxation(json.loads(path.read_text()), found):
                if label != "relaxation":
                    row.update(path_within(row["predicted_path"], row["observed_path"]))
                rows.append(row)
    return observed, rows


def join_relaxation(made: dict[str, Any],
                    observed: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Comparison rows of a predictions record ``made`` against ``observed`` relaxation times.

    The rules of :func:`relaxation_rows`; a row carries both paths when the observation has one.
    """
    from .sweeps import within_target

    index = {(o["model"], json.dumps(o["setting"], sort_keys=True)): o for o in observed}
    rows = []
    for p in made["items"]:
        obs = index.get((p["model"], json.dumps(p["setting"], sort_keys=True)))
        if obs is None:
            continue
        within = within_target("relaxation_time", p["value"], obs["value"], None)
        if p["value"] is None and obs["value"] is not None:
            within = False if p.get("status") == "undetermined" else None
        bound = obs.get("lower_bound")
        if within is None and p["value"] is not None and bound is not None:
            # the rule of sweeps.join: an observed tau beyond twice the run refutes a
            # prediction below 0.75 x that bound
            within = False if p["value"] < 0.75 * bound else None
        rows.append({"model": p["model"], "quantity": p["quantity"], "setting": p["setting"],
                     "predicted": p["value"], "predicted_status": p.get("status"),
                     "predicted_interval_68": p.get("interval_68"),
                     "observed": obs["value"], "observed_se": obs.get("se"),
                     "observed_status": obs.get("status"), "within_target": within,
                     "commit": made["commit"], "source": p["source"] + ", ",
                     **({"predicted_path": p.get("path"), "observed_path": obs["path"]}
                        if "path" in obs else {})})
    return rows


def state_regression(points: list[dict[str, Any]]) -> dict[str, float]:
    """Post-hoc diagnosis: how much of a state's segment change undoes its own deviation.

    The state rewards are split into a smooth trend (a quadratic in the copy step) and the
    deviation from it; the segment change (drift x segment) is regressed on both at once.
    Returns the correlation of change and deviation, the slopes on deviation and on trend, and
    the deviation's standard deviation. A slope near -1 on the deviation: the deviation is undone
    within one segment (a fast relaxation), whatever the slow level.
    """
    if len(points) < 5:
        raise ValueError(f"need at least 5 states, got {len(points)}")
    change = np.array([p["drift"] * p["segment"] for p in points])
    trend, deviation = trend_and_deviation(points)
    x = np.vstack([np.ones_like(trend), deviation, trend]).T
    coef, *_ = np.linalg.lstsq(x, change, rcond=None)
    return {"correlation": float(np.corrcoef(deviation, change)[0, 1]),
            "slope_on_deviation": float(coef[1]), "slope_on_trend": float(coef[2]),
            "deviation_sd": float(deviation.std())}


def window_slopes(curve: np.ndarray, coef: list[float], width: int) -> list[dict[str, float]]:
    """Post-hoc diagnosis: a curve's slope per window of ``width`` steps against D(mean r).

    ``coef``: the quadratic drift (per step). Each window: its mean reward, the least-squares
    slope of the curve over it and the drift at its mean reward.
    """
    rows = []
    for start in range(0, curve.size - width + 1, width):
        window = curve[start:start + width]
        level = float(window.mean())
        rows.append({"start": start, "reward": level,
                     "run_slope": float(np.polyfit(np.arange(width), window, 1)[0]),
                     "drift": float(coef[0] + coef[1] * level + coef[2] * level * level)})
    return rows
