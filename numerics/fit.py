"""Fitting reward curves: the inertial closed form, the empirical law and baselines.

Models (time t counted from the first logged step):

- ``inertial``: the closed form of THEORY.md section 2 with v0 = 0,
  r(t) = r* + (r0 - r*) E(t; zeta, omega0); with the optimiser's momentum known, mass and damping
  are fixed and only r0, r*, stiffness are free.
- ``exponential``: the empirical law r* - (r* - r0) exp(-t/tau) (derivation ``saturation_law``).
- ``sigmoid``: a logistic baseline between two plateaus.
- ``exponential_lr``: the overdamped law on the learning-rate clock, r* + (r0 - r*)
  exp(-A(t)/A_tau) with A(t) the cumulative learning rate: the warmup-aware variant (a linear
  warmup gives the Gaussian start of derivation ``warmup_trajectory``).
- ``power``: a saturating power law r* + (r0 - r*) / (1 + (t/t_mid)^b), the sigmoid in log time
  of the compute-performance law of RL scaling studies (ScaleRL, 2025): a slow-growth model whose
  approach to the plateau is algebraic, not exponential.

A plateau range (``plateau_bounds``, e.g. the [0, 1] of an accuracy) constrains r*: the
variable projection solves (r0, r*) under the box exactly (a convex quadratic in two unknowns).

Least squares is multi-start (deterministic starting grid) with bounds. Standard errors use a
Newey-West (HAC) covariance, because the residuals of a stochastic run are autocorrelated; with
white residuals it reduces to the usual sigma^2 (J^T J)^-1. The noise ceiling of R^2 comes from the
observation noise estimated from first differences.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace
from functools import cache, cached_property
from itertools import product
from typing import Any

import numpy as np
import numpy.typing as npt
from scipy.optimize import least_squares
from scipy.special import stdtrit

from grpodyn.ground import InputError, check_finite, check_momentum

from .compiled import compiled, signature, symbol_info
from .trajectory import closed_form

__all__ = ["CurveModel", "FitResult", "NoiseEstimate", "MODEL_NAMES", "EXTRA_MODELS", "MODELS",
           "curve_model", "fit_curve", "fit_at", "fit_models", "estimate_noise"]

MODEL_NAMES = ("inertial", "exponential", "sigmoid", "exponential_lr")
#: Models fitted on request only (not part of ``fit --model all``).
EXTRA_MODELS = ("power",)


@dataclass(frozen=True)
class CurveModel:
    """A reward-curve model r(t) = r* + (r0 - r*) U(t; phi).

    Every model here is linear in (r0, r*), so those two are solved exactly for each shape
    parameter vector phi (variable projection); bounds and starting points concern phi only.
    Build one from a registered derivation with :meth:`from_derivation` and scale its box and
    starting points to a series with :meth:`guess`.

    Attributes
    ----------
    name : str
        Model name (a key of ``MODELS`` for the built-in ones).
    shape_params : tuple of str
        Names of phi.
    shape : callable
        ``U(t, *phi)``, the unit curve: U = 1 at the start level r0, U = 0 on the plateau r*.
    lower, upper : tuple of float
        The fit's box for phi (within ``domain``).
    starts : tuple of tuple of float
        Starting points of the multi-start fit (empty before :meth:`guess`).
    fixed : dict of str to float
        Constants the model was built with (e.g. the optimiser's momentum).
    derivation : str or None
        The registered derivation the model was built from, None for an explicit model.
    shape_jac : callable or None
        ``dU/dphi(t, *phi)`` as an (n, len(phi)) array (analytic, from the registry's
        ``<derivation>_d_<param>``); finite differences when None.
    domain : tuple of (float, float)
        Where each phi is defined, from its symbol's assumptions (positive: (0, inf)).
    abscissa : callable or None
        Map from t to the law's time argument (the learning-rate clock of ``exponential_lr``).
    """

    name: str
    shape_params: tuple[str, ...]
    shape: Callable[..., np.ndarray]
    lower: tuple[float, ...]
    upper: tuple[float, ...]
    starts: tuple[tuple[float, ...], ...] = ()
    fixed: dict[str, float] = field(default_factory=dict)
    derivation: str | None = None
    shape_jac: Callable[..., np.ndarray] | None = None
    domain: tuple[tuple[float, float], ...] = ()
    abscissa: Callable[[np.ndarray], np.ndarray] | None = None

    @classmethod
    def from_derivation(cls, derivation: str, *, name: str | None = None,
                        rename: dict[str, str] | None = None,
                        abscissa: Callable[[np.ndarray], np.ndarray] | None = None
                        ) -> CurveModel:
        """Build the model of a registered law ``f(t, r0, r_star, *phi)`` (no sympy).

        Parameters
        ----------
        derivation
            Name of a derivation whose arguments start with ``t, r0, r_star`` and which is
            affine in (r0, r*) as r* + (r0 - r*) U(t; phi) (``saturation_law``, ``sigmoid_law``,
            ``power_law``).
        name
            Model name; the derivation's name by default.
        rename
            Public names of some shape parameters (e.g. ``{"tau": "lr_time"}``).
        abscissa
            Map from t to the law's time argument (e.g. the learning-rate clock). A model with an
            abscissa has no analytic Jacobian: the forecaster swaps its shape to extend the clock.

        Returns
        -------
        CurveModel
            Parameter names from the derivation's arguments, ``domain`` (and a box equal to it)
            from the symbols' assumptions, and ``shape_jac`` from the registered
            ``<derivation>_d_<param>`` derivations when they all exist; no starting points yet
            (:meth:`guess`).

        Raises
        ------
        InputError
            If the derivation is unknown or its arguments are not ``t, r0, r_star, ...``.
        """
        try:
            args = signature(derivation)
        except KeyError:
            raise InputError(f"no derivation named {derivation!r}") from None
        if args[:3] != ("t", "r0", "r_star") or len(args) < 4:
            raise InputError(f"derivation {derivation!r} has arguments {args}: a fit model needs "
                             "(t, r0, r_star, shape parameters...)")
        phi = args[3:]
        law = compiled(derivation)
        x_of = abscissa if abscissa is not None else (lambda t: t)

        def shape(t: np.ndarray, *values: float) -> np.ndarray:
            with np.errstate(over="ignore"):  # exp overflow: the logistic's tail, U = 0
                return law(x_of(t), 1.0, 0.0, *values)

        shape_jac = None
        columns_exist = all(f"{derivation}_d_{p}" in _registered() for p in phi)
        if abscissa is None and columns_exist:
            columns = tuple(compiled(f"{derivation}_d_{p}") for p in phi)

            def shape_jac(t: np.ndarray, *values: float) -> np.ndarray:
                out = np.empty((t.size, len(columns)))
                with np.errstate(all="ignore"):
                    for j, column in enumerate(columns):
                        try:
                            out[:, j] = column(t, 1.0, 0.0, *values)
                        except ValueError:  # a column defined only for t > 0 (power law's
                            # d/d exponent): central differences of U at t = 0
                            inside = t > 0
                            out[inside, j] = column(t[inside], 1.0, 0.0, *values)
                            out[~inside, j] = _difference(shape, t[~inside], values, j)
                return out

        domain = tuple(_assumed_range(p) for p in phi)
        names = tuple((rename or {}).get(p, p) for p in phi)
        return cls(name or derivation, names, shape, tuple(lo for lo, _ in domain),
                   tuple(hi for _, hi in domain), derivation=derivation, shape_jac=shape_jac,
                   domain=domain, abscissa=abscissa)

    def guess(self, t: np.ndarray, y: np.ndarray) -> CurveModel:
        """Return this model with a box and starting points scaled to the series (t, y).

        The built-in models keep their own rule (``_GUESSES``); a model of a new law gets a
        rule from its parameters' units: times (unit steps) range over 1e-3 .. 100 spans and
        start at the relaxation guess, a tenth of the span and the span; other parameters start
        at 1 within 1e-3 .. 1e3 (or -1e3 .. 1e3 when they may be negative).

        Parameters
        ----------
        t, y : numpy.ndarray
            Times from the first logged point [steps] and rewards.

        Returns
        -------
        CurveModel
            A copy with ``lower``, ``upper`` and ``starts`` set, all within ``domain``.
        """
        rule = _GUESSES.get(self.name, _unit_guess)
        lower, upper, starts = rule(self, t, y)
        if self.domain:
            lower = tuple(max(lo, d_lo) for lo, (d_lo, _) in zip(lower, self.domain, strict=True))
            upper = tuple(min(hi, d_hi) for hi, (_, d_hi) in zip(upper, self.domain, strict=True))
        return replace(self, lower=tuple(lower), upper=tuple(upper), starts=tuple(starts))

    @property
    def params(self) -> tuple[str, ...]:
        """All parameter names: r0, r_star and the shape parameters."""
        return ("r0", "r_star", *self.shape_params)

    def __call__(self, t: np.ndarray, theta: np.ndarray) -> np.ndarray:
        """Evaluate r(t) for the parameter vector theta = (r0, r*, *phi)."""
        r0, r_star, *phi = theta
        return r_star + (r0 - r_star) * self.shape(t, *phi)


def _difference(shape: Callable[..., np.ndarray], t: np.ndarray, values: tuple[float, ...],
                j: int) -> np.ndarray:
    """Return dU/dphi_j at t by central differences (relative step 1e-6)."""
    h = 1e-6 * max(abs(values[j]), 1e-3)
    up, down = list(values), list(values)
    up[j] += h
    down[j] -= h
    return (shape(t, *up) - shape(t, *down)) / (2 * h)


@cache
def _registered() -> frozenset[str]:
    """Names of every compiled derivation."""
    from .compiled import registered_names

    return registered_names()


def _assumed_range(parameter: str) -> tuple[float, float]:
    """Return the interval a parameter's declared assumptions allow (positive: (0, inf))."""
    _, _, assumptions = symbol_info(parameter)
    if "positive" in assumptions or "nonnegative" in assumptions:
        return 0.0, np.inf
    if "negative" in assumptions or "nonpositive" in assumptions:
        return -np.inf, 0.0
    return -np.inf, np.inf


@dataclass(frozen=True)
class NoiseEstimate:
    """Observation noise of a reward series and the R^2 it allows."""

    sigma: float
    r2_ceiling: float
    method: str


@dataclass(frozen=True)
class FitResult:
    """A fitted model with uncertainties and information criteria.

    The covariances are computed when first read (and kept): a fit whose errors are never read
    costs only the optimisation. ``covariance`` is the theory's (process noise, THEORY.md
    section 6; Newey-West where the model has no stochastic theory or the steps are irregular),
    ``plain_covariance`` the white-noise s^2 (J^T J)^-1 that ``scipy.optimize.curve_fit``
    returns.
    """

    model: CurveModel
    theta: np.ndarray
    t: np.ndarray
    y: np.ndarray
    rss: float
    r2: float
    aic: float
    bic: float
    plateau_bounds: tuple[float, float] | None = None

    @cached_property
    def jacobian(self) -> np.ndarray:
        """Jacobian of the model at the estimate, shape (n, p) (:func:`model_jacobian`)."""
        return model_jacobian(self.model, self.t, self.theta)

    @cached_property
    def covariance(self) -> np.ndarray:
        """Covariance of the parameters under the theory's residual process (THEORY.md s. 6).

        The sandwich with residual covariance q R + sigma^2 I (:func:`_model_covariance`), or
        the Newey-West covariance (:func:`hac_covariance`) where the model has no process
        theory or the steps are irregular. Shape (p, p), in squared parameter units.
        """
        residuals = self.y - self.model(self.t, self.theta)
        covariance = _model_covariance(self.model, self.theta, self.t, self.jacobian, residuals)
        return hac_covariance(self.jacobian, residuals) if covariance is None else covariance

    @cached_property
    def plain_covariance(self) -> np.ndarray:
        """White-noise covariance s^2 (J^T J)^+ with s^2 = RSS / (n - p).

        What ``scipy.optimize.curve_fit`` returns (``absolute_sigma=False``); it ignores the
        serial correlation of a training run's residuals (THEORY.md section 6), so the fit's
        errors and intervals use :attr:`covariance`. Shape (p, p).
        """
        jac = self.jacobian
        return self.rss / max(self.n - self.theta.size, 1) * _gram_inverse(_gram(jac, jac))

    @property
    def n(self) -> int:
        """Number of points fitted."""
        return int(self.t.size)

    @property
    def params(self) -> dict[str, float]:
        """Fitted parameters by name."""
        return dict(zip(self.model.params, map(float, self.theta), strict=True))

    @property
    def stderr(self) -> dict[str, float]:
        """Standard errors by name.

        NaN where the covariance is numerically not positive (a parameter
        the data do not identify, e.g. the damping of a curve that shows no inertia).
        """
        diagonal = np.diag(self.covariance)
        errors = np.sqrt(np.where(diagonal >= 0, diagonal, np.nan))
        return dict(zip(self.model.params, map(float, errors), strict=True))

    @property
    def at_bounds(self) -> tuple[str, ...]:
        """Parameters that sit on a bound of the fit: results of the box, not of the data.

        Within 0.1% of the bound, or on the plateau range.
        """
        out = []
        for name, value, lo, hi in zip(self.model.shape_params, self.theta[2:],
                                       self.model.lower, self.model.upper, strict=True):
            scale = 1e-3 * (hi - lo)  # for a bound at 0, closeness relative to the box
            if (value - lo <= 1e-3 * max(abs(lo), scale)
                    or hi - value <= 1e-3 * max(abs(hi), scale)):
                out.append(name)
        if self.plateau_bounds is not None:
            lo, hi = self.plateau_bounds
            tol = 1e-9 * max(hi - lo, 1e-12)
            if self.theta[1] <= lo + tol or self.theta[1] >= hi - tol:
                out.append("r_star")
        return tuple(out)

    @property
    def singular(self) -> bool:
        """Whether no standard error is meaningful.

        True when the information matrix J^T J is numerically singular (condition number
        above 1e12) or the covariance has a non-finite or negative diagonal: then no standard
        error is meaningful.
        """
        jac = self.jacobian
        with np.errstate(all="ignore"):
            info = _gram(jac, jac)
            scale = np.sqrt(np.clip(np.diag(info), 1e-300, None))
            cond = np.linalg.cond(info / np.outer(scale, scale))
        diagonal = np.diag(self.covariance)
        return bool(not np.isfinite(cond) or cond > 1e12 or not np.all(np.isfinite(diagonal))
                    or np.any(diagonal < 0))

    def interval(self, level: float = 0.95) -> dict[str, tuple[float, float]]:
        """Confidence intervals from the t distribution with n - p degrees of freedom."""
        q = stdtrit(max(self.n - self.theta.size, 1), 0.5 + level / 2)  # Student t quantile
        return {name: (value - q * err, value + q * err)
                for (name, value), err in zip(self.params.items(), self.stderr.values(),
                                              strict=True)}

    def predict(self, t: npt.ArrayLike) -> np.ndarray:
        """Evaluate the fitted curve at t (steps from the first logged point)."""
        return self.model(np.asarray(t, dtype=float), self.theta)

    def prediction_band(self, t: npt.ArrayLike, level: float = 0.95
                        ) -> tuple[np.ndarray, np.ndarray]:
        """Band for new observations: model uncertainty (delta method) plus residual noise."""
        t = np.asarray(t, dtype=float)
        jac = model_jacobian(self.model, t, self.theta)
        model_var = np.einsum("ij,jk,ik->i", jac, self.covariance, jac)
        dof = max(self.n - self.theta.size, 1)
        noise_var = self.rss / dof
        q = stdtrit(dof, 0.5 + level / 2)  # Student t quantile
        half = q * np.sqrt(np.maximum(model_var, 0) + noise_var)
        centre = self.predict(t)
        return centre - half, centre + half

    def derived(self) -> dict[str, float]:
        """Physical constants implied by the parameters (relaxation time, stiffness, ...)."""
        p = self.params
        if self.model.name == "inertial":
            if "stiffness" in p:
                beta = self.model.fixed["momentum"]
                return {"zeta": float(compiled("damping_ratio")(beta, p["stiffness"])),
                        "omega0": float(compiled("natural_frequency")(beta, p["stiffness"])),
                        "tau": float((1 - beta) / p["stiffness"]),
                        "inertial_delay": float(compiled("inertial_delay")(beta))}
            return {"tau": 2 * p["zeta"] / p["omega0"],
                    "inertial_delay": 1 / (2 * p["zeta"] * p["omega0"])}
        return {}

    def report(self, *, level: float = 0.95) -> str:
        """Return the fit as text: model, statistics, parameters with errors and intervals.

        Parameters
        ----------
        level
            Confidence level of the intervals (t distribution, n - p degrees of freedom).

        Returns
        -------
        str
            One header line, the fit statistics, one line per parameter (value, standard error,
            interval, and "at bound" where the box and not the data placed it) and the derived
            constants.
        """
        source = (f"derivation {self.model.derivation}" if self.model.derivation
                  else "explicit closed form")
        lines = [f"[[Model]] {self.model.name} ({source})",
                 f"[[Fit statistics]] points {self.n}, parameters {self.theta.size}, "
                 f"RSS {self.rss:.6g}, R^2 {self.r2:.4f}, AIC {self.aic:.2f}, BIC {self.bic:.2f}"]
        if self.singular:
            lines.append("    the information matrix is singular: no standard error is meaningful")
        lines.append("[[Parameters]]")
        bounds, intervals = set(self.at_bounds), self.interval(level)
        for name, value in self.params.items():
            err = self.stderr[name]
            text = f"    {name:>10} = {value:.6g}"
            if not self.singular and np.isfinite(err):
                lo, hi = intervals[name]
                text += f" +/- {err:.3g}  ({100 * level:.0f}%: {lo:.6g} .. {hi:.6g})"
            if name in bounds:
                text += "  (at bound)"
            lines.append(text)
        for key, value in self.model.fixed.items():
            lines.append(f"    {key:>10} = {value:.6g}  (fixed)")
        derived = self.derived()
        if derived:
            lines.append("[[Derived]]")
            lines += [f"    {key:>10} = {value:.6g}" for key, value in derived.items()]
        return "\n".join(lines)

    def _repr_html_(self) -> str:
        """Return the fit as an HTML table (Jupyter's rich display)."""
        from html import escape

        bounds = set(self.at_bounds)
        rows = "".join(
            f"<tr><td>{escape(name)}</td><td>{value:.6g}</td>"
            f"<td>{'' if self.singular or not np.isfinite(self.stderr[name]) else f'{self.stderr[name]:.3g}'}</td>"  # noqa: E501
            f"<td>{'at bound' if name in bounds else ''}</td></tr>"
            for name, value in self.params.items())
        return (f"<h4>{escape(self.model.name)} fit: {self.n} points, R<sup>2</sup> "
                f"{self.r2:.4f}, AIC {self.aic:.2f}, BIC {self.bic:.2f}</h4>"
                "<table><tr><th>parameter</th><th>value</th><th>standard error</th><th></th></tr>"
                f"{rows}</table>")

    def plot(self, *, ax: Any = None, level: float = 0.95) -> Any:
        """Plot the data, the fitted curve and its prediction band (matplotlib).

        Parameters
        ----------
        ax
            Matplotlib axes to draw on; a new figure's axes when None.
        level
            Level of the prediction band for new observations.

        Returns
        -------
        matplotlib.axes.Axes
            The axes drawn on.
        """
        if ax is None:
            import matplotlib.pyplot as plt

            _, ax = plt.subplots(figsize=(6, 3.5))
        grid = np.linspace(self.t[0], self.t[-1], min(self.n * 4, 2000))
        lower, upper = self.prediction_band(grid, level)
        ax.plot(self.t, self.y, ".", ms=2, color="0.5", label="data")
        ax.plot(grid, self.predict(grid), color="C0", label=f"{self.model.name} fit")
        ax.fill_between(grid, lower, upper, color="C0", alpha=0.2,
                        label=f"{100 * level:.0f}% prediction band")
        ax.set_xlabel("steps from the first logged point")
        ax.set_ylabel("reward")
        ax.legend(frameon=False)
        return ax

    def to_dict(self) -> dict[str, Any]:
        """Return the fit as the CLI's JSON object (non-finite numbers as None)."""
        def clean(value: float) -> float | None:
            return float(value) if np.isfinite(value) else None

        out = {"params": {k: clean(v) for k, v in self.params.items()},
               "stderr": {k: clean(v) for k, v in self.stderr.items()},
               "r2": clean(self.r2), "aic": clean(self.aic), "bic": clean(self.bic),
               "n_params": int(self.theta.size)}
        out["at_bounds"] = list(self.at_bounds)
        out["singular"] = self.singular
        if out["singular"]:
            out["stderr"] = {k: None for k in out["stderr"]}
        if self.model.fixed:
            out["fixed"] = dict(self.model.fixed)
        derived = self.derived()
        if derived:
            out["derived"] = {k: clean(v) for k, v in derived.items()}
        return out


def _inertial_unit(t: np.ndarray, zeta: float, omega0: float) -> np.ndarray:
    """Evaluate the closed-form e(t) from (1, 0), valid in every regime.

    No input validation: the fit's bounds keep the arguments valid.
    """
    return closed_form(t, 1.0, 0.0, zeta, omega0)


#: 1 - 1/e: the share of the way an exponential relaxation covers in one relaxation time.
_SIXTY_THREE_PERCENT = 1 - np.exp(-1)


def _relaxation_guess(t: np.ndarray, y: np.ndarray) -> float:
    """Time for a moving average of y to cover 63% of the way from its head to its tail."""
    window = max(1, y.size // 20)
    sums = np.empty(y.size + 1)
    sums[0] = 0.0
    np.cumsum(y, out=sums[1:])  # the running sums from 0
    smooth = (sums[window:] - sums[:-window]) / window  # moving average, O(n) in any window
    head, tail = smooth[0], smooth[-1]
    if head == tail:
        return float(max(t[-1] - t[0], 1.0)) / 3
    crossed = (smooth - head) / (tail - head) >= _SIXTY_THREE_PERCENT
    first = int(crossed.argmax())  # the first crossing, if any
    index = min(first + window // 2, t.size - 1) if crossed[first] else t.size - 1
    return float(max(t[index] - t[0], (t[-1] - t[0]) / 100, 1e-3))


_Box = tuple[tuple[float, ...], tuple[float, ...], tuple[tuple[float, ...], ...]]


def _span(t: np.ndarray) -> float:
    return float(max(t[-1] - t[0], 1.0))


def _exponential_guess(model: CurveModel, t: np.ndarray, y: np.ndarray) -> _Box:
    span = _span(t)
    taus = (_relaxation_guess(t, y), span / 10, span)
    return (1e-3,), (100 * span,), tuple((tau,) for tau in taus)


def _sigmoid_guess(model: CurveModel, t: np.ndarray, y: np.ndarray) -> _Box:
    span = _span(t)
    return ((0.0, 1e-3), (2 * span, 10 * span),
            tuple((mid, w) for mid in (span / 5, span / 2) for w in (span / 20, span / 5)))


def _power_guess(model: CurveModel, t: np.ndarray, y: np.ndarray) -> _Box:
    span = _span(t)
    mids = (_relaxation_guess(t, y), span)
    return ((span / 100, 0.2), (100 * span, 5.0),
            tuple((mid, b) for mid in mids for b in (0.7, 1.5)))


def _clock_guess(model: CurveModel, t: np.ndarray, y: np.ndarray) -> _Box:
    total = float(max(model.abscissa(t[-1:])[0], 1e-300))
    return (total * 1e-4,), (total * 100,), tuple((total * f,) for f in (0.1, 0.3, 1.0))


def _unit_guess(model: CurveModel, t: np.ndarray, y: np.ndarray) -> _Box:
    """Box and starts of a model without its own rule, from its parameters' units."""
    span = _span(t)
    lower, upper, grids = [], [], []
    for raw, (lo, _) in zip(_raw_names(model), model.domain or [(-np.inf, np.inf)] *
                            len(model.shape_params), strict=True):
        if symbol_info(raw)[0] == "steps":
            lower.append(1e-3)
            upper.append(100 * span)
            grids.append((_relaxation_guess(t, y), span / 10, span))
        else:
            lower.append(1e-3 if lo >= 0 else -1e3)
            upper.append(1e3)
            grids.append((1.0,))
    return tuple(lower), tuple(upper), tuple(product(*grids))


def _raw_names(model: CurveModel) -> tuple[str, ...]:
    """Return the derivation's names of the shape parameters (before any renaming)."""
    if model.derivation is None:
        return model.shape_params
    return signature(model.derivation)[3:]


#: Built-in models with their own starting rule (kept from the hand-tuned fits: the fitted
#: values of the shipped logs do not change); a new law falls back on ``_unit_guess``.
_GUESSES: dict[str, Callable[[CurveModel, np.ndarray, np.ndarray], _Box]] = {
    "exponential": _exponential_guess, "sigmoid": _sigmoid_guess, "power": _power_guess,
    "exponential_lr": _clock_guess,
}

#: model name -> (derivation, shape parameters renamed): the models built from the registry.
#: ``inertial`` stays explicit: it is the closed form of ``numerics.trajectory`` valid in every
#: regime, where each generated trajectory covers one regime and refuses the others.
MODELS: dict[str, tuple[str, dict[str, str]]] = {
    "exponential": ("saturation_law", {}),
    "sigmoid": ("sigmoid_law", {}),
    "power": ("power_law", {}),
    "exponential_lr": ("saturation_law", {"tau": "lr_time"}),
}


def _lr_clock(t: np.ndarray, learning_rate: np.ndarray | None) -> np.ndarray:
    """Cumulative learning rate A(t) by the trapezoid rule, checked."""
    if learning_rate is None:
        raise InputError("exponential_lr needs the learning rate of every point")
    lr = np.asarray(learning_rate, dtype=float)
    if lr.shape != t.shape or not np.all(np.isfinite(lr)) or np.any(lr < 0):
        raise InputError("learning rate must be finite, non-negative, one per point")
    return np.concatenate([[0.0], np.cumsum(0.5 * (lr[1:] + lr[:-1]) * np.diff(t))])


def _inertial_model(t: np.ndarray, y: np.ndarray, momentum: float | None) -> CurveModel:
    """Build the explicit inertial model (closed form, every regime), scaled to the series."""
    span = _span(t)
    guess = _relaxation_guess(t, y)
    taus = (guess, span / 10, span)
    if momentum is not None:
        beta = float(check_momentum(momentum))
        zeta_of, omega_of = compiled("damping_ratio"), compiled("natural_frequency")

        def fixed_mass(t: np.ndarray, stiffness: float) -> np.ndarray:
            return _inertial_unit(t, zeta_of(beta, stiffness), omega_of(beta, stiffness))
        c = 1 - beta
        return CurveModel("inertial", ("stiffness",), fixed_mass, (1e-9,), (2 * (1 + beta),),
                          tuple((c / tau,) for tau in taus), fixed={"momentum": beta},
                          domain=((0.0, np.inf),))
    return CurveModel("inertial", ("zeta", "omega0"), _inertial_unit, (0.05, 1e-5), (1e3, 10.0),
                      ((0.7, 1.4 / guess), (1.5, 3.0 / guess), (5.0, 10.0 / guess),
                       (1.5, 30.0 / span)), domain=((0.0, np.inf), (0.0, np.inf)))


@cache
def _registry_model(name: str) -> CurveModel:
    """Return the model ``name`` of ``MODELS`` on the step clock, built once (before guess).

    Built from the generated module (:meth:`CurveModel.from_derivation`), which does not
    change while the process runs; a fit scales a copy of it (:meth:`CurveModel.guess`).
    """
    derivation, rename = MODELS[name]
    return CurveModel.from_derivation(derivation, name=name, rename=rename)


def curve_model(name: str, t: np.ndarray, y: np.ndarray, *, momentum: float | None = None,
                learning_rate: np.ndarray | None = None) -> CurveModel:
    """Return the model ``name`` with bounds and starting points scaled to the data.

    Parameters
    ----------
    name
        One of ``MODEL_NAMES`` or ``EXTRA_MODELS``.
    t, y
        Times (steps from the first logged point) and rewards.
    momentum
        Optimiser momentum: fixes mass and damping of the ``inertial`` model.
    learning_rate
        Learning rate at each t: required by ``exponential_lr``.

    Returns
    -------
    CurveModel
        Built from its derivation (``MODELS``) and :meth:`CurveModel.guess`, or the explicit
        inertial model.
    """
    if name == "inertial":
        return _inertial_model(t, y, momentum)
    if name not in MODELS:
        raise InputError(f"unknown model {name!r}; choose from "
                         f"{', '.join(MODEL_NAMES + EXTRA_MODELS)}")
    if name != "exponential_lr":
        return _registry_model(name).guess(t, y)
    derivation, rename = MODELS[name]
    clock = _lr_clock(t, learning_rate)

    def on_clock(t_eval: np.ndarray) -> np.ndarray:
        return np.interp(t_eval, t, clock)
    return CurveModel.from_derivation(derivation, name=name, rename=rename,
                                      abscissa=on_clock).guess(t, y)


def model_jacobian(model: CurveModel, t: np.ndarray, theta: np.ndarray) -> np.ndarray:
    """Return the Jacobian of the model in its parameters (r0, r*, *phi).

    Columns U, 1 - U and (r0 - r*) dU/dphi: analytic when the model has ``shape_jac``, else
    central finite differences (THEORY.md section 3, the saturation law's form).

    Parameters
    ----------
    model : CurveModel
        The reward-curve model.
    t : numpy.ndarray
        Steps (or the learning-rate clock) where it is evaluated.
    theta : numpy.ndarray
        Parameters (r0, r*, *phi).

    Returns
    -------
    numpy.ndarray
        Shape (len(t), len(theta)), in reward units per parameter unit.
    """
    if model.shape_jac is not None:
        u = model.shape(t, *theta[2:])
        jac = np.empty((t.size, theta.size))
        jac[:, 0] = u
        jac[:, 1] = 1.0 - u
        jac[:, 2:] = (theta[0] - theta[1]) * model.shape_jac(t, *theta[2:])
        return jac
    jac = np.empty((t.size, theta.size))
    box = [(-np.inf, np.inf)] * 2 + list(zip(model.lower, model.upper, strict=True))
    for j in range(theta.size):
        h = 1e-6 * max(abs(theta[j]), 1e-3)
        up, down = theta.copy(), theta.copy()
        lo, hi = box[j]
        if theta[j] - h < lo <= theta[j]:  # on or near a bound: one-sided, inside the box (a
            up[j] += h  # step out of it may leave the model's domain: stiffness 0)
            jac[:, j] = (model(t, up) - model(t, theta)) / (up[j] - theta[j])
        elif theta[j] <= hi < theta[j] + h:
            down[j] -= h
            jac[:, j] = (model(t, theta) - model(t, down)) / (theta[j] - down[j])
        else:
            up[j] += h
            down[j] -= h
            jac[:, j] = (model(t, up) - model(t, down)) / (2 * h)
    return jac


def _bandwidth(residuals: np.ndarray) -> int:
    """Andrews (1991) automatic Bartlett bandwidth from an AR(1) fit of the residuals."""
    n = residuals.size
    centred = residuals - residuals.mean()
    denom = _dot(centred[:-1], centred[:-1])
    rho = float(np.clip(_dot(centred[1:], centred[:-1]) / denom, -0.99, 0.99)) \
        if denom > 0 else 0.0
    alpha = 4 * rho**2 / ((1 - rho) ** 2 * (1 + rho) ** 2)
    return int(min(np.ceil(1.1447 * (alpha * n) ** (1 / 3)), n - 1))


def hac_covariance(jac: np.ndarray, residuals: np.ndarray) -> np.ndarray:
    """Return the Newey-West covariance of least-squares estimates.

    Bartlett kernel with the Andrews (1991) automatic bandwidth: standard errors that hold when
    the residuals are serially correlated (the process noise of THEORY.md section 6).

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
    bread = _gram_inverse(_gram(jac, jac))
    scores = jac * residuals[:, None]
    lags = _bandwidth(residuals)
    meat = _gram(scores, scores)
    for lag in range(1, lags + 1):
        weight = 1.0 - lag / (lags + 1.0)
        cross = _gram(scores[lag:], scores[:-lag])
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


def _model_covariance(model: CurveModel, theta: np.ndarray, t: np.ndarray, jac: np.ndarray,
                      residuals: np.ndarray) -> np.ndarray | None:
    """Sandwich covariance with residual covariance q R + sigma^2 I from the theory.

    R is the process covariance of :func:`_process_kernel`; q (process intensity) and sigma^2
    (white observation noise) match the residual autocovariances at lags 0..L by non-negative
    least squares. The residuals are M (q R + sigma^2 I) M with M = I - J B J^T (fitting absorbs
    part of a slow process), so the expected autocovariances use offset traces of M R M and M.
    Everything is O(n log n): R is never formed; four FFT calls of stacked rows.
    None when the model has no stochastic theory or the steps are irregular.
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
    bread = _gram_inverse(_gram(jac, jac))
    rj = _process_times(kernel, jac)
    jrj = _gram(jac, rj)
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
    meat = q * jrj + sigma2 * _gram(jac, jac)
    return n / max(n - theta.size, 1) * bread @ meat @ bread


def _boxed_line(u: np.ndarray, y: np.ndarray, r_star: float, slope: float,
                bounds: tuple[float, float]) -> tuple[float, float]:
    """Least squares of y ~ r* + s u with r* and r0 = r* + s both in [lo, hi].

    The objective is a convex quadratic in (r*, s); if the free optimum leaves the box, the
    constrained optimum lies on an edge: each edge is a one-dimensional least squares, clipped.
    """
    lo, hi = bounds
    if lo <= r_star <= hi and lo <= r_star + slope <= hi:
        return r_star, slope
    best, best_cost = (r_star, slope), np.inf
    candidates = []
    uu = _dot(u, u)
    for edge in (lo, hi):  # r* fixed on an edge: y - edge ~ s u
        s_free = _dot(u, y - edge) / uu if uu > 0 else 0.0
        candidates.append((edge, min(max(s_free, lo - edge), hi - edge)))
    one_minus = 1.0 - u
    om = _dot(one_minus, one_minus)
    for edge in (lo, hi):  # r0 fixed on an edge: y - edge u ~ r* (1 - u)
        r_free = _dot(one_minus, y - edge * u) / om if om > 0 else float(y.mean())
        r_fixed = min(max(r_free, lo), hi)
        candidates.append((r_fixed, edge - r_fixed))
    for r_c, s_c in candidates:
        cost = float(np.sum((y - r_c - s_c * u) ** 2))
        if cost < best_cost:
            best, best_cost = (r_c, s_c), cost
    return best


#: Rows from which the fit's long reductions avoid BLAS: OpenBLAS runs dot products and
#: matrix-vector products on its thread pool above ~1e4 entries, and waking the pool costs
#: milliseconds per call on a busy machine; below, BLAS runs on one thread and is the fastest.
_NO_BLAS_ROWS = 8192

#: Grid points of the profile check between an optimum and a later start (:func:`_profile_rises`).
PROFILE_POINTS = 3


def _dot(a: np.ndarray, b: np.ndarray) -> float:
    """Return a . b; numpy's own single-threaded loop (no BLAS) for long vectors."""
    if a.shape[0] < _NO_BLAS_ROWS:
        return float(a @ b)
    return float(np.einsum("i,i->", a, b))


def _gram(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """a^T b for tall a, b (n x p, n x q; p, q small); no BLAS for long ones (see _dot)."""
    if a.shape[0] < _NO_BLAS_ROWS:
        return a.T @ b
    return np.einsum("ij,ik->jk", a, b)


def _times(a: np.ndarray, m: np.ndarray) -> np.ndarray:
    """Return a m for a tall a (n x p) and a small m (p x q); no BLAS for long ones."""
    if a.shape[0] < _NO_BLAS_ROWS:
        return a @ m
    return np.einsum("ij,jk->ik", a, m)


#: Least determinant of the unit-diagonal (Jacobi-scaled) normal matrix for which
#: :func:`_gram_inverse` inverts a 3 x 3 one by cofactors: its condition number is then below
#: 27 / 1e-6, and the cofactor inverse as accurate as the SVD's; below, the SVD.
_COFACTOR_DETERMINANT = 1e-6


def _gram_inverse(info: np.ndarray) -> np.ndarray:
    """Inverse of a normal matrix J^T J, its pseudo-inverse where the data leave it singular.

    The matrix is first scaled to a unit diagonal, S = D^-1 (J^T J) D^-1 with D = sqrt(diag)
    (a zero diagonal entry: scale 1), and the result is D^-1 S^+ D^-1: the parameters' units do
    not decide which directions count as undetermined (without the scaling, an exponential
    law with tau ~ 1e4 steps gave J^T J a condition number above 1e15 from units alone, and
    ``pinv``'s cutoff dropped a determined direction: a standard error of tau of 3e-6 relative
    where it is 60 times tau). For p = 3 (the exponential law, the inertial form with its
    momentum known) S is inverted by cofactors in Python floats when its determinant exceeds
    ``_COFACTOR_DETERMINANT`` (well conditioned: S^+ = S^-1 there; the LAPACK call costs more
    than the arithmetic); otherwise by ``np.linalg.pinv`` (SVD, cutoff 1e-15 relative).

    Parameters
    ----------
    info : numpy.ndarray
        Symmetric positive semi-definite (p, p) matrix, in squared reward per squared
        parameter units.

    Returns
    -------
    numpy.ndarray
        Its inverse (or pseudo-inverse), shape (p, p), in squared parameter units per squared
        reward.
    """
    if info.shape == (3, 3):
        (a, b, c), (_, e, f), (_, _, i) = info.tolist()
        if a > 0 and e > 0 and i > 0 and math.isfinite(a + b + c + e + f + i):
            da, de, di = math.sqrt(a), math.sqrt(e), math.sqrt(i)
            b, c, f = b / (da * de), c / (da * di), f / (de * di)  # unit diagonal
            m00, m01, m02 = 1.0 - f * f, c * f - b, b * f - c  # cofactors
            m11, m12, m22 = 1.0 - c * c, b * c - f, 1.0 - b * b
            det = m00 + b * m01 + c * m02
            if det > _COFACTOR_DETERMINANT:
                return np.array([[m00 / (det * a), m01 / (det * da * de), m02 / (det * da * di)],
                                 [m01 / (det * da * de), m11 / (det * e), m12 / (det * de * di)],
                                 [m02 / (det * da * di), m12 / (det * de * di), m22 / (det * i)]])
    scale = np.sqrt(np.abs(np.diag(info)))
    scale[~(scale > 0)] = 1.0
    outer = np.outer(scale, scale)
    return np.linalg.pinv(info / outer) / outer


def _inverse_2x2(matrix: np.ndarray) -> np.ndarray:
    """Inverse of a 2 x 2 matrix in closed form (no LAPACK call for a tiny system)."""
    (a, b), (c, d) = matrix.tolist()
    det = a * d - b * c
    return np.array([[d / det, -b / det], [-c / det, a / det]])


@dataclass(frozen=True)
class _Solution:
    """The end point of :func:`_levenberg_marquardt` (the fields fit_curve reads)."""

    x: np.ndarray
    cost: float


def _levenberg_marquardt(residual: Callable[[np.ndarray], np.ndarray],
                         jacobian: Callable[[np.ndarray], np.ndarray], x0: np.ndarray,
                         lower: np.ndarray, upper: np.ndarray, *, max_iterations: int = 200
                         ) -> _Solution | None:
    """Bounded Levenberg-Marquardt for the few shape parameters of a variable projection.

    Moré's scaling (damping lam diag(J^T J)); a step is clipped to the box and a parameter on a
    bound whose gradient points out of the box is held there. It stops when the cost changes by
    less than 1e-15 relative, the step by less than 1e-12 relative, or the scaled gradient
    vanishes: tighter than ``least_squares``' defaults (1e-8), so it ends on the same optimum
    to round-off in about a tenth of the time (no per-call set-up; p <= 2 here).

    Returns
    -------
    _Solution or None
        None when the residual is not finite at the start.
    """
    x = x0.copy()
    fun = residual(x)
    cost = 0.5 * _dot(fun, fun)
    if not np.isfinite(cost):
        return None
    lam = 1e-3
    for _ in range(max_iterations):
        jac = jacobian(x)
        if not np.all(np.isfinite(jac)):
            break
        gradient = _gram(jac, fun[:, None])[:, 0]
        info = _gram(jac, jac)
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
            trial_cost = 0.5 * _dot(trial_fun, trial_fun)
            if np.isfinite(trial_cost) and trial_cost <= cost:
                improved = True
                break
            lam *= 10
        if not improved:
            break
        moved = np.abs(trial - x) <= 1e-12 * (np.abs(x) + 1e-12)
        change = cost - trial_cost
        taken = trial - x
        lam = _damping(lam, change, -(_dot(gradient, taken) + 0.5 * _dot(taken, info @ taken)))
        x, fun, cost = trial, trial_fun, trial_cost
        if np.all(moved) or change <= 1e-15 * cost:
            break
    return _Solution(x, cost)


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


def _scalar_levenberg_marquardt(cost_of: Callable[[float], float],
                                derivatives: Callable[[float], tuple[float, float]], x0: float,
                                lower: float, upper: float, *, max_iterations: int = 200,
                                found: float | None = None) -> _Solution | None:
    """Run :func:`_levenberg_marquardt` for one shape parameter, in Python floats.

    The same damping, bounds, acceptance and stopping rules as the general routine with p = 1
    (the exponential law's tau: THEORY.md section 3), without its small-matrix numpy calls,
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
    _Solution or None
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
    return _Solution(np.array([x]), cost)


#: The relative step of ``scipy.optimize.approx_derivative``'s "2-point" scheme in float64.
_SQRT_EPS = float(np.finfo(np.float64).eps ** 0.5)


def _two_point(fun: Callable[[np.ndarray], np.ndarray], x0: np.ndarray, f0: np.ndarray | None,
               lower: np.ndarray, upper: np.ndarray) -> np.ndarray:
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


def _profile_rises(cost_of: Callable[[np.ndarray], float], optimum: np.ndarray,
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


def _prepare(t: npt.ArrayLike, y: npt.ArrayLike) -> tuple[np.ndarray, np.ndarray]:
    t = check_finite("steps", t).ravel()
    y = check_finite("reward", y).ravel()
    if t.size != y.size:
        raise InputError(f"steps ({t.size}) and reward ({y.size}) differ in length")
    if t.size < 5:
        raise InputError(f"a fit needs at least 5 points, got {t.size}")
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
        ``"linear"`` (default, Gaussian) or a robust loss of ``scipy.optimize.least_squares``
        such as ``"soft_l1"``.
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
    t, y = _prepare(t, y)
    if plateau_bounds is not None:
        lo_r, hi_r = map(float, plateau_bounds)
        if not (np.isfinite(lo_r) and np.isfinite(hi_r) and lo_r < hi_r):
            raise InputError(f"plateau_bounds must be finite with lo < hi, got {plateau_bounds}")
        plateau_bounds = (lo_r, hi_r)
    model = curve_model(name, t, y, momentum=momentum, learning_rate=learning_rate)
    if (plateau_bounds is not None and loss == "linear" and model.shape_jac is not None
            and len(model.shape_params) == 1):
        # one analytic shape parameter (the exponential law): the free fit first, by its
        # scalar Levenberg-Marquardt, not trf on differences. An optimum whose (r0, r*) lie
        # strictly inside the plateau range is one of the boxed fit too (the box is inactive
        # around it; a boxed cost is never below the free one). Not for the other models: there
        # the free multi-start and trf in the box reach different basins (docs/findings.md 7)
        free = fit_curve(name, t, y, momentum=momentum, learning_rate=learning_rate,
                         every_start=every_start)
        if all(plateau_bounds[0] < free.params[k] < plateau_bounds[1] for k in ("r0", "r_star")):
            return _result(model, t, y, free.theta, plateau_bounds)
    lower, upper = np.array(model.lower), np.array(model.upper)
    y_mean = float(y.sum() / y.size)  # y.mean()'s value, without its Python-level wrapper

    last_shape: dict[bytes, np.ndarray] = {}  # U at the latest phi: the Jacobian reuses it
    y_centred = y - y_mean
    # the law itself where the shape is the law at (r0, r*) = (1, 0) (the same call, without
    # the shape's own errstate: the optimisation below runs under errstate(all="ignore"))
    law = (compiled(model.derivation) if model.derivation is not None and model.abscissa is None
           else None)

    def plateau_and_start(phi: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(r0, r*) by linear least squares for this shape, and the fitted curve."""
        u = law(t, 1.0, 0.0, *phi) if law is not None else model.shape(t, *phi)
        last_shape.clear()
        last_shape[phi.tobytes()] = u
        # y ~ r0 u + r* (1 - u) = r* + (r0 - r*) u: a straight line in u, solved in closed form
        u_mean = u.sum() / u.size  # u.mean()'s value
        du = u - u_mean
        spread = _dot(du, du)
        if not spread > 1e-12 * max(1.0, u_mean * u_mean) * u.size:
            design = np.column_stack([u, 1.0 - u])  # flat shape: the minimum-norm solution
            coef, *_ = np.linalg.lstsq(design, y, rcond=None)
            return coef, design @ coef
        slope = _dot(du, y_centred) / spread
        r_star = y_mean - slope * u_mean
        if plateau_bounds is not None:
            r_star, slope = _boxed_line(u, y, r_star, slope, plateau_bounds)
        return np.array([r_star + slope, r_star]), r_star + slope * u

    def projected_jacobian(phi: np.ndarray) -> np.ndarray:
        """d(residual)/d phi of the variable projection (Golub and Pereyra 1973).

        With A = [u, 1 - u], c = (r0, r*) = A^+ y and residual rho = A c - y, the derivative in
        phi_j is P_perp D_j c - (A^+)^T D_j^T rho, D_j = dA/dphi_j = [du_j, -du_j]:
        exact, from the analytic dU/dphi of the registry.
        """
        u = last_shape.get(phi.tobytes())
        if u is None:
            u = model.shape(t, *phi)
        dus = model.shape_jac(t, *phi)
        design = np.empty((t.size, 2))
        design[:, 0] = u
        design[:, 1] = 1.0 - u
        gram_inverse = _inverse_2x2(_gram(design, design))
        coef = gram_inverse @ _gram(design, y[:, None])[:, 0]
        rho = u * coef[0] + (1.0 - u) * coef[1] - y
        moved = dus * (coef[0] - coef[1])  # D_j c for every j, as columns
        dots = _gram(dus, rho[:, None])[:, 0]
        back = gram_inverse @ (_gram(design, moved) + np.vstack([dots, -dots]))
        return moved - _times(design, back)

    y_square = _dot(y_centred, y_centred)
    latest: list = []  # (phi, du, spread, du . y_c) at the latest phi of the scalar path

    def scalar_cost(phi: float) -> float:
        """Half the projected RSS at phi: (|y_c|^2 - (du . y_c)^2 / |du|^2) / 2.

        du = U - mean(U), y_c = y - mean(y): the line y ~ r* + (r0 - r*) U solved in closed
        form and its RSS from dot products, without the residual vector.
        """
        u = law(t, 1.0, 0.0, phi) if law is not None else model.shape(t, phi)
        u_mean = u.sum() / u.size
        du = u - u_mean
        spread = _dot(du, du)
        if not spread > 1e-12 * max(1.0, u_mean * u_mean) * u.size:
            latest.clear()  # flat shape: the minimum-norm line of plateau_and_start
            fun = plateau_and_start(np.array([phi]))[1] - y
            return 0.5 * _dot(fun, fun)
        along = _dot(du, y_centred)
        latest[:] = [phi, du, spread, along]
        return 0.5 * (y_square - along * along / spread)

    # the registry's dU/dphi column itself (shape_jac's own call, without its (n, 1) wrapper)
    column = (compiled(f"{model.derivation}_d_{_raw_names(model)[0]}")
              if model.derivation is not None and model.abscissa is None
              and model.shape_jac is not None and len(model.shape_params) == 1 else None)

    def scalar_derivatives(phi: float) -> tuple[float, float]:
        """(J . rho, J . J) of the variable projection at phi, from dot products.

        The projected residual is rho = k du - y_c with k = (du . y_c) / |du|^2; with
        dd = dU/dphi - mean(dU/dphi) its derivative is J = k' du + k dd (Golub and Pereyra
        1973, exact), k' = (dd . y_c - 2 k du . dd) / |du|^2. Since k |du|^2 = du . y_c,
        J . rho = k (k du . dd - dd . y_c) and J . J = k'^2 |du|^2 + 2 k k' du . dd
        + k^2 |dd|^2. dU/dphi is the registry's analytic column.
        """
        if not latest or latest[0] != phi:
            scalar_cost(phi)
            if not latest:
                return np.nan, np.nan  # flat shape: no derivative, the descent stops
        _, du, spread, along = latest
        try:
            dus = column(t, 1.0, 0.0, phi) if column is not None else None
        except ValueError:  # a column defined only for t > 0: shape_jac's differences at 0
            dus = None
        if dus is None:
            dus = model.shape_jac(t, phi)[:, 0]
        dd = dus - dus.sum() / dus.size
        cross, lift, square = _dot(du, dd), _dot(dd, y_centred), _dot(dd, dd)
        k = along / spread
        k_prime = (lift - 2 * k * cross) / spread
        return (k * (k * cross - lift),
                k_prime * k_prime * spread + 2 * k * k_prime * cross + k * k * square)

    last_residual: dict[bytes, np.ndarray] = {}  # the residual at the latest phi

    def projected_residual(phi: np.ndarray) -> np.ndarray:
        """Residual of the variable projection at phi (kept for the differenced Jacobian)."""
        fun = plateau_and_start(phi)[1] - y
        last_residual.clear()
        last_residual[phi.tobytes()] = fun
        return fun

    def projected_cost(phi: np.ndarray) -> float:
        """Half the projected residual sum of squares at phi."""
        fun = plateau_and_start(phi)[1] - y
        return 0.5 * _dot(fun, fun)

    def differenced_jacobian(phi: np.ndarray) -> np.ndarray:
        """Forward differences of the projected residual (relative step sqrt(eps), in the box).

        The residual at phi itself is the one the optimiser has just evaluated.
        """
        base = last_residual.get(phi.tobytes())
        if base is None:
            base = plateau_and_start(phi)[1] - y
        jac = np.empty((t.size, phi.size))
        for j in range(phi.size):
            h = 1.4901161193847656e-08 * max(abs(phi[j]), 1e-8)
            if phi[j] + h > upper[j]:
                h = -h  # step back into the box
            moved = phi.copy()
            moved[j] += h
            jac[:, j] = (plateau_and_start(moved)[1] - y - base) / (moved[j] - phi[j])
        return jac

    analytic = model.shape_jac is not None and plateau_bounds is None
    best, best_cost = None, np.inf
    with np.errstate(all="ignore"):
        inside = (lower + 1e-12 * (upper - lower), upper - 1e-12 * (upper - lower))
        for start in model.starts:
            x0 = np.minimum(np.maximum(np.array(start, dtype=float), inside[0]), inside[1])
            if analytic and loss == "linear" and x0.size == 1:
                if best is not None and not every_start and _profile_rises(
                        lambda phi: scalar_cost(float(phi[0])), best.x, x0, best_cost):
                    continue  # the cost rises from the optimum to this start: same basin
                sol = _scalar_levenberg_marquardt(
                    scalar_cost, scalar_derivatives, float(x0[0]), float(lower[0]),
                    float(upper[0]), found=None if best is None else float(best.x[0]))
                if sol is not None and sol.cost < best_cost:
                    best, best_cost = sol, sol.cost
                continue
            if analytic and loss == "linear":
                sol = _levenberg_marquardt(lambda phi: plateau_and_start(phi)[1] - y,
                                           projected_jacobian, x0, lower, upper)
                if sol is not None and sol.cost < best_cost:
                    best, best_cost = sol, sol.cost
                continue
            if loss == "linear" and plateau_bounds is None and model.abscissa is None:
                # no analytic dU/dphi (the inertial closed form): forward differences of the
                # projected residual, in the same Levenberg-Marquardt
                if best is not None and not every_start and _profile_rises(
                        projected_cost, best.x, x0, best_cost):
                    continue  # the cost rises from the optimum to this start: same basin
                sol = _levenberg_marquardt(projected_residual, differenced_jacobian, x0, lower,
                                           upper)
                if sol is not None and sol.cost < best_cost:
                    best, best_cost = sol, sol.cost
                continue
            try:
                sol = least_squares(projected_residual, x0,
                                    jac=projected_jacobian if analytic else lambda phi: (
                                        _two_point(projected_residual, phi,
                                                   last_residual.get(phi.tobytes()),
                                                   lower, upper)),
                                    bounds=(lower, upper), loss=loss, x_scale="jac",
                                    method="trf", max_nfev=1000)
            except ValueError:
                continue
            if np.all(np.isfinite(sol.fun)) and sol.cost < best_cost:
                best, best_cost = sol, sol.cost
    if best is None:
        raise InputError(f"model {name!r} could not be fitted to this series")
    with np.errstate(over="ignore"):  # the shape's own errstate (the law is called directly)
        coef = plateau_and_start(best.x)[0]
    return _result(model, t, y, np.concatenate([coef, best.x]), plateau_bounds)


def _result(model: CurveModel, t: np.ndarray, y: np.ndarray, theta: np.ndarray,
            plateau_bounds: tuple[float, float] | None) -> FitResult:
    """Return the fit at theta: RSS, R^2 and information criteria of the prepared series."""
    residuals = y - model(t, theta)
    rss = _dot(residuals, residuals)
    centred = y - y.sum() / y.size  # y - y.mean(), the same floats
    tss = float(np.sum(centred * centred))
    n, p = y.size, theta.size
    log_lik_term = n * np.log(max(rss, 1e-300) / n)
    return FitResult(model, theta, t, y, rss, 1 - rss / tss, log_lik_term + 2 * p,
                     log_lik_term + p * np.log(n), plateau_bounds)


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
    return _result(model, t, y, theta, bounds)


def estimate_noise(y: npt.ArrayLike) -> NoiseEstimate:
    """Observation noise from first differences: sigma^2 = Var(diff y) / 2.

    For a smooth curve observed with white noise the differences are dominated by the noise, so
    this bounds the R^2 any model can reach: ``1 - sigma^2 / Var(y)``. (A median-absolute-
    deviation version is biased on the few discrete values that per-step rewards take: on the
    shipped real logs it put the ceiling below the R^2 that models reach.)
    """
    y = check_finite("reward", y).ravel()
    if y.size < 3:
        raise InputError(f"reward: the noise estimate needs at least 3 points, got {y.size}")
    sigma = float(np.std(np.diff(y)) / np.sqrt(2))
    variance = float(np.var(y))
    ceiling = float(max(0.0, 1 - sigma**2 / variance)) if variance > 0 else float("nan")
    return NoiseEstimate(sigma, ceiling, "first differences: Var(diff)/2")


def fit_models(t: npt.ArrayLike, y: npt.ArrayLike, *, models: Iterable[str] = MODEL_NAMES,
               momentum: float | None = None, learning_rate: npt.ArrayLike | None = None
               ) -> dict[str, FitResult]:
    """Fit several models; ``exponential_lr`` is skipped when no learning rate is given."""
    out = {}
    for name in models:
        if name == "exponential_lr" and learning_rate is None:
            continue
        out[name] = fit_curve(name, t, y, momentum=momentum, learning_rate=learning_rate)
    return out
