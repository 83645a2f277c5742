"""docs/theory.md section 2: the damped oscillator, its closed-form trajectory and the slow start.

The oscillator ``m e'' + c e' + k e = 0`` is written in standard form with damping ratio zeta and
natural frequency omega0. The trajectory for e(0) = e0, e'(0) = v0 is derived from the general
solution and rewritten in the unified form

    e(t) = exp(-zeta omega0 t) [e0 cosh(s t) + (v0 + zeta omega0 e0) sinh(s t) / s],
    s = omega0 sqrt(zeta^2 - 1),

which is real in every regime (s imaginary when underdamped) and smooth through zeta = 1.
"""

from __future__ import annotations

from functools import cache

import sympy as sp

from .build import derivation, get
from .derivation import Derivation, Step
from .symbols import sym

SECTION = "2. Continuum limit"


def _standard_form() -> dict[sp.Symbol, sp.Expr]:
    """omega0^2 and 2 zeta omega0 matched to k/m and c/m."""
    m, c = get("mass").expr, get("damping").expr
    (solution,) = sp.solve(
        [sp.Eq(sym.omega0**2, sym.k / m), sp.Eq(2 * sym.zeta * sym.omega0, c / m)],
        [sym.omega0, sym.zeta], dict=True,
    )
    return solution


@derivation
def derive_natural_frequency() -> Derivation:
    """omega0 = sqrt(k/m)."""
    return Derivation("natural_frequency", _standard_form()[sym.omega0], (sym.beta, sym.k),
                      "Natural angular frequency omega0 = sqrt(k/m) (rad/step).", SECTION,
                      (Step("m e'' + c e' + k e = m (e'' + 2 zeta omega0 e' + omega0^2 e)",
                            sp.Eq(sym.omega0**2, sym.k / get("mass").expr)),))


@derivation
def derive_damping_ratio() -> Derivation:
    """Derive zeta = c / (2 sqrt(m k))."""
    return Derivation("damping_ratio", sp.simplify(_standard_form()[sym.zeta]), (sym.beta, sym.k),
                      "Damping ratio zeta = c / (2 sqrt(m k)).", SECTION,
                      (Step("2 zeta omega0 = c/m",
                            sp.Eq(2 * sym.zeta * sym.omega0,
                                  get("damping").expr / get("mass").expr)),))


@cache
def _general_solution() -> tuple[sp.Expr, sp.Symbol, tuple[Step, ...]]:
    """Solution of e'' + 2 zeta omega0 e' + omega0^2 e = 0 with e(0)=e0, e'(0)=v0, split by s."""
    s = sp.Symbol("s", positive=True)  # root splitting omega0 sqrt(zeta^2 - 1)
    lam = sp.Symbol("lambda")
    char = sp.Eq(lam**2 + 2 * sym.zeta * sym.omega0 * lam + sym.omega0**2, 0)
    gamma = sym.zeta * sym.omega0
    lam_plus, lam_minus = -gamma + s, -gamma - s
    amp_plus, amp_minus = sp.symbols("A_plus A_minus")
    general = amp_plus * sp.exp(lam_plus * sym.t) + amp_minus * sp.exp(lam_minus * sym.t)
    amplitudes = sp.solve([sp.Eq(general.subs(sym.t, 0), sym.e0),
                           sp.Eq(sp.diff(general, sym.t).subs(sym.t, 0), sym.v0)],
                          [amp_plus, amp_minus], dict=True)[0]
    particular = general.subs(amplitudes)
    unified = sp.exp(-gamma * sym.t) * (
        sym.e0 * sp.cosh(s * sym.t) + (sym.v0 + gamma * sym.e0) * sp.sinh(s * sym.t) / s
    )
    if sp.simplify((particular - unified).rewrite(sp.exp)) != 0:
        raise AssertionError("unified trajectory does not match the general solution")
    steps = (
        Step("characteristic equation, roots -zeta omega0 +- s with s^2 = omega0^2 (zeta^2-1)",
             char),
        Step("general solution with amplitudes fixed by e(0) = e0, e'(0) = v0", particular),
        Step("rewritten with cosh and sinh (checked equal)", unified),
    )
    return unified, s, steps


@derivation
def derive_trajectory() -> Derivation:
    """Derive e(t) with s = omega0 sqrt(zeta^2 - 1): a real evaluation for zeta > 1.

    The same expression is the unified form of every regime in complex arithmetic; its real
    evaluation (the compiled and exported function) holds for zeta > 1 only, and
    ``grpodyn.trajectory`` evaluates the unified form in every regime.
    """
    unified, s, steps = _general_solution()
    expr = unified.subs(s, sym.omega0 * sp.sqrt(sym.zeta**2 - 1))
    return Derivation("trajectory", expr, (sym.t, sym.e0, sym.v0, sym.zeta, sym.omega0),
                      "Closed-form e(t) for e(0)=e0, e'(0)=v0 in the overdamped real form "
                      "(zeta > 1); grpodyn.trajectory is the unified form for every regime.",
                      SECTION, (*steps, Step("s = omega0 sqrt(zeta^2 - 1)", expr)),
                      # real arithmetic: s real, and cosh(s t) below overflow (s t < 700);
                      # grpodyn.numerics.trajectory covers every regime and every t
                      domain=sp.And(sym.zeta > 1, sym.omega0 * sp.sqrt(sym.zeta**2 - 1) * sym.t
                                    < 700))


@derivation
def derive_trajectory_critical() -> Derivation:
    """e(t) at zeta = 1: the limit s -> 0 of the unified form."""
    unified, s, steps = _general_solution()
    expr = sp.limit(unified, s, 0).subs(sym.zeta, 1)
    return Derivation("trajectory_critical", sp.simplify(expr),
                      (sym.t, sym.e0, sym.v0, sym.omega0),
                      "Critically damped e(t) = exp(-omega0 t) (e0 + (v0 + omega0 e0) t).",
                      SECTION, (*steps, Step("limit s -> 0, zeta = 1", expr)))


@derivation
def derive_trajectory_underdamped() -> Derivation:
    """e(t) for zeta < 1: s = i omega_d turns cosh, sinh into cos, sin."""
    unified, s, steps = _general_solution()
    omega_d = sym.omega0 * sp.sqrt(1 - sym.zeta**2)
    wd = sp.Symbol("omega_d", positive=True)
    rotated = unified.subs(s, sp.I * wd)
    rotated = sp.simplify(rotated.rewrite(sp.cos))
    expr = rotated.subs(wd, omega_d)
    return Derivation("trajectory_underdamped", expr,
                      (sym.t, sym.e0, sym.v0, sym.zeta, sym.omega0),
                      "Underdamped e(t) with the damped frequency omega0 sqrt(1 - zeta^2).",
                      SECTION, (*steps, Step("s = i omega_d", rotated)), domain=sym.zeta < 1)


@derivation
def derive_slow_start_trajectory() -> Derivation:
    """e(t) ~ e0 (1 - k t^2 / (2 m)) for v0 = 0: the curve starts flat."""
    e_t = get("trajectory").expr.subs(sym.v0, 0)
    series = sp.series(e_t, sym.t, 0, 3).removeO()
    series = sp.simplify(series)
    omega0 = get("natural_frequency").expr
    expr = sp.factor(series.subs(sym.omega0, omega0))
    return Derivation("slow_start_trajectory", expr, (sym.t, sym.e0, sym.beta, sym.k),
                      "Early trajectory from a zero momentum buffer: e0 (1 - k t^2 / (2m)).",
                      SECTION, (Step("series of e(t) at t = 0 with v0 = 0", series),))


@derivation
def derive_inflection_time() -> Derivation:
    """Time of the inflection of e(t) for v0 = 0 (steepest reward gain)."""
    unified, s, steps = _general_solution()
    e_t = unified.subs(sym.v0, 0)
    curvature = sp.factor(sp.simplify(sp.diff(e_t, sym.t, 2)))
    (bracket,) = [f for f in curvature.args if f.has(sp.cosh)]
    tanh_st = sp.Symbol("tanh_st")
    linear = sp.expand(bracket.subs(sp.sinh(s * sym.t), tanh_st * sp.cosh(s * sym.t))
                       / sp.cosh(s * sym.t))
    (tanh_value,) = sp.solve(linear, tanh_st)
    closed = sp.atanh(tanh_value) / s
    if sp.simplify(curvature.subs(sym.t, closed)) != 0:
        raise AssertionError("inflection time does not solve e''(t) = 0")
    expr = closed.subs(s, sym.omega0 * sp.sqrt(sym.zeta**2 - 1))
    return Derivation("inflection_time", expr, (sym.zeta, sym.omega0),
                      "Inflection time atanh(s/(zeta omega0))/s of the reward curve (v0 = 0).",
                      SECTION,
                      (Step("e''(t) = 0 with v0 = 0", curvature),
                       Step("divided by cosh(s t): tanh(s t) = s / (zeta omega0)", linear),
                       Step("solved for t", closed)),
                      domain=sym.zeta > 1)  # real s; numerics.trajectory.inflection_time: all
