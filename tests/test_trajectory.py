"""The stable closed-form trajectory against a 50-digit mpmath reference."""

from __future__ import annotations

import warnings

import mpmath
import numpy as np
import pytest

from grpodyn.numerics.compiled import compiled
from grpodyn.numerics.trajectory import gain_fraction_time, inflection_time, trajectory

mpmath.mp.dps = 50


def _reference(t, e0, v0, zeta, omega0) -> float:
    t, e0, v0, zeta, omega0 = (mpmath.mpf(float(x)) for x in (t, e0, v0, zeta, omega0))
    gamma = zeta * omega0
    s2 = omega0**2 * (zeta - 1) * (zeta + 1)
    s = mpmath.sqrt(s2) if s2 >= 0 else mpmath.sqrt(-s2) * 1j
    if s2 == 0:
        value = mpmath.exp(-gamma * t) * (e0 + (v0 + gamma * e0) * t)
    else:
        value = mpmath.exp(-gamma * t) * (e0 * mpmath.cosh(s * t)
                                          + (v0 + gamma * e0) * mpmath.sinh(s * t) / s)
    return float(mpmath.re(value))


def _envelope(t, e0, v0, zeta, omega0) -> float:
    return float(mpmath.exp(-mpmath.mpf(zeta) * omega0 * t)
                 * (abs(e0) + abs(v0 + zeta * omega0 * e0) * t + abs(e0)))


ZETAS = [0.05, 0.5, 0.99, 1 - 1e-8, 1 - 1e-12, 1.0, 1 + 1e-12, 1 + 1e-8, 1.01, 2.0, 30.0, 1e4]
TIMES = [0.0, 1e-3, 0.7, 3.0, 50.0, 1e3, 1e4, 1e6]


@pytest.mark.parametrize("zeta", ZETAS)
def test_matches_mpmath_through_critical_damping(zeta):
    worst = 0.0
    for omega0 in (1e-4, 1e-2, 0.3):
        for t in TIMES:
            for e0, v0 in [(1.0, 0.0), (-0.3, 0.02)]:
                with warnings.catch_warnings():
                    warnings.simplefilter("error")
                    value = float(trajectory(t, e0=e0, v0=v0, zeta=zeta, omega0=omega0))
                ref = _reference(t, e0, v0, zeta, omega0)
                if ref == 0.0 or abs(ref) < 1e-280:
                    assert abs(value) < 1e-270
                    continue
                scale = max(abs(ref), 1e-3 * _envelope(t, e0, v0, zeta, omega0))
                worst = max(worst, abs(value - ref) / scale)
    assert worst <= 1e-12


def test_agrees_with_compiled_unified_form_when_overdamped():
    t = np.linspace(0, 50, 11)
    np.testing.assert_allclose(trajectory(t, e0=0.7, v0=0.01, zeta=2.5, omega0=0.3),
                               compiled("trajectory")(t, 0.7, 0.01, 2.5, 0.3), rtol=1e-12)


def test_no_overflow_warning_for_long_horizons():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        values = trajectory(np.geomspace(1, 1e8, 50), e0=1.0, zeta=50.0, omega0=1.0)
    assert np.all(np.isfinite(values)) and values[-1] >= 0


def test_inflection_time_continuous_through_critical():
    z = np.array([1 - 1e-6, 1.0, 1 + 1e-6])
    t = inflection_time(zeta=z, omega0=0.5)
    np.testing.assert_allclose(t, 2.0, rtol=1e-5)
    over = inflection_time(zeta=3.0, omega0=0.5)
    np.testing.assert_allclose(over, compiled("inflection_time")(3.0, 0.5), rtol=1e-13)


def test_gain_fraction_time_tends_to_overdamped_formula():
    # large zeta: tau ln(1/(1-q)) + m/c; here omega0^2 = k/m, 2 zeta omega0 = c/m with m = 1
    zeta, omega0 = 40.0, 0.05
    c, k = 2 * zeta * omega0, omega0**2
    t_q = gain_fraction_time(0.9, zeta=zeta, omega0=omega0)
    assert abs(t_q - (c / k * np.log(10) + 1 / c)) / t_q < 1e-3


def test_reward_trajectory_flags_instability_instead_of_nan():
    from grpodyn.numerics.trajectory import reward_trajectory

    t = np.linspace(0, 5e4, 200)
    stable = reward_trajectory(t, r0=0.2, plateau=0.8, momentum=0.9, stiffness=0.01)
    assert not stable.unstable and stable.values[0] == pytest.approx(0.2)
    assert stable.values[-1] == pytest.approx(0.8)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        # lag 15 erodes all damping: c - k l_bar = 0.1 - 0.15 < 0
        lagged = reward_trajectory(t, r0=0.2, plateau=0.8, momentum=0.9, stiffness=0.01,
                                   mean_lag=15)
    assert lagged.unstable and not np.isnan(lagged.values).any()
    assert np.isinf(lagged.values[-1])


def test_series_stops_early_with_the_same_bits():
    """The near-critical series stops once its terms vanish: equal, bit for bit, to 12 terms."""
    from grpodyn.numerics.trajectory import _SERIES_CUTOFF, _series_cosh_sinc

    def twelve_terms(x):
        cosh_sum, sinc_sum = np.zeros_like(x), np.zeros_like(x)
        term_c, term_s = np.ones_like(x), np.ones_like(x)
        for j in range(12):
            cosh_sum += term_c
            sinc_sum += term_s
            term_c = term_c * x / ((2 * j + 1) * (2 * j + 2))
            term_s = term_s * x / ((2 * j + 2) * (2 * j + 3))
        return cosh_sum, sinc_sum

    rng = np.random.default_rng(3)
    for scale in 10.0 ** -np.arange(0, 17):
        x = rng.uniform(-_SERIES_CUTOFF, _SERIES_CUTOFF, 200) * scale
        for ours, reference in zip(_series_cosh_sinc(x), twelve_terms(x), strict=True):
            np.testing.assert_array_equal(ours, reference)
    for ours, reference in zip(_series_cosh_sinc(np.zeros(3)), twelve_terms(np.zeros(3)),
                               strict=True):
        np.testing.assert_array_equal(ours, reference)
