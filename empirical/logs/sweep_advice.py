"""What a sweep tells the lr advice: its exponents, and the lr at which its runs fell.

A sweep (runs of one model and task at several settings, :func:`~.sweep.fit_sweep`) measures
what one run cannot: the tau-lr exponent p (:func:`exponent_from_sweep`) and Adam's B G exponent
of the stiffness (:func:`bg_exponent_from_sweep`). It also locates the stability limit from
above. A run whose reward fell beyond its noise had its stiffness at or past the limit,
k(lr) >= k_max (docs/theory.md section 5), the reading the advice makes of a single run that
fell; and k grows with the lr (k = a kappa, a proportional to the lr), so a run that held at a
higher lr of the same optimizer, G, B, updates per batch and KL coefficient says a fall below it
was not the lr's (the updates per batch, a lag, lower the limit; the KL adds stiffness; Adam's
normalisation depends on B G). The lowest lr
that fell above every lr that held (:func:`fall_limit`) bounds the limit: lr_max <= lr_fall.
The advice then stays under the margin target of that bound, margin lr_fall, and a run that
held below it is never lowered for it (:func:`cap_at_fall`). A run far past its limit, which
one halving of its own lr does not bring back, is sent below the sweep's lowest fall.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import numpy as np

from grpodyn.empirical.logs.infer import format_defaults
from grpodyn.empirical.logs.sweep_runs import optimizer_family
from grpodyn.empirical.logs.trend import series_trend

__all__ = ["THEORY_EXPONENT", "exponent_from_sweep", "bg_exponent_from_sweep", "fall_limit",
           "sweep_falls", "cap_at_fall", "sweep_cap", "fell", "run_optimizer", "LIMIT_SETTINGS"]

#: d ln tau / d ln lr of the mean-field map (derivations relaxation_time, adam_tau_lr_exponent).
THEORY_EXPONENT = {"value": -1.0, "status": "theory",
                   "reason": "the mean-field map's: twice the lr halves the relaxation time; "
                   "one run cannot measure it, runs at other lrs can (sweep=, --sweep LOG)"}


def exponent_from_sweep(fit: Any, optimizer: str | None = "adam") -> dict[str, Any]:
    """Return the tau-lr exponent a sweep fit measured, as advice uses it.

    Parameters
    ----------
    fit : grpodyn.empirical.logs.sweep.SweepFit
        A joint fit of runs that differ in lr (:func:`~grpodyn.empirical.logs.sweep.fit_sweep`).
    optimizer : str or None
        The advised run's optimizer family (:func:`run_optimizer`); None where it is unknown.

    Returns
    -------
    dict
        ``value``, ``stderr``, ``status`` (``measured``) and ``reason``; the theory's value with
        its status when the sweep does not determine it, holds no run of ``optimizer`` (lrs of
        different optimizers are on different scales, as :func:`sweep_cap` compares no fall
        across them), or fits an exponent of the wrong sign (tau not falling as the lr rises),
        which the reason gives.
    """
    if optimizer is None:
        return {**THEORY_EXPONENT, "reason": "the run's optimizer is unknown, so no exponent of "
                f"the sweep's ({', '.join(fit.layout.optimizers)}) is taken for it (give the "
                "run's optimizer): the map's -1"}
    entry = fit.tau_lr_exponent().get(optimizer, {})
    value = entry.get("value")
    if value is None or not np.isfinite(value):
        return {**THEORY_EXPONENT, "reason": f"the sweep does not determine it "
                f"({entry.get('status', f'it holds no {optimizer} runs')}): the map's -1"}
    if not value < 0:
        stderr = entry.get("stderr")
        spread = f" +- {stderr:.2g}" if stderr is not None and np.isfinite(stderr) else ""
        return {**THEORY_EXPONENT, "reason": f"the sweep's {optimizer} runs fit p = "
                f"{value:.2g}{spread}, tau not falling as the lr rises, which no stable map "
                "does (grpodyn sweep says how far from the law): the map's -1"}
    return {"value": float(value), "stderr": entry.get("stderr"), "status": "measured",
            "reason": f"fitted on a sweep over lr {entry.get('learning_rates')}"}


def bg_exponent_from_sweep(fit: Any, optimizer: str | None = "adam") -> dict[str, Any] | None:
    """Return the B G exponent of the stiffness a sweep fit measured, or None if it did not.

    Parameters
    ----------
    fit : grpodyn.empirical.logs.sweep.SweepFit
        A joint fit of runs at several B G (``SweepFit.bg_test``).
    optimizer : str or None
        The advised run's optimizer family (:func:`run_optimizer`); None where it is unknown.

    Returns
    -------
    dict or None
        ``value``, ``stderr``, ``status`` (``measured``) and ``reason``.
    """
    if optimizer is None:
        return None
    entry = fit.bg_test().get(optimizer, {}).get("bg_exponent")
    if entry is None:
        return None
    return {"value": entry["value"], "stderr": entry["stderr"], "status": "measured",
            "reason": "fitted on a sweep over B G (k ~ (B G)^e at a fixed lr)"}


#: The settings besides the lr and the optimizer on which the limit depends (section 5).
LIMIT_SETTINGS = ("group_size", "batch", "num_iterations", "kl")


def fell(steps: np.ndarray, reward: np.ndarray, floor: float | None,
         momentum: float | None = None) -> bool:
    """Tell whether a reward series fell beyond its noise, as the advice reads a run.

    The test is :func:`~.trend.series_trend` (the thirds' test, agreeing with the diagnosis's
    state; an overshoot that settled held, unless ``momentum`` is known to be 0). Every run of
    a sweep, the advised one included, is read by this one test, so that the bound does not
    depend on which run is advised.
    """
    return series_trend(steps, reward, floor=floor, momentum=momentum).kind == "fell"


def fall_limit(runs: Iterable[Any], *, optimizer: str, settings: dict[str, Any] | None = None,
               own: tuple[float, np.ndarray, np.ndarray] | None = None,
               floor: float | None = None, momentum: float | None = None) -> dict[str, Any]:
    """Return the lowest lr at which a run of the sweep fell, above every lr at which one held.

    Parameters
    ----------
    runs : iterable of SweepRun
        The sweep's runs (a fit's ``runs``, and those too short for it: a fall needs only
        three points; a run of fewer finite rewards is not read).
    optimizer : str
        The advised run's optimizer: only runs with it are compared (lrs of different
        optimizers are on different scales).
    settings : dict, optional
        The advised run's known values of :data:`LIMIT_SETTINGS` (G, B, updates per batch, KL
        coefficient): a run of the sweep with another value of one of them is left out, where
        both know it (Adam's stiffness per unit lr depends on B G, the lag and the KL move the
        limit).
    own : (float, numpy.ndarray, numpy.ndarray), optional
        The advised run's lr, steps and reward: read with the others, and a run of the sweep
        with the same reward series (the advised run given again) is read once.
    floor : float, optional
        The lowest reward the range allows, for the runs that declare no range (the advised
        run's inferred range: one task, one reward).
    momentum : float, optional
        The advised run's beta, where known (:func:`fell`); each run of the sweep is read at
        its own.

    Returns
    -------
    dict
        ``lr`` (the bound lr_fall [lr units of the logs], None where no fall bounds the limit),
        ``run`` (the run that fell there), ``highest_held`` (the highest lr that held, None if
        none), ``compared`` (how many runs were read), ``fell`` (how many of them fell),
        ``own_fell`` and ``reason``.
    """
    readings, elsewhere, own_fell = [], [], None
    if own is not None:
        own_fell = fell(own[1], own[2], floor, momentum)
        readings.append((float(own[0]), own_fell, "the advised run"))
    for run in runs:
        h = run.hparams
        if np.isfinite(run.reward).sum() < 3:
            continue  # too short to tell a fall
        if own is not None and run.reward.size == own[2].size \
                and np.allclose(run.reward, own[2], equal_nan=True):
            continue  # the advised run, given again among the sweep's
        low = floor if run.declared_range is None else run.declared_range[0]
        down = fell(run.steps, run.reward, low, h.get("momentum"))
        other = [f"{key} {h[key]:g}" for key, mine in (settings or {}).items()
                 if mine is not None and h.get(key) is not None and h[key] != mine]
        if h.get("optimizer") != optimizer or other:
            if down:
                setting = ", ".join(other) or str(h.get("optimizer"))
                elsewhere.append(f"{run.name} at lr {h['lr']:.3g} ({setting})")
            continue
        readings.append((float(h["lr"]), down, run.name))
    held = [lr for lr, down, _ in readings if not down]
    highest_held = max(held, default=None)
    falls = sorted((lr, name) for lr, down, name in readings
                   if down and (highest_held is None or lr > highest_held))
    out = {"lr": None, "run": None, "highest_held": highest_held, "compared": len(readings),
           "fell": sum(down for _, down, _ in readings), "own_fell": own_fell}
    if falls:
        out.update(lr=falls[0][0], run=falls[0][1],
                   reason=f"{falls[0][1]} fell at lr {falls[0][0]:.3g}"
                   + ("" if highest_held is None else
                      f", above the highest lr that held ({highest_held:.3g})")
                   + ": its stiffness reached the stability limit there, so lr_max <= "
                   f"{falls[0][0]:.3g} (docs/theory.md section 5)")
    elif out["fell"]:
        out["reason"] = (f"the falls at these settings lie at or below an lr that held "
                         f"({highest_held:.3g}): the stiffness grows with the lr, so they were "
                         "not the lr's and bound no limit")
    else:
        out["reason"] = (f"none of the {len(readings)} runs at these settings fell: no limit "
                         "from above")
    if elsewhere:
        out["reason"] += (f"; not compared, runs that fell at another setting, which moves the "
                          f"limit: {'; '.join(elsewhere)}")
    return out


def sweep_falls(runs: Iterable[Any], *, floor: float | None = None) -> list[dict[str, Any]]:
    """Return the fall bound of each optimizer and setting of a sweep where a run fell.

    The runs are grouped by optimizer and by their values of the :data:`LIMIT_SETTINGS` that
    some run of that optimizer knows; a run that leaves one unknown forms no group of its own,
    and is read within every group (as :func:`fall_limit` compares it). Each group is read by
    :func:`fall_limit` (the test ``grpodyn advise --sweep`` makes), so that ``grpodyn sweep``,
    ``grpodyn transfer`` and ``grpodyn advise`` read one fall alike.

    Parameters
    ----------
    runs : iterable of SweepRun
        The sweep's runs, those too short for its joint fit included (a fall needs three
        points).
    floor : float, optional
        The lowest reward of the sweep's range (:func:`~.sweep_model.sweep_reward_range`), for
        the runs that declare none, as :func:`fall_limit` takes it.

    Returns
    -------
    list of dict
        One entry per group holding a run that fell: ``optimizer``, ``settings`` (the group's
        known :data:`LIMIT_SETTINGS`) and :func:`fall_limit`'s keys but ``own_fell`` (``lr`` is
        None where the falls lie at or below an lr that held, which bounds nothing).
    """
    runs = list(runs)
    known: dict[Any, set[str]] = {}  # the settings some run of each optimizer knows
    for run in runs:
        known.setdefault(run.hparams.get("optimizer"), set()).update(
            key for key in LIMIT_SETTINGS if run.hparams.get(key) is not None)
    groups: dict[tuple, dict[str, Any]] = {}
    for run in runs:  # a run that leaves a setting unknown is read within every group
        optimizer = run.hparams.get("optimizer")
        settings = {key: run.hparams.get(key) for key in sorted(known[optimizer])}
        if None not in settings.values():
            groups.setdefault((optimizer, tuple(settings.items())), settings)
    out = []
    for (optimizer, _), settings in groups.items():
        entry = fall_limit(runs, optimizer=optimizer, settings=settings, floor=floor)
        if entry["fell"]:
            entry.pop("own_fell")  # a sweep advises no run of its own
            out.append({"optimizer": optimizer, "settings": settings, **entry})
    return out


def cap_at_fall(direction: str, ratio: float, interval: list[float | None], *, lr: float,
                limit: float, own_fell: bool, margin: float
                ) -> tuple[str, float, list[float | None], str | None]:
    """Keep the advice under the margin target of the sweep's lowest fall.

    Parameters
    ----------
    direction, ratio, interval
        The advice from the run alone: raise, keep or lower; the multiple of the run's lr;
        [lo, hi] multiples (None: unbounded).
    lr : float
        The run's lr [lr units of the logs].
    limit : float
        The sweep's bound lr_fall (:func:`fall_limit`) [same units].
    own_fell : bool
        Whether the advised run fell.
    margin : float
        Fraction of the limit the advice aims at (the margin target).

    Returns
    -------
    direction, ratio, interval, why
        The advice capped at ``max(margin lr_fall, lr)`` for a run that held below lr_fall
        (never lowered for the sweep), at ``margin lr_fall`` otherwise; the interval's upper end
        at lr_fall, its lower end dropped where it lies past that cap (a goal out of reach);
        ``why`` says what moved, None where nothing did.
    """
    top = limit / lr
    ceiling = max(margin * top, 1.0) if not own_fell and top > 1 else margin * top
    lo, hi = interval
    capped = [lo, top if hi is None else min(hi, top)]
    words = []
    if lo is not None and lo > ceiling:
        capped[0] = None
        words.append(f"the goal asks x{lo:.3g} or more, past the x{ceiling:.3g} the sweep's fall "
                     f"(x{top:.3g}) allows: out of reach below it")
    if ratio > ceiling:
        words.append(f"x{ratio:.3g} from the run alone would reach x{ratio / top:.3g} of the "
                     f"sweep's fall; capped at x{ceiling:.3g}"
                     + (" (the run's own lr, which held)" if ceiling == 1.0 and margin * top < 1
                        else f" ({margin:g} of the fall, the margin target)"))
        ratio = ceiling
        direction = "raise" if ratio > 1 else "keep" if ratio == 1 else "lower"
    elif capped == list(interval):
        return direction, ratio, interval, None
    return direction, ratio, capped, "; ".join(words) or (
        f"the interval ends at the sweep's fall (x{top:.3g} of the run's lr)")


def run_optimizer(optimizer: str | None, fmt: str) -> str | None:
    """Return a run's optimizer as a sweep names it (:func:`~.sweep_runs.optimizer_family`).

    From the run's metadata, else the trainer its log format names; None where neither says.
    """
    if optimizer is None:
        default = format_defaults(fmt).optimizer
        optimizer = None if default is None else default.value
    return None if optimizer is None else optimizer_family(optimizer)


def sweep_cap(fit: Any, advice: tuple[str, float, list[float | None]], *, run: Any,
              lr: float | None, optimizer: str | None, settings: dict[str, Any],
              floor: float | None, margin: float, short_runs: Iterable[Any] = (),
              momentum: float | None = None
              ) -> tuple[tuple[str, float, list[float | None]], dict[str, Any]]:
    """Return the advice kept under the sweep's lowest fall, and what the sweep said.

    Parameters
    ----------
    fit : grpodyn.empirical.logs.sweep.SweepFit
        The sweep (:func:`fall_limit` reads its runs).
    advice : (direction, ratio, interval)
        The advice from the run alone.
    run : grpodyn.empirical.logs.loaders.Run
        The advised run.
    lr : float or None
        The run's lr; None (unknown) leaves the advice as it is, with a warning where the
        sweep bounds the limit.
    optimizer : str or None
        The run's optimizer family (:func:`run_optimizer`); unknown, or none of the sweep's,
        no fall is compared.
    settings, floor, momentum
        As for :func:`fall_limit`.
    margin : float
        As for :func:`cap_at_fall`.
    short_runs : iterable of SweepRun
        Runs of the sweep too short for its joint fit, read for their falls.

    Returns
    -------
    advice, entry
        The advice, capped where the sweep asks; the :func:`fall_limit` entry with ``capped``
        (what moved, or None), ``moved`` (whether the ratio did), ``text`` (the reasoning's
        line) and ``warnings``.
    """
    if optimizer is None or optimizer not in fit.layout.optimizers:
        entry = {"lr": None, "run": None, "highest_held": None, "compared": 0, "fell": 0,
                 "own_fell": None,
                 "reason": f"the run's optimizer ({optimizer or 'unknown'}) is not the sweep's "
                 f"({', '.join(fit.layout.optimizers)}): lrs of different optimizers are on "
                 "different scales, so no fall is compared; give the run's optimizer"}
    else:
        entry = fall_limit([*fit.runs, *short_runs], optimizer=optimizer, settings=settings,
                           own=None if lr is None else (lr, run.steps, run.reward), floor=floor,
                           momentum=momentum)
    entry.update(capped=None, moved=False, warnings=[])
    if entry["lr"] is not None and lr is None:
        entry["warnings"].append(f"the sweep bounds the limit ({entry['reason']}), but the run's "
                                 "lr is unknown: give --lr (in Python lr=) to keep the advice "
                                 "below it")
    elif entry["lr"] is not None:
        *capped, entry["capped"] = cap_at_fall(*advice, lr=lr, limit=entry["lr"],
                                               own_fell=entry["own_fell"], margin=margin)
        entry["moved"] = capped[1] != advice[1]
        advice = tuple(capped)
    entry["text"] = f"the sweep: {entry['reason']}" + (
        f"; {entry['capped']}" if entry["capped"] else "")
    return tuple(advice), entry
