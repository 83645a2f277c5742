"""Analytic Jacobians of the fit models: derivatives of their derivations w.r.t. each parameter.

A least-squares fit of ``saturation_law`` (the empirical exponential law, docs/theory.md section 3)
or of the closed-form trajectory (section 2) needs d model / d parameter at every time point;
finite differences cost one model evaluation per parameter and lose half the digits. Each
derivative here is ``sympy.diff`` of the registered model, registered as ``<model>_d_<param>``
with the model's own arguments (so a fitter calls it like the model), section and domain.
"""

from __future__ import annotations

from collections.abc import Callable

import sympy as sp

from .build import derivation, get
from .derivation import Derivation, Step
from .symbols import sym

#: model derivation -> the parameters a fit adjusts (t is the abscissa, never fitted)
FIT_PARAMETERS: dict[str, tuple[str, ...]] = {
    "saturation_law": ("r0", "r_star", "tau"),
    "sigmoid_law": ("r0", "r_star", "t_mid", "width"),
    "power_law": ("r0", "r_star", "t_mid", "exponent"),
    "trajectory": ("e0", "v0", "zeta", "omega0"),
    "trajectory_underdamped": ("e0", "v0", "zeta", "omega0"),
    "trajectory_critical": ("e0", "v0", "omega0"),
}


def _restricted_domains() -> dict[tuple[str, str], sp.Basic]:
    """Columns whose real-arithmetic form fails where the model holds, and where they hold.

    d power_law / d exponent contains (t/t_mid)^b log(t/t_mid): 0 * log 0 = NaN at t = 0,
    where the model is 1 for every b (so the column's limit there is 0).
    """
    return {("power_law", "exponent"): sp.StrictGreaterThan(sym.t, 0)}


def _builder(model: str, parameter: str) -> Callable[[], Derivation]:
    def build() -> Derivation:
        d = get(model)
        (symbol,) = [s for s in d.args if s.name == parameter]
        derivative = sp.diff(d.expr, symbol)
        simplified = sp.simplify(derivative)
        if sp.count_ops(simplified) < sp.count_ops(derivative):
            derivative = simplified
        return Derivation(f"{model}_d_{parameter}", derivative, d.args,
                          f"d {model} / d {parameter}: column of the fit's Jacobian.", d.section,
                          (Step(f"the model {model}", d.expr),
                           Step(f"differentiated w.r.t. {parameter}", derivative)),
                          domain=_restricted_domains().get((model, parameter), d.domain))

    build.__name__ = f"derive_{model}_d_{parameter}"
    build.__qualname__ = build.__name__
    build.__doc__ = f"d {model} / d {parameter} (sympy.diff of the registered model)."
    return build


for _model, _parameters in FIT_PARAMETERS.items():
    for _parameter in _parameters:
        derivation(_builder(_model, _parameter))
