"""Closed-form trajectories of the continuum oscillator, stable in every regime.

The unified form of docs/theory.md section 2 (derivation ``trajectory``),

    e(t) = exp(-gamma t) [e0 cosh(s t) + (v0 + gamma e0) sinh(s t)/s],
    gamma = zeta omega0,  s^2 = omega0^2 (zeta - 1)(zeta + 1),

is evaluated without cancellation or overflow: by its power series in x = s^2 t^2 when |x| is
small (through critical damping), with cos/sin when x < 0, and with the exponentials recombined
as exp((s - gamma) t) with s - gamma = -omega0^2 / (s + gamma) when x > 0. Tests compare it with
the compiled sympy expression and with a 50-digit mpmath reference.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import numpy.typing as npt
from scipy.optimize import brentq

from grpodyn.ground import (
    InputError,
    check_finite,
    check_fraction,
    check_momentum,
    check_positive,
    one_of_alias,
)

from .trajectory_type import Trajectory, deprecated

__all__ = ["trajectory", "closed_form", "reward_trajectory", "inflection_time",
           "gain_fraction_time", "TrajectoryResult"]

_Value = np.ndarray | float  # a parameter: scalar, or an array broadcast with t

_SERIES_CUTOFF = 0.05  # |s t|^2 below which the power series is used
_SERIES_TERMS = 12  # 0.05^12 / 24! is far below double precision


class TrajectoryResult(Trajectory):
    """A :class:`~grpodyn.numerics.trajectory_type.Trajectory` of :func:`reward_trajectory`.

    The older name of its result, with ``t`` for ``steps``. Constructing it directly is
    deprecated: build a ``Trajectory(steps=t, values=values, unstable=unstable)``.
    """

    def __init__(self, t: np.ndarray, values: np.ndarray, unstable: bool) -> None:
        deprecated("TrajectoryResult", "Trajectory(steps=t, values=values, unstable=unstable)")
        super().__init__(steps=t, values=values, unstable=unstable)

    @property
    def t(self) -> np.ndarray:
        """Time [steps]: the same array as ``steps``."""
        return self.steps


def _series_cosh_sinc(x: npt.ArrayLike) -> tuple[np.ndarray, np.ndarray]:
    """cosh(sqrt(x)) and sinh(sqrt(x))/sqrt(x) by their power series (valid for x of any sign).

    Up to ``_SERIES_TERMS`` terms, fewer where the largest |x| makes the rest vanish: once every
    term is below 2^-55, adding it leaves both sums unchanged (each sum is at least 0.97 for
    |x| <= the cutoff, where half a unit in the last place is 2^-54 or more), so the values are
    those of all the terms, bit for bit.
    """
    x = np.asarray(x, dtype=float)
    largest = float(np.max(np.abs(x))) if x.size else 0.0
    bound, terms = 1.0, 1  # bound = largest^j / (2j)! >= |term_c|, >= |term_s|, after j terms
    while terms < _SERIES_TERMS and bound >= 2.0**-55:
        bound *= largest / ((2 * terms - 1) * (2 * terms))
        terms += 1
    cosh_sum = np.ones_like(x)  # the first terms are exactly 1
    sinc_sum = np.ones_like(x)
    term_c = x / 2  # 1 * x / 2: the second terms, as the recursion forms them
    term_s = x / 6
    for j in range(1, terms):
        cosh_sum += term_c
        sinc_sum += term_s
        term_c = term_c * x / ((2 * j + 1) * (2 * j + 2))
        term_s = term_s * x / ((2 * j + 2) * (2 * j + 3))
    return cosh_sum, sinc_sum


def trajectory(t: npt.ArrayLike, *, e0: npt.ArrayLike, v0: npt.ArrayLike = 0.0,
               zeta: npt.ArrayLike, omega0: npt.ArrayLike) -> np.ndarray:
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
        e(t), broadcast over all arguments. docs/theory.md section 2, derivation ``trajectory``.
    """
    t = _nonnegative_times(t)
    e0, v0 = check_finite("e0", e0), check_finite("v0", v0)
    zeta, omega0 = check_positive("zeta", zeta), check_positive("omega0", omega0)
    return closed_form(t, e0, v0, zeta, omega0)


def _nonnegative_times(t: npt.ArrayLike) -> np.ndarray:
    """Check t >= 0 and finite, as ``check_positive("t", t, allow_zero=True)``, cheaply.

    Two reductions (min and max are NaN when any entry is): no boolean temporaries on long
    arrays; the full check runs only to name the problem.
    """
    array = np.asarray(t, dtype=float)
    if array.size and np.isfinite(array.max()) and array.min() >= 0:
        return array
    return check_positive("t", t, allow_zero=True)


def closed_form(t: npt.ArrayLike, e0: npt.ArrayLike, v0: npt.ArrayLike, zeta: npt.ArrayLike,
                omega0: npt.ArrayLike) -> np.ndarray:
    """:func:`trajectory` without input validation, for inner loops that guarantee validity."""
    if all(np.ndim(p) == 0 for p in (e0, v0, zeta, omega0)):
        return _closed_form_scalar(np.asarray(t, dtype=float), float(e0), float(v0),
                                   float(zeta), float(omega0))
    t, e0, v0, zeta, omega0 = np.broadcast_arrays(*(np.asarray(x, dtype=float)
                                                    for x in (t, e0, v0, zeta, omega0)))
    gamma = zeta * omega0
    s2 = omega0**2 * (zeta - 1.0) * (zeta + 1.0)
    slope = v0 + gamma * e0
    out = np.empty(t.shape)
    with np.errstate(over="ignore", under="ignore", invalid="ignore"):
        x = _phase_squared(s2, t)
        for region, evaluate in ((np.abs(x) <= _SERIES_CUTOFF, _near_critical),
                                 (x < -_SERIES_CUTOFF, _underdamped),
                                 (x > _SERIES_CUTOFF, _overdamped)):
            if region.all():
                out[...] = evaluate(t, e0, slope, gamma, s2, omega0)
            elif region.any():
                out[region] = evaluate(t[region], e0[region], slope[region], gamma[region],
                                       s2[region], omega0[region])
    return out


def _closed_form_scalar(t: np.ndarray, e0: float, v0: float, zeta: float, omega0: float
                        ) -> np.ndarray:
    """Evaluate :func:`closed_form` for scalar parameters.

    One regime holds for every t > 0 (the sign of s^2), so its formula
    covers the whole array and the series replaces it only where |s t|^2 is small. The
    overdamped and underdamped forms are evaluated in place (one output array and one scratch
    array, no other temporaries): the 1e6-point cost is that of the two exponentials (cos, sin).
    """
    shape = t.shape
    t = t.reshape(-1)
    gamma = zeta * omega0
    s2 = omega0**2 * (zeta - 1.0) * (zeta + 1.0)
    slope = v0 + gamma * e0
    with np.errstate(over="ignore", under="ignore", invalid="ignore", divide="ignore"):
        if s2 > 0:
            out = _overdamped_inplace(t, e0, slope, gamma, s2, omega0)
        elif s2 < 0:
            out = _underdamped_inplace(t, e0, slope, gamma, s2)
        else:
            return _near_critical(t, e0, slope, gamma, s2, omega0).reshape(shape)
        near = np.flatnonzero(t <= np.sqrt(_SERIES_CUTOFF / abs(s2)))  # |s t|^2 <= cutoff
        if near.size:
            out[near] = _near_critical(t[near], e0, slope, gamma, s2, omega0)
    return out.reshape(shape)


_BLOCK = 32_768  # points per block of the in-place forms: 256 kB arrays stay in the L2 cache


def _overdamped_inplace(t: np.ndarray, e0: float, slope: float, gamma: float, s2: float,
                        omega0: float) -> np.ndarray:
    """Evaluate :func:`_overdamped` for scalar parameters.

    (e0 + slope/s)/2 exp((s - gamma) t) + (e0 - slope/s)/2 exp(-(s + gamma) t).

    Evaluated block by block in place (the same operations in the same order as on the whole
    array, so the values are identical): each block's passes hit the cache, not memory.
    """
    s = math.sqrt(s2)
    fast_weight = slope / s
    slow_rate, fast_rate = -omega0**2 / (s + gamma), -2.0 * s
    plus, minus = 0.5 * (e0 + fast_weight), 0.5 * (e0 - fast_weight)
    out = np.empty_like(t)
    scratch = np.empty(min(_BLOCK, t.size))
    for lo in range(0, t.size, _BLOCK):
        block, part = t[lo:lo + _BLOCK], out[lo:lo + _BLOCK]
        work = scratch[:block.size]
        np.multiply(block, slow_rate, out=part)
        np.exp(part, out=part)  # the slow mode, exp((s - gamma) t) without cancellation
        np.multiply(block, fast_rate, out=work)
        np.exp(work, out=work)  # exp(-2 s t)
        work *= minus
        work += plus
        part *= work
    return out


def _underdamped_inplace(t: np.ndarray, e0: float, slope: float, gamma: float, s2: float
                         ) -> np.ndarray:
    """Evaluate :func:`_underdamped` for scalar parameters, block by block in place.

    exp(-gamma t)(e0 cos + slope sin / wd), as :func:`_overdamped_inplace`.
    """
    wd = math.sqrt(-s2)
    out = np.empty_like(t)
    scratch = np.empty(min(_BLOCK, t.size))
    for lo in range(0, t.size, _BLOCK):
        block, part = t[lo:lo + _BLOCK], out[lo:lo + _BLOCK]
        phase = scratch[:block.size]
        np.multiply(block, wd, out=phase)
        np.cos(phase, out=part)
        part *= e0
        np.sin(phase, out=phase)
        phase *= slope / wd
        part += phase
        np.multiply(block, -gamma, out=phase)
        np.exp(phase, out=phase)
        part *= phase
    return out


def _phase_squared(s2: np.ndarray | float, t: np.ndarray) -> np.ndarray:
    """(s t)^2, exactly 0 at critical damping even where t^2 overflows (0 * inf is NaN)."""
    return np.where(s2 == 0, 0.0, s2 * t**2)


def _near_critical(t: np.ndarray, e0: _Value, slope: _Value, gamma: _Value, s2: _Value,
                   omega0: _Value) -> np.ndarray:
    """e(t) by the power series of cosh and sinc in (s t)^2 (through critical damping)."""
    cosh_part, sinc_part = _series_cosh_sinc(_phase_squared(s2, t))
    return np.exp(-gamma * t) * (e0 * cosh_part + slope * t * sinc_part)


def _underdamped(t: np.ndarray, e0: _Value, slope: _Value, gamma: _Value, s2: _Value,
                 omega0: _Value) -> np.ndarray:
    """e(t) for s^2 < 0: exp(-gamma t)(e0 cos(wd t) + slope sin(wd t) / wd)."""
    wd = np.sqrt(-s2)
    return np.exp(-gamma * t) * (e0 * np.cos(wd * t) + slope * np.sin(wd * t) / wd)


def _overdamped(t: np.ndarray, e0: _Value, slope: _Value, gamma: _Value, s2: _Value,
                omega0: _Value) -> np.ndarray:
    """e(t) for s^2 > 0, from the slow and fast exponentials without cancellation."""
    # exp(-gamma t) cosh(s t) = (slow + slow * ratio) / 2 with slow = exp((s - gamma) t), whose
    # rate -omega0^2 / (s + gamma) has no cancellation, and ratio = exp(-2 s t); here s t is
    # beyond the series region, so 1 - ratio loses at most a few digits of the last place.
    s = np.sqrt(s2)
    slow = np.exp((-omega0**2 / (s + gamma)) * t)
    ratio = np.exp((-2.0 * s) * t)
    fast_weight = slope / s
    return slow * ((e0 + fast_weight) + (e0 - fast_weight) * ratio) * 0.5


def reward_trajectory(t: npt.ArrayLike, *, r0: float, plateau: float | None = None,
                      momentum: float, stiffness: float, mean_lag: float = 0.0,
                      r_star: float | None = None) -> TrajectoryResult:
    """Return the expected reward r(t) of the continuum oscillator, momentum buffer at zero.

    Parameters
    ----------
    t : array_like
        Time [steps].
    r0, plateau : float
        Initial reward and plateau r* [reward].
    momentum : float
        beta in [0, 1): mass (1+beta)/2 and damping 1-beta.
    stiffness : float
        k = a kappa [1/step^2].
    mean_lag : float
        Mean lag of the force l_bar (d, or (K-1)/2 for a refresh interval): the damping becomes
        c - k l_bar (derivation ``effective_damping``).
    r_star : float, optional
        Deprecated name of ``plateau`` (a DeprecationWarning).

    Returns
    -------
    TrajectoryResult
        A :class:`~grpodyn.numerics.trajectory_type.Trajectory` of the reward; ``unstable`` is
        True when the effective damping is not positive; the values then grow (to +-inf, the
        sign of r0 - r*, once they overflow) instead of turning into NaN.

    Raises
    ------
    InputError
        On an invalid input, or the plateau missing or given under both names.
    """
    if r_star is not None:
        warnings.warn("reward_trajectory(r_star=...) is deprecated; use plateau=...",
                      DeprecationWarning, stacklevel=2)
    r_star = one_of_alias("plateau", plateau, "r_star", r_star)
    if r_star is None:
        raise InputError("reward_trajectory needs the plateau")
    t = check_positive("t", t, allow_zero=True)
    beta = float(check_momentum(momentum, scalar=True))
    k = float(check_positive("stiffness", stiffness, scalar=True))
    lag = float(check_positive("mean_lag", mean_lag, allow_zero=True, scalar=True))
    r_star = float(check_finite("plateau", r_star, scalar=True))
    e0 = float(check_finite("r0", r0, scalar=True)) - r_star
    mass, damping = (1 + beta) / 2, 1 - beta - k * lag
    omega0 = np.sqrt(k / mass)
    zeta = damping / (2 * np.sqrt(mass * k))
    if zeta > 0:
        values = r_star + closed_form(t, e0, 0.0, zeta, omega0)
        return TrajectoryResult.build(steps=t, values=values)
    gamma, s = zeta * omega0, np.sqrt(complex(omega0**2 * (zeta**2 - 1)))
    with np.errstate(over="ignore", invalid="ignore"):
        values = np.exp(-gamma * t) * (e0 * np.cosh(s * t) + gamma * e0 * np.sinh(s * t) / s)
    values = np.where(np.isfinite(values.real), values.real, np.copysign(np.inf, e0))
    return TrajectoryResult.build(steps=t, values=r_star + values, unstable=True)


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


def inflection_time(*, zeta: npt.ArrayLike, omega0: npt.ArrayLike) -> np.ndarray:
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
    zeta = float(check_positive("zeta", zeta, scalar=True))
    omega0 = float(check_positive("omega0", omega0, scalar=True))

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
