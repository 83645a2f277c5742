"""One plateau for one training part, read from the two stacks that weigh its members.

The run analysis trusts a model by stacking a flat level, a flat line and the fitted curves
(``grpodyn fit``); the default forecaster stacks the same members and a damped trend of the
training part's recent half (``grpodyn forecast``). Each gives the plateau of
:func:`grpodyn.numerics.forecast.plateau_summary`; where neither shows saturation, each bounds
it on one side, the side the run moved to by the cut under its own weights. The plateau is one
quantity of one training part, so both commands report :func:`one_plateau`: the curve models'
reading; where it is not determined and gives no direction, the forecaster's one-sided bound
(its damped trend may read a direction where a flat level carries the curve models' weight);
where the two stacks read the run's direction apart (one bounds the plateau from below, the
other from above), the data do not tell whether the run still rises or falls, and the plateau
is not determined, bounded on neither side, with both readings in its reason.

:func:`curve_stack` weighs a training part's members and reads that plateau. The curve models'
stack holds the forecaster's curves; a model the caller asks for by name (``grpodyn fit --model
sigmoid``) takes part in it as well, even one the forecaster leaves out (the sigmoid, the
inertial form without a momentum), so that the plateau of a chosen model is weighed against the
flat level and the flat line rather than the baselines alone.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from grpodyn.ground import InputError
from grpodyn.numerics.forecast import (
    MEMBERS,
    SATURATING,
    EnsembleForecast,
    Member,
    fit_member,
    member_weights,
    plateau_summary,
)

__all__ = ["bound_side", "one_plateau", "forecaster_plateau", "curve_stack"]

_KEYS = ("value", "lower", "upper", "status", "reason", "bound")


def bound_side(plateau: dict[str, Any]) -> str | None:
    """Return the side a not-determined plateau is bounded on: ``lower``, ``upper`` or None.

    The ``bound`` of :func:`grpodyn.numerics.forecast.plateau_summary` (``lower`` and ``upper``
    alone do not say which, since a known reward range fills the other side with its edge).

    Parameters
    ----------
    plateau : dict
        A plateau entry (``status`` and ``bound``).

    Returns
    -------
    str or None
        ``"lower"``, ``"upper"``, or None where the entry is no one-sided bound.
    """
    if plateau.get("status") != "not_determined":
        return None
    return plateau.get("bound")


def one_plateau(curves: dict[str, Any], forecaster: dict[str, Any] | None, *,
                bounds: tuple[float, float] | None) -> dict[str, Any]:
    """Return the plateau of one training part from the two stacks' readings of it.

    Parameters
    ----------
    curves : dict
        The plateau under the curve models' stack (a flat level, a flat line, the curves).
    forecaster : dict or None
        The plateau under the default forecaster's stack (the same and a damped trend); None
        where it was not read (the curve models' plateau is not ``not_determined``).
    bounds : (lo, hi) or None
        The reward range (a plateau bounded on neither side still lies inside it).

    Returns
    -------
    dict
        ``curves``, unless it is not determined and gives no direction where ``forecaster``
        bounds the plateau on one side (then that bound, its reason saying whose it is), or
        the two read the run's direction apart: then a not-determined plateau with no
        one-sided bound, whose reason gives both readings, and ``stacks`` with the two entries.
    """
    if curves.get("status") != "not_determined" or forecaster is None:
        return curves
    side, other = bound_side(curves), bound_side(forecaster)
    if side is None and other is not None:
        return {**forecaster, "reason": f"{forecaster['reason']} (the forecaster's stack, "
                "which also weighs a damped trend of the training part's recent half; the "
                "curve models' stack reads no direction)"}
    if side is None or other is None or side == other:
        return curves
    rising, falling = (curves, forecaster) if side == "lower" else (forecaster, curves)
    names = {id(curves): "the curve models' stack (a flat level, a flat line and the fitted "
                         "curves)",
             id(forecaster): "the forecaster's stack, which also weighs a damped trend of the "
                             "training part's recent half,"}
    reason = (f"the two stacks of this training part read its direction apart: "
              f"{names[id(rising)]} reads the run rising (plateau >= {rising['lower']:.4g}), "
              f"{names[id(falling)]} falling (plateau <= {falling['upper']:.4g}): the data do "
              "not tell whether the run still rises or falls, so they bound the plateau on "
              "neither side")
    low, high = (None, None) if bounds is None else bounds
    return {"value": None, "lower": low, "upper": high, "status": "not_determined",
            "reason": reason, "bound": None,
            "stacks": {"curves": {k: curves.get(k) for k in _KEYS},
                       "forecaster": {k: forecaster.get(k) for k in _KEYS}}}


def forecaster_plateau(members: dict[str, Member], steps: np.ndarray, reward: np.ndarray, *,
                       level: float, bounds: tuple[float, float] | None,
                       momentum: float | None,
                       learning_rate: tuple[np.ndarray, np.ndarray] | None,
                       stack: bool = True) -> dict[str, Any] | None:
    """Return the plateau under the default forecaster's stack of a training part.

    The members the curve models' stack weighed are reused; the damped trend is fitted and
    the weights are those of :func:`grpodyn.numerics.forecast.member_weights` over the members
    in the forecaster's order, as ``grpodyn forecast`` weighs them on the same training part.

    Parameters
    ----------
    members : dict of str to Member
        The members the curve models' stack weighed, fitted on (``steps``, ``reward``).
    steps, reward : numpy.ndarray
        The training part.
    level, bounds, momentum, learning_rate, stack
        As for :func:`grpodyn.numerics.forecast.member_weights` and ``plateau_summary``.

    Returns
    -------
    dict or None
        The plateau entry, or None where the damped trend cannot be fitted (then the two
        stacks weigh the same members).
    """
    try:
        damped = fit_member("damped", steps, reward, bounds=bounds)
    except InputError:  # too few points in its recent half, or a constant one
        return None
    pool = {**members, "damped": damped}
    pool = {n: pool[n] for n in MEMBERS if n in pool}
    weights = member_weights(pool, steps, reward, stack=stack, bounds=bounds, momentum=momentum,
                             learning_rate=learning_rate).weights
    return plateau_summary(pool, dict(zip(pool, map(float, weights), strict=True)),
                           level=level, bounds=bounds)


def curve_stack(steps: np.ndarray, reward: np.ndarray, members: dict[str, Member], *,
                level: float, bounds: tuple[float, float] | None, momentum: float | None,
                learning_rate: tuple[np.ndarray, np.ndarray] | None, stack: bool,
                one: EnsembleForecast | bool, asked: tuple[str, ...] = (),
                ) -> tuple[dict[str, float], dict[str, Any], list[str]]:
    """Return the curve models' stacking weights over a training part, its plateau and notes.

    The stack weighs the flat level, the flat line and the fitted curves among the forecaster's
    members (:data:`grpodyn.numerics.forecast.MEMBERS`; the inertial form only with a known
    momentum), and every fitted model named in ``asked`` besides.

    Parameters
    ----------
    steps, reward : numpy.ndarray
        The training part [steps], [reward].
    members : dict of str to Member
        The members fitted on it (the level, the flat line and the curve models).
    level : float
        Central probability of the plateau's interval.
    bounds : (lo, hi) or None
        The reward range [reward].
    momentum : float or None
        Optimiser momentum (Adam's beta1), None where unknown.
    learning_rate : (steps, lr) or None
        The learning rate over the part, for ``exponential_lr``'s refits.
    stack : bool
        Stack rolling-origin refits; False: BIC weights.
    one : EnsembleForecast or bool
        The ensemble's forecast fitted on the same part, or True, where the plateau is to be
        the one both stacks of the part agree on (:func:`one_plateau`; the forecaster's stack
        is read from that forecast, else fitted here where the curve models do not determine
        it); False: the curve models' plateau alone.
    asked : tuple of str
        The models the caller named: each fitted one is weighed, a member of the forecaster or
        not.

    Returns
    -------
    tuple
        The weights by member (summing to 1; empty under 8 points), the plateau entry of
        :func:`grpodyn.numerics.forecast.plateau_summary` and the stack's notes.
    """
    if steps.size < 8:
        return {}, {"value": None, "lower": None, "upper": None, "status": "not_determined",
                    "reason": "too few points"}, []
    forecaster = {n: members[n] for n in MEMBERS if n in members
                  and not (n == "inertial" and momentum is None)}
    whole = {**forecaster, **{n: members[n] for n in asked if n in members}}
    trust = member_weights(whole, steps, reward, stack=stack, bounds=bounds,
                           momentum=momentum, learning_rate=learning_rate)
    weights = dict(zip(whole, map(float, trust.weights), strict=True))
    plateau = plateau_summary(whole, weights, level=level, bounds=bounds)
    if not any(n in SATURATING for n in whole):  # only the level and the flat line: no curve
        plateau["reason"] = plateau["reason"].replace(
            "the curve models favour a flat or linear trend", "the stack weighs no curve model "
            f"with a plateau ({', '.join(whole)} only; see each model's weight_reason)")
    if one is False or plateau["status"] != "not_determined":
        return weights, plateau, list(trust.notes)
    if isinstance(one, EnsembleForecast):
        other = plateau_summary(one.members, one.weights, level=one.level, bounds=one.bounds)
    else:
        other = forecaster_plateau(forecaster, steps, reward, level=level, bounds=bounds,
                                   momentum=momentum, learning_rate=learning_rate, stack=stack)
    return weights, one_plateau(plateau, other, bounds=bounds), list(trust.notes)
