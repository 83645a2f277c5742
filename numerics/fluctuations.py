"""Stationary fluctuations of the noisy mean-field map, exact for every lag structure.

On-policy the AR(2) closed forms are compiled from the theory (``stationary_variance``,
``autocorrelation``, ``spectral_density``). With a fixed staleness d the map is a linear system
of dimension d+1 whose stationary covariance solves a discrete Lyapunov equation; with a refresh
interval K it is periodic, and the variance is averaged over the K phases of the cycle.
"""

from __future__ import annotations

import numpy as np
from scipy.linalg import solve_discrete_lyapunov

from grpodyn.ground import InputError, check_int, check_momentum, check_positive

from .compiled import compiled
from .stability import refresh_cycle_steps, refresh_stable, staleness_stable

__all__ = ["stationary_variance", "autocorrelation", "spectral_density"]


def _companion(beta: float, k: float, d: int) -> np.ndarray:
    """State (e_n, ..., e_{n-d'}) with d' = max(d, 1): one step of the map with staleness d."""
    size = max(d, 1) + 1
    a = np.zeros((size, size))
    a[0, 0] = 1.0 + beta
    a[0, 1] = -beta
    a[0, d] -= k
    a[1:, :-1] = np.eye(size - 1)
    return a


def stationary_variance(*, momentum: float, stiffness: float, noise: float, refresh: int = 1,
                        staleness: int = 0) -> float:
    """Stationary variance of e [reward^2] for per-step noise variance s^2 = ``noise``.

    On-policy: the AR(2) formula Var(e) = s^2 (1 + beta) / ((1 - beta) k (2 (1 + beta) - k))
    (docs/theory.md section 6); with a staleness d, the discrete Lyapunov equation of the
    d + 1-dimensional map; with a refresh interval K, the variance averaged over the K phases
    of the periodic map (docs/theory.md sections 5 and 6).

    Parameters
    ----------
    momentum : float
        Momentum beta in [0, 0.999] (docs/theory.md section 1).
    stiffness : float
        Stiffness k = lr kappa > 0 [1/step^2] (docs/theory.md section 1).
    noise : float
        Per-step noise variance s^2 >= 0 of the reward increment [reward^2].
    refresh : int
        Refresh interval K >= 1 [steps] (sample-and-hold; docs/theory.md section 5).
    staleness : int
        Fixed staleness d >= 0 [steps] (docs/theory.md section 5); not with a refresh interval.

    Returns
    -------
    float
        Var(e) [reward^2]; inf where the map is unstable (its fluctuations grow without bound).

    Raises
    ------
    InputError
        On an invalid input, naming it, or both a refresh interval and a staleness; on a
        stable map whose variance overflows a double (a noise near 1e300).
    """
    beta = float(check_momentum(momentum, scalar=True))
    k = float(check_positive("stiffness", stiffness, scalar=True))
    s2 = float(check_positive("noise", noise, allow_zero=True, scalar=True))
    refresh = check_int("refresh", refresh, minimum=1)
    staleness = check_int("staleness", staleness, minimum=0)
    if refresh > 1 and staleness > 0:
        raise InputError("give either refresh or staleness, not both")
    if refresh == 1 and staleness == 0:
        if not staleness_stable(beta, k, 0):
            return float("inf")
        return _representable(float(compiled("stationary_variance")(beta, k, s2)), s2)
    if staleness > 0:
        if not staleness_stable(beta, k, staleness):
            return float("inf")
        a = _companion(beta, k, staleness)
        q = np.zeros_like(a)
        q[0, 0] = s2
        return _representable(float(solve_discrete_lyapunov(a, q)[0, 0]), s2)
    if not refresh_stable(beta, k, refresh):
        return float("inf")
    q = np.zeros((3, 3))
    q[0, 0] = s2
    steps = refresh_cycle_steps(beta, 0.0, k, refresh)  # the whole force held
    cycle, forced = np.eye(3), np.zeros((3, 3))
    for a in steps:  # covariance over one cycle: P -> A P A^T + Q
        cycle = a @ cycle
        forced = a @ forced @ a.T + q
    p = solve_discrete_lyapunov(cycle, forced)
    variances = []
    for a in steps:
        variances.append(p[0, 0])
        p = a @ p @ a.T + q
    return _representable(float(np.mean(variances)), s2)


def _representable(variance: float, s2: float) -> float:
    """Return the variance of a stable map, refusing one a double cannot hold (not inf)."""
    if not np.isfinite(variance):
        raise InputError(f"noise: the stationary variance at noise {s2:g} exceeds what a double "
                         "holds (about 1.8e308); give the noise in smaller reward units")
    return variance


def autocorrelation(lags: int | np.ndarray, *, momentum: float, stiffness: float) -> np.ndarray:
    """On-policy autocorrelation rho(h) of e at integer lags h (derivation ``autocorrelation``).

    The derivation is a real form for each regime (docs/theory.md section 6: oscillatory,
    critically damped, overdamped, flip); every branch is evaluated, the one that applies kept.
    """
    beta = float(check_momentum(momentum, scalar=True))
    k = float(check_positive("stiffness", stiffness, scalar=True))
    h = np.asarray(lags)
    if np.any(h < 0) or not np.all(np.equal(np.mod(h, 1), 0)):
        raise InputError(f"lags must be non-negative integers, got {lags!r}")
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        return np.asarray(compiled("autocorrelation")(h.astype(float), beta, k), dtype=float)


def spectral_density(omega: float | np.ndarray, *, momentum: float, stiffness: float,
                     noise: float) -> np.ndarray:
    """On-policy power spectral density of e [reward^2 / (rad/step)].

    Derivation ``spectral_density``.
    """
    beta = check_momentum(momentum)
    k = check_positive("stiffness", stiffness)
    s2 = check_positive("noise", noise)
    return compiled("spectral_density")(np.asarray(omega, dtype=float), beta, k, s2)
