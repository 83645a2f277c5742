"""Each derivation, checked symbolically: substituted back, limits, stated special cases."""

from __future__ import annotations

import sympy as sp

from grpodyn.theory import get, sym


def _zero(expr) -> bool:
    return sp.simplify(expr) == 0


# --- section 1-2: map and continuum -------------------------------------------------------

def test_map_is_heavy_ball_with_lagged_linear_force():
    update = get("mean_field_map").expr
    assert _zero(update - ((1 + sym.beta) * sym.e_now - sym.beta * sym.e_prev
                           - sym.a * sym.kappa * sym.e_lag))


def test_mass_damping_stiffness_values():
    assert _zero(get("mass").expr - (1 + sym.beta) / 2)
    assert _zero(get("damping").expr - (1 - sym.beta))
    assert _zero(get("stiffness").expr - sym.a * sym.kappa)
    assert _zero(get("effective_damping").expr - (1 - sym.beta - sym.k * sym.l_bar))
    assert _zero(get("mean_refresh_lag").expr - (sym.K - 1) / 2)


def test_trajectory_solves_the_oscillator_with_initial_conditions():
    e = get("trajectory").expr
    ode = sp.diff(e, sym.t, 2) + 2 * sym.zeta * sym.omega0 * sp.diff(e, sym.t) + sym.omega0**2 * e
    assert _zero(ode)
    assert _zero(e.subs(sym.t, 0) - sym.e0)
    assert _zero(sp.diff(e, sym.t).subs(sym.t, 0) - sym.v0)


def test_regime_forms_agree_with_unified_form():
    unified = get("trajectory").expr
    point = {sym.t: sp.Rational(7, 3), sym.e0: sp.Rational(-2, 5), sym.v0: sp.Rational(1, 7),
             sym.omega0: sp.Rational(3, 10)}
    under = {**point, sym.zeta: sp.Rational(1, 3)}
    assert abs(complex(unified.subs(under).evalf(30))
               - complex(get("trajectory_underdamped").expr.subs(under).evalf(30))) < 1e-25
    crit = get("trajectory_critical").expr.subs(point)
    near = unified.subs({**point, sym.zeta: 1 + sp.Rational(1, 10**12)})
    assert abs(complex(near.evalf(40)) - complex(crit.evalf(40))) < 1e-10


def test_slow_start_is_flat_then_quadratic():
    early = get("slow_start_trajectory").expr
    assert _zero(early - sym.e0 * (1 - sym.k * sym.t**2 / (1 + sym.beta)))  # k t^2/(2m)


def test_inflection_time_limits():
    t_infl = get("inflection_time").expr
    critical = sp.limit(t_infl, sym.zeta, 1)
    assert _zero(critical - 1 / sym.omega0)
    # overdamped-large-zeta: the inflection moves to ~ ln(4 zeta^2)/(2 zeta omega0) -> 0
    assert sp.limit(t_infl, sym.zeta, sp.oo) == 0


# --- section 3: overdamped limit --------------------------------------------------------------

def test_relaxation_time_and_law():
    assert _zero(get("relaxation_time").expr - (1 - sym.beta) / (sym.a * sym.kappa))
    law = get("saturation_law").expr
    assert _zero(law.subs(sym.t, 0) - sym.r0)
    assert sp.limit(law, sym.t, sp.oo) == sym.r_star
    assert get("size_exponent").expr == -sym.alpha


def test_slow_root_and_delay_from_inertia():
    slow = get("slow_root").expr
    assert _zero(slow.subs(sym.m, 0) + sym.k / sym.c)  # tau = c/k as m -> 0
    assert _zero(get("inertial_delay").expr - (1 + sym.beta) / (2 * (1 - sym.beta)))  # m/c


def test_overdamped_limit_of_trajectory_is_the_law():
    # zeta -> infinity at fixed tau = c/k = 2 zeta / omega0: e(t) -> e0 exp(-t/tau)
    tau = sp.Symbol("tau_", positive=True)
    e = get("trajectory").expr.subs({sym.v0: 0, sym.omega0: 2 * sym.zeta / tau})
    t_val, tau_val = sp.Rational(3), sp.Rational(5)
    values = [complex(e.subs({sym.t: t_val, tau: tau_val, sym.e0: 1, sym.zeta: z}).evalf(30))
              for z in (10, 100, 1000)]
    target = float(sp.exp(-t_val / tau_val))
    errors = [abs(v.real - target) for v in values]
    assert errors[0] > errors[1] > errors[2] and errors[2] < 1e-3


def test_gain_fraction_time_is_tau_log_plus_delay():
    t_q = get("gain_fraction_time").expr
    tau = (1 - sym.beta) / (sym.a * sym.kappa)
    assert _zero(t_q - tau * sp.log(1 / (1 - sym.q)) - (1 + sym.beta) / (2 * (1 - sym.beta)))


# --- section 4: regimes ---------------------------------------------------------------------

def test_critical_stiffness_examples():
    assert _zero(get("critical_stiffness").expr - (1 - sym.beta) ** 2 / (2 * (1 + sym.beta)))
    assert _zero(get("critical_stiffness_discrete").expr - (1 - sp.sqrt(sym.beta)) ** 2)
    assert _zero(get("flip_stiffness").expr - (1 + sp.sqrt(sym.beta)) ** 2)


def test_continuum_boundary_is_second_order_accurate():
    err = get("critical_stiffness_relative_error").expr
    c = sp.Symbol("c", positive=True)
    series = sp.series(err.subs(sym.beta, 1 - c), c, 0, 3).removeO()
    assert series.coeff(c, 0) == 0 and series.coeff(c, 1) == 0 and series.coeff(c, 2) != 0


def test_discrete_damping_ratio_tends_to_continuum():
    # as beta -> 1 with k ~ c^2 the exact map approaches the continuum oscillator
    zd = get("discrete_damping_ratio").expr
    zc = get("damping_ratio").expr
    point = {sym.beta: sp.Rational(999, 1000), sym.k: sp.Rational(1, 10**7)}
    assert abs(float(zd.subs(point)) / float(zc.subs(point)) - 1) < 1e-2


# --- section 5: stability -------------------------------------------------------------------

def test_stated_thresholds():
    assert _zero(get("stiffness_max").expr - 2 * (1 + sym.beta))
    assert _zero(get("staleness_stiffness_max_d1").expr - (1 - sym.beta))
    assert _zero(get("refresh_threshold_no_momentum").expr - 2 / sym.k)
    assert _zero(get("refresh_threshold_continuum").expr - (1 + 2 * (1 - sym.beta) / sym.k))
    assert _zero(get("staleness_stiffness_max_continuum").expr - (1 - sym.beta) / sym.d)
    k2 = get("staleness_stiffness_max_d2").expr
    assert _zero(k2**2 + (1 + sym.beta) * k2 - (1 - sym.beta))
    # the stated value is 0.0513; the exact value (sqrt(401) - 19)/20 = 0.051249 rounds to 0.0512
    assert _zero(k2.subs(sym.beta, sp.Rational(9, 10)) - (sp.sqrt(401) - 19) / 20)


def test_staleness_polynomial_form():
    poly = get("staleness_polynomial").expr
    target = (sym.z ** (sym.d + 1) - (1 + sym.beta) * sym.z**sym.d
              + sym.beta * sym.z ** (sym.d - 1) + sym.k)
    assert _zero(sp.expand(poly - target))


def test_monodromy_for_one_step_is_the_on_policy_map():
    entries = [get(f"monodromy_{i}{j}").subs(K=1) for i in (1, 2) for j in (1, 2)]
    # (e, v) -> (e + beta v - k e, beta v - k e)
    assert [sp.simplify(x) for x in entries] == [sp.simplify(1 - sym.k), sym.beta, -sym.k, sym.beta]


# --- section 6: fluctuations ----------------------------------------------------------------

def test_stationary_variance_form_and_limits():
    var = get("stationary_variance").expr
    target = sym.s2 * (1 + sym.beta) / ((1 - sym.beta) * sym.k * (2 * (1 + sym.beta) - sym.k))
    assert _zero(var - target)
    ou = get("ou_stationary_variance").expr
    assert _zero(ou - sym.s2 / (2 * (1 - sym.beta) * sym.k))
    assert _zero(sp.limit(var / ou, sym.k, 0) - 1)
    half = var.subs(sym.beta, sp.Rational(1, 2))  # sympy cannot assume beta < 1
    assert sp.limit(half, sym.k, 3, "-") == sp.oo


def test_autocorrelation_obeys_yule_walker():
    rho = get("autocorrelation").expr
    point = {sym.beta: sp.Rational(1, 3), sym.k: sp.Rational(1, 50)}  # real roots
    values = [sp.nsimplify(sp.N(rho.subs({**point, sym.h: h}), 40)) for h in range(5)]
    phi1, phi2 = 1 + point[sym.beta] - point[sym.k], -point[sym.beta]
    assert abs(float(values[0]) - 1) < 1e-30
    for h in range(2, 5):
        assert abs(float(values[h] - phi1 * values[h - 1] - phi2 * values[h - 2])) < 1e-25


def test_spectral_density_integrates_to_variance():
    density = get("spectral_density").expr
    point = {sym.beta: sp.Rational(1, 2), sym.k: sp.Rational(1, 10), sym.s2: 1}
    integral = sp.Integral(density.subs(point), (sym.omega, -sp.pi, sp.pi)).evalf(20)
    assert abs(float(integral) - float(get("stationary_variance").expr.subs(point))) < 1e-12


def test_noise_temperature_scales_as_inverse_group_size():
    assert get("temperature_group_exponent").expr == -1
    temp = get("noise_temperature").expr
    assert _zero(temp - sym.a**2 * sym.Sigma / (2 * (1 - sym.beta) * sym.B * sym.G))


# --- section 7: finite G --------------------------------------------------------------------

def test_grpo_update_is_sqrt_form_at_eps_zero():
    u = get("grpo_update_given_successes").expr.subs(sym.eps, 0)
    for g_val, s_val in [(2, 1), (4, 1), (8, 5), (16, 3)]:
        m_hat = sp.Rational(s_val, g_val)
        target = sp.sqrt(sp.Rational(g_val - 1, g_val)) * sp.sqrt(m_hat * (1 - m_hat))
        assert _zero(u.subs({sym.G: g_val, sym.S: s_val}) - target)


def test_closed_form_means():
    assert _zero(get("dr_grpo_update_mean").expr - sym.p * (1 - sym.p) * (sym.G - 1) / sym.G)
    assert _zero(get("rloo_update_mean").expr - sym.p * (1 - sym.p))
    assert _zero(get("degenerate_group_probability").expr - sym.p**sym.G - (1 - sym.p) ** sym.G)


def test_expansions_leading_orders():
    mean = get("grpo_update_mean_expansion").expr
    var = get("grpo_update_variance_expansion").expr
    x = sp.Symbol("x", positive=True)
    assert _zero(sp.limit(mean, sym.G, sp.oo) - sp.sqrt(sym.p * (1 - sym.p)))
    leading_var = sp.limit(var * sym.G, sym.G, sp.oo)
    assert _zero(leading_var - (1 - 2 * sym.p) ** 2 / 4)
    at_half = sp.simplify(var.subs(sym.p, sp.Rational(1, 2)))
    assert _zero(at_half - 1 / (8 * sym.G**2))  # falls faster than 1/G at p = 1/2
    assert x not in mean.free_symbols


# --- section 9: Adam and schedules ------------------------------------------------------------

def test_adam_mapping_and_warmup():
    assert _zero(get("adam_effective_step").expr
                 - sym.eta * (1 - sym.beta1) / sp.sqrt(sym.v_hat))
    first = get("adam_bias_corrected_step").subs(n=1)
    assert _zero(first - sym.eta / sp.sqrt(sym.v_hat))
    warm = get("warmup_trajectory").expr
    assert _zero(warm - sym.e0 * sp.exp(-sym.k * sym.t**2 / (2 * (1 - sym.beta) * sym.T_w)))
    assert sym.G in get("adam_stiffness").expr.free_symbols
