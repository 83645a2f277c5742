"""The residual noise of a forecast member: AR(1) plus white noise (docs/theory.md section 6).

Around a member's mean curve the run deviates by x + w: x a correlated process (the discrete
overdamped map driven by sampling noise is an AR(1) in the deviation) with per-step
autocorrelation rho and stationary variance v, and w white observation noise of variance s^2.
(rho, v, s^2) are fitted by maximum likelihood with a Kalman filter; the filtered deviation at
the cut is carried into the future with decay rho^h. The ``level`` member's random-walk level
(the rho -> 1 limit) is fitted by :func:`fit_random_walk`.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from scipy.optimize import minimize

__all__ = ["ResidualNoise", "fit_residual_noise", "fit_random_walk"]


@dataclass(frozen=True)
class ResidualNoise:
    """Residual noise around a mean curve: AR(1) plus white noise (docs/theory.md section 6).

    Attributes
    ----------
    rho : float
        Autocorrelation of the process component per step (0 <= rho <= 1).
    process_var, white_var : float
        Stationary variance v of the process component and variance s^2 of the white part
        (reward units squared).
    state_mean, state_var : float
        Filtered process deviation at the last training point and its variance.
    drift_var : float
        Per-step variance of a random-walk level (the ``level`` member; 0 otherwise).
    """

    rho: float
    process_var: float
    white_var: float
    state_mean: float
    state_var: float
    drift_var: float = 0.0

    def predict(self, lags: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Return mean and variance of a new observation's deviation ``lags`` steps after the cut.

        ``drift_var`` is the per-step variance of a random-walk level (the rho -> 1 limit).

        Parameters
        ----------
        lags : numpy.ndarray
            Steps after the cut.

        Returns
        -------
        mean, var : numpy.ndarray
            Reward units and reward units squared.
        """
        lags = np.asarray(lags, dtype=float)
        decay = self.rho**lags
        mean = decay * self.state_mean
        var = (decay**2 * self.state_var + self.process_var * (1 - decay**2) + self.white_var
               + self.drift_var * lags)
        return mean, var


def _kalman(rho: float, share: float, dt: np.ndarray, r: np.ndarray, *,
            even_from: int | None = None) -> tuple[float, float, float, float]:
    """Scalar Kalman filter of the AR(1)+white model at unit total variance.

    The process has stationary variance ``share`` and the white noise ``1 - share``; the
    likelihood is scale-equivariant, so the scale is concentrated out by the caller. Returns
    (sum of log innovation variances, sum of squared standardised innovations, final filtered
    mean, final filtered variance), all at unit scale. Once the steps are evenly spaced and the
    predicted variance has converged (relative change under 1e-15), the gain is constant and
    the rest of the filter is a first-order linear recurrence, summed by :func:`_recurrence`
    instead of step by step. ``even_from`` (from :func:`_even_from`) may be given by a caller
    that filters the same steps many times.
    """
    s2 = 1.0 - share
    if even_from is None:
        even_from = _even_from(dt)
    log = math.log
    # the first step has no prediction: its state is the stationary prior
    if not r.size:
        return 0.0, 0.0, 0.0, share
    value = float(r[0])
    s = share + s2
    log_det, quad = log(s), value * value / s
    gain = share / s
    x, p = gain * value, (1 - gain) * share
    previous = -1.0
    # the loop rarely runs far before the gain converges: the per-step lists are built for a
    # head of the series, doubled while the loop needs more (the same floats as whole lists)
    # blocks [0, size), [size, 3 size), ...: step 0 is done above
    start, size = 1, max(128, 2 * even_from)
    stop = min(r.size, size)
    while start < r.size:
        phi = (rho ** dt[start - 1:stop - 1]).tolist()  # dt[i - 1] of the steps i
        q = (share * (1 - rho ** (2 * dt[start - 1:stop - 1]))).tolist()
        for i, f, qi, value in zip(range(start, stop), phi, q, r[start:stop].tolist(),
                                   strict=True):
            x, p = f * x, f * f * p + qi
            if i >= even_from and abs(p - previous) <= 1e-15 * p:
                return _steady_tail(f, p, s2, x, r[i:], log_det, quad)
            previous = p
            s = p + s2
            innovation = value - x
            log_det += log(s)
            quad += innovation * innovation / s
            gain = p / s
            x, p = x + gain * innovation, (1 - gain) * p
        start, size = stop, 2 * size
        stop = min(r.size, start + size)
    return log_det, quad, x, p


def _even_from(dt: np.ndarray) -> int:
    """First step i from which every later gap dt[i - 1] equals the last gap (1 if all do)."""
    changes = np.flatnonzero(dt != dt[-1]) if dt.size else np.array([], dtype=int)
    return int(changes[-1]) + 2 if changes.size else 1


def _steady_tail(f: float, p: float, s2: float, x: float, r: np.ndarray, log_det: float,
                 quad: float) -> tuple[float, float, float, float]:
    """Finish :func:`_kalman` at a constant gain from predicted state ``x`` and variance ``p``.

    The predictions obey x_{j+1} = f (1 - g) x_j + f g r_j with g = p / (p + s2).
    """
    s = p + s2
    gain = p / s
    drive = f * gain * r[:-1]
    if drive.size:
        drive[0] += f * (1 - gain) * x
    predicted = np.concatenate([[x], _recurrence(f * (1 - gain), drive)])
    innovations = r - predicted
    return (log_det + r.size * math.log(s), quad + float(innovations @ innovations) / s,
            float(predicted[-1] + gain * innovations[-1]), (1 - gain) * p)


def _recurrence(a: float, u: np.ndarray) -> np.ndarray:
    """Return y with y_0 = u_0 and y_k = a y_(k-1) + u_k, by a parallel prefix scan (|a| <= 1)."""
    y = u.astype(float, copy=True)
    shift, coef = 1, a
    while shift < y.size:
        y[shift:] += coef * y[:-shift]  # the product is a new array: no overlap
        shift, coef = 2 * shift, coef * coef
    return y


def fit_residual_noise(t: np.ndarray, residuals: np.ndarray) -> ResidualNoise:
    """Maximum-likelihood (rho, v, s^2) of the residuals of a fit, by a scalar Kalman filter.

    The total variance v + s^2 is concentrated out (its estimate is the mean squared
    standardised innovation), leaving a two-parameter search over rho and v / (v + s^2).

    Parameters
    ----------
    t : numpy.ndarray
        Steps of the residuals (any spacing; the decay over a gap dt is rho^dt).
    residuals : numpy.ndarray
        Data minus the fitted mean curve (reward units).
    """
    t, r = np.asarray(t, dtype=float), np.asarray(residuals, dtype=float)
    dt = np.diff(t)
    n = r.size
    step = float(np.median(dt)) if dt.size else 1.0
    scale = float(np.mean(r**2)) + 1e-300
    r = r / np.sqrt(scale)
    even_from = _even_from(dt)

    def unpack(z: Sequence[float] | np.ndarray) -> tuple[float, float]:
        rho_per_sample = 1.0 / (1.0 + math.exp(-z[0]))
        return rho_per_sample ** (1.0 / step), 1.0 / (1.0 + math.exp(-z[1]))

    def objective(z: np.ndarray) -> float:
        try:
            clipped = [min(max(float(v), -30.0), 30.0) for v in z]  # np.clip(z, -30, 30)
            log_det, quad, _, _ = _kalman(*unpack(clipped), dt, r, even_from=even_from)
            value = 0.5 * (log_det + n * math.log(quad / n))
        except (ValueError, ZeroDivisionError, OverflowError):
            return 1e300
        return value if math.isfinite(value) else 1e300

    # start from the moments: lag-1 and lag-2 autocorrelations of AR(1) + white noise
    centred = r - r.mean()
    c0 = float(centred @ centred) or 1.0
    c1 = float(centred[1:] @ centred[:-1]) / c0
    c2 = float(centred[2:] @ centred[:-2]) / c0 if n > 2 else 0.0
    rho0 = float(np.clip(c2 / c1 if c1 > 1e-3 else 0.5, 0.05, 0.98))
    share0 = float(np.clip(c1 / rho0, 0.05, 0.95))
    sol = minimize(objective, np.array([math.log(rho0 / (1 - rho0)),
                                        math.log(share0 / (1 - share0))]),
                   method="Nelder-Mead", options={"xatol": 1e-2, "fatol": 1e-3, "maxiter": 200})
    rho, share = unpack(np.clip(sol.x, -30, 30))
    log_det, quad, x, p = _kalman(rho, share, dt, r)
    total = scale * quad / n
    return ResidualNoise(float(rho), float(share * total), float((1 - share) * total),
                         float(x * np.sqrt(scale)), float(p * total))


def fit_random_walk(t: np.ndarray, y: np.ndarray) -> tuple[ResidualNoise, float, float]:
    """Fit the local level model y = level + white noise, the level a random walk.

    The k -> 0 limit of the overdamped map driven by sampling noise (docs/theory.md sections 3
    and 6). Maximum likelihood of the drift-to-white variance ratio (the scale concentrated
    out) by a scalar Kalman filter. Returns the noise (drift and white variances, filtered level
    variance), the filtered level at the last point, and the sum of squared innovations.

    The level starts diffuse: after the first point it is that point, uncertain by the white
    variance (the limit of a prior of unbounded variance), which keeps the fit free of the
    reward's unit: rewards scaled by c give the level and the noise's standard deviations
    scaled by c, the ratio unchanged.
    """
    from scipy.optimize import minimize_scalar

    t, y = np.asarray(t, dtype=float), np.asarray(y, dtype=float)
    dt = np.diff(t).tolist()
    values = y.tolist()
    n = y.size

    def run(log_ratio: float) -> tuple[float, float, float, float, float]:
        ratio = math.exp(log_ratio)  # drift per step / white, at unit white variance
        x, p = values[0], 1.0  # diffuse start, updated by the first point
        log_det = quad = squares = 0.0
        log = math.log
        for gap, value in zip(dt, values[1:], strict=True):
            p += ratio * gap
            s = p + 1.0
            innovation = value - x
            log_det += log(s)
            quad += innovation * innovation / s
            squares += innovation * innovation
            gain = p / s
            x, p = x + gain * innovation, (1 - gain) * p
        return log_det, quad, x, p, squares

    def objective(log_ratio: float) -> float:
        log_det, quad, *_ = run(log_ratio)
        return 0.5 * (log_det + (n - 1) * math.log(max(quad, 1e-300) / (n - 1)))

    best = minimize_scalar(objective, bounds=(-20.0, 5.0), method="bounded",
                           options={"xatol": 1e-2})
    log_det, quad, level, p, squares = run(float(best.x))
    white = quad / (n - 1)
    noise = ResidualNoise(1.0, 0.0, white, 0.0, p * white, math.exp(float(best.x)) * white)
    return noise, level, squares
