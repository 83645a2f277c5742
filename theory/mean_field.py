"""docs/theory.md sections 1-2: the discrete mean-field map and its continuum limit.

Heavy-ball momentum in parameter space, projected on the expected reward r, gives a linear
two-step recursion for the displacement e = r - r*. A second-order Taylor expansion of that
recursion gives the damped oscillator ``m e'' + c e' + k e = xi``.
"""

from __future__ import annotations

from functools import cache

import sympy as sp

from .build import derivation, get
from .derivation import Derivation, Step
from .symbols import sym

SECTION_MAP = "1. Discrete mean-field map"
SECTION_CONTINUUM = "2. Continuum limit"


@derivation
def derive_mean_field_map() -> Derivation:
    """e_{n+1} from heavy-ball momentum projected on r, with a force lagged by l steps."""
    drift = sp.Symbol("F")  # projected drift grad J . g at the lagged step
    heavy_ball = sp.Eq(sym.e_next - sym.e_now, sym.beta * (sym.e_now - sym.e_prev) + sym.a * drift)
    linear = heavy_ball.subs(drift, -sym.kappa * sym.e_lag)
    (solution,) = sp.solve(linear, sym.e_next)
    return Derivation(
        "mean_field_map",
        sp.expand(solution),
        (sym.e_now, sym.e_prev, sym.e_lag, sym.beta, sym.a, sym.kappa),
        "One heavy-ball step of the displacement e = r - r*, the force lagged to step n-l.",
        SECTION_MAP,
        (
            Step("heavy-ball step projected on r: Delta r_{n+1} = beta Delta r_n + a F(r_{n-l})",
                 heavy_ball),
            Step("linearised drift F = -kappa e about the fixed point", linear),
            Step("solved for e_{n+1}", sp.Eq(sym.e_next, solution)),
        ),
    )


@derivation
def derive_stiffness() -> Derivation:
    """Derive k = a kappa, read off the linearised map."""
    update = get("mean_field_map").expr
    k_expr = -update.coeff(sym.e_lag)
    return Derivation(
        "stiffness", k_expr, (sym.a, sym.kappa),
        "Dimensionless stiffness k = a kappa (per step^2): minus the coefficient of e_{n-l}.",
        SECTION_MAP,
        (Step("coefficient of e_{n-l} in the map", update.coeff(sym.e_lag)),),
    )


@cache
def _taylor_oscillator() -> tuple[sp.Expr, sp.Symbol, sp.Symbol, tuple[Step, ...]]:
    """Continuum limit of the map: returns the ODE left-hand side and the derivative symbols."""
    e1, e2 = sp.symbols("e_dot e_ddot")  # e'(t), e''(t)

    def shifted(shift: sp.Expr) -> sp.Expr:  # e(t + shift) to second order
        return sym.e + shift * e1 + shift**2 * e2 / 2

    update = get("mean_field_map").expr.subs(sym.a * sym.kappa, sym.k)
    residual = shifted(1) - update.subs(
        {sym.e_now: sym.e, sym.e_prev: shifted(-1), sym.e_lag: sym.e - sym.l_bar * e1}
    )
    residual = sp.collect(sp.expand(residual), [e2, e1, sym.e])
    steps = (
        Step("map written with k = a kappa", update),
        Step("e_{n+-1} = e +- e' + e''/2 and e_{n-l} = e - l_bar e' substituted", residual),
    )
    return residual, e1, e2, steps


@derivation
def derive_mass() -> Derivation:
    """Derive m = (1+beta)/2: the coefficient of e'' in the continuum limit."""
    residual, _, e2, steps = _taylor_oscillator()
    return Derivation("mass", residual.coeff(e2), (sym.beta,),
                      "Mass m = (1+beta)/2 of the continuum limit: momentum gives inertia.",
                      SECTION_CONTINUUM, steps)


@derivation
def derive_effective_damping() -> Derivation:
    """c_eff = 1 - beta - k l_bar: the coefficient of e' with a lagged force."""
    residual, e1, _, steps = _taylor_oscillator()
    return Derivation("effective_damping", residual.coeff(e1), (sym.beta, sym.k, sym.l_bar),
                      "Effective damping c - k l_bar: a force lagged by l_bar erodes the damping.",
                      SECTION_CONTINUUM, steps)


@derivation
def derive_damping() -> Derivation:
    """Derive c = 1 - beta: the on-policy damping (l_bar = 0)."""
    c_eff = get("effective_damping")
    return Derivation("damping", c_eff.subs(l_bar=0), (sym.beta,),
                      "Damping c = 1 - beta of the continuum limit (on-policy).",
                      SECTION_CONTINUUM, (Step("effective damping at l_bar = 0", c_eff.expr),))


@derivation
def derive_mean_refresh_lag() -> Derivation:
    """l_bar = (K-1)/2: the mean of the sample-and-hold lag n mod K over one cycle."""
    i = sp.Symbol("i", integer=True, nonnegative=True)
    mean = sp.summation(i, (i, 0, sym.K - 1)) / sym.K
    return Derivation("mean_refresh_lag", sp.factor(mean), (sym.K,),
                      "Mean force lag (K-1)/2 of a refresh interval K with sample-and-hold.",
                      SECTION_CONTINUUM,
                      (Step("average of l(n) = n mod K over n = 0..K-1", mean),))
