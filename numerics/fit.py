"""Fitting reward curves: the inertial closed form, the empirical law and baselines.

The entry points of the fits (docs/theory.md section 3): :func:`fit_curve` (one model, multi-start
bounded least squares), :func:`fit_at` (a fit rebuilt from its parameters) and
:func:`fit_models` (several models on one series). The parts live by role and every name stays
importable from here:

- :mod:`grpodyn.numerics.curve_models`: the models (``CurveModel``, ``MODELS``,
  ``curve_model``, ``model_jacobian``);
- :mod:`grpodyn.numerics.noise`: the noise estimate and the parameters' covariances
  (``NoiseEstimate``, ``estimate_noise``, ``hac_covariance``, ``model_covariance``);
- :mod:`grpodyn.numerics.projection`: the variable projection, (r0, r*) solved exactly for each
  shape;
- :mod:`grpodyn.numerics.solver`: the bounded Levenberg-Marquardt routines;
- :mod:`grpodyn.numerics.selection`: AIC and BIC; :mod:`grpodyn.numerics.fit_result`: the
  ``FitResult``; :mod:`grpodyn.numerics.gram`: the normal matrices.

A plateau range (``plateau_bounds``, e.g. the [0, 1] of an accuracy) constrains r*: the
variable projection solves (r0, r*) under the box exactly (a convex quadratic in two unknowns).

Least squares is multi-start (deterministic starting grid) with bounds. Standard errors use the
covariance of the theory's residual process, or Newey-West (HAC) where the model has none,
because the residuals of a stochastic run are autocorrelated; with white residuals it reduces
to the usual sigma^2 (J^T J)^-1. The noise ceiling of R^2 comes from the observation noise
estimated from first differences.
"""

from __future__ import annotations

import math
from collections.abc import Iterable

import numpy as np
import numpy.typing as npt
from scipy.optimize import OptimizeResult, least_squares

from grpodyn.ground import InputError, TooFewPoints, check_series

from .curve_models import EXTRA_MODELS, MODEL_NAMES, MODELS, CurveModel, curve_model
from .curve_models import model_jacobian as model_jacobian
from .fit_result import FitResult
from .gram import gram_inverse
from .noise import NoiseEstimate, estimate_noise
from .noise import hac_covariance as hac_covariance
from .noise import model_covariance as model_covariance
from .projection import VariableProjection
from .selection import scored_fit
from .solver import PROFILE_POINTS as PROFILE_POINTS
from .solver import (
    Solution,
    levenberg_marquardt,
    profile_rises,
    scalar_levenberg_marquardt,
    two_point_jacobian,
)
from .trajectory import closed_form as closed_form

__all__ = ["CurveModel", "FitResult", "NoiseEstimate", "MODEL_NAMES", "EXTRA_MODELS", "MODELS",
           "LOSSES", "curve_model", "fit_curve", "fit_at", "fit_models", "estimate_noise",
           "reward_unit"]

#: The routines under their names inside this module, read by tests/test_fit.py and
#: tests/test_fast_paths.py.
_gram_inverse = gram_inverse
_levenberg_marquardt = levenberg_marquardt
_scalar_levenberg_marquardt = scalar_levenberg_marquardt
_two_point = two_point_jacobian

#: The losses of :func:`fit_curve`: Gaussian (``"linear"``) and the robust ones of
#: ``scipy.optimize.least_squares``.
LOSSES = ("linear", "soft_l1", "huber", "cauchy", "arctan")


def _prepare(t: npt.ArrayLike, y: npt.ArrayLike) -> tuple[np.ndarray, np.ndarray]:
    """Return the checked series: steps shifted to start at 0, and rewards."""
    t = check_series("steps", t)
    y = check_series("reward", y)
    if t.size != y.size:
        raise InputError(f"steps ({t.size}) and reward ({y.size}) differ in length")
    if t.size < 5:
        raise TooFewPoints(f"a fit needs at least 5 points, got {t.size}")
    if not (t[1:] > t[:-1]).all():
        raise InputError("steps must be strictly increasing")
    if y.max() == y.min():
        raise InputError("the reward is constant: there is no curve to fit")
    return t - t[0], y



def fit_curve(name: str, t: npt.ArrayLike, y: npt.ArrayLike, *, momentum: float | None = None,
              learning_rate: npt.ArrayLike | None = None, loss: str = "linear",
              plateau_bounds: tuple[float, float] | None = None,
              every_start: bool = False) -> FitResult:
    """Fit one model by multi-start bounded least squares.

    Parameters
    ----------
    name
        Model name (``MODEL_NAMES``).
    t, y : array_like
        Steps and rewards; t is shifted to start at 0.
    momentum, learning_rate
        See :func:`curve_model`.
    loss
        ``"linear"`` (default, Gaussian) or a robust loss of ``scipy.optimize.least_squares``:
        one of ``LOSSES`` (``"soft_l1"``, ``"huber"``, ``"cauchy"``, ``"arctan"``), whose
        soft threshold is the reward's range rounded to a power of two.
    plateau_bounds
        (lo, hi): the range the reward can reach; r* (and r0) are constrained to it.
    every_start
        Run every start of the multi-start. By default, for the exponential law (one shape
        parameter, analytic Jacobian) and the inertial form (differenced Jacobian), a later
        start runs only where the projected cost does not rise monotonically from the optimum
        found so far to that start (:func:`_profile_rises`, three points of a geometric path):
        where it rises, the descent from that start would return to the same basin. The other
        models (sigmoid, power, plateau-bounded or robust fits) always run every start.

    Returns
    -------
    FitResult
        Parameters, RSS, R^2 and information criteria; the covariances are computed when
        first read.
    """
    if not isinstance(loss, str) or loss not in LOSSES:
        raise InputError(f"loss must be one of {', '.join(LOSSES)}, got {loss!r}")
    t, y = _prepare(t, y)
    plateau_bounds = _checked_range(plateau_bounds)
    model = curve_model(name, t, y, momentum=momentum, learning_rate=learning_rate)
    if (plateau_bounds is not None and loss == "linear" and model.shape_jac is not None
            and len(model.shape_params) == 1):
        # one analytic shape parameter (the exponential law): the free fit first, by its
        # scalar Levenberg-Marquardt, not trf on differences. An optimum whose (r0, r*) lie
        # strictly inside the plateau range is one of the boxed fit too (the box is inactive
        # around it; a boxed cost is never below the free one). Not for the other models: there
        # the free multi-start and trf in the box reach different basins
        # (studies/speed/findings.md 7)
        free = fit_curve(name, t, y, momentum=momentum, learning_rate=learning_rate,
                         every_start=every_start)
        if all(plateau_bounds[0] < free.params[k] < plateau_bounds[1] for k in ("r0", "r_star")):
            return scored_fit(model, t, y, free.theta, plateau_bounds)
    projection = VariableProjection(model, t, y, plateau_bounds)
    with np.errstate(all="ignore"):
        best = _multi_start(projection, loss=loss, every_start=every_start)
    if best is None:
        raise InputError(f"model {name!r} could not be fitted to this series")
    with np.errstate(over="ignore"):  # the shape's own errstate (the law is called directly)
        coef = projection.plateau_and_start(best.x)[0]
    return scored_fit(model, t, y, np.concatenate([coef, best.x]), plateau_bounds)


def _checked_range(plateau_bounds: tuple[float, float] | None) -> tuple[float, float] | None:
    """Return the plateau range as two floats, refusing a non-finite or empty one."""
    if plateau_bounds is None:
        return None
    lo_r, hi_r = map(float, plateau_bounds)
    if not (np.isfinite(lo_r) and np.isfinite(hi_r) and lo_r < hi_r):
        raise InputError(f"plateau_bounds must be finite with lo < hi, got {plateau_bounds}")
    return lo_r, hi_r


def _multi_start(projection: VariableProjection, *, loss: str, every_start: bool
                 ) -> Solution | OptimizeResult | None:
    """Descend from every start of the model's grid; return the lowest end point.

    The exponential law (one analytic shape parameter) runs the scalar Levenberg-Marquardt,
    other analytic models the general one, the inertial form the general one on differenced
    Jacobians; a robust loss, a plateau range or a learning-rate clock go through
    ``scipy.optimize.least_squares`` (trf). Unless ``every_start``, a later start of the scalar
    or differenced routes is skipped where the projected cost rises monotonically from the
    optimum found so far to it (:func:`profile_rises`). Run under ``np.errstate(all="ignore")``.

    Parameters
    ----------
    projection : VariableProjection
        The projected problem of the model on the series.
    loss : str
        ``"linear"`` or a robust loss of ``least_squares``.
    every_start : bool
        Run every start.

    Returns
    -------
    Solution or scipy.optimize.OptimizeResult or None
        The end point with the lowest cost (``x``, ``cost``); None when no start gave a finite
        one.
    """
    model, lower, upper = projection.model, projection.lower, projection.upper
    analytic = model.shape_jac is not None and projection.plateau_bounds is None
    best, best_cost = None, np.inf
    inside = (lower + 1e-12 * (upper - lower), upper - 1e-12 * (upper - lower))
    for start in model.starts:
        x0 = np.minimum(np.maximum(np.array(start, dtype=float), inside[0]), inside[1])
        if analytic and loss == "linear" and x0.size == 1:
            if best is not None and not every_start and profile_rises(
                    lambda phi: projection.scalar_cost(float(phi[0])), best.x, x0, best_cost):
                continue  # the cost rises from the optimum to this start: same basin
            sol = scalar_levenberg_marquardt(
                projection.scalar_cost, projection.scalar_derivatives, float(x0[0]),
                float(lower[0]), float(upper[0]), found=None if best is None else float(best.x[0]))
        elif analytic and loss == "linear":
            sol = levenberg_marquardt(projection.residual, projection.jacobian, x0, lower, upper)
        elif (loss == "linear" and projection.plateau_bounds is None
              and model.abscissa is None):
            # no analytic dU/dphi (the inertial closed form): forward differences of the
            # projected residual, in the same Levenberg-Marquardt
            if best is not None and not every_start and profile_rises(
                    projection.cost, best.x, x0, best_cost):
                continue  # the cost rises from the optimum to this start: same basin
            sol = levenberg_marquardt(projection.recorded_residual,
                                      projection.differenced_jacobian, x0, lower, upper)
        else:
            sol = _trust_region(projection, x0, loss=loss, analytic=analytic)
        if sol is not None and sol.cost < best_cost:
            best, best_cost = sol, sol.cost
    return best


def _trust_region(projection: VariableProjection, x0: np.ndarray, *, loss: str, analytic: bool
                  ) -> OptimizeResult | None:
    """Descend from x0 by ``least_squares`` (trf, in the box); None when it fails.

    The Jacobian is the projection's analytic one, or forward differences
    (:func:`two_point_jacobian`, scipy's own scheme) that reuse the residual just evaluated.
    The residual is passed in units of :func:`reward_unit`: ``least_squares``' gradient
    tolerance (``gtol``) and a robust loss's soft threshold (``f_scale`` = 1) are absolute in
    the residual's units (in reward units, a reward logged in units of 1e-6 would end at its
    start point). The returned ``cost`` is in squared reward units.
    """
    lower, upper = projection.lower, projection.upper
    unit = reward_unit(projection.y)

    def residual(phi: np.ndarray) -> np.ndarray:
        return projection.recorded_residual(phi) / unit

    def jac(phi: np.ndarray) -> np.ndarray:
        if analytic:
            return projection.jacobian(phi) / unit
        return two_point_jacobian(projection.recorded_residual, phi,
                                  projection.last_residual(phi), lower, upper) / unit

    try:
        sol = least_squares(residual, x0, jac=jac, bounds=(lower, upper), loss=loss,
                            x_scale="jac", method="trf", max_nfev=1000)
    except ValueError:
        return None
    if not np.all(np.isfinite(sol.fun)):
        return None
    sol.cost *= unit * unit  # back in squared reward units, as the other routes' costs
    return sol


def reward_unit(y: np.ndarray) -> float:
    """Return the power of two nearest the range of the rewards ``y``.

    Residuals in this unit are dimensionless, so a tolerance or threshold on them is relative
    to the reward's scale (the same fit in any unit of the reward); a power of two divides
    them exactly.

    Parameters
    ----------
    y : numpy.ndarray
        Rewards [reward], not all equal.

    Returns
    -------
    float
        2^k for the integer k nearest log2(max(y) - min(y)) [reward].
    """
    return math.ldexp(1.0, round(math.log2(float(np.ptp(y)))))


def fit_at(name: str, t: npt.ArrayLike, y: npt.ArrayLike, theta: npt.ArrayLike, *,
           momentum: float | None = None, learning_rate: npt.ArrayLike | None = None,
           plateau_bounds: tuple[float, float] | None = None) -> FitResult:
    """Return the :class:`FitResult` of model ``name`` at the parameters theta, without fitting.

    The result :func:`fit_curve` returns when its optimum is theta (the same model, box and
    statistics, bit for bit): a fit made elsewhere (another process, a Dask worker) is
    rebuilt from its parameters, since a model's shape functions cannot be pickled.

    Parameters
    ----------
    name, t, y, momentum, learning_rate, plateau_bounds
        As for :func:`fit_curve`.
    theta : array_like
        Parameters (r0, r*, *phi) in the model's order.

    Returns
    -------
    FitResult
        The fit at theta; its covariances are computed when first read.
    """
    t, y = _prepare(t, y)
    model = curve_model(name, t, y, momentum=momentum, learning_rate=learning_rate)
    theta = np.asarray(theta, dtype=float)
    if theta.shape != (len(model.params),):
        raise InputError(f"theta has shape {theta.shape}; model {name!r} has parameters "
                         f"{model.params}")
    bounds = None if plateau_bounds is None else tuple(map(float, plateau_bounds))
    return scored_fit(model, t, y, theta, bounds)


def fit_models(t: npt.ArrayLike, y: npt.ArrayLike, *,
               models: str | Iterable[str] = MODEL_NAMES,
               momentum: float | None = None, learning_rate: npt.ArrayLike | None = None
               ) -> dict[str, FitResult]:
    """Fit several models; ``exponential_lr`` is skipped when no learning rate is given.

    Each is :func:`fit_curve` with the default (Gaussian) loss (docs/theory.md section 3).

    Parameters
    ----------
    t, y : array_like
        Steps [steps] (strictly increasing; shifted to start at 0) and rewards [reward].
    models : str or iterable of str
        Model names (``MODEL_NAMES`` by default, or ``EXTRA_MODELS``); one name alone is one
        model.
    momentum : float, optional
        Optimiser momentum beta in [0, 0.999]: fixes mass and damping of ``inertial``
        (docs/theory.md section 2).
    learning_rate : array_like, optional
        Learning rate at each step of ``t`` [optimizer units]: the clock of ``exponential_lr``
        (docs/theory.md section 9).

    Returns
    -------
    dict of str to FitResult
        The fits by model name, in the order asked.

    Raises
    ------
    InputError
        When a model is unknown or cannot be fitted, or the series is invalid.
    """
    out = {}
    for name in (models,) if isinstance(models, str) else models:
        if name == "exponential_lr" and learning_rate is None:
            continue
        out[name] = fit_curve(name, t, y, momentum=momentum, learning_rate=learning_rate)
    return out
