"""docs/theory.md section 4: critical damping and the regimes, continuum and exact discrete.

Continuum: zeta = 1. Exact discrete on-policy map: the roots of z^2 - (1 + beta - k) z + beta are
real and positive below (1 - sqrt(beta))^2 (monotone), complex of modulus sqrt(beta) up to
(1 + sqrt(beta))^2 (oscillatory), real and negative above (period-2 flip), and one leaves the unit
disc at k = 2(1 + beta) (unstable).
"""

from __future__ import annotations

import sympy as sp

from .build import derivation, get
from .derivation import Derivation, Step
from .symbols import sym

SECTION = "4. Critical damping and regimes"


def characteristic_polynomial() -> sp.Expr:
    """z^2 - (1+beta-k) z + beta: the on-policy map with e_n = z^n."""
    update = get("mean_field_map").expr.subs({sym.a: sym.k / sym.kappa, sym.e_lag: sym.e_now})
    poly = sym.z**2 - update.subs({sym.e_now: sym.z, sym.e_prev: 1})
    return sp.expand(poly)


def _discriminant_roots() -> list[sp.Expr]:
    disc = sp.discriminant(characteristic_polynomial(), sym.z)
    return sorted(sp.solve(disc, sym.k), key=lambda r: float(r.subs(sym.beta, sp.Rational(1, 2))))


@derivation
def derive_critical_stiffness() -> Derivation:
    """Derive k at zeta = 1 in the continuum: (1-beta)^2 / (2 (1+beta))."""
    zeta = get("damping_ratio").expr
    (k_crit,) = sp.solve(sp.Eq(zeta, 1), sym.k)
    return Derivation("critical_stiffness", sp.factor(k_crit), (sym.beta,),
                      "Continuum critical stiffness (1-beta)^2 / (2(1+beta)): zeta = 1.",
                      SECTION, (Step("zeta(beta, k) = 1", sp.Eq(zeta, 1)),))


@derivation
def derive_critical_stiffness_discrete() -> Derivation:
    """Lower root of the discriminant: the monotone/oscillatory boundary of the exact map."""
    poly = characteristic_polynomial()
    lower, _ = _discriminant_roots()
    return Derivation("critical_stiffness_discrete", sp.factor(lower), (sym.beta,),
                      "Exact discrete boundary (1 - sqrt(beta))^2: monotone below, oscillatory "
                      "above.", SECTION,
                      (Step("characteristic polynomial of the on-policy map", poly),
                       Step("discriminant in z", sp.discriminant(poly, sym.z))))


@derivation
def derive_pole_stiffness() -> Derivation:
    """Stiffness at which z = exp(-1/tau) is a root: the characteristic polynomial solved for k."""
    poly = characteristic_polynomial()
    (k_of_z,) = sp.solve(poly, sym.k)
    k_of_tau = sp.factor(k_of_z).subs(sym.z, sp.exp(-1 / sym.tau))
    return Derivation("pole_stiffness", k_of_tau, (sym.beta, sym.tau),
                      "Stiffness 1 + beta - z - beta / z whose map has the real pole "
                      "z = exp(-1/tau); the dominant one for tau >= -2 / ln beta.", SECTION,
                      (Step("characteristic polynomial solved for k", k_of_z),
                       Step("pole z = exp(-1/tau)", k_of_tau)))


@derivation
def derive_flip_stiffness() -> Derivation:
    """Upper root of the discriminant: oscillatory/period-2 flip boundary."""
    _, upper = _discriminant_roots()
    return Derivation("flip_stiffness", sp.factor(upper), (sym.beta,),
                      "Exact discrete boundary (1 + sqrt(beta))^2: real negative roots above.",
                      SECTION, (Step("upper discriminant root", upper),))


@derivation
def derive_critical_stiffness_relative_error() -> Derivation:
    """How far the continuum boundary is from the exact one, as a series in c = 1 - beta."""
    ratio = get("critical_stiffness").expr / get("critical_stiffness_discrete").expr - 1
    c = sp.Symbol("c", positive=True)
    series = sp.series(ratio.subs(sym.beta, 1 - c), c, 0, 4).removeO()
    # (1 - beta)^2 / (1 - sqrt(beta))^2 = (1 + sqrt(beta))^2 leaves -(1 - sqrt(beta))^2 / (2 (1 +
    # beta)), and 1 - sqrt(beta) = (1 - beta) / (1 + sqrt(beta)) keeps its digits at beta -> 1
    rationalised = -(1 - sym.beta) ** 2 / (2 * (1 + sym.beta) * (1 + sp.sqrt(sym.beta)) ** 2)
    return Derivation("critical_stiffness_relative_error", sp.simplify(ratio), (sym.beta,),
                      "Relative error of the continuum critical stiffness: O((1-beta)^2).",
                      SECTION, (Step("series in c = 1 - beta", series),),
                      numeric_form=rationalised)


@derivation
def derive_discrete_damping_ratio() -> Derivation:
    """Damping ratio of the exact map in its oscillatory regime, from log(z) (python-control)."""
    poly = characteristic_polynomial()
    roots = sp.solve(poly, sym.z)
    modulus_sq = sp.simplify(sp.expand(roots[0] * roots[1]))  # conjugate pair: |z|^2 = product
    real_part = sp.simplify((roots[0] + roots[1]) / 2)
    angle = sp.acos(real_part / sp.sqrt(modulus_sq))
    log_modulus = sp.log(modulus_sq) / 2
    zeta_d = -log_modulus / sp.sqrt(log_modulus**2 + angle**2)
    return Derivation("discrete_damping_ratio", zeta_d, (sym.beta, sym.k),
                      "zeta of the poles z = exp(s), s = log z, for the oscillatory exact map.",
                      SECTION, (Step("|z|^2 = beta for a conjugate pair", modulus_sq),
                                Step("arg z = acos(Re z / |z|)", angle)),
                      domain=sp.And(sym.beta > 0, sym.k >= (1 - sp.sqrt(sym.beta))**2,
                                    sym.k <= (1 + sp.sqrt(sym.beta))**2))
