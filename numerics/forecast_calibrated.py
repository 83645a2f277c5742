"""The learned prior's point forecast with a band calibrated on the run's own training part.

The point forecast is the learned prior's median (:mod:`numerics.learned_prior`, unchanged):
it minimises the absolute error under the theory's prior. The network's own quantiles are
calibrated on that prior, not on the run: where a run moves more than the prior expects, its
band is too narrow, and where it is quiet the band can be too wide. The band here is
split-conformal on the learned prior's own errors at rolling origins inside the training part
(Vovk et al. 2005; locally weighted scores as in Lei et al. 2018):

- origins at 30%, 40%, ..., 80% of the training part; at each, the learned prior is given the
  points before it and forecasts the rest of the training part;
- each validated point's score is |error| / d, with the difficulty
  d = sqrt(sigma^2 + s^2 + move^2): sigma the white noise of the points before the origin
  (std of first differences / sqrt 2), s the network's own predictive sd at that step (its
  central band at the level divided by 2 z), move the median's distance from the recent level
  (the mean of the last 20% before the origin) -- the scale of :mod:`numerics.forecast_adaptive`
  with the network's spread in place of the members';
- horizons in units of the span before the origin (the network's own horizon unit); the
  conformal quantile (finite-sample level ceil((n + 1) level) / n) of the scores in the near
  and the far half of the validated horizons, carried to every horizon x as
  q_near (x / x_near)^k, k = log(q_far / q_near) / log(x_far / x_near) clipped to [0, 1];
  the half-width at the cut is that quantile times d at the cut (the network's own band
  where the training part is too short for any origin);
- movement: where the training part still moves at the cut (:func:`numerics.forecast_adaptive.
  regime` is not ``quiet``: a slope in its last half, a change point included), half the range
  of the trend members' forecasts (:func:`numerics.forecast_trend.member_forecasts`: recent
  level, filtered level, line, Theta, damped trend, relaxation) is added to the half-width in
  quadrature: whether the run saturates as the prior expects or carries its trend on, the
  band holds both, instead of the prior's one guess.
"""

from __future__ import annotations

import numpy as np
from scipy.special import ndtri

from grpodyn.ground import InputError, check_fraction, check_series

from .forecast_adaptive import horizon_quantile, regime
from .forecast_result import Forecast
from .forecast_trend import member_forecasts
from .forecasters import CurveForecaster
from .learned_prior import HORIZON_CAP, LearnedPrior, check_n_train, load_learned_prior
from .noise import estimate_noise

__all__ = ["calibrated_prior_forecast", "CalibratedPriorForecaster"]

#: Inner origins of the rolling-origin validation, as fractions of the training part.
_ORIGINS = (0.3, 0.4, 0.5, 0.6, 0.7, 0.8)
#: The fewest points the network is given at an inner origin.
_MIN_FIT = 8
#: The fewest validated points per half (near / far) for a horizon-wise quantile.
_MIN_HALF = 5


def _difficulty(model: LearnedPrior, t: np.ndarray, y: np.ndarray, future: np.ndarray,
                level: float, bounds: tuple[float, float] | None
                ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Return the median, the network's half-width and the difficulty d at ``future``."""
    median, lower, upper = model.band(t, y, future, level=level, bounds=bounds)
    own = 0.5 * (upper - lower)
    z = float(ndtri(0.5 + level / 2))
    move = median - float(y[int(0.8 * y.size):].mean())
    return median, own, np.sqrt(estimate_noise(y).sigma ** 2 + (own / z) ** 2 + move**2)


def _scores(model: LearnedPrior, t: np.ndarray, y: np.ndarray, level: float,
            bounds: tuple[float, float] | None) -> tuple[np.ndarray, np.ndarray]:
    """Return the horizons (spans before the origin) and normalised scores of the origins."""
    horizons, scores = [], []
    for share in _ORIGINS:
        m = int(round(share * t.size))
        if m < _MIN_FIT or t.size - m < 3:
            continue
        try:
            median, _, d = _difficulty(model, t[:m], y[:m], t[m:], level, bounds)
        except InputError:  # a noiseless or constant stretch: no score from this origin
            continue
        span = float(t[m - 1] - t[0])
        horizons.append(np.minimum((t[m:] - t[m - 1]) / span, HORIZON_CAP))
        scores.append(np.abs(y[m:] - median) / np.maximum(d, 1e-300))
    if not scores:
        return np.empty(0), np.empty(0)
    return np.concatenate(horizons), np.concatenate(scores)


def calibrated_prior_forecast(t: np.ndarray, y: np.ndarray, *, n_train: int,
                              future_steps: np.ndarray, level: float = 0.9,
                              bounds: tuple[float, float] | None = None) -> Forecast:
    """Forecast the steps after the first ``n_train`` points: the prior's median, a run's band.

    Parameters
    ----------
    t, y : array_like
        Steps and rewards (only the first ``n_train`` are read).
    n_train : int
        Training points (at least 8).
    future_steps : array_like
        Steps to forecast, after ``t[n_train - 1]``.
    level : float
        Central probability of the band, at most 0.95 (the network's widest).
    bounds : (lo, hi), optional
        The reward range: forecast and band are kept inside it.

    Returns
    -------
    Forecast
        ``mean``, ``median`` and ``point``: the learned prior's median; the band split-conformal
        on the training part (module doc); ``weighting`` ``"conformal"``.
    """
    t = check_series("steps", t)
    y = check_series("reward", y)
    future = check_series("forecast steps", future_steps)
    level = check_fraction("level", level)
    check_n_train(n_train, min(t.size, y.size))
    tt, yt = t[:n_train], y[:n_train]
    model = load_learned_prior()
    median, own, d = _difficulty(model, tt, yt, future, level, bounds)
    horizon = np.minimum((future - tt[-1]) / float(tt[-1] - tt[0]), HORIZON_CAP)
    horizons, scores = _scores(model, tt, yt, level, bounds)
    half = own if scores.size == 0 else horizon_quantile(horizons, scores, horizon, level,
                                                         _MIN_HALF) * d
    notes: tuple[str, ...] = ()
    if regime(tt, yt) != "quiet":
        members = member_forecasts(tt, yt, future, bounds=bounds)
        members = members[np.all(np.isfinite(members), axis=1)]
        if members.size:
            half = np.sqrt(half**2 + (0.5 * np.ptp(members, axis=0)) ** 2)
            notes = ("the run still moves at the cut: the band holds half the range of the "
                     "trend members' forecasts",)
    if horizon.size and (future[-1] - tt[-1]) / float(tt[-1] - tt[0]) > HORIZON_CAP:
        notes += (f"the forecast reaches beyond {HORIZON_CAP:g} training spans past the cut; "
                  "the learned prior holds its forecast there",)
    lower, upper = median - half, median + half
    if bounds is not None:
        lower, upper = (np.clip(a, *bounds) for a in (lower, upper))
    weights = {"learned_prior": 1.0}
    return Forecast(weights, "conformal", int(n_train), future, median, lower, upper, level,
                    bounds, notes, median, median, dict(weights))


class CalibratedPriorForecaster(CurveForecaster):
    """The learned prior's median with a band calibrated on the run's rolling origins."""

    name = "calibrated_prior"
    function = staticmethod(calibrated_prior_forecast)
