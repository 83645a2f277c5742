"""The words for a run's fits, shared by the terminal (``grpodyn fit``) and the report page.

One formatting of a fitted parameter (its status: at a bound, not determined, or its value with
its standard error) and one reading of the forecaster's stacking weights (which fitted curve
carries the weight, or that the weight sits on a member that is not a curve), so that the
terminal, the JSON and the HTML page of one run say the same thing.
"""

from __future__ import annotations

import html
import math
from typing import TYPE_CHECKING, Any

from grpodyn.numerics.fit_result import PUBLIC_NAMES

if TYPE_CHECKING:
    from grpodyn.numerics.fit_result import FitResult

    from .run_analysis import RunAnalysis

__all__ = ["LEVELS", "NOT_CURVES", "shown_param", "weight_on", "trusted_member",
           "untrusted_note", "weight_text", "unweighed_reason", "fits_table", "fit_notes",
           "NOTED_WEIGHT"]

#: The fitted parameters that are reward levels (any sign), not positive shape parameters.
LEVELS = ("r0", "r_star")

#: The forecaster's members that are not fitted curves, in words.
NOT_CURVES = {"level": "a flat level", "flat": "a flat line at the run's mean",
              "linear": "a straight line", "damped": "a damped trend"}


def shown_param(entry: dict[str, Any], name: str, value: float) -> str:
    """Format one fitted parameter with its status.

    A shape parameter at a bound of the fit's box, the plateau of a fit whose shape sits at a
    bound, and a parameter of a singular fit (no standard error) are not determined, their
    estimate kept to two digits; a level at a bound (a start on the range's edge) is said so;
    a positive shape parameter (a time, a rate, an exponent, a damping ratio) whose standard
    error exceeds it (+-1 s.e. reaches zero) is not determined, its estimate and error kept
    to two digits; ``r_star`` is shown as ``plateau``.

    Parameters
    ----------
    entry : dict
        The fit as :meth:`grpodyn.numerics.fit_result.FitResult.to_dict` gives it (``stderr``
        and ``at_bounds``).
    name : str
        The parameter's name in the fit.
    value : float
        Its estimate.

    Returns
    -------
    str
        ``name=value+-error``, ``name=value (at bound)`` (a level) or ``name=not determined
        (...)``.
    """
    at_bounds = set(entry.get("at_bounds", ()))
    shown = PUBLIC_NAMES.get(name, name)
    if name == "r_star" and at_bounds - set(LEVELS):
        return f"{shown}=not determined"
    text = f"{shown}={value:.4g}"
    if name in at_bounds and name not in LEVELS:
        return f"{shown}=not determined (at its bound, {value:.2g})"
    if name in at_bounds:
        return text + " (at bound)"
    err = entry["stderr"].get(name)
    if err is not None and not math.isfinite(err):
        err = None
    if err is None and entry.get("singular"):
        return f"{shown}=not determined ({value:.2g}, no standard error)"
    if err is not None and err > abs(value) and name not in LEVELS:
        return f"{shown}=not determined ({value:.2g}+-{err:.2g})"
    return text + (f"+-{err:.2g}" if err is not None else "")


def weight_on(weights: dict[str, float]) -> str | None:
    """Return the forecaster's member that carries the largest stacking weight (None: none)."""
    return max(weights, key=weights.__getitem__) if weights else None


def trusted_member(weights: dict[str, float], fitted: Any) -> str | None:
    """Return the fitted curve model the analysis trusts, or None when no curve is trusted.

    The trusted model is the member that carries the largest stacking weight; when that member
    is not a fitted curve (a flat level, a flat line) no curve is trusted, rather than naming a
    curve of weight 0. Without weights (too few points to stack) the first fitted model.

    Parameters
    ----------
    weights : dict
        The stacking weights of the forecaster's members over the whole run.
    fitted : collection of str
        The names of the fitted curve models.

    Returns
    -------
    str or None
        The trusted model's name.
    """
    top = weight_on(weights)
    if top is None:
        return next(iter(fitted), None)
    return top if top in fitted else None


def untrusted_note(member: str | None, *, over: str = "the whole run") -> str:
    """Say that the weight sits on ``member``, which is no curve, so no curve model is trusted.

    ``over`` names what the stack read: the whole run, or the training part before a cut.
    """
    words = NOT_CURVES.get(member or "", member or "no member")
    return (f"the stacking weight over {over} is on {words}: no curve model is trusted "
            "(this stacking weighs the fitted curves, a flat level and a flat line; "
            "grpodyn forecast also weighs a damped trend)")


def weight_text(weights: dict[str, float], name: str) -> str:
    """Return a member's weight to two decimals, ``n/a`` for a model the forecaster never weighs."""
    return f"{weights[name]:.2f}" if name in weights else "n/a"


def unweighed_reason(name: str, momentum: float | None, *, stacked: bool = True) -> str:
    """Say why the stack gives fitted model ``name`` no weight (``weight`` null in the JSON).

    The stack weighs the forecaster's members (:data:`grpodyn.numerics.forecast.MEMBERS`):
    the sigmoid is none of them (a baseline without a mechanism, fitted for comparison), and
    the inertial form is one only with a known momentum, which fixes its mass and damping.

    Parameters
    ----------
    name : str
        The fitted model.
    momentum : float or None
        The momentum the analysis used (None: unknown).
    stacked : bool
        False where nothing was stacked (too few points).

    Returns
    -------
    str
        The reason, in words.
    """
    from grpodyn.numerics.forecast import MEMBERS

    if not stacked:
        return "not weighed: too few points to weigh any model (8 are needed)"
    if name not in MEMBERS:
        return (f"not weighed: {name} is not one of the forecaster's members "
                f"({', '.join(MEMBERS)}), which the stack weighs; a baseline fitted for "
                "comparison")
    if name == "inertial" and momentum is None:
        return ("not weighed: the stack weighs the inertial form only with a known momentum, "
                "which fixes its mass and damping; without one its zeta and omega0 are free "
                "(give momentum= (--momentum), Adam's beta1)")
    return f"not weighed: {name} was left out of the stack"


def fits_table(analysis: RunAnalysis) -> str:
    """Return the HTML table of the fits: R^2, weight, parameters with their status, bounds.

    The members that carry weight without being curves (a flat level, a flat line) get a row
    of their own, so the weights on the page add up as the terminal's do.
    """
    weights = analysis.weights
    rows = []
    for name, fit in analysis.fits.items():
        entry = fit.to_dict()
        params = ", ".join(shown_param(entry, k, v) for k, v in entry["params"].items()
                           if v is not None)
        bounds = ", ".join(PUBLIC_NAMES.get(b, b) for b in entry["at_bounds"]) or "-"
        rows.append(f"<tr><td>{html.escape(name)}</td><td>{fit.r2:.3f}</td>"
                    f"<td>{weight_text(weights, name)}</td><td>{html.escape(params)}</td>"
                    f"<td>{html.escape(bounds)}</td><td>{'yes' if fit.singular else 'no'}</td>"
                    "</tr>")
    for name, weight in weights.items():
        if name not in analysis.fits and weight >= 0.005:
            words = NOT_CURVES.get(name, "not a curve")
            rows.append(f"<tr><td>{html.escape(name)}</td><td>-</td><td>{weight:.2f}</td>"
                        f"<td>{html.escape(words)} (no curve)</td><td>-</td><td>-</td></tr>")
    trusted = analysis.trusted_model
    legend = ("" if trusted is not None or not weights else
              f"<p>{html.escape(untrusted_note(weight_on(weights)).capitalize())}.</p>")
    return (f"{legend}<table><tr><th>model</th><th>R^2</th><th>weight</th><th>parameters</th>"
            f"<th>at bound</th><th>singular</th></tr>{''.join(rows)}</table>")


#: Stacking weight below which a curve model's fit is not noted: it shapes no result.
NOTED_WEIGHT = 0.01


def fit_notes(fits: dict[str, FitResult], weights: dict[str, float]) -> list[str]:
    """Return the warnings of the weighted fits: parameters at the box's bounds, singular fits.

    A model the stack gives less than :data:`NOTED_WEIGHT` shapes neither the plateau nor the
    forecast; its row in the fit table still shows its weight.
    """
    notes = []
    for name, fit in fits.items():
        if weights.get(name, 0.0) < NOTED_WEIGHT:
            continue
        if fit.params_at_bounds:
            named = ("plateau" if b == "r_star" else b for b in fit.params_at_bounds)
            notes.append(f"{name}: {', '.join(named)} at the fit's bound "
                         "(a result of the box, not of the data)")
        if fit.singular:
            notes.append(f"{name}: singular information matrix; no standard errors")
    return notes
