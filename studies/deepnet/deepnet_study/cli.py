"""The four steps of the demonstration, in order: measure, predict (commit!), run, compare."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np

from grpodyn.ground import write_atomic

from .paths import DATA, data_file

__all__ = ["DATA", "main", "measure_step", "predict_step", "sharpening_step", "soft_step",
           "predict_two_mode_step", "predict_staleness_step", "scan_step", "track_step",
           "predict_relay_step", "drift_curve_step", "predict_relaxation_step",
           "run_relaxation_step", "relaxation_diagnosis_step"]


def _write(path: Path, payload: dict[str, Any]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    return write_atomic(path, json.dumps(payload, indent=1) + "\n")


def measure_step(size: str, *, seed: int = 0, replicates: int = 4, out: Path = DATA) -> Path:
    """Warm up the model of ``size`` and write ``measurements_<size>.json``."""
    import torch

    from grpodyn.empirical.deepnet.grpo import warmed_model
    from grpodyn.empirical.deepnet.measure import measure_model

    from .forecast import LR_GRID

    torch.set_num_threads(1)
    model, tokenizer, record = warmed_model(size, seed)
    measured = measure_model(model, tokenizer, lr_grid=list(LR_GRID), replicates=replicates,
                             seed=seed)
    measured["warm_up"] = record
    measured["size"], measured["seed"] = size, seed
    return _write(out / f"measurements_{size}.json", measured)


def soft_step(size: str, *, seed: int = 0, replicates: int = 8, out: Path = DATA) -> Path:
    """Measure the curvature of the mean update direction (soft mode): ``soft_<size>.json``."""
    if replicates < 4:
        raise ValueError(f"--replicates must be >= 4 (triples of independent samples), "
                         f"got {replicates}")
    import torch

    from grpodyn.empirical.deepnet.grpo import warmed_model
    from grpodyn.empirical.deepnet.measure import mean_update_curvature

    torch.set_num_threads(1)
    model, tokenizer, record = warmed_model(size, seed)
    measured = mean_update_curvature(model, tokenizer, replicates=replicates, seed=seed)
    measured.update(size=size, seed=seed, warm_up=record)
    return _write(out / f"soft_{size}.json", measured)


def sharpening_step(size: str, *, out: Path = DATA, lr: float = 0.1, steps: int = 100,
                    seed: int = 0) -> Path:
    """Critical lr at the start and along a run at ``lr``: ``sharpening_<size>.json``.

    The lr grid of the critical-lr search is ``LR_GRID`` when ``lr`` is on it or above its
    bottom, else the seven lrs of ``TWO_MODE_LR_GRID`` from ``lr`` up (small lrs of stiff models).
    """
    if not lr > 0:
        raise ValueError(f"--lr must be a positive learning rate, got {lr}")
    import torch

    from grpodyn.empirical.deepnet.grpo import warmed_model
    from grpodyn.empirical.deepnet.measure import critical_lr_along_run

    from .forecast import LR_GRID, TWO_MODE_LR_GRID

    grid = (list(LR_GRID) if lr >= LR_GRID[0]
            else [g for g in TWO_MODE_LR_GRID if g >= lr * (1 - 1e-9)][:7])
    torch.set_num_threads(1)
    model, tokenizer, _ = warmed_model(size, seed)
    rows = critical_lr_along_run(model, tokenizer, lr=lr, steps=steps, every=max(steps // 2, 1),
                                 lr_grid=grid, seed=seed)
    return _write(out / f"sharpening_{size}.json", {"size": size, "lr": lr, "rows": rows})


def _base_lr(size: str, lr: float | None, out: Path) -> float:
    """Return ``lr`` or, when None, the base lr of the two-mode plan of ``size``."""
    if lr is not None:
        if not lr > 0:
            raise ValueError(f"--lr must be a positive learning rate, got {lr}")
        return lr
    plans = json.loads(data_file(out, "predictions_two_mode.json").read_text())["plans"]
    if size not in plans:
        raise ValueError(f"no two-mode plan for model {size!r}: give --lr")
    return float(plans[size]["base_lr"])


def _lags(staleness: list[int], refresh: list[int]) -> list[dict[str, int]]:
    bad = [x for x in staleness if x < 0] + [x for x in refresh if x < 1]
    if bad:
        raise ValueError(f"--staleness must be >= 0 and --refresh >= 1, got {bad}")
    return ([{"staleness": d} for d in staleness]
            + [{"refresh": k} for k in refresh if k > 1])


def scan_step(size: str, *, out: Path = DATA, lr: float | None = None, seed: int = 0,
              staleness: tuple[int, ...] = (0, 2, 4, 8), refresh: tuple[int, ...] = (4, 8),
              replicates: int = 4) -> Path:
    """Scan along the top Hessian eigenvector before training: ``scan_<size>.json``.

    The displacements are multiples of one expected step's length lr |g|; for each lag the
    stiffness limit k_lim of the one-mode map and the saturation amplitude s_sat at ``lr``.
    An observation (no run is used); see :mod:`.stiff`.
    """
    import torch

    from grpodyn.empirical.deepnet.grpo import warmed_model

    from .stiff import (
        lag_stiffness_limit,
        saturation_amplitude,
        scan_along,
        scan_grid,
        stiff_directions,
    )

    lr = _base_lr(size, lr, out)
    lags = _lags(list(staleness), list(refresh))
    torch.set_num_threads(1)
    model, tokenizer, record = warmed_model(size, seed)
    found = stiff_directions(model, tokenizer, seed=seed)
    vectors = found.pop("vectors")
    step = lr * found["update_norm"]
    rows = scan_along(model, tokenizer, vectors[0], scan_grid(step), replicates=replicates,
                      seed=seed)
    limits = []
    for lag in lags:
        limit = lag_stiffness_limit(**lag)
        limits.append({**lag, "stiffness_limit": limit,
                       "saturation": saturation_amplitude(rows, lr=lr, limit=limit)})
    return _write(out / f"scan_{size}.json",
                  {"size": size, "seed": seed, "lr": lr, "step_length": step,
                   "directions": found, "scan": rows, "lags": limits, "warm_up": record,
                   "label": "observation (measured before training; no run used)"})


def track_step(size: str, *, out: Path = DATA, lr: float | None = None, seeds: int = 3,
               seed_offset: int = 300, steps: int = 60, staleness: tuple[int, ...] = (0, 2, 4, 8),
               refresh: tuple[int, ...] = (4, 8)) -> Path:
    """Run lagged runs recording the stiff coordinates: ``tracking_<size>_lr<lr>.json``.

    The top three eigenvectors are those of :func:`scan_step` (same sample, same seed 0). Runs
    of other settings already in the file are kept (a setting added later), provided the file's
    eigenvalues are those found now (the same directions).
    """
    import torch

    from grpodyn.empirical.deepnet.grpo import warmed_model

    from .stiff import stiff_directions, track_runs, tracking_plan
    from .sweeps import is_unstable, progress_bar

    lr = _base_lr(size, lr, out)
    _lags(list(staleness), list(refresh))
    torch.set_num_threads(1)
    model, tokenizer, _ = warmed_model(size, 0)
    found = stiff_directions(model, tokenizer, seed=0)
    vectors = found.pop("vectors")
    plan = tracking_plan(lr=lr, staleness=tuple(staleness), refresh=tuple(refresh), steps=steps)
    records = track_runs(model, tokenizer, vectors, plan, seeds=seeds, seed_offset=seed_offset,
                         progress=lambda items: progress_bar(items, f"track {size}"))
    for rec in records:
        rec["unstable"] = is_unstable(rec)
    path = out / f"tracking_{size}_lr{lr:g}.json"
    if path.is_file():
        old = json.loads(path.read_text())
        if old["directions"]["eigenvalues"] != found["eigenvalues"]:
            raise ValueError(f"{path} was tracked along other directions (eigenvalues "
                             f"{old['directions']['eigenvalues']}); move it away first")
        keep = [r for r in old["runs"] if r["setting"] not in plan]
        records = keep + records
    return _write(path,
                  {"size": size, "lr": lr, "steps": steps, "directions": found,
                   "runs": records,
                   "label": "observation (runs with the stiff coordinates recorded)"})


def predict_relay_step(sizes: list[str], *, lr: float, out: Path = DATA,
                       staleness: tuple[int, ...] | None = None) -> Path:
    """Write ``predictions_relay.json`` (delayed relay, from ``scan_<size>.json``) with the commit.

    Items of other (size, lr) already in the file are kept with their own commit.
    """
    from .forecast import STALENESS_GRID
    from .relay import predict_relay

    if not lr > 0:
        raise ValueError(f"--lr must be a positive learning rate, got {lr}")
    path = out / "predictions_relay.json"
    old = json.loads(path.read_text()) if path.is_file() else {"items": []}
    commit = _git_commit()
    items = [i for i in old["items"] if (i["model"], i["setting"]["lr"]) not in
             {(s, lr) for s in sizes}]
    for size in sizes:
        scan = json.loads((out / f"scan_{size}.json").read_text())
        items.extend(predict_relay(size, scan, lr=lr,
                                   staleness=tuple(staleness or STALENESS_GRID)))
    return _write(path, {"commit": commit, "items": items})


def drift_curve_step(size: str, *, out: Path = DATA, lrs: tuple[float, ...] = (0.1, 0.2),
                     copy_lr: float = 0.1, copy_steps: int = 300, every: int = 30,
                     segment: int = 20, repeats: int = 5, seed: int = 700,
                     route: str = "state", burn_in: int = 0) -> Path:
    """Measure the finite-step drift D_lr(r) on briefly trained copies: ``drift_<size>.json``.

    No run to be predicted is used (:mod:`.relaxation`); the copy run and the segments have
    seeds of their own (``seed`` ...). ``route="slow"`` (:mod:`.slow`): the same copy states
    (copy seed ``seed``), segments with seeds from ``SLOW_SEGMENT_SEED`` on, written to
    ``drift_slow_<size>.json`` beside the state route's file. ``burn_in`` > 0: each segment starts
    after that many steps at its lr from the state (``drift<_slow>_burnin<B>_<size>.json``).
    ``route="burnin"`` (:mod:`.burnin`): the same copy states, segments read after a burn-in
    (``burn_in`` >= 1) with seeds from ``BURNIN_SEGMENT_SEED`` on, ``drift_burnin_<size>.json``.
    ``route="linear"`` (:mod:`.linear`): as the burn-in route at the copy steps
    ``LINEAR_STATES`` only, ``LINEAR_REPEATS`` segments of ``LINEAR_SEGMENT`` steps (``segment``
    and ``repeats`` ignored), seeds from ``LINEAR_SEGMENT_SEED`` on, ``drift_linear_<size>.json``.
    ``route="long"``: as the linear route on a ``LONG_COPY_STEPS``-step copy run at the copy steps
    ``LONG_STATES`` (``copy_steps`` ignored), seeds from ``LONG_SEGMENT_SEED`` on,
    ``drift_long_<size>.json``. ``route="precise"``: as the long route with
    ``PRECISE_REPEATS`` repeats, seeds from ``PRECISE_SEGMENT_SEED`` on,
    ``drift_precise_<size>.json``.
    """
    import torch

    from grpodyn.empirical.deepnet.grpo import warmed_model

    from .burnin import BURNIN_SEGMENT_SEED
    from .linear import (
        LINEAR_REPEATS,
        LINEAR_SEGMENT,
        LINEAR_SEGMENT_SEED,
        LINEAR_STATES,
        LONG_COPY_STEPS,
        LONG_SEGMENT_SEED,
        LONG_STATES,
        PRECISE_REPEATS,
        PRECISE_SEGMENT_SEED,
    )
    from .relaxation import (
        BURNED_IN_ROUTES,
        LONG_COPY_ROUTES,
        measure_drift_curve,
        route_suffix,
    )
    from .slow import SLOW_SEGMENT_SEED

    if not lrs or min(lrs) <= 0 or copy_lr <= 0:
        raise ValueError(f"learning rates must be positive, got --lrs {lrs}, copy lr {copy_lr}")
    suffix = route_suffix(route)
    if route in BURNED_IN_ROUTES and burn_in < 1:
        raise ValueError(f"the {route} route needs --burn-in >= 1, got {burn_in}")
    keep = None
    if route == "linear":
        segment, repeats, keep = LINEAR_SEGMENT, LINEAR_REPEATS, LINEAR_STATES
    if route in LONG_COPY_ROUTES:
        segment, keep = LINEAR_SEGMENT, LONG_STATES
        repeats = PRECISE_REPEATS if route == "precise" else LINEAR_REPEATS
        copy_steps = LONG_COPY_STEPS
    torch.set_num_threads(1)
    model, tokenizer, record = warmed_model(size, 0)
    segment_seed = {"state": None, "slow": SLOW_SEGMENT_SEED, "burnin": BURNIN_SEGMENT_SEED,
                    "linear": LINEAR_SEGMENT_SEED, "long": LONG_SEGMENT_SEED,
                    "precise": PRECISE_SEGMENT_SEED}[route]
    measured = measure_drift_curve(model, tokenizer, lrs=list(lrs), copy_lr=copy_lr,
                                   copy_steps=copy_steps, every=every, segment=segment,
                                   repeats=repeats, seed=seed, segment_seed=segment_seed,
                                   burn_in=burn_in, keep=keep)
    measured.update(size=size, warm_up=record,
                    label="measurement before the runs it predicts (copies and segments only)")
    burned = f"_burnin{burn_in}" if burn_in and route not in BURNED_IN_ROUTES else ""
    return _write(out / f"drift{suffix}{burned}_{size}.json", measured)


def predict_relaxation_step(sizes: list[str], *, steps: int, out: Path = DATA,
                            route: str = "state") -> Path:
    """Write ``predictions_relaxation.json`` from ``drift_<size>.json`` with the code's commit.

    Items of other sizes already in the file are kept with their own commit. ``route="slow"``:
    ``predictions_relaxation_slow.json`` from ``drift_slow_<size>.json`` (:mod:`.slow`);
    ``route="burnin"`` likewise with ``_burnin`` (:mod:`.burnin`).
    """
    from .relaxation import predict_relaxation, route_suffix

    if steps < 20:
        raise ValueError(f"--steps must be at least 20 for a relaxation fit, got {steps}")
    suffix = route_suffix(route)
    path = out / f"predictions_relaxation{suffix}.json"
    old = json.loads(path.read_text()) if path.is_file() else {"items": []}
    commit = _git_commit()
    by_model = dict(old.get("commit_by_model", {}))
    items = [i for i in old["items"] if i["model"] not in sizes]
    for size in sizes:
        measured = json.loads((out / f"drift{suffix}_{size}.json").read_text())
        items.extend(predict_relaxation(size, measured, steps=steps, route=route))
        by_model[size] = commit
    return _write(path, {"commit": commit, "commit_by_model": by_model, "items": items})


def run_relaxation_step(size: str, *, seeds: int, seed_offset: int, out: Path = DATA,
                        route: str = "state") -> Path:
    """Run the predicted relaxation settings of ``size``: ``relaxruns<suffix>_<size>.json``."""
    import torch

    from grpodyn.empirical.deepnet.grpo import warmed_model

    from .relaxation import route_suffix, run_relaxation
    from .sweeps import progress_bar

    suffix = route_suffix(route)
    made = json.loads((out / f"predictions_relaxation{suffix}.json").read_text())
    settings = []
    for item in made["items"]:
        if item["model"] == size:
            setting = {k: v for k, v in item["setting"].items() if k != "runs"}
            if setting not in settings:
                settings.append(setting)
    if not settings:
        raise ValueError(f"no relaxation predictions for model {size!r}")
    torch.set_num_threads(1)
    model, tokenizer, _ = warmed_model(size, 0)
    records = run_relaxation(model, tokenizer, settings, seeds=seeds, seed_offset=seed_offset,
                             progress=lambda items: progress_bar(items, f"relax {size}"))
    return _write(out / f"relaxruns{suffix}_{size}.json",
                  {"size": size, "runs": records, "predictions_commit": made["commit"]})


def relaxation_diagnosis_step(sizes: list[str], *, out: Path = DATA,
                              route: str = "state") -> dict[str, Any]:
    """Post-hoc diagnosis of the relaxation predictions (after the runs; never a prediction).

    Per size and lr: :func:`.relaxation.state_regression` of the drift measurement and
    :func:`.relaxation.window_slopes` (60-step windows) of the runs' seed-mean curve against the
    committed drift fit. ``route="slow"``: the design check of :mod:`.slow` instead, its rules
    applied to the state route's measurement (``drift_<size>.json``) and judged against its
    runs (``relaxruns_<size>.json``, seen before the route was designed: design, not a score).
    ``route="burnin"``: :func:`_burnin_diagnosis`; ``route="linear"``:
    :func:`_linear_diagnosis`; ``route="long"`` and ``"precise"``: :func:`_linear_post_hoc` of
    that variant (their designs are findings 10h's note and 10i's error budget: no design
    check). Printed, not written.
    """
    from grpodyn.empirical.deepnet.grpo import mean_curve

    from .relaxation import LONG_COPY_ROUTES, route_suffix, state_regression, window_slopes

    if route == "burnin":
        return _burnin_diagnosis(sizes, out)
    if route == "linear":
        return _linear_diagnosis(sizes, out)
    if route in LONG_COPY_ROUTES:
        return {"post_hoc": _linear_post_hoc(sizes, out, route)}
    if route_suffix(route):
        return {"design_check": _slow_design_check(sizes, out),
                "post_hoc": _slow_post_hoc(sizes, out)}

    made = json.loads((out / "predictions_relaxation.json").read_text())
    result: dict[str, Any] = {"label": "post hoc (after the runs)"}
    for size in sizes:
        measured = json.loads((out / f"drift_{size}.json").read_text())
        runs = json.loads((out / f"relaxruns_{size}.json").read_text())["runs"]
        for item in made["items"]:
            if item["model"] != size or item["quantity"] != "relaxation_time":
                continue
            lr = item["setting"]["lr"]
            curve = mean_curve([r["reward"] for r in runs if r["setting"]["lr"] == lr])
            result[f"{size} lr {lr:g}"] = {
                "states": state_regression(measured["drift"][str(lr)]),
                "windows": window_slopes(curve, item["drift_fit"]["coef"], 60)}
    return result


def _slow_design_check(sizes: list[str], out: Path) -> dict[str, Any]:
    return _design_check(sizes, out, route="slow", drift="drift_{}.json",
                         runs="relaxruns_{}.json", label="design check of the slow route on "
                         "the state route's data (seen before the design): not a score")


def _design_check(sizes: list[str], out: Path, *, route: str, drift: str,
                  runs: str | tuple[str, ...], label: str) -> dict[str, Any]:
    """Apply a route's rules to seen measurements (``drift``) and judge them on seen runs.

    ``drift`` and ``runs``: file-name patterns with ``{}`` for the size (``runs`` may name several
    files, whose runs are pooled). Design, not a score.
    """
    from .relaxation import join_relaxation, observe_relaxation, predict_relaxation, route_suffix
    from .slow import path_within

    tag = "relaxation" + route_suffix(route)
    result: dict[str, Any] = {"label": label}
    for size in sizes:
        measured = json.loads((out / drift.format(size)).read_text())
        seen = [r for name in ((runs,) if isinstance(runs, str) else runs)
                for r in json.loads((out / name.format(size)).read_text())["runs"]]
        steps = seen[0]["setting"]["steps"]
        made = {"commit": "design check",
                "items": predict_relaxation(size, measured, steps=steps, route=route)}
        for row in join_relaxation(made, observe_relaxation(size, seen, tag)):
            row.update(path_within(row["predicted_path"], row["observed_path"]))
            fit = next(i["drift_fit"] for i in made["items"]
                       if i["setting"] == row["setting"])
            result[f"{size} lr {row['setting']['lr']:g} {row['quantity']}"] = {
                **{k: row[k] for k in ("predicted", "predicted_interval_68", "observed",
                                       "observed_status", "within_target", "predicted_path",
                                       "observed_path", "path_within")},
                **{k: fit[k] for k in ("fast_slope", "fast_slope_se") if k in fit},
                "reduced_chi2": fit["reduced_chi2"]}
    return result


def _burnin_diagnosis(sizes: list[str], out: Path) -> dict[str, Any]:
    """Check the burn-in route (:mod:`.burnin`): design check, turnover reading, post hoc.

    ``design_check``: the route's rules on the 10f burn-in segments
    (``drift_slow_burnin20_<size>.json``) judged on the slow route's runs (seeds 900-902, seen:
    design, not a score). ``turnover``: for every route's runs of ``size``, each seed's 60-step
    windows and the fixed rule on the seed mean over the whole run and over its first 240 steps
    (whether a determined tau comes from a fall late in the run), and each seed's largest fall
    between consecutive windows. ``post_hoc`` (after the burn-in route's runs, never a
    prediction): the measurement's mean segment drift and median per-state s.e., and the runs'
    60-step window slopes against the committed drift (:func:`.relaxation.window_slopes`).
    """
    from grpodyn.empirical.deepnet.grpo import mean_curve

    from .relaxation import window_slopes
    from .slow import PATH_WINDOW, path_windows
    from .sweeps import fit_relaxation

    result: dict[str, Any] = {
        "design_check": _design_check(
            sizes, out, route="burnin", drift="drift_slow_burnin20_{}.json",
            runs="relaxruns_slow_{}.json", label="design check of the burn-in route on 10f's "
            "burn-in segments and runs (seen before the design): not a score"),
        "turnover": {}, "post_hoc": {"label": "post hoc (after the burn-in route's runs): "
                                     "not a score"}}
    for size in sizes:
        for path in sorted(out.glob(f"relaxruns*_{size}.json")):
            records = json.loads(path.read_text())["runs"]
            for lr in sorted({r["setting"]["lr"] for r in records}):
                mine = [r for r in records if r["setting"]["lr"] == lr]
                curve = mean_curve([r["reward"] for r in mine])
                early = PATH_WINDOW * (curve.size // PATH_WINDOW - 1)
                windows = {r["seed"]: path_windows(np.asarray(r["reward"], float))
                           for r in mine}
                result["turnover"][f"{path.name} lr {lr:g}"] = {
                    "seed_windows": windows,
                    "largest_fall": {seed: float(max(0.0, -np.diff(w).min()))
                                     for seed, w in windows.items()},
                    "tau": fit_relaxation(curve, curve.size).get("value"),
                    f"tau_first_{early}": fit_relaxation(curve[:early], early).get("value")}
    for size, lr, curve, points, item in _scored_relaxation(sizes, out, "_burnin"):
        result["post_hoc"][f"{size} lr {lr:g}"] = {
            **_mean_segment_drift(points),
            "median_segment_drift_se": float(np.median([p["drift_se"] for p in points])),
            "windows": window_slopes(curve, item["drift_fit"]["coef"], PATH_WINDOW)}
    return result


def _scored_relaxation(sizes: list[str], out: Path, suffix: str
                       ) -> Iterator[tuple[str, float, np.ndarray, list[dict], dict]]:
    """Yield (size, lr, seed-mean curve, drift points, prediction) for a route's scored runs.

    One per ``relaxation_time`` item of ``predictions_relaxation<suffix>.json`` whose size has
    runs (``relaxruns<suffix>_<size>.json``) and a drift file (``drift<suffix>_<size>.json``).
    """
    from grpodyn.empirical.deepnet.grpo import mean_curve

    made = out / f"predictions_relaxation{suffix}.json"
    if not made.is_file():
        return
    items = json.loads(made.read_text())["items"]
    for size in sizes:
        path = out / f"relaxruns{suffix}_{size}.json"
        if not path.is_file():
            continue
        records = json.loads(path.read_text())["runs"]
        drift = json.loads((out / f"drift{suffix}_{size}.json").read_text())["drift"]
        for item in items:
            if item["model"] != size or item["quantity"] != "relaxation_time":
                continue
            lr = item["setting"]["lr"]
            curve = mean_curve([r["reward"] for r in records if r["setting"]["lr"] == lr])
            yield size, lr, curve, drift[str(lr)], item


def _linear_diagnosis(sizes: list[str], out: Path) -> dict[str, Any]:
    """Check the linear route (:mod:`.linear`): design check, segment spread, post hoc.

    ``design_check`` (seen data: design, not a score): the route's rules on the burn-in
    segments of 10f (``drift_slow_burnin20_<size>.json``, judged on seeds 900-902) and of 10g
    (``drift_burnin_<size>.json``, judged on the nine seeds 1000-1008). ``segment_spread``: per
    seen burn-in measurement and lr, the s.d. over repeats (pooled over states) of the 20-step
    burn-in change, of the 20-step segment change and of the 40-step change through both, and
    the ratios of the 40-step spread to the segment's and to the burn-in's (the latter from the
    same fixed start: sqrt(2) for a diffusive spread, 1 for a stationary one). ``post_hoc``
    (after the linear route's runs, never a prediction): the measured kappa and plateau, the
    mean segment drift and median per-state s.e., and the runs' 60-step window slopes against
    the committed drift.
    """
    label = "design check of the linear route on seen burn-in segments and runs: not a score"
    result: dict[str, Any] = {
        "design_check": {
            "10f": _design_check(sizes, out, route="linear", drift="drift_slow_burnin20_{}.json",
                                 runs="relaxruns_slow_{}.json", label=label),
            "10g": _design_check(sizes, out, route="linear", drift="drift_burnin_{}.json",
                                 runs=("relaxruns_burnin_{}.json",
                                       "moreseeds_relaxruns_burnin_{}.json"), label=label)},
        "segment_spread": {},
        "post_hoc": _linear_post_hoc(sizes, out, "linear")}
    for size in sizes:
        for name in (f"drift_slow_burnin20_{size}.json", f"drift_burnin_{size}.json"):
            for lr_key, points in json.loads((out / name).read_text())["drift"].items():
                burn = np.array([p["burn_in_changes"] for p in points])
                seg = np.array([p["changes"] for p in points])
                spread = {key: float(np.sqrt(np.mean(np.var(x, axis=1, ddof=1))))
                          for key, x in (("burn_in_20", burn), ("segment_20", seg),
                                         ("through_40", burn + seg))}
                result["segment_spread"][f"{name} lr {float(lr_key):g}"] = {
                    **spread, "ratio_40_to_20": spread["through_40"] / spread["segment_20"],
                    "ratio_40_to_20_same_start": spread["through_40"] / spread["burn_in_20"]}
    return result


def _linear_post_hoc(sizes: list[str], out: Path, route: str) -> dict[str, Any]:
    """Post hoc for the linear route or a variant of it (after the runs, never a prediction).

    Per size and lr of ``predictions_relaxation<suffix>.json`` with runs: the measured kappa and
    plateau, the mean segment drift and median per-state s.e., the states, the runs' 60-step
    window slopes against the committed drift, and the fixed rule on the seed-mean curve's first
    half (``first_half``: what a run half as long would have read).
    """
    from .relaxation import route_suffix, window_slopes
    from .slow import PATH_WINDOW
    from .sweeps import fit_relaxation

    result: dict[str, Any] = {"label": f"post hoc (after the {route} route's runs): not a score"}
    for size, lr, curve, points, item in _scored_relaxation(sizes, out, route_suffix(route)):
        fit = item["drift_fit"]
        half = curve.size // 2
        first = fit_relaxation(curve[:half], half)
        result[f"{size} lr {lr:g}"] = {
            **{k: fit[k] for k in ("kappa", "kappa_se", "plateau", "reduced_chi2")},
            **_mean_segment_drift(points),
            "median_segment_drift_se": float(np.median([p["drift_se"] for p in points])),
            "states": [{k: p[k] for k in ("copy_step", "reward_mid", "drift", "drift_se")}
                       for p in points],
            "windows": window_slopes(curve, fit["coef"], PATH_WINDOW),
            "first_half": {"steps": half, **{k: first.get(k) for k in
                                             ("value", "se", "plateau", "status")}}}
    return result


def _mean_segment_drift(points: list[dict[str, Any]]) -> dict[str, float]:
    """Return the mean of the states' segment drifts (per step) and its standard error."""
    d = np.array([p["drift"] for p in points])
    se = np.array([p["drift_se"] for p in points])
    return {"mean_segment_drift": float(d.mean()),
            "mean_segment_drift_se": float(np.sqrt(np.sum(se ** 2)) / se.size)}


def _slow_post_hoc(sizes: list[str], out: Path) -> dict[str, Any]:
    """Post hoc, per size and segment lr: the mean segment drift over the copy states.

    Both routes' measurements (the same copy states at lr 0.1); with each lr's runs, their 60-step
    window slopes against the slow drift (:func:`.relaxation.window_slopes`); with a burn-in
    measurement (``drift_slow_burnin<B>_<size>.json``), the mean segment drift after the burn-in,
    the burn-in's mean change per step, and the slow route's rules applied to the burn-in
    segments from the warmed model's reward (a postdiction over the runs' steps, never a
    prediction).
    """
    from grpodyn.empirical.deepnet.grpo import mean_curve

    from .relaxation import predict_relaxation, window_slopes
    from .slow import PATH_WINDOW, fit_slow_drift

    result: dict[str, Any] = {"label": "post hoc (after the slow route's runs): not a score"}
    for size in sizes:
        drift, runs, start = {}, [], None
        for suffix in ("", "_slow"):
            measured = json.loads((out / f"drift{suffix}_{size}.json").read_text())
            drift.update(measured["drift"])
            start = measured["start"]
            path = out / f"relaxruns{suffix}_{size}.json"
            runs += json.loads(path.read_text())["runs"] if path.is_file() else []
        for lr_key in sorted(drift, key=float):
            points, lr = drift[lr_key], float(lr_key)
            curves = [r["reward"] for r in runs if r["setting"]["lr"] == lr]
            result[f"{size} lr {lr:g}"] = {
                **_mean_segment_drift(points),
                "windows": window_slopes(mean_curve(curves), fit_slow_drift(points)["coef"],
                                         PATH_WINDOW) if curves else None}
        steps = runs[0]["setting"]["steps"] if runs else 300
        for path in sorted(out.glob(f"drift_slow_burnin*_{size}.json")):
            burned_in = json.loads(path.read_text())
            # the slow route's rules on the burn-in segments, from the warmed model's reward
            redone = {i["setting"]["lr"]: i for i in predict_relaxation(
                size, {**burned_in, "start": start}, steps=steps, route="slow")
                if i["quantity"] == "relaxation_time"}
            for lr_key, points in burned_in["drift"].items():
                burned = np.array([np.mean(p["burn_in_changes"]) / p["burn_in"]
                                   for p in points])
                result[f"{size} lr {float(lr_key):g}"][f"burn_in_{points[0]['burn_in']}"] = {
                    **_mean_segment_drift(points),
                    "mean_burn_in_change_per_step": float(burned.mean()),
                    "relaxation_time": redone[float(lr_key)]["value"],
                    "path": redone[float(lr_key)]["path"]}
    return result


def _git_commit() -> str:
    import subprocess

    done = subprocess.run(["git", "rev-parse", "HEAD"], capture_output=True, text=True,
                          cwd=Path(__file__).resolve().parent, check=False)
    return done.stdout.strip() or "unknown"


def predict_step(sizes: list[str], *, out: Path = DATA) -> Path:
    """Read the measurements and write ``predictions.json`` with the commit of the code.

    Items of other model sizes already in the file are kept with their own commit
    (``commit_by_model``); ``commit`` is the commit of this writing.
    """
    from .forecast import predict_model

    path = data_file(out, "predictions.json")
    old = json.loads(path.read_text()) if path.is_file() else {"items": []}
    commit = _git_commit()
    by_model = dict(old.get("commit_by_model", {}))
    items = [i for i in old["items"] if i["model"] not in sizes]
    for item in items:
        by_model.setdefault(item["model"], old.get("commit", "unknown"))
    for size in sizes:
        measured = json.loads((out / f"measurements_{size}.json").read_text())
        items.extend(predict_model(size, measured))
        by_model[size] = commit
    return _write(path, {"commit": commit, "commit_by_model": by_model, "items": items})


def predict_two_mode_step(sizes: list[str], *, out: Path = DATA) -> Path:
    """Write ``predictions_two_mode.json`` (two-mode map) with the commit of the code.

    Items and plans of other sizes already in the file are kept with their own commit.
    """
    from .forecast import predict_two_mode

    path = data_file(out, "predictions_two_mode.json")
    old = json.loads(path.read_text()) if path.is_file() else {"items": [], "plans": {}}
    commit = _git_commit()
    by_model = dict(old.get("commit_by_model", {}))
    items = [i for i in old["items"] if i["model"] not in sizes]
    plans = {k: v for k, v in old.get("plans", {}).items() if k not in sizes}
    for size in sizes:
        measured = json.loads((out / f"measurements_{size}.json").read_text())
        soft = json.loads((out / f"soft_{size}.json").read_text())
        new, plans[size] = predict_two_mode(size, measured, soft)
        items.extend(new)
        by_model[size] = commit
    return _write(path, {"commit": commit, "commit_by_model": by_model, "plans": plans,
                         "items": items})


def _one_sweep(sweeps: list[str] | None) -> str | None:
    """Return the single later sweep of run2 (None: the planned runs)."""
    if sweeps is None:
        return None
    if len(sweeps) != 1:
        raise ValueError(f"run2 --sweeps takes one sweep at a time, got {' '.join(sweeps)}")
    return sweeps[0]


def predict_staleness_step(sizes: list[str], *, out: Path = DATA) -> Path:
    """Write ``predictions_staleness.json``: two-mode staleness thresholds, with the commit.

    Uses the committed measurements and the plans of ``predictions_two_mode.json`` (base lr);
    items of other sizes already in the file are kept with their own commit.
    """
    from .forecast import predict_two_mode_staleness

    plans = json.loads(data_file(out, "predictions_two_mode.json").read_text())["plans"]
    path = out / "predictions_staleness.json"
    old = json.loads(path.read_text()) if path.is_file() else {"items": []}
    commit = _git_commit()
    by_model = dict(old.get("commit_by_model", {}))
    items = [i for i in old["items"] if i["model"] not in sizes]
    for size in sizes:
        if size not in plans:
            raise ValueError(f"no two-mode plan for model {size!r} in predictions_two_mode.json")
        measured = json.loads((out / f"measurements_{size}.json").read_text())
        soft = json.loads((out / f"soft_{size}.json").read_text())
        items.extend(predict_two_mode_staleness(size, measured, soft, plans[size]))
        by_model[size] = commit
    return _write(path, {"commit": commit, "commit_by_model": by_model, "items": items})


def main(argv: list[str] | None = None) -> None:
    """Parse the command line and run one step; bad input exits with code 2."""
    from .relaxation import ROUTE_SUFFIX

    parser = argparse.ArgumentParser(prog="python -m deepnet_study")
    parser.add_argument("step", choices=["measure", "predict", "run", "compare", "sharpening",
                                         "soft", "predict2", "run2", "predict-staleness",
                                         "scan", "track", "predict-relay", "drift-curve",
                                         "predict-relaxation", "run-relaxation",
                                         "relaxation-diagnosis"])
    parser.add_argument("--sizes", nargs="+", default=["70k", "330k"])
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--steps", type=int, default=100)
    parser.add_argument("--out", type=Path, default=DATA)
    parser.add_argument("--sweeps", nargs="+", default=None,
                        help="run only these sweeps (lr refresh reuse staleness momentum)")
    parser.add_argument("--momenta", nargs="+", type=float, default=[0.0, 0.9],
                        help="momenta of the lr sweep")
    parser.add_argument("--seed-offset", type=int, default=0,
                        help="first seed of the run2 runs (new seeds for settings run before)")
    parser.add_argument("--replicates", type=int, default=8,
                        help="independent samples of the soft-mode measurement (>= 4)")
    parser.add_argument("--lr", type=float, default=None,
                        help="sharpening: lr of the run along which the critical lr is measured "
                        "(default 0.1)")
    parser.add_argument("--lr-up-to", type=float, default=None,
                        help="run2 --sweeps lr: continue the plan's lr sweep by doublings up to "
                        "this lr")
    parser.add_argument("--staleness", nargs="+", type=int, default=[0, 2, 4, 8],
                        help="scan/track: staleness values of the lags")
    parser.add_argument("--refresh", nargs="+", type=int, default=[4, 8],
                        help="scan/track: sample-and-hold refresh intervals of the lags")
    parser.add_argument("--lrs", nargs="+", type=float, default=[0.1, 0.2],
                        help="drift-curve: the learning rates whose drift is measured")
    parser.add_argument("--route", choices=list(ROUTE_SUFFIX), default="state",
                        help="drift-curve, predict-relaxation, run-relaxation, "
                        "relaxation-diagnosis: the drift at single states (the state route), "
                        "the slow drift (deepnet_study/slow.py), the drift after a burn-in "
                        "(burnin.py), or the linear drift (linear.py) at three states, over "
                        "600-step runs (long) or with 96 repeats per state (precise)")
    parser.add_argument("--burn-in", type=int, default=None,
                        help="drift-curve: steps at the segment's lr before each segment "
                        "(default 0; the burnin route's BURN_IN)")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    try:
        if args.step == "measure":
            paths = [str(measure_step(s, seed=args.seed, out=args.out)) for s in args.sizes]
        elif args.step == "soft":
            paths = [str(soft_step(s, seed=args.seed, out=args.out, replicates=args.replicates))
                     for s in args.sizes]
        elif args.step == "sharpening":
            paths = [str(sharpening_step(s, out=args.out, steps=args.steps,
                                         lr=args.lr if args.lr is not None else 0.1))
                     for s in args.sizes]
        elif args.step == "scan":
            paths = [str(scan_step(s, out=args.out, lr=args.lr, seed=args.seed,
                                   staleness=tuple(args.staleness),
                                   refresh=tuple(args.refresh))) for s in args.sizes]
        elif args.step == "track":
            paths = [str(track_step(s, out=args.out, lr=args.lr, seeds=args.seeds,
                                    seed_offset=args.seed_offset, steps=args.steps,
                                    staleness=tuple(args.staleness),
                                    refresh=tuple(args.refresh))) for s in args.sizes]
        elif args.step == "predict-relay":
            if args.lr is None:
                raise ValueError("predict-relay needs --lr")
            paths = [str(predict_relay_step(args.sizes, lr=args.lr, out=args.out,
                                            staleness=tuple(args.staleness)))]
        elif args.step == "drift-curve":
            from .burnin import BURN_IN
            from .relaxation import BURNED_IN_ROUTES

            burn_in = args.burn_in if args.burn_in is not None else (
                BURN_IN if args.route in BURNED_IN_ROUTES else 0)
            paths = [str(drift_curve_step(s, out=args.out, lrs=tuple(args.lrs),
                                          route=args.route, burn_in=burn_in))
                     for s in args.sizes]
        elif args.step == "predict-relaxation":
            paths = [str(predict_relaxation_step(args.sizes, steps=args.steps, out=args.out,
                                                 route=args.route))]
        elif args.step == "run-relaxation":
            paths = [str(run_relaxation_step(s, seeds=args.seeds, seed_offset=args.seed_offset,
                                             out=args.out, route=args.route))
                     for s in args.sizes]
        elif args.step == "relaxation-diagnosis":
            print(json.dumps(relaxation_diagnosis_step(args.sizes, out=args.out,
                                                       route=args.route), indent=1))
            return
        elif args.step == "predict-staleness":
            paths = [str(predict_staleness_step(args.sizes, out=args.out))]
        elif args.step == "predict2":
            paths = [str(predict_two_mode_step(args.sizes, out=args.out))]
        elif args.step == "run2":
            from .sweeps import run_two_mode

            paths = [str(run_two_mode(args.sizes, seeds=args.seeds, out=args.out,
                                      seed_offset=args.seed_offset,
                                      sweep=_one_sweep(args.sweeps),
                                      lr_up_to=args.lr_up_to))]
        elif args.step == "predict":
            paths = [str(predict_step(args.sizes, out=args.out))]
        elif args.step == "run":
            from .sweeps import SWEEPS, run_sweeps

            paths = [str(run_sweeps(args.sizes, seeds=args.seeds, steps=args.steps,
                                    out=args.out, sweeps=tuple(args.sweeps or SWEEPS),
                                    momenta=tuple(args.momenta)))]
        else:
            from .sweeps import compare_step

            paths = [str(compare_step(out=args.out))]
    except (ValueError, FileNotFoundError) as error:
        print(f"error: {error}", file=sys.stderr)
        sys.exit(2)
    print(json.dumps({"written": paths}) if args.json else "\n".join(paths))
