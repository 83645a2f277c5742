"""Section 9 of THEORY.md: Adam and learning-rate schedules.

Adam with a slowly varying second moment is heavy-ball momentum with beta = beta1 and effective
step a = eta (1 - beta1) / sqrt(v_hat); bias correction enlarges the first steps; v_hat contains the
gradient noise, so the group size enters the stiffness. Linear warmup makes k time-dependent and,
overdamped, gives a Gaussian-in-time start.
"""

from __future__ import annotations

import sympy as sp

from .build import derivation, get
from .derivation import Derivation, Step
from .symbols import sym

SECTION = "9. Adam and schedules"


@derivation
def derive_adam_effective_step() -> Derivation:
    """a = eta (1 - beta1) / sqrt(v_hat), by matching Adam's recursion to heavy-ball."""
    m_prev, g, step_prev, a = sp.symbols("m_prev g Delta_prev a_eff")
    m_now = sym.beta1 * m_prev + (1 - sym.beta1) * g
    step_now = -sym.eta * m_now / sp.sqrt(sym.v_hat)
    # Delta_prev = -eta m_prev / sqrt(v_hat), so m_prev = -Delta_prev sqrt(v_hat) / eta
    step_now = sp.expand(step_now.subs(m_prev, -step_prev * sp.sqrt(sym.v_hat) / sym.eta))
    heavy_ball = sym.beta1 * step_prev - a * g
    (solution,) = sp.solve(sp.Eq(step_now, heavy_ball), a)
    return Derivation("adam_effective_step", sp.factor(solution), (sym.eta, sym.beta1, sym.v_hat),
                      "Adam's effective heavy-ball step eta (1-beta1)/sqrt(v_hat).", SECTION,
                      (Step("Adam step written with the previous step", step_now),
                       Step("heavy-ball step with momentum beta1", heavy_ball)))


@derivation
def derive_adam_bias_corrected_step() -> Derivation:
    """Weight of the newest gradient at step n with bias correction: a / (1 - beta1^n)."""
    a = get("adam_effective_step").expr
    corrected = a / (1 - sym.beta1**sym.n)
    return Derivation("adam_bias_corrected_step", corrected, (sym.n, sym.eta, sym.beta1, sym.v_hat),
                      "Bias-corrected Adam weight of the newest gradient: eta/sqrt(v_hat) at n=1, "
                      "so no zero-momentum slow start.", SECTION,
                      (Step("m_hat = m / (1 - beta1^n)", corrected),
                       Step("first step", sp.simplify(corrected.subs(sym.n, 1)))))


@derivation
def derive_adam_second_moment() -> Derivation:
    """v_hat = g_mean^2 + sigma_g^2 / (B G): the noise enters the second moment."""
    noise = sp.Symbol("noise_var", positive=True)
    second_moment = sym.g_mean**2 + noise  # E[g^2] = (E g)^2 + Var g
    expr = second_moment.subs(noise, sym.sigma_g2 / (sym.B * sym.G))
    return Derivation("adam_second_moment", expr, (sym.g_mean, sym.sigma_g2, sym.B, sym.G),
                      "Adam's second moment: mean gradient squared plus the 1/(B G) noise.",
                      SECTION, (Step("E[g^2] = (E g)^2 + Var g", second_moment),))


@derivation
def derive_adam_stiffness() -> Derivation:
    """k = a kappa with Adam's effective step: G enters through v_hat."""
    a = get("adam_effective_step").expr.subs(sym.v_hat, get("adam_second_moment").expr)
    k_adam = get("stiffness").expr.subs(sym.a, a)
    return Derivation("adam_stiffness", k_adam,
                      (sym.eta, sym.beta1, sym.kappa, sym.g_mean, sym.sigma_g2, sym.B, sym.G),
                      "Adam stiffness eta (1-beta1) kappa / sqrt(g^2 + sigma^2/(B G)).", SECTION,
                      (Step("a with v_hat substituted", a),))


@derivation
def derive_warmup_trajectory() -> Derivation:
    """Overdamped with linear warmup: e0 exp(-k t^2 / (2 c T_w))."""
    e = sp.Function("e")
    c = get("damping").expr
    ode = sp.Eq(c * e(sym.t).diff(sym.t) + sym.k * (sym.t / sym.T_w) * e(sym.t), 0)
    log_rate = sp.solve(ode.lhs.subs(e(sym.t).diff(sym.t), sp.Symbol("r") * e(sym.t)),
                        sp.Symbol("r"))[0]  # d ln e / dt
    u = sp.Symbol("u", nonnegative=True)
    solution = sym.e0 * sp.exp(sp.integrate(log_rate.subs(sym.t, u), (u, 0, sym.t)))
    if sp.simplify(ode.lhs.subs(e(sym.t), solution).doit()) != 0:
        raise AssertionError("warmup trajectory does not solve its ODE")
    return Derivation("warmup_trajectory", solution,
                      (sym.t, sym.e0, sym.beta, sym.k, sym.T_w),
                      "Overdamped relaxation under linear warmup: a second cause of slow start.",
                      SECTION, (Step("c e' + k (t / T_w) e = 0", ode),
                                Step("separation of variables: d ln e / dt", log_rate)))
