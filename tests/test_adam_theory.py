"""Adam's stiffness (docs/theory.md section 9): the sympy results, their limits, and the two-arm
bandit's Adam simulation (empirical/bandit/simulation.py) against the compiled formula."""

from __future__ import annotations

import numpy as np
import pytest
import sympy as sp

from grpodyn.empirical.bandit.simulation import BanditConfig, group_update_moments, simulate_bandit
from grpodyn.numerics.compiled import compiled
from grpodyn.theory import sym

# the derivations are read through the registry shared by the test run (``reg``): building one
# with ``get`` before the registry would change the registry's order, which test_compiled compares


def test_noise_ratio_form_is_the_adam_stiffness(reg):
    g = sp.Symbol("g", positive=True)
    original = reg["adam_stiffness"].expr.subs(sym.g_mean, g).subs(
        {sym.sigma_g2: sym.rho_A * g**2, sym.kappa: sym.kappa_A * g})
    assert sp.simplify(original - reg["adam_stiffness_noise_ratio"].expr) == 0


def test_limits_of_the_adam_stiffness(reg):
    k = reg["adam_stiffness_noise_ratio"].expr
    signal = reg["adam_stiffness_signal_limit"].expr
    noise = reg["adam_stiffness_noise_limit"].expr
    assert sp.simplify(k.subs(sym.rho_A, 0) - signal) == 0
    assert sym.G not in signal.free_symbols and sym.B not in signal.free_symbols
    n = sp.Symbol("n", positive=True)
    ratio = sp.simplify((k / noise).subs(sym.B, n / sym.G))
    assert sp.limit(ratio, n, 0) == 1  # noise-dominated: k -> the sqrt(B G) law
    assert sp.limit(sp.simplify((k / signal).subs(sym.B, n / sym.G)), n, sp.oo) == 1


def test_bg_exponent_and_tau_lr_exponent(reg):
    assert reg["adam_tau_lr_exponent"].expr == -1
    exponent = compiled("adam_stiffness_bg_exponent")
    assert exponent(1e6, 1, 2) == pytest.approx(0.5, abs=1e-5)  # noise-dominated
    assert exponent(1e-6, 8, 16) == pytest.approx(0.0, abs=1e-6)  # signal-dominated
    # the exponent is the local slope of ln k in ln (B G)
    k = compiled("adam_stiffness_noise_ratio")
    h = 1e-5
    slope = (np.log(k(1e-3, 0.9, 2.0, 40.0, 8, 4 * np.exp(h)))
             - np.log(k(1e-3, 0.9, 2.0, 40.0, 8, 4 * np.exp(-h)))) / (2 * h)
    assert slope == pytest.approx(exponent(40.0, 8, 4), rel=1e-6)
    tau = compiled("adam_relaxation_time")
    assert tau(2e-3, 3.0, 40.0, 8, 4) == pytest.approx(tau(1e-3, 3.0, 40.0, 8, 4) / 2)


def _adam_velocity(lr: float, prompts: int, group: int) -> tuple[float, float]:
    """Mean drift of the logit gap per step (steps 200-400, from x = 0) and the prediction
    lr * g / sqrt(v_hat) = lr / sqrt(1 + rho_A / (B G)) with rho_A = G Var_group / g^2 from the
    exact group moments (kappa_A = 1 / |g| makes k / ((1 - beta1) kappa_A) = the x step)."""
    config = BanditConfig(lr=lr, momentum=0.9, optimizer="adam", group_size=group,
                          prompts=prompts)
    run = simulate_bandit(config, steps=400, seeds=2000, seed=3, x0=0.0)
    x = run.x.mean(axis=1)
    mean, var = group_update_moments(0.0, config)
    rho = group * var / mean**2
    k = compiled("adam_stiffness_noise_ratio")(lr, 0.9, 1.0, rho, prompts, group)
    return float((x[400] - x[200]) / 200), float(k / (1 - 0.9))


@pytest.mark.parametrize(("prompts", "group"), [(1, 2), (2, 2), (1, 4), (4, 8)])
def test_adam_step_against_the_bandit_simulation(prompts, group):
    measured, predicted = _adam_velocity(1e-3, prompts, group)
    assert measured == pytest.approx(predicted, rel=0.05)


def test_adam_step_grows_with_b_g_where_noise_dominates_and_scales_with_lr():
    small, _ = _adam_velocity(1e-3, 1, 2)
    large, _ = _adam_velocity(1e-3, 4, 8)
    assert large > 1.25 * small  # noise-dominated at B G = 2: the step grows with B G
    double, _ = _adam_velocity(2e-3, 1, 2)
    assert double / small == pytest.approx(2.0, rel=0.05)  # tau ~ 1 / lr


def test_finite_group_drift_factor_is_the_share_of_informative_groups(reg):
    """D = 1 - p^G - (1-p)^G against the share of simulated groups with mixed rewards."""
    factor = reg["finite_group_drift_factor"].expr
    assert sp.simplify(factor.subs(sym.G, 2) - 2 * sym.p * (1 - sym.p)) == 0
    rng = np.random.default_rng(3)
    for group, p in ((2, 0.3), (4, 0.35), (8, 0.5), (16, 0.2)):
        successes = rng.binomial(group, p, size=200_000)
        mixed = np.mean((successes > 0) & (successes < group))
        assert compiled("finite_group_drift_factor")(group, p) == pytest.approx(mixed, abs=0.005)


def test_finite_group_stiffnesses_and_their_limits(reg):
    drift = reg["finite_group_drift_factor"].expr
    sgd = reg["sgd_stiffness_finite_group"].expr
    assert sp.simplify(sgd - sym.eta * sym.kappa * drift) == 0
    adam = reg["adam_stiffness_finite_group"].expr
    share = sp.Symbol("D", positive=True)
    in_share = adam.subs(drift, share)
    # every group informative: the noise-ratio form of section 9
    assert sp.simplify(in_share.subs(share, 1) - reg["adam_stiffness_noise_ratio"].expr) == 0
    # signal-dominated: Adam normalises the factor away (G-invariant again)
    assert sp.simplify(in_share.subs(sym.rho_A, 0) - reg["adam_stiffness_signal_limit"].expr) == 0
    # noise-dominated: the informative samples D B G count
    n = sp.Symbol("n", positive=True)
    noise = sym.eta * (1 - sym.beta1) * sym.kappa_A * sp.sqrt(share * n / sym.rho_A)
    ratio = sp.simplify((in_share / noise).subs(sym.B, n / sym.G))
    assert sp.limit(ratio, n, 0) == 1
    values = compiled("adam_stiffness_finite_group")(1e-3, 0.9, 2.0, 50.0, 8, np.array([2, 4, 8]),
                                                     0.3)
    assert np.all(np.diff(values) > 0)  # at fixed B, more completions: fewer degenerate groups


# --- the sampling noise on the mean path ---------------------------------------------------
def test_split_forms_reduce_to_the_b_g_forms(reg):
    split = reg["adam_stiffness_split"].expr
    assert sp.simplify(split.subs({sym.rho_p: 0, sym.rho_c: sym.rho_A})
                       - reg["adam_stiffness_noise_ratio"].expr) == 0
    variance = reg["sampling_variance_split"].expr
    assert sp.simplify(variance.subs(sym.sigma_p2, 0) - sym.sigma_c2 / (sym.B * sym.G)) == 0
    # where the between-prompt part dominates the step grows like sqrt(B), not with G
    noisy = split.subs(sym.rho_c, 0)
    assert sym.G not in noisy.free_symbols
    n = sp.Symbol("n", positive=True)
    assert sp.limit(noisy.subs(sym.B, n) / sp.sqrt(n), n, 0) == \
        sym.eta * (1 - sym.beta1) * sym.kappa_A / sp.sqrt(sym.rho_p)


def test_noise_drag_scalings(reg):
    drag = reg["sgd_noise_drag"].expr
    assert drag.subs({sym.sigma_p2: 0, sym.sigma_c2: 0}) == 0
    assert sp.simplify(sp.diff(sp.log(drag), sym.eta) * sym.eta) == 2  # like lr^2
    assert sp.simplify(sp.diff(sp.log(drag), sym.B) * sym.B) == -1  # like 1/B
    shift = reg["sgd_noise_plateau_shift"].expr
    assert sp.simplify(sp.diff(sp.log(shift), sym.eta) * sym.eta) == 1  # the plateau falls ~ lr
    adam = reg["adam_noise_drag"].expr
    # noise-dominated Adam: the drag no longer depends on B or G (the step is noise-normalised)
    big = sp.Symbol("big", positive=True)
    saturated = sp.limit(adam.subs({sym.rho_p: big, sym.rho_c: big}), big, sp.oo)
    assert sym.B not in saturated.free_symbols and sym.G not in saturated.free_symbols
    assert sp.simplify(saturated - sym.h_noise * sym.eta**2 * (1 - sym.beta1)
                       / (2 * (1 + sym.beta1))) == 0


@pytest.mark.parametrize("prompts", [1, 2])
def test_sgd_noise_drag_against_the_bandit(prompts):
    """One SGD step of the two-arm bandit from x = 1 (p = 0.73, where the reward is concave):
    the mean reward after the step falls short of the reward of the mean step by
    (1/2) |J''| lr^2 Var(g_step), the derivation with sigma_p^2 = 0 (all prompts alike) and
    sigma_c^2 = G Var_group."""
    x, lr, group, seeds = 1.0, 0.5, 4, 400_000
    config = BanditConfig(lr=lr, momentum=0.0, group_size=group, prompts=prompts)
    mean, var = group_update_moments(x, config)
    run = simulate_bandit(config, steps=1, seeds=seeds, seed=1, x0=x)
    sigmoid = lambda v: 1.0 / (1.0 + np.exp(-v))  # noqa: E731
    p = sigmoid(x)
    curvature = -p * (1 - p) * (1 - 2 * p)  # h_noise = -J''(x) > 0
    measured = float(np.mean(run.p[1]) - sigmoid(x + lr * mean))
    error = float(np.std(run.p[1]) / np.sqrt(seeds))
    predicted = compiled("sgd_noise_drag")(lr, 0.0, curvature, 0.0, group * var, prompts, group)
    assert measured < 0
    assert -measured == pytest.approx(predicted, abs=4 * error)
    assert error < 0.15 * predicted  # the check has the power to see the drag


def _adam_stream(prompts: int, group: int, *, steps: int = 60_000, seed: int = 0
                 ) -> tuple[float, float, float, float]:
    """Adam's moments on a synthetic gradient stream: each step the mean over B prompts of a
    prompt effect (sd sigma_p) plus the mean of G completion deviations (sd sigma_c)."""
    rng = np.random.default_rng(seed)
    g, sigma_p, sigma_c, beta1, beta2 = 0.3, 0.8, 2.0, 0.9, 0.999
    step = (g + rng.normal(0, sigma_p, (steps, prompts)).mean(axis=1)
            + rng.normal(0, sigma_c, (steps, prompts, group)).mean(axis=(1, 2)))
    m = v = 0.0
    ms, vs = np.empty(steps), np.empty(steps)
    for n, value in enumerate(step):
        m = beta1 * m + (1 - beta1) * value
        v = beta2 * v + (1 - beta2) * value**2
        ms[n], vs[n] = m, v
    keep = slice(steps // 4, None)  # past the bias-correction transient
    return float(np.mean(vs[keep])), float(np.var(ms[keep] / np.sqrt(vs[keep]))), g, \
        float(compiled("adam_second_moment_split")(g, sigma_p**2, sigma_c**2, prompts, group))


@pytest.mark.parametrize(("prompts", "group"), [(2, 8), (8, 2)])
def test_adam_second_moment_split_and_step_noise_against_simulation(prompts, group):
    v_measured, step_var, g, v_predicted = _adam_stream(prompts, group)
    assert v_measured == pytest.approx(v_predicted, rel=0.05)
    # Var(m / sqrt(v)) = (1 - beta1) / (1 + beta1) Var(g_step) / v_hat: the Adam drag's step noise
    noise = v_predicted - g**2
    assert step_var == pytest.approx((1 - 0.9) / (1 + 0.9) * noise / v_predicted, rel=0.1)
    drag = compiled("adam_noise_drag")(1.0, 0.9, 2.0, 0.8**2 / g**2, 2.0**2 / g**2, prompts, group)
    assert drag == pytest.approx(step_var, rel=0.1)  # h = 2, lr = 1: the drag is Var(step)
