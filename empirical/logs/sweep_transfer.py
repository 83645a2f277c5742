"""Transfer: the reward path of a setting not yet run, predicted from a sweep's fit.

See :mod:`.sweep` for the model, the band and its calibration. What :func:`transfer` refuses,
and how it forms the mean and the band:

A key of ``target`` not in :data:`HPARAM_KEYS`, or a value of the wrong type, is refused;
missing ones are taken from the first source. A target kl or
num_iterations that no fitted source ran at is refused: the map does not carry them. So is
a target lr at or beyond the stability limit of the map the transfer carries (its mean path
would oscillate and grow), and a target seed no fitted source has where the sources hold one
seed or none (nothing says how far its r0 may lie).
``cross_validate`` adds the transfer-error term s d^2 (m(n) - m(0))^2 to the
band, s calibrated by :func:`transfer_error` (leave-one-setting-out on the sources, about
one sweep fit per source setting; ``refits`` shares them between calls); False gives
the band without it.

The mean and the band are formed by :func:`~.sweep_band.band` (in the logit space of a
reward with a known range, [0, 1] or declared, with the exponents sampled that
:mod:`~.sweep_exponents` chooses from the law and the sources' measurement); where Adam's
B G exponent is not determined the mean is the nearest source's path and the band covers
the map's; where the sources contradict the tau-lr law or the B G law's range, the law
does not describe the sweep: the mean is the nearest source's path and the band covers
the sources' spread. Where source runs share the target's seed and batch (they drew the
same prompts at every step), the mean carries the prompts' share of their deviations and
the band the rest (:func:`~.sweep_shared.shared_prompts`).
"""

from __future__ import annotations

from dataclasses import replace
from functools import partial
from typing import Any

import numpy as np
from scipy.stats import norm

from grpodyn.empirical.logs.sweep_advice import LIMIT_SETTINGS, fall_limit
from grpodyn.empirical.logs.sweep_band import Band, band, band_window
from grpodyn.empirical.logs.sweep_exponents import contradicted
from grpodyn.empirical.logs.sweep_fit import SweepFit, fit_runs
from grpodyn.empirical.logs.sweep_runs import SweepRun, as_runs, checked_run, checked_types
from grpodyn.empirical.logs.sweep_shared import shared_prompts
from grpodyn.ground import InputError, check_fraction, check_int
from grpodyn.numerics.executor import run_tasks

_DISTANCE_KEYS = ("lr", "group_size", "batch", "num_iterations", "momentum")
#: target keys the mean path does not depend on, with the value a run that names none has
_UNMODELLED = {"kl": None, "num_iterations": None}


def setting_distance(a: dict[str, Any], b: dict[str, Any]) -> float:
    """Distance between two hyperparameter settings in log-hyperparameter space (dimensionless).

    d(a, b) = sqrt(sum_k (log a_k - log b_k)^2) over k in lr, group_size, batch,
    num_iterations, and 1 - momentum (log(1 - beta1): the momentum enters the map through its
    time scale 1 / (1 - beta1)); a key missing or None on either side is left out. A factor of
    e in lr is a distance of 1, lr x3 of 1.10. The KL coefficient (often 0), the schedule and
    the warm-up are not in the distance: a difference there is not covered by the transfer
    error term of the band.
    """
    total = 0.0
    for key in _DISTANCE_KEYS:
        x, y = a.get(key), b.get(key)
        if x is None or y is None:
            continue
        if key == "momentum":
            x, y = 1.0 - x, 1.0 - y
        if x > 0 and y > 0:
            total += float(np.log(x / y)) ** 2
    return float(np.sqrt(total))


def _nearest(hp: dict[str, Any], runs: list[SweepRun]) -> tuple[float, dict[str, Any] | None]:
    """Return the smallest distance from ``hp`` to a run of its optimizer, and its settings."""
    same = [r for r in runs if r.hparams["optimizer"] == hp["optimizer"]]
    if not same:
        return float("inf"), None
    nearest = min(same, key=lambda r: setting_distance(hp, r.hparams))
    settings = {k: v for k, v in nearest.hparams.items() if k not in ("seed", "steps")}
    return setting_distance(hp, nearest.hparams), settings


def _refit_without(fit: SweepFit, setting: tuple, refits: dict | None = None
                   ) -> SweepFit | str:
    """Refit ``fit``'s sweep without the runs of ``setting``; the input error's text if it fails.

    The runs are ``fit``'s own, converted and checked when it was made. ``refits``: fits already
    made, keyed by the names of the runs fitted and the options (one sweep held out two ways,
    X then Y or Y then X, is fitted once).
    """
    runs = [r for r in fit.fitted if r.setting != setting]
    key = (frozenset(r.name for r in runs), tuple(sorted(fit.options.items())))
    if refits is not None and key in refits:
        return refits[key]
    try:
        out: SweepFit | str = fit_runs(runs, **fit.options)
    except InputError as exc:
        out = str(exc)
    if refits is not None:
        refits[key] = out
    return out


def transfer_error(fit: SweepFit, optimizer: str, *, draws: int = 200, seed: int = 0,
                   refits: dict | None = None) -> dict[str, Any]:
    """Calibrate the transfer-error term of the band by leave-one-setting-out on the sources.

    Each setting of ``optimizer`` among the fitted source runs is held out in turn, the sweep
    refitted on the other runs (``fit_sweep`` with this fit's options) and the held-out setting
    transferred from them (the mean path, and the band without the transfer error). The map's
    own error when it carries the constants over a distance d = :func:`setting_distance`
    (held-out setting, nearest remaining setting) is modelled as a relative error eps of the
    predicted displacement from the start, eps ~ N(0, s d^2):

        var_transfer(n) = s d^2 (m(n) - m(0))^2,

    zero at step 0 (r0 is carried by the seed, not by the map), growing with the horizon as the
    path moves, and saturating with it at the plateau (a stiffness error fades there, a plateau
    error does not; both are a share of the distance travelled). s (dimensionless, per unit
    squared log-distance) is the ratio of sums over every point n of every held-out run i:

        s = max(0, sum (e_i(n)^2 - v(n)) / sum d^2 (m(n) - m(0))^2),

    e_i(n) the run's reward minus the transferred mean of its seed, v(n) the variance at that
    step of the band without the transfer error: the squared error beyond what the band already
    explains, regressed on d^2 (m(n) - m(0))^2 through the origin with weights proportional to
    the regressor (a moment estimator, robust to single points).

    Returns
    -------
    dict
        ``status`` ("calibrated" or "not calibrated: <why>"), ``s``, ``form``, ``held_out``
        (per held-out setting: its settings, runs, distance, mean squared error of its runs
        around the transferred mean, mean band variance, mean excess), ``draws``. Cached on the
        fit. ``refits`` (a dict the caller keeps) shares the refitted sweeps between calls that
        hold out the same settings, e.g. every held-out setting of one leave-one-out score.
    """
    key = (optimizer, draws, seed)
    if key in fit.calibrations:
        return fit.calibrations[key]
    form = "var_transfer(n) = s d^2 (m(n) - m(0))^2, d = setting_distance(target, nearest source)"
    groups: dict[tuple, list[SweepRun]] = {}
    for run in fit.fitted:
        if run.hparams["optimizer"] == optimizer:
            groups.setdefault(run.setting, []).append(run)
    out: dict[str, Any] = {"s": None, "form": form, "held_out": [], "draws": draws}
    if len(groups) < 2:
        out["status"] = (f"not calibrated: the sources hold {len(groups)} {optimizer} setting"
                         f"{'' if len(groups) == 1 else 's'}; holding one out leaves none to "
                         "transfer from")
        fit.calibrations[key] = out
        return out
    num = den = 0.0
    ordered = sorted(groups.items(), key=lambda item: str(item[0]))
    subs = run_tasks([partial(_refit_without, fit, setting, refits) for setting, _ in ordered],
                       executor="serial", description="transfer error: settings held out")
    for (_, held), sub in zip(ordered, subs, strict=True):
        hp = {k: v for k, v in held[0].hparams.items() if k not in ("seed", "steps")}
        entry: dict[str, Any] = {"setting": hp, "runs": len(held)}
        if isinstance(sub, str):
            entry["status"] = f"skipped: {sub}"
            out["held_out"].append(entry)
            continue
        d, _ = _nearest(hp, sub.fitted)
        n = int(max(r.steps[-1] for r in held))
        errors, excess, regressor = [], [], []
        first = {**hp, "seed": held[0].hparams.get("seed")}
        with np.errstate(over="ignore", invalid="ignore"):
            predicted = shared_prompts(sub, band(sub, first, n, draws, seed), first, n)[0]
        for run in held:
            idx = run.steps.astype(int)
            own = {**hp, "seed": run.hparams.get("seed")}
            with np.errstate(over="ignore", invalid="ignore"):  # each seed's own r0: its mean
                mean = shared_prompts(sub, band(sub, own, n, 0, seed), own, n)[0].mean
            e2 = (run.reward - mean[idx]) ** 2
            errors.append(e2)
            excess.append(e2 - predicted.variance[idx])
            regressor.append(d ** 2 * (mean[idx] - mean[0]) ** 2)
        e2_all, excess_all = np.concatenate(errors), np.concatenate(excess)
        num += float(np.sum(excess_all))
        den += float(np.sum(np.concatenate(regressor)))
        entry.update({"distance": d, "mean_squared_error": float(np.mean(e2_all)),
                      "band_variance": float(np.mean(predicted.variance)),
                      "excess": float(np.mean(excess_all)), "status": "used"})
        out["held_out"].append(entry)
    if den > 0:
        out["s"] = max(num / den, 0.0)
        out["raw_ratio"] = num / den
        out["status"] = "calibrated"
    else:
        out["status"] = "not calibrated: no held-out setting moved away from its start"
    fit.calibrations[key] = out
    return out


def _setting_path(fit: SweepFit, settings: dict[str, Any], n: int) -> np.ndarray:
    """Return one source setting's seed-mean path over steps 0..n (moving average).

    Past the runs' last step the path holds its last smoothed value.
    """
    runs = [r for r in fit.fitted
            if {k: v for k, v in r.hparams.items() if k not in ("seed", "steps")} == settings]
    grid = np.arange(n + 1, dtype=float)
    path = np.mean([np.interp(grid, r.steps, r.reward) for r in runs], axis=0)
    width = min(band_window(min(r.reward.size for r in runs)), n + 1)
    kernel = np.ones(width)
    return np.convolve(path, kernel, mode="same") / np.convolve(np.ones_like(path), kernel,
                                                                mode="same")


def _fallback(fit: SweepFit, predicted: Band, nearest: dict[str, Any], n: int, *,
              which: str, warnings: list[str]) -> Band:
    """Centre the band on the nearest source's path, widened by what the copy cannot know.

    ``which``: the exponent ("tau_lr" or "bg") whose law the sources contradict or, for "bg",
    leave open; it gains a ``fallback`` entry and ``warnings`` its status. Where Adam's B G
    exponent is not determined (one B G among the sources) the law still holds and its range is
    a possible outcome: the draws' variance gains (m_map - m_nearest)^2. Where the sources
    contradict a law the map's mean and draws describe a law that does not hold; the draws'
    part is replaced by the sources' spread, the mean over the other source settings of their
    optimizer of (path_s(n) - path_nearest(n))^2: how far another setting's path lay from the
    nearest one's, the size of the copy's error.
    """
    entry = predicted.exponents[which]
    entry["fallback"] = {k: nearest.get(k) for k in ("lr", "group_size", "batch")}
    warnings.append(f"Adam's B G exponent {entry['status']}" if which == "bg" else
                    f"the tau-lr exponent {entry['status']}")
    path = _setting_path(fit, nearest, n)
    if not entry.get("contradicts_law"):
        extra = predicted.var_draws + (predicted.mean - path) ** 2
    else:
        others = {tuple(sorted((k, v) for k, v in r.hparams.items()
                               if k not in ("seed", "steps"))) for r in fit.fitted
                  if r.hparams["optimizer"] == nearest["optimizer"]}
        paths = [_setting_path(fit, dict(key), n) for key in others
                 if dict(key) != nearest]
        extra = np.mean([(q - path) ** 2 for q in paths], axis=0) if paths else \
            (predicted.mean - path) ** 2
    return replace(predicted, centre=predicted.scale.forward(path), var_draws=extra)


def _first_step(runs: list[SweepRun], warnings: list[str]) -> float:
    """Return the log step of the sources' first point (the most common one; 0 if none).

    Each source is aligned at its own first point (its steps count from there); where the
    sources start at different log steps, a warning added to ``warnings`` says which start
    labels the prediction.
    """
    values, counts = np.unique([r.first_step for r in runs], return_counts=True)
    first = float(values[np.argmax(counts)]) if values.size else 0.0
    if values.size > 1:
        warnings.append(f"the sources' logs start at steps {', '.join(f'{v:g}' for v in values)}"
                        ": each is aligned at its own first point, and the predicted steps "
                        f"count from {first:g}, the most common start")
    return first


def _check_modelled(fit: SweepFit, target: dict[str, Any]) -> list[str]:
    """Refuse a target value of a key the map does not carry that no fitted source ran at.

    The mean path depends on the optimizer, lr, momentum, G, B, schedule, warm-up and seed; the
    KL coefficient and the reuse count (num_iterations) leave it unchanged, so a target that
    moves them away from every fitted source would be predicted as if it had not. Where no
    fitted source states the key, nothing can be compared: the value is taken as the sources'
    own, and the returned note says so.
    """
    notes = []
    for key, default in _UNMODELLED.items():
        if key not in target:
            continue
        seen = sorted({r.hparams.get(key, default) for r in fit.fitted}, key=str)
        if target[key] in seen:
            continue
        if seen == [None]:
            notes.append(f"--to {key}={target[key]:g}: no source states its {key}; the "
                         f"transfer does not carry {key} and takes it to be the sources'")
            continue
        shown = ", ".join("not given" if v is None else f"{v:g}" for v in seen)
        left = sorted({r.hparams.get(key) for r in fit.runs if r not in fit.fitted} - {None})
        note = (f"; the runs at {key} {', '.join(f'{v:g}' for v in left)} are left out of "
                "the fit (collapsed, or a reward that never moved)") if left else ""
        raise InputError(f"--to {key}={target[key]:g}: the transfer carries lr, G, B, "
                         f"momentum, schedule and warmup, not {key}; the fitted sources ran at "
                         f"{key} {shown}{note}: give {key} at one of those values, or leave "
                         f"{key} out")
    return notes


def _check_seed(fit: SweepFit, target: dict[str, Any]) -> None:
    """Refuse a target seed that no fitted source has where the sources hold one seed or none.

    Sources of several seeds give each its own r0 and an unseen seed their mean with their
    spread in the band; sources of one seed give one r0, which another seed would take silently,
    with no spread between seeds to say how far its start may lie.
    """
    seed = target.get("seed")
    seeds = sorted({r.hparams.get("seed") for r in fit.fitted} - {None})
    if seed is None or fit.layout.starts or seed in seeds:
        return
    held = f"seed {seeds[0]} only" if seeds else "no seed stated"
    raise InputError(f"--to seed={seed}: no fitted source run has seed {seed} (the sources: "
                     f"{held}), and one source seed says nothing of how far another seed's "
                     "start r0 may lie: give a source seed or leave seed out")


def _lr_limit(system: Any, factor: float, exponent: float) -> tuple[float, str]:
    """Return the target lr at which the fitted map turns unstable, and how it was found.

    The lower of two: the slow mode's limit of the fitted map with k proportional to lr (the
    law's tau-lr exponent -1, ``lr_max``), and that of the map the transfer carries, whose k is
    the fitted map's times the exponents' factor ``factor`` ((lr / lr_ref)^-(p + 1), p the
    tau-lr ``exponent``): k grows like lr^-p and reaches the bound stiffness_max at lr
    (stiffness_max / k)^(-1/p) times the target's (never, for p >= 0, where k is below it).
    Both extrapolate the sources' stiffness; the lower is the one the sources do not rule out.
    """
    k = system.stiffness * factor
    if exponent < 0:
        carried = float(system.lr * (system.stiffness_max / k) ** (-1.0 / exponent))
    else:
        carried = float("inf") if k < system.stiffness_max else 0.0
    how = (f"{system.lr_max:.3g} with k proportional to lr, {carried:.3g} with the tau-lr "
           f"exponent {exponent:.2f}")
    return min(system.lr_max, carried), how


def _limits(fit: SweepFit, system: Any, predicted: Band, hp: dict[str, Any],
            short_runs: list[SweepRun]) -> tuple[list[str], dict[str, Any]]:
    """Refuse a target lr at or beyond a limit; return warnings near one, and the sweep's fall.

    Two limits bound the target's lr: the fitted map's (:func:`_lr_limit`), and the lowest lr
    at which a source of the target's optimizer and settings fell above every lr that held
    (:func:`~.sweep_advice.fall_limit`, the reading of ``grpodyn advise --sweep``), read over
    the fitted sources, those left out of the fit and ``short_runs``, with the floor of the
    sweep's reward range. Past either the run
    collapses, which the mean path does not predict; within a factor 2 of either, a warning
    says so.
    """
    limit, how = _lr_limit(system, predicted.factor, predicted.exponents["tau_lr"]["value"])
    lr = hp["lr"]
    if lr >= limit:
        raise InputError(f"--to lr={lr:g}: at or beyond the stability limit {limit:.3g} "
                         f"that the sources imply (the lr at which the fitted map's slow mode "
                         f"turns unstable: {how}); there the mean path oscillates and grows, a "
                         f"collapse the transfer does not predict: give lr below {limit:.3g}")
    fall = fall_limit([*fit.runs, *short_runs], optimizer=hp["optimizer"],
                      settings={key: hp.get(key) for key in LIMIT_SETTINGS},
                      floor=fit.layout.floor)
    if fall["lr"] is not None and lr >= fall["lr"]:
        raise InputError(f"--to lr={lr:g}: at or beyond the lr at which a source fell "
                         f"({fall['reason']}); a collapse the transfer does not predict: give "
                         f"lr below {fall['lr']:.3g}")
    near = [f"lr {lr:.3g} is within a factor 2 of the stability limit {limit:.3g} ({how}): "
            "the mean path may swing far past the plateau"] if lr > 0.5 * limit else []
    if fall["lr"] is not None and lr > 0.5 * fall["lr"]:
        near.append(f"lr {lr:.3g} is within a factor 2 of the lr at which a source fell "
                    f"({fall['reason']}): the transfer does not predict a fall")
    fall.pop("own_fell")  # no run of its own is advised
    return near, fall


def _assumptions(fit: SweepFit, system: Any) -> list[str]:
    """Return what a transfer from ``fit`` assumes, the target's map ``system``'s own last."""
    return [
        "the target shares the sources' model, task and reward; runs of one seed share the "
        "starting policy (r0), given with --to seed=N" if fit.layout.starts else
        "the target shares the sources' model, task, reward and starting policy (r0)",
        *([] if fit.layout.finite_group  # the target's map states its finite-G factor
          else ["every group informative (large-G map)"]),
        "plateau r* per seed (an unseen seed: the seeds' mean), not a function of lr"
        if fit.layout.plateau == "per_seed" and fit.layout.starts else
        "plateau r* shared by the runs of one optimizer (not a function of lr)",
        "SGD stiffness lr * kappa; Adam stiffness lr (1-beta1) kappa_A / sqrt(1 + rho_p/B + "
        "rho_A/(B G)) (rho_p = 0 unless fitted)",
        "sampling noise costs expected reward at second order: a drag lr^2 h (sigma_p^2/B + "
        "sigma_c^2/(B G)) / (2 (1 - beta^2)) (SGD), lr^2 h (1-beta1)/(2 (1+beta1)) rho/(1+rho) "
        "(Adam) per step" if fit.layout.units else "no noise drag on the mean path",
        "band: constants' covariance (cluster-robust, one cluster per run) and the fitted "
        "exponents' errors, sampled; seed-to-seed spread "
        "of the sources, per-step sampling noise r(1-r)(c_B/B + c_BG/(B G)), and the map's "
        "transfer error s d^2 (m(n) - m(0))^2 with s from leave-one-setting-out on the sources "
        "(see band_calibration)",
        "runs of one seed and one batch draw the same prompts at each step: the mean carries "
        "the prompts' share beta of the partner runs' deviations from their smoothed paths and "
        "the band the rest of the between-prompt noise (see shared_prompts)",
        *system.assumptions]


def _checked_options(level: float, draws: int, fit: Any) -> tuple[float, int]:
    """Return the band's level and draws checked, refusing a ``fit`` that is not a SweepFit."""
    level = check_fraction("level (--level)", level)
    draws = check_int("draws", draws, minimum=0)
    if draws == 1:
        raise InputError("draws: 0 (the centre alone) or at least 2; one draw has no spread")
    if fit is not None and not isinstance(fit, SweepFit):
        raise InputError(f"fit: expected a SweepFit (grpodyn.fit_sweep), got "
                         f"{type(fit).__name__} {fit!r:.40}")
    return level, draws


def _checked_target(target: Any) -> dict[str, Any]:
    """Return the target's hyperparameters, checked; an empty target is refused.

    An empty one would predict the first source's own settings without a word.
    """
    if isinstance(target, dict) and not target:
        raise InputError("target (--to) is empty: give the hyperparameters of the run to "
                         "predict (lr=..., group_size=..., batch=...); those it leaves out are "
                         "the first source's")
    return checked_run(checked_types(target, "target (--to)"), "target (--to)")


def transfer(sources: list[SweepRun], target: dict[str, Any], *, steps: int | None = None,
             level: float = 0.9, draws: int = 200, seed: int = 0,
             fit: SweepFit | None = None, cross_validate: bool = True,
             refits: dict | None = None, short_runs: list[SweepRun] | None = None
             ) -> dict[str, Any]:
    """Predict the reward path of a run with hyperparameters ``target`` (see the module).

    Parameters
    ----------
    sources : list of SweepRun or str
        Sweep runs or log paths (loaded as :func:`~.sweep_runs.load_sweep_run` loads them).
    target : dict
        The target's hyperparameters, keys of :data:`HPARAM_KEYS` (``grpodyn transfer --to``),
        at least one; those it leaves out are the first source's.
    steps : int, optional
        Steps after the first point (the sources' start): ``steps + 1`` points, ``--steps N`` of
        the command passes N - 1 (default: the target's ``steps``, else the longest source's).
    level : float
        Central probability of the band (default 0.9).
    draws : int
        Draws of the fitted constants and exponents that make the band's spread: 0 for the
        centre alone, else at least 2.
    seed : int
        Seed of the draws (the band is reproducible).
    fit : SweepFit, optional
        A joint fit of ``sources`` already made (``grpodyn.fit_sweep``); default: fitted here.
    cross_validate : bool
        Add the transfer-error term calibrated on the sources (the module docstring).
    refits : dict, optional
        A dict the caller keeps, sharing the refitted sweeps of that calibration between calls.
    short_runs : list of SweepRun, optional
        Runs of the sweep too short for the joint fit (under 10 points), read for a fall only:
        a target lr at or beyond the lowest lr at which a source fell, above every lr that
        held, is refused (``sweep_fall``).

    Returns
    -------
    dict
        The JSON dict of ``grpodyn transfer``: ``steps`` (labelled as the sources' logs count
        them: 1..n+1 for logs that start at step 1), ``mean``, ``lower``, ``upper``,
        ``level``, ``exponents`` (the tau-lr and B G exponents used, each with its status),
        ``constants``, ``assumptions``, ``warnings``, ``band_calibration``, ``shared_prompts``
        (``status``, ``beta``, ``partners``, ``form``) and ``sweep_fall`` (the sources' fall
        at the target's settings: ``lr``, ``run``, ``highest_held``, ``compared``, ``fell``,
        ``reason``).
    """
    level, draws = _checked_options(level, draws, fit)
    target = _checked_target(target)
    sources = as_runs(sources, "sources")
    fit = fit_runs(sources) if fit is None else fit
    unstated = _check_modelled(fit, target)
    _check_seed(fit, target)
    base = {k: v for k, v in fit.fitted[0].hparams.items() if k not in ("seed", "steps")}
    hp = {**base, **target}
    warnings = list(fit.warnings) + unstated
    if hp["optimizer"] not in fit.layout.optimizers:
        raise InputError(f"--to: optimizer {hp['optimizer']} has no source run; the sources "
                         f"have {', '.join(fit.layout.optimizers)}")
    n = steps if steps is not None else hp.get("steps") or int(max(r.steps[-1] for r in sources))
    n = check_int("steps (--steps)", n, minimum=1)
    hp.pop("steps", None)
    system = fit.system(hp)
    predicted = band(fit, hp, n, draws, seed)
    near, fall = _limits(fit, system, predicted, hp, list(short_runs or ()))
    coef, seed_var = predicted.coef, predicted.seed_var
    warnings.extend(predicted.warnings)
    distance, nearest = _nearest(hp, fit.fitted)
    exponents = predicted.exponents
    which = contradicted(exponents) if nearest is not None else None
    if which is not None:
        predicted = _fallback(fit, predicted, nearest, n, which=which, warnings=warnings)
    predicted, shared = shared_prompts(fit, predicted, hp, n)
    mean = predicted.mean
    if cross_validate:
        calibration = dict(transfer_error(fit, hp["optimizer"], draws=draws, seed=seed,
                                          refits=refits))
    else:
        calibration = {"s": None, "status": "not calibrated: cross_validate=False",
                       "held_out": []}
    calibration.update({"distance": distance, "nearest_source": nearest})
    if calibration["s"] is None:
        var_transfer = np.zeros_like(mean)
        warnings.append(f"band {calibration['status']}: it leaves out the transfer error of the "
                        f"map, here at distance {distance:.2f} from the "
                        "nearest source setting")
    else:
        var_transfer = calibration["s"] * distance ** 2 * (mean - mean[0]) ** 2
    if not predicted.scale.bounded:
        warnings.append("no known reward range: the mean and the band are formed on the reward "
                        "itself, unbounded (declare reward_range= (--reward-range) if the "
                        "reward has one)")
    z = float(norm.ppf(0.5 + level / 2))
    lower, upper = predicted.interval(z, var_transfer)
    source_lrs = [r.hparams["lr"] for r in fit.fitted if r.hparams["optimizer"] == hp["optimizer"]]
    ratio = max(hp["lr"] / max(source_lrs), min(source_lrs) / hp["lr"])
    if ratio > 1.0 and which != "tau_lr":
        warnings.append(f"lr {hp['lr']:.3g} lies outside the sources' range "
                        f"[{min(source_lrs):.3g}, {max(source_lrs):.3g}]: extrapolated with the "
                        f"tau-lr exponent {exponents['tau_lr']['value']:.2f} +- "
                        f"{exponents['tau_lr']['stderr']:.2f} "
                        f"({exponents['tau_lr']['status'].split(':')[0]})")
    warnings.extend(near)
    assumptions = _assumptions(fit, system)
    constants = fit.constants()
    constants["sampling_noise"] = {"c_B": float(coef[0]), "c_BG": float(coef[1])}
    constants["seed_spread_variance"] = {"value": seed_var}
    if predicted.scale.bounded:
        low, high = fit.layout.reward_range
        assumptions.append(f"a mean reward in [{low:g}, {high:g}]: its mean path is formed in "
                           "the logit space of the reward (it stays inside the range), the band "
                           "clipped to it")
    first = _first_step(fit.fitted, warnings)
    steps_out = [first + i for i in range(n + 1)]
    return {"steps": [int(v) if float(v).is_integer() else v for v in steps_out],
            "mean": [float(v) for v in mean],
            "lower": [float(v) for v in lower], "upper": [float(v) for v in upper],
            "exponents": exponents,
            "level": float(level), "constants": constants, "target": hp,
            "system": system.to_dict(), "assumptions": assumptions, "warnings": warnings,
            "band_calibration": calibration, "shared_prompts": shared, "sweep_fall": fall}
