"""Section 9 of THEORY.md: Adam and learning-rate schedules.

Adam with a slowly varying second moment is heavy-ball momentum with beta = beta1 and effective
step a = eta (1 - beta1) / sqrt(v_hat); bias correction enlarges the first steps; v_hat contains the
gradient noise, so the group size enters the stiffness: in the measured constants
kappa_A = kappa / |g| and rho_A = sigma_g^2 / g^2 the stiffness is
eta (1 - beta1) kappa_A / sqrt(1 + rho_A / (B G)), a function of B G alone, G-invariant where the
signal dominates and growing like sqrt(B G) where the noise does. Linear warmup makes k
time-dependent and, overdamped, gives a Gaussian-in-time start.
"""

from __future__ import annotations

import sympy as sp

from .build import derivation, get
from .derivation import Derivation, Step
from .symbols import sym

SECTION = "9. Adam and schedules"


@derivation
def derive_adam_effective_step() -> Derivation:
    """Derive a = eta (1 - beta1) / sqrt(v_hat), by matching Adam's recursion to heavy-ball."""
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
    """Derive k = a kappa with Adam's effective step: G enters through v_hat."""
    a = get("adam_effective_step").expr.subs(sym.v_hat, get("adam_second_moment").expr)
    k_adam = get("stiffness").expr.subs(sym.a, a)
    return Derivation("adam_stiffness", k_adam,
                      (sym.eta, sym.beta1, sym.kappa, sym.g_mean, sym.sigma_g2, sym.B, sym.G),
                      "Adam stiffness eta (1-beta1) kappa / sqrt(g^2 + sigma^2/(B G)).", SECTION,
                      (Step("a with v_hat substituted", a),))


def _positive_gradient_scale() -> sp.Symbol:
    """|g_mean| as a positive symbol, so that sqrt(g^2 (...)) = |g| sqrt(...)."""
    return sp.Symbol("g_abs", positive=True)


@derivation
def derive_adam_stiffness_noise_ratio() -> Derivation:
    """k(G, B) = eta (1 - beta1) kappa_A / sqrt(1 + rho_A / (B G)).

    Adam's stiffness in the measured constants kappa_A = kappa / |g| and rho_A = sigma_g^2 / g^2.
    """
    g = _positive_gradient_scale()
    k_adam = get("adam_stiffness").expr.subs(sym.g_mean, g)
    with_ratio = k_adam.subs(sym.sigma_g2, sym.rho_A * g**2)
    normalised = with_ratio.subs(sym.kappa, sym.kappa_A * g)
    result = sym.eta * (1 - sym.beta1) * sym.kappa_A / sp.sqrt(1 + sym.rho_A / (sym.B * sym.G))
    if sp.simplify(normalised - result) != 0:
        raise AssertionError("Adam stiffness in noise-ratio form does not match")
    return Derivation("adam_stiffness_noise_ratio", result,
                      (sym.eta, sym.beta1, sym.kappa_A, sym.rho_A, sym.B, sym.G),
                      "Adam stiffness eta (1-beta1) kappa_A / sqrt(1 + rho_A/(B G)): depends on "
                      "G and B only through B G.", SECTION,
                      (Step("sigma_g^2 = rho_A g^2", with_ratio),
                       Step("kappa = kappa_A |g|", sp.simplify(normalised))))


@derivation
def derive_adam_stiffness_signal_limit() -> Derivation:
    """Signal-dominated limit rho_A / (B G) -> 0: k = eta (1 - beta1) kappa_A, G-invariant."""
    k = get("adam_stiffness_noise_ratio").expr
    limit = sp.limit(k, sym.rho_A, 0)
    return Derivation("adam_stiffness_signal_limit", limit, (sym.eta, sym.beta1, sym.kappa_A),
                      "Signal-dominated Adam: k = eta (1-beta1) kappa_A, independent of G and B "
                      "(the reference paper's G-invariance).", SECTION,
                      (Step("k(G, B)", k), Step("rho_A / (B G) -> 0", limit)))


@derivation
def derive_adam_stiffness_noise_limit() -> Derivation:
    """Noise-dominated limit B G << rho_A: k ~ eta (1 - beta1) kappa_A sqrt(B G / rho_A)."""
    n = sp.Symbol("n_samples", positive=True)  # B G
    k = get("adam_stiffness_noise_ratio").expr.subs(sym.B, n / sym.G)
    leading = sp.limit(k / sp.sqrt(n), n, 0) * sp.sqrt(n)
    result = sp.powsimp(leading.subs(n, sym.B * sym.G), force=True)
    return Derivation("adam_stiffness_noise_limit", result,
                      (sym.eta, sym.beta1, sym.kappa_A, sym.rho_A, sym.B, sym.G),
                      "Noise-dominated Adam: the effective step grows like sqrt(B G / rho_A).",
                      SECTION, (Step("k as a function of n = B G", k),
                                Step("leading term as n -> 0", leading)))


@derivation
def derive_adam_stiffness_bg_exponent() -> Derivation:
    """Derive d ln k / d ln (B G) = rho_A / (2 (B G + rho_A)).

    1/2 noise-dominated, 0 signal-dominated.
    """
    n = sp.Symbol("n_samples", positive=True)  # B G
    k = get("adam_stiffness_noise_ratio").expr.subs(sym.B, n / sym.G)
    exponent = sp.simplify(sp.diff(sp.log(k), n) * n)
    result = sp.factor(exponent.subs(n, sym.B * sym.G))
    return Derivation("adam_stiffness_bg_exponent", result, (sym.rho_A, sym.B, sym.G),
                      "Local exponent of B G in Adam's stiffness: from 1/2 (noise) to 0 (signal).",
                      SECTION, (Step("d ln k / d ln n, n = B G", exponent),))


@derivation
def derive_adam_relaxation_time() -> Derivation:
    """Derive tau = (1 - beta1) / k = sqrt(1 + rho_A / (B G)) / (eta kappa_A)."""
    k = get("adam_stiffness_noise_ratio").expr
    c = get("damping").expr.subs(sym.beta, sym.beta1)
    tau = sp.simplify(c / k)
    return Derivation("adam_relaxation_time", tau,
                      (sym.eta, sym.kappa_A, sym.rho_A, sym.B, sym.G),
                      "Overdamped Adam relaxation time sqrt(1 + rho_A/(B G)) / (eta kappa_A).",
                      SECTION, (Step("tau = c / k with c = 1 - beta1", c / k),))


@derivation
def derive_adam_tau_lr_exponent() -> Derivation:
    """Derive d ln tau / d ln eta = -1: the relaxation time scales as 1/lr at fixed B G."""
    tau = get("adam_relaxation_time").expr
    exponent = sp.simplify(sp.diff(sp.log(tau), sym.eta) * sym.eta)
    return Derivation("adam_tau_lr_exponent", exponent, (),
                      "Exponent of the learning rate in Adam's relaxation time: -1.", SECTION,
                      (Step("tau(eta)", tau),))


@derivation
def derive_finite_group_drift_factor() -> Derivation:
    """Derive D = 1 - p^G - (1-p)^G: the share of groups that carry an advantage.

    A group whose completions all agree (S = 0 or S = G) has zero advantage and contributes
    neither gradient nor gradient noise (THEORY.md section 7), so the mean force on the slow
    mode is D times its value with every group informative.
    """
    degenerate = get("degenerate_group_probability").expr
    factor = sp.simplify(1 - degenerate)
    return Derivation("finite_group_drift_factor", factor, (sym.G, sym.p),
                      "Share of informative (non-degenerate) groups at success probability p: "
                      "the finite-G factor on the drift.", SECTION,
                      (Step("1 - P(S = 0) - P(S = G)", 1 - degenerate),))


@derivation
def derive_sgd_stiffness_finite_group() -> Derivation:
    """Heavy-ball SGD with degenerate groups: k = eta kappa D(G, p)."""
    drift = get("finite_group_drift_factor").expr
    k = get("stiffness").expr.subs(sym.a, sym.eta) * drift
    return Derivation("sgd_stiffness_finite_group", k, (sym.eta, sym.kappa, sym.G, sym.p),
                      "SGD stiffness with the finite-G drift factor: eta kappa (1 - p^G - "
                      "(1-p)^G); kappa is the curvature per informative group.", SECTION,
                      (Step("k = a kappa with a = eta", get("stiffness").expr.subs(sym.a, sym.eta)),
                       Step("times the share of informative groups", drift)))


@derivation
def derive_adam_stiffness_finite_group() -> Derivation:
    """Adam with degenerate groups: k = eta (1-beta1) kappa_A sqrt(D / (D + rho_A / (B G))).

    Only a share D of the groups carries gradient and gradient noise: the mean gradient is D g
    and the variance of the step's mean gradient D sigma_g^2 / (B G) (groups independent), so
    v_hat = D^2 g^2 + D sigma_g^2 / (B G). In the signal-dominated limit D cancels (Adam
    normalises the smaller gradient back up); in the noise-dominated limit the step grows like
    sqrt(D B G / rho_A): the informative samples count, not B G.
    """
    g = _positive_gradient_scale()
    share = sp.Symbol("D", positive=True)
    k_adam = get("adam_stiffness").expr.subs(sym.g_mean, share * g)
    k_adam = k_adam.subs(sym.sigma_g2, share * sym.rho_A * g**2)
    k_adam = k_adam.subs(sym.kappa, share * sym.kappa_A * g)  # the force is D kappa e
    reduced = sym.eta * (1 - sym.beta1) * sym.kappa_A * sp.sqrt(
        share / (share + sym.rho_A / (sym.B * sym.G)))
    if sp.simplify(k_adam - reduced) != 0:
        raise AssertionError("Adam stiffness with degenerate groups does not reduce")
    result = reduced.subs(share, get("finite_group_drift_factor").expr)
    return Derivation("adam_stiffness_finite_group", result,
                      (sym.eta, sym.beta1, sym.kappa_A, sym.rho_A, sym.B, sym.G, sym.p),
                      "Adam stiffness with the finite-G drift factor D = 1 - p^G - (1-p)^G: "
                      "eta (1-beta1) kappa_A sqrt(D / (D + rho_A/(B G))).", SECTION,
                      (Step("g -> D g, sigma_g^2 -> D rho_A g^2, kappa -> D kappa_A g", k_adam),
                       Step("simplified, in D", reduced)))


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
