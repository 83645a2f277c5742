"""Settling of the heavy-ball map into a band, and the pole-stiffness relation it rests on."""

from __future__ import annotations

import math

import numpy as np
import pytest

from grpodyn.ground import InputError
from grpodyn.numerics.advise import critical_relaxation_steps, stiffness_of_relaxation
from grpodyn.numerics.compiled import compiled
from grpodyn.numerics.settling import (
    band_horizon,
    settling_steps,
    settling_stiffness,
    step_response,
)


def test_pole_stiffness_derivation_and_numerics_agree():
    import sympy as sp

    from grpodyn.theory import get, sym
    from grpodyn.theory.regimes import characteristic_polynomial

    k_tau = get("pole_stiffness").expr
    root = characteristic_polynomial().subs({sym.k: k_tau, sym.z: sp.exp(-1 / sym.tau)})
    assert sp.simplify(root) == 0  # exp(-1/tau) is a root at that stiffness
    for beta, tau in ((0.0, 3.0), (0.5, 4.0), (0.9, 30.0), (0.95, 500.0)):
        k = stiffness_of_relaxation(tau=tau, momentum=beta)
        assert k == pytest.approx(float(k_tau.subs({sym.beta: beta, sym.tau: tau})),
                                  rel=1e-9)
        dominant = max(abs(np.roots([1.0, -(1.0 + beta - k), beta])))
        assert dominant == pytest.approx(math.exp(-1.0 / tau), rel=1e-9)


def test_step_response_is_the_registry_map_from_rest():
    beta, k = 0.9, np.array([0.002, 0.05])
    x = step_response(momentum=beta, stiffness=k, steps=5)
    assert x.shape == (2, 6)
    np.testing.assert_array_equal(x[:, 0], 1.0)
    np.testing.assert_allclose(x[:, 1], 1.0 - k)  # at rest: the first step is the force alone
    np.testing.assert_allclose(x[:, 2], x[:, 1] + beta * (x[:, 1] - 1.0) - k * x[:, 1])


def test_settling_steps_match_the_response_far_beyond_it():
    beta, band = 0.8, 0.1
    k = np.array([0.003, 0.0279, 0.08, 0.3, 1.0, 3.0, 3.5])  # over-, critically, under-damped, flip
    found = settling_steps(momentum=beta, stiffness=k, band=band)
    x = step_response(momentum=beta, stiffness=k, steps=4000)
    outside = np.abs(x) > band
    brute = np.array([np.nonzero(row)[0][-1] + 1 for row in outside])
    np.testing.assert_array_equal(found, brute)
    assert np.all(np.abs(x[0, found[0]:]) <= band) and abs(x[0, found[0] - 1]) > band


def test_band_horizon_bounds_the_envelope():
    for r in (0.0, 0.3, 0.9, 0.995):
        h = int(band_horizon(r, 0.1))
        t = np.arange(h, h + 20000)
        assert np.all((2 * t + 1) * r**t <= 0.1 + 1e-12)


def test_settling_stiffness_is_the_least_with_the_fewest_steps():
    beta, band = 0.5, 0.1
    out = settling_stiffness(momentum=beta, band=band)
    k_c, k_flip = (1 - math.sqrt(beta)) ** 2, (1 + math.sqrt(beta)) ** 2
    dense = np.linspace(k_c / 100, k_flip, 20001)
    steps = settling_steps(momentum=beta, stiffness=dense, band=band)
    assert out["steps"] == steps.min()
    least = dense[np.argmax(steps == steps.min())]
    assert out["stiffness"] <= least and out["stiffness"] == pytest.approx(least, rel=1e-3)
    assert int(settling_steps(momentum=beta, stiffness=out["stiffness"], band=band)) \
        == out["steps"]
    assert out["critical_steps"] == int(settling_steps(momentum=beta, stiffness=k_c, band=band))
    assert out["steps"] < out["critical_steps"]  # an overshoot within the band is faster


def test_without_momentum_one_step_into_the_band():
    # beta = 0: x_1 = 1 - k, so the least k that lands in the band at once is 1 - band
    out = settling_stiffness(momentum=0.0, band=0.1)
    assert out["steps"] == 1 and out["stiffness"] == pytest.approx(0.9, rel=1e-6)


@pytest.mark.parametrize("band", [0.1, 0.02])
def test_continuous_limit_is_the_damping_where_the_overshoot_is_the_band(band):
    # a continuous second-order step response settles soonest where its overshoot
    # exp(-pi zeta / sqrt(1 - zeta^2)) equals the band: zeta = 0.591 for 10%, 0.780 for 2%
    beta = 0.995
    out = settling_stiffness(momentum=beta, band=band)
    zeta = float(compiled("damping_ratio")(beta, out["stiffness"]))
    assert zeta == pytest.approx(-math.log(band) / math.hypot(math.pi, math.log(band)),
                                 abs=2e-3)
    assert out["stiffness"] > out["critical_stiffness"]


def test_at_momentum_0_9_it_settles_three_times_sooner_than_critical_damping():
    out = settling_stiffness(momentum=0.9)
    assert out["steps"] == 26 and out["critical_steps"] == 74
    assert out["stiffness"] / out["critical_stiffness"] == pytest.approx(2.81, abs=0.01)
    assert critical_relaxation_steps(0.9) < out["critical_steps"]


def test_bad_input_is_refused():
    with pytest.raises(InputError, match="band"):
        settling_stiffness(momentum=0.9, band=1.5)
    with pytest.raises(InputError, match="stiffness"):
        settling_steps(momentum=0.9, stiffness=4.0)
    with pytest.raises(InputError, match="momentum"):
        settling_stiffness(momentum=1.0)
