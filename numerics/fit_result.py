"""The result of a reward-curve fit: parameters, uncertainties, criteria, report and plot.

:class:`FitResult` is what :func:`grpodyn.numerics.fit.fit_curve` returns. Its covariances
follow the theory's residual process (docs/theory.md section 6) and are computed when first read.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import Any

import numpy as np
import numpy.typing as npt
from scipy.special import stdtrit

from grpodyn.ground import axes_or_new

from .compiled import compiled
from .curve_models import CurveModel, model_jacobian
from .gram import gram, gram_inverse
from .noise import hac_covariance, model_covariance

__all__ = ["FitResult", "PUBLIC_NAMES"]

#: The name a user reads for a fitted parameter whose key (in ``params`` and the JSON)
#: predates the vocabulary: the run report and ``grpodyn fit`` show these.
PUBLIC_NAMES = {"r_star": "plateau"}


@dataclass(frozen=True, eq=False)
class FitResult:
    """A fitted model with uncertainties and information criteria.

    Compared by identity (``a == b`` is ``a is b``), as it holds arrays.

    The covariances are computed when first read (and kept): a fit whose errors are never read
    costs only the optimisation. ``covariance`` is the theory's (process noise, docs/theory.md
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

    def __repr__(self) -> str:
        """One line: the model, each parameter with its standard error, n, R^2 and AIC."""
        params = ", ".join(f"{PUBLIC_NAMES.get(k, k)}={v:.4g}+-{self.stderr[k]:.2g}"
                           for k, v in self.params.items())
        return (f"FitResult({self.model.name!r}, {params}, n={self.t.size}, r2={self.r2:.3g}, "
                f"aic={self.aic:.4g})")

    @cached_property
    def jacobian(self) -> np.ndarray:
        """Jacobian of the model at the estimate, shape (n, p) (:func:`model_jacobian`)."""
        return model_jacobian(self.model, self.t, self.theta)

    @cached_property
    def covariance(self) -> np.ndarray:
        """Covariance of the parameters under the theory's residual process (theory section 6).

        The sandwich with residual covariance q R + sigma^2 I (:func:`model_covariance`), or
        the Newey-West covariance (:func:`hac_covariance`) where the model has no process
        theory or the steps are irregular. Shape (p, p), in squared parameter units.
        """
        residuals = self.y - self.model(self.t, self.theta)
        covariance = model_covariance(self.model, self.theta, self.t, self.jacobian, residuals)
        return hac_covariance(self.jacobian, residuals) if covariance is None else covariance

    @cached_property
    def plain_covariance(self) -> np.ndarray:
        """White-noise covariance s^2 (J^T J)^+ with s^2 = RSS / (n - p).

        What ``scipy.optimize.curve_fit`` returns (``absolute_sigma=False``); it ignores the
        serial correlation of a training run's residuals (docs/theory.md section 6), so the fit's
        errors and intervals use :attr:`covariance`. Shape (p, p).
        """
        jac = self.jacobian
        return self.rss / max(self.n - self.theta.size, 1) * gram_inverse(gram(jac, jac))

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
        """Shape parameters and plateau that sit on a bound: results of the box, not of the data.

        Within 0.1% of the bound, or on the plateau range. The start ``r0`` on the range's edge
        is in :attr:`params_at_bounds`, not here.
        """
        out = []
        for name, value, lo, hi in zip(self.model.shape_params, self.theta[2:],
                                       self.model.lower, self.model.upper, strict=True):
            scale = 1e-3 * (hi - lo)  # for a bound at 0, closeness relative to the box
            if (value - lo <= 1e-3 * max(abs(lo), scale)
                    or hi - value <= 1e-3 * max(abs(hi), scale)):
                out.append(name)
        if self.plateau_bounds is not None and self._on_range_edge(self.theta[1]):
            out.append("r_star")
        return tuple(out)

    @property
    def params_at_bounds(self) -> tuple[str, ...]:
        """Every parameter on a bound of the fit, the start ``r0`` included: what is reported.

        The plateau range boxes the start as it boxes the plateau, so a start on its edge (a run
        that begins at 0 accuracy) is a result of the box too and is said so. It is kept out of
        :attr:`at_bounds`, which decides whether the plateau and tau are determined: a start on
        the range's edge leaves the saturation, and so the plateau, as well placed as before.
        """
        out = list(self.at_bounds)
        if self.plateau_bounds is not None and self._on_range_edge(self.theta[0]):
            out.insert(0, "r0")
        return tuple(out)

    def _on_range_edge(self, level: float) -> bool:
        """Whether a reward level sits on an edge of the plateau range (round-off apart).

        The fit places a level on an edge exactly (the box of the variable projection); the
        round-off allowed is 1e-9 of the range or of the rewards' own range, whichever is
        smaller, so that rewards far smaller than the range (a reward in [0, 1] logged in
        units of 1e-9) are not read as lying on its edge.

        Parameters
        ----------
        level : float
            The start r0 or the plateau r* [reward].

        Returns
        -------
        bool
            True on (or beyond) an edge.
        """
        lo, hi = self.plateau_bounds
        tol = 1e-9 * min(hi - lo, float(np.ptp(self.y)))
        return bool(level <= lo + tol or level >= hi - tol)

    @property
    def singular(self) -> bool:
        """Whether no standard error is meaningful.

        True when the information matrix J^T J is numerically singular (condition number
        above 1e12) or the covariance has a non-finite or negative diagonal: then no standard
        error is meaningful.
        """
        jac = self.jacobian
        with np.errstate(all="ignore"):
            info = gram(jac, jac)
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
        bounds, intervals = set(self.params_at_bounds), self.interval(level)
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

        bounds = set(self.params_at_bounds)
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
        ax = axes_or_new(ax)
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
        out["at_bounds"] = list(self.params_at_bounds)
        out["singular"] = self.singular
        if out["singular"]:
            out["stderr"] = {k: None for k in out["stderr"]}
        if self.model.fixed:
            out["fixed"] = dict(self.model.fixed)
        derived = self.derived()
        if derived:
            out["derived"] = {k: clean(v) for k, v in derived.items()}
        return out
