"""docs/theory.md section 5: exact stability thresholds of the mean-field map.

Three lag structures: on-policy (l = 0), fixed staleness (l = d) and a refresh interval K with
sample-and-hold (l(n) = n mod K). The first two are linear recursions whose characteristic
polynomials are tested with the Jury conditions; the third maps (e, v) over one refresh cycle by a
2x2 monodromy matrix built from geometric sums of beta^j. Continuum estimates follow from
c_eff = c - k l_bar = 0; the reference paper's bound eta kappa K < 1 - beta is kept for comparison.
"""

from __future__ import annotations

from functools import cache

import sympy as sp

from .build import derivation, get
from .derivation import Derivation, Step
from .jury import jury_margins
from .regimes import characteristic_polynomial
from .symbols import sym

SECTION = "5. Stability thresholds"

#: A point inside the stable region, used to resolve the signs of the Jury absolute values.
_STABLE_POINT = {sym.beta: sp.Rational(1, 2), sym.k: sp.Rational(1, 100)}


def _resolve_abs(expr: sp.Expr, point: dict) -> sp.Expr:
    """Replace |u| by +-u with the sign u has at ``point`` (constant on the stable region)."""
    replacements = {}
    for node in expr.atoms(sp.Abs):
        sign = sp.sign(node.args[0].subs(point))
        replacements[node] = sign * node.args[0]
    return expr.xreplace(replacements)


def _first_crossing(margins: list[sp.Expr], variable: sp.Symbol, point: dict) -> sp.Expr:
    """Smallest positive root, at ``point``, of any margin in ``variable``: the threshold."""
    best, best_value = None, None
    others = {s: v for s, v in point.items() if s != variable}
    for margin in margins:
        for root in sp.solve(_resolve_abs(margin, point), variable):
            value = complex(root.subs(others).evalf())
            if abs(value.imag) < 1e-12 and value.real > 0 and (
                best_value is None or value.real < best_value
            ):
                best, best_value = root, value.real
    if best is None:
        raise ArithmeticError("no stability threshold found")
    return sp.simplify(best)


def _margins_without(margins: list[sp.Expr], variable: sp.Symbol) -> sp.Basic | None:
    """Return the Jury margins free of ``variable``, each > 0: where a threshold in it exists.

    A margin that does not hold whatever ``variable`` is (1 - beta > 0 on-policy) leaves no
    stable interval to bound: the threshold's closed form is no limit there. None when every
    margin depends on ``variable``.
    """
    standing = [sp.StrictGreaterThan(m, 0, evaluate=False) for m in margins
                if variable not in m.free_symbols]
    return sp.And(*standing, evaluate=False) if len(standing) > 1 else \
        (standing[0] if standing else None)


@derivation
def derive_stiffness_max() -> Derivation:
    """On-policy Jury limit: stable iff 0 < k < 2 (1 + beta)."""
    poly = sp.Poly(characteristic_polynomial(), sym.z)
    margins = jury_margins(poly.all_coeffs())
    k_max = _first_crossing(margins, sym.k, _STABLE_POINT)
    return Derivation("stiffness_max", k_max, (sym.beta,),
                      "On-policy stability limit 2(1+beta) (Jury).", SECTION,
                      (Step("Jury margins of z^2 - (1+beta-k) z + beta", sp.Tuple(*margins)),),
                      domain=_margins_without(margins, sym.k))


@derivation
def derive_staleness_polynomial() -> Derivation:
    """z^(d+1) - (1+beta) z^d + beta z^(d-1) + k: the map with a force stale by d steps."""
    update = get("mean_field_map").expr.subs(sym.a, sym.k / sym.kappa)
    modes = {sym.e_now: sym.z**sym.n, sym.e_prev: sym.z**(sym.n - 1),
             sym.e_lag: sym.z**(sym.n - sym.d)}
    recursion = sym.z**(sym.n + 1) - update.subs(modes)
    poly = sp.expand(sp.powsimp(sp.expand(recursion * sym.z**(sym.d - sym.n))))
    return Derivation("staleness_polynomial", poly, (sym.z, sym.beta, sym.k, sym.d),
                      "Characteristic polynomial of the map with staleness d (d >= 1).", SECTION,
                      (Step("e_n = z^n in the map with l = d", recursion),))


@cache
def _staleness_margins(d: int) -> list[sp.Expr]:
    poly = sp.Poly(get("staleness_polynomial").subs(d=d), sym.z)
    return jury_margins(poly.all_coeffs())


def _staleness_threshold(d: int) -> Derivation:
    margins = _staleness_margins(d)
    k_max = _first_crossing(margins, sym.k, _STABLE_POINT)
    return Derivation(f"staleness_stiffness_max_d{d}", k_max, (sym.beta,),
                      f"Exact stability limit of the stiffness with staleness d = {d}.", SECTION,
                      (Step(f"Jury margins for d = {d}", sp.Tuple(*margins)),))


@derivation
def derive_staleness_stiffness_max_d1() -> Derivation:
    """Derive d = 1: k* = 1 - beta exactly."""
    return _staleness_threshold(1)


@derivation
def derive_staleness_stiffness_max_d2() -> Derivation:
    """Derive d = 2: the positive root of k^2 + (1+beta) k - (1-beta)."""
    return _staleness_threshold(2)


@derivation
def derive_staleness_stability_condition_d3() -> Derivation:
    """Derive d = 3: the Jury conditions, symbolic (the threshold is found numerically)."""
    margins = _staleness_margins(3)
    return Derivation("staleness_stability_condition_d3",
                      sp.And(*[sp.StrictGreaterThan(m, 0) for m in margins]),
                      (sym.beta, sym.k), "Jury stability conditions for staleness d = 3.",
                      SECTION, (Step("Jury margins for d = 3", sp.Tuple(*margins)),))


@derivation
def derive_staleness_stiffness_max_continuum() -> Derivation:
    """Continuum estimate k* ~ c/d from c_eff = c - k d = 0."""
    c_eff = get("effective_damping").subs(l_bar=sym.d)
    (k_max,) = sp.solve(c_eff, sym.k)
    return Derivation("staleness_stiffness_max_continuum", k_max, (sym.beta, sym.d),
                      "Continuum staleness limit (1-beta)/d: the lag erodes all damping.",
                      SECTION, (Step("c_eff with l_bar = d", c_eff),),
                      domain=sp.Ge(sym.d, 1, evaluate=False))  # d = 0 is no lag: no limit


def _geometric(expr: sp.Expr) -> sp.Expr:
    """Return the beta != 1 branch of every geometric sum that sympy returns as a Piecewise."""
    return expr.replace(lambda node: isinstance(node, sp.Piecewise),
                        lambda node: node.args[-1][0])


@cache
def _monodromy() -> tuple[sp.Matrix, tuple[Step, ...]]:
    """(e, v) at the next refresh as a linear map of (e, v) at this one; v_n = e_n - e_{n-1}."""
    e_ref, v_ref = sp.symbols("E V")  # state at the refresh
    i = sp.Symbol("i", integer=True, positive=True)
    j = sp.Symbol("j", integer=True, nonnegative=True)
    # v_{i} = beta v_{i-1} - k E for i = 1..K (force held at the refresh value E)
    v_i = sym.beta**i * v_ref - sym.k * e_ref * _geometric(sp.summation(sym.beta**j, (j, 0, i - 1)))
    e_next = e_ref + _geometric(sp.summation(sp.expand(v_i), (i, 1, sym.K)))
    v_next = v_i.subs(i, sym.K)
    matrix = sp.Matrix([[sp.diff(e_next, e_ref), sp.diff(e_next, v_ref)],
                        [sp.diff(v_next, e_ref), sp.diff(v_next, v_ref)]]).applyfunc(sp.simplify)
    steps = (Step("velocity within a cycle, force held at E", v_i),
             Step("displacement at the next refresh", e_next),
             Step("monodromy matrix M_K(beta, k)", sp.ImmutableMatrix(matrix)))
    return matrix, steps


def _monodromy_entry(row: int, col: int) -> Derivation:
    matrix, steps = _monodromy()
    return Derivation(f"monodromy_{row + 1}{col + 1}", matrix[row, col],
                      (sym.beta, sym.k, sym.K),
                      f"Entry ({row + 1},{col + 1}) of the refresh-cycle monodromy matrix.",
                      SECTION, steps)


@derivation
def derive_monodromy_11() -> Derivation:
    """Derive d e_{K} / d e_0 over one cycle."""
    return _monodromy_entry(0, 0)


@derivation
def derive_monodromy_12() -> Derivation:
    """Derive d e_{K} / d v_0 over one cycle."""
    return _monodromy_entry(0, 1)


@derivation
def derive_monodromy_21() -> Derivation:
    """Derive d v_{K} / d e_0 over one cycle."""
    return _monodromy_entry(1, 0)


@derivation
def derive_monodromy_22() -> Derivation:
    """Derive d v_{K} / d v_0 over one cycle."""
    return _monodromy_entry(1, 1)


@derivation
def derive_monodromy_trace() -> Derivation:
    """Derive tr M_K."""
    matrix, steps = _monodromy()
    return Derivation("monodromy_trace", sp.simplify(matrix.trace()), (sym.beta, sym.k, sym.K),
                      "Trace of the refresh-cycle monodromy matrix.", SECTION, steps)


@derivation
def derive_monodromy_determinant() -> Derivation:
    """Derive det M_K."""
    matrix, steps = _monodromy()
    return Derivation("monodromy_determinant", sp.factor(sp.simplify(matrix.det())),
                      (sym.beta, sym.k, sym.K),
                      "Determinant of the refresh-cycle monodromy matrix.", SECTION, steps)


@derivation
def derive_refresh_stability_condition() -> Derivation:
    """Jury for the 2x2 monodromy: |det M| < 1 and |tr M| < 1 + det M."""
    trace, det = get("monodromy_trace").expr, get("monodromy_determinant").expr
    margins = jury_margins([1, -trace, det])
    return Derivation("refresh_stability_condition",
                      sp.And(*[sp.StrictGreaterThan(m, 0) for m in margins]),
                      (sym.beta, sym.k, sym.K),
                      "Stability with refresh interval K: eigenvalues of M_K in the unit disc.",
                      SECTION, (Step("Jury margins of z^2 - tr z + det", sp.Tuple(*margins)),))


@derivation
def derive_refresh_threshold_no_momentum() -> Derivation:
    """Derive beta = 0: K* = 2 / k exactly."""
    trace = get("monodromy_trace").subs(beta=0)
    det = get("monodromy_determinant").subs(beta=0)
    margins = jury_margins([1, -trace, det])
    k_star = _first_crossing(margins, sym.K, {sym.k: sp.Rational(1, 100)})
    return Derivation("refresh_threshold_no_momentum", k_star, (sym.k,),
                      "Refresh-interval threshold 2/k without momentum (exact).", SECTION,
                      (Step("trace and determinant at beta = 0", sp.Tuple(trace, det)),
                       Step("Jury margins", sp.Tuple(*margins))))


@derivation
def derive_refresh_threshold_continuum() -> Derivation:
    """Continuum estimate K* ~ 1 + 2c/k from c - k (K-1)/2 = 0."""
    c_eff = get("effective_damping").subs(l_bar=get("mean_refresh_lag").expr)
    (k_star,) = sp.solve(c_eff, sym.K)
    return Derivation("refresh_threshold_continuum", sp.expand(k_star), (sym.beta, sym.k),
                      "Continuum refresh threshold 1 + 2(1-beta)/k.", SECTION,
                      (Step("c_eff with l_bar = (K-1)/2", c_eff),))


@derivation
def derive_refresh_threshold_reference() -> Derivation:
    """Derive the reference paper's bound eta kappa K < 1 - beta, solved for K."""
    bound = sp.Eq(get("stiffness").expr * sym.K, get("damping").expr)
    (k_ref,) = sp.solve(bound.subs(get("stiffness").expr, sym.k), sym.K)
    return Derivation("refresh_threshold_reference", k_ref, (sym.beta, sym.k),
                      "Reference paper's refresh bound (1-beta)/k (arXiv 2606.30789).", SECTION,
                      (Step("eta kappa K = 1 - beta at the bound", bound),))
