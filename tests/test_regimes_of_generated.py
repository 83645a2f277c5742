"""Every generated function in every regime: a finite value, or a clear refusal.

A derivation whose real-arithmetic form holds on part of the arguments' ranges declares that
domain; its generated (and exported) function refuses arguments outside it instead of returning
NaN. Every other function must be finite wherever its arguments are valid, in every regime.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from grpodyn.numerics import _generated
from grpodyn.numerics.compiled import compiled

from .points import POINTS

#: Values of the arguments that select regimes (damping, momentum, stiffness, probability ...).
REGIME_VALUES = {"zeta": [0.3, 1.0, 1.7], "beta": [0.0, 0.5, 0.95], "k": [1e-4, 0.05, 0.5, 2.5],
                 "p": [1e-3, 0.5, 1.0], "G": [2, 16, 2048, 7.5], "x": [-3.0, 0.0, 3.0],
                 "omega": [0.01, 1.0, 3.0], "K": [1, 3, 40], "d": [0, 1, 3],
                 "t": [0.0, 5.0, 1e4], "z": [-0.9, 0.9], "q": [0.1, 0.9, 1.0], "S": [0, 3],
                 "h": [0, 7, 2.5],
                 "w_s": [0.0, 0.5, 2.0]}
#: Values past a declared domain's edge that the regimes above do not reach, by function
#: (a momentum of 1 or more leaves no stiffness stable).
BEYOND = {"stiffness_max": {"beta": [1.0, 1.5]}}


def _combinations(name: str):
    args = _generated.SIGNATURES[name]
    values_of = {a: REGIME_VALUES.get(a, [POINTS[0][a]]) + BEYOND.get(name, {}).get(a, [])
                 for a in args}
    for combo in itertools.product(*(values_of[a] for a in args)):
        values = dict(zip(args, combo, strict=True))
        if "S" in values and "G" in values and values["S"] > values["G"]:
            continue
        yield values


def _domain_names() -> set[str]:
    from grpodyn.theory import registry

    return {name for name, d in registry().items() if d.domain is not None}


def test_derivations_with_a_domain():
    jacobians = {f"{model}_d_{p}" for model in ("trajectory", "trajectory_underdamped")
                 for p in ("e0", "v0", "zeta", "omega0")}
    assert {"trajectory", "trajectory_underdamped", "inflection_time", "discrete_damping_ratio",
            "spectral_peak_frequency", "grpo_update_mean_expansion",
            "grpo_update_variance_expansion", "power_law_d_exponent", "soft_pole",
            "two_mode_relaxation_time", "oscillation_momentum", "two_mode_effective_stiffness",
            "binomial_pmf", "grpo_update_mean", "grpo_update_variance", "bandit_drift_grpo",
            "bandit_drift_slope_grpo", "prompt_pool_successes_pmf", "slow_root",
            "gain_fraction_time", "staleness_stiffness_max_continuum", "stationary_variance",
            "stiffness_max",
            "autocorrelation", "prompt_pool_zero_std_share", "prompt_pool_failed_group_share",
                *jacobians} \
        == _domain_names()


@pytest.mark.parametrize("name", sorted(_generated.SIGNATURES))
def test_finite_inside_every_regime_or_refused(name):
    from grpodyn.theory import get

    domain = get(name).domain
    inside = outside = 0
    for values in _combinations(name):
        if domain is not None and not bool(domain.subs({s: values[s.name]
                                                        for s in get(name).args})):
            with pytest.raises(ValueError, match=f"{name}: defined only where"):
                compiled(name)(*values.values())
            outside += 1
            continue
        # a limit value is still a value: 1/0 = inf, and exp overflowing to inf in a logistic
        # 1 / (1 + exp(x)) or 1 / cosh(x)^2, which gives the limit 0
        with np.errstate(divide="ignore", over="ignore"):
            value = np.asarray(compiled(name)(*values.values()))
        assert value.dtype == bool or not np.isnan(value).any(), (name, values, value)
        inside += 1
    assert inside >= 1
    if domain is not None:
        assert outside >= 1  # the regime grid reaches outside every declared domain


def test_the_autocorrelation_is_real_and_finite_in_every_stable_regime():
    for values in _combinations("autocorrelation"):
        if values["k"] >= 2 * (1 + values["beta"]) or values["h"] != int(values["h"]):
            continue  # unstable: no stationary autocorrelation; a lag is whole
        with np.errstate(all="ignore"):  # numpy evaluates every branch of the Piecewise
            value = compiled("autocorrelation")(*(float(v) for v in values.values()))
        assert np.isrealobj(value) and np.isfinite(value), values


def test_trajectory_regimes_agree_with_the_stable_numerics():
    from grpodyn.numerics.trajectory import trajectory

    t = np.linspace(0, 80, 50)
    for zeta, name in ((0.4, "trajectory_underdamped"), (2.5, "trajectory")):
        np.testing.assert_allclose(compiled(name)(t, 0.7, 0.01, zeta, 0.3),
                                   trajectory(t, e0=0.7, v0=0.01, zeta=zeta, omega0=0.3),
                                   rtol=1e-11, atol=1e-15)
    np.testing.assert_allclose(compiled("trajectory_critical")(t, 0.7, 0.01, 0.3),
                               trajectory(t, e0=0.7, v0=0.01, zeta=1.0, omega0=0.3),
                               rtol=1e-12, atol=1e-15)
    with pytest.raises(ValueError, match="zeta > 1"):
        compiled("trajectory")(t, 0.7, 0.01, 0.4, 0.3)  # was NaN
    with pytest.raises(ValueError, match="< 700"):
        compiled("trajectory")(1e4, 0.7, 0.01, 2.5, 0.3)  # cosh overflows: was NaN (inf * 0)
