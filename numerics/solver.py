"""Bounded nonlinear least squares for the few shape parameters of a curve fit.

A variable projection (:mod:`grpodyn.numerics.projection`) leaves one or two shape parameters
to optimise (docs/theory.md section 3). Two hand-written Levenberg-Marquardt routines do it, kept
for
a measured reason: ``scipy.optimize.least_squares`` reaches the same optimum to round-off, but
its per-call set-up costs more than the arithmetic of a 1000-point series, and the fits of
``grpodyn fit``, the forecasts and the sweeps run thousands of them. Measured on 20 seeded
1000-point exponential relaxations with noise, each routine replaced by ``least_squares``
(trf, analytic Jacobian, default tolerances): the exponential law 0.35 against 0.77 ms per
fit, the sigmoid 4.3 against 6.9 ms; on the inertial form (differenced Jacobian) the times are
alike but ``least_squares`` stops up to 8e-6 (relative RSS) above the optimum found here.

:func:`levenberg_marquardt` is the general one (p parameters, numpy);
:func:`scalar_levenberg_marquardt` the same rules for p = 1 in Python floats (the exponential
law, the most frequent fit), reading the cost and its derivatives as numbers so the caller
forms them from dot products. Robust losses and plateau-bounded fits go through
``least_squares`` itself, with :func:`two_point_jacobian` as its forward differences without
the set-up. :func:`profile_rises` lets the multi-start skip a start from which a descent would
return to the optimum already found.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from .gram import dot, gram

__all__ = ["PROFILE_POINTS", "Solution", "levenberg_marquardt", "profile_rises",
           "scalar_levenberg_marquardt", "two_point_jacobian"]

#: Grid points of the profile check between an optimum and a later start (:func:`profile_rises`).
PROFILE_POINTS = 3


@dataclass(frozen=True)
class Solution:
    """The end point of :func:`levenberg_marquardt` (the fields a fit reads)."""

    x: np.ndarray
    cost: float


def levenberg_marquardt(residual: Callable[[np.ndarray], np.ndarray],
                        jacobian: Callable[[np.ndarray], np.ndarray], x0: np.ndarray,
                        lower: np.ndarray, upper: np.ndarray, *, max_iterations: int = 200
                        ) -> Solution | None:
    """Bounded Levenberg-Marquardt for the few shape parameters of a variable projection.

    Moré's scaling (damping lam diag(J^T J)); a step is clipped to the box and a parameter on a
    bound whose gradient points out of the box is held there. It stops when the cost changes by
    less than 1e-15 relative, the step by less than 1e-12 relative, or the scaled gradient
    vanishes: tighter than ``least_squares``' defaults (1e-8), so it ends on the same optimum
    to round-off, without the per-call set-up (p <= 2 here; the module docstring gives the
    measured times).

    Parameters
    ----------
    residual : callable
        The residual vector at a parameter vector.
    jacobian : callable
        Its Jacobian, shape (n, p), at a parameter vector.
    x0 : numpy.ndarray
        Start, inside the box.
    lower, upper : numpy.ndarray
        The box.
    max_iterations : int
        Most outer iterations.

    Returns
    -------
    Solution or None
        The end point and half its residual sum of squares; None when the residual is not
        finite at the start.
    """
    x = x0.copy()
    fun = residual(x)
    cost = 0.5 * dot(fun, fun)
    if not np.isfinite(cost):
        return None
    lam = 1e-3
    for _ in range(max_iterations):
        jac = jacobian(x)
        if not np.all(np.isfinite(jac)):
            break
        gradient = gram(jac, fun[:, None])[:, 0]
        info = gram(jac, jac)
        diagonal = np.maximum(np.diag(info), 1e-300)
        free = ~(((x <= lower) & (gradient > 0)) | ((x >= upper) & (gradient < 0)))
        if not free.any() or np.all(np.abs(gradient[free]) <= 1e-14 * np.sqrt(
                diagonal[free] * max(2 * cost, 1e-300))):
            break
        improved = False
        while lam < 1e16:
            step = np.zeros_like(x)
            if free.all():
                system = info + lam * np.diag(diagonal)
            else:
                system = info[np.ix_(free, free)] + lam * np.diag(diagonal[free])
            if system.shape[0] == 1:
                step[free] = -gradient[free] / system[0, 0]
            else:
                try:
                    step[free] = np.linalg.solve(system, -gradient[free])
                except np.linalg.LinAlgError:
                    lam *= 10
                    continue
            trial = np.clip(x + step, lower, upper)
            trial_fun = residual(trial)
            trial_cost = 0.5 * dot(trial_fun, trial_fun)
            if np.isfinite(trial_cost) and trial_cost <= cost:
                improved = True
                break
            lam *= 10
        if not improved:
            break
        moved = np.abs(trial - x) <= 1e-12 * (np.abs(x) + 1e-12)
        change = cost - trial_cost
        taken = trial - x
        lam = _damping(lam, change, -(dot(gradient, taken) + 0.5 * dot(taken, info @ taken)))
        x, fun, cost = trial, trial_fun, trial_cost
        if np.all(moved) or change <= 1e-15 * cost:
            break
    return Solution(x, cost)


def _damping(lam: float, change: float, predicted: float) -> float:
    """Return the damping after an accepted step, from its gain ratio (Moré 1978, Nielsen 1999).

    The gain ratio rho = actual / predicted decrease of the cost (the Gauss-Newton model's
    prediction). rho > 0.75: the model holds, damping / 10 (floor 1e-12); rho < 0.25: it
    does not (a Gauss-Newton step overshooting a minimum whose curvature the model
    underestimates, as the projected tau of a noisy exponential), damping at least doubled and
    at least 1 (each step at most half the Gauss-Newton step: a trust-region shrink);
    otherwise unchanged. Without the shrink the steps straddle the minimum, each decreasing the
    cost a little, until the iterations run out.
    """
    rho = change / predicted if predicted > 0 else 1.0
    if rho > 0.75:
        return max(lam / 10, 1e-12)
    if rho < 0.25:
        return max(2 * lam, 1.0)
    return lam


def scalar_levenberg_marquardt(cost_of: Callable[[float], float],
                               derivatives: Callable[[float], tuple[float, float]], x0: float,
                               lower: float, upper: float, *, max_iterations: int = 200,
                               found: float | None = None) -> Solution | None:
    """Run :func:`levenberg_marquardt` for one shape parameter, in Python floats.

    The same damping, bounds, acceptance and stopping rules as the general routine with p = 1
    (the exponential law's tau: docs/theory.md section 3), without its small-matrix numpy calls,
    which cost more than the arithmetic on a 1000-point series. It reads the cost, the
    gradient J . rho and the Gauss-Newton curvature J . J as numbers, so a caller can form
    them from dot products without the residual or Jacobian vectors.

    Parameters
    ----------
    cost_of : callable
        Half the residual sum of squares at phi.
    derivatives : callable
        (J . rho, J . J) at phi: the gradient of ``cost_of`` and its Gauss-Newton curvature,
        J the derivative in phi of the residual vector rho.
    x0, lower, upper : float
        Start and box of phi.
    max_iterations : int
        Most outer iterations.
    found : float or None
        The optimum an earlier start reached: a start whose iterate comes within 1e-6
        (relative) of it stops there, in the same basin (continuing reproduces that optimum to
        round-off; the multi-start keeps the lower cost either way).

    Returns
    -------
    Solution or None
        None when the cost is not finite at the start.
    """
    x = x0
    cost = cost_of(x)
    if not math.isfinite(cost):
        return None
    lam = 1e-3
    for _ in range(max_iterations):
        gradient, info = derivatives(x)
        if not (math.isfinite(gradient) and math.isfinite(info)):
            break
        diagonal = max(info, 1e-300)
        held = (x <= lower and gradient > 0) or (x >= upper and gradient < 0)
        if held or abs(gradient) <= 1e-14 * math.sqrt(diagonal * max(2 * cost, 1e-300)):
            break
        improved = False
        while lam < 1e16:
            trial = min(max(x - gradient / (info + lam * diagonal), lower), upper)
            trial_cost = cost_of(trial)
            if math.isfinite(trial_cost) and trial_cost <= cost:
                improved = True
                break
            lam *= 10
        if not improved:
            break
        moved = abs(trial - x) <= 1e-12 * (abs(x) + 1e-12)
        change = cost - trial_cost
        taken = trial - x
        lam = _damping(lam, change, -(gradient * taken + 0.5 * info * taken * taken))
        x, cost = trial, trial_cost
        if moved or change <= 1e-15 * cost or (found is not None
                                                and abs(x - found) <= 1e-6 * abs(found)):
            break
    return Solution(np.array([x]), cost)


#: The relative step of ``scipy.optimize.approx_derivative``'s "2-point" scheme in float64.
_SQRT_EPS = float(np.finfo(np.float64).eps ** 0.5)


def two_point_jacobian(fun: Callable[[np.ndarray], np.ndarray], x0: np.ndarray,
                       f0: np.ndarray | None, lower: np.ndarray, upper: np.ndarray
                       ) -> np.ndarray:
    """Forward-difference Jacobian, the same floats as scipy's ``jac="2-point"`` in a box.

    ``least_squares(jac="2-point", bounds=(lower, upper))`` differences the residual through
    ``approx_derivative``, whose per-call set-up costs more than two residuals of a
    1000-point series. This is its scheme for float64 without the set-up: step
    h = sqrt(eps) sign(x) max(1, |x|) (sign +1 at 0), reversed where x + h leaves the box and
    -h fits, else the distance to the farther bound; column i = (f(x + h_i e_i) - f(x)) /
    ((x_i + h_i) - x_i), stored as the transpose of a row-major (p, n) array as there.
    tests/test_fast_paths.py checks it against ``approx_derivative`` bit for bit.

    Parameters
    ----------
    fun : callable
        The residual vector at a parameter vector.
    x0 : numpy.ndarray
        Where the Jacobian is taken, inside the box.
    f0 : numpy.ndarray or None
        ``fun(x0)`` when known (None: evaluated here).
    lower, upper : numpy.ndarray
        The box.

    Returns
    -------
    numpy.ndarray
        The (n, p) Jacobian, residual units per parameter unit.
    """
    if f0 is None:
        f0 = fun(x0)
    # the steps in Python floats (the same operations, element by element: p is 2 to 4)
    bounded = not np.all((lower == -np.inf) & (upper == np.inf))
    transposed = np.empty((x0.size, f0.size))
    for i, (x, lo, hi) in enumerate(zip(x0.tolist(), lower.tolist(), upper.tolist(),
                                        strict=True)):
        h = _SQRT_EPS * (1.0 if x >= 0 else -1.0) * max(1.0, abs(x))
        if bounded:
            lower_dist, upper_dist = x - lo, hi - x
            fitting = abs(h) <= max(lower_dist, upper_dist)
            if fitting and (x + h < lo or x + h > hi):
                h = -h
            elif not fitting:
                h = upper_dist if upper_dist >= lower_dist else -lower_dist
        moved = x0.copy()
        moved[i] = x + h
        transposed[i] = (fun(moved) - f0) / ((x + h) - x)
    return transposed.T


def profile_rises(cost_of: Callable[[np.ndarray], float], optimum: np.ndarray,
                  start: np.ndarray, cost: float, *, points: int = PROFILE_POINTS) -> bool:
    """Whether the projected cost rises monotonically from an optimum to a later start.

    The cost is evaluated at ``points`` points of a geometric path from the optimum (cost
    ``cost``) to the start (each shape parameter interpolated in its logarithm), the start
    included; True when each is at least the one before. Then a descent from the start would
    return to the optimum's basin (the profile rises between them on the path), and the start
    is skipped. The points cost a fraction of one Levenberg-Marquardt run from that start; where
    the profile dips (a second basin, as on many pure-noise series) the start runs.

    Parameters
    ----------
    cost_of : callable
        Half the residual sum of squares of the variable projection at phi.
    optimum, start : numpy.ndarray
        The best phi so far and the start's phi (shape parameters; a path needs them > 0).
    cost : float
        Cost at the optimum.
    points : int
        Points on the path.

    Returns
    -------
    bool
        True when the start can be skipped; False also where a parameter is not positive.
    """
    if not (optimum.min() > 0 and start.min() > 0):
        return False
    ratio = start / optimum
    previous = cost
    for k in range(1, points + 1):
        current = cost_of(optimum * ratio ** (k / points))
        if not current >= previous:  # a dip, or not finite
            return False
        previous = current
    return True
