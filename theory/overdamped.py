"""docs/theory.md section 3: the overdamped limit and the empirical saturation law.

With m -> 0 the oscillator reduces to ``c e' = -k e``, a single exponential with relaxation time
tau = c/k. Its solution is the empirical law r(t) = r_inf - (r_inf - r0) exp(-t/tau) of
arXiv 2507.18014, whose constants map to the fixed point, the inverse stiffness and the
model-size exponent of the curvature. The first correction in m is a delay m/c: inertia.
"""

from __future__ import annotations

import sympy as sp

from .build import derivation, get
from .derivation import Derivation, Step
from .symbols import sym

SECTION = "3. Overdamped limit and the empirical law"


def _first_order_solution() -> tuple[sp.Expr, sp.Eq]:
    e = sp.Function("e")
    ode = sp.Eq(sym.c * e(sym.t).diff(sym.t) + sym.k * e(sym.t), 0)
    general = sp.dsolve(ode, e(sym.t)).rhs
    (constant,) = general.free_symbols - {sym.t, sym.k, sym.c}
    (value,) = sp.solve(sp.Eq(general.subs(sym.t, 0), sym.e0), constant)
    return general.subs(constant, value), ode


@derivation
def derive_relaxation_time() -> Derivation:
    """Derive tau = c / k = (1 - beta) / (a kappa)."""
    solution, ode = _first_order_solution()
    rate = -sp.diff(sp.log(solution / sym.e0), sym.t)
    tau = sp.simplify(1 / rate).subs({sym.c: get("damping").expr,
                                      sym.k: get("stiffness").expr})
    return Derivation("relaxation_time", tau, (sym.beta, sym.a, sym.kappa),
                      "Relaxation time tau = (1 - beta) / (a kappa) of the overdamped limit.",
                      SECTION, (Step("overdamped limit m -> 0", ode),
                                Step("solution with e(0) = e0", solution)))


@derivation
def derive_saturation_law() -> Derivation:
    """r(t) = r* - (r* - r0) exp(-t / tau): the empirical law, from the overdamped solution."""
    solution, _ = _first_order_solution()
    law = sym.r_star + solution.subs({sym.e0: sym.r0 - sym.r_star, sym.k: sym.c / sym.tau})
    return Derivation("saturation_law", law, (sym.t, sym.r0, sym.r_star, sym.tau),
                      "Single-exponential saturation law: plateau r*, timescale tau = c/k.",
                      SECTION, (Step("r = r* + e with e0 = r0 - r* and k = c / tau", law),))


@derivation
def derive_size_exponent() -> Derivation:
    """Derive d ln tau / d ln N = -alpha when kappa(N) = kappa0 N^alpha."""
    tau = get("relaxation_time").expr.subs(sym.kappa, sym.kappa0 * sym.N**sym.alpha)
    exponent = sp.simplify(sp.diff(sp.log(tau), sym.N) * sym.N)
    return Derivation("size_exponent", exponent, (sym.alpha,),
                      "Model-size exponent of tau: minus the curvature exponent alpha.", SECTION,
                      (Step("tau with kappa = kappa0 N^alpha", tau),))


@derivation
def derive_slow_root() -> Derivation:
    """Derive the slow root of m s^2 + c s + k = 0 to first order in m."""
    s = sp.Symbol("s")
    roots = sp.solve(sym.m * s**2 + sym.c * s + sym.k, s)
    slow = [r for r in roots if sp.limit(r, sym.m, 0).is_finite][0]
    series = sp.series(slow, sym.m, 0, 2).removeO()
    return Derivation("slow_root", sp.expand(series), (sym.m, sym.c, sym.k),
                      "Slow decay rate -k/c - m k^2/c^3 + O(m^2): inertia slows relaxation.",
                      SECTION, (Step("slow root (finite as m -> 0)", slow),),
                      domain=sym.c**2 > 4 * sym.m * sym.k)  # the series in m converges there


@derivation
def derive_inertial_delay() -> Derivation:
    """Delay t_d = m / c: e(t) ~ e0 exp(-(t - t_d)/tau) to first order in m."""
    s = sp.Symbol("s")
    roots = sp.solve(sym.m * s**2 + sym.c * s + sym.k, s)
    slow = [r for r in roots if sp.limit(r, sym.m, 0).is_finite][0]
    fast = [r for r in roots if r != slow][0]
    # amplitude of the slow mode for e(0) = e0, e'(0) = 0
    amplitude = fast / (fast - slow)
    delay = sp.series(sp.log(amplitude) / (-slow), sym.m, 0, 2).removeO()
    delay_beta = sp.simplify(delay.subs({sym.m: get("mass").expr, sym.c: get("damping").expr}))
    return Derivation("inertial_delay", sp.factor(delay_beta), (sym.beta,),
                      "Delay m/c = (1+beta)/(2(1-beta)) steps that inertia adds to the law.",
                      SECTION, (Step("slow-mode amplitude / e0 for v0 = 0", amplitude),
                                Step("delay ln(amplitude)/rate to first order in m", delay)))


@derivation
def derive_gain_fraction_time() -> Derivation:
    """Time to reach a fraction q of the total gain, overdamped with the inertial delay."""
    law = get("saturation_law").expr
    gain = (law - sym.r0) / (sym.r_star - sym.r0)
    (t_q,) = sp.solve(sp.Eq(gain, sym.q), sym.t)
    t_q = t_q.subs(sym.tau, get("relaxation_time").expr) + get("inertial_delay").expr
    return Derivation("gain_fraction_time", t_q, (sym.q, sym.beta, sym.a, sym.kappa),
                      "Steps to a fraction q of the gain: tau ln(1/(1-q)) + m/c.", SECTION,
                      (Step("fraction of the gain of the saturation law", gain),),
                      domain=sym.q < 1)  # the whole gain (q = 1) is never reached
