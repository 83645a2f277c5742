"""The trend-aware forecaster's members: point forecasts of the rest of a run.

Each member maps a training part (t, y) to a point forecast at later steps. Saturation comes
from the theory's overdamped map (docs/theory.md section 3: r(t) = r* - (r* - r0) exp(-t / tau))
only when the data show the deceleration; a run still climbing keeps a trend that can
continue:

- ``recent``: the mean of the last 20% of the training part (a run that has settled);
- ``level``: the filtered level of a random walk plus white noise (the k -> 0 limit of the
  overdamped map, :func:`numerics.forecast_noise.fit_random_walk`);
- ``linear``: the least-squares line of the training part (tau -> infinity);
- ``theta``: the filtered level of ``level`` plus half the slope of ``linear`` per step
  ahead (the Theta method's forecast, Assimakopoulos & Nikolopoulos 2000, as shown by Hyndman &
  Billah 2003: simple exponential smoothing with drift);
- ``damped``: the line of the recent half carried on as the early part of an overdamped
  relaxation whose tau the data bound only from below, tau = the training span T: a further
  rise of b T (1 - exp(-h / T)) after h steps (the damped trend of Gardner & McKenzie 1985 in
  continuous time);
- ``relaxation``: the overdamped exponential a - b exp(-(t - t0) / tau) fitted by variable
  projection over tau in [T / 20, T]; present only when the best tau lies inside that range
  (curvature seen), otherwise the data do not place tau and the member is left out.

Every forecast is kept inside the reward range when one is known.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from .forecast_noise import fit_random_walk

__all__ = ["TREND_MEMBERS", "STAND_IN", "member_forecasts", "relaxation_fit"]

#: The members, in a fixed order (the stacking weights' order).
TREND_MEMBERS = ("recent", "level", "linear", "theta", "damped", "relaxation")
#: A member absent at a cut and the member that stands in for it there: a relaxation whose tau
#: the data bound only from below is the damped trend with tau = the span.
STAND_IN = {"relaxation": "damped"}
#: Relaxation times tried by ``relaxation``, as fractions of the training span (log grid).
_TAU_GRID = np.geomspace(1 / 20, 1.0, 25)


def _recent(t: np.ndarray, y: np.ndarray, future: np.ndarray) -> np.ndarray:
    return np.full(future.size, float(y[int(0.8 * y.size):].mean()))


def _level(t: np.ndarray, y: np.ndarray, future: np.ndarray) -> np.ndarray:
    _, level, _ = fit_random_walk(t, y)
    return np.full(future.size, float(level))


def _linear(t: np.ndarray, y: np.ndarray, future: np.ndarray) -> np.ndarray:
    coef = np.polyfit(t - t[0], y, 1)
    return np.polyval(coef, future - t[0])


def _theta(t: np.ndarray, y: np.ndarray, future: np.ndarray) -> np.ndarray:
    _, level, _ = fit_random_walk(t, y)
    slope = float(np.polyfit(t - t[0], y, 1)[0])
    return float(level) + 0.5 * slope * (future - t[-1])


def _damped(t: np.ndarray, y: np.ndarray, future: np.ndarray) -> np.ndarray:
    half = t.size // 2
    tr, yr = t[half:], y[half:]
    slope, intercept = np.polyfit(tr - tr[-1], yr, 1)
    span = float(t[-1] - t[0]) or 1.0
    ahead = np.maximum(future - t[-1], 0.0)
    return intercept + slope * span * -np.expm1(-ahead / span)


def relaxation_fit(t: np.ndarray, y: np.ndarray) -> tuple[float, float, float] | None:
    """Fit a - b exp(-(t - t0) / tau) by variable projection; None when no curvature is seen.

    For each tau of a log grid over [T / 20, T] (T the training span) the pair (a, b) is the
    least-squares solution; the tau with the least residual sum of squares wins. A best tau on
    the grid's upper edge means the data show no deceleration within the span: tau is only
    bounded below, and the fit is refused (None).

    Returns
    -------
    (a, b, tau) or None
        Plateau a (reward units), gain b (reward units) and tau (steps).
    """
    x = t - t[0]
    span = float(x[-1]) or 1.0
    best, best_rss = None, np.inf
    for tau in _TAU_GRID * span:
        design = np.column_stack([np.ones_like(x), -np.exp(-x / tau)])
        coef, *_ = np.linalg.lstsq(design, y, rcond=None)
        rss = float(np.sum((y - design @ coef) ** 2))
        if rss < best_rss:
            best, best_rss = (float(coef[0]), float(coef[1]), float(tau)), rss
    if best is None or best[2] >= _TAU_GRID[-1] * span * (1 - 1e-9):
        return None
    return best


def _relaxation(t: np.ndarray, y: np.ndarray, future: np.ndarray) -> np.ndarray | None:
    fit = relaxation_fit(t, y)
    if fit is None:
        return None
    a, b, tau = fit
    return a - b * np.exp(-(future - t[0]) / tau)


_MEMBER_FUNCTIONS: dict[str, Callable[[np.ndarray, np.ndarray, np.ndarray],
                                      np.ndarray | None]] = {
    "recent": _recent, "level": _level, "linear": _linear, "theta": _theta, "damped": _damped,
    "relaxation": _relaxation}


def member_forecasts(t: np.ndarray, y: np.ndarray, future: np.ndarray, *,
                     bounds: tuple[float, float] | None = None, stand_in: bool = False
                     ) -> np.ndarray:
    """Return every member's point forecast at ``future`` (members x steps; NaN rows if absent).

    Parameters
    ----------
    t, y : numpy.ndarray
        Training steps (strictly increasing) and rewards, at least 8 points.
    future : numpy.ndarray
        Steps to forecast (after ``t[-1]``).
    bounds : (lo, hi), optional
        The reward range: forecasts are clipped into it.
    stand_in : bool
        Give an absent member the forecast of its stand-in (``STAND_IN``): for scoring a member
        at rolling origins where its data do not show what it needs yet.

    Returns
    -------
    numpy.ndarray
        Shape (len(TREND_MEMBERS), len(future)), reward units.
    """
    out = np.full((len(TREND_MEMBERS), future.size), np.nan)
    for k, name in enumerate(TREND_MEMBERS):
        forecast = _MEMBER_FUNCTIONS[name](t, y, future)
        if forecast is not None and np.all(np.isfinite(forecast)):
            out[k] = forecast if bounds is None else np.clip(forecast, *bounds)
    if stand_in:
        for name, other in STAND_IN.items():
            row = TREND_MEMBERS.index(name)
            if np.all(np.isnan(out[row])):
                out[row] = out[TREND_MEMBERS.index(other)]
    return out
