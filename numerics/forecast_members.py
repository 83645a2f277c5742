"""The forecast ensemble's members: a mean curve, its parameter uncertainty and its residual noise.

Each member is a mean curve m(t) (docs/theory.md section 6): ``level``, a random-walk local
level (the k -> 0 limit of the overdamped map); ``flat``; ``damped``, a damped trend (Gardner &
McKenzie 1985) from the line of the training part's recent half; ``linear`` on request; and the
saturating laws of :mod:`numerics.fit`. Its residual noise is :class:`ResidualNoise`.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from functools import cached_property
from typing import Any

import numpy as np

from grpodyn.ground import InputError

from .fit import FitResult, curve_model, fit_curve, hac_covariance, model_jacobian
from .forecast_noise import ResidualNoise, fit_random_walk, fit_residual_noise

__all__ = ["MEMBERS", "ALL_MEMBERS", "SATURATING", "Member", "fit_member", "member_from_fit",
           "fit_members"]

#: The forecaster's default members (those without their inputs are skipped). ``linear`` is
#: available but not a default: on the design runs (shipped tiny runs, bandit test bed) stacking
#: gave it most weight at F <= 0.3, where it wins the short validation horizons inside the
#: training part and loses the long ones (median MAE / noise floor at F = 0.2: 1.57 with it,
#: 1.29 without; ``benchmarks/forecast.py --only design --members ...``); a straight line is no
#: law of a bounded reward. ``damped`` is its bounded, slow-growth form: a run
#: with no curvature yet is forecast as such without a straight line's overshoot.
MEMBERS = ("level", "flat", "damped", "exponential", "power", "inertial", "exponential_lr")
ALL_MEMBERS = ("level", "flat", "linear", "damped", "exponential", "power", "inertial",
               "exponential_lr")
#: Members with a plateau r*.
SATURATING = ("exponential", "power", "inertial", "exponential_lr", "sigmoid")
#: The ``damped`` member's line is fitted on this trailing share of the training part (its
#: recent half: the slope at the cut, not the average slope since the start; set a priori).
_DAMPED_WINDOW = 0.5


@dataclass(frozen=True, eq=False)
class Member:
    """One fitted member: its mean curve, parameter uncertainty and residual noise.

    Compared by identity (``a == b`` is ``a is b``), as it holds arrays.

    The residual noise (a Kalman maximum likelihood, the costly part of a member at 1000
    points) is fitted on first use of :attr:`noise` and kept: a caller that weights members by
    BIC and never asks for a band does not pay for it.
    """

    name: str
    n_params: int
    t0: float
    t_last: float
    coef: np.ndarray
    coef_cov: np.ndarray
    rss: float
    n: int
    fit: FitResult | None = None
    future_model: Any = None
    steps: np.ndarray | None = None
    residuals: np.ndarray | None = None
    known_noise: ResidualNoise | None = None
    damping: float | None = None

    @cached_property
    def noise(self) -> ResidualNoise:
        """The residual noise (AR(1) + white, docs/theory.md section 6), fitted on first use."""
        if self.known_noise is not None:
            return self.known_noise
        return fit_residual_noise(self.steps, self.residuals)

    def _clock(self, t: np.ndarray) -> np.ndarray:
        """Return the abscissa of a line member at steps ``t``: t - t0, damped after the cut.

        For ``damped`` (memory ``damping`` = tau steps), beyond the cut at x_c = t_last - t0
        the abscissa is x_c + tau (1 - exp(-(x - x_c) / tau)): the continuous-time form of the
        damped trend's sum phi + phi^2 + ... + phi^h with phi = exp(-1 / tau).
        """
        x = np.asarray(t, dtype=float) - self.t0
        if self.damping is None:
            return x
        cut = self.t_last - self.t0
        ahead = np.maximum(x - cut, 0.0)
        if self.damping <= 0:
            return np.where(x > cut, cut, x)
        return np.where(x > cut, cut + self.damping * -np.expm1(-ahead / self.damping), x)

    def mean_curve(self, t: np.ndarray) -> np.ndarray:
        """Return the member's mean reward at steps ``t`` (absolute steps)."""
        x = np.asarray(t, dtype=float) - self.t0
        if self.fit is None:
            x = self._clock(t)
            return self.coef[0] + (self.coef[1] if self.coef.size > 1 else 0.0) * x
        model = self.future_model or self.fit.model
        return model(x, self.fit.theta)

    def param_var(self, t: np.ndarray) -> np.ndarray:
        """Return the variance of the mean curve from the parameter covariance (delta method)."""
        x = np.asarray(t, dtype=float) - self.t0
        if self.fit is None:
            x = self._clock(t)
            design = np.column_stack([np.ones_like(x), x][: self.coef.size])
        else:
            design = model_jacobian(self.future_model or self.fit.model, x, self.fit.theta)
        cov = self.coef_cov if self.fit is None else self.fit.covariance
        var = np.einsum("ij,jk,ik->i", design, cov, design)
        return np.where(np.isfinite(var) & (var > 0), var, 0.0)

    def predictive(self, t: np.ndarray, bounds: tuple[float, float] | None
                   ) -> tuple[np.ndarray, np.ndarray]:
        """Return mean and variance of new observations at steps ``t`` after the cut."""
        t = np.asarray(t, dtype=float)
        lag = np.maximum(t - self.t_last, 0.0)
        shift, noise_var = self.noise.predict(lag)
        mean = self.mean_curve(t) + shift
        var = noise_var + self.param_var(t)
        if bounds is not None:
            mean = np.clip(mean, *bounds)
            var = np.minimum(var, (bounds[1] - bounds[0]) ** 2)
        return mean, var

    @property
    def bic(self) -> float:
        """Bayesian information criterion of the member's fit (Gaussian residuals)."""
        return float(self.n * np.log(max(self.rss, 1e-300) / self.n)
                     + self.n_params * np.log(self.n))


def fit_member(name: str, t: np.ndarray, y: np.ndarray, *, momentum: float | None = None,
               learning_rate: tuple[np.ndarray, np.ndarray] | None = None,
               bounds: tuple[float, float] | None = None) -> Member:
    """Fit member ``name`` on (t, y).

    Parameters
    ----------
    name : str
        One of ``ALL_MEMBERS`` (or any curve of :func:`numerics.fit.fit_curve`).
    t, y : numpy.ndarray
        Steps and rewards of the training part.
    momentum : float, optional
        Optimiser momentum, for ``inertial``.
    learning_rate : (steps, lr), optional
        The learning rate over the training part AND the future (the clock of
        ``exponential_lr`` must extend past the cut).
    bounds : (lo, hi), optional
        The reward range.

    Returns
    -------
    Member
        The fitted member (its residual noise is fitted on first use).
    """
    t0 = float(t[0])
    if name == "level":
        noise, level, squares = fit_random_walk(t, y)
        return Member(name, 2, t0, float(t[-1]), np.array([level]), np.zeros((1, 1)), squares,
                      t.size, known_noise=noise)
    if name == "damped":  # the line of the recent part: the slope at the cut
        keep = int(round(_DAMPED_WINDOW * t.size))
        if keep < 8:
            raise InputError("damped: fewer than 8 points in the recent half of the training part")
        t, y = t[-keep:], y[-keep:]
        if np.ptp(y) == 0:
            raise InputError("damped: the recent half of the training part is constant")
        t0 = float(t[0])
    if name in ("flat", "linear", "damped"):
        x = t - t0
        design = np.ones((t.size, 1)) if name == "flat" else np.column_stack([np.ones_like(x),
                                                                               x])
        coef, *_ = np.linalg.lstsq(design, y, rcond=None)
        resid = y - design @ coef
        cov = hac_covariance(design, resid)
        memory = _damping(coef, float(x[-1]), bounds) if name == "damped" else None
        return Member(name, design.shape[1], t0, float(t[-1]), coef, cov,
                      float(resid @ resid), t.size, steps=t, residuals=resid, damping=memory)
    if name == "exponential_lr":
        if learning_rate is None:
            raise InputError("exponential_lr needs the learning rate")
        lr_steps, lr = learning_rate
        fit = fit_curve(name, t, y, learning_rate=np.interp(t, lr_steps, lr),
                        plateau_bounds=bounds)
        return member_from_fit(fit, t, learning_rate=learning_rate)
    fit = fit_curve(name, t, y, momentum=momentum if name == "inertial" else None,
                    plateau_bounds=bounds)
    return member_from_fit(fit, t)


def _damping(coef: np.ndarray, span: float, bounds: tuple[float, float] | None) -> float:
    """Return the memory tau (steps) of the damped trend fitted on a training span ``span``.

    A trend seen over a span T carries on with memory T: beyond the cut the line's level at
    the cut rises by b tau (1 - exp(-h / tau)), at most b T more (as much again as the line
    rose over the training part), i.e. the early part of an overdamped relaxation (docs/theory.md
    section 3) whose time constant the training part does not determine. With a reward range
    the total further rise b tau is capped at the distance from the level at the cut to the
    edge the slope points to, so that the forecast never leaves the range.
    """
    level, slope = float(coef[0] + coef[1] * span), float(coef[1])
    memory = span
    if bounds is not None and slope != 0:
        room = (bounds[1] - level) if slope > 0 else (bounds[0] - level)
        memory = min(memory, max(room / slope, 0.0))
    return float(memory)


def member_from_fit(fit: FitResult, t: np.ndarray, *,
                    learning_rate: tuple[np.ndarray, np.ndarray] | None = None) -> Member:
    """Wrap a curve fit already made on steps ``t`` as a forecast member (no refit).

    Parameters
    ----------
    fit : FitResult
        A fit of :func:`numerics.fit.fit_curve` on (t, y).
    t : numpy.ndarray
        The steps the fit was made on (absolute, not shifted).
    learning_rate : (steps, lr), optional
        For ``exponential_lr``: the schedule over the training part and the future, so that
        the member's clock reaches past the cut.

    Returns
    -------
    Member
        The member (its residual noise is fitted on first use).
    """
    t = np.asarray(t, dtype=float)
    t0 = float(t[0])
    future_model = None
    if fit.model.name == "exponential_lr":
        if learning_rate is None:
            raise InputError("exponential_lr needs the learning rate")
        lr_steps, lr = learning_rate
        extended = curve_model("exponential_lr", lr_steps - t0,
                               np.interp(lr_steps, t, fit.y), learning_rate=lr)
        future_model = replace(fit.model, shape=extended.shape)
    resid = fit.y - fit.model(fit.t, fit.theta)
    return Member(fit.model.name, fit.theta.size, t0, float(t[-1]), fit.theta, fit.covariance,
                  fit.rss, t.size, fit, future_model, steps=t, residuals=resid)



def fit_members(names: list[str], t: np.ndarray, y: np.ndarray, **kwargs: Any
             ) -> dict[str, Member]:
    """Fit every member of ``names`` that can be fitted (the others are left out)."""
    out = {}
    for name in names:
        try:
            out[name] = fit_member(name, t, y, **kwargs)
        except InputError:
            continue
    return out

