"""A fall that is one relaxation from the first steps is not an instability.

A stable map settles to its fixed point fastest at the start and slower and slower; an unstable
map's departure grows. Where the log holds no KL or entropy to say whether the policy moved, a
reward that falls from its first steps along one exponential curve within the noise is not
flagged ``dynamical_instability`` (it was, at score 1, with the remedy to lower the lr), while a
plateau followed by a sudden fall, or a fall that accelerates, still is.
"""

from __future__ import annotations

import numpy as np
import pytest

from grpodyn.empirical.diagnostics.diagnose import diagnose
from grpodyn.empirical.diagnostics.instability import relaxation_time
from grpodyn.empirical.logs.loaders import Run

STEPS = np.arange(1, 301, dtype=float)


def _run(reward: np.ndarray, **metrics: np.ndarray) -> Run:
    return Run(source="synthetic", format="synthetic", steps=STEPS[: reward.size],
               reward=reward, metrics=dict(metrics))


def _noisy(curve: np.ndarray, sigma: float, seed: int) -> np.ndarray:
    return curve + sigma * np.random.default_rng(seed).standard_normal(curve.size)


@pytest.mark.parametrize("tau", [30.0, 80.0, 200.0])
@pytest.mark.parametrize("sigma", [0.01, 0.05])
def test_an_exponential_fall_from_the_start_is_a_declining_run_not_an_instability(
        tau: float, sigma: float) -> None:
    r = _noisy(0.2 + 0.6 * np.exp(-STEPS / tau), sigma, seed=int(tau))
    d = diagnose(_run(r))
    verdict = d.modes["dynamical_instability"]
    assert not verdict.flag, verdict.evidence
    assert "exponential relaxation" in verdict.evidence
    assert d.state == "declining"
    assert d.primary is None


def test_relaxation_time_reads_the_time_constant_within_a_grid_step() -> None:
    r = _noisy(0.2 + 0.6 * np.exp(-STEPS / 60.0), 0.01, seed=3)
    tau = relaxation_time(STEPS, r, 0.01)
    assert 50.0 < tau < 72.0


@pytest.mark.parametrize("curve", [
    np.where(STEPS < 120, 0.8, 0.1),                            # a plateau, then a step down
    0.1 + 0.7 / (1 + np.exp((STEPS - 150) / 8)),                # a plateau, then a sigmoid down
    0.8 - 0.7 * (STEPS / 300) ** 3,                             # a fall that speeds up
    0.8 - 0.5 * STEPS / 300,                                    # a steady decline
])
def test_a_fall_that_grows_is_no_relaxation_and_stays_an_instability(curve: np.ndarray) -> None:
    r = _noisy(curve, 0.03, seed=7)
    assert np.isnan(relaxation_time(STEPS, r, 0.03))


def test_a_short_plateau_then_a_sudden_fall_is_still_flagged() -> None:
    """Its best level lies in the first window, so the relaxation test reads it, and rejects it."""
    r = _noisy(0.1 + 0.7 / (1 + np.exp((STEPS - 20) / 2)), 0.02, seed=11)
    verdict = diagnose(_run(r)).modes["dynamical_instability"]
    assert verdict.flag, verdict.evidence
    assert "relaxation" not in verdict.evidence


@pytest.mark.parametrize("tau", [5.0, 10.0])
def test_a_crash_within_the_first_window_is_no_relaxation(tau: float) -> None:
    """A fall that ends within a few logging intervals is a step: its shape is not resolved (the
    time constant under half the smoothing window, 15 steps here), so it stays a collapse. (One
    over in 3 steps is averaged into the first window's level and read as no collapse at all.)"""
    r = np.clip(_noisy(0.02 + 0.6 * np.exp(-(STEPS - 1) / tau), 0.01, seed=int(tau)), 0, 1)
    assert np.isnan(relaxation_time(STEPS, r, 0.01, shortest=15.0))
    verdict = diagnose(_run(r)).modes["dynamical_instability"]
    assert verdict.flag, verdict.evidence


def test_repeated_steps_do_not_break_the_relaxation_test() -> None:
    r = _noisy(0.2 + 0.6 * np.exp(-STEPS / 60.0), 0.01, seed=2)
    steps = np.repeat(STEPS[:150], 2)
    assert np.isfinite(relaxation_time(steps, r, 0.01))
    assert np.isnan(relaxation_time(np.full(300, 5.0), r, 0.01))  # one distinct step


def test_a_kl_that_never_grows_leaves_the_shape_to_decide_and_says_so() -> None:
    """A KL logged at zero (no KL penalty) gives no growth to read: the words say that, rather
    than that the log holds no KL."""
    r = _noisy(0.2 + 0.6 * np.exp(-STEPS / 60.0), 0.02, seed=4)
    verdict = diagnose(_run(r, kl=np.zeros(STEPS.size))).modes["dynamical_instability"]
    assert not verdict.flag, verdict.evidence
    assert "no growth of the KL or the entropy in the log" in verdict.evidence


def test_a_relaxation_with_the_entropy_up_threefold_is_still_an_instability() -> None:
    r = _noisy(0.2 + 0.6 * np.exp(-STEPS / 50.0), 0.02, seed=5)
    entropy = np.linspace(0.5, 2.5, STEPS.size)
    verdict = diagnose(_run(r, entropy=entropy)).modes["dynamical_instability"]
    assert verdict.flag, verdict.evidence
    assert "relaxation" not in verdict.evidence


def test_fluctuations_slower_than_the_logging_interval_fail_the_relaxation_test() -> None:
    rng = np.random.default_rng(13)
    slow = np.convolve(rng.standard_normal(STEPS.size + 19), np.ones(20) / 20, mode="valid")
    r = 0.2 + 0.6 * np.exp(-STEPS / 80.0) + 0.15 * slow + 0.01 * rng.standard_normal(STEPS.size)
    assert np.isnan(relaxation_time(STEPS, r, 0.01))
