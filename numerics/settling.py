"""Settling of the heavy-ball map into a band: the stiffness that gets there soonest.

The on-policy map x_{t+1} = x_t + beta (x_t - x_{t-1}) - k x_t (derivation ``mean_field_map``
with the force not lagged, docs/theory.md sections 1 and 4) started from rest at x_0 = x_{-1} = 1
relaxes toward 0. Its settling step into a band of half-width ``band`` is the first step after
which |x_t| <= band for good. Critical damping, k_c = (1 - sqrt(beta))^2, is the fastest
relaxation without overshoot; an underdamped map that overshoots by no more than the band gets
into the band and stays there sooner. The stiffness with the shortest settling has no closed
form: :func:`settling_stiffness` finds it from the exact response.

The response is x_t = D_{t+1} - beta D_t with D_n = (z_1^n - z_2^n) / (z_1 - z_2) over the
poles of z^2 - (1 + beta - k) z + beta, and |D_n| <= n r^(n-1) for r = max |z_i|, beta <= r^2:
|x_t| <= (2 t + 1) r^t, which decreases beyond t = -1 / ln r - 1/2. Past the step where that
bound falls below the band, no exit is possible, so the settling step is exact.
"""

from __future__ import annotations

import math
from collections.abc import Iterator

import numpy as np
from scipy.special import lambertw

from grpodyn.ground import InputError, check_momentum

from .compiled import compiled

__all__ = ["step_response", "settling_steps", "settling_stiffness", "band_horizon",
           "first_overshoot", "overshoot_stiffness"]

#: Points of each grid of the minimum search, and how many grids (a coarse one, then finer
#: ones over four of its cells: each shrinks the cell by a factor of about 150).
_GRID = 600
_LEVELS = 4


def _check_band(band: float) -> float:
    band = float(band)
    if not 0 < band < 1:
        raise InputError(f"band must lie in (0, 1), got {band}")
    return band


def step_response(*, momentum: float, stiffness: np.ndarray | float, steps: int) -> np.ndarray:
    """Response of the on-policy map from rest: x_0 = x_{-1} = 1, target 0.

    Iterates the registry's map (derivation ``mean_field_map`` with a = k, kappa = 1 and the
    force at the current step).

    Parameters
    ----------
    momentum : float
        beta in [0, 1).
    stiffness : float or numpy.ndarray
        k = lr * kappa [1/step^2], one response per value.
    steps : int
        Last step t (>= 0).

    Returns
    -------
    numpy.ndarray
        x_t for t = 0..steps [fraction of the initial displacement], shape
        ``stiffness.shape + (steps + 1,)``.
    """
    beta = float(check_momentum(momentum, scalar=True))
    k = np.asarray(stiffness, dtype=float)
    if steps < 0:
        raise InputError(f"steps must be >= 0, got {steps}")
    out = np.empty(k.shape + (steps + 1,))
    out[..., 0] = 1.0
    for t, now in _from_rest(beta, k, steps):
        out[..., t] = now
    return out


def _from_rest(beta: float, k: np.ndarray, steps: int) -> Iterator[tuple[int, np.ndarray]]:
    """Yield (t, x_t) for t = 1..steps of the map from rest, x_0 = x_{-1} = 1 (one per k)."""
    step = compiled("mean_field_map")
    now, prev = np.ones(k.shape), np.ones(k.shape)
    for t in range(1, steps + 1):
        now, prev = step(now, prev, now, beta, k, 1.0), now
        yield t, now


def _radius(beta: float, k: np.ndarray) -> np.ndarray:
    """Largest modulus |z| over the roots of z^2 - (1 + beta - k) z + beta."""
    half = 0.5 * (1.0 + beta - k)
    disc = half**2 - beta
    root = np.sqrt(np.abs(disc))
    return np.where(disc >= 0, np.abs(half) + root, math.sqrt(beta))


def band_horizon(radius: np.ndarray | float, band: float) -> np.ndarray:
    """First step from which the envelope (2 t + 1) r^t stays within ``band``.

    Parameters
    ----------
    radius : float or numpy.ndarray
        r = max |z| of the map's poles, in [0, 1).
    band : float
        Half-width of the band in (0, 1).

    Returns
    -------
    numpy.ndarray of int
        H >= 0 with (2 t + 1) r^t <= band for every t >= H.
    """
    r = np.asarray(radius, dtype=float)
    if np.any((r < 0) | (r >= 1)):
        raise InputError("radius must lie in [0, 1): the map is not stable there")
    with np.errstate(divide="ignore", invalid="ignore"):  # r = 0: L = -inf, no root
        half_log = 0.5 * np.log(r)  # L < 0; u = 2 t + 1 solves u exp(L u) = band exp(L)
        arg = half_log * band * np.exp(half_log)
    # the larger root u = W_{-1}(arg) / L; no root (arg < -1/e, or r = 0): within from t = 1
    inside = np.isfinite(half_log) & (arg >= -1.0 / math.e)
    u = np.where(inside, np.real(lambertw(np.where(inside, arg, -0.1), k=-1))
                 / np.where(inside, half_log, -1.0), 1.0)
    horizon = np.ceil(np.maximum((u - 1.0) / 2.0, 1.0)).astype(int)
    return horizon


def settling_steps(*, momentum: float, stiffness: np.ndarray | float, band: float = 0.1
                   ) -> np.ndarray:
    """Settling step of the map's response from rest into the band |x| <= ``band``.

    The first step T with |x_t| <= band for every t >= T (x_0 = 1, so T >= 1), exact: the
    response is iterated up to the envelope's horizon (:func:`band_horizon`).

    Parameters
    ----------
    momentum : float
        beta in [0, 1).
    stiffness : float or numpy.ndarray
        k [1/step^2] in (0, 2 (1 + beta)) (the stable on-policy map).
    band : float
        Half-width of the band as a fraction of the initial displacement, in (0, 1) (0.1:
        within 10% of the target, i.e. 90% of the gain).

    Returns
    -------
    numpy.ndarray of int
        T [steps], one per stiffness.
    """
    beta = float(check_momentum(momentum, scalar=True))
    band = _check_band(band)
    k = np.asarray(stiffness, dtype=float)
    if np.any(~np.isfinite(k) | (k <= 0) | (k >= 2 * (1 + beta))):
        raise InputError(f"stiffness must lie in (0, {2 * (1 + beta):g}) (the stable map at "
                         f"beta = {beta:g})")
    horizon = band_horizon(_radius(beta, k), band)
    return _settle(beta, k, band, horizon)


def _settle(beta: float, k: np.ndarray, band: float, horizon: np.ndarray) -> np.ndarray:
    """Last step outside the band before each horizon, plus one."""
    last = np.zeros(k.shape, dtype=int)
    for t, now in _from_rest(beta, k, int(np.max(horizon, initial=0))):
        last = np.where((np.abs(now) > band) & (t < horizon), t, last)
    return last + 1


def settling_stiffness(*, momentum: float, band: float = 0.1) -> dict:
    """Least stiffness whose response from rest settles into the band soonest.

    Searched over k in (0, (1 + sqrt(beta))^2] (beyond it the response flips sign every step):
    a geometric grid from k_c / 100, then finer grids over the two cells either side of the
    least stiffness with the least settling step. The least settling step sits just below a
    jump (where the overshoot leaves the band), on a plateau about 1 / T wide in relative
    stiffness, which a grid too coarse misses; it lies next to the coarse grid's best point,
    so each finer grid brackets it. Below k_c the response is positive and falling, so one
    horizon, that of the radius sqrt(beta) (the poles' modulus from k_c to the flip), decides
    every candidate exactly: a response outside the band there settles after critical damping
    does.

    Parameters
    ----------
    momentum : float
        beta in [0, 1).
    band : float
        Half-width of the band in (0, 1) (default 0.1: 90% of the gain, for good).

    Returns
    -------
    dict
        ``stiffness`` k_s [1/step^2] (to a relative 1e-8), ``steps`` the least
        settling step, ``critical_stiffness`` k_c, ``critical_steps`` the settling step at k_c,
        ``band``.
    """
    beta = float(check_momentum(momentum, scalar=True))
    band = _check_band(band)
    k_c = float(compiled("critical_stiffness_discrete")(beta))
    k_flip = float(compiled("flip_stiffness")(beta))
    horizon = int(band_horizon(math.sqrt(beta), band))
    grid = np.geomspace(k_c / 100.0, k_flip, _GRID)
    for level in range(_LEVELS):
        steps = _settle(beta, grid, band, np.full(grid.shape, horizon + 1))
        first = int(np.argmin(steps))
        best = int(steps[first])
        if level < _LEVELS - 1:
            grid = np.linspace(grid[max(first - 2, 0)], grid[min(first + 2, grid.size - 1)],
                               _GRID)
    k_s = float(grid[first])
    critical = int(_settle(beta, np.array([k_c]), band, np.array([horizon]))[0])
    return {"stiffness": k_s, "steps": best, "critical_stiffness": k_c,
            "critical_steps": critical, "band": band}


def first_overshoot(*, momentum: float, stiffness: np.ndarray | float) -> np.ndarray:
    """Overshoot of the response from rest past the target, -min_t x_t (0 where it never crosses).

    The response is followed until the envelope (2 t + 1) r^t (module docstring) at the
    modulus r = sqrt(beta) falls below 1e-6 of the initial displacement: from k_c to the flip
    every pole has that modulus, so no deeper crossing comes later; below k_c the response
    never crosses; past the flip, up to the stability limit, the first trough, within the first
    steps, is the deepest (tests/test_trend_overshoot.py checks it against 20,000 steps).

    Parameters
    ----------
    momentum : float
        beta in [0, 1).
    stiffness : float or numpy.ndarray
        k [1/step^2], below the stability limit 2 (1 + beta) for a response that settles.

    Returns
    -------
    numpy.ndarray
        The overshoot [fraction of the gain], shape of ``stiffness``.
    """
    beta = float(check_momentum(momentum, scalar=True))
    k = np.asarray(stiffness, dtype=float)
    horizon = int(band_horizon(math.sqrt(beta), 1e-6)) + 1
    lowest = np.ones(k.shape)
    for _, now in _from_rest(beta, k, horizon):  # the running minimum: no (k, t) array is kept
        lowest = np.minimum(lowest, now)
    return np.maximum(-lowest, 0.0)


def overshoot_stiffness(*, momentum: float, overshoot: float) -> float | None:
    """Least stiffness whose response from rest overshoots the target by ``overshoot``.

    The overshoot grows with k from critical damping, where it is 0, to the stability limit
    2 (1 + beta), up to wiggles where the step of the first trough changes (under 1e-2 below
    an overshoot of 0.7, larger where the ringing takes a few steps a period;
    tests/test_trend_overshoot.py): a measured overshoot of at least OS places k at or above
    the least k that reaches it, found on a geometric grid of ``_GRID`` points up to the limit
    and refined by bisection within the first cell that reaches it.

    Parameters
    ----------
    momentum : float
        beta in (0, 1): without momentum the map has no complex poles, and its only overshoot
        is the flip's, one step at a time.
    overshoot : float
        OS > 0 [fraction of the gain].

    Returns
    -------
    float or None
        k [1/step^2] (to a relative 1e-10); None where no stable k reaches the overshoot.
    """
    from scipy.optimize import brentq

    beta = float(check_momentum(momentum, scalar=True))
    if not beta > 0 or not overshoot > 0:
        raise InputError(f"overshoot_stiffness needs momentum in (0, 1) and an overshoot > 0, "
                         f"got momentum {beta:g}, overshoot {overshoot!r}")
    k_c = float(compiled("critical_stiffness_discrete")(beta))
    k_max = float(compiled("stiffness_max")(beta))
    grid = np.geomspace(k_c, k_max * (1 - 1e-6), _GRID)
    reached = np.flatnonzero(first_overshoot(momentum=beta, stiffness=grid) >= overshoot)
    if not reached.size:
        return None
    cell = int(reached[0])
    return float(brentq(lambda k: float(first_overshoot(momentum=beta, stiffness=k)) - overshoot,
                        grid[cell - 1], grid[cell], rtol=1e-10))
