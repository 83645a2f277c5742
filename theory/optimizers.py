"""docs/theory.md section 9: Adam and learning-rate schedules.

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
from sympy.codegen.cfunctions import expm1, log1p

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
    neither gradient nor gradient noise (docs/theory.md section 7), so the mean force on the slow
    mode is D times its value with every group informative.
    """
    degenerate = get("degenerate_group_probability").expr
    factor = sp.simplify(1 - degenerate)
    # 1 - q^G = -expm1(G ln q) for the larger of q = p, 1 - p: no cancellation at p -> 0 or 1
    informative = sp.Piecewise(
        (-expm1(sym.G * log1p(-sym.p)) - sym.p**sym.G, sym.p <= sp.Rational(1, 2)),
        (-expm1(sym.G * sp.log(sym.p)) - (1 - sym.p) ** sym.G, True))
    return Derivation("finite_group_drift_factor", factor, (sym.G, sym.p),
                      "Share of informative (non-degenerate) groups at success probability p: "
                      "the finite-G factor on the drift.", SECTION,
                      (Step("1 - P(S = 0) - P(S = G)", 1 - degenerate),),
                      numeric_form=informative)


@derivation
def derive_sgd_stiffness_finite_group() -> Derivation:
    """Heavy-ball SGD with degenerate groups: k = eta kappa D(G, p)."""
    drift = get("finite_group_drift_factor")
    k = get("stiffness").expr.subs(sym.a, sym.eta) * drift.expr
    return Derivation("sgd_stiffness_finite_group", k, (sym.eta, sym.kappa, sym.G, sym.p),
                      "SGD stiffness with the finite-G drift factor: eta kappa (1 - p^G - "
                      "(1-p)^G); kappa is the curvature per informative group.", SECTION,
                      (Step("k = a kappa with a = eta", get("stiffness").expr.subs(sym.a, sym.eta)),
                       Step("times the share of informative groups", drift.expr)),
                      numeric_form=k.subs(drift.expr, drift.numeric_form))


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
    drift = get("finite_group_drift_factor")
    return Derivation("adam_stiffness_finite_group", reduced.subs(share, drift.expr),
                      (sym.eta, sym.beta1, sym.kappa_A, sym.rho_A, sym.B, sym.G, sym.p),
                      "Adam stiffness with the finite-G drift factor D = 1 - p^G - (1-p)^G: "
                      "eta (1-beta1) kappa_A sqrt(D / (D + rho_A/(B G))).", SECTION,
                      (Step("g -> D g, sigma_g^2 -> D rho_A g^2, kappa -> D kappa_A g", k_adam),
                       Step("simplified, in D", reduced)),
                      numeric_form=reduced.subs(share, drift.numeric_form))


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


# --- the sampling noise on the mean path (used by the transfer method's band) ---------------
def _split_variance() -> sp.Expr:
    """sigma_p^2 / B + sigma_c^2 / (B G), from the derivation ``sampling_variance_split``."""
    return get("sampling_variance_split").expr


@derivation
def derive_sampling_variance_split() -> Derivation:
    """Derive Var(g_step) = sigma_p^2 / B + sigma_c^2 / (B G).

    A step's projected gradient is the mean over B prompts of (the prompt's own mean u_b plus the
    mean over its G completions of their deviations eps_bj); u and eps independent, of variances
    sigma_p^2 and sigma_c^2. More completions per prompt remove only the second part: the step
    variance falls like 1/B but, where sigma_p^2 dominates, hardly with G.
    """
    b, g = sym.B, sym.G
    prompt_mean = sym.sigma_p2 + sym.sigma_c2 / g  # Var(u_b + mean_j eps_bj)
    step = prompt_mean / b  # mean of B independent prompts
    expr = sp.expand(step)
    return Derivation("sampling_variance_split", expr, (sym.sigma_p2, sym.sigma_c2, sym.B, sym.G),
                      "Variance of a step's mean gradient: between-prompt part over B, within-"
                      "group part over B G.", SECTION,
                      (Step("Var of one prompt's group mean", prompt_mean),
                       Step("mean of B independent prompts", step)))


def _stationary_buffer_variance(weight: sp.Expr, momentum: sp.Expr) -> tuple[sp.Expr, sp.Expr]:
    """Stationary Var(M) of M = momentum M + weight g for a white g of variance s (and s)."""
    s, v = sp.Symbol("s_step", positive=True), sp.Symbol("V_M", positive=True)
    (solution,) = sp.solve(sp.Eq(v, momentum**2 * v + weight**2 * s), v)
    return sp.factor(solution), s


@derivation
def derive_sgd_noise_drag() -> Derivation:
    """Derive the loss of expected reward per step from the sampling noise of heavy-ball SGD.

    Second order in the step Delta = eta M: E[J(theta + Delta)] = J(theta + E Delta)
    + (1/2) J'' Var(Delta), with J'' = -h_noise along the noise (the reward is concave there) and
    Var(Delta) = eta^2 Var(M), Var(M) = Var(g_step) / (1 - beta^2) for the stationary momentum
    buffer M = beta M + g. The drag is independent of the displacement: it lowers the mean path
    by a constant amount per step, more at a larger lr (like lr^2) and a smaller B (like 1/B,
    and only through its within-group part like 1/(B G)).
    """
    buffer, s = _stationary_buffer_variance(sp.Integer(1), sym.beta)
    second_order = -sp.Rational(1, 2) * sym.h_noise * sym.eta**2 * buffer
    drag = sp.factor(-second_order.subs(s, _split_variance()))
    return Derivation("sgd_noise_drag", drag,
                      (sym.eta, sym.beta, sym.h_noise, sym.sigma_p2, sym.sigma_c2, sym.B, sym.G),
                      "Expected reward lost per step to the sampling noise (heavy-ball SGD): "
                      "h eta^2 (sigma_p^2/B + sigma_c^2/(B G)) / (2 (1 - beta^2)).", SECTION,
                      (Step("stationary Var(M) of M = beta M + g", buffer),
                       Step("(1/2) J'' Var(eta M), J'' = -h_noise", second_order)))


@derivation
def derive_sgd_noise_plateau_shift() -> Derivation:
    """Derive the fixed point of the SGD map with the drag: r* - drag (1 - beta) / (eta kappa).

    e_{n+1} = e_n - k M_n - drag, M_n = beta M_{n-1} + e_n: at the fixed point M = e / (1 - beta)
    and k M = -drag. The effective plateau falls like lr / B: the noise caps what a higher lr
    gains.
    """
    e, m = sp.symbols("e_fixed M_fixed", real=True)
    drag = get("sgd_noise_drag").expr
    k = get("stiffness").expr.subs(sym.a, sym.eta)
    fixed = sp.solve([sp.Eq(m, sym.beta * m + e), sp.Eq(0, -k * m - drag)], [e, m], dict=True)[0]
    shift = sp.factor(-fixed[e])
    return Derivation("sgd_noise_plateau_shift", shift,
                      (sym.eta, sym.beta, sym.kappa, sym.h_noise, sym.sigma_p2, sym.sigma_c2,
                       sym.B, sym.G),
                      "How far the sampling noise lowers SGD's plateau: h eta (sigma_p^2/B + "
                      "sigma_c^2/(B G)) / (2 kappa (1 + beta)).", SECTION,
                      (Step("fixed point of the map with the drag", fixed[e]),))


@derivation
def derive_adam_second_moment_split() -> Derivation:
    """v_hat = g^2 + sigma_p^2 / B + sigma_c^2 / (B G): the split noise in Adam's second moment."""
    noise = sp.Symbol("noise_var", positive=True)
    second_moment = sym.g_mean**2 + noise
    expr = second_moment.subs(noise, _split_variance())
    return Derivation("adam_second_moment_split", expr,
                      (sym.g_mean, sym.sigma_p2, sym.sigma_c2, sym.B, sym.G),
                      "Adam's second moment with the step variance split into prompts and "
                      "completions.", SECTION, (Step("E[g^2] = (E g)^2 + Var g", second_moment),))


def _split_ratio() -> sp.Expr:
    """rho_p / B + rho_c / (B G): the split variance in units of g^2."""
    g = _positive_gradient_scale()
    return sp.expand(_split_variance().subs({sym.sigma_p2: sym.rho_p * g**2,
                                             sym.sigma_c2: sym.rho_c * g**2}) / g**2)


@derivation
def derive_adam_stiffness_split() -> Derivation:
    """Derive k = eta (1 - beta1) kappa_A / sqrt(1 + rho_p / B + rho_c / (B G)).

    With rho_p = sigma_p^2 / g^2 and rho_c = sigma_c^2 / g^2. Where the between-prompt part
    dominates, the step grows like sqrt(B) and hardly with G; rho_p = 0 gives the B G form
    (``adam_stiffness_noise_ratio`` with rho_A = rho_c).
    """
    g = _positive_gradient_scale()
    a = get("adam_effective_step").expr.subs(sym.v_hat,
                                             get("adam_second_moment_split").expr)
    k = get("stiffness").expr.subs(sym.a, a).subs(sym.g_mean, g)
    k = k.subs({sym.sigma_p2: sym.rho_p * g**2, sym.sigma_c2: sym.rho_c * g**2,
                sym.kappa: sym.kappa_A * g})
    result = sym.eta * (1 - sym.beta1) * sym.kappa_A / sp.sqrt(1 + _split_ratio())
    if sp.simplify(k - result) != 0:
        raise AssertionError("Adam stiffness with the split noise does not reduce")
    return Derivation("adam_stiffness_split", result,
                      (sym.eta, sym.beta1, sym.kappa_A, sym.rho_p, sym.rho_c, sym.B, sym.G),
                      "Adam stiffness with the noise split into prompts and completions: "
                      "eta (1-beta1) kappa_A / sqrt(1 + rho_p/B + rho_c/(B G)).", SECTION,
                      (Step("k = a kappa with v_hat split", k),))


@derivation
def derive_adam_stiffness_split_finite_group() -> Derivation:
    """Derive k = eta (1-beta1) kappa_A sqrt(D / (D + rho_p / B + rho_c / (B G))).

    As ``adam_stiffness_finite_group``, with both parts of the noise carried by the share D of
    informative groups.
    """
    share = sp.Symbol("D", positive=True)
    reduced = sym.eta * (1 - sym.beta1) * sym.kappa_A * sp.sqrt(share / (share + _split_ratio()))
    check = get("adam_stiffness_finite_group").expr.subs(
        get("finite_group_drift_factor").expr, share)
    if sp.simplify(reduced.subs({sym.rho_p: 0, sym.rho_c: sym.rho_A}) - check) != 0:
        raise AssertionError("split finite-G Adam stiffness does not reduce to the B G form")
    drift = get("finite_group_drift_factor")
    return Derivation("adam_stiffness_split_finite_group", reduced.subs(share, drift.expr),
                      (sym.eta, sym.beta1, sym.kappa_A, sym.rho_p, sym.rho_c, sym.B, sym.G,
                       sym.p),
                      "Adam stiffness with the split noise and the finite-G drift factor.",
                      SECTION, (Step("in the share D of informative groups", reduced),),
                      numeric_form=reduced.subs(share, drift.numeric_form))


@derivation
def derive_adam_noise_drag() -> Derivation:
    """Derive the reward lost per step to the sampling noise of Adam's step.

    Delta = eta m_hat / sqrt(v_hat) with m = beta1 m + (1 - beta1) g: the stationary
    Var(m) = (1 - beta1) Var(g_step) / (1 + beta1), so Var(Delta) = eta^2 (1 - beta1) Var(g_step)
    / ((1 + beta1) v_hat) and the drag (1/2) h Var(Delta) = h eta^2 (1 - beta1) / (2 (1 + beta1))
    rho / (1 + rho), rho = rho_p / B + rho_c / (B G). Noise-dominated, the drag no longer falls
    with B or G (Adam's step is normalised to the noise); signal-dominated it falls like rho.
    """
    buffer, s = _stationary_buffer_variance(1 - sym.beta1, sym.beta1)
    g = _positive_gradient_scale()
    variance = _split_variance().subs({sym.sigma_p2: sym.rho_p * g**2,
                                       sym.sigma_c2: sym.rho_c * g**2})
    v_hat = get("adam_second_moment_split").expr.subs(
        {sym.g_mean: g, sym.sigma_p2: sym.rho_p * g**2, sym.sigma_c2: sym.rho_c * g**2})
    step_variance = sym.eta**2 * buffer.subs(s, variance) / v_hat
    drag = sp.simplify(sym.h_noise * step_variance / 2)
    rho = _split_ratio()
    result = sym.h_noise * sym.eta**2 * (1 - sym.beta1) / (2 * (1 + sym.beta1)) * rho / (1 + rho)
    if sp.simplify(drag - result) != 0:
        raise AssertionError("Adam noise drag does not reduce")
    return Derivation("adam_noise_drag", result,
                      (sym.eta, sym.beta1, sym.h_noise, sym.rho_p, sym.rho_c, sym.B, sym.G),
                      "Expected reward lost per step to the sampling noise (Adam): h eta^2 "
                      "(1-beta1)/(2 (1+beta1)) rho/(1+rho), rho = rho_p/B + rho_c/(B G).",
                      SECTION, (Step("stationary Var(m)", buffer),
                                Step("Var(Delta) = eta^2 Var(m) / v_hat", step_variance)))
