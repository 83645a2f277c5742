"""Run the sweeps the predictions name, classify each run, and compare with the predictions.

The classification rules were fixed (and committed with ``predictions.json``) before the runs:

- a run is unstable when its weights become non-finite, or when it loses reward: the mean batch
  reward of its last quarter is below the mean of its first ten steps by more than
  ``LOSS_MARGIN``;
- a setting is unstable when at least two of three seeds are; the observed threshold on a grid
  is the last value before the first unstable one (lr_max, refresh_max, staleness_max);
- the observed relaxation time is the time constant of r* - (r* - r0) exp(-n / tau) fitted to
  the seed-mean reward curve, "undetermined" when it exceeds twice the run length or the fit
  fails;
- the observed oscillation is the reward overshoot: the seed-mean curve, smoothed over
  ``SMOOTH`` steps, rising above the fitted plateau and falling back by more than three standard
  errors of the smoothed mean.

A prediction and its observation share model, quantity and setting (``compare``).
"""

from __future__ import annotations

import copy
import json
import math
from pathlib import Path
from typing import Any

import numpy as np

from grpodyn.empirical.deepnet.grpo import RunSettings, mean_curve, run, warmed_model

from .forecast import (
    LR_GRID,
    MOMENTUM_GRID,
    REFRESH_GRID,
    STALENESS_GRID,
)
from .paths import data_file

__all__ = ["LOSS_MARGIN", "SMOOTH", "SWEEPS", "sweep_plan", "is_unstable", "fit_relaxation",
           "observe", "run_sweeps", "compare_step", "join", "within_target", "two_mode_runs",
           "run_two_mode", "observe_two_mode", "reward_period", "refresh_runs", "OSC_MOMENTUM",
           "lr_extension_runs", "staleness_runs", "LATER_SWEEPS", "warm_up_accuracy",
           "OSC_STEPS", "progress_bar", "grid_threshold", "lower_bound_status"]


def progress_bar(items: list[Any], label: str) -> Any:
    """Wrap ``items`` in a tqdm bar labelled ``label``; plain ``items`` without tqdm (optional)."""
    try:
        from tqdm import tqdm
    except ImportError:
        return items
    return tqdm(items, desc=label)


LOSS_MARGIN = 0.02
SMOOTH = 10
_REUSE_GRID = (2, 4, 8, 16)
OSC_MOMENTUM = 0.9  # the two-mode oscillation check: soft mode's period at this momentum
OSC_STEPS = 100


SWEEPS = ("lr", "refresh", "reuse", "staleness", "momentum")


def sweep_plan(base_lr: float, sweeps: tuple[str, ...] = SWEEPS) -> list[dict[str, Any]]:
    """List the settings of every run (without the seed) of the named sweeps."""
    plan = [{"sweep": "lr", "lr": lr, "momentum": beta} for beta in (0.0, 0.9) for lr in LR_GRID]
    plan += [{"sweep": "refresh", "lr": base_lr, "momentum": 0.0, "refresh": k, "mode": "hold"}
             for k in REFRESH_GRID]
    plan += [{"sweep": "reuse", "lr": base_lr, "momentum": 0.0, "refresh": k, "mode": "reuse"}
             for k in _REUSE_GRID]
    plan += [{"sweep": "staleness", "lr": base_lr, "momentum": 0.0, "staleness": d}
             for d in STALENESS_GRID]
    plan += [{"sweep": "momentum", "lr": base_lr, "momentum": beta} for beta in MOMENTUM_GRID]
    unknown = set(sweeps) - set(SWEEPS)
    if unknown:
        raise ValueError(f"unknown sweep(s) {sorted(unknown)}; known: {', '.join(SWEEPS)}")
    return [p for p in plan if p["sweep"] in sweeps]


def is_unstable(result: dict[str, Any]) -> bool:
    """Apply the instability rule of the module docstring."""
    if not result["finite"]:
        return True
    reward = np.asarray(result["reward"])
    quarter = max(len(reward) // 4, 1)
    return bool(reward[-quarter:].mean() < reward[:10].mean() - LOSS_MARGIN)


def is_unstable_post_hoc(result: dict[str, Any], warm_reward: float) -> bool:
    """Second instability rule, defined AFTER the runs (post hoc, never a prediction's judge).

    Baseline = the warm-up reward (the accuracy sampled after the warm-up, before any GRPO
    step) instead of the run's first ten steps, so that a run that collapses within its first
    ten steps and stays below the start counts: non-finite, or a last quarter below
    ``warm_reward - LOSS_MARGIN``.
    """
    if not result["finite"]:
        return True
    reward = np.asarray(result["reward"])
    quarter = max(len(reward) // 4, 1)
    return bool(reward[-quarter:].mean() < warm_reward - LOSS_MARGIN)


def fit_relaxation(curve: np.ndarray, steps: int) -> dict[str, Any]:
    """Fit r* - (r* - r0) exp(-n / tau) to a mean reward curve; tau with its standard error."""
    from scipy.optimize import curve_fit

    n = np.arange(curve.size, dtype=float)
    ok = np.isfinite(curve)

    def law(x: np.ndarray, plateau: float, start: float, tau: float) -> np.ndarray:
        return plateau - (plateau - start) * np.exp(-x / tau)

    try:
        popt, pcov = curve_fit(law, n[ok], curve[ok], p0=(curve[ok][-10:].mean(),
                                                           curve[ok][:5].mean(), steps / 4),
                               bounds=([0.0, 0.0, 0.5], [1.0, 1.0, 1e5]), maxfev=20000)
    except (RuntimeError, ValueError) as error:
        return {"value": None, "status": "undetermined", "reason": f"fit failed: {error}"}
    se = float(np.sqrt(pcov[2, 2])) if np.all(np.isfinite(pcov)) else float("inf")
    if popt[2] > 2 * steps:
        return {"value": None, "status": "undetermined",
                "reason": f"fitted tau {popt[2]:.3g} exceeds twice the run ({steps} steps)",
                "plateau": float(popt[0]), "lower_bound": 2.0 * steps}
    return {"value": float(popt[2]), "se": se, "plateau": float(popt[0]),
            "start": float(popt[1])}


def _overshoot(curve: np.ndarray, plateau: float, seeds: int) -> dict[str, Any]:
    kernel = np.ones(SMOOTH) / SMOOTH
    smooth = np.convolve(curve, kernel, mode="valid")
    se = float(np.nanstd(np.diff(curve)) / math.sqrt(2 * SMOOTH * seeds))
    peak = int(np.argmax(smooth))
    rise = float(smooth[peak] - plateau)
    fall = float(smooth[peak] - smooth[-1])
    return {"oscillatory": bool(rise > 3 * se and fall > 3 * se and peak < smooth.size - 1),
            "rise": rise, "fall": fall, "se": se}


def grid_threshold(values: list[Any], unstable: list[bool]) -> Any:
    """Return the last grid value before the first unstable one (None: the first is)."""
    last = None
    for v, bad in zip(values, unstable, strict=True):
        if bad:
            return last
        last = v
    return last


def lower_bound_status(flags: list[bool]) -> dict[str, str]:
    """Label a threshold whose grid shows no instability as a lower bound."""
    return {} if any(flags) else {"status": "stable on the whole grid (lower bound)"}


def _frozen(record: dict[str, Any]) -> bool:
    """Say whether a run ends frozen: mean update norm of its last 10 steps below 1e-3."""
    norms = record.get("update_norm") or [0.0]
    return bool(np.mean(norms[-10:]) < 1e-3)


def observe(model: str, records: list[dict[str, Any]], steps: int, *,
            warm_reward: float | None = None) -> list[dict[str, Any]]:
    """Observation items of one model size from its run records.

    With ``warm_reward`` (the model's warm-up accuracy) each lr sweep also gets an item
    ``lr_max_post_hoc``: the threshold by :func:`is_unstable_post_hoc`, labelled post hoc.
    """
    by_setting: dict[str, list[dict[str, Any]]] = {}
    for rec in records:
        key = json.dumps(rec["setting"], sort_keys=True)
        by_setting.setdefault(key, []).append(rec)
    groups = [(json.loads(k), v) for k, v in by_setting.items()]

    def unstable(runs: list[dict[str, Any]]) -> bool:
        return sum(r["unstable"] for r in runs) >= 2

    items: list[dict[str, Any]] = []

    def add(quantity: str, setting: dict[str, Any], value: Any, **extra: Any) -> None:
        items.append({"model": model, "quantity": quantity, "setting": setting, "value": value,
                      **extra})

    for beta in sorted({s["momentum"] for s, _ in groups if s["sweep"] == "lr"}):
        sel = sorted([(s["lr"], runs) for s, runs in groups
                      if s["sweep"] == "lr" and s["momentum"] == beta])
        flags = [unstable(runs) for _, runs in sel]
        add("lr_max", {"momentum": beta}, grid_threshold([lr for lr, _ in sel], flags),
            grid=[lr for lr, _ in sel], unstable=flags, **lower_bound_status(flags))
        if warm_reward is not None:
            late = [sum(is_unstable_post_hoc(r, warm_reward) for r in runs) >= 2
                    for _, runs in sel]
            add("lr_max_post_hoc", {"momentum": beta}, grid_threshold([lr for lr, _ in sel], late),
                grid=[lr for lr, _ in sel], unstable=late, warm_reward=warm_reward,
                rule="post hoc (defined after the runs, not a prediction's judge): baseline = "
                "the warm-up reward, last quarter below it by more than the margin",
                **lower_bound_status(late))
        frozen = [sum(_frozen(r) for r in runs) >= 2 for _, runs in sel]
        add("lr_frozen", {"momentum": beta},
            next((lr for (lr, _), f in zip(sel, frozen, strict=True) if f), None),
            grid=[lr for lr, _ in sel], frozen=frozen,
            status="post-hoc signal (not a prediction target): smallest lr at which two of "
            "three seeds end with a zero update (every group degenerate: the policy froze)")
    for setting, runs in groups:
        if setting["sweep"] not in ("lr", "momentum"):
            continue
        curve = mean_curve([r["reward"] for r in runs])
        fit = fit_relaxation(curve, steps)
        fit.pop("start", None)
        stable = not unstable(runs)
        if not stable:
            fit = {"value": None, "status": "unstable", "reason": "setting observed unstable"}
        value = fit.pop("value")
        for quantity in ("relaxation_time", "relaxation_time_hessian"):
            add(quantity, {"lr": setting["lr"], "momentum": setting["momentum"]}, value, **fit)
    for sweep, key, quantity in (("refresh", "refresh", "refresh_max"),
                                 ("staleness", "staleness", "staleness_max")):
        sel = sorted([(s[key], runs) for s, runs in groups if s["sweep"] == sweep])
        if not sel:
            continue
        flags = [unstable(runs) for _, runs in sel]
        first = [s for s, _ in groups if s["sweep"] == sweep][0]
        setting = {"lr": first["lr"], "momentum": 0.0}
        if sweep == "refresh":
            setting["mode"] = "hold"
        add(quantity, setting, grid_threshold([v for v, _ in sel], flags),
            grid=[v for v, _ in sel], unstable=flags, **lower_bound_status(flags))
    reuse = sorted([(s["refresh"], runs) for s, runs in groups if s["sweep"] == "reuse"])
    if reuse:
        flags = [unstable(runs) for _, runs in reuse]
        lr = reuse[0][1][0]["setting"]["lr"]
        add("refresh_max", {"lr": lr, "momentum": 0.0, "mode": "reuse"},
            None if not any(flags) else grid_threshold([k for k, _ in reuse], flags),
            status="no threshold on the grid" if not any(flags) else "threshold",
            grid=[k for k, _ in reuse], unstable=flags)
    moms = sorted([(s["momentum"], s["lr"], runs) for s, runs in groups
                   if s["sweep"] == "momentum"])
    if moms:
        shapes = []
        for beta, _, runs in moms:
            curve = mean_curve([r["reward"] for r in runs])
            plateau = fit_relaxation(curve, steps).get("plateau", float(np.nanmean(curve[-20:])))
            shapes.append({"momentum": beta, **_overshoot(curve, plateau, len(runs))})
        first = next((s["momentum"] for s in shapes if s["oscillatory"]), None)
        add("oscillation_momentum", {"lr": moms[0][1], "mode": "slow"}, first,
            status="observed" if first is not None else "not seen on the grid",
            shapes=shapes)
    return items


def run_sweeps(sizes: list[str], *, seeds: int = 3, steps: int = 100, out: Path,
               sweeps: tuple[str, ...] = SWEEPS, momenta: tuple[float, ...] = (0.0, 0.9)
               ) -> Path:
    """Run every setting of the plan (base lr read from predictions.json) for each size."""
    import torch

    torch.set_num_threads(1)
    predictions = json.loads(data_file(out, "predictions.json").read_text())
    all_items: list[dict[str, Any]] = []
    for size in sizes:
        base = next(i["setting"]["lr"] for i in predictions["items"]
                    if i["model"] == size and i["quantity"] == "staleness_max")
        model, tokenizer, _ = warmed_model(size, 0)
        path = out / f"runs_{size}.json"
        plan = [p for p in sweep_plan(base, sweeps)
                if p["sweep"] != "lr" or p["momentum"] in momenta]
        # runs of other settings already in the file are kept (a sweep added later)
        records = [r for r in (json.loads(path.read_text())["runs"] if path.is_file() else [])
                   if r["setting"] not in plan]
        for setting in progress_bar(plan, size):
            for seed in range(seeds):
                fields = {k: v for k, v in setting.items() if k != "sweep"}
                result = run(copy.deepcopy(model), tokenizer,
                             RunSettings(steps=steps, seed=seed, **fields))
                records.append({"setting": setting, "seed": seed,
                                "unstable": is_unstable(result),
                                "reward": result["reward"],
                                "update_norm": result["update_norm"],
                                "update_cosine": result["update_cosine"],
                                "finite": result["finite"]})
        _dump(path, {"size": size, "steps": steps, "seeds": seeds, "runs": records})
        all_items.extend(observe(size, records, steps))
    return _dump(out / f"observations_{'_'.join(sizes)}.json", {"items": all_items})


def two_mode_runs(items: list[dict[str, Any]], plan: dict[str, Any], *, has_lr_sweep: bool,
                  lr_steps: int = 40) -> list[dict[str, Any]]:
    """List the settings (with their run length) that test the two-mode predictions of a model.

    In this order (a queue cut short keeps the first): the lr sweep of the plan (``lr_steps``
    steps) for a model with no lr sweep yet; the oscillation check; a relaxation setting where
    a relaxation time or a lower bound on it is predicted, for three times the predicted time
    (at least 100, at most 300 steps).
    """
    runs = []
    if not has_lr_sweep:  # first, momenta interleaved: a sweep cut short still has both
        runs += [{"sweep": "lr", "lr": lr, "momentum": float(beta), "steps": lr_steps}
                 for j in range(max(len(v) for v in plan["lr_sweep"].values()))
                 for beta, lrs in plan["lr_sweep"].items() for lr in lrs[j:j + 1]]
    for item in items:
        period = (item.get("period_at_momentum") or {}).get(str(OSC_MOMENTUM))
        if (item["quantity"] == "oscillation_momentum" and item["setting"]["mode"] == "soft"
                and period is not None and period < OSC_STEPS / 4):
            runs.append({"sweep": "osc", "lr": item["setting"]["lr"], "momentum": OSC_MOMENTUM,
                         "steps": OSC_STEPS})
    for item in items:
        if item["quantity"] != "relaxation_time":
            continue
        tau = item["value"] if item["value"] is not None else item.get("lower_bound")
        if tau is None:
            continue
        steps = int(min(max(100, math.ceil(3 * tau)), 300))
        runs.append({"sweep": "relax", "lr": item["setting"]["lr"],
                     "momentum": item["setting"]["momentum"], "steps": steps})
    return runs


def reward_period(curves: list[list[float]], predicted: float) -> dict[str, Any]:
    """Find the dominant period of the seed-mean reward and test it against ``predicted``.

    Rule fixed before the runs: the seed-mean curve, its linear trend removed, has the
    periodogram peak in the band 4 - 50 steps; the oscillation at the predicted period is
    observed when the power within +-25 % of the predicted frequency is at least three times
    the median power of the band (white sampling noise has a flat periodogram).
    """
    curve = mean_curve(curves)
    curve = curve[np.isfinite(curve)]
    n = np.arange(curve.size)
    resid = curve - np.polyval(np.polyfit(n, curve, 1), n)
    power = np.abs(np.fft.rfft(resid)) ** 2
    freq = np.fft.rfftfreq(curve.size)
    band = (freq >= 1 / 50) & (freq <= 1 / 4)
    peak = float(1 / freq[band][np.argmax(power[band])])
    near = band & (np.abs(freq - 1 / predicted) <= 0.25 / predicted)
    ratio = float(power[near].max() / np.median(power[band])) if near.any() else 0.0
    return {"period": peak, "power_ratio_at_predicted": ratio,
            "oscillation_at_predicted": bool(ratio >= 3.0)}


def refresh_runs(base_lr: float, *, steps: int = 60, grid: tuple[int, ...] = REFRESH_GRID[:6]
                 ) -> list[dict[str, Any]]:
    """List the sample-and-hold refresh sweep that tests a two-mode refresh_max (momentum 0)."""
    return [{"sweep": "refresh", "lr": base_lr, "momentum": 0.0, "refresh": k, "mode": "hold",
             "steps": steps} for k in grid]


def lr_extension_runs(plan: dict[str, Any], up_to: float, *, steps: int = 40
                      ) -> list[dict[str, Any]]:
    """List the plan's lr sweep continued upward, by doublings, up to ``up_to`` (inclusive).

    Each momentum's grid goes on from its largest lr (same run length as the plan's sweep,
    ``steps``); momenta interleaved, so that a queue cut short still has both.
    """
    if not up_to > 0:
        raise ValueError(f"--lr-up-to must be a positive learning rate, got {up_to}")
    grids = {}
    for beta, lrs in plan["lr_sweep"].items():
        grid, lr = [], 2 * max(lrs)
        while lr <= up_to * (1 + 1e-9):
            grid.append(lr)
            lr *= 2
        grids[beta] = grid
    return [{"sweep": "lr", "lr": lr, "momentum": float(beta), "steps": steps}
            for j in range(max(map(len, grids.values()), default=0))
            for beta, lrs in grids.items() for lr in lrs[j:j + 1]]


def staleness_runs(base_lr: float, *, steps: int = 60, grid: tuple[int, ...] = STALENESS_GRID
                   ) -> list[dict[str, Any]]:
    """List the staleness sweep that tests a two-mode staleness_max (momentum 0)."""
    return [{"sweep": "staleness", "lr": base_lr, "momentum": 0.0, "staleness": d,
             "steps": steps} for d in grid]


#: sweeps that run2 can add to a model's runs after its planned ones
LATER_SWEEPS = ("refresh", "lr", "staleness")


def run_two_mode(sizes: list[str], *, seeds: int = 3, out: Path, seed_offset: int = 0,
                 sweep: str | None = None, lr_up_to: float | None = None) -> Path:
    """Run the settings of ``predictions_two_mode.json`` for each size: ``runs2_<size>.json``.

    Seeds ``seed_offset`` to ``seed_offset + seeds - 1``: the runs are deterministic given the
    seed, so a setting already run in an earlier sweep needs new seeds to be a blind test.
    ``sweep`` (one of ``LATER_SWEEPS``) runs only that sweep and adds its runs to those already
    in the file: ``refresh`` and ``staleness`` at the plan's base lr, ``lr`` the plan's lr
    sweep continued up to ``lr_up_to``.
    """
    if sweep is not None and sweep not in LATER_SWEEPS:
        raise ValueError(f"run2 --sweeps takes one of {', '.join(LATER_SWEEPS)}, got {sweep!r}")
    if (sweep == "lr") != (lr_up_to is not None):
        raise ValueError("run2: --lr-up-to goes with --sweeps lr (and --sweeps lr needs it)")
    import torch

    torch.set_num_threads(1)
    predictions = json.loads(data_file(out, "predictions_two_mode.json").read_text())
    paths = []
    for size in sizes:
        items = [i for i in predictions["items"] if i["model"] == size]
        if not items:
            raise ValueError(f"no two-mode predictions for model {size!r}")
        plan = predictions["plans"][size]
        if sweep == "refresh":
            settings = refresh_runs(plan["base_lr"])
        elif sweep == "staleness":
            settings = staleness_runs(plan["base_lr"])
        elif sweep == "lr":
            settings = lr_extension_runs(plan, lr_up_to)
        else:
            settings = two_mode_runs(items, plan,
                                     has_lr_sweep=(out / f"runs_{size}.json").is_file())
        model, tokenizer, _ = warmed_model(size, 0)
        path = out / f"runs2_{size}.json"
        # a later sweep adds to the runs already there
        records = ([r for r in json.loads(path.read_text())["runs"] if r["setting"] not in settings]
                   if sweep and path.is_file() else [])
        for setting in progress_bar(settings, size):
            for seed in range(seed_offset, seed_offset + seeds):
                fields = {k: v for k, v in setting.items() if k != "sweep"}
                result = run(copy.deepcopy(model), tokenizer, RunSettings(seed=seed, **fields))
                records.append({"setting": setting, "seed": seed,
                                "unstable": is_unstable(result), "reward": result["reward"],
                                "update_norm": result["update_norm"],
                                "update_cosine": result["update_cosine"],
                                "finite": result["finite"]})
                path = _dump(out / f"runs2_{size}.json", {"size": size, "seeds": seeds,
                                                          "runs": records})
        paths.append(path)
    return paths[-1]


def observe_two_mode(model: str, records: list[dict[str, Any]],
                     periods: dict[str, float] | None = None, *,
                     warm_reward: float | None = None) -> list[dict[str, Any]]:
    """Observation items of the two-mode runs (settings tagged ``runs: two_mode``).

    ``periods``: the predicted soft-mode period at ``OSC_MOMENTUM`` by lr (str), for the
    oscillation runs; ``warm_reward``: the warm-up accuracy, for the post-hoc lr rule.
    """
    items = []
    osc = [r for r in records if r["setting"]["sweep"] == "osc"]
    records = [r for r in records if r["setting"]["sweep"] != "osc"]
    if osc and periods:
        lr = osc[0]["setting"]["lr"]
        predicted = periods.get(str(lr))
        if predicted:
            found = reward_period([r["reward"] for r in osc], predicted)
            seen = found["oscillation_at_predicted"]
            extra = {} if seen else {"status": "no oscillation at the predicted period (power "
                                     f"ratio {found['power_ratio_at_predicted']:.2g} < 3)"}
            items.append({"model": model, "quantity": "oscillation_period",
                          "setting": {"lr": lr, "momentum": OSC_MOMENTUM, "runs": "two_mode"},
                          "value": found["period"] if seen else None, **found, **extra,
                          "unstable_seeds": sum(r["unstable"] for r in osc)})
    by_steps: dict[int, list[dict[str, Any]]] = {}
    for rec in records:
        by_steps.setdefault(rec["setting"]["steps"], []).append(rec)
    for steps, recs in by_steps.items():
        relabelled = [{**r, "setting": {**{k: v for k, v in r["setting"].items() if k != "steps"},
                                        "sweep": "lr" if r["setting"]["sweep"] == "relax"
                                        else r["setting"]["sweep"]}} for r in recs]
        lr_sweep = any(r["setting"]["sweep"] == "lr" for r in recs)
        for item in observe(model, relabelled, steps, warm_reward=warm_reward):
            if item["quantity"] in ("lr_max", "lr_max_post_hoc") and not lr_sweep:
                continue  # relaxation runs alone are no lr sweep
            if item["quantity"] in ("lr_frozen", "relaxation_time_hessian"):
                continue
            item["setting"] = {**item["setting"], "runs": "two_mode"}
            item["steps"] = steps
            items.append(item)
    return items


def _dump(path: Path, payload: dict[str, Any]) -> Path:
    from grpodyn.ground import write_atomic

    return write_atomic(path, json.dumps(payload) + "\n")


def within_target(quantity: str, predicted: Any, observed: Any, grid: list | None) -> Any:
    """Judge against the stated target: tau within 25 %; thresholds within 20 % or one grid step."""
    if predicted is None or observed is None:
        return None
    if quantity.startswith("relaxation_time"):
        return bool(abs(predicted - observed) <= 0.25 * observed)
    if quantity.startswith(("lr_max", "refresh_max", "staleness_max")):
        if abs(predicted - observed) <= 0.2 * max(abs(observed), 1e-12):
            return True
        if grid:
            below = [g for g in grid if g <= predicted]
            nearest = below[-1] if below else None
            i = grid.index(observed) if observed in grid else None
            j = grid.index(nearest) if nearest in grid else -1
            return bool(i is not None and abs(i - j) <= 1)
        return False
    if quantity in ("oscillation_period", "stiff_swing"):
        return bool(abs(predicted - observed) <= 0.25 * observed)
    if quantity == "oscillation_momentum":
        return bool(abs(predicted - observed) <= 0.1 * max(abs(observed), 1e-12))
    return None


def compare_step(*, out: Path) -> Path:
    """Observe every shipped runs file, join with the predictions, write comparison.json.

    Writes ``observations.json`` (all models) from ``runs_<model>.json`` with the rules of the
    module docstring, then joins predictions and observations on (model, quantity, setting).
    """
    predictions = json.loads(data_file(out, "predictions.json").read_text())["items"]
    observations = []
    for path in sorted(out.glob("runs_*.json")):
        runs = json.loads(path.read_text())
        observations.extend(observe(runs["size"], runs["runs"], runs["steps"],
                                    warm_reward=warm_up_accuracy(out, runs["size"])))
    two_mode = data_file(out, "predictions_two_mode.json")
    if two_mode.is_file():
        new = json.loads(two_mode.read_text())["items"]
        stale = out / "predictions_staleness.json"
        stale_file = json.loads(stale.read_text()) if stale.is_file() else {"items": []}
        stale_items = [{**i, "commit": stale_file["commit_by_model"][i["model"]]}
                       for i in stale_file["items"]]
        for path in sorted(out.glob("runs2_*.json")):
            runs = json.loads(path.read_text())
            periods = {str(i["setting"]["lr"]): i["period_at_momentum"][str(OSC_MOMENTUM)]
                       for i in new if i["model"] == runs["size"]
                       and i["quantity"] == "oscillation_momentum"
                       and i["setting"]["mode"] == "soft" and i.get("period_at_momentum")}
            observations.extend(observe_two_mode(runs["size"], runs["runs"], periods,
                                                 warm_reward=warm_up_accuracy(out, runs["size"])))
        new = new + [{"model": i["model"], "quantity": "oscillation_period",
                      "setting": {"lr": i["setting"]["lr"], "momentum": OSC_MOMENTUM,
                                  "runs": "two_mode"},
                      "value": i["period_at_momentum"][str(OSC_MOMENTUM)],
                      "source": "two-mode map"}
                     for i in new if i["quantity"] == "oscillation_momentum"
                     and i["setting"]["mode"] == "soft" and i.get("period_at_momentum")]
        fresh = [o for o in observations if o["setting"].get("runs") == "two_mode"]
        earlier = [o for o in observations if o["setting"].get("runs") != "two_mode"]
        rows = join(predictions, earlier) + join(new + stale_items, fresh)
        # lag thresholds predicted in predictions.json (one-mode, section 10) tested again by a
        # run2 sweep (new runs: a staleness sweep never run before, or new seeds)
        lags = ("staleness_max", "refresh_max")
        tested = {(o["model"], json.dumps({k: v for k, v in o["setting"].items() if k != "runs"},
                                          sort_keys=True))
                  for o in fresh if o["quantity"] in lags}
        early = [{**p, "setting": {**p["setting"], "runs": "two_mode"}} for p in predictions
                 if p["quantity"].startswith(lags)
                 and (p["model"], json.dumps(p["setting"], sort_keys=True)) in tested]
        made = json.loads(data_file(out, "predictions.json").read_text())
        by_model = made.get("commit_by_model", {})
        for row in join(early, fresh):
            row.update(source="one-mode map (predictions.json), ",
                       commit=by_model.get(row["model"], "unknown"))
            rows.append(row)
        matched = {(r["model"], r["quantity"], json.dumps(r["setting"], sort_keys=True))
                   for r in rows}
        stripped = [{**p, "setting": {k: v for k, v in p["setting"].items() if k != "runs"}}
                    for p in new if (p["model"], p["quantity"],
                                     json.dumps(p["setting"], sort_keys=True)) not in matched]
        for row in join(stripped, earlier):
            row["postdiction"] = ("compared with runs made before this prediction (earlier "
                                  "sweeps): not a test")
            row["setting"] = {**row["setting"], "runs": "two_mode"}
            rows.append(row)
    else:
        rows = join(predictions, observations)
    rows += _post_hoc_rows(rows, observations)
    from .relay import load_tracking, relay_rows

    rows += relay_rows(out)
    observations += load_tracking(sorted(out.glob("tracking_*.json")))
    from .relaxation import relaxation_rows

    relaxed, relaxation = relaxation_rows(out)
    observations += relaxed
    rows += relaxation
    _dump(out / "observations.json", {"items": observations})
    return _dump(data_file(out, "comparison.json"), {"rows": rows})


def warm_up_accuracy(out: Path, size: str) -> float | None:
    """Return the warm-up accuracy in ``out`` of ``measurements_<size>.json`` (None: none)."""
    path = out / f"measurements_{size}.json"
    return json.loads(path.read_text())["warm_up"]["accuracy"] if path.is_file() else None


def _post_hoc_rows(rows: list[dict[str, Any]], observations: list[dict[str, Any]]
                   ) -> list[dict[str, Any]]:
    """Judge each compared lr_max prediction again with the post-hoc rule (labelled so)."""
    index = {(o["model"], json.dumps(o["setting"], sort_keys=True)): o for o in observations
             if o["quantity"] == "lr_max_post_hoc"}
    extra = []
    for row in rows:
        if not row["quantity"].startswith("lr_max") or row.get("postdiction"):
            continue
        obs = index.get((row["model"], json.dumps(row["setting"], sort_keys=True)))
        if obs is None:
            continue
        within = within_target(row["quantity"], row["predicted"], obs["value"], obs["grid"])
        if str(obs.get("status", "")).endswith("(lower bound)") and within:
            within = None
        extra.append({**row, "observed": obs["value"], "observed_status": obs.get("status"),
                      "within_target": within, "post_hoc": obs["rule"]})
    return extra


def join(predictions: list[dict[str, Any]], observations: list[dict[str, Any]]
         ) -> list[dict[str, Any]]:
    """Pair each prediction with its observation; judge it against the stated target."""
    index = {(o["model"], o["quantity"], json.dumps(o["setting"], sort_keys=True)): o
             for o in observations}
    rows = []
    for p in predictions:
        key = (p["model"], p["quantity"], json.dumps(p["setting"], sort_keys=True))
        observed_quantity = p["quantity"]
        for base in ("lr_max", "refresh_max", "staleness_max"):
            if observed_quantity.startswith(base):
                observed_quantity = base
        obs = index.get((p["model"], observed_quantity, key[2]))
        if obs is None and p["quantity"].startswith("oscillation_momentum"):
            obs = index.get((p["model"], "oscillation_momentum",
                             json.dumps({"lr": p["setting"]["lr"], "mode": "slow"},
                                        sort_keys=True)))
        if obs is None:
            continue
        within = within_target(p["quantity"], p["value"], obs["value"], obs.get("grid"))
        bound = obs.get("lower_bound")
        if (within is None and p["quantity"].startswith("relaxation_time")
                and p["value"] is not None and bound is not None):
            # observed tau beyond twice the run: a prediction below 0.75 x that bound is refuted
            within = False if p["value"] < 0.75 * bound else None
        if str(obs.get("status", "")).endswith("(lower bound)") and within:
            within = None  # a prediction near a lower bound can be neither confirmed nor refuted
        if p.get("status") == "no threshold":
            within = obs["value"] is None
        elif p.get("status") == "unstable on-policy":
            # observed threshold None means the first grid value was already unstable
            within = obs["value"] is None and bool(obs.get("unstable", [False])[0])
        rows.append({"model": p["model"], "quantity": p["quantity"], "setting": p["setting"],
                     "predicted": p["value"], "predicted_status": p.get("status"),
                     "observed": obs["value"], "observed_status": obs.get("status"),
                     "within_target": within,
                     **({"commit": p["commit"]} if "commit" in p else {})})
    return rows
