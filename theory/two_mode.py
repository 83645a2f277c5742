"""The two-mode map: a stiff and a soft direction sharing one heavy-ball optimizer.

docs/theory.md section 1 projects the parameter dynamics on one scalar, the reward. A network has
(at least) two timescales: stiff directions (the top of the curvature spectrum) and soft ones
(what is left of the update). Model: the displacement of the weights from the optimum in the
eigenbasis of the update's Jacobian, u = (u_s, u_r), curvatures h_s > h_r > 0, one heavy-ball
optimizer with step a and momentum beta, and the force lagged by l(n) for both coordinates:

    u_{n+1} = (1 + beta) u_n - beta u_{n-1} - a diag(h_s, h_r) u_{n-l(n)},

stiffnesses k_s = a h_s, k_r = a h_r, and a reward that is quadratic in the displacement with the
same curvatures (the update is the reward's gradient): r* - r = (h_s u_s^2 + h_r u_r^2) / 2.

Derived here:

- the joint characteristic polynomial factorises into the single-mode polynomials of sections 4
  and 5, on-policy and with staleness 1; the sample-and-hold cycle map is block-diagonal. The lag
  does not couple the modes of the linear map: stability is the conjunction of the modes'
  conditions (the stiff mode binds), each mode has its own oscillation momentum;
- the relaxation of the reward: the deficit is a sum of the squared modes, so its slowest decay is
  twice the soft mode's slowest rate, tau = -1 / (2 ln z_r);
- the stiffness a single-scalar measurement sees: the one-step drift divided by the deficit is
  2 (w_s k_s + (1 - w_s) k_r), w_s the stiff mode's share of the deficit. The modes couple only
  through this observable: the share, hence the scalar stiffness, falls from the stiff to the soft
  value as the stiff mode relaxes.
"""

from __future__ import annotations

from functools import cache

import sympy as sp
from sympy.codegen.cfunctions import log1p

from .build import derivation, get
from .derivation import Derivation, Step
from .jury import jury_margins
from .regimes import characteristic_polynomial
from .symbols import sym

SECTION = "1. Discrete mean-field map (two modes)"


def _mode_polynomial(k: sp.Expr) -> sp.Expr:
    """Return the on-policy characteristic polynomial of one mode of stiffness ``k``."""
    return characteristic_polynomial().subs(sym.k, k)


def _companion(k: sp.Expr, lagged: bool) -> sp.Matrix:
    """One mode's step matrix on (u_n, u_{n-1}); the force uses u_{n-1} when ``lagged``."""
    if lagged:  # staleness 1: u_{n+1} = (1+beta) u_n - (beta + k) u_{n-1}
        return sp.Matrix([[1 + sym.beta, -(sym.beta + k)], [1, 0]])
    return sp.Matrix([[1 + sym.beta - k, -sym.beta], [1, 0]])


@cache
def _joint() -> tuple[sp.Expr, tuple[Step, ...]]:
    """Characteristic polynomial of the joint on-policy map, checked to factorise."""
    steps = []
    product = None
    for lagged in (False, True):
        joint = sp.diag(_companion(sym.k_s, lagged), _companion(sym.k_r, lagged))
        # the state (u_s, u_s_prev, u_r, u_r_prev): H diagonal, one optimizer, one lag
        poly = sp.expand((sym.z * sp.eye(4) - joint).det())
        factors = sp.expand((sym.z * sp.eye(2) - _companion(sym.k_s, lagged)).det()
                            * (sym.z * sp.eye(2) - _companion(sym.k_r, lagged)).det())
        if sp.expand(poly - factors) != 0:
            raise AssertionError("the joint polynomial does not factorise")
        label = "staleness 1" if lagged else "on-policy"
        steps.append(Step(f"joint map, {label}: det(z I - J) = p(z; k_s) p(z; k_r)",
                          sp.factor(poly)))
        if not lagged:
            product = poly
    single = sp.expand(_mode_polynomial(sym.k_s) * _mode_polynomial(sym.k_r))
    if sp.expand(product - single) != 0:
        raise AssertionError("the on-policy factors are not section 4's polynomial")
    return product, tuple(steps)


@derivation
def derive_two_mode_characteristic() -> Derivation:
    """Joint on-policy characteristic polynomial: the product of the two modes' polynomials."""
    poly, steps = _joint()
    return Derivation("two_mode_characteristic", poly, (sym.z, sym.beta, sym.k_s, sym.k_r),
                      "Two-mode on-policy characteristic polynomial p(z; k_s) p(z; k_r).",
                      SECTION, steps)


@derivation
def derive_two_mode_stability_condition() -> Derivation:
    """On-policy: both factors Schur stable (Jury on each), which the stiff mode decides."""
    _, steps = _joint()
    margins = []
    for k in (sym.k_s, sym.k_r):
        coeffs = sp.Poly(_mode_polynomial(k), sym.z).all_coeffs()
        margins += jury_margins(coeffs)
    condition = sp.And(*[sp.StrictGreaterThan(m, 0) for m in margins])
    return Derivation("two_mode_stability_condition", condition, (sym.beta, sym.k_s, sym.k_r),
                      "Two-mode on-policy stability: Jury margins of both mode polynomials.",
                      SECTION, (*steps, Step("Jury margins of each factor", sp.Tuple(*margins))))


@derivation
def derive_two_mode_refresh_stability_condition() -> Derivation:
    """Sample-and-hold with refresh K: the cycle map is blockdiag(M_K(k_s), M_K(k_r))."""
    trace, det = get("monodromy_trace").expr, get("monodromy_determinant").expr
    margins = []
    blocks = []
    for k in (sym.k_s, sym.k_r):
        tr_k, det_k = trace.subs(sym.k, k), det.subs(sym.k, k)
        blocks.append(sp.Tuple(tr_k, det_k))
        margins += jury_margins([1, -tr_k, det_k])
    condition = sp.And(*[sp.StrictGreaterThan(m, 0) for m in margins])
    return Derivation("two_mode_refresh_stability_condition", condition,
                      (sym.beta, sym.k_s, sym.k_r, sym.K),
                      "Two-mode sample-and-hold stability: each mode's monodromy in the unit disc.",
                      SECTION,
                      (Step("the held force diag(k_s, k_r) u_refresh keeps the modes apart: "
                            "(trace, det) of each block", sp.Tuple(*blocks)),
                       Step("Jury margins of both blocks", sp.Tuple(*margins))))


@derivation
def derive_soft_pole() -> Derivation:
    """Derive the soft mode's slowest pole, the larger real root of p(z; k_r)."""
    roots = sp.solve(_mode_polynomial(sym.k_r), sym.z)
    point = {sym.beta: sp.Rational(1, 2), sym.k_r: sp.Rational(1, 100)}
    largest = max(roots, key=lambda root: float(root.subs(point)))
    return Derivation("soft_pole", sp.simplify(largest), (sym.beta, sym.k_r),
                      "Slowest pole of the soft mode (monotone regime).", SECTION,
                      (Step("roots of z^2 - (1 + beta - k_r) z + beta", sp.Tuple(*roots)),),
                      domain=sp.And(sym.k_r < get("critical_stiffness_discrete").expr
                                    .subs(sym.k, sym.k_r)))


@cache
def _deficit() -> tuple[sp.Expr, tuple[Step, ...]]:
    """Reward deficit of the two-mode map along the decay of each mode."""
    n = sym.n
    amp_s, amp_r, z_s, z_r = sp.symbols("U_s U_r z_s z_r", positive=True)
    h_s, h_r = sp.symbols("h_s h_r", positive=True)
    deficit = (h_s * (amp_s * z_s**n) ** 2 + h_r * (amp_r * z_r**n) ** 2) / 2
    # late times: z_s < z_r leaves the soft term; its decay rate per step
    rate = sp.simplify(-sp.diff(sp.expand_log(sp.log(deficit.subs(amp_s, 0)), force=True), n))
    return rate, (Step("deficit r* - r with u_i = U_i z_i^n", deficit),
                  Step("late-time decay rate -d ln(deficit)/dn of the soft term", rate))


@derivation
def derive_two_mode_relaxation_time() -> Derivation:
    """Derive the reward's tau = -1 / (2 ln z_r): the deficit is quadratic in the soft mode."""
    rate, steps = _deficit()
    z_r = sp.Symbol("z_r", positive=True)
    tau = (1 / rate).subs(z_r, get("soft_pole").expr)
    # ln z_r = log1p(w), w = z_r - 1 the root of w^2 + a w + k_r = 0 (a = 1 - beta + k_r) nearer
    # zero, rationalised where a > 0 so that a small k_r keeps its digits; the discriminant
    # a^2 - 4 k_r factored, so that it does not round below zero near the bound
    a = 1 - sym.beta + sym.k_r
    root = sp.sqrt(((1 - sp.sqrt(sym.beta)) ** 2 - sym.k_r)
                   * ((1 + sp.sqrt(sym.beta)) ** 2 - sym.k_r))
    shift = sp.Piecewise((-2 * sym.k_r / (a + root), a > 0), ((root - a) / 2, True))
    return Derivation("two_mode_relaxation_time", tau, (sym.beta, sym.k_r),
                      "Relaxation time of the reward in the two-mode map (monotone soft mode).",
                      SECTION, (*steps, Step("z_r = the soft pole", tau)),
                      domain=get("soft_pole").domain,
                      numeric_form=-1 / (2 * log1p(shift)))


@derivation
def derive_oscillation_momentum() -> Derivation:
    """Momentum above which a mode of stiffness k oscillates: (1 - sqrt(k))^2 for k < 1."""
    boundary = get("critical_stiffness_discrete").expr
    solutions = sp.solve(sp.Eq(boundary, sym.k), sym.beta)
    point = {sym.k: sp.Rational(1, 4)}
    inside = [s for s in solutions if 0 < float(s.subs(point)) < 1]
    (beta_osc,) = inside
    return Derivation("oscillation_momentum", sp.factor(beta_osc), (sym.k,),
                      "Momentum at which a mode of stiffness k turns oscillatory (k < 1).",
                      SECTION, (Step("(1 - sqrt(beta))^2 = k solved for beta in (0, 1)",
                                     sp.Tuple(*solutions)),),
                      domain=sym.k < 1)


@derivation
def derive_two_mode_effective_stiffness() -> Derivation:
    """Scalar stiffness of the one-step drift: 2 (w_s k_s + (1 - w_s) k_r)."""
    u_s, u_r, h_s, h_r = sp.symbols("u_s u_r h_s h_r", positive=True)
    deficit = (h_s * u_s**2 + h_r * u_r**2) / 2
    step = {u_s: u_s - sym.a * h_s * u_s, u_r: u_r - sym.a * h_r * u_r}
    change = sp.expand(deficit.subs(step, simultaneous=True) - deficit)
    first_order = sp.diff(change, sym.a).subs(sym.a, 0) * sym.a
    k_eff = sp.simplify(-first_order / deficit)
    share = h_s * u_s**2 / (2 * deficit)
    target = 2 * (sym.w_s * sym.k_s + (1 - sym.w_s) * sym.k_r)
    check = target.subs({sym.w_s: share, sym.k_s: sym.a * h_s, sym.k_r: sym.a * h_r})
    if sp.simplify(check - k_eff) != 0:
        raise AssertionError("effective stiffness is not the share-weighted mean")
    return Derivation("two_mode_effective_stiffness", target, (sym.w_s, sym.k_s, sym.k_r),
                      "Stiffness a one-step drift measurement sees: 2 (w_s k_s + (1-w_s) k_r).",
                      SECTION,
                      (Step("deficit r* - r", deficit),
                       Step("first-order change of the deficit in one step", first_order),
                       Step("- change / deficit", k_eff),
                       Step("w_s = h_s u_s^2 / (2 deficit)", share)),
                      domain=sym.w_s <= 1)
