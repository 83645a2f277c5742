"""Closed-form trajectories of the continuum oscillator, stable in every regime.

The unified form of THEORY.md section 2 (derivation ``trajectory``),

    e(t) = exp(-gamma t) [e0 cosh(s t) + (v0 + gamma e0) sinh(s t)/s],
    gamma = zeta omega0,  s^2 = omega0^2 (zeta - 1)(zeta + 1),

is evaluated without cancellation or overflow: by its power series in x = s^2 t^2 when |x| is
small (through critical damping), with cos/sin when x < 0, and with the exponentials recombined
as exp((s - gamma) t) with s - gamma = -omega0^2 / (s + gamma) when x > 0. Tests compare it with
the compiled sympy expression and with a 50-digit mpmath reference.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.optimize import brentq

from .validation import InputError, check_finite, check_fraction, check_positive

__all__ = ["trajectory", "closed_form", "inflection_time", "gain_fraction_time",
           "TrajectoryResult"]

_SERIES_CUTOFF = 0.05  # |s t|^2 below which the power series is used
_SERIES_TERMS = 12  # 0.05^12 / 24! is far below double precision


@dataclass(frozen=True)
class TrajectoryResult:
    """A predicted trajectory and whether the dynamics that produced it are unstable."""

    t: np.ndarray
    values: np.ndarray
    unstable: bool


def _series_cosh_sinc(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """cosh(sqrt(x)) and sinh(sqrt(x))/sqrt(x) by their power series (valid for x of any sign)."""
    cosh_sum = np.zeros_like(x)
    sinc_sum = np.zeros_like(x)
    term_c = np.ones_like(x)
    term_s = np.ones_like(x)
    for j in range(_SERIES_TERMS):
        cosh_sum += term_c
        sinc_sum += term_s
        term_c = term_c * x / ((2 * j + 1) * (2 * j + 2))
        term_s = term_s * x / ((2 * j + 2) * (2 * j + 3))
    return cosh_sum, sinc_sum


def trajectory(t, *, e0, v0=0.0, zeta, omega0) -> np.ndarray:
    """Displacement e(t) of ``e'' + 2 zeta omega0 e' + omega0^2 e = 0``.

    Parameters
    ----------
    t : array_like
        Time [steps], >= 0.
    e0, v0 : array_like
        Initial displacement [reward] and velocity [reward/step]; v0 = 0 for a momentum buffer
        that starts at zero.
    zeta : array_like
        Damping ratio (> 0).
    omega0 : array_like
        Natural angular frequency [rad/step] (> 0).

    Returns
    -------
    numpy.ndarray
        e(t), broadcast over all arguments. THEORY.md section 2, derivation ``trajectory``.
    """
    t = check_positive("t", t, allow_zero=True)
    e0, v0 = check_finite("e0", e0), check_finite("v0", v0)
    zeta, omega0 = check_positive("zeta", zeta), check_positive("omega0", omega0)
    return closed_form(t, e0, v0, zeta, omega0)


def closed_form(t, e0, v0, zeta, omega0) -> np.ndarray:
    """:func:`trajectory` without input validation, for inner loops that guarantee validity."""
    t, e0, v0, zeta, omega0 = np.broadcast_arrays(*(np.asarray(x, dtype=float)
                                                    for x in (t, e0, v0, zeta, omega0)))
    gamma = zeta * omega0
    s2 = omega0**2 * (zeta - 1.0) * (zeta + 1.0)
    x = s2 * t**2
    slope = v0 + gamma * e0
    out = np.empty(t.shape)
    with np.errstate(over="ignore", under="ignore", invalid="ignore"):
        for region, evaluate in ((np.abs(x) <= _SERIES_CUTOFF, _near_critical),
                                 (x < -_SERIES_CUTOFF, _underdamped),
                                 (x > _SERIES_CUTOFF, _overdamped)):
            if region.all():
                out[...] = evaluate(t, e0, slope, gamma, s2, omega0)
            elif region.any():
                out[region] = evaluate(t[region], e0[region], slope[region], gamma[region],
                                       s2[region], omega0[region])
    return out


def _near_critical(t, e0, slope, gamma, s2, omega0):
    cosh_part, sinc_part = _series_cosh_sinc(s2 * t**2)
    return np.exp(-gamma * t) * (e0 * cosh_part + slope * t * sinc_part)


def _underdamped(t, e0, slope, gamma, s2, omega0):
    wd = np.sqrt(-s2)
    return np.exp(-gamma * t) * (e0 * np.cos(wd * t) + slope * np.sin(wd * t) / wd)


def _overdamped(t, e0, slope, gamma, s2, omega0):
    s = np.sqrt(s2)
    slow = np.exp(-omega0**2 / (s + gamma) * t)  # exp((s - gamma) t) without cancellation
    cosh_part = slow * (1.0 + np.exp(-2.0 * s * t)) / 2.0
    sinh_part = slow * (-np.expm1(-2.0 * s * t)) / 2.0
    return e0 * cosh_part + slope * sinh_part / s


def _atanh_ratio(y: np.ndarray) -> np.ndarray:
    """atanh(sqrt(y))/sqrt(y), continued to y < 0 as atan(sqrt(-y))/sqrt(-y); 1 at y = 0."""
    out = np.empty_like(y)
    near = np.abs(y) < 1e-4
    yn = y[near]
    out[near] = 1.0 + yn / 3.0 + yn**2 / 5.0 + yn**3 / 7.0
    pos = (y > 0) & ~near
    out[pos] = np.arctanh(np.sqrt(y[pos])) / np.sqrt(y[pos])
    neg = (y < 0) & ~near
    out[neg] = np.arctan(np.sqrt(-y[neg])) / np.sqrt(-y[neg])
    return out


def inflection_time(*, zeta, omega0) -> np.ndarray:
    """Time of steepest reward gain for v0 = 0 [steps].

    ``atanh(s / (zeta omega0)) / s`` (derivation ``inflection_time``), evaluated through
    critical damping: 1/omega0 at zeta = 1, ``atan(omega_d / gamma) / omega_d`` below.
    """
    zeta, omega0 = np.broadcast_arrays(check_positive("zeta", zeta),
                                       check_positive("omega0", omega0))
    y = (zeta - 1.0) * (zeta + 1.0) / zeta**2  # (s / gamma)^2
    return _atanh_ratio(np.atleast_1d(y)).reshape(y.shape) / (zeta * omega0)


def gain_fraction_time(q: float, *, zeta: float, omega0: float) -> float:
    """First time [steps] at which a fraction q of the total gain is reached (v0 = 0).

    Solves e(t) = (1 - q) e0 on the closed form; the overdamped limit is the derivation
    ``gain_fraction_time`` (tau ln(1/(1-q)) + m/c).
    """
    q = check_fraction("q", q)
    zeta = float(check_positive("zeta", zeta))
    omega0 = float(check_positive("omega0", omega0))

    def residual(t: float) -> float:
        return float(trajectory(t, e0=1.0, zeta=zeta, omega0=omega0)) - (1.0 - q)

    # Overdamped curves are monotone: grow the bracket geometrically. Underdamped ones may cross
    # several times; steps of 1/omega0, shorter than the half period pi/omega_d, find the first.
    lower, upper = 0.0, 1.0 / omega0
    for _ in range(10_000):
        if residual(upper) < 0:
            return brentq(residual, lower, upper, xtol=1e-12 * upper, rtol=1e-14)
        lower = upper
        upper = upper * 1.5 if zeta >= 1 else upper + 1.0 / omega0
    raise InputError(f"the fraction q={q} of the gain is not reached")
