"""Adam's stiffness (THEORY.md section 9): the sympy results, their limits, and the two-arm
bandit's Adam simulation (empirical/bandit/simulation.py) against the compiled formula."""

from __future__ import annotations

import numpy as np
import pytest
import sympy as sp

from grpodyn.empirical.bandit.simulation import BanditConfig, group_update_moments, simulate_bandit
from grpodyn.numerics.compiled import compiled
from grpodyn.theory import sym

# the derivations are read through the session registry (``reg``): building one with ``get``
# before the registry would change the registry's order, which test_compiled compares


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
