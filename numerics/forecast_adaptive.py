"""The trend-aware forecaster: members weighted and bands calibrated on the training part only.

The members (:mod:`numerics.forecast_trend`) give point forecasts; everything else is measured
on the training part: by rolling-origin forecasts inside it (origins at 30%, 40%, ..., 80% of
it, each forecasting the rest of it) and by two tests on its last half.

- regime: the run is ``quiet`` at the cut when the slope of the last half of the training part
  has |t| <= 2 (its standard error inflated by the residuals' long-run variance factor
  (1 + rho) / (1 - rho)); moving runs are ``saturating`` when the data show the deceleration
  (the overdamped relaxation of docs/theory.md section 3 fits with its tau inside the span,
  and its residuals over the last half have no slope with t > 2 in the run's own direction)
  and ``climbing`` otherwise;
- weights: each member's mean absolute validation error e_k over the far half of each
  origin's lags (the forecast's own horizon is long; origins weighted alike), and
  w_k proportional to e_k^-2 (the inverse-error combination of Bates & Granger 1969). A
  saturating run leaves out the undamped trends (``linear``, ``theta``: the data contradict
  them) and gives half the weight to the relaxation (the inner origins often come before the
  curvature shows, where the relaxation is scored by its stand-in). A climbing run leaves the
  relaxation out (the run goes on beyond it) and takes half of its weights equal over the
  remaining members: the validation cannot reach a horizon as long as the forecast's, and
  estimated weights then lose to equal ones (the forecast-combination puzzle, Smith & Wallis
  2009);
- band: locally weighted conformal (Lei et al. 2018): at each validated step the combined
  forecast's |error| divided by its difficulty d = sqrt(sigma^2 + spread^2 + move^2) (sigma
  the white noise from first differences, spread the weighted sd of the members about the
  combination, move its distance from the recent level); the conformal quantile
  (finite-sample level ceil((n + 1) level) / n) of these scores in the near and the far half
  of the validated lags, carried to every lag as q_near (h / h_near)^s with
  s = log(q_far / q_near) / log(h_far / h_near) clipped to [0, 1], times d at the cut. A
  moving run adds half the range of its members' forecasts in quadrature (the members'
  whole disagreement is possible where the run still moves); a quiet run's band is never
  below z sigma sqrt(1 + 5 / n), a new observation's noise and the uncertainty of the mean
  of the last 20% of the n training points;
- change point: the best split of the training part into two lines is compared with one
  quadratic or one relaxation (likelihood ratio, penalty 3 log n scaled by the residuals'
  long-run variance factor). A split found means a collapse or a
  second rise: the members are refitted on the part after it (when it holds at least
  ``_MIN_SEGMENT`` points), and the band's half-width gets the gap between that forecast and
  the whole training part's added in quadrature, so that the change widens the band instead
  of being averaged away.
"""

from __future__ import annotations

import math

import numpy as np
from scipy.special import ndtri

from grpodyn.ground import InputError, TooFewPoints, check_fraction, check_series

from .forecast_result import Forecast
from .forecast_trend import TREND_MEMBERS, member_forecasts, relaxation_fit
from .forecasters import CurveForecaster
from .noise import estimate_noise

__all__ = ["adaptive_forecast", "change_point", "regime", "trend_t", "slope_t", "moves_on",
           "conformal_quantile", "horizon_quantile", "AdaptiveForecaster"]

#: Inner origins of the rolling-origin validation, as fractions of the training part.
_ORIGINS = (0.3, 0.4, 0.5, 0.6, 0.7, 0.8)
#: The fewest points a member is fitted on (inner origins and post-break segments).
_MIN_FIT = 8
_MIN_SEGMENT = 12


def change_point(t: np.ndarray, y: np.ndarray) -> int | None:
    """Return the index where a second line starts, or None when one smooth curve suffices.

    Splits k with at least ``_MIN_FIT`` points on each side; the two lines' residual sum of
    squares S_2 against S_q, the lesser of a quadratic's and the overdamped relaxation's
    (:func:`numerics.forecast_trend.relaxation_fit`, when it sees curvature); a change when
    n log(S_q / S_2) exceeds 3 log(n) (1 + rho) / (1 - rho), rho the lag-1 autocorrelation of
    the two lines' residuals (clipped to [0, 0.8]): correlated noise makes spurious splits likelier.
    """
    n = t.size
    if n < 2 * _MIN_FIT + 2:
        return None
    x = (t - t[0]) / max(float(t[-1] - t[0]), 1e-300)
    quad = np.polyval(np.polyfit(x, y, 2), x)
    s_q = float(np.sum((y - quad) ** 2))
    relaxation = relaxation_fit(t, y)
    if relaxation is not None:  # a smooth relaxation is no change point either
        a, b, tau = relaxation
        s_q = min(s_q, float(np.sum((y - a + b * np.exp(-(t - t[0]) / tau)) ** 2)))
    s_2 = _line_rss(x, y) + _line_rss(x[::-1], y[::-1])[::-1]
    splits = np.arange(_MIN_FIT, n - _MIN_FIT + 1)
    best_k = int(splits[np.argmin(s_2[splits])])
    best = float(s_2[best_k])
    left = np.polyval(np.polyfit(x[:best_k], y[:best_k], 1), x[:best_k])
    right = np.polyval(np.polyfit(x[best_k:], y[best_k:], 1), x[best_k:])
    best_resid = np.concatenate([y[:best_k] - left, y[best_k:] - right])
    if not best > 0 or not s_q > best:
        return None
    r = best_resid - best_resid.mean()
    rho = float(np.clip((r[1:] @ r[:-1]) / max(float(r @ r), 1e-300), 0.0, 0.8))
    statistic = n * math.log(s_q / best)
    return best_k if statistic > 3 * math.log(n) * (1 + rho) / (1 - rho) else None


def _line_rss(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Residual sums of squares of the least-squares lines of the first k points, k = 0..n.

    From cumulative sums, O(n); the same of the reversed data, reversed, gives the suffixes'
    (entry k: the points from k on). Fewer than 3 points: 0.
    """
    def prefix(v: np.ndarray) -> np.ndarray:
        return np.concatenate([[0.0], np.cumsum(v)])

    xc, yc = x - x.mean(), y - y.mean()  # centred: the cumulative sums stay well conditioned
    n, sx, sy = prefix(np.ones_like(xc)), prefix(xc), prefix(yc)
    sxx, sxy, syy = prefix(xc * xc), prefix(xc * yc), prefix(yc * yc)
    with np.errstate(invalid="ignore", divide="ignore"):
        vxx = sxx - sx * sx / n
        vxy = sxy - sx * sy / n
        vyy = syy - sy * sy / n
        rss = vyy - np.where(vxx > 0, vxy * vxy / vxx, 0.0)
    return np.where(n > 2, np.maximum(rss, 0.0), 0.0)


def _validation(t: np.ndarray, y: np.ndarray, bounds: tuple[float, float] | None
                ) -> list[tuple[np.ndarray, np.ndarray, np.ndarray, float]]:
    """Rolling-origin forecasts inside (t, y): per origin, (lags, members' errors, its span)."""
    out = []
    for share in _ORIGINS:
        m = int(round(share * t.size))
        if m < _MIN_FIT or t.size - m < 3 or np.ptp(y[:m]) == 0:
            continue
        forecasts = member_forecasts(t[:m], y[:m], t[m:], bounds=bounds, stand_in=True)
        out.append((t[m:] - t[m - 1], y[m:], forecasts, float(t[m - 1] - t[0])))
    return out


def _weights(blocks: list[tuple[np.ndarray, np.ndarray, np.ndarray, float]], present: np.ndarray
             ) -> np.ndarray:
    """Inverse-squared mean-absolute-error weights of the members ``present`` at the cut."""
    k = present.size
    errors = np.full((len(blocks), k), np.nan)
    for i, (lags, target, forecasts, _) in enumerate(blocks):
        err = target - forecasts
        far = lags >= np.median(lags)  # the forecast is for long horizons: score them
        with np.errstate(invalid="ignore"):
            errors[i] = np.mean(np.abs(err[:, far]), axis=1)
    usable = present & np.all(np.isfinite(errors), axis=0) if blocks else present
    if not usable.any():
        usable = present
    if not blocks or not usable.any():
        w = usable.astype(float)
        return w / w.sum()
    mae = np.maximum(errors[:, usable].mean(axis=0), 1e-12)
    w = np.zeros(k)
    w[usable] = mae**-2.0
    return w / w.sum()


#: Members that carry a trend on without damping: left out where the data show deceleration.
_UNDAMPED = ("linear", "theta")


def trend_t(t: np.ndarray, y: np.ndarray) -> float:
    """Return the t statistic of the slope of the last half of (t, y) (:func:`slope_t`)."""
    half = t.size // 2
    return slope_t(t[half:], y[half:])


def slope_t(t: np.ndarray, y: np.ndarray) -> float:
    """Return the t statistic of the least-squares slope of (t, y).

    The slope's standard error from the line's residuals, inflated by (1 + rho) / (1 - rho)
    for their lag-1 autocorrelation rho (clipped to [0, 0.8]); +-inf for points on a line.
    """
    x, v = t - t.mean(), y
    slope, intercept = np.polyfit(x, v, 1)
    r = v - slope * x - intercept
    rho = float(np.clip((r[1:] @ r[:-1]) / max(float(r @ r), 1e-300), 0.0, 0.8))
    var = float(r @ r) / max(v.size - 2, 1) / max(float(x @ x), 1e-300) * (1 + rho) / (1 - rho)
    if var > 0:
        return float(slope) / math.sqrt(var)
    return 0.0 if slope == 0 else math.copysign(math.inf, slope)  # the last half on a line


def regime(t: np.ndarray, y: np.ndarray) -> str:
    """Return ``quiet``, ``saturating`` or ``climbing``: how the training part (t, y) ends.

    ``quiet``: the last half's slope has |t| <= 2 (:func:`trend_t`). Otherwise
    ``saturating`` when the data show the deceleration: a relaxation fits
    (:func:`numerics.forecast_trend.relaxation_fit` sees curvature) and the last half does not
    run on beyond it (its residuals' slope has t <= 2 in the direction of the run's own
    movement); else ``climbing``.
    """
    moving = trend_t(t, y)
    if abs(moving) <= 2:
        return "quiet"
    fit = relaxation_fit(t, y)
    if fit is None:
        return "climbing"
    a, b, tau = fit
    beyond = moves_on(t, y - (a - b * np.exp(-(t - t[0]) / tau)), moving)
    return "saturating" if beyond is None else "climbing"


def moves_on(t: np.ndarray, residuals: np.ndarray, direction: float) -> float | None:
    """Return the residuals' last-half slope t where it exceeds 2 in the run's ``direction``.

    The residuals about a fitted saturating curve that still slope that way say the data have
    not saturated where the curve has (:func:`regime`'s ``climbing``,
    :func:`numerics.forecast.plateau_summary`'s runs-on test). ``direction``: the sign of the
    run's own movement. None where they do not.
    """
    beyond = trend_t(t, residuals)
    return beyond if beyond * math.copysign(1.0, direction) > 2 else None


def conformal_quantile(values: np.ndarray, level: float) -> float:
    """Return the split-conformal quantile of ``values``: the ceil((n + 1) level) / n one."""
    n = values.size
    return float(np.quantile(values, min(1.0, math.ceil((n + 1) * level) / n)))


def horizon_quantile(horizons: np.ndarray, scores: np.ndarray, x: np.ndarray, level: float,
                     min_half: int = 5) -> np.ndarray:
    """Return the scores' conformal quantile at horizons ``x``, growing as a power of the horizon.

    The scores are split at their median horizon; the quantiles of the near and far halves,
    at their median horizons, set q(x) = q_near (max(x, x_near) / x_near)^k with k in [0, 1].
    With fewer than ``min_half`` scores in a half, one quantile serves every horizon.
    """
    far = horizons > np.median(horizons)
    if far.sum() < min_half or (~far).sum() < min_half:
        return np.full(np.shape(x), conformal_quantile(scores, level))
    q_near, q_far = (conformal_quantile(scores[part], level) for part in (~far, far))
    x_near, x_far = float(np.median(horizons[~far])), float(np.median(horizons[far]))
    if not x_far > x_near:
        return np.full(np.shape(x), conformal_quantile(scores, level))
    k = float(np.clip(math.log(max(q_far, 1e-12) / max(q_near, 1e-12))
                      / math.log(x_far / x_near), 0.0, 1.0))
    return q_near * (np.maximum(x, x_near) / x_near) ** k


def _difficulty(forecasts: np.ndarray, w: np.ndarray, white: float
                ) -> tuple[np.ndarray, np.ndarray]:
    """Return the combined forecast and its difficulty sqrt(white^2 + spread^2 + move^2) per step.

    spread: the weighted sd of the members about the combination; move: the combination's
    distance from the recent level (member ``recent``), how far the forecast leaves the data.
    """
    used = w > 0
    point = w[used] @ forecasts[used]
    spread2 = w[used] @ (forecasts[used] - point) ** 2
    move = point - forecasts[TREND_MEMBERS.index("recent")]
    return point, np.sqrt(white**2 + spread2 + move**2)


def _half_width(blocks: list[tuple[np.ndarray, np.ndarray, np.ndarray, float]], w: np.ndarray,
                lags: np.ndarray, scale: np.ndarray, level: float, white: float,
                fallback: float) -> np.ndarray:
    """Return the band's half-width at ``lags``: normalised conformal scores times ``scale``."""
    h_all, r_all = [], []
    for h, target, forecasts, _ in blocks:
        if np.all(np.isfinite(forecasts[w > 0])):
            point, d = _difficulty(forecasts, w, white)
            h_all.append(h)
            r_all.append(np.abs(target - point) / d)
    if not h_all:
        return np.full(lags.shape, fallback)
    q = horizon_quantile(np.concatenate(h_all), np.concatenate(r_all), lags, level)
    return np.maximum(q * scale, fallback)


def _forecast_from(t: np.ndarray, y: np.ndarray, future: np.ndarray, level: float,
                   bounds: tuple[float, float] | None
                   ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Point forecast, half-width and weights from the training part (t, y) (module doc)."""
    final = member_forecasts(t, y, future, bounds=bounds)
    present = np.all(np.isfinite(final), axis=1)
    blocks = _validation(t, y, bounds)
    state = regime(t, y)
    names = np.array(TREND_MEMBERS)
    if state == "saturating":
        present &= ~np.isin(names, _UNDAMPED)
        w = 0.5 * (names == "relaxation") + 0.5 * _weights(blocks, present)
    elif state == "climbing":
        present &= names != "relaxation"
        w = 0.5 * present / present.sum() + 0.5 * _weights(blocks, present)
    else:
        w = _weights(blocks, present)
    white = estimate_noise(y).sigma
    point, scale = _difficulty(final, w, white)
    fallback = white * math.sqrt(1 + 5 / t.size) * float(ndtri(0.5 + level / 2))
    half = _half_width(blocks, w, future - t[-1], scale, level, white, fallback)
    if state != "quiet":  # the run still moves: the members' whole disagreement is possible
        rows = final[present]
        half = np.sqrt(half**2 + (0.5 * (rows.max(axis=0) - rows.min(axis=0))) ** 2)
    return point, half, w


def adaptive_forecast(t: np.ndarray, y: np.ndarray, *, n_train: int, future_steps: np.ndarray,
                      level: float = 0.9, bounds: tuple[float, float] | None = None
                      ) -> Forecast:
    """Forecast the steps after the first ``n_train`` points with the trend-aware forecaster.

    Parameters
    ----------
    t, y : array_like
        Steps and rewards (only the first ``n_train`` are read).
    n_train : int
        Training points (at least 8).
    future_steps : array_like
        Steps to forecast, after ``t[n_train - 1]``.
    level : float
        Central probability of the band.
    bounds : (lo, hi), optional
        The reward range: forecasts and band are kept inside it.

    Returns
    -------
    Forecast
        ``weights`` and ``point_weights`` are the
        members' inverse-error weights; ``mean``, ``median`` and ``point`` are the combined
        forecast; ``weighting`` is ``"rolling_origin"``.
    """
    t = check_series("steps", t)
    y = check_series("reward", y)
    future = check_series("forecast steps", future_steps)
    level = check_fraction("level", level)
    if isinstance(n_train, bool) or not int(n_train) <= min(t.size, y.size):
        raise InputError(f"n_train: {n_train} is not a number of points the series holds "
                         f"({min(t.size, y.size)})")
    if int(n_train) < 8:
        raise TooFewPoints(f"a forecast needs at least 8 training points, got {n_train}")
    tt, yt = t[:n_train], y[:n_train]
    if np.any(np.diff(tt) <= 0):
        raise InputError("steps: the training steps must be strictly increasing")
    if np.ptp(yt) == 0:
        raise InputError("the reward is constant over the training part: nothing to fit")
    point, half, w = _forecast_from(tt, yt, future, level, bounds)
    notes: tuple[str, ...] = ()
    split = change_point(tt, yt)
    if split is not None and n_train - split >= _MIN_SEGMENT and np.ptp(yt[split:]) > 0:
        whole = point
        point, half, w = _forecast_from(tt[split:], yt[split:], future, level, bounds)
        half = np.sqrt(half**2 + (point - whole) ** 2)
        notes = (f"change point at step {tt[split]:g}: members refitted after it, the band "
                 "widened by the gap to the whole training part's forecast",)
    lower, upper = point - half, point + half
    if bounds is not None:
        point, lower, upper = (np.clip(a, *bounds) for a in (point, lower, upper))
    weights = {name: float(v) for name, v in zip(TREND_MEMBERS, w, strict=True)}
    return Forecast(weights, "rolling_origin", int(n_train), future, point, lower, upper, level,
                    bounds, notes, point, point, dict(weights))


class AdaptiveForecaster(CurveForecaster):
    """The trend-aware forecaster: members weighted by their rolling-origin errors."""

    name = "adaptive"
    function = staticmethod(adaptive_forecast)
