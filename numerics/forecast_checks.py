"""Check the inputs of :func:`numerics.forecast.forecast_curve`: each failure names the input.

A forecast (docs/theory.md section 6) reads a training part, the steps after its cut, the
members to combine and their optional inputs (the momentum of ``inertial``, the learning-rate
schedule of ``exponential_lr``, the reward range); a value that would otherwise be dropped or
ignored silently (a misspelt member, a momentum no member reads, a range that holds no reward)
is refused here.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, NamedTuple

import numpy as np

from grpodyn.ground import (
    InputError,
    TooFewPoints,
    check_int,
    check_momentum,
    check_positive,
    check_series,
)

from .curve_models import EXTRA_MODELS, MODEL_NAMES
from .forecast_members import ALL_MEMBERS

__all__ = ["KNOWN_MEMBERS", "ForecastInputs", "check_forecast_inputs"]

#: The names a forecast takes as members: ``ALL_MEMBERS`` and the other curve models of
#: :func:`numerics.fit.fit_curve` (``sigmoid``), which :func:`numerics.forecast_members.fit_member`
#: fits as well.
KNOWN_MEMBERS = (*ALL_MEMBERS, *(m for m in MODEL_NAMES + EXTRA_MODELS if m not in ALL_MEMBERS))


class ForecastInputs(NamedTuple):
    """The checked inputs of a forecast.

    Attributes
    ----------
    t, y : numpy.ndarray
        Training steps (strictly increasing) and rewards, the first ``n_train`` points.
    future : numpy.ndarray
        Steps to forecast, all after ``t[-1]``.
    members : tuple of str
        Member names, each one of :data:`KNOWN_MEMBERS`.
    momentum : float or None
        Optimiser momentum beta in [0, 0.999] (dimensionless).
    learning_rate : (numpy.ndarray, numpy.ndarray) or None
        The schedule's steps (non-decreasing) and learning rates (>= 0, optimiser units).
    bounds : (float, float) or None
        The reward range, lo < hi, reward units.
    """

    t: np.ndarray
    y: np.ndarray
    future: np.ndarray
    members: tuple[str, ...]
    momentum: float | None
    learning_rate: tuple[np.ndarray, np.ndarray] | None
    bounds: tuple[float, float] | None


def _training_part(t: Any, y: Any, n_train: Any) -> tuple[np.ndarray, np.ndarray]:
    """Return the first ``n_train`` steps and rewards, checked."""
    t = check_series("steps", t)
    y = check_series("reward", y)
    if t.size != y.size:
        raise InputError(f"steps ({t.size}) and reward ({y.size}) differ in length")
    n_train = check_int("n_train", n_train, minimum=0)
    if n_train > t.size:
        raise InputError(f"n_train: {n_train} is more points than the series holds ({t.size})")
    if n_train < 8:
        raise TooFewPoints(f"a forecast needs at least 8 training points, got {n_train}")
    if np.any(np.diff(t[:n_train]) <= 0):
        raise InputError("steps: the training steps must be strictly increasing (a repeated or "
                         "decreasing step has no place on the noise model's clock)")
    tt, yt = t[:n_train], y[:n_train]
    if np.ptp(yt) == 0:
        raise InputError("the reward is constant over the training part: nothing to fit")
    return tt, yt


def _members(members: Iterable[str]) -> tuple[str, ...]:
    """Return the member names after checking each is one of :data:`KNOWN_MEMBERS`."""
    if isinstance(members, str):
        raise InputError(f"members must be a sequence of names, got the string {members!r} "
                         f"(write ({members!r},) for one member)")
    names = tuple(members)
    unknown = [m for m in names if m not in KNOWN_MEMBERS]
    if unknown:
        raise InputError(f"members: unknown {', '.join(map(repr, unknown))}; the members are "
                         f"{', '.join(KNOWN_MEMBERS)}")
    return names


def _learning_rate(learning_rate: Any) -> tuple[np.ndarray, np.ndarray]:
    """Return the schedule (steps, lr) as two checked float arrays of one length."""
    pair = learning_rate if isinstance(learning_rate, (tuple, list)) else None
    if pair is None or len(pair) != 2:
        size = np.size(learning_rate)
        raise InputError(
            "learning_rate must be the pair (steps, lr) of the schedule over the training part "
            f"and the forecast horizon, got {type(learning_rate).__name__} of {size} value"
            f"{'' if size == 1 else 's'}: one rate per training point (as fit_curve takes) "
            "gives the exponential_lr member no clock past the cut")
    steps = check_series("learning_rate steps", pair[0])
    lr = check_positive("learning_rate", pair[1], allow_zero=True).ravel()
    if steps.size != lr.size or steps.size == 0:
        raise InputError(f"learning_rate: the schedule's steps ({steps.size}) and rates "
                         f"({lr.size}) must be non-empty and of one length")
    if np.any(np.diff(steps) < 0):
        raise InputError("learning_rate: the schedule's steps must be increasing")
    return steps, lr


def _bounds(bounds: Any, yt: np.ndarray) -> tuple[float, float]:
    """Return the reward range (lo, hi) after checking lo < hi and that it holds a reward."""
    pair = check_series("bounds", bounds)
    if pair.size != 2 or not pair[0] < pair[1]:
        raise InputError(f"bounds must be (lo, hi) with lo < hi, got {bounds!r}")
    lo, hi = float(pair[0]), float(pair[1])
    if not np.any((yt >= lo) & (yt <= hi)):
        raise InputError(f"bounds ({lo:g}, {hi:g}) hold none of the training rewards (they run "
                         f"from {yt.min():.4g} to {yt.max():.4g}): not this run's reward range")
    return lo, hi


def check_forecast_inputs(t: Any, y: Any, *, n_train: Any, future_steps: Any,
                          members: Iterable[str], momentum: Any, learning_rate: Any,
                          bounds: Any) -> ForecastInputs:
    """Check the inputs of a forecast; every failure names the argument and the problem.

    Parameters
    ----------
    t, y : array_like
        Steps and rewards of the run, of one length (reward units).
    n_train : int
        Training points (at least 8, at most the series' length).
    future_steps : array_like
        Steps to forecast (at least one), each after the last training step.
    members : sequence of str
        Member names, each one of :data:`KNOWN_MEMBERS` (docs/theory.md section 6).
    momentum : float or None
        Optimiser momentum beta, in [0, 0.999] (docs/theory.md section 1).
    learning_rate : (steps, lr) or None
        The learning-rate schedule over the training part and the horizon: steps
        non-decreasing, rates finite and >= 0, of one length.
    bounds : (lo, hi) or None
        The reward range: finite, lo < hi, holding at least one training reward.

    Returns
    -------
    ForecastInputs
        The checked training part, steps to forecast and options.

    Raises
    ------
    InputError
        On any invalid input (:class:`grpodyn.ground.TooFewPoints` for fewer than 8
        training points).
    """
    tt, yt = _training_part(t, y, n_train)
    future = check_series("future_steps", future_steps)
    if future.size == 0:
        raise InputError("future_steps holds no step to forecast")
    if future.min() <= tt[-1]:
        raise InputError(f"future_steps must all lie after the last training step {tt[-1]:g}, "
                         f"got {future.min():g}")
    return ForecastInputs(
        tt, yt, future, _members(members),
        None if momentum is None else float(check_momentum(momentum, scalar=True)),
        None if learning_rate is None else _learning_rate(learning_rate),
        None if bounds is None else _bounds(bounds, yt))
