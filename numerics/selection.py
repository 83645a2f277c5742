"""Information criteria of a reward-curve fit: the scores that select among models.

A fit's AIC and BIC under Gaussian errors (docs/theory.md section 3), n log(RSS / n) + 2 p and
n log(RSS / n) + p log n, compare models of different sizes on one series: the forecaster's
BIC weights and ``grpodyn fit --model all`` rank the models by them. :func:`scored_fit` gives
a fit at its parameters these scores, with its RSS and R^2.
"""

from __future__ import annotations

import numpy as np

from .curve_models import CurveModel
from .fit_result import FitResult
from .gram import dot

__all__ = ["information_criteria", "scored_fit"]


def information_criteria(rss: float, n: int, p: int) -> tuple[float, float]:
    """Return (AIC, BIC) of a least-squares fit under Gaussian errors.

    Parameters
    ----------
    rss : float
        Residual sum of squares, squared reward units.
    n : int
        Points fitted.
    p : int
        Parameters fitted.

    Returns
    -------
    tuple of float
        n log(RSS / n) + 2 p and n log(RSS / n) + p log n (an RSS of 0 counts as 1e-300).
    """
    log_lik_term = n * np.log(max(rss, 1e-300) / n)
    return log_lik_term + 2 * p, log_lik_term + p * np.log(n)


def scored_fit(model: CurveModel, t: np.ndarray, y: np.ndarray, theta: np.ndarray,
               plateau_bounds: tuple[float, float] | None) -> FitResult:
    """Return the fit of ``model`` at theta with its RSS, R^2 and information criteria.

    Parameters
    ----------
    model : CurveModel
        The model with its box.
    t, y : numpy.ndarray
        The prepared series: steps from the first logged point and rewards.
    theta : numpy.ndarray
        Parameters (r0, r*, *phi).
    plateau_bounds : tuple of float or None
        The plateau range the fit was constrained to.

    Returns
    -------
    FitResult
        The fit; its covariances are computed when first read.
    """
    residuals = y - model(t, theta)
    rss = dot(residuals, residuals)
    centred = y - y.sum() / y.size  # y - y.mean(), the same floats
    tss = float(np.sum(centred * centred))
    aic, bic = information_criteria(rss, y.size, theta.size)
    return FitResult(model, theta, t, y, rss, 1 - rss / tss, aic, bic, plateau_bounds)
