"""The result of a forecaster: a path's central forecast and band after a cut.

Every forecaster of :mod:`numerics.forecasters` returns a :class:`Forecast`; the stacked
ensemble (:func:`numerics.forecast.forecast_curve`) returns its subclass
:class:`EnsembleForecast`, which also carries the fitted members. The band is central at
``level`` (docs/theory.md section 6); the score is the interval score of Gneiting & Raftery
(2007).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from html import escape
from typing import Any

import numpy as np

from grpodyn.ground import axes_or_new

from .forecast_members import Member

__all__ = ["Forecast", "EnsembleForecast"]


@dataclass(frozen=True, eq=False)
class Forecast:
    """A forecast of the steps after a cut, with a central band.

    Compared by identity (``a == b`` is ``a is b``), as it holds arrays.

    Attributes
    ----------
    weights : dict of str to float
        How the forecaster combines its parts (summing to 1): stacking or BIC weights of the
        ensemble's members, the adaptive forecaster's inverse-error weights, or
        ``{"learned_prior": 1.0}``.
    weighting : str
        How the weights were found: ``"stacking"``, ``"bic"``, ``"single"``,
        ``"rolling_origin"``, ``"learned_prior"`` or ``"conformal"``.
    train_points : int
        Points before the cut the forecast was made from.
    steps, mean, lower, upper : numpy.ndarray
        Forecast steps, the forecaster's mean and the central band at ``level``, reward units.
        Where a forecaster gives a ``point``, that is the forecast, held in the band; the mean
        need not be (the ensemble's is its curve models' mixture mean, see
        :class:`EnsembleForecast`).
    level : float
        Central probability of the band.
    bounds : (lo, hi), optional
        The reward range the forecast is kept inside.
    warnings : tuple of str
        What the caller should know about this forecast.
    median : numpy.ndarray, optional
        The forecast's median at ``steps``.
    point, point_weights : numpy.ndarray, dict of str to float
        The point forecast (its MAE is the forecast's ``mae``) and the weights it combines the
        parts with. The point is held inside the band: where a forecaster's point combination
        leaves it (the ensemble weighs its members one way for the point, validated at the
        training part's short lags, and another for the band), it is projected onto the band's
        nearer edge, since a point outside the forecast's own central band contradicts it.
    """

    weights: dict[str, float]
    weighting: str
    train_points: int
    steps: np.ndarray
    mean: np.ndarray
    lower: np.ndarray
    upper: np.ndarray
    level: float
    bounds: tuple[float, float] | None = None
    warnings: tuple[str, ...] = ()
    median: np.ndarray | None = None
    point: np.ndarray | None = None
    point_weights: dict[str, float] | None = None

    def __post_init__(self) -> None:
        """Hold the point inside the band (see ``point``)."""
        if self.point is not None:
            object.__setattr__(self, "point", np.clip(self.point, self.lower, self.upper))

    def __repr__(self) -> str:
        """Return a compact summary: the model, the steps forecast and the band at the last one.

        The value shown is the point forecast where there is one (as ``grpodyn forecast``
        prints it), else the mean.
        """
        centre = self.point if self.point is not None else self.mean
        last = (f", last step {self.steps[-1]:g}: {centre[-1]:.4g} "
                f"[{self.lower[-1]:.4g}, {self.upper[-1]:.4g}]") if len(self.steps) else ""
        return (f"{type(self).__name__}(model={self.model!r}, {len(self.steps)} steps from "
                f"{self.train_points} training points, level={self.level:g}{last})")

    @property
    def model(self) -> str:
        """The part's name when one carries all the weight of what is shown, else ``average``.

        The point's weights where the forecaster gives them (the point is what a user reads;
        the ensemble's point is the calibrated prior's, which its members' weights do not
        name), else the weights.
        """
        weights = self.point_weights or self.weights
        top = max(weights, key=weights.get)
        return top if weights[top] > 0.999 else "average"

    @property
    def centre(self) -> np.ndarray:
        """The point forecast (the mean where the forecaster gives none), reward units."""
        return self.mean if self.point is None else self.point

    def leaves_span(self, seen: np.ndarray) -> float | None:
        """Return the first step where the forecast leaves the span of ``seen``, widened.

        A curve model may carry a run as far beyond the rewards before the cut, [a, b], as
        their own width b - a; the band or the point beyond [2a - b, 2b - a] is the models'
        laws extrapolated with nothing in the data to check them (where no reward range bounds
        them, worth saying). None when the forecast stays inside.
        """
        a, b = float(np.min(seen)), float(np.max(seen))
        beyond = (np.minimum(self.lower, self.centre) < 2 * a - b) \
            | (np.maximum(self.upper, self.centre) > 2 * b - a)
        return float(self.steps[np.argmax(beyond)]) if beyond.any() else None

    def score(self, y: np.ndarray, *, upto: int | None = None) -> dict[str, float]:
        """Score the forecast against observed rewards.

        Parameters
        ----------
        y : numpy.ndarray
            The observed rewards at the first ``upto`` (default all) forecast steps.
        upto : int, optional
            How many forecast steps ``y`` covers.

        Returns
        -------
        dict
            ``mae`` (of the point forecast), ``mae_mean`` (of the mean), band ``coverage`` and
            ``interval_score`` (Gneiting & Raftery 2007), reward units.
        """
        y = np.asarray(y, dtype=float)
        n = y.size if upto is None else upto
        mean, lower, upper = self.mean[:n], self.lower[:n], self.upper[:n]
        point = self.centre[:n]
        alpha = 1 - self.level
        penalty = (2 / alpha) * (np.maximum(lower - y, 0) + np.maximum(y - upper, 0))
        return {"mae": float(np.mean(np.abs(y - point))),
                "mae_mean": float(np.mean(np.abs(y - mean))),
                "coverage": float(np.mean((y >= lower) & (y <= upper))),
                "interval_score": float(np.mean(upper - lower + penalty))}

    def to_dict(self) -> dict[str, Any]:
        """Return the forecast as plain values (lists for arrays; non-finite floats stay)."""
        def listed(a: np.ndarray | None) -> list[float] | None:
            return None if a is None else np.asarray(a, dtype=float).tolist()

        return {"model": self.model, "weights": dict(self.weights), "weighting": self.weighting,
                "train_points": self.train_points, "steps": listed(self.steps),
                "mean": listed(self.mean), "lower": listed(self.lower),
                "upper": listed(self.upper), "level": self.level,
                "bounds": None if self.bounds is None else list(self.bounds),
                "median": listed(self.median), "point": listed(self.point),
                "point_weights": None if self.point_weights is None
                else dict(self.point_weights),
                "warnings": list(self.warnings)}

    def to_pandas(self) -> Any:
        """Return the forecast as a pandas DataFrame indexed by step (pandas: optional).

        Columns ``centre`` (the point forecast where there is one, else the mean), ``mean``,
        ``lower`` and ``upper`` (the central band at ``level``), and ``median`` and ``point``
        where the forecaster gives them; ``frame.attrs`` holds the model, the weights and how
        they were found, the point's weights, the level and the warnings.

        Raises
        ------
        ImportError
            Without pandas, naming the install.
        """
        try:
            import pandas as pd
        except ImportError:
            raise ImportError("Forecast.to_pandas needs pandas: pip install pandas") from None
        columns = {"centre": self.centre, "mean": self.mean, "lower": self.lower,
                   "upper": self.upper}
        columns.update({name: value for name, value in (("median", self.median),
                                                         ("point", self.point))
                        if value is not None})
        frame = pd.DataFrame({k: np.asarray(v, dtype=float) for k, v in columns.items()},
                             index=pd.Index(np.asarray(self.steps), name="step"))
        frame.attrs.update(model=self.model, weights=dict(self.weights),
                           weighting=self.weighting, level=self.level,
                           point_weights=None if self.point_weights is None
                           else dict(self.point_weights), warnings=list(self.warnings))
        return frame

    def report(self) -> str:
        """Return a short text: the model, the band at the last step and the warnings."""
        lines = [f"{self.model} forecast ({self.weighting}) of {len(self.steps)} steps from "
                 f"{self.train_points} training points"]
        if len(self.steps):
            lines.append(f"  step {self.steps[-1]:g}: {self.centre[-1]:.4g}, "
                         f"{100 * self.level:.0f}% band [{self.lower[-1]:.4g}, "
                         f"{self.upper[-1]:.4g}]")
        parts = sorted(self.weights.items(), key=lambda kv: -kv[1])
        lines.append("  weights: " + ", ".join(f"{n} {w:.2f}" for n, w in parts if w > 0))
        lines += [f"  warning: {w}" for w in self.warnings]
        return "\n".join(lines)

    def _repr_html_(self) -> str:
        """Return the forecast as an HTML table (Jupyter's rich display)."""
        rows = "".join(f"<tr><td>{escape(n)}</td><td>{w:.3f}</td></tr>"
                       for n, w in sorted(self.weights.items(), key=lambda kv: -kv[1]))
        last = (f", step {self.steps[-1]:g}: {self.centre[-1]:.4g} "
                f"[{self.lower[-1]:.4g}, {self.upper[-1]:.4g}]") if len(self.steps) else ""
        notes = "".join(f"<p>{escape(w)}</p>" for w in self.warnings)
        return (f"<h4>{escape(self.model)} forecast ({escape(self.weighting)}): "
                f"{len(self.steps)} steps from {self.train_points} training points, "
                f"{100 * self.level:.0f}% band{escape(last)}</h4>"
                f"<table><tr><th>part</th><th>weight</th></tr>{rows}</table>{notes}")

    def plot(self, ax: Any = None) -> Any:
        """Plot the point forecast and its band (matplotlib).

        Parameters
        ----------
        ax : matplotlib.axes.Axes, optional
            Axes to draw on; a new figure's axes when None.

        Returns
        -------
        matplotlib.axes.Axes
            The axes drawn on.
        """
        ax = axes_or_new(ax)
        (line,) = ax.plot(self.steps, self.centre, label=f"{self.model} forecast")
        ax.fill_between(self.steps, self.lower, self.upper, color=line.get_color(), alpha=0.2,
                        label=f"{100 * self.level:.0f}% band")
        ax.set_xlabel("step")
        ax.set_ylabel("reward")
        ax.legend(frameon=False)
        return ax


@dataclass(frozen=True, repr=False, eq=False)
class EnsembleForecast(Forecast):
    """The stacked ensemble's forecast: a :class:`Forecast` with its fitted members.

    Compared by identity, as :class:`Forecast` is.

    Attributes
    ----------
    members : dict of str to Member
        The members fitted on the whole training part.

    Notes
    -----
    ``weights`` are the members' stacking (or BIC) weights; ``mean`` is the mixture's mean,
    ``median`` the mixture's median (both the curve models' alone); from
    :func:`numerics.forecast.forecast_curve`, ``point`` combines the members' forecasts with
    the weights that minimise the absolute error of the rolling-origin forecasts inside the
    training part (:func:`numerics.forecast.member_weights`); from the ``ensemble``
    forecaster, ``point`` and the band are the calibrated learned prior's
    (:func:`numerics.forecast.with_prior`), ``point_weights`` names it, and ``members`` and
    ``weights`` stay the curve models' (the plateau).
    """

    members: dict[str, Member] = field(kw_only=True)
