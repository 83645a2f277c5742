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

from typing import Any

from grpodyn.empirical.logs.trend import run_trend

__all__ = ["THEORY_EXPONENT", "exponent_from_sweep", "bg_exponent_from_sweep", "fall_limit",
           "cap_at_fall", "sweep_cap", "LIMIT_SETTINGS"]

#: d ln tau / d ln lr of the mean-field map (derivations relaxation_time, adam_tau_lr_exponent).
THEORY_EXPONENT = {"value": -1.0, "status": "theory",
                   "reason": "the mean-field map's: twice the lr halves the relaxation time; "
                   "one run cannot measure it, runs at other lrs can (sweep=, --sweep LOG)"}


def exponent_from_sweep(fit: Any, optimizer: str = "adam") -> dict[str, Any]:
    """Return the tau-lr exponent a sweep fit measured, as advice uses it.

    Parameters
    ----------
    fit : grpodyn.empirical.logs.sweep.SweepFit
        A joint fit of runs that differ in lr (:func:`~grpodyn.empirical.logs.sweep.fit_sweep`).
    optimizer : str
        Which optimizer's exponent.

    Returns
    -------
    dict
        ``value``, ``stderr``, ``status`` (``measured``) and ``reason``; the theory's value with
        its status when the sweep does not determine it.
    """
    entry = fit.tau_lr_exponent().get(optimizer, {})
    value = entry.get("value")
    if value is None or not value < 0:
        return {**THEORY_EXPONENT, "reason": f"the sweep does not determine it "
                f"({entry.get('status', 'no such optimizer')}): the map's -1"}
    return {"value": float(value), "stderr": entry.get("stderr"), "status": "measured",
            "reason": f"fitted on a sweep over lr {entry.get('learning_rates')}"}


def bg_exponent_from_sweep(fit: Any, optimizer: str = "adam") -> dict[str, Any] | None:
    """Return the B G exponent of the stiffness a sweep fit measured, or None if it did not.

    Parameters
    ----------
    fit : grpodyn.empirical.logs.sweep.SweepFit
        A joint fit of runs at several B G (``SweepFit.bg_test``).
    optimizer : str
        Which optimizer's exponent.

    Returns
    -------
    dict or None
        ``value``, ``stderr``, ``status`` (``measured``) and ``reason``.
    """
    entry = fit.bg_test().get(optimizer, {}).get("bg_exponent")
    if entry is None:
        return None
    return {"value": entry["value"], "stderr": entry["stderr"], "status": "measured",
            "reason": "fitted on a sweep over B G (k ~ (B G)^e at a fixed lr)"}


#: The settings besides the lr and the optimizer on which the limit depends (section 5).
LIMIT_SETTINGS = ("group_size", "batch", "num_iterations", "kl")


def fall_limit(fit: Any, *, optimizer: str, settings: dict[str, Any] | None = None,
               own: tuple[float, bool] | None = None) -> dict[str, Any]:
    """Return the lowest lr at which a run of the sweep fell, above every lr at which one held.

    Parameters
    ----------
    fit : grpodyn.empirical.logs.sweep.SweepFit
        The sweep; every run of it is read, those left out of the joint fit included.
    optimizer : str
        The advised run's optimizer: only runs with it are compared (lrs of different
        optimizers are on different scales).
    settings : dict, optional
        The advised run's known values of :data:`LIMIT_SETTINGS` (G, B, updates per batch, KL
        coefficient): a run of the sweep with another value of one of them is left out, where
        both know it (Adam's stiffness per unit lr depends on B G, the lag and the KL move the
        limit).
    own : (float, bool), optional
        The advised run's lr and whether it fell, read with the runs of the sweep.

    Returns
    -------
    dict
        ``lr`` (the bound lr_fall [lr units of the logs], None where no fall bounds the limit),
        ``run`` (the run that fell there), ``highest_held`` (the highest lr that held, None if
        none), ``compared`` (how many runs were read) and ``reason``.
    """
    readings, elsewhere = [], []
    for run in fit.runs:
        h = run.hparams
        floor = None if run.declared_range is None else run.declared_range[0]
        fell = run_trend(run.steps, run.reward, floor=floor).kind == "fell"
        other = [f"{key} {h[key]:g}" for key, mine in (settings or {}).items()
                 if mine is not None and h.get(key) is not None and h[key] != mine]
        if h.get("optimizer") != optimizer or other:
            if fell:
                setting = ", ".join(other) or str(h.get("optimizer"))
                elsewhere.append(f"{run.name} at lr {h['lr']:.3g} ({setting})")
            continue
        readings.append((float(h["lr"]), fell, run.name))
    if own is not None:
        readings.append((float(own[0]), bool(own[1]), "the advised run"))
    held = [lr for lr, fell, _ in readings if not fell]
    highest_held = max(held, default=None)
    falls = sorted((lr, name) for lr, fell, name in readings
                   if fell and (highest_held is None or lr > highest_held))
    out = {"lr": None, "run": None, "highest_held": highest_held, "compared": len(readings)}
    if falls:
        out.update(lr=falls[0][0], run=falls[0][1],
                   reason=f"{falls[0][1]} fell at lr {falls[0][0]:.3g}"
                   + ("" if highest_held is None else
                      f", above the highest lr that held ({highest_held:.3g})")
                   + ": its stiffness reached the stability limit there, so lr_max <= "
                   f"{falls[0][0]:.3g} (docs/theory.md section 5)")
    elif any(fell for _, fell, _ in readings):
        out["reason"] = (f"the sweep's falls lie at or below an lr that held "
                         f"({highest_held:.3g}): the stiffness grows with the lr, so they were "
                         "not the lr's and bound no limit")
    else:
        out["reason"] = (f"none of the {len(readings)} runs at the run's settings fell: no limit "
                         "from above")
    if elsewhere:
        out["reason"] += (f"; not compared, runs that fell at another setting, which moves the "
                          f"limit: {'; '.join(elsewhere)}")
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
        at lr_fall; ``why`` says what moved, None where nothing did.
    """
    top = limit / lr
    ceiling = max(margin * top, 1.0) if not own_fell and top > 1 else margin * top
    lo, hi = interval
    capped = [lo, top if hi is None else min(hi, top)]
    words = []
    if lo is not None and lo >= top:
        capped[0] = None
        words.append(f"the goal asks x{lo:.3g} or more, at or past the sweep's fall (x{top:.3g}):"
                     " out of reach below it")
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


def sweep_cap(fit: Any, advice: tuple[str, float, list[float | None]], *, optimizer: str,
              settings: dict[str, Any], lr: float | None, own_fell: bool,
              margin: float) -> tuple[tuple[str, float, list[float | None]], dict[str, Any]]:
    """Return the advice kept under the sweep's lowest fall, and what the sweep said.

    Parameters
    ----------
    fit : grpodyn.empirical.logs.sweep.SweepFit
        The sweep (:func:`fall_limit` reads its runs).
    advice : (direction, ratio, interval)
        The advice from the run alone.
    optimizer, settings
        The advised run's optimizer and settings (:func:`fall_limit`).
    lr : float or None
        The run's lr; None (unknown) leaves the advice as it is, with a warning where the
        sweep bounds the limit.
    own_fell, margin
        As for :func:`cap_at_fall`.

    Returns
    -------
    advice, entry
        The advice, capped where the sweep asks; the :func:`fall_limit` entry with ``capped``
        (what moved, or None), ``text`` (the reasoning's line) and ``warnings``.
    """
    own = None if lr is None else (lr, own_fell)
    entry = {**fall_limit(fit, optimizer=optimizer, settings=settings, own=own),
             "capped": None, "warnings": []}
    if entry["lr"] is not None and lr is None:
        entry["warnings"].append(f"the sweep bounds the limit ({entry['reason']}), but the run's "
                                 "lr is unknown: give --lr (in Python lr=) to keep the advice "
                                 "below it")
    elif entry["lr"] is not None:
        *advice, entry["capped"] = cap_at_fall(*advice, lr=lr, limit=entry["lr"],
                                               own_fell=own_fell, margin=margin)
    entry["text"] = f"the sweep: {entry['reason']}" + (
        f"; {entry['capped']}" if entry["capped"] else "")
    return tuple(advice), entry
