"""Numpy functions generated from the grpodyn theory registry. Do not edit.

Regenerate with ``grpodyn export --lang python --out DIR`` or
``python -m grpodyn.numerics.generate``; ``tests/test_compiled.py`` fails when this
file is out of date.
"""


import math

import numpy


THEORY_HASH = 'f073ba06c87c57841fb27546c69844a3'


SIGNATURES = {
    'mean_field_map': ('e_now', 'e_prev', 'e_lag', 'beta', 'a', 'kappa'),
    'stiffness': ('a', 'kappa'),
    'mass': ('beta',),
    'effective_damping': ('beta', 'k', 'l_bar'),
    'damping': ('beta',),
    'mean_refresh_lag': ('K',),
    'natural_frequency': ('beta', 'k'),
    'damping_ratio': ('beta', 'k'),
    'trajectory': ('t', 'e0', 'v0', 'zeta', 'omega0'),
    'trajectory_critical': ('t', 'e0', 'v0', 'omega0'),
    'trajectory_underdamped': ('t', 'e0', 'v0', 'zeta', 'omega0'),
    'slow_start_trajectory': ('t', 'e0', 'beta', 'k'),
    'inflection_time': ('zeta', 'omega0'),
    'relaxation_time': ('beta', 'a', 'kappa'),
    'saturation_law': ('t', 'r0', 'r_star', 'tau'),
    'size_exponent': ('alpha',),
    'slow_root': ('m', 'c', 'k'),
    'inertial_delay': ('beta',),
    'gain_fraction_time': ('q', 'beta', 'a', 'kappa'),
    'critical_stiffness': ('beta',),
    'critical_stiffness_discrete': ('beta',),
    'pole_stiffness': ('beta', 'tau'),
    'flip_stiffness': ('beta',),
    'critical_stiffness_relative_error': ('beta',),
    'discrete_damping_ratio': ('beta', 'k'),
    'stiffness_max': ('beta',),
    'staleness_polynomial': ('z', 'beta', 'k', 'd'),
    'staleness_stiffness_max_d1': ('beta',),
    'staleness_stiffness_max_d2': ('beta',),
    'staleness_stability_condition_d3': ('beta', 'k'),
    'staleness_stiffness_max_continuum': ('beta', 'd'),
    'monodromy_11': ('beta', 'k', 'K'),
    'monodromy_12': ('beta', 'k', 'K'),
    'monodromy_21': ('beta', 'k', 'K'),
    'monodromy_22': ('beta', 'k', 'K'),
    'monodromy_trace': ('beta', 'k', 'K'),
    'monodromy_determinant': ('beta', 'k', 'K'),
    'refresh_stability_condition': ('beta', 'k', 'K'),
    'refresh_threshold_no_momentum': ('k',),
    'refresh_threshold_continuum': ('beta', 'k'),
    'refresh_threshold_reference': ('beta', 'k'),
    'stationary_variance': ('beta', 'k', 's2'),
    'ou_stationary_variance': ('beta', 'k', 's2'),
    'autocorrelation': ('h', 'beta', 'k'),
    'spectral_density': ('omega', 'beta', 'k', 's2'),
    'spectral_peak_frequency': ('beta', 'k'),
    'noise_variance': ('a', 'Sigma', 'B', 'G'),
    'noise_temperature': ('beta', 'a', 'Sigma', 'B', 'G'),
    'temperature_group_exponent': (),
    'binomial_pmf': ('S', 'G', 'p'),
    'degenerate_group_probability': ('G', 'p'),
    'grpo_update_given_successes': ('S', 'G', 'eps'),
    'dr_grpo_update_given_successes': ('S', 'G'),
    'rloo_update_given_successes': ('S', 'G'),
    'grpo_update_mean': ('G', 'p', 'eps'),
    'grpo_update_variance': ('G', 'p', 'eps'),
    'dr_grpo_update_mean': ('G', 'p'),
    'dr_grpo_update_variance': ('G', 'p'),
    'rloo_update_mean': ('G', 'p'),
    'rloo_update_variance': ('G', 'p'),
    'grpo_update_mean_expansion': ('G', 'p'),
    'grpo_update_variance_expansion': ('G', 'p'),
    'prompt_pool_mean_reward': ('a_p', 'b_p'),
    'prompt_pool_zero_std_share': ('G', 'a_p', 'b_p'),
    'prompt_pool_failed_group_share': ('G', 'a_p', 'b_p'),
    'prompt_pool_within_group_variance': ('a_p', 'b_p'),
    'prompt_pool_batch_variance': ('B', 'G', 'a_p', 'b_p'),
    'prompt_pool_entropy_ratio_bound': ('r0', 'r1'),
    'grpo_top_advantage': ('S', 'G', 'eps'),
    'grpo_bottom_advantage': ('S', 'G', 'eps'),
    'prompt_pool_successes_pmf': ('S', 'G', 'a_p', 'b_p'),
    'prompt_pool_batch_extremes_within': ('B', 'q_in'),
    'prompt_pool_step_change_variance': ('B', 'G', 'N_p', 'sigma_r2', 'w_r'),
    'prompt_pool_between_share': ('x_r', 'G', 'B', 'N_p'),
    'bandit_success_probability': ('x',),
    'bandit_drift_grpo': ('x', 'G', 'eps'),
    'bandit_drift_dr_grpo': ('x', 'G'),
    'bandit_drift_rloo': ('x', 'G'),
    'bandit_drift_slope_grpo': ('x', 'G', 'eps'),
    'bandit_drift_slope_dr_grpo': ('x', 'G'),
    'bandit_drift_slope_rloo': ('x', 'G'),
    'bandit_kl_gradient_forward': ('x', 'x_ref'),
    'bandit_kl_gradient_k3': ('x', 'x_ref'),
    'bandit_kl_slope_forward': ('x', 'x_ref'),
    'bandit_kl_slope_k3': ('x', 'x_ref'),
    'bandit_reuse_factor': ('x', 'x_old'),
    'adam_effective_step': ('eta', 'beta1', 'v_hat'),
    'adam_bias_corrected_step': ('n', 'eta', 'beta1', 'v_hat'),
    'adam_second_moment': ('g_mean', 'sigma_g2', 'B', 'G'),
    'adam_stiffness': ('eta', 'beta1', 'kappa', 'g_mean', 'sigma_g2', 'B', 'G'),
    'adam_stiffness_noise_ratio': ('eta', 'beta1', 'kappa_A', 'rho_A', 'B', 'G'),
    'adam_stiffness_signal_limit': ('eta', 'beta1', 'kappa_A'),
    'adam_stiffness_noise_limit': ('eta', 'beta1', 'kappa_A', 'rho_A', 'B', 'G'),
    'adam_stiffness_bg_exponent': ('rho_A', 'B', 'G'),
    'adam_relaxation_time': ('eta', 'kappa_A', 'rho_A', 'B', 'G'),
    'adam_tau_lr_exponent': (),
    'finite_group_drift_factor': ('G', 'p'),
    'sgd_stiffness_finite_group': ('eta', 'kappa', 'G', 'p'),
    'adam_stiffness_finite_group': ('eta', 'beta1', 'kappa_A', 'rho_A', 'B', 'G', 'p'),
    'warmup_trajectory': ('t', 'e0', 'beta', 'k', 'T_w'),
    'sampling_variance_split': ('sigma_p2', 'sigma_c2', 'B', 'G'),
    'sgd_noise_drag': ('eta', 'beta', 'h_noise', 'sigma_p2', 'sigma_c2', 'B', 'G'),
    'sgd_noise_plateau_shift': ('eta', 'beta', 'kappa', 'h_noise', 'sigma_p2', 'sigma_c2', 'B', 'G'),
    'adam_second_moment_split': ('g_mean', 'sigma_p2', 'sigma_c2', 'B', 'G'),
    'adam_stiffness_split': ('eta', 'beta1', 'kappa_A', 'rho_p', 'rho_c', 'B', 'G'),
    'adam_stiffness_split_finite_group': ('eta', 'beta1', 'kappa_A', 'rho_p', 'rho_c', 'B', 'G', 'p'),
    'adam_noise_drag': ('eta', 'beta1', 'h_noise', 'rho_p', 'rho_c', 'B', 'G'),
    'sigmoid_law': ('t', 'r0', 'r_star', 't_mid', 'width'),
    'power_law': ('t', 'r0', 'r_star', 't_mid', 'exponent'),
    'saturation_law_d_r0': ('t', 'r0', 'r_star', 'tau'),
    'saturation_law_d_r_star': ('t', 'r0', 'r_star', 'tau'),
    'saturation_law_d_tau': ('t', 'r0', 'r_star', 'tau'),
    'sigmoid_law_d_r0': ('t', 'r0', 'r_star', 't_mid', 'width'),
    'sigmoid_law_d_r_star': ('t', 'r0', 'r_star', 't_mid', 'width'),
    'sigmoid_law_d_t_mid': ('t', 'r0', 'r_star', 't_mid', 'width'),
    'sigmoid_law_d_width': ('t', 'r0', 'r_star', 't_mid', 'width'),
    'power_law_d_r0': ('t', 'r0', 'r_star', 't_mid', 'exponent'),
    'power_law_d_r_star': ('t', 'r0', 'r_star', 't_mid', 'exponent'),
    'power_law_d_t_mid': ('t', 'r0', 'r_star', 't_mid', 'exponent'),
    'power_law_d_exponent': ('t', 'r0', 'r_star', 't_mid', 'exponent'),
    'trajectory_d_e0': ('t', 'e0', 'v0', 'zeta', 'omega0'),
    'trajectory_d_v0': ('t', 'e0', 'v0', 'zeta', 'omega0'),
    'trajectory_d_zeta': ('t', 'e0', 'v0', 'zeta', 'omega0'),
    'trajectory_d_omega0': ('t', 'e0', 'v0', 'zeta', 'omega0'),
    'trajectory_underdamped_d_e0': ('t', 'e0', 'v0', 'zeta', 'omega0'),
    'trajectory_underdamped_d_v0': ('t', 'e0', 'v0', 'zeta', 'omega0'),
    'trajectory_underdamped_d_zeta': ('t', 'e0', 'v0', 'zeta', 'omega0'),
    'trajectory_underdamped_d_omega0': ('t', 'e0', 'v0', 'zeta', 'omega0'),
    'trajectory_critical_d_e0': ('t', 'e0', 'v0', 'omega0'),
    'trajectory_critical_d_v0': ('t', 'e0', 'v0', 'omega0'),
    'trajectory_critical_d_omega0': ('t', 'e0', 'v0', 'omega0'),
    'two_mode_characteristic': ('z', 'beta', 'k_s', 'k_r'),
    'two_mode_stability_condition': ('beta', 'k_s', 'k_r'),
    'two_mode_refresh_stability_condition': ('beta', 'k_s', 'k_r', 'K'),
    'soft_pole': ('beta', 'k_r'),
    'two_mode_relaxation_time': ('beta', 'k_r'),
    'oscillation_momentum': ('k',),
    'two_mode_effective_stiffness': ('w_s', 'k_s', 'k_r'),
    'relay_half_swing': ('d', 'a', 'f_sat'),
    'relay_period': ('d',),
}


#: argument -> (unit, LaTeX, assumptions that are true): numeric code reads a
#: parameter's domain here (e.g. a fit's bounds) without importing sympy
SYMBOLS = {
    'B': ('prompts', 'B', ('integer', 'positive')),
    'G': ('completions', 'G', ('integer', 'positive')),
    'K': ('steps', 'K', ('integer', 'positive')),
    'N_p': ('prompts', 'N_p', ('positive',)),
    'S': ('completions', 'S', ('integer', 'nonnegative')),
    'Sigma': ('gradient^2', '\\Sigma', ('positive',)),
    'T_w': ('steps', 'T_w', ('positive',)),
    'a': ('parameter/gradient', 'a', ('positive',)),
    'a_p': ('dimensionless', 'a_p', ('positive',)),
    'alpha': ('dimensionless', '\\alpha', ('real',)),
    'b_p': ('dimensionless', 'b_p', ('positive',)),
    'beta': ('dimensionless', '\\beta', ('nonnegative',)),
    'beta1': ('dimensionless', '\\beta_1', ('nonnegative',)),
    'c': ('1/step', 'c', ('positive',)),
    'd': ('steps', 'd', ('integer', 'positive')),
    'e0': ('reward', 'e_0', ('real',)),
    'e_lag': ('reward', 'e_{n-l}', ('real',)),
    'e_now': ('reward', 'e_{n}', ('real',)),
    'e_prev': ('reward', 'e_{n-1}', ('real',)),
    'eps': ('reward', '\\epsilon', ('nonnegative',)),
    'eta': ('parameter/gradient', '\\eta', ('positive',)),
    'exponent': ('dimensionless', 'b', ('positive',)),
    'f_sat': ('parameter/gradient', 'F_{\\mathrm{sat}}', ('positive',)),
    'g_mean': ('gradient', '\\bar g', ('real',)),
    'h': ('steps', 'h', ('integer', 'nonnegative')),
    'h_noise': ('reward/parameter^2', 'h_{\\mathrm{noise}}', ('nonnegative',)),
    'k': ('1/step^2', 'k', ('positive',)),
    'k_r': ('1/step^2', 'k_{r}', ('positive',)),
    'k_s': ('1/step^2', 'k_{s}', ('positive',)),
    'kappa': ('gradient/reward', '\\kappa', ('positive',)),
    'kappa_A': ('1/reward', '\\kappa_A', ('positive',)),
    'l_bar': ('steps', '\\bar l', ('nonnegative',)),
    'm': ('dimensionless', 'm', ('positive',)),
    'n': ('steps', 'n', ('integer', 'nonnegative')),
    'omega': ('rad/step', '\\omega', ('real',)),
    'omega0': ('rad/step', '\\omega_0', ('positive',)),
    'p': ('dimensionless', 'p', ('positive',)),
    'q': ('dimensionless', 'q', ('positive',)),
    'q_in': ('dimensionless', 'q_{\\mathrm{in}}', ('positive',)),
    'r0': ('reward', 'r_0', ('real',)),
    'r1': ('reward', 'r_1', ('positive',)),
    'r_star': ('reward', 'r^{*}', ('real',)),
    'rho_A': ('completions', '\\rho_A', ('positive',)),
    'rho_c': ('completions', '\\rho_c', ('nonnegative',)),
    'rho_p': ('prompts', '\\rho_p', ('nonnegative',)),
    's2': ('reward^2', 's^{2}', ('positive',)),
    'sigma_c2': ('gradient^2', '\\sigma_c^2', ('nonnegative',)),
    'sigma_g2': ('gradient^2', '\\sigma_g^2', ('positive',)),
    'sigma_p2': ('gradient^2', '\\sigma_p^2', ('nonnegative',)),
    'sigma_r2': ('reward^2', '\\sigma_r^2', ('nonnegative',)),
    't': ('steps', 't', ('nonnegative',)),
    't_mid': ('steps', 't_{\\mathrm{mid}}', ('nonnegative',)),
    'tau': ('steps', '\\tau', ('positive',)),
    'v0': ('reward/step', 'v_0', ('real',)),
    'v_hat': ('gradient^2', '\\hat v', ('positive',)),
    'w_r': ('reward^2', 'w_r', ('nonnegative',)),
    'w_s': ('dimensionless', 'w_{s}', ('nonnegative',)),
    'width': ('steps', 'w', ('positive',)),
    'x': ('nats', 'x', ('real',)),
    'x_old': ('nats', 'x_{\\mathrm{old}}', ('real',)),
    'x_r': ('dimensionless', 'x_r', ('nonnegative',)),
    'x_ref': ('nats', 'x_{\\mathrm{ref}}', ('real',)),
    'z': ('dimensionless', 'z', ()),
    'zeta': ('dimensionless', '\\zeta', ('positive',)),
}


_binomial = numpy.vectorize(
    lambda n, k: float(math.comb(int(n), int(k))) if 0 <= k <= n else 0.0, otypes=[float])


def _finite_sum(term, lower, upper, arguments):
    """sum_{j=lower}^{upper} term(j), broadcast over ``arguments`` (the sum's free symbols)."""
    lower = numpy.asarray(lower)
    upper = numpy.asarray(upper)
    ndim = numpy.broadcast(*arguments, lower, upper).ndim if arguments else 0
    if upper.size == 0:
        return numpy.zeros(numpy.broadcast(*arguments).shape)
    index = numpy.arange(int(numpy.min(lower)), int(numpy.max(upper)) + 1)
    index = index.reshape((-1,) + (1,) * ndim)
    with numpy.errstate(all="ignore"):
        values = term(index)
    inside = (index >= lower) & (index <= upper)
    return numpy.sum(numpy.where(inside, values, 0.0), axis=0)


def mean_field_map(e_now, e_prev, e_lag, beta, a, kappa):
    """One heavy-ball step of the displacement e = r - r*, the force lagged to step n-l.

    docs/theory.md section 1. Discrete mean-field map. Generated from the derivation ``mean_field_map``.

    Parameters
    ----------
    e_now : array_like
        displacement at step n [reward]
    e_prev : array_like
        displacement at step n-1 [reward]
    e_lag : array_like
        displacement at the lagged step n-l [reward]
    beta : array_like
        momentum (heavy-ball beta or Adam beta1) [dimensionless]
    a : array_like
        effective step (eta for heavy-ball SGD) [parameter/gradient]
    kappa : array_like
        curvature scale: slope of the projected drift [gradient/reward]
    """
    try:
        return -a*e_lag*kappa + beta*e_now - beta*e_prev + e_now
    except ZeroDivisionError:  # Python numbers at a pole: as numpy's (inf or nan)
        with numpy.errstate(all="ignore"):
            return mean_field_map(numpy.asarray(e_now)[()], numpy.asarray(e_prev)[()], numpy.asarray(e_lag)[()], numpy.asarray(beta)[()], numpy.asarray(a)[()], numpy.asarray(kappa)[()])


def stiffness(a, kappa):
    """Dimensionless stiffness k = a kappa (per step^2): minus the coefficient of e_{n-l}.

    docs/theory.md section 1. Discrete mean-field map. Generated from the derivation ``stiffness``.

    Parameters
    ----------
    a : array_like
        effective step (eta for heavy-ball SGD) [parameter/gradient]
    kappa : array_like
        curvature scale: slope of the projected drift [gradient/reward]
    """
    try:
        return a*kappa
    except ZeroDivisionError:  # Python numbers at a pole: as numpy's (inf or nan)
        with numpy.errstate(all="ignore"):
            return stiffness(numpy.asarray(a)[()], numpy.asarray(kappa)[()])


def mass(beta):
    """Mass m = (1+beta)/2 of the continuum limit: momentum gives inertia.

    docs/theory.md section 2. Continuum limit. Generated from the derivation ``mass``.

    Parameters
    ----------
    beta : array_like
        momentum (heavy-ball beta or Adam beta1) [dimensionless]
    """
    try:
        return (1/2)*beta + 1/2
    except ZeroDivisionError:  # Python numbers at a pole: as numpy's (inf or nan)
        with numpy.errstate(all="ignore"):
            return mass(numpy.asarray(beta)[()])


def effective_damping(beta, k, l_bar):
    """Effective damping c - k l_bar: a force lagged by l_bar erodes the damping.

    docs/theory.md section 2. Continuum limit. Generated from the derivation ``effective_damping``.

    Parameters
    ----------
    beta : array_like
        momentum (heavy-ball beta or Adam beta1) [dimensionless]
    k : array_like
        dimensionless stiffness a*kappa [1/step^2]
    l_bar : array_like
        mean lag of the force [steps]
    """
    try:
        return -beta - k*l_bar + 1
    except ZeroDivisionError:  # Python numbers at a pole: as numpy's (inf or nan)
        with numpy.errstate(all="ignore"):
            return effective_damping(numpy.asarray(beta)[()], numpy.asarray(k)[()], numpy.asarray(l_bar)[()])


def damping(beta):
    """Damping c = 1 - beta of the continuum limit (on-policy).

    docs/theory.md section 2. Continuum limit. Generated from the derivation ``damping``.

    Parameters
    ----------
    beta : array_like
        momentum (heavy-ball beta or Adam beta1) [dimensionless]
    """
    try:
        return 1 - beta
    except ZeroDivisionError:  # Python numbers at a pole: as numpy's (inf or nan)
        with numpy.errstate(all="ignore"):
            return damping(numpy.asarray(beta)[()])


def mean_refresh_lag(K):
    """Mean force lag (K-1)/2 of a refresh interval K with sample-and-hold.

    docs/theory.md section 2. Continuum limit. Generated from the derivation ``mean_refresh_lag``.

    Parameters
    ----------
    K : array_like
        refresh interval (optimizer steps per sampling refresh) [steps]
    """
    try:
        return (1/2)*K - 1/2
    except ZeroDivisionError:  # Python numbers at a pole: as numpy's (inf or nan)
        with numpy.errstate(all="ignore"):
            return mean_refresh_lag(numpy.asarray(K)[()])


def natural_frequency(beta, k):
    """Natural angular frequency omega0 = sqrt(k/m) (rad/step).

    docs/theory.md section 2. Continuum limit. Generated from the derivation ``natural_frequency``.

    Parameters
    ----------
    beta : array_like
        momentum (heavy-ball beta or Adam beta1) [dimensionless]
    k : array_like
        dimensionless stiffness a*kappa [1/step^2]
    """
    try:
        return numpy.sqrt(2)*numpy.sqrt(k)/numpy.sqrt(beta + 1)
    except ZeroDivisionError:  # Python numbers at a pole: as numpy's (inf or nan)
        with numpy.errstate(all="ignore"):
            return natural_frequency(numpy.asarray(beta)[()], numpy.asarray(k)[()])


def damping_ratio(beta, k):
    """Damping ratio zeta = c / (2 sqrt(m k)).

    docs/theory.md section 2. Continuum limit. Generated from the derivation ``damping_ratio``.

    Parameters
    ----------
    beta : array_like
        momentum (heavy-ball beta or Adam beta1) [dimensionless]
    k : array_like
        dimensionless stiffness a*kappa [1/step^2]
    """
    try:
        return (1/2)*numpy.sqrt(2)*(1 - beta)/(numpy.sqrt(k)*numpy.sqrt(beta + 1))
    except ZeroDivisionError:  # Python numbers at a pole: as numpy's (inf or nan)
        with numpy.errstate(all="ignore"):
            return damping_ratio(numpy.asarray(beta)[()], numpy.asarray(k)[()])


def trajectory(t, e0, v0, zeta, omega0):
    """Closed-form e(t) for e(0)=e0, e'(0)=v0 in the overdamped real form (zeta > 1); grpodyn.trajectory is the unified form for every regime.

    docs/theory.md section 2. Continuum limit. Generated from the derivation ``trajectory``.

    Parameters
    ----------
    t : array_like
        continuous time [steps]
    e0 : array_like
        initial displacement e(0) [reward]
    v0 : array_like
        initial velocity e'(0) [reward/step]
    zeta : array_like
        damping ratio [dimensionless]
    omega0 : array_like
        natural angular frequency [rad/step]

    Raises
    ------
    ValueError
        Outside the domain where this real-arithmetic form is the result:
        zeta > 1 and omega0*t*sqrt(zeta**2 - 1) < 700
    """
    with numpy.errstate(all="ignore"):  # arrays: 1/0 is inf, not an exception
        _inside = (lambda omega0, t, zeta: numpy.all(numpy.greater(zeta, 1)) and numpy.all(numpy.less(omega0*t*numpy.sqrt(zeta**2 - 1), 700)))(numpy.asarray(omega0, dtype=float), numpy.asarray(t, dtype=float), numpy.asarray(zeta, dtype=float))
    if not _inside:
        raise ValueError("trajectory: defined only where zeta > 1 and omega0*t*sqrt(zeta**2 - 1) < 700")
    try:
        _x0 = omega0*t
        _x1 = numpy.sqrt(zeta**2 - 1)
        _x2 = _x0*_x1
        return (e0*numpy.cosh(_x2) + (e0*omega0*zeta + v0)*numpy.sinh(_x2)/(_x1*omega0))*numpy.exp(-_x0*zeta)
    except ZeroDivisionError:  # Python numbers at a pole: as numpy's (inf or nan)
        with numpy.errstate(all="ignore"):
            return trajectory(numpy.asarray(t)[()], numpy.asarray(e0)[()], numpy.asarray(v0)[()], numpy.asarray(zeta)[()], numpy.asarray(omega0)[()])


def trajectory_critical(t, e0, v0, omega0):
    """Critically damped e(t) = exp(-omega0 t) (e0 + (v0 + omega0 e0) t).

    docs/theory.md section 2. Continuum limit. Generated from the derivation ``trajectory_critical``.

    Parameters
    ----------
    t : array_like
        continuous time [steps]
    e0 : array_like
        initial displacement e(0) [reward]
    v0 : array_like
        initial velocity e'(0) [reward/step]
    omega0 : array_like
        natural angular frequency [rad/step]
    """
    try:
        _x0 = omega0*t
        return (_x0*e0 + e0 + t*v0)*numpy.exp(-_x0)
    except ZeroDivisionError:  # Python numbers at a pole: as numpy's (inf or nan)
        with numpy.errstate(all="ignore"):
            return trajectory_critical(numpy.asarray(t)[()], numpy.asarray(e0)[()], numpy.asarray(v0)[()], numpy.asarray(omega0)[()])


def trajectory_underdamped(t, e0, v0, zeta, omega0):
    """Underdamped e(t) with the damped frequency omega0 sqrt(1 - zeta^2).

    docs/theory.md section 2. Continuum limit. Generated from the derivation ``trajectory_underdamped``.

    Parameters
    ----------
    t : array_like
        continuous time [steps]
    e0 : array_like
        initial displacement e(0) [reward]
    v0 : array_like
        initial velocity e'(0) [reward/step]
    zeta : array_like
        damping ratio [dimensionless]
    omega0 : array_like
        natural angular frequency [rad/step]

    Raises
    ------
    ValueError
        Outside the domain where this real-arithmetic form is the result:
        zeta < 1
    """
    with numpy.errstate(all="ignore"):  # arrays: 1/0 is inf, not an exception
        _inside = (lambda zeta: numpy.all(numpy.less(zeta, 1)))(numpy.asarray(zeta, dtype=float))
    if not _inside:
        raise ValueError("trajectory_underdamped: defined only where zeta < 1")
    try:
        _x0 = omega0*zeta
        _x1 = numpy.sqrt(1 - zeta**2)
        _x2 = _x1*omega0
        _x3 = _x2*t
        return (_x2*e0*numpy.cos(_x3) + (_x0*e0 + v0)*numpy.sin(_x3))*numpy.exp(-_x0*t)/(_x1*omega0)
    except ZeroDivisionError:  # Python numbers at a pole: as numpy's (inf or nan)
        with numpy.errstate(all="ignore"):
            return trajectory_underdamped(numpy.asarray(t)[()], numpy.asarray(e0)[()], numpy.asarray(v0)[()], numpy.asarray(zeta)[()], numpy.asarray(omega0)[()])


def slow_start_trajectory(t, e0, beta, k):
    """Early trajectory from a zero momentum buffer: e0 (1 - k t^2 / (2m)).

    docs/theory.md section 2. Continuum limit. Generated from the derivation ``slow_start_trajectory``.

    Parameters
    ----------
    t : array_like
        continuous time [steps]
    e0 : array_like
        initial displacement e(0) [reward]
    beta : array_like
        momentum (heavy-ball beta or Adam beta1) [dimensionless]
    k : array_like
        dimensionless stiffness a*kappa [1/step^2]
    """
    try:
        _x0 = beta + 1
        return -e0*(-_x0 + k*t**2)/_x0
    except ZeroDivisionError:  # Python numbers at a pole: as numpy's (inf or nan)
        with numpy.errstate(all="ignore"):
            return slow_start_trajectory(numpy.asarray(t)[()], numpy.asarray(e0)[()], numpy.asarray(beta)[()], numpy.asarray(k)[()])


def inflection_time(zeta, omega0):
    """Inflection time atanh(s/(zeta omega0))/s of the reward curve (v0 = 0).

    docs/theory.md section 2. Continuum limit. Generated from the derivation ``inflection_time``.

    Parameters
    ----------
    zeta : array_like
        damping ratio [dimensionless]
    omega0 : array_like
        natural angular frequency [rad/step]

    Raises
    ------
    ValueError
        Outside the domain where this real-arithmetic form is the result:
        zeta > 1
    """
    with numpy.errstate(all="ignore"):  # arrays: 1/0 is inf, not an exception
        _inside = (lambda zeta: numpy.all(numpy.greater(zeta, 1)))(numpy.asarray(zeta, dtype=float))
    if not _inside:
        raise ValueError("inflection_time: defined only where zeta > 1")
    try:
        _x0 = numpy.sqrt(zeta**2 - 1)
        return numpy.arctanh(_x0/zeta)/(_x0*omega0)
    except ZeroDivisionError:  # Python numbers at a pole: as numpy's (inf or nan)
        with numpy.errstate(all="ignore"):
            return inflection_time(numpy.asarray(zeta)[()], numpy.asarray(omega0)[()])


def relaxation_time(beta, a, kappa):
    """Relaxation time tau = (1 - beta) / (a kappa) of the overdamped limit.

    docs/theory.md section 3. Overdamped limit and the empirical law. Generated from the derivation ``relaxation_time``.

    Parameters
    ----------
    beta : array_like
        momentum (heavy-ball beta or Adam beta1) [dimensionless]
    a : array_like
        effective step (eta for heavy-ball SGD) [parameter/gradient]
    kappa : array_like
        curvature scale: slope of the projected drift [gradient/reward]
    """
    try:
        return (1 - beta)/(a*kappa)
    except ZeroDivisionError:  # Python numbers at a pole: as numpy's (inf or nan)
        with numpy.errstate(all="ignore"):
            return relaxation_time(numpy.asarray(beta)[()], numpy.asarray(a)[()], numpy.asarray(kappa)[()])


def saturation_law(t, r0, r_star, tau):
    """Single-exponential saturation law: plateau r*, timescale tau = c/k.

    docs/theory.md section 3. Overdamped limit and the empirical law. Generated from the derivation ``saturation_law``.

    Parameters
    ----------
    t : array_like
        continuous time [steps]
    r0 : array_like
        initial expected reward [reward]
    r_star : array_like
        fixed point (plateau) of the expected reward [reward]
    tau : array_like
        relaxation time [steps]
    """
    try:
        return r_star + (r0 - r_star)*numpy.exp(-t/tau)
    except ZeroDivisionError:  # Python numbers at a pole: as numpy's (inf or nan)
        with numpy.errstate(all="ignore"):
            return saturation_law(numpy.asarray(t)[()], numpy.asarray(r0)[()], numpy.asarray(r_star)[()], numpy.asarray(tau)[()])


def size_exponent(alpha):
    """Model-size exponent of tau: minus the curvature exponent alpha.

    docs/theory.md section 3. Overdamped limit and the empirical law. Generated from the derivation ``size_exponent``.

    Parameters
    ----------
    alpha : array_like
        model-size exponent of the curvature scale [dimensionless]
    """
    try:
        return -alpha
    except ZeroDivisionError:  # Python numbers at a pole: as numpy's (inf or nan)
        with numpy.errstate(all="ignore"):
            return size_exponent(numpy.asarray(alpha)[()])


def slow_root(m, c, k):
    """Slow decay rate -k/c - m k^2/c^3 + O(m^2): inertia slows relaxation.

    docs/theory.md section 3. Overdamped limit and the empirical law. Generated from the derivation ``slow_root``.

    Parameters
    ----------
    m : array_like
        mass of the continuum limit [dimensionless]
    c : array_like
        damping of the continuum limit [1/step]
    k : array_like
        dimensionless stiffness a*kappa [1/step^2]

    Raises
    ------
    ValueError
        Outside the domain where this real-arithmetic form is the result:
        c**2 > 4*k*m
    """
    with numpy.errstate(all="ignore"):  # arrays: 1/0 is inf, not an exception
        _inside = (lambda c, k, m: numpy.all(numpy.greater(c**2, 4*k*m)))(numpy.asarray(c, dtype=float), numpy.asarray(k, dtype=float), numpy.asarray(m, dtype=float))
    if not _inside:
        raise ValueError("slow_root: defined only where c**2 > 4*k*m")
    try:
        return -k/c - k**2*m/c**3
    except ZeroDivisionError:  # Python numbers at a pole: as numpy's (inf or nan)
        with numpy.errstate(all="ignore"):
            return slow_root(numpy.asarray(m)[()], numpy.asarray(c)[()], numpy.asarray(k)[()])


def inertial_delay(beta):
    """Delay m/c = (1+beta)/(2(1-beta)) steps that inertia adds to the law.

    docs/theory.md section 3. Overdamped limit and the empirical law. Generated from the derivation ``inertial_delay``.

    Parameters
    ----------
    beta : array_like
        momentum (heavy-ball beta or Adam beta1) [dimensionless]
    """
    try:
        return -1/2*(beta + 1)/(beta - 1)
    except ZeroDivisionError:  # Python numbers at a pole: as numpy's (inf or nan)
        with numpy.errstate(all="ignore"):
            return inertial_delay(numpy.asarray(beta)[()])


def gain_fraction_time(q, beta, a, kappa):
    """Steps to a fraction q of the gain: tau ln(1/(1-q)) + m/c.

    docs/theory.md section 3. Overdamped limit and the empirical law. Generated from the derivation ``gain_fraction_time``.

    Parameters
    ----------
    q : array_like
        fraction of the total gain [dimensionless]
    beta : array_like
        momentum (heavy-ball beta or Adam beta1) [dimensionless]
    a : array_like
        effective step (eta for heavy-ball SGD) [parameter/gradient]
    kappa : array_like
        curvature scale: slope of the projected drift [gradient/reward]

    Raises
    ------
    ValueError
        Outside the domain where this real-arithmetic form is the result:
        q < 1
    """
    with numpy.errstate(all="ignore"):  # arrays: 1/0 is inf, not an exception
        _inside = (lambda q: numpy.all(numpy.less(q, 1)))(numpy.asarray(q, dtype=float))
    if not _inside:
        raise ValueError("gain_fraction_time: defined only where q < 1")
    try:
        _x0 = beta - 1
        return -_x0*numpy.log(-1/(q - 1))/(a*kappa) - 1/2*(beta + 1)/_x0
    except ZeroDivisionError:  # Python numbers at a pole: as numpy's (inf or nan)
        with numpy.errstate(all="ignore"):
            return gain_fraction_time(numpy.asarray(q)[()], numpy.asarray(beta)[()], numpy.asarray(a)[()], numpy.asarray(kappa)[()])


def critical_stiffness(beta):
    """Continuum critical stiffness (1-beta)^2 / (2(1+beta)): zeta = 1.

    docs/theory.md section 4. Critical damping and regimes. Generated from the derivation ``critical_stiffness``.

    Parameters
    ----------
    beta : array_like
        momentum (heavy-ball beta or Adam beta1) [dimensionless]
    """
    try:
        return (1/2)*(beta - 1)**2/(beta + 1)
    except ZeroDivisionError:  # Python numbers at a pole: as numpy's (inf or nan)
        with numpy.errstate(all="ignore"):
            return critical_stiffness(numpy.asarray(beta)[()])


def critical_stiffness_discrete(beta):
    """Exact discrete boundary (1 - sqrt(beta))^2: monotone below, oscillatory above.

    docs/theory.md section 4. Critical damping and regimes. Generated from the derivation ``critical_stiffness_discrete``.

    Parameters
    ----------
    beta : array_like
        momentum (heavy-ball beta or Adam beta1) [dimensionless]
    """
    try:
        return -2*numpy.sqrt(beta) + beta + 1
    except ZeroDivisionError:  # Python numbers at a pole: as numpy's (inf or nan)
        with numpy.errstate(all="ignore"):
            return critical_stiffness_discrete(numpy.asarray(beta)[()])


def pole_stiffness(beta, tau):
    """Stiffness 1 + beta - z - beta / z whose map has the real pole z = exp(-1/tau); the dominant one for tau >= -2 / ln beta.

    docs/theory.md section 4. Critical damping and regimes. Generated from the derivation ``pole_stiffness``.

    Parameters
    ----------
    beta : array_like
        momentum (heavy-ball beta or Adam beta1) [dimensionless]
    tau : array_like
        relaxation time [steps]
    """
    try:
        _x0 = tau**(-1.0)
        _x1 = -numpy.exp(-_x0)
        return -(-_x1 - 1)*(-_x1 - beta)*numpy.exp(_x0)
    except ZeroDivisionError:  # Python numbers at a pole: as numpy's (inf or nan)
        with numpy.errstate(all="ignore"):
            return pole_stiffness(numpy.asarray(beta)[()], numpy.asarray(tau)[()])


def flip_stiffness(beta):
    """Exact discrete boundary (1 + sqrt(beta))^2: real negative roots above.

    docs/theory.md section 4. Critical damping and regimes. Generated from the derivation ``flip_stiffness``.

    Parameters
    ----------
    beta : array_like
        momentum (heavy-ball beta or Adam beta1) [dimensionless]
    """
    try:
        return 2*numpy.sqrt(beta) + beta + 1
    except ZeroDivisionError:  # Python numbers at a pole: as numpy's (inf or nan)
        with numpy.errstate(all="ignore"):
            return flip_stiffness(numpy.asarray(beta)[()])


def critical_stiffness_relative_error(beta):
    """Relative error of the continuum critical stiffness: O((1-beta)^2).

    docs/theory.md section 4. Critical damping and regimes. Generated from the derivation ``critical_stiffness_relative_error``.

    Parameters
    ----------
    beta : array_like
        momentum (heavy-ball beta or Adam beta1) [dimensionless]
    """
    try:
        return -(1 - beta)**2/((numpy.sqrt(beta) + 1)**2*(2*beta + 2))
    except ZeroDivisionError:  # Python numbers at a pole: as numpy's (inf or nan)
        with numpy.errstate(all="ignore"):
            return critical_stiffness_relative_error(numpy.asarray(beta)[()])


def discrete_damping_ratio(beta, k):
    """zeta of the poles z = exp(s), s = log z, for the oscillatory exact map.

    docs/theory.md section 4. Critical damping and regimes. Generated from the derivation ``discrete_damping_ratio``.

    Parameters
    ----------
    beta : array_like
        momentum (heavy-ball beta or Adam beta1) [dimensionless]
    k : array_like
        dimensionless stiffness a*kappa [1/step^2]

    Raises
    ------
    ValueError
        Outside the domain where this real-arithmetic form is the result:
        beta > 0 and k <= (sqrt(beta) + 1)**2 and k >= (1 - sqrt(beta))**2
    """
    with numpy.errstate(all="ignore"):  # arrays: 1/0 is inf, not an exception
        _inside = (lambda beta, k: numpy.all(numpy.greater(beta, 0)) and numpy.all(numpy.less_equal(k, (numpy.sqrt(beta) + 1)**2)) and numpy.all(numpy.greater_equal(k, (1 - numpy.sqrt(beta))**2)))(numpy.asarray(beta, dtype=float), numpy.asarray(k, dtype=float))
    if not _inside:
        raise ValueError("discrete_damping_ratio: defined only where beta > 0 and k <= (sqrt(beta) + 1)**2 and k >= (1 - sqrt(beta))**2")
    try:
        _x0 = numpy.log(beta)
        return -1/2*_x0/numpy.sqrt((1/4)*_x0**2 + numpy.arccos(((1/2)*beta - 1/2*k + 1/2)/numpy.sqrt(beta))**2)
    except ZeroDivisionError:  # Python numbers at a pole: as numpy's (inf or nan)
        with numpy.errstate(all="ignore"):
            return discrete_damping_ratio(numpy.asarray(beta)[()], numpy.asarray(k)[()])


def stiffness_max(beta):
    """On-policy stability limit 2(1+beta) (Jury).

    docs/theory.md section 5. Stability thresholds. Generated from the derivation ``stiffness_max``.

    Parameters
    ----------
    beta : array_like
        momentum (heavy-ball beta or Adam beta1) [dimensionless]

    Raises
    ------
    ValueError
        Outside the domain where this real-arithmetic form is the result:
        1 - beta > 0
    """
    with numpy.errstate(all="ignore"):  # arrays: 1/0 is inf, not an exception
        _inside = (lambda beta: numpy.all(numpy.greater(1 - beta, 0)))(numpy.asarray(beta, dtype=float))
    if not _inside:
        raise ValueError("stiffness_max: defined only where 1 - beta > 0")
    try:
        return 2*beta + 2
    except ZeroDivisionError:  # Python numbers at a pole: as numpy's (inf or nan)
        with numpy.errstate(all="ignore"):
            return stiffness_max(numpy.asarray(beta)[()])


def staleness_polynomial(z, beta, k, d):
    """Characteristic polynomial of the map with staleness d (d >= 1).

    docs/theory.md section 5. Stability thresholds. Generated from the derivation ``staleness_polynomial``.

    Parameters
    ----------
    z : array_like
        root of a discrete characteristic polynomial [dimensionless]
    beta : array_like
        momentum (heavy-ball beta or Adam beta1) [dimensionless]
    k : array_like
        dimensionless stiffness a*kappa [1/step^2]
    d : array_like
        fixed staleness [steps]
    """
    try:
        _x0 = z**d
        return -_x0*beta + _x0*z - _x0 + beta*z**(d - 1) + k
    except ZeroDivisionError:  # Python numbers at a pole: as numpy's (inf or nan)
        with numpy.errstate(all="ignore"):
            return staleness_polynomial(numpy.asarray(z)[()], numpy.asarray(beta)[()], numpy.asarray(k)[()], numpy.asarray(d)[()])


def staleness_stiffness_max_d1(beta):
    """Exact stability limit of the stiffness with staleness d = 1.

    docs/theory.md section 5. Stability thresholds. Generated from the derivation ``staleness_stiffness_max_d1``.

    Parameters
    ----------
    beta : array_like
        momentum (heavy-ball beta or Adam beta1) [dimensionless]
    """
    try:
        return 1 - beta
    except ZeroDivisionError:  # Python numbers at a pole: as numpy's (inf or nan)
        with numpy.errstate(all="ignore"):
            return staleness_stiffness_max_d1(numpy.asarray(beta)[()])


def staleness_stiffness_max_d2(beta):
    """Exact stability limit of the stiffness with staleness d = 2.

    docs/theory.md section 5. Stability thresholds. Generated from the derivation ``staleness_stiffness_max_d2``.

    Parameters
    ----------
    beta : array_like
        momentum (heavy-ball beta or Adam beta1) [dimensionless]
    """
    try:
        return -1/2*beta + (1/2)*numpy.sqrt(beta**2 - 2*beta + 5) - 1/2
    except ZeroDivisionError:  # Python numbers at a pole: as numpy's (inf or nan)
        with numpy.errstate(all="ignore"):
            return staleness_stiffness_max_d2(numpy.asarray(beta)[()])


def staleness_stability_condition_d3(beta, k):
    """Jury stability conditions for staleness d = 3.

    docs/theory.md section 5. Stability thresholds. Generated from the derivation ``staleness_stability_condition_d3``.

    Parameters
    ----------
    beta : array_like
        momentum (heavy-ball beta or Adam beta1) [dimensionless]
    k : array_like
        dimensionless stiffness a*kappa [1/step^2]
    """
    try:
        _x0 = k**2
        _x1 = beta*k + k
        _x2 = beta**2
        _x3 = _x0*beta
        return numpy.logical_and.reduce((numpy.greater(1 - k, 0),numpy.greater(-_x1 + abs(_x0 - 1), 0),numpy.greater(-abs(_x1 + _x2*k - _x3 + beta*k**3 + beta) + abs(_x0*_x2 + 3*_x0 + 2*_x3 - k**4 - 1), 0)))
    except ZeroDivisionError:  # Python numbers at a pole: as numpy's (inf or nan)
        with numpy.errstate(all="ignore"):
            return staleness_stability_condition_d3(numpy.asarray(beta)[()], numpy.asarray(k)[()])


def staleness_stiffness_max_continuum(beta, d):
    """Continuum staleness limit (1-beta)/d: the lag erodes all damping.

    docs/theory.md section 5. Stability thresholds. Generated from the derivation ``staleness_stiffness_max_continuum``.

    Parameters
    ----------
    beta : array_like
        momentum (heavy-ball beta or Adam beta1) [dimensionless]
    d : array_like
        fixed staleness [steps]

    Raises
    ------
    ValueError
        Outside the domain where this real-arithmetic form is the result:
        d >= 1
    """
    with numpy.errstate(all="ignore"):  # arrays: 1/0 is inf, not an exception
        _inside = (lambda d: numpy.all(numpy.greater_equal(d, 1)))(numpy.asarray(d, dtype=float))
    if not _inside:
        raise ValueError("staleness_stiffness_max_continuum: defined only where d >= 1")
    try:
        return (1 - beta)/d
    except ZeroDivisionError:  # Python numbers at a pole: as numpy's (inf or nan)
        with numpy.errstate(all="ignore"):
            return staleness_stiffness_max_continuum(numpy.asarray(beta)[()], numpy.asarray(d)[()])


def monodromy_11(beta, k, K):
    """Entry (1,1) of the refresh-cycle monodromy matrix.

    docs/theory.md section 5. Stability thresholds. Generated from the derivation ``monodromy_11``.

    Parameters
    ----------
    beta : array_like
        momentum (heavy-ball beta or Adam beta1) [dimensionless]
    k : array_like
        dimensionless stiffness a*kappa [1/step^2]
    K : array_like
        refresh interval (optimizer steps per sampling refresh) [steps]
    """
    try:
        _x0 = beta - 1
        _x1 = _x0**2
        return (K*_x0*k + _x1 + k*(beta - beta**(K + 1)))/_x1
    except ZeroDivisionError:  # Python numbers at a pole: as numpy's (inf or nan)
        with numpy.errstate(all="ignore"):
            return monodromy_11(numpy.asarray(beta)[()], numpy.asarray(k)[()], numpy.asarray(K)[()])


def monodromy_12(beta, k, K):
    """Entry (1,2) of the refresh-cycle monodromy matrix.

    docs/theory.md section 5. Stability thresholds. Generated from the derivation ``monodromy_12``.

    Parameters
    ----------
    beta : array_like
        momentum (heavy-ball beta or Adam beta1) [dimensionless]
    k : array_like
        dimensionless stiffness a*kappa [1/step^2]
    K : array_like
        refresh interval (optimizer steps per sampling refresh) [steps]
    """
    try:
        return (-beta + beta**(K + 1))/(beta - 1)
    except ZeroDivisionError:  # Python numbers at a pole: as numpy's (inf or nan)
        with numpy.errstate(all="ignore"):
            return monodromy_12(numpy.asarray(beta)[()], numpy.asarray(k)[()], numpy.asarray(K)[()])


def monodromy_21(beta, k, K):
    """Entry (2,1) of the refresh-cycle monodromy matrix.

    docs/theory.md section 5. Stability thresholds. Generated from the derivation ``monodromy_21``.

    Parameters
    ----------
    beta : array_like
        momentum (heavy-ball beta or Adam beta1) [dimensionless]
    k : array_like
        dimensionless stiffness a*kappa [1/step^2]
    K : array_like
        refresh interval (optimizer steps per sampling refresh) [steps]
    """
    try:
        return k*(1 - beta**K)/(beta - 1)
    except ZeroDivisionError:  # Python numbers at a pole: as numpy's (inf or nan)
        with numpy.errstate(all="ignore"):
            return monodromy_21(numpy.asarray(beta)[()], numpy.asarray(k)[()], numpy.asarray(K)[()])


def monodromy_22(beta, k, K):
    """Entry (2,2) of the refresh-cycle monodromy matrix.

    docs/theory.md section 5. Stability thresholds. Generated from the derivation ``monodromy_22``.

    Parameters
    ----------
    beta : array_like
        momentum (heavy-ball beta or Adam beta1) [dimensionless]
    k : array_like
        dimensionless stiffness a*kappa [1/step^2]
    K : array_like
        refresh interval (optimizer steps per sampling refresh) [steps]
    """
    try:
        return beta**K
    except ZeroDivisionError:  # Python numbers at a pole: as numpy's (inf or nan)
        with numpy.errstate(all="ignore"):
            return monodromy_22(numpy.asarray(beta)[()], numpy.asarray(k)[()], numpy.asarray(K)[()])


def monodromy_trace(beta, k, K):
    """Trace of the refresh-cycle monodromy matrix.

    docs/theory.md section 5. Stability thresholds. Generated from the derivation ``monodromy_trace``.

    Parameters
    ----------
    beta : array_like
        momentum (heavy-ball beta or Adam beta1) [dimensionless]
    k : array_like
        dimensionless stiffness a*kappa [1/step^2]
    K : array_like
        refresh interval (optimizer steps per sampling refresh) [steps]
    """
    try:
        _x0 = beta - 1
        _x1 = _x0**2
        return (K*_x0*k + _x1*beta**K + _x1 + k*(beta - beta**(K + 1)))/_x1
    except ZeroDivisionError:  # Python numbers at a pole: as numpy's (inf or nan)
        with numpy.errstate(all="ignore"):
            return monodromy_trace(numpy.asarray(beta)[()], numpy.asarray(k)[()], numpy.asarray(K)[()])


def monodromy_determinant(beta, k, K):
    """Determinant of the refresh-cycle monodromy matrix.

    docs/theory.md section 5. Stability thresholds. Generated from the derivation ``monodromy_determinant``.

    Parameters
    ----------
    beta : array_like
        momentum (heavy-ball beta or Adam beta1) [dimensionless]
    k : array_like
        dimensionless stiffness a*kappa [1/step^2]
    K : array_like
        refresh interval (optimizer steps per sampling refresh) [steps]
    """
    try:
        _x0 = beta**K
        _x1 = beta*k
        _x2 = _x0*_x1
        return (-K*_x0*k + K*_x2 + _x0*beta**2 - 2*_x0*beta + _x0 + _x1 - _x2)/(beta - 1)**2
    except ZeroDivisionError:  # Python numbers at a pole: as numpy's (inf or nan)
        with numpy.errstate(all="ignore"):
            return monodromy_determinant(numpy.asarray(beta)[()], numpy.asarray(k)[()], numpy.asarray(K)[()])


def refresh_stability_condition(beta, k, K):
    """Stability with refresh interval K: eigenvalues of M_K in the unit disc.

    docs/theory.md section 5. Stability thresholds. Generated from the derivation ``refresh_stability_condition``.

    Parameters
    ----------
    beta : array_like
        momentum (heavy-ball beta or Adam beta1) [dimensionless]
    k : array_like
        dimensionless stiffness a*kappa [1/step^2]
    K : array_like
        refresh interval (optimizer steps per sampling refresh) [steps]
    """
    try:
        _x0 = beta**K
        _x1 = beta*k
        _x2 = 2*beta
        _x3 = beta**2
        _x4 = _x0*_x3
        _x5 = K*k
        _x6 = _x0*_x5
        _x7 = _x0*_x1
        _x8 = K*_x7
        _x9 = (-_x2 + _x3 + 1)**(-1.0)
        _x10 = _x3*_x9
        _x11 = _x2*_x9
        _x12 = _x5*_x9
        _x13 = _x1*_x9
        _x14 = K*_x13
        _x15 = -_x6*_x9 + _x8*_x9 + 1
        _x16 = _x0*_x9
        _x17 = 2*_x9
        return numpy.logical_and.reduce((numpy.greater(-_x10 + _x11 + _x12 - _x14 + _x15 - _x9, 0),numpy.greater(1 - abs((-_x0*_x2 + _x0 + _x1 + _x4 - _x6 - _x7 + _x8)/(beta - 1)**2), 0),numpy.greater(_x10 - _x11 - _x12 + 2*_x13 + _x14 + _x15 - 4*_x16*beta + 2*_x16 + _x17*_x4 - _x17*_x7 + _x9, 0)))
    except ZeroDivisionError:  # Python numbers at a pole: as numpy's (inf or nan)
        with numpy.errstate(all="ignore"):
            return refresh_stability_condition(numpy.asarray(beta)[()], numpy.asarray(k)[()], numpy.asarray(K)[()])


def refresh_threshold_no_momentum(k):
    """Refresh-interval threshold 2/k without momentum (exact).

    docs/theory.md section 5. Stability thresholds. Generated from the derivation ``refresh_threshold_no_momentum``.

    Parameters
    ----------
    k : array_like
        dimensionless stiffness a*kappa [1/step^2]
    """
    try:
        return 2/k
    except ZeroDivisionError:  # Python numbers at a pole: as numpy's (inf or nan)
        with numpy.errstate(all="ignore"):
            return refresh_threshold_no_momentum(numpy.asarray(k)[()])


def refresh_threshold_continuum(beta, k):
    """Continuum refresh threshold 1 + 2(1-beta)/k.

    docs/theory.md section 5. Stability thresholds. Generated from the derivation ``refresh_threshold_continuum``.

    Parameters
    ----------
    beta : array_like
        momentum (heavy-ball beta or Adam beta1) [dimensionless]
    k : array_like
        dimensionless stiffness a*kappa [1/step^2]
    """
    try:
        _x0 = 2/k
        return -_x0*beta + _x0 + 1
    except ZeroDivisionError:  # Python numbers at a pole: as numpy's (inf or nan)
        with numpy.errstate(all="ignore"):
            return refresh_threshold_continuum(numpy.asarray(beta)[()], numpy.asarray(k)[()])


def refresh_threshold_reference(beta, k):
    """Reference paper's refresh bound (1-beta)/k (arXiv 2606.30789).

    docs/theory.md section 5. Stability thresholds. Generated from the derivation ``refresh_threshold_reference``.

    Parameters
    ----------
    beta : array_like
        momentum (heavy-ball beta or Adam beta1) [dimensionless]
    k : array_like
        dimensionless stiffness a*kappa [1/step^2]
    """
    try:
        return (1 - beta)/k
    except ZeroDivisionError:  # Python numbers at a pole: as numpy's (inf or nan)
        with numpy.errstate(all="ignore"):
            return refresh_threshold_reference(numpy.asarray(beta)[()], numpy.asarray(k)[()])


def stationary_variance(beta, k, s2):
    """Stationary variance of e for K = 1 (AR(2), exact); diverges at 2(1+beta).

    docs/theory.md section 6. Fluctuations. Generated from the derivation ``stationary_variance``.

    Parameters
    ----------
    beta : array_like
        momentum (heavy-ball beta or Adam beta1) [dimensionless]
    k : array_like
        dimensionless stiffness a*kappa [1/step^2]
    s2 : array_like
        per-step noise variance of the increment of r [reward^2]

    Raises
    ------
    ValueError
        Outside the domain where this real-arithmetic form is the result:
        beta < 1 and k < 2*beta + 2
    """
    with numpy.errstate(all="ignore"):  # arrays: 1/0 is inf, not an exception
        _inside = (lambda beta, k: numpy.all(numpy.less(beta, 1)) and numpy.all(numpy.less(k, 2*beta + 2)))(numpy.asarray(beta, dtype=float), numpy.asarray(k, dtype=float))
    if not _inside:
        raise ValueError("stationary_variance: defined only where beta < 1 and k < 2*beta + 2")
    try:
        return s2*(beta + 1)/(k*(beta - 1)*(-2*beta + k - 2))
    except ZeroDivisionError:  # Python numbers at a pole: as numpy's (inf or nan)
        with numpy.errstate(all="ignore"):
            return stationary_variance(numpy.asarray(beta)[()], numpy.asarray(k)[()], numpy.asarray(s2)[()])


def ou_stationary_variance(beta, k, s2):
    """Continuum stationary variance s^2 / (2 c k): the small-k limit of AR(2).

    docs/theory.md section 6. Fluctuations. Generated from the derivation ``ou_stationary_variance``.

    Parameters
    ----------
    beta : array_like
        momentum (heavy-ball beta or Adam beta1) [dimensionless]
    k : array_like
        dimensionless stiffness a*kappa [1/step^2]
    s2 : array_like
        per-step noise variance of the increment of r [reward^2]
    """
    try:
        return -1/2*s2/(k*(beta - 1))
    except ZeroDivisionError:  # Python numbers at a pole: as numpy's (inf or nan)
        with numpy.errstate(all="ignore"):
            return ou_stationary_variance(numpy.asarray(beta)[()], numpy.asarray(k)[()], numpy.asarray(s2)[()])


def autocorrelation(h, beta, k):
    """Autocorrelation rho(h) of e at lag h (real form valid in every regime).

    docs/theory.md section 6. Fluctuations. Generated from the derivation ``autocorrelation``.

    Parameters
    ----------
    h : array_like
        lag of an autocorrelation [steps]
    beta : array_like
        momentum (heavy-ball beta or Adam beta1) [dimensionless]
    k : array_like
        dimensionless stiffness a*kappa [1/step^2]

    Raises
    ------
    ValueError
        Outside the domain where this real-arithmetic form is the result:
        h is a whole number
    """
    with numpy.errstate(all="ignore"):  # arrays: 1/0 is inf, not an exception
        _inside = (lambda h: numpy.all(numpy.equal(h - numpy.floor(h), 0)))(numpy.asarray(h, dtype=float))
    if not _inside:
        raise ValueError("autocorrelation: defined only where h is a whole number")
    try:
        with numpy.errstate(all="ignore"):  # only the selected branch counts
            _x0 = beta + 1
            _x1 = _x0**(-1.0)
            _x2 = -k
            _x3 = _x0 + _x2
            _x4 = _x1*_x3
            _x5 = numpy.sqrt(beta)
            _x6 = _x5 - 1
            _x7 = k - (_x5 + 1)**2
            _x8 = abs(_x7*(_x6**2 - k))
            _x9 = numpy.sqrt(_x8)
            _x10 = h - 1
            _x11 = numpy.arctan2(_x9, _x3)
            _x12 = h + 1
            _x13 = -_x7*(_x6**2 - k)
            _x14 = (1/2)*beta - 1/2*k + 1/2
            _x15 = numpy.sqrt((1/2)*_x13 + (1/2)*_x8)
            _x16 = (1/2)*_x15
            _x17 = numpy.arcsinh(_x16/_x5)
            _x18 = 2*_x17
            _x19 = numpy.exp(-_x18)
            _x20 = (-beta*(_x19 + numpy.exp(-_x18*h))*numpy.tanh(_x10*_x17) + (1 + numpy.exp(-_x12*_x18))*numpy.tanh(_x12*_x17))/(_x15*(_x19 + 1))
            return numpy.asarray(numpy.where(numpy.equal(beta, 0), _x4**h, numpy.where(numpy.less(_x13, 0), _x1*beta**((1/2)*h)*numpy.sqrt(_x3**2 + _x8)*(-beta*numpy.sin(_x10*_x11) + numpy.sin(_x11*_x12))/_x9, numpy.where(numpy.equal(_x13, 0), _x14**h*(_x1*h*(1 - beta) + 1), numpy.where(numpy.less(_x2 + beta, -1), -(-1)**h*_x1*_x20*_x3*(-_x14 + (1/2)*_x15)**h, _x20*_x4*(_x14 + _x16)**h)))))[()]
    except ZeroDivisionError:  # Python numbers at a pole: as numpy's (inf or nan)
        with numpy.errstate(all="ignore"):
            return autocorrelation(numpy.asarray(h)[()], numpy.asarray(beta)[()], numpy.asarray(k)[()])


def spectral_density(omega, beta, k, s2):
    """Power spectral density of e (per rad/step); a peak when oscillatory.

    docs/theory.md section 6. Fluctuations. Generated from the derivation ``spectral_density``.

    Parameters
    ----------
    omega : array_like
        angular frequency of a spectrum [rad/step]
    beta : array_like
        momentum (heavy-ball beta or Adam beta1) [dimensionless]
    k : array_like
        dimensionless stiffness a*kappa [1/step^2]
    s2 : array_like
        per-step noise variance of the increment of r [reward^2]
    """
    try:
        return (1/2)*s2/(numpy.pi*((1 - beta)**2*numpy.sin(omega)**2 + (k - (2*beta + 2)*numpy.sin((1/2)*omega)**2)**2))
    except ZeroDivisionError:  # Python numbers at a pole: as numpy's (inf or nan)
        with numpy.errstate(all="ignore"):
            return spectral_density(numpy.asarray(omega)[()], numpy.asarray(beta)[()], numpy.asarray(k)[()], numpy.asarray(s2)[()])


def spectral_peak_frequency(beta, k):
    """Frequency of the spectral peak (exists while |cos omega*| < 1).

    docs/theory.md section 6. Fluctuations. Generated from the derivation ``spectral_peak_frequency``.

    Parameters
    ----------
    beta : array_like
        momentum (heavy-ball beta or Adam beta1) [dimensionless]
    k : array_like
        dimensionless stiffness a*kappa [1/step^2]

    Raises
    ------
    ValueError
        Outside the domain where this real-arithmetic form is the result:
        beta > 0 and (beta + 1)*Abs(beta - k + 1)/(4*beta) < 1
    """
    with numpy.errstate(all="ignore"):  # arrays: 1/0 is inf, not an exception
        _inside = (lambda beta, k: numpy.all(numpy.greater(beta, 0)) and numpy.all(numpy.less((1/4)*(beta + 1)*abs(beta - k + 1)/beta, 1)))(numpy.asarray(beta, dtype=float), numpy.asarray(k, dtype=float))
    if not _inside:
        raise ValueError("spectral_peak_frequency: defined only where beta > 0 and (beta + 1)*Abs(beta - k + 1)/(4*beta) < 1")
    try:
        _x0 = beta + 1
        return numpy.arccos(-1/4*_x0*(-_x0 + k)/beta)
    except ZeroDivisionError:  # Python numbers at a pole: as numpy's (inf or nan)
        with numpy.errstate(all="ignore"):
            return spectral_peak_frequency(numpy.asarray(beta)[()], numpy.asarray(k)[()])


def noise_variance(a, Sigma, B, G):
    """Per-step noise variance a^2 Sigma / (B G) from sampling B G completions.

    docs/theory.md section 6. Fluctuations. Generated from the derivation ``noise_variance``.

    Parameters
    ----------
    a : array_like
        effective step (eta for heavy-ball SGD) [parameter/gradient]
    Sigma : array_like
        per-completion variance of the projected gradient [gradient^2]
    B : array_like
        prompts per step [prompts]
    G : array_like
        group size (completions per prompt) [completions]
    """
    try:
        return Sigma*a**2/(B*G)
    except ZeroDivisionError:  # Python numbers at a pole: as numpy's (inf or nan)
        with numpy.errstate(all="ignore"):
            return noise_variance(numpy.asarray(a)[()], numpy.asarray(Sigma)[()], numpy.asarray(B)[()], numpy.asarray(G)[()])


def noise_temperature(beta, a, Sigma, B, G):
    """Noise temperature T = k Var(e) = a^2 Sigma / (2 (1-beta) B G), ~ 1/G.

    docs/theory.md section 6. Fluctuations. Generated from the derivation ``noise_temperature``.

    Parameters
    ----------
    beta : array_like
        momentum (heavy-ball beta or Adam beta1) [dimensionless]
    a : array_like
        effective step (eta for heavy-ball SGD) [parameter/gradient]
    Sigma : array_like
        per-completion variance of the projected gradient [gradient^2]
    B : array_like
        prompts per step [prompts]
    G : array_like
        group size (completions per prompt) [completions]
    """
    try:
        return -Sigma*a**2/(B*G*(2*beta - 2))
    except ZeroDivisionError:  # Python numbers at a pole: as numpy's (inf or nan)
        with numpy.errstate(all="ignore"):
            return noise_temperature(numpy.asarray(beta)[()], numpy.asarray(a)[()], numpy.asarray(Sigma)[()], numpy.asarray(B)[()], numpy.asarray(G)[()])


def temperature_group_exponent():
    """Exponent of the group size in the noise temperature: -1.

    docs/theory.md section 6. Fluctuations. Generated from the derivation ``temperature_group_exponent``.
    """
    try:
        return -1
    except ZeroDivisionError:  # Python numbers at a pole: as numpy's (inf or nan)
        with numpy.errstate(all="ignore"):
            return temperature_group_exponent()


def binomial_pmf(S, G, p):
    """Probability of S successes in a group of G.

    docs/theory.md section 7. Exact finite-G statistics for Bernoulli rewards. Generated from the derivation ``binomial_pmf``.

    Parameters
    ----------
    S : array_like
        number of successes in a group [completions]
    G : array_like
        group size (completions per prompt) [completions]
    p : array_like
        success probability of a prompt [dimensionless]

    Raises
    ------
    ValueError
        Outside the domain where this real-arithmetic form is the result:
        G <= 1024 and G is a whole number and S is a whole number
    """
    with numpy.errstate(all="ignore"):  # arrays: 1/0 is inf, not an exception
        _inside = (lambda G, S: numpy.all(numpy.less_equal(G, 1024)) and numpy.all(numpy.equal(G - numpy.floor(G), 0)) and numpy.all(numpy.equal(S - numpy.floor(S), 0)))(numpy.asarray(G, dtype=float), numpy.asarray(S, dtype=float))
    if not _inside:
        raise ValueError("binomial_pmf: defined only where G <= 1024 and G is a whole number and S is a whole number")
    try:
        return p**S*(1 - p)**(G - S)*_binomial(G, S)
    except ZeroDivisionError:  # Python numbers at a pole: as numpy's (inf or nan)
        with numpy.errstate(all="ignore"):
            return binomial_pmf(numpy.asarray(S)[()], numpy.asarray(G)[()], numpy.asarray(p)[()])


def degenerate_group_probability(G, p):
    """Probability of a zero-advantage group (advantage degeneracy).

    docs/theory.md section 7. Exact finite-G statistics for Bernoulli rewards. Generated from the derivation ``degenerate_group_probability``.

    Parameters
    ----------
    G : array_like
        group size (completions per prompt) [completions]
    p : array_like
        success probability of a prompt [dimensionless]
    """
    try:
        return p**G + (1 - p)**G
    except ZeroDivisionError:  # Python numbers at a pole: as numpy's (inf or nan)
        with numpy.errstate(all="ignore"):
            return degenerate_group_probability(numpy.asarray(G)[()], numpy.asarray(p)[()])


def grpo_update_given_successes(S, G, eps):
    """GRPO projected update of a group with S successes.

    docs/theory.md section 7. Exact finite-G statistics for Bernoulli rewards. Generated from the derivation ``grpo_update_given_successes``.

    Parameters
    ----------
    S : array_like
        number of successes in a group [completions]
    G : array_like
        group size (completions per prompt) [completions]
    eps : array_like
        epsilon added to the group std (TRL: 1e-4) [reward]
    """
    try:
        _x0 = G - S
        return S*_x0/(G**(3/2)*numpy.sqrt(S)*numpy.sqrt(_x0/(G - 1)) + G**2*eps)
    except ZeroDivisionError:  # Python numbers at a pole: as numpy's (inf or nan)
        with numpy.errstate(all="ignore"):
            return grpo_update_given_successes(numpy.asarray(S)[()], numpy.asarray(G)[()], numpy.asarray(eps)[()])


def dr_grpo_update_given_successes(S, G):
    """Dr. GRPO projected update of a group with S successes.

    docs/theory.md section 7. Exact finite-G statistics for Bernoulli rewards. Generated from the derivation ``dr_grpo_update_given_successes``.

    Parameters
    ----------
    S : array_like
        number of successes in a group [completions]
    G : array_like
        group size (completions per prompt) [completions]
    """
    try:
        return S*(G - S)/G**2
    except ZeroDivisionError:  # Python numbers at a pole: as numpy's (inf or nan)
        with numpy.errstate(all="ignore"):
            return dr_grpo_update_given_successes(numpy.asarray(S)[()], numpy.asarray(G)[()])


def rloo_update_given_successes(S, G):
    """RLOO projected update of a group with S successes.

    docs/theory.md section 7. Exact finite-G statistics for Bernoulli rewards. Generated from the derivation ``rloo_update_given_successes``.

    Parameters
    ----------
    S : array_like
        number of successes in a group [completions]
    G : array_like
        group size (completions per prompt) [completions]
    """
    try:
        return S*(G - S)/(G*(G - 1))
    except ZeroDivisionError:  # Python numbers at a pole: as numpy's (inf or nan)
        with numpy.errstate(all="ignore"):
            return rloo_update_given_successes(numpy.asarray(S)[()], numpy.asarray(G)[()])


def grpo_update_mean(G, p, eps):
    """Exact mean GRPO projected update: a finite sum over the binomial.

    docs/theory.md section 7. Exact finite-G statistics for Bernoulli rewards. Generated from the derivation ``grpo_update_mean``.

    Parameters
    ----------
    G : array_like
        group size (completions per prompt) [completions]
    p : array_like
        success probability of a prompt [dimensionless]
    eps : array_like
        epsilon added to the group std (TRL: 1e-4) [reward]

    Raises
    ------
    ValueError
        Outside the domain where this real-arithmetic form is the result:
        G <= 1024 and G is a whole number
    """
    with numpy.errstate(all="ignore"):  # arrays: 1/0 is inf, not an exception
        _inside = (lambda G: numpy.all(numpy.less_equal(G, 1024)) and numpy.all(numpy.equal(G - numpy.floor(G), 0)))(numpy.asarray(G, dtype=float))
    if not _inside:
        raise ValueError("grpo_update_mean: defined only where G <= 1024 and G is a whole number")
    try:
        return _finite_sum(lambda S: S*p**S*(1 - p)**(G - S)*(G - S)*_binomial(G, S)/(G**(3/2)*numpy.sqrt(S)*numpy.sqrt((G - S)/(G - 1)) + G**2*eps), 1, G - 1, (G, eps, p, ))
    except ZeroDivisionError:  # Python numbers at a pole: as numpy's (inf or nan)
        with numpy.errstate(all="ignore"):
            return grpo_update_mean(numpy.asarray(G)[()], numpy.asarray(p)[()], numpy.asarray(eps)[()])


def grpo_update_variance(G, p, eps):
    """Exact variance of the GRPO projected update (finite sums).

    docs/theory.md section 7. Exact finite-G statistics for Bernoulli rewards. Generated from the derivation ``grpo_update_variance``.

    Parameters
    ----------
    G : array_like
        group size (completions per prompt) [completions]
    p : array_like
        success probability of a prompt [dimensionless]
    eps : array_like
        epsilon added to the group std (TRL: 1e-4) [reward]

    Raises
    ------
    ValueError
        Outside the domain where this real-arithmetic form is the result:
        G <= 1024 and G is a whole number
    """
    with numpy.errstate(all="ignore"):  # arrays: 1/0 is inf, not an exception
        _inside = (lambda G: numpy.all(numpy.less_equal(G, 1024)) and numpy.all(numpy.equal(G - numpy.floor(G), 0)))(numpy.asarray(G, dtype=float))
    if not _inside:
        raise ValueError("grpo_update_variance: defined only where G <= 1024 and G is a whole number")
    try:
        return -_finite_sum(lambda S: S*p**S*(1 - p)**(G - S)*(G - S)*_binomial(G, S)/(G**(3/2)*numpy.sqrt(S)*numpy.sqrt((G - S)/(G - 1)) + G**2*eps), 1, G - 1, (G, eps, p, ))**2 + _finite_sum(lambda S: S**2*p**S*(1 - p)**(G - S)*(G - S)**2*_binomial(G, S)/(G**(3/2)*numpy.sqrt(S)*numpy.sqrt((G - S)/(G - 1)) + G**2*eps)**2, 1, G - 1, (G, eps, p, ))
    except ZeroDivisionError:  # Python numbers at a pole: as numpy's (inf or nan)
        with numpy.errstate(all="ignore"):
            return grpo_update_variance(numpy.asarray(G)[()], numpy.asarray(p)[()], numpy.asarray(eps)[()])


def dr_grpo_update_mean(G, p):
    """Exact mean Dr. GRPO projected update (closed form).

    docs/theory.md section 7. Exact finite-G statistics for Bernoulli rewards. Generated from the derivation ``dr_grpo_update_mean``.

    Parameters
    ----------
    G : array_like
        group size (completions per prompt) [completions]
    p : array_like
        success probability of a prompt [dimensionless]
    """
    try:
        return -p*(G - 1)*(p - 1)/G
    except ZeroDivisionError:  # Python numbers at a pole: as numpy's (inf or nan)
        with numpy.errstate(all="ignore"):
            return dr_grpo_update_mean(numpy.asarray(G)[()], numpy.asarray(p)[()])


def dr_grpo_update_variance(G, p):
    """Exact variance of the Dr. GRPO projected update (closed form).

    docs/theory.md section 7. Exact finite-G statistics for Bernoulli rewards. Generated from the derivation ``dr_grpo_update_variance``.

    Parameters
    ----------
    G : array_like
        group size (completions per prompt) [completions]
    p : array_like
        success probability of a prompt [dimensionless]
    """
    try:
        _x0 = G - 1
        _x1 = p**2
        _x2 = 4*G
        return -_x0*p*(p - 1)*(_x0 + _x1*_x2 - 6*_x1 - _x2*p + 6*p)/G**3
    except ZeroDivisionError:  # Python numbers at a pole: as numpy's (inf or nan)
        with numpy.errstate(all="ignore"):
            return dr_grpo_update_variance(numpy.asarray(G)[()], numpy.asarray(p)[()])


def rloo_update_mean(G, p):
    """Exact mean RLOO projected update (closed form).

    docs/theory.md section 7. Exact finite-G statistics for Bernoulli rewards. Generated from the derivation ``rloo_update_mean``.

    Parameters
    ----------
    G : array_like
        group size (completions per prompt) [completions]
    p : array_like
        success probability of a prompt [dimensionless]
    """
    try:
        return -p*(p - 1)
    except ZeroDivisionError:  # Python numbers at a pole: as numpy's (inf or nan)
        with numpy.errstate(all="ignore"):
            return rloo_update_mean(numpy.asarray(G)[()], numpy.asarray(p)[()])


def rloo_update_variance(G, p):
    """Exact variance of the RLOO projected update (closed form).

    docs/theory.md section 7. Exact finite-G statistics for Bernoulli rewards. Generated from the derivation ``rloo_update_variance``.

    Parameters
    ----------
    G : array_like
        group size (completions per prompt) [completions]
    p : array_like
        success probability of a prompt [dimensionless]
    """
    try:
        _x0 = G - 1
        _x1 = p**2
        _x2 = 4*G
        return -p*(p - 1)*(_x0 + _x1*_x2 - 6*_x1 - _x2*p + 6*p)/(G*_x0)
    except ZeroDivisionError:  # Python numbers at a pole: as numpy's (inf or nan)
        with numpy.errstate(all="ignore"):
            return rloo_update_variance(numpy.asarray(G)[()], numpy.asarray(p)[()])


def grpo_update_mean_expansion(G, p):
    """GRPO mean update to O(1/G) (eps = 0, degenerate groups neglected).

    docs/theory.md section 7. Exact finite-G statistics for Bernoulli rewards. Generated from the derivation ``grpo_update_mean_expansion``.

    Parameters
    ----------
    G : array_like
        group size (completions per prompt) [completions]
    p : array_like
        success probability of a prompt [dimensionless]

    Raises
    ------
    ValueError
        Outside the domain where this real-arithmetic form is the result:
        p > 0 and p < 1
    """
    with numpy.errstate(all="ignore"):  # arrays: 1/0 is inf, not an exception
        _inside = (lambda p: numpy.all(numpy.greater(p, 0)) and numpy.all(numpy.less(p, 1)))(numpy.asarray(p, dtype=float))
    if not _inside:
        raise ValueError("grpo_update_mean_expansion: defined only where p > 0 and p < 1")
    try:
        _x0 = p - 1
        _x1 = -_x0
        _x2 = _x1**2
        return (1/8)*(8*G*_x2*p - 2*_x0**2*p + _x0*p**2 - 3*_x2*p - _x2)/(G*_x1**(3/2)*numpy.sqrt(p))
    except ZeroDivisionError:  # Python numbers at a pole: as numpy's (inf or nan)
        with numpy.errstate(all="ignore"):
            return grpo_update_mean_expansion(numpy.asarray(G)[()], numpy.asarray(p)[()])


def grpo_update_variance_expansion(G, p):
    """GRPO update variance to O(1/G^2) (eps = 0).

    docs/theory.md section 7. Exact finite-G statistics for Bernoulli rewards. Generated from the derivation ``grpo_update_variance_expansion``.

    Parameters
    ----------
    G : array_like
        group size (completions per prompt) [completions]
    p : array_like
        success probability of a prompt [dimensionless]

    Raises
    ------
    ValueError
        Outside the domain where this real-arithmetic form is the result:
        p > 0 and p < 1
    """
    with numpy.errstate(all="ignore"):  # arrays: 1/0 is inf, not an exception
        _inside = (lambda p: numpy.all(numpy.greater(p, 0)) and numpy.all(numpy.less(p, 1)))(numpy.asarray(p, dtype=float))
    if not _inside:
        raise ValueError("grpo_update_variance_expansion: defined only where p > 0 and p < 1")
    try:
        _x0 = p**2
        _x1 = 64*p**3
        _x2 = 32*p**4
        return (1/32)*(G*(40*_x0 - _x1 + _x2 - 8*p) - 48*_x0 + _x1 - _x2 + 16*p - 3)/(G**2*p*(p - 1))
    except ZeroDivisionError:  # Python numbers at a pole: as numpy's (inf or nan)
        with numpy.errstate(all="ignore"):
            return grpo_update_variance_expansion(numpy.asarray(G)[()], numpy.asarray(p)[()])


def prompt_pool_mean_reward(a_p, b_p):
    """Expected batch reward of a Beta(a_p, b_p) pool of prompts.

    docs/theory.md section 7. Exact finite-G statistics for Bernoulli rewards: a Beta pool of prompts. Generated from the derivation ``prompt_pool_mean_reward``.

    Parameters
    ----------
    a_p : array_like
        first shape parameter of the Beta law of prompt success rates [dimensionless]
    b_p : array_like
        second shape parameter of the Beta law of prompt success rates [dimensionless]
    """
    try:
        return a_p/(a_p + b_p)
    except ZeroDivisionError:  # Python numbers at a pole: as numpy's (inf or nan)
        with numpy.errstate(all="ignore"):
            return prompt_pool_mean_reward(numpy.asarray(a_p)[()], numpy.asarray(b_p)[()])


def prompt_pool_zero_std_share(G, a_p, b_p):
    """Expected share of zero-std groups over a Beta(a_p, b_p) pool of prompts.

    docs/theory.md section 7. Exact finite-G statistics for Bernoulli rewards: a Beta pool of prompts. Generated from the derivation ``prompt_pool_zero_std_share``.

    Parameters
    ----------
    G : array_like
        group size (completions per prompt) [completions]
    a_p : array_like
        first shape parameter of the Beta law of prompt success rates [dimensionless]
    b_p : array_like
        second shape parameter of the Beta law of prompt success rates [dimensionless]

    Raises
    ------
    ValueError
        Outside the domain where this real-arithmetic form is the result:
        G <= 65536 and G is a whole number
    """
    with numpy.errstate(all="ignore"):  # arrays: 1/0 is inf, not an exception
        _inside = (lambda G: numpy.all(numpy.less_equal(G, 65536)) and numpy.all(numpy.equal(G - numpy.floor(G), 0)))(numpy.asarray(G, dtype=float))
    if not _inside:
        raise ValueError("prompt_pool_zero_std_share: defined only where G <= 65536 and G is a whole number")
    try:
        return numpy.exp(_finite_sum(lambda j: numpy.log(a_p + j) - numpy.log(a_p + b_p + j), 0, G - 1, (G, a_p, b_p, ))) + numpy.exp(_finite_sum(lambda j: numpy.log(b_p + j) - numpy.log(a_p + b_p + j), 0, G - 1, (G, a_p, b_p, )))
    except ZeroDivisionError:  # Python numbers at a pole: as numpy's (inf or nan)
        with numpy.errstate(all="ignore"):
            return prompt_pool_zero_std_share(numpy.asarray(G)[()], numpy.asarray(a_p)[()], numpy.asarray(b_p)[()])


def prompt_pool_failed_group_share(G, a_p, b_p):
    """Expected share of all-wrong groups over a Beta(a_p, b_p) pool.

    docs/theory.md section 7. Exact finite-G statistics for Bernoulli rewards: a Beta pool of prompts. Generated from the derivation ``prompt_pool_failed_group_share``.

    Parameters
    ----------
    G : array_like
        group size (completions per prompt) [completions]
    a_p : array_like
        first shape parameter of the Beta law of prompt success rates [dimensionless]
    b_p : array_like
        second shape parameter of the Beta law of prompt success rates [dimensionless]

    Raises
    ------
    ValueError
        Outside the domain where this real-arithmetic form is the result:
        G <= 65536 and G is a whole number
    """
    with numpy.errstate(all="ignore"):  # arrays: 1/0 is inf, not an exception
        _inside = (lambda G: numpy.all(numpy.less_equal(G, 65536)) and numpy.all(numpy.equal(G - numpy.floor(G), 0)))(numpy.asarray(G, dtype=float))
    if not _inside:
        raise ValueError("prompt_pool_failed_group_share: defined only where G <= 65536 and G is a whole number")
    try:
        return numpy.exp(_finite_sum(lambda j: numpy.log(b_p + j) - numpy.log(a_p + b_p + j), 0, G - 1, (G, a_p, b_p, )))
    except ZeroDivisionError:  # Python numbers at a pole: as numpy's (inf or nan)
        with numpy.errstate(all="ignore"):
            return prompt_pool_failed_group_share(numpy.asarray(G)[()], numpy.asarray(a_p)[()], numpy.asarray(b_p)[()])


def prompt_pool_within_group_variance(a_p, b_p):
    """Expected unbiased within-group reward variance over a Beta pool (E[p (1-p)]).

    docs/theory.md section 7. Exact finite-G statistics for Bernoulli rewards: a Beta pool of prompts. Generated from the derivation ``prompt_pool_within_group_variance``.

    Parameters
    ----------
    a_p : array_like
        first shape parameter of the Beta law of prompt success rates [dimensionless]
    b_p : array_like
        second shape parameter of the Beta law of prompt success rates [dimensionless]
    """
    try:
        _x0 = a_p + b_p
        return a_p*b_p/(_x0*(_x0 + 1))
    except ZeroDivisionError:  # Python numbers at a pole: as numpy's (inf or nan)
        with numpy.errstate(all="ignore"):
            return prompt_pool_within_group_variance(numpy.asarray(a_p)[()], numpy.asarray(b_p)[()])


def prompt_pool_batch_variance(B, G, a_p, b_p):
    """Expected unbiased variance of all rewards of a step (B prompts, G completions each) over a Beta pool.

    docs/theory.md section 7. Exact finite-G statistics for Bernoulli rewards: a Beta pool of prompts. Generated from the derivation ``prompt_pool_batch_variance``.

    Parameters
    ----------
    B : array_like
        prompts per step [prompts]
    G : array_like
        group size (completions per prompt) [completions]
    a_p : array_like
        first shape parameter of the Beta law of prompt success rates [dimensionless]
    b_p : array_like
        second shape parameter of the Beta law of prompt success rates [dimensionless]
    """
    try:
        _x0 = a_p + b_p
        _x1 = B*G
        return a_p*b_p*(-G + _x1*a_p + _x1*b_p + _x1 - a_p - b_p)/(_x0**2*(_x0 + 1)*(_x1 - 1))
    except ZeroDivisionError:  # Python numbers at a pole: as numpy's (inf or nan)
        with numpy.errstate(all="ignore"):
            return prompt_pool_batch_variance(numpy.asarray(B)[()], numpy.asarray(G)[()], numpy.asarray(a_p)[()], numpy.asarray(b_p)[()])


def prompt_pool_entropy_ratio_bound(r0, r1):
    """Smallest ratio of the answer entropy at mean reward r_1 to that at r_0 for a Beta pool whose spread phi is kept.

    docs/theory.md section 7. Exact finite-G statistics for Bernoulli rewards: a Beta pool of prompts. Generated from the derivation ``prompt_pool_entropy_ratio_bound``.

    Parameters
    ----------
    r0 : array_like
        initial expected reward [reward]
    r1 : array_like
        expected reward at a later window of steps [reward]
    """
    try:
        _x0 = 1 - r1
        _x1 = 1 - r0
        _x2 = _x0*r1/(_x1*r0)
        _x3 = (-_x0*numpy.log(_x0) - r1*numpy.log(r1))/(-_x1*numpy.log(_x1) - r0*numpy.log(r0))
        return (1/2)*_x2 + (1/2)*_x3 - 1/2*abs(_x2 - _x3)
    except ZeroDivisionError:  # Python numbers at a pole: as numpy's (inf or nan)
        with numpy.errstate(all="ignore"):
            return prompt_pool_entropy_ratio_bound(numpy.asarray(r0)[()], numpy.asarray(r1)[()])


def grpo_top_advantage(S, G, eps):
    """Advantage of a right answer in a binary group with S of G right (unbiased std plus eps, as verl and TRL).

    docs/theory.md section 7. Exact finite-G statistics for Bernoulli rewards: a Beta pool of prompts. Generated from the derivation ``grpo_top_advantage``.

    Parameters
    ----------
    S : array_like
        number of successes in a group [completions]
    G : array_like
        group size (completions per prompt) [completions]
    eps : array_like
        epsilon added to the group std (TRL: 1e-4) [reward]
    """
    try:
        return (1 - S/G)/(eps + numpy.sqrt(S)*numpy.sqrt((G - S)/(G - 1))/numpy.sqrt(G))
    except ZeroDivisionError:  # Python numbers at a pole: as numpy's (inf or nan)
        with numpy.errstate(all="ignore"):
            return grpo_top_advantage(numpy.asarray(S)[()], numpy.asarray(G)[()], numpy.asarray(eps)[()])


def grpo_bottom_advantage(S, G, eps):
    """Advantage of a wrong answer in a binary group with S of G right (unbiased std plus eps, as verl and TRL).

    docs/theory.md section 7. Exact finite-G statistics for Bernoulli rewards: a Beta pool of prompts. Generated from the derivation ``grpo_bottom_advantage``.

    Parameters
    ----------
    S : array_like
        number of successes in a group [completions]
    G : array_like
        group size (completions per prompt) [completions]
    eps : array_like
        epsilon added to the group std (TRL: 1e-4) [reward]
    """
    try:
        return -S/(G*(eps + numpy.sqrt(S)*numpy.sqrt((G - S)/(G - 1))/numpy.sqrt(G)))
    except ZeroDivisionError:  # Python numbers at a pole: as numpy's (inf or nan)
        with numpy.errstate(all="ignore"):
            return grpo_bottom_advantage(numpy.asarray(S)[()], numpy.asarray(G)[()], numpy.asarray(eps)[()])


def prompt_pool_successes_pmf(S, G, a_p, b_p):
    """Probability of S successes in a group of G over a Beta(a_p, b_p) pool (Beta-binomial).

    docs/theory.md section 7. Exact finite-G statistics for Bernoulli rewards: a Beta pool of prompts. Generated from the derivation ``prompt_pool_successes_pmf``.

    Parameters
    ----------
    S : array_like
        number of successes in a group [completions]
    G : array_like
        group size (completions per prompt) [completions]
    a_p : array_like
        first shape parameter of the Beta law of prompt success rates [dimensionless]
    b_p : array_like
        second shape parameter of the Beta law of prompt success rates [dimensionless]

    Raises
    ------
    ValueError
        Outside the domain where this real-arithmetic form is the result:
        G <= 1024 and G is a whole number and S is a whole number
    """
    with numpy.errstate(all="ignore"):  # arrays: 1/0 is inf, not an exception
        _inside = (lambda G, S: numpy.all(numpy.less_equal(G, 1024)) and numpy.all(numpy.equal(G - numpy.floor(G), 0)) and numpy.all(numpy.equal(S - numpy.floor(S), 0)))(numpy.asarray(G, dtype=float), numpy.asarray(S, dtype=float))
    if not _inside:
        raise ValueError("prompt_pool_successes_pmf: defined only where G <= 1024 and G is a whole number and S is a whole number")
    try:
        return numpy.exp(_finite_sum(lambda j: numpy.log(a_p + j), 0, S - 1, (S, a_p, )) + _finite_sum(lambda j: numpy.log(b_p + j), 0, G - S - 1, (G, S, b_p, )) - _finite_sum(lambda j: numpy.log(a_p + b_p + j), 0, G - 1, (G, a_p, b_p, )))*_binomial(G, S)
    except ZeroDivisionError:  # Python numbers at a pole: as numpy's (inf or nan)
        with numpy.errstate(all="ignore"):
            return prompt_pool_successes_pmf(numpy.asarray(S)[()], numpy.asarray(G)[()], numpy.asarray(a_p)[()], numpy.asarray(b_p)[()])


def prompt_pool_batch_extremes_within(B, q_in):
    """Probability that every group with spread of a step has between S_lo and S_hi successes, from the chance q_in of one group.

    docs/theory.md section 7. Exact finite-G statistics for Bernoulli rewards: a Beta pool of prompts. Generated from the derivation ``prompt_pool_batch_extremes_within``.

    Parameters
    ----------
    B : array_like
        prompts per step [prompts]
    q_in : array_like
        probability that a group has no spread or between S_lo and S_hi successes [dimensionless]
    """
    try:
        return q_in**B
    except ZeroDivisionError:  # Python numbers at a pole: as numpy's (inf or nan)
        with numpy.errstate(all="ignore"):
            return prompt_pool_batch_extremes_within(numpy.asarray(B)[()], numpy.asarray(q_in)[()])


def prompt_pool_step_change_variance(B, G, N_p, sigma_r2, w_r):
    """Half the variance of the change of the step reward (B prompts dealt by epochs from N_p, G answers each).

    docs/theory.md section 7. Exact finite-G statistics for Bernoulli rewards: a Beta pool of prompts. Generated from the derivation ``prompt_pool_step_change_variance``.

    Parameters
    ----------
    B : array_like
        prompts per step [prompts]
    G : array_like
        group size (completions per prompt) [completions]
    N_p : array_like
        prompts in the dataset a trainer deals its batches from [prompts]
    sigma_r2 : array_like
        between-prompt variance of the success rates Var_i(p_i) [reward^2]
    w_r : array_like
        mean within-prompt Bernoulli variance E_i[p_i (1 - p_i)] [reward^2]
    """
    try:
        _x0 = B**(-1.0)
        return -_x0*sigma_r2*(B - N_p)*(B + N_p)/(N_p*(N_p - 1)) + _x0*w_r/G
    except ZeroDivisionError:  # Python numbers at a pole: as numpy's (inf or nan)
        with numpy.errstate(all="ignore"):
            return prompt_pool_step_change_variance(numpy.asarray(B)[()], numpy.asarray(G)[()], numpy.asarray(N_p)[()], numpy.asarray(sigma_r2)[()], numpy.asarray(w_r)[()])


def prompt_pool_between_share(x_r, G, B, N_p):
    """Share of the reward's variance between prompts, from half the variance of its step changes (prompts dealt by epochs).

    docs/theory.md section 7. Exact finite-G statistics for Bernoulli rewards: a Beta pool of prompts. Generated from the derivation ``prompt_pool_between_share``.

    Parameters
    ----------
    x_r : array_like
        half the variance of the step reward's change over m (1 - m) / B [dimensionless]
    G : array_like
        group size (completions per prompt) [completions]
    B : array_like
        prompts per step [prompts]
    N_p : array_like
        prompts in the dataset a trainer deals its batches from [prompts]
    """
    try:
        _x0 = N_p**2
        return -N_p*(N_p - 1)*(G*x_r - 1)/(B**2*G - G*_x0 - N_p + _x0)
    except ZeroDivisionError:  # Python numbers at a pole: as numpy's (inf or nan)
        with numpy.errstate(all="ignore"):
            return prompt_pool_between_share(numpy.asarray(x_r)[()], numpy.asarray(G)[()], numpy.asarray(B)[()], numpy.asarray(N_p)[()])


def bandit_success_probability(x):
    """Probability of the rewarded arm, p = sigmoid(x).

    docs/theory.md section 8. The softmax bandit. Generated from the derivation ``bandit_success_probability``.

    Parameters
    ----------
    x : array_like
        logit gap of the two-arm bandit [nats]
    """
    try:
        _x0 = numpy.exp(x)
        return _x0/(_x0 + 1)
    except ZeroDivisionError:  # Python numbers at a pole: as numpy's (inf or nan)
        with numpy.errstate(all="ignore"):
            return bandit_success_probability(numpy.asarray(x)[()])


def bandit_drift_grpo(x, G, eps):
    """Drift of the logit gap per unit step, grpo estimator (no KL).

    docs/theory.md section 8. The softmax bandit. Generated from the derivation ``bandit_drift_grpo``.

    Parameters
    ----------
    x : array_like
        logit gap of the two-arm bandit [nats]
    G : array_like
        group size (completions per prompt) [completions]
    eps : array_like
        epsilon added to the group std (TRL: 1e-4) [reward]

    Raises
    ------
    ValueError
        Outside the domain where this real-arithmetic form is the result:
        G <= 1024 and G is a whole number
    """
    with numpy.errstate(all="ignore"):  # arrays: 1/0 is inf, not an exception
        _inside = (lambda G: numpy.all(numpy.less_equal(G, 1024)) and numpy.all(numpy.equal(G - numpy.floor(G), 0)))(numpy.asarray(G, dtype=float))
    if not _inside:
        raise ValueError("bandit_drift_grpo: defined only where G <= 1024 and G is a whole number")
    try:
        return _finite_sum(lambda S: S*(numpy.exp(x)/(numpy.exp(x) + 1))**S*(1 - numpy.exp(x)/(numpy.exp(x) + 1))**(G - S)*(G - S)*_binomial(G, S)/(G**(3/2)*numpy.sqrt(S)*numpy.sqrt((G - S)/(G - 1)) + G**2*eps), 1, G - 1, (G, eps, x, ))
    except ZeroDivisionError:  # Python numbers at a pole: as numpy's (inf or nan)
        with numpy.errstate(all="ignore"):
            return bandit_drift_grpo(numpy.asarray(x)[()], numpy.asarray(G)[()], numpy.asarray(eps)[()])


def bandit_drift_dr_grpo(x, G):
    """Drift of the logit gap per unit step, dr_grpo estimator (no KL).

    docs/theory.md section 8. The softmax bandit. Generated from the derivation ``bandit_drift_dr_grpo``.

    Parameters
    ----------
    x : array_like
        logit gap of the two-arm bandit [nats]
    G : array_like
        group size (completions per prompt) [completions]
    """
    try:
        _x0 = numpy.exp(x)
        _x1 = (_x0 + 1)**(-1.0)
        return -_x0*_x1*(G - 1)*(_x0*_x1 - 1)/G
    except ZeroDivisionError:  # Python numbers at a pole: as numpy's (inf or nan)
        with numpy.errstate(all="ignore"):
            return bandit_drift_dr_grpo(numpy.asarray(x)[()], numpy.asarray(G)[()])


def bandit_drift_rloo(x, G):
    """Drift of the logit gap per unit step, rloo estimator (no KL).

    docs/theory.md section 8. The softmax bandit. Generated from the derivation ``bandit_drift_rloo``.

    Parameters
    ----------
    x : array_like
        logit gap of the two-arm bandit [nats]
    G : array_like
        group size (completions per prompt) [completions]
    """
    try:
        _x0 = numpy.exp(x)
        _x1 = (_x0 + 1)**(-1.0)
        return -_x0*_x1*(_x0*_x1 - 1)
    except ZeroDivisionError:  # Python numbers at a pole: as numpy's (inf or nan)
        with numpy.errstate(all="ignore"):
            return bandit_drift_rloo(numpy.asarray(x)[()], numpy.asarray(G)[()])


def bandit_drift_slope_grpo(x, G, eps):
    """dF/dx of the grpo drift (analytic; kappa = -slope at x*).

    docs/theory.md section 8. The softmax bandit. Generated from the derivation ``bandit_drift_slope_grpo``.

    Parameters
    ----------
    x : array_like
        logit gap of the two-arm bandit [nats]
    G : array_like
        group size (completions per prompt) [completions]
    eps : array_like
        epsilon added to the group std (TRL: 1e-4) [reward]

    Raises
    ------
    ValueError
        Outside the domain where this real-arithmetic form is the result:
        G <= 1024 and G is a whole number
    """
    with numpy.errstate(all="ignore"):  # arrays: 1/0 is inf, not an exception
        _inside = (lambda G: numpy.all(numpy.less_equal(G, 1024)) and numpy.all(numpy.equal(G - numpy.floor(G), 0)))(numpy.asarray(G, dtype=float))
    if not _inside:
        raise ValueError("bandit_drift_slope_grpo: defined only where G <= 1024 and G is a whole number")
    try:
        return _finite_sum(lambda S: S**2*(numpy.exp(x)/(numpy.exp(x) + 1))**S*(1 - numpy.exp(x)/(numpy.exp(x) + 1))**(G - S)*(G - S)*(numpy.exp(x)/(numpy.exp(x) + 1) - numpy.exp(2*x)/(numpy.exp(x) + 1)**2)*(numpy.exp(x) + 1)*numpy.exp(-x)*_binomial(G, S)/(G**(3/2)*numpy.sqrt(S)*numpy.sqrt((G - S)/(G - 1)) + G**2*eps) + S*(numpy.exp(x)/(numpy.exp(x) + 1))**S*(1 - numpy.exp(x)/(numpy.exp(x) + 1))**(G - S)*(G - S)**2*(-numpy.exp(x)/(numpy.exp(x) + 1) + numpy.exp(2*x)/(numpy.exp(x) + 1)**2)*_binomial(G, S)/((1 - numpy.exp(x)/(numpy.exp(x) + 1))*(G**(3/2)*numpy.sqrt(S)*numpy.sqrt((G - S)/(G - 1)) + G**2*eps)), 1, G - 1, (G, eps, x, ))
    except ZeroDivisionError:  # Python numbers at a pole: as numpy's (inf or nan)
        with numpy.errstate(all="ignore"):
            return bandit_drift_slope_grpo(numpy.asarray(x)[()], numpy.asarray(G)[()], numpy.asarray(eps)[()])


def bandit_drift_slope_dr_grpo(x, G):
    """dF/dx of the dr_grpo drift (analytic; kappa = -slope at x*).

    docs/theory.md section 8. The softmax bandit. Generated from the derivation ``bandit_drift_slope_dr_grpo``.

    Parameters
    ----------
    x : array_like
        logit gap of the two-arm bandit [nats]
    G : array_like
        group size (completions per prompt) [completions]
    """
    try:
        _x0 = numpy.exp(x)
        return _x0*(-G*_x0 + G + _x0 - 1)/(G*(3*_x0 + numpy.exp(3*x) + 3*numpy.exp(2*x) + 1))
    except ZeroDivisionError:  # Python numbers at a pole: as numpy's (inf or nan)
        with numpy.errstate(all="ignore"):
            return bandit_drift_slope_dr_grpo(numpy.asarray(x)[()], numpy.asarray(G)[()])


def bandit_drift_slope_rloo(x, G):
    """dF/dx of the rloo drift (analytic; kappa = -slope at x*).

    docs/theory.md section 8. The softmax bandit. Generated from the derivation ``bandit_drift_slope_rloo``.

    Parameters
    ----------
    x : array_like
        logit gap of the two-arm bandit [nats]
    G : array_like
        group size (completions per prompt) [completions]
    """
    try:
        _x0 = numpy.exp(x)
        return _x0*(1 - _x0)/(_x0 + 1)**3
    except ZeroDivisionError:  # Python numbers at a pole: as numpy's (inf or nan)
        with numpy.errstate(all="ignore"):
            return bandit_drift_slope_rloo(numpy.asarray(x)[()], numpy.asarray(G)[()])


def bandit_kl_gradient_forward(x, x_ref):
    """Gradient of the exact KL(pi || pi_ref) in the logit gap.

    docs/theory.md section 8. The softmax bandit. Generated from the derivation ``bandit_kl_gradient_forward``.

    Parameters
    ----------
    x : array_like
        logit gap of the two-arm bandit [nats]
    x_ref : array_like
        logit gap of the reference policy [nats]
    """
    try:
        _x0 = numpy.exp(x)
        _x1 = _x0/(_x0 + 1)
        return _x1*(1 - _x1)*(x - x_ref)
    except ZeroDivisionError:  # Python numbers at a pole: as numpy's (inf or nan)
        with numpy.errstate(all="ignore"):
            return bandit_kl_gradient_forward(numpy.asarray(x)[()], numpy.asarray(x_ref)[()])


def bandit_kl_gradient_k3(x, x_ref):
    """Expected gradient of TRL's k3 KL estimator: that of KL(pi_ref || pi).

    docs/theory.md section 8. The softmax bandit. Generated from the derivation ``bandit_kl_gradient_k3``.

    Parameters
    ----------
    x : array_like
        logit gap of the two-arm bandit [nats]
    x_ref : array_like
        logit gap of the reference policy [nats]
    """
    try:
        _x0 = numpy.exp(x)
        _x1 = numpy.exp(x_ref)
        return (_x0 - _x1)/(_x0 + _x1 + numpy.exp(x + x_ref) + 1)
    except ZeroDivisionError:  # Python numbers at a pole: as numpy's (inf or nan)
        with numpy.errstate(all="ignore"):
            return bandit_kl_gradient_k3(numpy.asarray(x)[()], numpy.asarray(x_ref)[()])


def bandit_kl_slope_forward(x, x_ref):
    """d/dx of the forward KL gradient (its stiffness).

    docs/theory.md section 8. The softmax bandit. Generated from the derivation ``bandit_kl_slope_forward``.

    Parameters
    ----------
    x : array_like
        logit gap of the two-arm bandit [nats]
    x_ref : array_like
        logit gap of the reference policy [nats]
    """
    try:
        _x0 = numpy.exp(x)
        return _x0*(-_x0*x + _x0*x_ref + _x0 + x - x_ref + 1)/(3*_x0 + numpy.exp(3*x) + 3*numpy.exp(2*x) + 1)
    except ZeroDivisionError:  # Python numbers at a pole: as numpy's (inf or nan)
        with numpy.errstate(all="ignore"):
            return bandit_kl_slope_forward(numpy.asarray(x)[()], numpy.asarray(x_ref)[()])


def bandit_kl_slope_k3(x, x_ref):
    """d/dx of the k3 KL gradient (its stiffness).

    docs/theory.md section 8. The softmax bandit. Generated from the derivation ``bandit_kl_slope_k3``.

    Parameters
    ----------
    x : array_like
        logit gap of the two-arm bandit [nats]
    x_ref : array_like
        logit gap of the reference policy [nats]
    """
    try:
        _x0 = numpy.exp(x)
        return _x0/(2*_x0 + numpy.exp(2*x) + 1)
    except ZeroDivisionError:  # Python numbers at a pole: as numpy's (inf or nan)
        with numpy.errstate(all="ignore"):
            return bandit_kl_slope_k3(numpy.asarray(x)[()], numpy.asarray(x_ref)[()])


def bandit_reuse_factor(x, x_old):
    """Ratio of the importance-corrected gradient to the drift at x_old.

    docs/theory.md section 8. The softmax bandit. Generated from the derivation ``bandit_reuse_factor``.

    Parameters
    ----------
    x : array_like
        logit gap of the two-arm bandit [nats]
    x_old : array_like
        logit gap of the sampling policy (last refresh) [nats]
    """
    try:
        _x0 = numpy.exp(x)
        return (_x0 + numpy.exp(x + x_old))*(numpy.exp(x_old) + 1)*numpy.exp(-x_old)/(_x0 + 1)**2
    except ZeroDivisionError:  # Python numbers at a pole: as numpy's (inf or nan)
        with numpy.errstate(all="ignore"):
            return bandit_reuse_factor(numpy.asarray(x)[()], numpy.asarray(x_old)[()])


def adam_effective_step(eta, beta1, v_hat):
    """Adam's effective heavy-ball step eta (1-beta1)/sqrt(v_hat).

    docs/theory.md section 9. Adam and schedules. Generated from the derivation ``adam_effective_step``.

    Parameters
    ----------
    eta : array_like
        learning rate [parameter/gradient]
    beta1 : array_like
        Adam first-moment decay [dimensionless]
    v_hat : array_like
        Adam second-moment estimate [gradient^2]
    """
    try:
        return -eta*(beta1 - 1)/numpy.sqrt(v_hat)
    except ZeroDivisionError:  # Python numbers at a pole: as numpy's (inf or nan)
        with numpy.errstate(all="ignore"):
            return adam_effective_step(numpy.asarray(eta)[()], numpy.asarray(beta1)[()], numpy.asarray(v_hat)[()])


def adam_bias_corrected_step(n, eta, beta1, v_hat):
    """Bias-corrected Adam weight of the newest gradient: eta/sqrt(v_hat) at n=1, so no zero-momentum slow start.

    docs/theory.md section 9. Adam and schedules. Generated from the derivation ``adam_bias_corrected_step``.

    Parameters
    ----------
    n : array_like
        optimizer step (discrete time) [steps]
    eta : array_like
        learning rate [parameter/gradient]
    beta1 : array_like
        Adam first-moment decay [dimensionless]
    v_hat : array_like
        Adam second-moment estimate [gradient^2]
    """
    try:
        return -eta*(beta1 - 1)/(numpy.sqrt(v_hat)*(1 - beta1**n))
    except ZeroDivisionError:  # Python numbers at a pole: as numpy's (inf or nan)
        with numpy.errstate(all="ignore"):
            return adam_bias_corrected_step(numpy.asarray(n)[()], numpy.asarray(eta)[()], numpy.asarray(beta1)[()], numpy.asarray(v_hat)[()])


def adam_second_moment(g_mean, sigma_g2, B, G):
    """Adam's second moment: mean gradient squared plus the 1/(B G) noise.

    docs/theory.md section 9. Adam and schedules. Generated from the derivation ``adam_second_moment``.

    Parameters
    ----------
    g_mean : array_like
        mean of the projected gradient [gradient]
    sigma_g2 : array_like
        per-completion variance of the projected gradient [gradient^2]
    B : array_like
        prompts per step [prompts]
    G : array_like
        group size (completions per prompt) [completions]
    """
    try:
        return g_mean**2 + sigma_g2/(B*G)
    except ZeroDivisionError:  # Python numbers at a pole: as numpy's (inf or nan)
        with numpy.errstate(all="ignore"):
            return adam_second_moment(numpy.asarray(g_mean)[()], numpy.asarray(sigma_g2)[()], numpy.asarray(B)[()], numpy.asarray(G)[()])


def adam_stiffness(eta, beta1, kappa, g_mean, sigma_g2, B, G):
    """Adam stiffness eta (1-beta1) kappa / sqrt(g^2 + sigma^2/(B G)).

    docs/theory.md section 9. Adam and schedules. Generated from the derivation ``adam_stiffness``.

    Parameters
    ----------
    eta : array_like
        learning rate [parameter/gradient]
    beta1 : array_like
        Adam first-moment decay [dimensionless]
    kappa : array_like
        curvature scale: slope of the projected drift [gradient/reward]
    g_mean : array_like
        mean of the projected gradient [gradient]
    sigma_g2 : array_like
        per-completion variance of the projected gradient [gradient^2]
    B : array_like
        prompts per step [prompts]
    G : array_like
        group size (completions per prompt) [completions]
    """
    try:
        return -eta*kappa*(beta1 - 1)/numpy.sqrt(g_mean**2 + sigma_g2/(B*G))
    except ZeroDivisionError:  # Python numbers at a pole: as numpy's (inf or nan)
        with numpy.errstate(all="ignore"):
            return adam_stiffness(numpy.asarray(eta)[()], numpy.asarray(beta1)[()], numpy.asarray(kappa)[()], numpy.asarray(g_mean)[()], numpy.asarray(sigma_g2)[()], numpy.asarray(B)[()], numpy.asarray(G)[()])


def adam_stiffness_noise_ratio(eta, beta1, kappa_A, rho_A, B, G):
    """Adam stiffness eta (1-beta1) kappa_A / sqrt(1 + rho_A/(B G)): depends on G and B only through B G.

    docs/theory.md section 9. Adam and schedules. Generated from the derivation ``adam_stiffness_noise_ratio``.

    Parameters
    ----------
    eta : array_like
        learning rate [parameter/gradient]
    beta1 : array_like
        Adam first-moment decay [dimensionless]
    kappa_A : array_like
        Adam-normalised curvature kappa / |g_mean| [1/reward]
    rho_A : array_like
        Adam noise ratio sigma_g^2 / g_mean^2 (per completion) [completions]
    B : array_like
        prompts per step [prompts]
    G : array_like
        group size (completions per prompt) [completions]
    """
    try:
        return eta*kappa_A*(1 - beta1)/numpy.sqrt(1 + rho_A/(B*G))
    except ZeroDivisionError:  # Python numbers at a pole: as numpy's (inf or nan)
        with numpy.errstate(all="ignore"):
            return adam_stiffness_noise_ratio(numpy.asarray(eta)[()], numpy.asarray(beta1)[()], numpy.asarray(kappa_A)[()], numpy.asarray(rho_A)[()], numpy.asarray(B)[()], numpy.asarray(G)[()])


def adam_stiffness_signal_limit(eta, beta1, kappa_A):
    """Signal-dominated Adam: k = eta (1-beta1) kappa_A, independent of G and B (the reference paper's G-invariance).

    docs/theory.md section 9. Adam and schedules. Generated from the derivation ``adam_stiffness_signal_limit``.

    Parameters
    ----------
    eta : array_like
        learning rate [parameter/gradient]
    beta1 : array_like
        Adam first-moment decay [dimensionless]
    kappa_A : array_like
        Adam-normalised curvature kappa / |g_mean| [1/reward]
    """
    try:
        return eta*kappa_A*(1 - beta1)
    except ZeroDivisionError:  # Python numbers at a pole: as numpy's (inf or nan)
        with numpy.errstate(all="ignore"):
            return adam_stiffness_signal_limit(numpy.asarray(eta)[()], numpy.asarray(beta1)[()], numpy.asarray(kappa_A)[()])


def adam_stiffness_noise_limit(eta, beta1, kappa_A, rho_A, B, G):
    """Noise-dominated Adam: the effective step grows like sqrt(B G / rho_A).

    docs/theory.md section 9. Adam and schedules. Generated from the derivation ``adam_stiffness_noise_limit``.

    Parameters
    ----------
    eta : array_like
        learning rate [parameter/gradient]
    beta1 : array_like
        Adam first-moment decay [dimensionless]
    kappa_A : array_like
        Adam-normalised curvature kappa / |g_mean| [1/reward]
    rho_A : array_like
        Adam noise ratio sigma_g^2 / g_mean^2 (per completion) [completions]
    B : array_like
        prompts per step [prompts]
    G : array_like
        group size (completions per prompt) [completions]
    """
    try:
        return numpy.sqrt(B)*numpy.sqrt(G)*eta*kappa_A*(1 - beta1)/numpy.sqrt(rho_A)
    except ZeroDivisionError:  # Python numbers at a pole: as numpy's (inf or nan)
        with numpy.errstate(all="ignore"):
            return adam_stiffness_noise_limit(numpy.asarray(eta)[()], numpy.asarray(beta1)[()], numpy.asarray(kappa_A)[()], numpy.asarray(rho_A)[()], numpy.asarray(B)[()], numpy.asarray(G)[()])


def adam_stiffness_bg_exponent(rho_A, B, G):
    """Local exponent of B G in Adam's stiffness: from 1/2 (noise) to 0 (signal).

    docs/theory.md section 9. Adam and schedules. Generated from the derivation ``adam_stiffness_bg_exponent``.

    Parameters
    ----------
    rho_A : array_like
        Adam noise ratio sigma_g^2 / g_mean^2 (per completion) [completions]
    B : array_like
        prompts per step [prompts]
    G : array_like
        group size (completions per prompt) [completions]
    """
    try:
        return (1/2)*rho_A/(B*G + rho_A)
    except ZeroDivisionError:  # Python numbers at a pole: as numpy's (inf or nan)
        with numpy.errstate(all="ignore"):
            return adam_stiffness_bg_exponent(numpy.asarray(rho_A)[()], numpy.asarray(B)[()], numpy.asarray(G)[()])


def adam_relaxation_time(eta, kappa_A, rho_A, B, G):
    """Overdamped Adam relaxation time sqrt(1 + rho_A/(B G)) / (eta kappa_A).

    docs/theory.md section 9. Adam and schedules. Generated from the derivation ``adam_relaxation_time``.

    Parameters
    ----------
    eta : array_like
        learning rate [parameter/gradient]
    kappa_A : array_like
        Adam-normalised curvature kappa / |g_mean| [1/reward]
    rho_A : array_like
        Adam noise ratio sigma_g^2 / g_mean^2 (per completion) [completions]
    B : array_like
        prompts per step [prompts]
    G : array_like
        group size (completions per prompt) [completions]
    """
    try:
        return numpy.sqrt(1 + rho_A/(B*G))/(eta*kappa_A)
    except ZeroDivisionError:  # Python numbers at a pole: as numpy's (inf or nan)
        with numpy.errstate(all="ignore"):
            return adam_relaxation_time(numpy.asarray(eta)[()], numpy.asarray(kappa_A)[()], numpy.asarray(rho_A)[()], numpy.asarray(B)[()], numpy.asarray(G)[()])


def adam_tau_lr_exponent():
    """Exponent of the learning rate in Adam's relaxation time: -1.

    docs/theory.md section 9. Adam and schedules. Generated from the derivation ``adam_tau_lr_exponent``.
    """
    try:
        return -1
    except ZeroDivisionError:  # Python numbers at a pole: as numpy's (inf or nan)
        with numpy.errstate(all="ignore"):
            return adam_tau_lr_exponent()


def finite_group_drift_factor(G, p):
    """Share of informative (non-degenerate) groups at success probability p: the finite-G factor on the drift.

    docs/theory.md section 9. Adam and schedules. Generated from the derivation ``finite_group_drift_factor``.

    Parameters
    ----------
    G : array_like
        group size (completions per prompt) [completions]
    p : array_like
        success probability of a prompt [dimensionless]
    """
    try:
        with numpy.errstate(all="ignore"):  # only the selected branch counts
            return numpy.asarray(numpy.where(numpy.less_equal(p, 1/2), -p**G - numpy.expm1(G*numpy.log1p(-p)), -(1 - p)**G - numpy.expm1(G*numpy.log(p))))[()]
    except ZeroDivisionError:  # Python numbers at a pole: as numpy's (inf or nan)
        with numpy.errstate(all="ignore"):
            return finite_group_drift_factor(numpy.asarray(G)[()], numpy.asarray(p)[()])


def sgd_stiffness_finite_group(eta, kappa, G, p):
    """SGD stiffness with the finite-G drift factor: eta kappa (1 - p^G - (1-p)^G); kappa is the curvature per informative group.

    docs/theory.md section 9. Adam and schedules. Generated from the derivation ``sgd_stiffness_finite_group``.

    Parameters
    ----------
    eta : array_like
        learning rate [parameter/gradient]
    kappa : array_like
        curvature scale: slope of the projected drift [gradient/reward]
    G : array_like
        group size (completions per prompt) [completions]
    p : array_like
        success probability of a prompt [dimensionless]
    """
    try:
        with numpy.errstate(all="ignore"):  # only the selected branch counts
            return numpy.asarray(eta*kappa*numpy.where(numpy.less_equal(p, 1/2), -p**G - numpy.expm1(G*numpy.log1p(-p)), -(1 - p)**G - numpy.expm1(G*numpy.log(p))))[()]
    except ZeroDivisionError:  # Python numbers at a pole: as numpy's (inf or nan)
        with numpy.errstate(all="ignore"):
            return sgd_stiffness_finite_group(numpy.asarray(eta)[()], numpy.asarray(kappa)[()], numpy.asarray(G)[()], numpy.asarray(p)[()])


def adam_stiffness_finite_group(eta, beta1, kappa_A, rho_A, B, G, p):
    """Adam stiffness with the finite-G drift factor D = 1 - p^G - (1-p)^G: eta (1-beta1) kappa_A sqrt(D / (D + rho_A/(B G))).

    docs/theory.md section 9. Adam and schedules. Generated from the derivation ``adam_stiffness_finite_group``.

    Parameters
    ----------
    eta : array_like
        learning rate [parameter/gradient]
    beta1 : array_like
        Adam first-moment decay [dimensionless]
    kappa_A : array_like
        Adam-normalised curvature kappa / |g_mean| [1/reward]
    rho_A : array_like
        Adam noise ratio sigma_g^2 / g_mean^2 (per completion) [completions]
    B : array_like
        prompts per step [prompts]
    G : array_like
        group size (completions per prompt) [completions]
    p : array_like
        success probability of a prompt [dimensionless]
    """
    try:
        with numpy.errstate(all="ignore"):  # only the selected branch counts
            _x0 = -p**G - numpy.expm1(G*numpy.log1p(-p))
            _x1 = numpy.less_equal(p, 1/2)
            _x2 = -(1 - p)**G - numpy.expm1(G*numpy.log(p))
            return numpy.asarray(eta*kappa_A*(1 - beta1)*numpy.where(_x1, numpy.sqrt(_x0), numpy.sqrt(_x2))/numpy.sqrt(numpy.where(_x1, _x0, _x2) + rho_A/(B*G)))[()]
    except ZeroDivisionError:  # Python numbers at a pole: as numpy's (inf or nan)
        with numpy.errstate(all="ignore"):
            return adam_stiffness_finite_group(numpy.asarray(eta)[()], numpy.asarray(beta1)[()], numpy.asarray(kappa_A)[()], numpy.asarray(rho_A)[()], numpy.asarray(B)[()], numpy.asarray(G)[()], numpy.asarray(p)[()])


def warmup_trajectory(t, e0, beta, k, T_w):
    """Overdamped relaxation under linear warmup: a second cause of slow start.

    docs/theory.md section 9. Adam and schedules. Generated from the derivation ``warmup_trajectory``.

    Parameters
    ----------
    t : array_like
        continuous time [steps]
    e0 : array_like
        initial displacement e(0) [reward]
    beta : array_like
        momentum (heavy-ball beta or Adam beta1) [dimensionless]
    k : array_like
        dimensionless stiffness a*kappa [1/step^2]
    T_w : array_like
        linear learning-rate warmup length [steps]
    """
    try:
        _x0 = 2*T_w
        return e0*numpy.exp(k*t**2/(_x0*beta - _x0))
    except ZeroDivisionError:  # Python numbers at a pole: as numpy's (inf or nan)
        with numpy.errstate(all="ignore"):
            return warmup_trajectory(numpy.asarray(t)[()], numpy.asarray(e0)[()], numpy.asarray(beta)[()], numpy.asarray(k)[()], numpy.asarray(T_w)[()])


def sampling_variance_split(sigma_p2, sigma_c2, B, G):
    """Variance of a step's mean gradient: between-prompt part over B, within-group part over B G.

    docs/theory.md section 9. Adam and schedules. Generated from the derivation ``sampling_variance_split``.

    Parameters
    ----------
    sigma_p2 : array_like
        between-prompt variance of the projected gradient (per prompt; not removed by more completions) [gradient^2]
    sigma_c2 : array_like
        within-group variance of the projected gradient (per completion) [gradient^2]
    B : array_like
        prompts per step [prompts]
    G : array_like
        group size (completions per prompt) [completions]
    """
    try:
        _x0 = B**(-1.0)
        return _x0*sigma_p2 + _x0*sigma_c2/G
    except ZeroDivisionError:  # Python numbers at a pole: as numpy's (inf or nan)
        with numpy.errstate(all="ignore"):
            return sampling_variance_split(numpy.asarray(sigma_p2)[()], numpy.asarray(sigma_c2)[()], numpy.asarray(B)[()], numpy.asarray(G)[()])


def sgd_noise_drag(eta, beta, h_noise, sigma_p2, sigma_c2, B, G):
    """Expected reward lost per step to the sampling noise (heavy-ball SGD): h eta^2 (sigma_p^2/B + sigma_c^2/(B G)) / (2 (1 - beta^2)).

    docs/theory.md section 9. Adam and schedules. Generated from the derivation ``sgd_noise_drag``.

    Parameters
    ----------
    eta : array_like
        learning rate [parameter/gradient]
    beta : array_like
        momentum (heavy-ball beta or Adam beta1) [dimensionless]
    h_noise : array_like
        curvature of the reward along the sampling noise of the step (minus its second derivative, averaged over the noise) [reward/parameter^2]
    sigma_p2 : array_like
        between-prompt variance of the projected gradient (per prompt; not removed by more completions) [gradient^2]
    sigma_c2 : array_like
        within-group variance of the projected gradient (per completion) [gradient^2]
    B : array_like
        prompts per step [prompts]
    G : array_like
        group size (completions per prompt) [completions]
    """
    try:
        return -1/2*eta**2*h_noise*(G*sigma_p2 + sigma_c2)/(B*G*(beta - 1)*(beta + 1))
    except ZeroDivisionError:  # Python numbers at a pole: as numpy's (inf or nan)
        with numpy.errstate(all="ignore"):
            return sgd_noise_drag(numpy.asarray(eta)[()], numpy.asarray(beta)[()], numpy.asarray(h_noise)[()], numpy.asarray(sigma_p2)[()], numpy.asarray(sigma_c2)[()], numpy.asarray(B)[()], numpy.asarray(G)[()])


def sgd_noise_plateau_shift(eta, beta, kappa, h_noise, sigma_p2, sigma_c2, B, G):
    """How far the sampling noise lowers SGD's plateau: h eta (sigma_p^2/B + sigma_c^2/(B G)) / (2 kappa (1 + beta)).

    docs/theory.md section 9. Adam and schedules. Generated from the derivation ``sgd_noise_plateau_shift``.

    Parameters
    ----------
    eta : array_like
        learning rate [parameter/gradient]
    beta : array_like
        momentum (heavy-ball beta or Adam beta1) [dimensionless]
    kappa : array_like
        curvature scale: slope of the projected drift [gradient/reward]
    h_noise : array_like
        curvature of the reward along the sampling noise of the step (minus its second derivative, averaged over the noise) [reward/parameter^2]
    sigma_p2 : array_like
        between-prompt variance of the projected gradient (per prompt; not removed by more completions) [gradient^2]
    sigma_c2 : array_like
        within-group variance of the projected gradient (per completion) [gradient^2]
    B : array_like
        prompts per step [prompts]
    G : array_like
        group size (completions per prompt) [completions]
    """
    try:
        return (1/2)*eta*h_noise*(G*sigma_p2 + sigma_c2)/(B*G*kappa*(beta + 1))
    except ZeroDivisionError:  # Python numbers at a pole: as numpy's (inf or nan)
        with numpy.errstate(all="ignore"):
            return sgd_noise_plateau_shift(numpy.asarray(eta)[()], numpy.asarray(beta)[()], numpy.asarray(kappa)[()], numpy.asarray(h_noise)[()], numpy.asarray(sigma_p2)[()], numpy.asarray(sigma_c2)[()], numpy.asarray(B)[()], numpy.asarray(G)[()])


def adam_second_moment_split(g_mean, sigma_p2, sigma_c2, B, G):
    """Adam's second moment with the step variance split into prompts and completions.

    docs/theory.md section 9. Adam and schedules. Generated from the derivation ``adam_second_moment_split``.

    Parameters
    ----------
    g_mean : array_like
        mean of the projected gradient [gradient]
    sigma_p2 : array_like
        between-prompt variance of the projected gradient (per prompt; not removed by more completions) [gradient^2]
    sigma_c2 : array_like
        within-group variance of the projected gradient (per completion) [gradient^2]
    B : array_like
        prompts per step [prompts]
    G : array_like
        group size (completions per prompt) [completions]
    """
    try:
        _x0 = B**(-1.0)
        return _x0*sigma_p2 + g_mean**2 + _x0*sigma_c2/G
    except ZeroDivisionError:  # Python numbers at a pole: as numpy's (inf or nan)
        with numpy.errstate(all="ignore"):
            return adam_second_moment_split(numpy.asarray(g_mean)[()], numpy.asarray(sigma_p2)[()], numpy.asarray(sigma_c2)[()], numpy.asarray(B)[()], numpy.asarray(G)[()])


def adam_stiffness_split(eta, beta1, kappa_A, rho_p, rho_c, B, G):
    """Adam stiffness with the noise split into prompts and completions: eta (1-beta1) kappa_A / sqrt(1 + rho_p/B + rho_c/(B G)).

    docs/theory.md section 9. Adam and schedules. Generated from the derivation ``adam_stiffness_split``.

    Parameters
    ----------
    eta : array_like
        learning rate [parameter/gradient]
    beta1 : array_like
        Adam first-moment decay [dimensionless]
    kappa_A : array_like
        Adam-normalised curvature kappa / |g_mean| [1/reward]
    rho_p : array_like
        Adam between-prompt noise ratio sigma_p^2 / g_mean^2 [prompts]
    rho_c : array_like
        Adam within-group noise ratio sigma_c^2 / g_mean^2 [completions]
    B : array_like
        prompts per step [prompts]
    G : array_like
        group size (completions per prompt) [completions]
    """
    try:
        _x0 = B**(-1.0)
        return eta*kappa_A*(1 - beta1)/numpy.sqrt(_x0*rho_p + 1 + _x0*rho_c/G)
    except ZeroDivisionError:  # Python numbers at a pole: as numpy's (inf or nan)
        with numpy.errstate(all="ignore"):
            return adam_stiffness_split(numpy.asarray(eta)[()], numpy.asarray(beta1)[()], numpy.asarray(kappa_A)[()], numpy.asarray(rho_p)[()], numpy.asarray(rho_c)[()], numpy.asarray(B)[()], numpy.asarray(G)[()])


def adam_stiffness_split_finite_group(eta, beta1, kappa_A, rho_p, rho_c, B, G, p):
    """Adam stiffness with the split noise and the finite-G drift factor.

    docs/theory.md section 9. Adam and schedules. Generated from the derivation ``adam_stiffness_split_finite_group``.

    Parameters
    ----------
    eta : array_like
        learning rate [parameter/gradient]
    beta1 : array_like
        Adam first-moment decay [dimensionless]
    kappa_A : array_like
        Adam-normalised curvature kappa / |g_mean| [1/reward]
    rho_p : array_like
        Adam between-prompt noise ratio sigma_p^2 / g_mean^2 [prompts]
    rho_c : array_like
        Adam within-group noise ratio sigma_c^2 / g_mean^2 [completions]
    B : array_like
        prompts per step [prompts]
    G : array_like
        group size (completions per prompt) [completions]
    p : array_like
        success probability of a prompt [dimensionless]
    """
    try:
        with numpy.errstate(all="ignore"):  # only the selected branch counts
            _x0 = -p**G - numpy.expm1(G*numpy.log1p(-p))
            _x1 = numpy.less_equal(p, 1/2)
            _x2 = -(1 - p)**G - numpy.expm1(G*numpy.log(p))
            _x3 = B**(-1.0)
            return numpy.asarray(eta*kappa_A*(1 - beta1)*numpy.where(_x1, numpy.sqrt(_x0), numpy.sqrt(_x2))/numpy.sqrt(_x3*rho_p + numpy.where(_x1, _x0, _x2) + _x3*rho_c/G))[()]
    except ZeroDivisionError:  # Python numbers at a pole: as numpy's (inf or nan)
        with numpy.errstate(all="ignore"):
            return adam_stiffness_split_finite_group(numpy.asarray(eta)[()], numpy.asarray(beta1)[()], numpy.asarray(kappa_A)[()], numpy.asarray(rho_p)[()], numpy.asarray(rho_c)[()], numpy.asarray(B)[()], numpy.asarray(G)[()], numpy.asarray(p)[()])


def adam_noise_drag(eta, beta1, h_noise, rho_p, rho_c, B, G):
    """Expected reward lost per step to the sampling noise (Adam): h eta^2 (1-beta1)/(2 (1+beta1)) rho/(1+rho), rho = rho_p/B + rho_c/(B G).

    docs/theory.md section 9. Adam and schedules. Generated from the derivation ``adam_noise_drag``.

    Parameters
    ----------
    eta : array_like
        learning rate [parameter/gradient]
    beta1 : array_like
        Adam first-moment decay [dimensionless]
    h_noise : array_like
        curvature of the reward along the sampling noise of the step (minus its second derivative, averaged over the noise) [reward/parameter^2]
    rho_p : array_like
        Adam between-prompt noise ratio sigma_p^2 / g_mean^2 [prompts]
    rho_c : array_like
        Adam within-group noise ratio sigma_c^2 / g_mean^2 [completions]
    B : array_like
        prompts per step [prompts]
    G : array_like
        group size (completions per prompt) [completions]
    """
    try:
        _x0 = B**(-1.0)
        _x1 = _x0*rho_p + _x0*rho_c/G
        return _x1*eta**2*h_noise*(1 - beta1)/((_x1 + 1)*(2*beta1 + 2))
    except ZeroDivisionError:  # Python numbers at a pole: as numpy's (inf or nan)
        with numpy.errstate(all="ignore"):
            return adam_noise_drag(numpy.asarray(eta)[()], numpy.asarray(beta1)[()], numpy.asarray(h_noise)[()], numpy.asarray(rho_p)[()], numpy.asarray(rho_c)[()], numpy.asarray(B)[()], numpy.asarray(G)[()])


def sigmoid_law(t, r0, r_star, t_mid, width):
    """Logistic baseline: from r0 to the plateau r* around t_mid, width w.

    docs/theory.md section 3. Overdamped limit and the empirical law (baselines compared with it). Generated from the derivation ``sigmoid_law``.

    Parameters
    ----------
    t : array_like
        continuous time [steps]
    r0 : array_like
        initial expected reward [reward]
    r_star : array_like
        fixed point (plateau) of the expected reward [reward]
    t_mid : array_like
        midpoint of a baseline reward curve [steps]
    width : array_like
        width of the logistic baseline's transition [steps]
    """
    try:
        return r_star + (r0 - r_star)/(numpy.exp((t - t_mid)/width) + 1)
    except ZeroDivisionError:  # Python numbers at a pole: as numpy's (inf or nan)
        with numpy.errstate(all="ignore"):
            return sigmoid_law(numpy.asarray(t)[()], numpy.asarray(r0)[()], numpy.asarray(r_star)[()], numpy.asarray(t_mid)[()], numpy.asarray(width)[()])


def power_law(t, r0, r_star, t_mid, exponent):
    """Saturating power law: half the gain at t_mid, algebraic approach to r*.

    docs/theory.md section 3. Overdamped limit and the empirical law (baselines compared with it). Generated from the derivation ``power_law``.

    Parameters
    ----------
    t : array_like
        continuous time [steps]
    r0 : array_like
        initial expected reward [reward]
    r_star : array_like
        fixed point (plateau) of the expected reward [reward]
    t_mid : array_like
        midpoint of a baseline reward curve [steps]
    exponent : array_like
        exponent of the saturating power-law baseline [dimensionless]
    """
    try:
        return r_star + (r0 - r_star)/((t/t_mid)**exponent + 1)
    except ZeroDivisionError:  # Python numbers at a pole: as numpy's (inf or nan)
        with numpy.errstate(all="ignore"):
            return power_law(numpy.asarray(t)[()], numpy.asarray(r0)[()], numpy.asarray(r_star)[()], numpy.asarray(t_mid)[()], numpy.asarray(exponent)[()])


def saturation_law_d_r0(t, r0, r_star, tau):
    """d saturation_law / d r0: column of the fit's Jacobian.

    docs/theory.md section 3. Overdamped limit and the empirical law. Generated from the derivation ``saturation_law_d_r0``.

    Parameters
    ----------
    t : array_like
        continuous time [steps]
    r0 : array_like
        initial expected reward [reward]
    r_star : array_like
        fixed point (plateau) of the expected reward [reward]
    tau : array_like
        relaxation time [steps]
    """
    try:
        return numpy.exp(-t/tau)
    except ZeroDivisionError:  # Python numbers at a pole: as numpy's (inf or nan)
        with numpy.errstate(all="ignore"):
            return saturation_law_d_r0(numpy.asarray(t)[()], numpy.asarray(r0)[()], numpy.asarray(r_star)[()], numpy.asarray(tau)[()])


def saturation_law_d_r_star(t, r0, r_star, tau):
    """d saturation_law / d r_star: column of the fit's Jacobian.

    docs/theory.md section 3. Overdamped limit and the empirical law. Generated from the derivation ``saturation_law_d_r_star``.

    Parameters
    ----------
    t : array_like
        continuous time [steps]
    r0 : array_like
        initial expected reward [reward]
    r_star : array_like
        fixed point (plateau) of the expected reward [reward]
    tau : array_like
        relaxation time [steps]
    """
    try:
        return 1 - numpy.exp(-t/tau)
    except ZeroDivisionError:  # Python numbers at a pole: as numpy's (inf or nan)
        with numpy.errstate(all="ignore"):
            return saturation_law_d_r_star(numpy.asarray(t)[()], numpy.asarray(r0)[()], numpy.asarray(r_star)[()], numpy.asarray(tau)[()])


def saturation_law_d_tau(t, r0, r_star, tau):
    """d saturation_law / d tau: column of the fit's Jacobian.

    docs/theory.md section 3. Overdamped limit and the empirical law. Generated from the derivation ``saturation_law_d_tau``.

    Parameters
    ----------
    t : array_like
        continuous time [steps]
    r0 : array_like
        initial expected reward [reward]
    r_star : array_like
        fixed point (plateau) of the expected reward [reward]
    tau : array_like
        relaxation time [steps]
    """
    try:
        return t*(r0 - r_star)*numpy.exp(-t/tau)/tau**2
    except ZeroDivisionError:  # Python numbers at a pole: as numpy's (inf or nan)
        with numpy.errstate(all="ignore"):
            return saturation_law_d_tau(numpy.asarray(t)[()], numpy.asarray(r0)[()], numpy.asarray(r_star)[()], numpy.asarray(tau)[()])


def sigmoid_law_d_r0(t, r0, r_star, t_mid, width):
    """d sigmoid_law / d r0: column of the fit's Jacobian.

    docs/theory.md section 3. Overdamped limit and the empirical law (baselines compared with it). Generated from the derivation ``sigmoid_law_d_r0``.

    Parameters
    ----------
    t : array_like
        continuous time [steps]
    r0 : array_like
        initial expected reward [reward]
    r_star : array_like
        fixed point (plateau) of the expected reward [reward]
    t_mid : array_like
        midpoint of a baseline reward curve [steps]
    width : array_like
        width of the logistic baseline's transition [steps]
    """
    try:
        return (numpy.exp((t - t_mid)/width) + 1)**(-1.0)
    except ZeroDivisionError:  # Python numbers at a pole: as numpy's (inf or nan)
        with numpy.errstate(all="ignore"):
            return sigmoid_law_d_r0(numpy.asarray(t)[()], numpy.asarray(r0)[()], numpy.asarray(r_star)[()], numpy.asarray(t_mid)[()], numpy.asarray(width)[()])


def sigmoid_law_d_r_star(t, r0, r_star, t_mid, width):
    """d sigmoid_law / d r_star: column of the fit's Jacobian.

    docs/theory.md section 3. Overdamped limit and the empirical law (baselines compared with it). Generated from the derivation ``sigmoid_law_d_r_star``.

    Parameters
    ----------
    t : array_like
        continuous time [steps]
    r0 : array_like
        initial expected reward [reward]
    r_star : array_like
        fixed point (plateau) of the expected reward [reward]
    t_mid : array_like
        midpoint of a baseline reward curve [steps]
    width : array_like
        width of the logistic baseline's transition [steps]
    """
    try:
        return 1 - 1/(numpy.exp((t - t_mid)/width) + 1)
    except ZeroDivisionError:  # Python numbers at a pole: as numpy's (inf or nan)
        with numpy.errstate(all="ignore"):
            return sigmoid_law_d_r_star(numpy.asarray(t)[()], numpy.asarray(r0)[()], numpy.asarray(r_star)[()], numpy.asarray(t_mid)[()], numpy.asarray(width)[()])


def sigmoid_law_d_t_mid(t, r0, r_star, t_mid, width):
    """d sigmoid_law / d t_mid: column of the fit's Jacobian.

    docs/theory.md section 3. Overdamped limit and the empirical law (baselines compared with it). Generated from the derivation ``sigmoid_law_d_t_mid``.

    Parameters
    ----------
    t : array_like
        continuous time [steps]
    r0 : array_like
        initial expected reward [reward]
    r_star : array_like
        fixed point (plateau) of the expected reward [reward]
    t_mid : array_like
        midpoint of a baseline reward curve [steps]
    width : array_like
        width of the logistic baseline's transition [steps]
    """
    try:
        _x0 = width**(-1.0)
        return (1/4)*_x0*(r0 - r_star)/numpy.cosh((1/2)*_x0*(t - t_mid))**2
    except ZeroDivisionError:  # Python numbers at a pole: as numpy's (inf or nan)
        with numpy.errstate(all="ignore"):
            return sigmoid_law_d_t_mid(numpy.asarray(t)[()], numpy.asarray(r0)[()], numpy.asarray(r_star)[()], numpy.asarray(t_mid)[()], numpy.asarray(width)[()])


def sigmoid_law_d_width(t, r0, r_star, t_mid, width):
    """d sigmoid_law / d width: column of the fit's Jacobian.

    docs/theory.md section 3. Overdamped limit and the empirical law (baselines compared with it). Generated from the derivation ``sigmoid_law_d_width``.

    Parameters
    ----------
    t : array_like
        continuous time [steps]
    r0 : array_like
        initial expected reward [reward]
    r_star : array_like
        fixed point (plateau) of the expected reward [reward]
    t_mid : array_like
        midpoint of a baseline reward curve [steps]
    width : array_like
        width of the logistic baseline's transition [steps]
    """
    try:
        _x0 = t - t_mid
        return (1/4)*_x0*(r0 - r_star)/(width**2*numpy.cosh((1/2)*_x0/width)**2)
    except ZeroDivisionError:  # Python numbers at a pole: as numpy's (inf or nan)
        with numpy.errstate(all="ignore"):
            return sigmoid_law_d_width(numpy.asarray(t)[()], numpy.asarray(r0)[()], numpy.asarray(r_star)[()], numpy.asarray(t_mid)[()], numpy.asarray(width)[()])


def power_law_d_r0(t, r0, r_star, t_mid, exponent):
    """d power_law / d r0: column of the fit's Jacobian.

    docs/theory.md section 3. Overdamped limit and the empirical law (baselines compared with it). Generated from the derivation ``power_law_d_r0``.

    Parameters
    ----------
    t : array_like
        continuous time [steps]
    r0 : array_like
        initial expected reward [reward]
    r_star : array_like
        fixed point (plateau) of the expected reward [reward]
    t_mid : array_like
        midpoint of a baseline reward curve [steps]
    exponent : array_like
        exponent of the saturating power-law baseline [dimensionless]
    """
    try:
        return ((t/t_mid)**exponent + 1)**(-1.0)
    except ZeroDivisionError:  # Python numbers at a pole: as numpy's (inf or nan)
        with numpy.errstate(all="ignore"):
            return power_law_d_r0(numpy.asarray(t)[()], numpy.asarray(r0)[()], numpy.asarray(r_star)[()], numpy.asarray(t_mid)[()], numpy.asarray(exponent)[()])


def power_law_d_r_star(t, r0, r_star, t_mid, exponent):
    """d power_law / d r_star: column of the fit's Jacobian.

    docs/theory.md section 3. Overdamped limit and the empirical law (baselines compared with it). Generated from the derivation ``power_law_d_r_star``.

    Parameters
    ----------
    t : array_like
        continuous time [steps]
    r0 : array_like
        initial expected reward [reward]
    r_star : array_like
        fixed point (plateau) of the expected reward [reward]
    t_mid : array_like
        midpoint of a baseline reward curve [steps]
    exponent : array_like
        exponent of the saturating power-law baseline [dimensionless]
    """
    try:
        return 1 - 1/((t/t_mid)**exponent + 1)
    except ZeroDivisionError:  # Python numbers at a pole: as numpy's (inf or nan)
        with numpy.errstate(all="ignore"):
            return power_law_d_r_star(numpy.asarray(t)[()], numpy.asarray(r0)[()], numpy.asarray(r_star)[()], numpy.asarray(t_mid)[()], numpy.asarray(exponent)[()])


def power_law_d_t_mid(t, r0, r_star, t_mid, exponent):
    """d power_law / d t_mid: column of the fit's Jacobian.

    docs/theory.md section 3. Overdamped limit and the empirical law (baselines compared with it). Generated from the derivation ``power_law_d_t_mid``.

    Parameters
    ----------
    t : array_like
        continuous time [steps]
    r0 : array_like
        initial expected reward [reward]
    r_star : array_like
        fixed point (plateau) of the expected reward [reward]
    t_mid : array_like
        midpoint of a baseline reward curve [steps]
    exponent : array_like
        exponent of the saturating power-law baseline [dimensionless]
    """
    try:
        _x0 = t_mid**(-1.0)
        _x1 = (_x0*t)**exponent
        return _x0*_x1*exponent*(r0 - r_star)/(_x1 + 1)**2
    except ZeroDivisionError:  # Python numbers at a pole: as numpy's (inf or nan)
        with numpy.errstate(all="ignore"):
            return power_law_d_t_mid(numpy.asarray(t)[()], numpy.asarray(r0)[()], numpy.asarray(r_star)[()], numpy.asarray(t_mid)[()], numpy.asarray(exponent)[()])


def power_law_d_exponent(t, r0, r_star, t_mid, exponent):
    """d power_law / d exponent: column of the fit's Jacobian.

    docs/theory.md section 3. Overdamped limit and the empirical law (baselines compared with it). Generated from the derivation ``power_law_d_exponent``.

    Parameters
    ----------
    t : array_like
        continuous time [steps]
    r0 : array_like
        initial expected reward [reward]
    r_star : array_like
        fixed point (plateau) of the expected reward [reward]
    t_mid : array_like
        midpoint of a baseline reward curve [steps]
    exponent : array_like
        exponent of the saturating power-law baseline [dimensionless]

    Raises
    ------
    ValueError
        Outside the domain where this real-arithmetic form is the result:
        t > 0
    """
    with numpy.errstate(all="ignore"):  # arrays: 1/0 is inf, not an exception
        _inside = (lambda t: numpy.all(numpy.greater(t, 0)))(numpy.asarray(t, dtype=float))
    if not _inside:
        raise ValueError("power_law_d_exponent: defined only where t > 0")
    try:
        _x0 = t/t_mid
        _x1 = _x0**exponent
        return -_x1*(r0 - r_star)*numpy.log(_x0)/(_x1 + 1)**2
    except ZeroDivisionError:  # Python numbers at a pole: as numpy's (inf or nan)
        with numpy.errstate(all="ignore"):
            return power_law_d_exponent(numpy.asarray(t)[()], numpy.asarray(r0)[()], numpy.asarray(r_star)[()], numpy.asarray(t_mid)[()], numpy.asarray(exponent)[()])


def trajectory_d_e0(t, e0, v0, zeta, omega0):
    """d trajectory / d e0: column of the fit's Jacobian.

    docs/theory.md section 2. Continuum limit. Generated from the derivation ``trajectory_d_e0``.

    Parameters
    ----------
    t : array_like
        continuous time [steps]
    e0 : array_like
        initial displacement e(0) [reward]
    v0 : array_like
        initial velocity e'(0) [reward/step]
    zeta : array_like
        damping ratio [dimensionless]
    omega0 : array_like
        natural angular frequency [rad/step]

    Raises
    ------
    ValueError
        Outside the domain where this real-arithmetic form is the result:
        zeta > 1 and omega0*t*sqrt(zeta**2 - 1) < 700
    """
    with numpy.errstate(all="ignore"):  # arrays: 1/0 is inf, not an exception
        _inside = (lambda omega0, t, zeta: numpy.all(numpy.greater(zeta, 1)) and numpy.all(numpy.less(omega0*t*numpy.sqrt(zeta**2 - 1), 700)))(numpy.asarray(omega0, dtype=float), numpy.asarray(t, dtype=float), numpy.asarray(zeta, dtype=float))
    if not _inside:
        raise ValueError("trajectory_d_e0: defined only where zeta > 1 and omega0*t*sqrt(zeta**2 - 1) < 700")
    try:
        _x0 = omega0*t
        _x1 = numpy.sqrt(zeta**2 - 1)
        _x2 = _x0*_x1
        return (numpy.cosh(_x2) + zeta*numpy.sinh(_x2)/_x1)*numpy.exp(-_x0*zeta)
    except ZeroDivisionError:  # Python numbers at a pole: as numpy's (inf or nan)
        with numpy.errstate(all="ignore"):
            return trajectory_d_e0(numpy.asarray(t)[()], numpy.asarray(e0)[()], numpy.asarray(v0)[()], numpy.asarray(zeta)[()], numpy.asarray(omega0)[()])


def trajectory_d_v0(t, e0, v0, zeta, omega0):
    """d trajectory / d v0: column of the fit's Jacobian.

    docs/theory.md section 2. Continuum limit. Generated from the derivation ``trajectory_d_v0``.

    Parameters
    ----------
    t : array_like
        continuous time [steps]
    e0 : array_like
        initial displacement e(0) [reward]
    v0 : array_like
        initial velocity e'(0) [reward/step]
    zeta : array_like
        damping ratio [dimensionless]
    omega0 : array_like
        natural angular frequency [rad/step]

    Raises
    ------
    ValueError
        Outside the domain where this real-arithmetic form is the result:
        zeta > 1 and omega0*t*sqrt(zeta**2 - 1) < 700
    """
    with numpy.errstate(all="ignore"):  # arrays: 1/0 is inf, not an exception
        _inside = (lambda omega0, t, zeta: numpy.all(numpy.greater(zeta, 1)) and numpy.all(numpy.less(omega0*t*numpy.sqrt(zeta**2 - 1), 700)))(numpy.asarray(omega0, dtype=float), numpy.asarray(t, dtype=float), numpy.asarray(zeta, dtype=float))
    if not _inside:
        raise ValueError("trajectory_d_v0: defined only where zeta > 1 and omega0*t*sqrt(zeta**2 - 1) < 700")
    try:
        _x0 = omega0*t
        _x1 = numpy.sqrt(zeta**2 - 1)
        return numpy.exp(-_x0*zeta)*numpy.sinh(_x0*_x1)/(_x1*omega0)
    except ZeroDivisionError:  # Python numbers at a pole: as numpy's (inf or nan)
        with numpy.errstate(all="ignore"):
            return trajectory_d_v0(numpy.asarray(t)[()], numpy.asarray(e0)[()], numpy.asarray(v0)[()], numpy.asarray(zeta)[()], numpy.asarray(omega0)[()])


def trajectory_d_zeta(t, e0, v0, zeta, omega0):
    """d trajectory / d zeta: column of the fit's Jacobian.

    docs/theory.md section 2. Continuum limit. Generated from the derivation ``trajectory_d_zeta``.

    Parameters
    ----------
    t : array_like
        continuous time [steps]
    e0 : array_like
        initial displacement e(0) [reward]
    v0 : array_like
        initial velocity e'(0) [reward/step]
    zeta : array_like
        damping ratio [dimensionless]
    omega0 : array_like
        natural angular frequency [rad/step]

    Raises
    ------
    ValueError
        Outside the domain where this real-arithmetic form is the result:
        zeta > 1 and omega0*t*sqrt(zeta**2 - 1) < 700
    """
    with numpy.errstate(all="ignore"):  # arrays: 1/0 is inf, not an exception
        _inside = (lambda omega0, t, zeta: numpy.all(numpy.greater(zeta, 1)) and numpy.all(numpy.less(omega0*t*numpy.sqrt(zeta**2 - 1), 700)))(numpy.asarray(omega0, dtype=float), numpy.asarray(t, dtype=float), numpy.asarray(zeta, dtype=float))
    if not _inside:
        raise ValueError("trajectory_d_zeta: defined only where zeta > 1 and omega0*t*sqrt(zeta**2 - 1) < 700")
    try:
        _x0 = omega0*t
        _x1 = zeta**2
        _x2 = _x1 - 1
        _x3 = numpy.sqrt(_x2)
        _x4 = _x0*_x3
        _x5 = numpy.sinh(_x4)
        _x6 = _x5*v0
        _x7 = _x0*_x6
        _x8 = numpy.cosh(_x4)
        return (-_x1*_x7 + _x3*_x8*e0*omega0**2*t + _x4*_x8*v0*zeta - _x5*e0*omega0 - _x6*zeta + _x7)*numpy.exp(-_x0*zeta)/(_x2**(3/2)*omega0)
    except ZeroDivisionError:  # Python numbers at a pole: as numpy's (inf or nan)
        with numpy.errstate(all="ignore"):
            return trajectory_d_zeta(numpy.asarray(t)[()], numpy.asarray(e0)[()], numpy.asarray(v0)[()], numpy.asarray(zeta)[()], numpy.asarray(omega0)[()])


def trajectory_d_omega0(t, e0, v0, zeta, omega0):
    """d trajectory / d omega0: column of the fit's Jacobian.

    docs/theory.md section 2. Continuum limit. Generated from the derivation ``trajectory_d_omega0``.

    Parameters
    ----------
    t : array_like
        continuous time [steps]
    e0 : array_like
        initial displacement e(0) [reward]
    v0 : array_like
        initial velocity e'(0) [reward/step]
    zeta : array_like
        damping ratio [dimensionless]
    omega0 : array_like
        natural angular frequency [rad/step]

    Raises
    ------
    ValueError
        Outside the domain where this real-arithmetic form is the result:
        zeta > 1 and omega0*t*sqrt(zeta**2 - 1) < 700
    """
    with numpy.errstate(all="ignore"):  # arrays: 1/0 is inf, not an exception
        _inside = (lambda omega0, t, zeta: numpy.all(numpy.greater(zeta, 1)) and numpy.all(numpy.less(omega0*t*numpy.sqrt(zeta**2 - 1), 700)))(numpy.asarray(omega0, dtype=float), numpy.asarray(t, dtype=float), numpy.asarray(zeta, dtype=float))
    if not _inside:
        raise ValueError("trajectory_d_omega0: defined only where zeta > 1 and omega0*t*sqrt(zeta**2 - 1) < 700")
    try:
        _x0 = omega0**2
        _x1 = omega0*t
        _x2 = _x1*zeta
        _x3 = numpy.sqrt(zeta**2 - 1)
        _x4 = _x1*_x3
        _x5 = numpy.sinh(_x4)
        _x6 = _x5*v0
        return -(_x0*_x5*e0*t + _x2*_x6 - _x4*v0*numpy.cosh(_x4) + _x6)*numpy.exp(-_x2)/(_x0*_x3)
    except ZeroDivisionError:  # Python numbers at a pole: as numpy's (inf or nan)
        with numpy.errstate(all="ignore"):
            return trajectory_d_omega0(numpy.asarray(t)[()], numpy.asarray(e0)[()], numpy.asarray(v0)[()], numpy.asarray(zeta)[()], numpy.asarray(omega0)[()])


def trajectory_underdamped_d_e0(t, e0, v0, zeta, omega0):
    """d trajectory_underdamped / d e0: column of the fit's Jacobian.

    docs/theory.md section 2. Continuum limit. Generated from the derivation ``trajectory_underdamped_d_e0``.

    Parameters
    ----------
    t : array_like
        continuous time [steps]
    e0 : array_like
        initial displacement e(0) [reward]
    v0 : array_like
        initial velocity e'(0) [reward/step]
    zeta : array_like
        damping ratio [dimensionless]
    omega0 : array_like
        natural angular frequency [rad/step]

    Raises
    ------
    ValueError
        Outside the domain where this real-arithmetic form is the result:
        zeta < 1
    """
    with numpy.errstate(all="ignore"):  # arrays: 1/0 is inf, not an exception
        _inside = (lambda zeta: numpy.all(numpy.less(zeta, 1)))(numpy.asarray(zeta, dtype=float))
    if not _inside:
        raise ValueError("trajectory_underdamped_d_e0: defined only where zeta < 1")
    try:
        _x0 = omega0*t
        _x1 = numpy.exp(-_x0*zeta)
        _x2 = numpy.sqrt(1 - zeta**2)
        _x3 = _x0*_x2
        return _x1*numpy.cos(_x3) + _x1*zeta*numpy.sin(_x3)/_x2
    except ZeroDivisionError:  # Python numbers at a pole: as numpy's (inf or nan)
        with numpy.errstate(all="ignore"):
            return trajectory_underdamped_d_e0(numpy.asarray(t)[()], numpy.asarray(e0)[()], numpy.asarray(v0)[()], numpy.asarray(zeta)[()], numpy.asarray(omega0)[()])


def trajectory_underdamped_d_v0(t, e0, v0, zeta, omega0):
    """d trajectory_underdamped / d v0: column of the fit's Jacobian.

    docs/theory.md section 2. Continuum limit. Generated from the derivation ``trajectory_underdamped_d_v0``.

    Parameters
    ----------
    t : array_like
        continuous time [steps]
    e0 : array_like
        initial displacement e(0) [reward]
    v0 : array_like
        initial velocity e'(0) [reward/step]
    zeta : array_like
        damping ratio [dimensionless]
    omega0 : array_like
        natural angular frequency [rad/step]

    Raises
    ------
    ValueError
        Outside the domain where this real-arithmetic form is the result:
        zeta < 1
    """
    with numpy.errstate(all="ignore"):  # arrays: 1/0 is inf, not an exception
        _inside = (lambda zeta: numpy.all(numpy.less(zeta, 1)))(numpy.asarray(zeta, dtype=float))
    if not _inside:
        raise ValueError("trajectory_underdamped_d_v0: defined only where zeta < 1")
    try:
        _x0 = omega0*t
        _x1 = numpy.sqrt(1 - zeta**2)
        return numpy.exp(-_x0*zeta)*numpy.sin(_x0*_x1)/(_x1*omega0)
    except ZeroDivisionError:  # Python numbers at a pole: as numpy's (inf or nan)
        with numpy.errstate(all="ignore"):
            return trajectory_underdamped_d_v0(numpy.asarray(t)[()], numpy.asarray(e0)[()], numpy.asarray(v0)[()], numpy.asarray(zeta)[()], numpy.asarray(omega0)[()])


def trajectory_underdamped_d_zeta(t, e0, v0, zeta, omega0):
    """d trajectory_underdamped / d zeta: column of the fit's Jacobian.

    docs/theory.md section 2. Continuum limit. Generated from the derivation ``trajectory_underdamped_d_zeta``.

    Parameters
    ----------
    t : array_like
        continuous time [steps]
    e0 : array_like
        initial displacement e(0) [reward]
    v0 : array_like
        initial velocity e'(0) [reward/step]
    zeta : array_like
        damping ratio [dimensionless]
    omega0 : array_like
        natural angular frequency [rad/step]

    Raises
    ------
    ValueError
        Outside the domain where this real-arithmetic form is the result:
        zeta < 1
    """
    with numpy.errstate(all="ignore"):  # arrays: 1/0 is inf, not an exception
        _inside = (lambda zeta: numpy.all(numpy.less(zeta, 1)))(numpy.asarray(zeta, dtype=float))
    if not _inside:
        raise ValueError("trajectory_underdamped_d_zeta: defined only where zeta < 1")
    try:
        _x0 = omega0*t
        _x1 = _x0*zeta
        _x2 = 1 - zeta**2
        _x3 = e0*zeta
        _x4 = _x3*omega0 + v0
        _x5 = numpy.sqrt(_x2)
        _x6 = _x0*_x5
        _x7 = numpy.sin(_x6)
        _x8 = numpy.cos(_x6)
        _x9 = _x4*_x7 + _x5*_x8*e0*omega0
        return (-_x0*_x2**(5/2)*_x9 + _x2**(3/2)*_x9*zeta + _x2**2*omega0*(-_x3*_x8 - _x4*_x8*t*zeta + _x5*_x7*e0*(_x1 + 1)))*numpy.exp(-_x1)/(_x2**3*omega0)
    except ZeroDivisionError:  # Python numbers at a pole: as numpy's (inf or nan)
        with numpy.errstate(all="ignore"):
            return trajectory_underdamped_d_zeta(numpy.asarray(t)[()], numpy.asarray(e0)[()], numpy.asarray(v0)[()], numpy.asarray(zeta)[()], numpy.asarray(omega0)[()])


def trajectory_underdamped_d_omega0(t, e0, v0, zeta, omega0):
    """d trajectory_underdamped / d omega0: column of the fit's Jacobian.

    docs/theory.md section 2. Continuum limit. Generated from the derivation ``trajectory_underdamped_d_omega0``.

    Parameters
    ----------
    t : array_like
        continuous time [steps]
    e0 : array_like
        initial displacement e(0) [reward]
    v0 : array_like
        initial velocity e'(0) [reward/step]
    zeta : array_like
        damping ratio [dimensionless]
    omega0 : array_like
        natural angular frequency [rad/step]

    Raises
    ------
    ValueError
        Outside the domain where this real-arithmetic form is the result:
        zeta < 1
    """
    with numpy.errstate(all="ignore"):  # arrays: 1/0 is inf, not an exception
        _inside = (lambda zeta: numpy.all(numpy.less(zeta, 1)))(numpy.asarray(zeta, dtype=float))
    if not _inside:
        raise ValueError("trajectory_underdamped_d_omega0: defined only where zeta < 1")
    try:
        _x0 = omega0**2
        _x1 = omega0*t
        _x2 = zeta**2
        _x3 = _x2 - 1
        _x4 = numpy.sqrt(-_x3)
        _x5 = _x1*_x4
        _x6 = _x1*v0*numpy.cos(_x5)
        _x7 = numpy.sin(_x5)
        _x8 = _x4*_x7
        return (_x0*_x8*e0*t + _x2*_x6 + _x5*_x7*v0*zeta - _x6 + _x8*v0)*numpy.exp(-_x1*zeta)/(_x0*_x3)
    except ZeroDivisionError:  # Python numbers at a pole: as numpy's (inf or nan)
        with numpy.errstate(all="ignore"):
            return trajectory_underdamped_d_omega0(numpy.asarray(t)[()], numpy.asarray(e0)[()], numpy.asarray(v0)[()], numpy.asarray(zeta)[()], numpy.asarray(omega0)[()])


def trajectory_critical_d_e0(t, e0, v0, omega0):
    """d trajectory_critical / d e0: column of the fit's Jacobian.

    docs/theory.md section 2. Continuum limit. Generated from the derivation ``trajectory_critical_d_e0``.

    Parameters
    ----------
    t : array_like
        continuous time [steps]
    e0 : array_like
        initial displacement e(0) [reward]
    v0 : array_like
        initial velocity e'(0) [reward/step]
    omega0 : array_like
        natural angular frequency [rad/step]
    """
    try:
        _x0 = omega0*t
        return (_x0 + 1)*numpy.exp(-_x0)
    except ZeroDivisionError:  # Python numbers at a pole: as numpy's (inf or nan)
        with numpy.errstate(all="ignore"):
            return trajectory_critical_d_e0(numpy.asarray(t)[()], numpy.asarray(e0)[()], numpy.asarray(v0)[()], numpy.asarray(omega0)[()])


def trajectory_critical_d_v0(t, e0, v0, omega0):
    """d trajectory_critical / d v0: column of the fit's Jacobian.

    docs/theory.md section 2. Continuum limit. Generated from the derivation ``trajectory_critical_d_v0``.

    Parameters
    ----------
    t : array_like
        continuous time [steps]
    e0 : array_like
        initial displacement e(0) [reward]
    v0 : array_like
        initial velocity e'(0) [reward/step]
    omega0 : array_like
        natural angular frequency [rad/step]
    """
    try:
        return t*numpy.exp(-omega0*t)
    except ZeroDivisionError:  # Python numbers at a pole: as numpy's (inf or nan)
        with numpy.errstate(all="ignore"):
            return trajectory_critical_d_v0(numpy.asarray(t)[()], numpy.asarray(e0)[()], numpy.asarray(v0)[()], numpy.asarray(omega0)[()])


def trajectory_critical_d_omega0(t, e0, v0, omega0):
    """d trajectory_critical / d omega0: column of the fit's Jacobian.

    docs/theory.md section 2. Continuum limit. Generated from the derivation ``trajectory_critical_d_omega0``.

    Parameters
    ----------
    t : array_like
        continuous time [steps]
    e0 : array_like
        initial displacement e(0) [reward]
    v0 : array_like
        initial velocity e'(0) [reward/step]
    omega0 : array_like
        natural angular frequency [rad/step]
    """
    try:
        return t**2*(-e0*omega0 - v0)*numpy.exp(-omega0*t)
    except ZeroDivisionError:  # Python numbers at a pole: as numpy's (inf or nan)
        with numpy.errstate(all="ignore"):
            return trajectory_critical_d_omega0(numpy.asarray(t)[()], numpy.asarray(e0)[()], numpy.asarray(v0)[()], numpy.asarray(omega0)[()])


def two_mode_characteristic(z, beta, k_s, k_r):
    """Two-mode on-policy characteristic polynomial p(z; k_s) p(z; k_r).

    docs/theory.md section 1. Discrete mean-field map (two modes). Generated from the derivation ``two_mode_characteristic``.

    Parameters
    ----------
    z : array_like
        root of a discrete characteristic polynomial [dimensionless]
    beta : array_like
        momentum (heavy-ball beta or Adam beta1) [dimensionless]
    k_s : array_like
        stiffness of the stiff mode of the two-mode map (lr h_s) [1/step^2]
    k_r : array_like
        stiffness of the soft mode of the two-mode map (lr h_r) [1/step^2]
    """
    try:
        _x0 = beta**2
        _x1 = z**2
        _x2 = 2*z
        _x3 = beta*z
        _x4 = z**3
        _x5 = 2*_x4
        _x6 = _x1*k_r
        _x7 = _x1*k_s
        return _x0*_x1 - _x0*_x2 + _x0 + 4*_x1*beta + _x1 - _x2*beta + _x3*k_r + _x3*k_s + _x4*k_r + _x4*k_s - _x5*beta - _x5 - _x6*beta + _x6*k_s - _x6 - _x7*beta - _x7 + z**4
    except ZeroDivisionError:  # Python numbers at a pole: as numpy's (inf or nan)
        with numpy.errstate(all="ignore"):
            return two_mode_characteristic(numpy.asarray(z)[()], numpy.asarray(beta)[()], numpy.asarray(k_s)[()], numpy.asarray(k_r)[()])


def two_mode_stability_condition(beta, k_s, k_r):
    """Two-mode on-policy stability: Jury margins of both mode polynomials.

    docs/theory.md section 1. Discrete mean-field map (two modes). Generated from the derivation ``two_mode_stability_condition``.

    Parameters
    ----------
    beta : array_like
        momentum (heavy-ball beta or Adam beta1) [dimensionless]
    k_s : array_like
        stiffness of the stiff mode of the two-mode map (lr h_s) [1/step^2]
    k_r : array_like
        stiffness of the soft mode of the two-mode map (lr h_r) [1/step^2]
    """
    try:
        _x0 = 2*beta + 2
        return numpy.logical_and.reduce((numpy.greater(1 - beta, 0),numpy.greater(_x0 - k_r, 0),numpy.greater(_x0 - k_s, 0)))
    except ZeroDivisionError:  # Python numbers at a pole: as numpy's (inf or nan)
        with numpy.errstate(all="ignore"):
            return two_mode_stability_condition(numpy.asarray(beta)[()], numpy.asarray(k_s)[()], numpy.asarray(k_r)[()])


def two_mode_refresh_stability_condition(beta, k_s, k_r, K):
    """Two-mode sample-and-hold stability: each mode's monodromy in the unit disc.

    docs/theory.md section 1. Discrete mean-field map (two modes). Generated from the derivation ``two_mode_refresh_stability_condition``.

    Parameters
    ----------
    beta : array_like
        momentum (heavy-ball beta or Adam beta1) [dimensionless]
    k_s : array_like
        stiffness of the stiff mode of the two-mode map (lr h_s) [1/step^2]
    k_r : array_like
        stiffness of the soft mode of the two-mode map (lr h_r) [1/step^2]
    K : array_like
        refresh interval (optimizer steps per sampling refresh) [steps]
    """
    try:
        _x0 = (beta - 1)**(-2.0)
        _x1 = beta*k_r
        _x2 = beta**K
        _x3 = _x1*_x2
        _x4 = K*_x2
        _x5 = _x4*k_r
        _x6 = beta**2
        _x7 = _x2*_x6
        _x8 = 2*beta
        _x9 = -_x2*_x8 + _x2 + _x7
        _x10 = beta*k_s
        _x11 = _x10*_x2
        _x12 = _x4*k_s
        _x13 = _x10*_x4
        _x14 = (_x6 - _x8 + 1)**(-1.0)
        _x15 = K*_x14
        _x16 = _x15*k_r
        _x17 = _x1*_x15
        _x18 = -_x14*_x5 + _x15*_x3 + 1
        _x19 = _x14*_x6
        _x20 = _x14*_x8
        _x21 = -_x14 - _x19 + _x20
        _x22 = _x15*k_s
        _x23 = _x10*_x15
        _x24 = -_x12*_x14 + _x13*_x14 + 1
        _x25 = 2*_x14
        _x26 = _x14*_x2
        _x27 = _x14 + _x19 - _x20 + _x25*_x7 - 4*_x26*beta + 2*_x26
        return numpy.logical_and.reduce((numpy.greater(_x16 - _x17 + _x18 + _x21, 0),numpy.greater(_x21 + _x22 - _x23 + _x24, 0),numpy.greater(_x1*_x25 - _x16 + _x17 + _x18 - _x25*_x3 + _x27, 0),numpy.greater(_x10*_x25 - _x11*_x25 - _x22 + _x23 + _x24 + _x27, 0),numpy.greater(1 - abs(_x0*(_x10 - _x11 - _x12 + _x13 + _x9)), 0),numpy.greater(1 - abs(_x0*(K*_x3 + _x1 - _x3 - _x5 + _x9)), 0)))
    except ZeroDivisionError:  # Python numbers at a pole: as numpy's (inf or nan)
        with numpy.errstate(all="ignore"):
            return two_mode_refresh_stability_condition(numpy.asarray(beta)[()], numpy.asarray(k_s)[()], numpy.asarray(k_r)[()], numpy.asarray(K)[()])


def soft_pole(beta, k_r):
    """Slowest pole of the soft mode (monotone regime).

    docs/theory.md section 1. Discrete mean-field map (two modes). Generated from the derivation ``soft_pole``.

    Parameters
    ----------
    beta : array_like
        momentum (heavy-ball beta or Adam beta1) [dimensionless]
    k_r : array_like
        stiffness of the soft mode of the two-mode map (lr h_r) [1/step^2]

    Raises
    ------
    ValueError
        Outside the domain where this real-arithmetic form is the result:
        k_r < -2*sqrt(beta) + beta + 1
    """
    with numpy.errstate(all="ignore"):  # arrays: 1/0 is inf, not an exception
        _inside = (lambda beta, k_r: numpy.all(numpy.less(k_r, -2*numpy.sqrt(beta) + beta + 1)))(numpy.asarray(beta, dtype=float), numpy.asarray(k_r, dtype=float))
    if not _inside:
        raise ValueError("soft_pole: defined only where k_r < -2*sqrt(beta) + beta + 1")
    try:
        _x0 = 2*beta
        return (1/2)*beta - 1/2*k_r + (1/2)*numpy.sqrt(-_x0*k_r - _x0 + beta**2 + k_r**2 - 2*k_r + 1) + 1/2
    except ZeroDivisionError:  # Python numbers at a pole: as numpy's (inf or nan)
        with numpy.errstate(all="ignore"):
            return soft_pole(numpy.asarray(beta)[()], numpy.asarray(k_r)[()])


def two_mode_relaxation_time(beta, k_r):
    """Relaxation time of the reward in the two-mode map (monotone soft mode).

    docs/theory.md section 1. Discrete mean-field map (two modes). Generated from the derivation ``two_mode_relaxation_time``.

    Parameters
    ----------
    beta : array_like
        momentum (heavy-ball beta or Adam beta1) [dimensionless]
    k_r : array_like
        stiffness of the soft mode of the two-mode map (lr h_r) [1/step^2]

    Raises
    ------
    ValueError
        Outside the domain where this real-arithmetic form is the result:
        k_r < -2*sqrt(beta) + beta + 1
    """
    with numpy.errstate(all="ignore"):  # arrays: 1/0 is inf, not an exception
        _inside = (lambda beta, k_r: numpy.all(numpy.less(k_r, -2*numpy.sqrt(beta) + beta + 1)))(numpy.asarray(beta, dtype=float), numpy.asarray(k_r, dtype=float))
    if not _inside:
        raise ValueError("two_mode_relaxation_time: defined only where k_r < -2*sqrt(beta) + beta + 1")
    try:
        with numpy.errstate(all="ignore"):  # only the selected branch counts
            _x0 = numpy.sqrt(beta)
            _x1 = numpy.sqrt((-k_r + (1 - _x0)**2)*(-k_r + (_x0 + 1)**2))
            return numpy.asarray(-(1/2)/numpy.log1p(numpy.where(numpy.less(beta - k_r, 1), -2*k_r/(_x1 - beta + k_r + 1), (1/2)*_x1 + (1/2)*beta - 1/2*k_r - 1/2)))[()]
    except ZeroDivisionError:  # Python numbers at a pole: as numpy's (inf or nan)
        with numpy.errstate(all="ignore"):
            return two_mode_relaxation_time(numpy.asarray(beta)[()], numpy.asarray(k_r)[()])


def oscillation_momentum(k):
    """Momentum at which a mode of stiffness k turns oscillatory (k < 1).

    docs/theory.md section 1. Discrete mean-field map (two modes). Generated from the derivation ``oscillation_momentum``.

    Parameters
    ----------
    k : array_like
        dimensionless stiffness a*kappa [1/step^2]

    Raises
    ------
    ValueError
        Outside the domain where this real-arithmetic form is the result:
        k < 1
    """
    with numpy.errstate(all="ignore"):  # arrays: 1/0 is inf, not an exception
        _inside = (lambda k: numpy.all(numpy.less(k, 1)))(numpy.asarray(k, dtype=float))
    if not _inside:
        raise ValueError("oscillation_momentum: defined only where k < 1")
    try:
        return -2*numpy.sqrt(k) + k + 1
    except ZeroDivisionError:  # Python numbers at a pole: as numpy's (inf or nan)
        with numpy.errstate(all="ignore"):
            return oscillation_momentum(numpy.asarray(k)[()])


def two_mode_effective_stiffness(w_s, k_s, k_r):
    """Stiffness a one-step drift measurement sees: 2 (w_s k_s + (1-w_s) k_r).

    docs/theory.md section 1. Discrete mean-field map (two modes). Generated from the derivation ``two_mode_effective_stiffness``.

    Parameters
    ----------
    w_s : array_like
        stiff mode's share of the reward deficit r* - r [dimensionless]
    k_s : array_like
        stiffness of the stiff mode of the two-mode map (lr h_s) [1/step^2]
    k_r : array_like
        stiffness of the soft mode of the two-mode map (lr h_r) [1/step^2]

    Raises
    ------
    ValueError
        Outside the domain where this real-arithmetic form is the result:
        w_s <= 1
    """
    with numpy.errstate(all="ignore"):  # arrays: 1/0 is inf, not an exception
        _inside = (lambda w_s: numpy.all(numpy.less_equal(w_s, 1)))(numpy.asarray(w_s, dtype=float))
    if not _inside:
        raise ValueError("two_mode_effective_stiffness: defined only where w_s <= 1")
    try:
        return 2*k_r*(1 - w_s) + 2*k_s*w_s
    except ZeroDivisionError:  # Python numbers at a pole: as numpy's (inf or nan)
        with numpy.errstate(all="ignore"):
            return two_mode_effective_stiffness(numpy.asarray(w_s)[()], numpy.asarray(k_s)[()], numpy.asarray(k_r)[()])


def relay_half_swing(d, a, f_sat):
    """Half peak-to-peak swing of u under a saturated force with staleness d.

    docs/theory.md section 5. Lag structures (the stiff direction as a delayed relay). Generated from the derivation ``relay_half_swing``.

    Parameters
    ----------
    d : array_like
        fixed staleness [steps]
    a : array_like
        effective step (eta for heavy-ball SGD) [parameter/gradient]
    f_sat : array_like
        saturated restoring force along the stiff direction (delayed relay, per unit lr) [parameter/gradient]
    """
    try:
        return (1/2)*a*f_sat*(2*d + 1)
    except ZeroDivisionError:  # Python numbers at a pole: as numpy's (inf or nan)
        with numpy.errstate(all="ignore"):
            return relay_half_swing(numpy.asarray(d)[()], numpy.asarray(a)[()], numpy.asarray(f_sat)[()])


def relay_period(d):
    """Period [steps] of the delayed relay's limit cycle.

    docs/theory.md section 5. Lag structures (the stiff direction as a delayed relay). Generated from the derivation ``relay_period``.

    Parameters
    ----------
    d : array_like
        fixed staleness [steps]
    """
    try:
        return 4*d + 2
    except ZeroDivisionError:  # Python numbers at a pole: as numpy's (inf or nan)
        with numpy.errstate(all="ignore"):
            return relay_period(numpy.asarray(d)[()])
