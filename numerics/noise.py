"""Noise of a reward series and the covariance of a fit's parameters.

Two questions about the residuals of a curve fit (docs/theory.md section 6):

- how large the observation noise is (:func:`estimate_noise`, from first differences), which
  bounds the R^2 any model can reach;
- how uncertain the fitted parameters are when the residuals are serially correlated: the
  sandwich covariance under the theory's residual process (:func:`model_covariance`: process
  noise of the inertial or overdamped law plus white observation noise, O(n log n) by FFT), and
  the Newey-West covariance (:func:`hac_covariance`) where the model has no process theory.
  With white residuals both reduce to the usual sigma^2 (J^T J)^-1.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

import numpy as np
import numpy.typing as npt

from grpodyn.ground import TooFewPoints, check_series

from .compiled import compiled
from .curve_models import CurveModel
from .gram import dot, gram, gram_inverse
from .trajectory import closed_form

__all__ = ["NoiseEstimate", "estimate_noise", "hac_covariance", "model_covariance"]


@dataclass(frozen=True)
class NoiseEstimate:
    """Observation noise of a reward series and the R^2 it allows."""

    sigma: float
    r2_ceiling: float
    method: str


def estimate_noise(y: npt.ArrayLike) -> NoiseEstimate:
    """Observation noise from first differences: sigma^2 = Var(diff y) / 2.

    For a smooth curve observed with white noise the differences are dominated by the noise, so
    this bounds the R^2 any model can reach: ``1 - sigma^2 / Var(y)`` (the white observation
    noise w of the residual model, docs/theory.md section 6). (A median-absolute-deviation
    version is biased on the few discrete values that per-step rewards take: on the shipped
    real logs it put the ceiling below the R^2 that models reach.)

    Parameters
    ----------
    y : array_like
        The logged rewards in step order [reward], at least 3 finite values.

    Returns
    -------
    NoiseEstimate
        ``sigma`` [reward], ``r2_ceiling`` = max(0, 1 - sigma^2 / Var(y)) (NaN for a constant
        series) and the ``method`` in words.

    Raises
    ------
    InputError
        When ``y`` holds a non-finite value; :class:`~grpodyn.ground.TooFewPoints` with fewer
        than 3 values.
    """
    y = check_series("reward", y)
    if y.size < 3:
        raise TooFewPoints(f"reward: the noise estimate needs at least 3 points, got {y.size}")
    sigma = float(np.std(np.diff(y)) / np.sqrt(2))
    variance = float(np.var(y))
    ceiling = float(max(0.0, 1 - sigma**2 / variance)) if variance > 0 else float("nan")
    return NoiseEstimate(sigma, ceiling, "first differences: Var(diff)/2")


def _bandwidth(residuals: np.ndarray) -> int:
    """Andrews (1991) automatic Bartlett bandwidth from an AR(1) fit of the residuals."""
    n = residuals.size
    centred = residuals - residuals.mean()
    denom = dot(centred[:-1], centred[:-1])
    rho = float(np.clip(dot(centred[1:], centred[:-1]) / denom, -0.99, 0.99)) \
        if denom > 0 else 0.0
    alpha = 4 * rho**2 / ((1 - rho) ** 2 * (1 + rho) ** 2)
    return int(min(np.ceil(1.1447 * (alpha * n) ** (1 / 3)), n - 1))


def hac_covariance(jac: np.ndarray, residuals: np.ndarray) -> np.ndarray:
    """Return the Newey-West covariance of least-squares estimates.

    Bartlett kernel with the Andrews (1991) automatic bandwidth: standard errors that hold when
    the residuals are serially correlated (the process noise of docs/theory.md section 6).

    Parameters
    ----------
    jac : numpy.ndarray
        Jacobian of the model at the estimate, shape (n, p).
    residuals : numpy.ndarray
        Residuals at the estimate, shape (n,).

    Returns
    -------
    numpy.ndarray
        Covariance of the p parameters, shape (p, p).
    """
    n, p = jac.shape
    bread = gram_inverse(gram(jac, jac))
    scores = jac * residuals[:, None]
    lags = _bandwidth(residuals)
    meat = gram(scores, scores)
    for lag in range(1, lags + 1):
        weight = 1.0 - lag / (lags + 1.0)
        cross = gram(scores[lag:], scores[:-lag])
        meat += weight * (cross + cross.T)
    correction = n / max(n - p, 1)
    return correction * bread @ meat @ bread


def _process_kernel(model: CurveModel, theta: np.ndarray, lags: np.ndarray
                    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray] | None:
    """Deviation process that the theory attaches to ``model``, for unit-intensity forcing.

    inertial: e'' + 2 zeta omega0 e' + omega0^2 e = xi; exponential: its overdamped limit
    e' = -e/tau + xi. With e(0) fixed, Cov(e_i, e_j) = f(i-j) P_ee(j) + g(i-j) P_ve(j) for
    i >= j, where f and g are the closed-form trajectories from (1, 0) and (0, 1) and
    P(t) = P_inf - Phi(t) P_inf Phi(t)^T. Returns (f, g, P_ee, P_ve) on ``lags``, or None.
    """
    p = dict(zip(model.params, theta, strict=True))
    if model.name == "exponential":
        rate = 1.0 / p["tau"]
        decay = np.exp(-rate * lags)
        return decay, np.zeros_like(decay), -np.expm1(-2 * rate * lags) / (2 * rate), \
            np.zeros_like(decay)
    if model.name != "inertial":
        return None
    if "stiffness" in p:
        beta = model.fixed["momentum"]
        zeta = float(compiled("damping_ratio")(beta, p["stiffness"]))
        omega0 = float(compiled("natural_frequency")(beta, p["stiffness"]))
    else:
        zeta, omega0 = p["zeta"], p["omega0"]
    f = closed_form(lags, 1.0, 0.0, zeta, omega0)
    g = closed_form(lags, 0.0, 1.0, zeta, omega0)
    gamma = zeta * omega0
    var_e, var_v = 1 / (4 * zeta * omega0**3), 1 / (4 * zeta * omega0)  # stationary, unit forcing
    p_ee = var_e - (f**2 * var_e + g**2 * var_v)
    p_ve = omega0**2 * g * f * var_e - (f - 2 * gamma * g) * g * var_v
    return f, g, p_ee, p_ve


@cache
def _fft_size(m: int) -> int:
    """Return the smallest 5-smooth length >= m (2^a 3^b 5^c: a fast FFT length)."""
    best = 1 << max(m - 1, 0).bit_length()
    power5 = 1
    while power5 < best:
        power35 = power5
        while power35 < best:
            size = power35
            while size < m:
                size *= 2
            best = min(best, size)
            power35 *= 3
        power5 *= 5
    return best


def _rows(x: np.ndarray) -> np.ndarray:
    """Return the columns of x (n,) or (n, p) as contiguous rows (p, n), for row FFTs."""
    return np.ascontiguousarray(np.atleast_2d(x.T))


def _lagged_dots(x_hat: np.ndarray, y_hat: np.ndarray) -> np.ndarray:
    """Return the spectrum of sum_j x[j + h] . y[j] (offset traces of x y^T) over lags h.

    From the spectra ``rfft(_rows(x), size)`` and ``rfft(_rows(y), size)`` (size >= n + lags:
    no wrap-around); the caller inverts several at once (one ``irfft``).
    """
    return (x_hat * np.conj(y_hat)).sum(axis=0)


def _process_times(kernel: tuple[np.ndarray, ...], jac: np.ndarray) -> np.ndarray:
    """R J for the process covariance R of the kernel, by FFT convolutions, O(n log n).

    One ``rfft`` of every row (f, g, the weighted and the reversed columns of J) and one
    ``irfft`` of every product: two FFT calls of stacked rows instead of one per row.
    """
    f, g, p_ee, p_ve = kernel
    n, p = jac.shape
    size = _fft_size(2 * n - 1)  # linear convolutions: no wrap-around of the n outputs
    columns = _rows(jac)  # (p, n)
    velocity = bool(g.any() or p_ve.any())  # the overdamped kernel's g and P_ve are exact zeros
    parts = [f[None, :], p_ee * columns, columns[:, ::-1]]
    if velocity:
        parts += [g[None, :], p_ve * columns]
    spectra = np.fft.rfft(np.concatenate(parts), size)
    f_hat, weighted_hat, reversed_hat = spectra[0], spectra[1:p + 1], spectra[p + 1:2 * p + 1]
    # lower part (j <= i) and strictly upper part (j > i: the same kernels without their lag-0
    # term, on reversed J)
    products = [f_hat * weighted_hat, (f_hat - f[0]) * reversed_hat]
    if velocity:
        g_hat, velocity_hat = spectra[2 * p + 1], spectra[2 * p + 2:]
        products[0] = products[0] + g_hat * velocity_hat
        products.append((g_hat - g[0]) * reversed_hat)
    back = np.fft.irfft(np.concatenate(products), size)[:, :n]
    out = back[:p] + p_ee * back[p:2 * p, ::-1]
    if velocity:
        out += p_ve * back[2 * p:, ::-1]
    return out.T


def model_covariance(model: CurveModel, theta: np.ndarray, t: np.ndarray, jac: np.ndarray,
                      residuals: np.ndarray) -> np.ndarray | None:
    """Sandwich covariance with residual covariance q R + sigma^2 I from the theory.

    R is the process covariance of :func:`_process_kernel`; q (process intensity) and sigma^2
    (white observation noise) match the residual autocovariances at lags 0..L by non-negative
    least squares. The residuals are M (q R + sigma^2 I) M with M = I - J B J^T (fitting absorbs
    part of a slow process), so the expected autocovariances use offset traces of M R M and M.
    Everything is O(n log n): R is never formed; four FFT calls of stacked rows.

    Parameters
    ----------
    model : CurveModel
        The fitted model (``exponential`` and ``inertial`` have a process theory).
    theta : numpy.ndarray
        Its parameters (r0, r*, *phi).
    t : numpy.ndarray
        Steps of the fitted points (equally spaced, or no covariance here).
    jac : numpy.ndarray
        Jacobian of the model at theta, shape (n, p).
    residuals : numpy.ndarray
        Residuals at theta, shape (n,).

    Returns
    -------
    numpy.ndarray or None
        Covariance of the p parameters, shape (p, p); None when the model has no stochastic
        theory or the steps are irregular.
    """
    from scipy.optimize import nnls

    steps = np.diff(t)
    if not np.allclose(steps, steps[0], rtol=1e-9):
        return None
    n, p = jac.shape
    with np.errstate(all="ignore"):
        kernel = _process_kernel(model, theta, np.arange(n) * float(steps[0]))
    if kernel is None or not all(np.all(np.isfinite(part)) for part in kernel):
        return None
    f, g, p_ee, p_ve = kernel
    lags = min(n // 4, 100)
    bread = gram_inverse(gram(jac, jac))
    rj = _process_times(kernel, jac)
    jrj = gram(jac, rj)
    tail_ee, tail_ve = np.cumsum(p_ee), np.cumsum(p_ve)
    h = np.arange(lags + 1)
    trace_r = f[h] * tail_ee[n - 1 - h] + g[h] * tail_ve[n - 1 - h]
    # spectra of J, R J and the residuals in one call; W = R J B^T (H R = J W^T), J C and J B
    # are linear in them; lags 0..L need n + L zero-padded points, not 2n, to stay free of
    # wrap-around
    size = _fft_size(n + lags + 1)
    spectra = np.fft.rfft(np.concatenate([_rows(jac), _rows(rj),
                                          _rows(residuals - residuals.mean())]), size)
    j_hat, centred_hat = spectra[:p], spectra[2 * p:]
    w_hat = bread @ spectra[p:2 * p]
    jc_hat = (bread @ jrj @ bread).T @ j_hat
    dots = np.fft.irfft(np.stack([
        _lagged_dots(j_hat, w_hat) + _lagged_dots(w_hat, j_hat) - _lagged_dots(jc_hat, j_hat),
        _lagged_dots(bread.T @ j_hat, j_hat), _lagged_dots(centred_hat, centred_hat)]),
        size)[:, :lags + 1]
    trace_mrm = trace_r - dots[0]
    trace_m = np.where(h == 0, n, 0.0) - dots[1]
    sample = dots[2] / n
    (q, sigma2), _ = nnls(np.column_stack([trace_mrm / n, trace_m / n]), sample)
    meat = q * jrj + sigma2 * gram(jac, jac)
    return n / max(n - theta.size, 1) * bread @ meat @ bread
