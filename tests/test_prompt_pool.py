"""The Beta pool of prompts (docs/theory.md section 7): theory against Monte Carlo, estimator."""

from __future__ import annotations

import numpy as np
import pytest

from grpodyn.ground import InputError
from grpodyn.numerics.compiled import compiled
from grpodyn.numerics.prompt_pool import (
    drift_loss,
    failed_group_share,
    fit_prompt_pool,
    fit_prompt_pool_extremes,
    group_range_chance,
    read_group_extremes,
    zero_std_share,
    zero_std_share_lower_bound,
)

CASES = [(0.6, 0.9, 8, 16), (2.0, 3.0, 4, 8), (0.3, 0.2, 2, 32), (5.0, 1.0, 16, 4)]


@pytest.mark.parametrize(("a", "b", "G", "B"), CASES)
def test_pool_statistics_match_monte_carlo(a: float, b: float, G: int, B: int) -> None:
    """Match the Beta pool statistics against Monte Carlo."""
    rng = np.random.default_rng(11)
    steps = 20_000
    p = rng.beta(a, b, size=(steps, B))
    rewards = rng.random((steps, B, G)) < p[..., None]
    successes = rewards.sum(axis=2)
    zero = (successes == 0) | (successes == G)
    se = np.sqrt(0.25 / (steps * B))  # binomial s.e. bound of a share
    assert abs(zero.mean() - compiled("prompt_pool_zero_std_share")(G, a, b)) < 5 * se
    assert abs((successes == 0).mean()
               - compiled("prompt_pool_failed_group_share")(G, a, b)) < 5 * se
    assert abs(rewards.mean() - compiled("prompt_pool_mean_reward")(a, b)) < 5 * se
    within = rewards.var(axis=2, ddof=1).mean()
    assert within == pytest.approx(compiled("prompt_pool_within_group_variance")(a, b),
                                   rel=0.02)
    batch = rewards.reshape(steps, B * G).var(axis=1, ddof=1).mean()
    assert batch == pytest.approx(compiled("prompt_pool_batch_variance")(B, G, a, b), rel=0.02)


def test_zero_std_share_limits() -> None:
    """Check the zero-std share in its limits."""
    assert zero_std_share(0.3, 1e6, 8) == pytest.approx(0.3**8 + 0.7**8, rel=1e-3)
    assert zero_std_share(0.3, 1e-4, 8) == pytest.approx(1.0, abs=1e-3)
    assert failed_group_share(0.3, np.inf, 4) == pytest.approx(0.7**4)


def test_fit_recovers_the_concentration_within_its_interval() -> None:
    """Fit recovers the concentration within its interval."""
    rng = np.random.default_rng(3)
    hits = 0
    for _ in range(40):
        p = rng.beta(1.2, 0.8, size=(60, 16))
        s = rng.binomial(8, p)
        pool = fit_prompt_pool(s.mean(axis=1) / 8, ((s == 0) | (s == 8)).mean(axis=1),
                               group_size=8)
        assert pool.status == "estimated"
        hits += pool.low <= 2.0 <= pool.high
    assert hits >= 34  # a 95% interval: 38 of 40 expected, 34 is its binomial 1st percentile


def test_fit_statuses_and_bad_input() -> None:
    """Give the fit's statuses and refuse bad input."""
    flat = np.full(10, 0.5)
    assert fit_prompt_pool(flat, np.full(10, 0.0), group_size=8).status == "homogeneous"
    every = fit_prompt_pool(flat, np.full(10, 1.0), group_size=8)
    assert every.status == "deterministic" and every.point_phi <= 1e-3  # not an infinite bound
    assert fit_prompt_pool(np.zeros(10), np.ones(10), group_size=8).status == "undetermined"
    with pytest.raises(InputError, match="at least 2 steps"):
        fit_prompt_pool(flat[:1], flat[:1], group_size=8)
    with pytest.raises(InputError, match="not a success rate"):
        fit_prompt_pool(flat * 4, flat, group_size=8)
    with pytest.raises(InputError, match="group_size"):
        fit_prompt_pool(flat, flat, group_size=1)


def test_drift_loss() -> None:
    """Check the share of the drift lost to the group size."""
    # G = 2, homogeneous p = 1/2: half the groups carry U = sqrt(1/2) sqrt(1/4) (eps aside)
    expected = 1 - 0.5 * np.sqrt(0.5) * 0.5 / 0.5
    assert drift_loss(0.5, np.inf, 2) == pytest.approx(expected, abs=1e-3)
    losses = [drift_loss(0.3, 2.0, g) for g in (2, 4, 8, 16, 64)]  # larger G loses less
    assert all(x > y for x, y in zip(losses[:-1], losses[1:], strict=True))
    assert losses[-1] < 0.05


def test_a_share_just_above_the_homogeneous_limit_is_homogeneous() -> None:
    """Call a share between the phi = inf limit and its value at the largest phi homogeneous.

    Such a share made the inversion fail (both ends of its bracket on one side: a ValueError
    from brentq on a fresh pool run); it cannot be told from identical prompts.
    """
    m, g = 0.3, 8
    exact, resolved = zero_std_share(m, np.inf, g), zero_std_share(m, 1e4, g)
    assert exact < resolved
    share = 0.5 * (exact + resolved)
    fit = fit_prompt_pool(np.full(10, m), np.full(10, share), group_size=g)
    assert fit.status == "homogeneous" and fit.point_phi == np.inf


def test_entropy_ratio_bound_is_the_smallest_kept_spread_ratio() -> None:
    """Bound the answer-entropy ratio of a Beta pool that keeps its spread.

    E[h(p)] over Beta(m phi, (1-m) phi) in closed form (digamma, the theory's first step) moves
    monotonically with phi between its two limits, so the generated bound (the smaller limit)
    is the minimum over phi; the closed form matches Monte Carlo.
    """
    from scipy.special import digamma

    from grpodyn.numerics.prompt_pool import entropy_ratio_bound

    def mean_entropy(m: float, phi: np.ndarray) -> np.ndarray:
        return (digamma(phi + 1) - m * digamma(m * phi + 1)
                - (1 - m) * digamma((1 - m) * phi + 1))

    rng = np.random.default_rng(3)
    p = rng.beta(0.7, 1.9, size=400_000)
    h = -(p * np.log(p) + (1 - p) * np.log1p(-p))
    assert abs(h.mean() - mean_entropy(0.7 / 2.6, np.array(2.6))) < 5 * h.std() / 630
    phis = np.logspace(-4, 5, 300)
    for start in (0.05, 0.3, 0.5, 0.62, 0.9):
        for end in (0.1, 0.45, 0.7, 0.93, 0.99):
            ratio = mean_entropy(end, phis) / mean_entropy(start, phis)
            steps = np.diff(ratio)
            assert np.all(steps >= -1e-9) or np.all(steps <= 1e-9)
            assert ratio.min() >= entropy_ratio_bound(start, end) - 1e-6
            assert ratio.min() <= entropy_ratio_bound(start, end) + 2e-3
    assert entropy_ratio_bound(0.4, 0.85) == pytest.approx(0.85 * 0.15 / 0.24)


def _verl_batches(a: float, b: float, group_size: int, batch: int, steps: int,
                  rng: np.random.Generator) -> tuple[np.ndarray, ...]:
    """Steps of a Beta(a, b) pool: rewards, successes per group, verl's advantage extremes."""
    p = rng.beta(a, b, size=(steps, batch))
    rewards = (rng.random((steps, batch, group_size)) < p[..., None]).astype(float)
    mean = rewards.mean(axis=2, keepdims=True)
    std = rewards.std(axis=2, ddof=1, keepdims=True)
    advantage = (rewards - mean) / (std + 1e-6)  # verl's compute_grpo_outcome_advantage
    return (rewards.mean(axis=(1, 2)), rewards.sum(axis=2), advantage.max(axis=(1, 2)),
            advantage.min(axis=(1, 2)))


def test_advantage_extremes_reveal_the_groups_and_their_law() -> None:
    """Read each step's fewest and most successes from verl's extremes; match their law.

    Monte Carlo of a Beta pool: the decoded (S_lo, S_hi) are the true ones on every step, and
    the frequency of each pair and of the degenerate batch (max = min = 0) match the
    inclusion-exclusion of ``prompt_pool_batch_extremes_within`` within 5 binomial s.e.;
    the degenerate batch has probability (zero-std share)^B.
    """
    rng = np.random.default_rng(21)
    group_size, batch, steps, a, b = 6, 4, 40_000, 0.4, 0.3
    _, successes, top, bottom = _verl_batches(a, b, group_size, batch, steps, rng)
    s_lo, s_hi, read = read_group_extremes(top, bottom, group_size=group_size)
    assert read.all()
    spread = (successes > 0) & (successes < group_size)
    true_lo = np.where(spread, successes, group_size + 1).min(axis=1)
    true_hi = np.where(spread, successes, -1).max(axis=1)
    none = ~spread.any(axis=1)
    assert np.array_equal(s_lo[~none], true_lo[~none])
    assert np.array_equal(s_hi[~none], true_hi[~none])
    assert np.all(s_lo[none] == 1) and np.all(s_hi[none] == 0)
    within = compiled("prompt_pool_batch_extremes_within")
    phi = a + b

    def f(i: int, j: int) -> float:
        chance = group_range_chance(i, j, group_size=group_size, mean=a / phi, phi=phi)
        return float(within(batch, chance))

    share = compiled("prompt_pool_zero_std_share")(group_size, a, b)
    assert f(1, 0) == pytest.approx(share**batch, rel=1e-12)
    for i in range(1, group_size):
        for j in range(i, group_size):
            expected = f(i, j) - f(i + 1, j) - f(i, j - 1) + f(i + 1, j - 1)
            seen = np.mean((s_lo == i) & (s_hi == j))
            assert abs(seen - expected) < 5 * np.sqrt(expected * (1 - expected) / steps) + 1e-4
    assert abs(none.mean() - share**batch) < 5 * np.sqrt(share**batch / steps)


def test_extremes_that_no_binary_group_gives_are_not_read() -> None:
    """Leave unread the steps whose extremes no binary group of G gives (e.g. a wrong G)."""
    _, _, read = read_group_extremes(np.array([1.3, np.nan, 0.0]), np.array([-0.7, -1.0, 0.0]),
                                     group_size=8)
    assert list(read) == [False, False, True]
    assert fit_prompt_pool_extremes(np.full(10, 0.5), np.full(10, 1.3), np.full(10, -0.7),
                                    group_size=8, batch=16) is None


def test_extremes_fit_recovers_the_concentration_within_its_interval() -> None:
    """Recover phi from the advantage extremes alone, inside its 95% interval.

    30 windows of 100 steps (G = 8, B = 32) at phi = 0.5 (a polarized pool, most groups
    without spread); a 95% interval covers 28.5 of 30 on average, 25 is its binomial 1st
    percentile. The fitted law's zero-std share lies between those at the interval's ends.
    """
    rng = np.random.default_rng(8)
    hits = 0
    for _ in range(30):
        reward, _, top, bottom = _verl_batches(0.3, 0.2, 8, 32, 100, rng)
        pool = fit_prompt_pool_extremes(reward, top, bottom, group_size=8, batch=32)
        assert pool is not None and pool.status == "estimated"
        hits += pool.low <= 0.5 <= pool.high
        # the share is monotone in phi: the fitted one lies between those of the interval
        assert (zero_std_share(pool.mean, pool.high, 8) <= pool.observed_share
                <= zero_std_share(pool.mean, pool.low, 8))
    assert hits >= 25


def test_zero_std_share_lower_bound_holds() -> None:
    """Bound the zero-std share from below by the degenerate batches, at its confidence.

    40 windows of 200 steps with z = 0.95, B = 16: the 95% lower bound stays below z in at
    least 36 (the binomial 1st percentile of 40 draws at 0.95 is 35); no degenerate batch
    bounds nothing; bad counts are refused.
    """
    rng = np.random.default_rng(4)
    z, batch = 0.95, 16
    below = sum(zero_std_share_lower_bound(int(rng.binomial(200, z**batch)), 200, batch=batch)
                <= z for _ in range(40))
    assert below >= 36
    assert zero_std_share_lower_bound(0, 50, batch=batch) == 0.0
    assert 0.9 < zero_std_share_lower_bound(50, 50, batch=batch) < 1.0
    with pytest.raises(InputError, match="degenerate"):
        zero_std_share_lower_bound(60, 50, batch=batch)
