"""Fast formulations against the plain definitions they replace.

Each fast path is compared with a reference written here the slow, obvious way: the result must
be the same (integers exactly, floats to round-off).
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from grpodyn.empirical.bandit import lab
from grpodyn.empirical.bandit.simulation import (
    BanditConfig,
    _Engine,
    _TwoArmEngine,
    expected_update,
    group_update_moments,
    simulate_bandit,
)
from grpodyn.numerics import stability


def _staleness_max_by_bisection(beta: float, k: float) -> int | None:
    """The former algorithm: doubling then bisection on d with the Schur-Cohn test."""
    if not stability.staleness_stable(beta, k, 0):
        return None
    if not stability.staleness_stable(beta, k, 1):
        return 0
    lo, hi = 1, 2
    while stability.staleness_stable(beta, k, hi):
        lo, hi = hi, hi * 2
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (mid, hi) if stability.staleness_stable(beta, k, mid) else (lo, mid)
    return lo


def test_staleness_max_equals_schur_cohn_bisection():
    rng = np.random.default_rng(18)
    for _ in range(150):
        beta = float(rng.uniform(0, 0.97))
        k = float(10 ** rng.uniform(-2.3, np.log10(2 * (1 + beta)) - 0.01))
        assert stability.staleness_max(momentum=beta, stiffness=k) == \
            _staleness_max_by_bisection(beta, k), (beta, k)
    # the on-policy limits: None past 2(1 + beta), 0 when one step of lag already destabilises
    assert stability.staleness_max(momentum=0.5, stiffness=3.1) is None
    assert stability.staleness_max(momentum=0.0, stiffness=1.5) == \
        _staleness_max_by_bisection(0.0, 1.5)


def test_staleness_max_at_long_lags_is_fast_and_near_the_continuum_limit():
    import time

    start = time.perf_counter()
    d_max = stability.staleness_max(momentum=0.0, stiffness=1e-4)
    assert time.perf_counter() - start < 0.1  # was 14 s at tau = 2e4 (O(d^2) per test)
    # continuum delay equation x' = -k x(t - d): stable for k d < pi / 2
    assert d_max == pytest.approx(np.pi / 2 / 1e-4, rel=1e-3)
    with pytest.raises(stability.InputError, match="cap"):
        stability.staleness_max(momentum=0.0, stiffness=1e-4, cap=1000)


def _first_unstable_mixed_by_rebuilding(beta, kc, kl, cap):
    for refresh in range(1, cap + 1):
        if stability.mixed_refresh_radius(momentum=beta, stiffness_current=kc,
                                          stiffness_lagged=kl, refresh=refresh) >= 1 - 1e-10:
            return None if refresh == 1 else refresh
    return "cap"


@pytest.mark.parametrize("beta,kc,kl", [(0.0, 0.0, 0.05), (0.5, 0.01, 0.03), (0.9, 0.0, 0.02),
                                        (0.0, 0.02, 0.01), (0.3, 2.9, 0.0), (0.9, 0.01, 0.4)])
def test_incremental_mixed_refresh_equals_rebuilt_cycles(beta, kc, kl):
    try:
        fast = stability.first_unstable_mixed_refresh(momentum=beta, stiffness_current=kc,
                                                      stiffness_lagged=kl, cap=300)
    except stability.InputError:
        fast = "cap"
    assert fast == _first_unstable_mixed_by_rebuilding(beta, kc, kl, 300)


@pytest.mark.parametrize("kl_estimator", ["k3", "forward"])
def test_vectorised_enumeration_equals_scalar_calls(kl_estimator):
    config = BanditConfig(kl=0.6, kl_estimator=kl_estimator, x_ref=0.2, group_size=12)
    x = np.array([[-2.0, 0.1], [1.3, 4.0]])
    mean, variance = group_update_moments(x, config)
    assert mean.shape == variance.shape == (2, 2)
    for index in np.ndindex(x.shape):
        m, v = group_update_moments(float(x[index]), config)
        assert isinstance(m, float)
        assert mean[index] == pytest.approx(m, rel=1e-13, abs=1e-16)
        assert variance[index] == pytest.approx(v, rel=1e-12, abs=1e-16)


def test_transition_paths_equal_one_momentum_at_a_time():
    config = lab.DEFAULT_CONFIG
    momenta = np.array([0.2, 0.7, 0.95])
    x0, steps = 2.5, 60
    paths = lab._expected_paths(config, momenta, x0, steps)
    for column, beta in enumerate(momenta):
        xs = [x0]
        previous = x0
        for _ in range(steps):
            current = xs[-1]
            xs.append(current + beta * (current - previous)
                      + config.lr * expected_update(current, config))
            previous = current
        np.testing.assert_allclose(paths[:, column], xs, rtol=1e-13, atol=1e-15)


def test_table_driven_two_arm_engine_equals_per_group_formula_with_clipping():
    """The tabulated sums against the general K-arm engine, with clipped importance ratios."""
    config = BanditConfig(estimator="rloo", kl=0.3, group_size=6, prompts=5, clip=0.1)
    rng = np.random.default_rng(3)
    x = np.array([-1.0, 0.0, 0.4, 2.5])
    wins = rng.integers(0, 7, size=(4, 5))
    p_old = 1 / (1 + np.exp(-(x + np.array([0.5, -0.5, 0.05, -0.3]))))  # some ratios clip
    fast, fast_metrics = _TwoArmEngine(config, rng, 4).gradient(x, wins, p_old)
    general, general_metrics = _Engine(config, rng, 4).gradient(
        np.column_stack([x, np.zeros(4)]), np.stack([wins, 6 - wins], axis=-1),
        np.column_stack([p_old, 1 - p_old]))
    np.testing.assert_allclose(fast, general[:, 0], rtol=1e-12, atol=1e-15)
    for key, value in fast_metrics.items():
        np.testing.assert_allclose(value, general_metrics[key], rtol=1e-12, atol=1e-15)


def test_record_every_keeps_the_same_path_and_metrics():
    config = replace(lab.DEFAULT_CONFIG, momentum=0.5, staleness=3)
    every = simulate_bandit(config, steps=40, seeds=5, seed=2)
    sparse = simulate_bandit(config, steps=40, seeds=5, seed=2, record_every=4)
    np.testing.assert_array_equal(sparse.x, every.x[::4])
    for key, value in sparse.metrics.items():
        np.testing.assert_array_equal(value, every.metrics[key][3::4])


#: On-policy two-arm settings the fused numba run covers (heavy-ball SGD, no lag), and others
#: that go through the fused gradient alone (Adam, staleness, refresh) or the numpy path
#: (more than fast.MAX_PROMPTS groups).
FUSED_CONFIGS = [
    BanditConfig(lr=0.1, group_size=16, prompts=1, kl=0.5),
    # one group per seed: the single-pass kernel, with each KL form and none
    BanditConfig(lr=0.3, momentum=0.9, group_size=8, prompts=1, kl=0.1, kl_estimator="forward"),
    BanditConfig(lr=0.2, group_size=6, prompts=1, estimator="dr_grpo", x_ref=-1.0),
    BanditConfig(lr=40.0, momentum=0.9, group_size=2, prompts=1, kl=0.05),
    BanditConfig(lr=0.3, momentum=0.9, group_size=8, prompts=12, kl=0.1,
                 kl_estimator="forward"),
    BanditConfig(lr=0.2, group_size=6, prompts=40, estimator="dr_grpo", x_ref=-1.0),
    BanditConfig(lr=0.1, group_size=16, prompts=3, optimizer="adam", staleness=2,
                 estimator="rloo"),
    BanditConfig(lr=0.05, momentum=0.5, group_size=4, prompts=2, refresh=5, kl=0.2),
    BanditConfig(lr=0.05, group_size=4, prompts=200, refresh=3),
]


@pytest.mark.parametrize("config", FUSED_CONFIGS)
@pytest.mark.parametrize("record_every", [1, 7])
def test_bandit_runs_are_bit_identical_with_and_without_numba(config, record_every,
                                                              monkeypatch):
    pytest.importorskip("numba")
    from grpodyn.numerics import fast

    runs = {}
    for enabled in (True, False):
        monkeypatch.setattr(fast, "ENABLED", enabled)
        # 400 steps x 300 seeds: above the work from which the kernel is used
        runs[enabled] = simulate_bandit(config, steps=400, seeds=300, seed=11,
                                        record_every=record_every)
    fused, plain = runs[True], runs[False]
    assert np.array_equal(fused.x, plain.x) and np.array_equal(fused.p, plain.p)
    assert list(fused.metrics) == list(plain.metrics)
    for key in plain.metrics:
        assert np.array_equal(fused.metrics[key], plain.metrics[key]), key


def test_fused_gradient_refuses_too_many_groups_and_numba_can_be_switched_off():
    pytest.importorskip("numba")
    import subprocess
    import sys

    from grpodyn.numerics import fast

    wins = np.zeros((2, fast.MAX_PROMPTS + 1), dtype=np.int64)
    with pytest.raises(ValueError, match="at most 128 prompts"):
        fast.two_arm_gradient(np.zeros(2), np.full(2, 0.5), wins, np.zeros(5), np.zeros(5), 4,
                              p_ref=0.5, kl=0.0, forward=False, x_ref=0.0)
    code = "from grpodyn.numerics import fast; print(fast.ENABLED)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         env={**__import__("os").environ, "GRPODYN_NO_NUMBA": "1"}, check=True)
    assert out.stdout.strip() == "False"


@pytest.mark.parametrize("zeta", [0.3, 1.0, 1.0 + 1e-9, 2.0, 50.0])
def test_blocked_trajectory_equals_the_whole_array_formulas(zeta):
    """The in-place forms run block by block; the values equal the one-shot formulas."""
    from grpodyn.numerics import trajectory as tr

    t = np.linspace(0.0, 3000.0, 3 * tr._BLOCK + 17)  # several blocks and a partial one
    e0, v0, omega0 = 0.6, 0.01, 0.05
    gamma = zeta * omega0
    s2 = omega0**2 * (zeta - 1.0) * (zeta + 1.0)
    slope = v0 + gamma * e0
    got = tr.closed_form(t, e0, v0, zeta, omega0)
    if s2 > 0:
        whole = tr._overdamped(t, e0, slope, gamma, s2, omega0)
    elif s2 < 0:
        whole = tr._underdamped(t, e0, slope, gamma, s2, omega0)
    else:
        whole = tr._near_critical(t, e0, slope, gamma, s2, omega0)
    far = t > np.sqrt(tr._SERIES_CUTOFF / abs(s2)) if s2 != 0 else np.ones(t.size, bool)
    # the in-place forms group a product differently (slope / wd first): round-off, judged
    # against the curve's scale near the oscillation's zeros
    np.testing.assert_allclose(got[far], whole[far], rtol=1e-12,
                               atol=1e-15 * np.abs(whole).max())
    assert np.all(np.isfinite(got))


def _granularity_one_n_at_a_time(values: np.ndarray, n_max: int = 4096,
                                 eps: float = 2e-6) -> int | None:
    """The former loop: each N from 1 to n_max tested on every value."""
    v = values[np.isfinite(values)]
    if v.size < 5:
        return None
    for n in range(1, n_max + 1):
        scaled = v * n
        if np.all(np.abs(scaled - np.round(scaled)) <= n * eps):
            return n if n > 1 else None
    return None


def test_granularity_screen_finds_the_same_denominator():
    """The screened search returns the N of the plain loop: multiples of 1/N, rounded, NaN."""
    from grpodyn.empirical.logs.infer import granularity

    rng = np.random.default_rng(0)
    for case in range(150):
        size = int(rng.integers(3, 300))
        d = int(rng.integers(1, 5000)) if case % 5 == 1 else int(rng.integers(1, 300))
        values = rng.integers(0, d + 1, size) / d
        if case % 5 == 0:
            values = rng.uniform(0, 1, size)  # not a multiple of anything
        elif case % 5 == 2:
            values = values.astype(np.float32).astype(float)  # float32 means
        elif case % 5 == 3:
            values[int(rng.integers(0, size))] = np.nan
        elif case % 5 == 4:
            values = np.round(values, 4)  # printed with four digits
        if case % 7 == 0:
            values[-1] = 0.5 + 1e-3  # only a value after the screened head breaks it
        assert granularity(values) == _granularity_one_n_at_a_time(values), case


def test_two_point_jacobian_equals_scipy_approx_derivative_bit_for_bit():
    """fit._two_point against scipy's 2-point scheme: inside, on and near the bounds."""
    from scipy.optimize._numdiff import approx_derivative

    from grpodyn.numerics.fit import _two_point

    rng = np.random.default_rng(1)
    t = np.linspace(0, 10, 200)

    def fun(x: np.ndarray) -> np.ndarray:
        return np.exp(-0.1 * t * np.tanh(x[0])) * np.cos(np.tanh(x[1]) * t) + x[-1] * t

    for _ in range(500):
        p = int(rng.integers(2, 4))
        lower = -rng.uniform(0, 1, p) * 10 ** rng.uniform(-8, 3, p)
        upper = lower + 10 ** rng.uniform(-12, 3, p)
        lower[rng.uniform(size=p) < 0.2] = -np.inf
        upper[rng.uniform(size=p) < 0.2] = np.inf
        lo, hi = np.maximum(lower, -7.0), np.minimum(upper, 7.0)
        share = rng.choice([0.0, 1.0, 0.5, 1e-9, 1 - 1e-9], p)
        x = np.minimum(np.maximum(lo + share * (hi - lo), lower), upper)
        f0 = fun(x)
        theirs = approx_derivative(fun, x, method="2-point", f0=f0, bounds=(lower, upper))
        ours = _two_point(fun, x, f0, lower, upper)
        assert np.array_equal(ours, theirs) and ours.flags.f_contiguous == theirs.flags.f_contiguous
        assert np.array_equal(_two_point(fun, x, None, lower, upper), ours)
