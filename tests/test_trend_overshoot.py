"""A stable run's overshoot is not a fall: the advice and the sweep read it apart from a collapse.

The map started from rest overshoots its plateau by a share OS of the gain and gives back
OS / (1 + OS) of the rise at its peak, under half wherever OS < 1 (docs/theory.md section 4);
a collapse gives back more, and a fall still under way may go on. Seeded synthetic runs: the
continuum oscillator's underdamped rise with noise, a collapse, a slow fall not yet past half.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

from grpodyn import advise_log, load_run, reward_trajectory
from grpodyn.empirical.logs.sweep_advice import fall_limit, fell
from grpodyn.empirical.logs.sweep_runs import SweepRun
from grpodyn.empirical.logs.trend import run_trend, series_trend, settled_overshoot
from grpodyn.ground import InputError
from grpodyn.numerics.advise import settling_target
from grpodyn.numerics.settling import first_overshoot, overshoot_stiffness, step_response

STEPS = np.arange(1.0, 201.0)


def _overshoot(stiffness: float, seed: int, noise: float = 0.01) -> np.ndarray:
    """Reward 0.2 -> 0.7 of the heavy ball at beta = 0.9, underdamped, with white noise."""
    path = np.asarray(reward_trajectory(STEPS, r0=0.2, plateau=0.7, momentum=0.9,
                                        stiffness=stiffness).values)
    return path + noise * np.random.default_rng(seed).standard_normal(STEPS.size)


def _collapse(seed: int) -> np.ndarray:
    """A rise to 0.7 by step 40, then back to 0.25."""
    path = np.where(STEPS < 40, 0.2 + 0.5 * STEPS / 40,
                    0.25 + 0.45 * np.exp(-(STEPS - 40) / 15))
    return path + 0.01 * np.random.default_rng(seed).standard_normal(STEPS.size)


def _falling(seed: int, rate: float = 0.002, noise: float = 0.01) -> np.ndarray:
    """A rise to 0.7 by step 40, held, then a steady fall from step 120 that has not given back
    half of the rise by the end."""
    path = np.where(STEPS < 40, 0.2 + 0.5 * STEPS / 40,
                    np.where(STEPS < 120, 0.7, 0.7 - rate * (STEPS - 120)))
    return path + noise * np.random.default_rng(seed).standard_normal(STEPS.size)


def _stopped(seed: int) -> np.ndarray:
    """A rise to 0.7 by step 40, held, a fall to 0.6 over steps 100-130, held again."""
    path = np.where(STEPS < 40, 0.2 + 0.5 * STEPS / 40,
                    np.where(STEPS < 100, 0.7, np.maximum(0.6, 0.7 - (STEPS - 100) / 300)))
    return path + 0.03 * np.random.default_rng(seed).standard_normal(STEPS.size)


def test_a_stable_maps_overshoot_stays_under_the_whole_rise_over_a_wide_range():
    """OS < 1 (so a give-back under half) from k_c to about 400 k_c at beta = 0.9; beyond that
    the oscillation overshoots by the whole gain, and a fall is read as one."""
    beta = 0.9
    critical = (1 - np.sqrt(beta)) ** 2
    inside = np.linspace(1.01 * critical, 1.1, 200)
    response = step_response(momentum=beta, stiffness=inside, steps=400)
    assert np.all(-response.min(axis=-1) < 1)
    assert -step_response(momentum=beta, stiffness=1.5, steps=400).min() > 1


@pytest.mark.parametrize("stiffness", [0.01, 0.02, 0.05])
@pytest.mark.parametrize("seed", [1, 2])
def test_an_overshoot_that_settled_is_overshot_not_fell(stiffness, seed):
    reward = _overshoot(stiffness, seed)
    trend = series_trend(STEPS, reward)
    assert trend.kind == "overshot", trend.text
    assert 0 < trend.overshoot < 1
    assert "overshot and settled" in trend.text
    assert not fell(STEPS, reward, None)


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_a_collapse_and_a_fall_under_way_stay_falls(seed):
    """Falls under way (a slow one in more noise, one that stopped within the quarter before the
    last: its last quarter lies below the one before) are not read as overshoots."""
    for reward in (_collapse(seed), _falling(seed), _falling(seed, 0.001, 0.03), _stopped(seed)):
        trend = series_trend(STEPS, reward)
        assert trend.kind == "fell", trend.text
        assert fell(STEPS, reward, None)


def test_only_a_fall_is_read_again():
    rising = run_trend(STEPS, 0.7 - 0.5 * np.exp(-STEPS / 30))
    assert settled_overshoot(rising, STEPS, 0.7 - 0.5 * np.exp(-STEPS / 30)) is rising


def test_a_sweep_whose_higher_lr_overshoots_bounds_no_limit():
    runs = [SweepRun(f"lr {lr:g}", STEPS, reward, {"optimizer": "sgd", "lr": lr})
            for lr, reward in ((0.01, _overshoot(0.005, 4, noise=0.02)),
                               (0.02, _overshoot(0.02, 5)))]
    limit = fall_limit(runs, optimizer="sgd")
    assert limit["lr"] is None and limit["fell"] == 0, limit["reason"]


def _jsonl(path, reward: np.ndarray, **extra) -> str:
    path.write_text("".join(json.dumps({"step": int(s), "reward": float(r), **extra}) + "\n"
                            for s, r in zip(STEPS, reward, strict=True)))
    return str(path)


def _map(multiple: float, seed: int, noise: float = 0.01) -> np.ndarray:
    """The exact map at beta = 0.9 and ``multiple`` k_c from rest, read as 0.2 -> 0.7."""
    x = step_response(momentum=0.9, stiffness=multiple * CRITICAL, steps=STEPS.size - 1)
    return 0.7 - 0.5 * x + noise * np.random.default_rng(seed).standard_normal(STEPS.size)


CRITICAL = (1 - np.sqrt(0.9)) ** 2


@pytest.mark.parametrize("beta", [0.5, 0.9])
def test_the_overshoot_grows_with_the_stiffness_and_inverts(beta):
    k_c = (1 - np.sqrt(beta)) ** 2
    k_flip = (1 + np.sqrt(beta)) ** 2
    grid = np.geomspace(1.001 * k_c, 0.999 * k_flip, 400)
    overshoot = first_overshoot(momentum=beta, stiffness=grid)
    # it grows, up to wiggles where the step of the first trough changes (under 1e-2 below an
    # overshoot of 0.7, larger where the ringing takes a few steps a period)
    assert np.all(np.diff(overshoot)[overshoot[1:] < 0.7] > -1e-2) and overshoot[-1] > 1
    assert overshoot[0] < 0.01
    for share in (0.05, 0.3, 0.8):
        k = overshoot_stiffness(momentum=beta, overshoot=share)
        assert first_overshoot(momentum=beta, stiffness=k) == pytest.approx(share, rel=1e-8)
        assert np.all(overshoot[grid < k * (1 - 1e-9)] < share)  # the least k that reaches it
    past_flip = np.linspace(k_flip, 2 * (1 + beta) * (1 - 1e-4), 20)  # the first trough is
    deepest = -step_response(momentum=beta, stiffness=past_flip, steps=20_000).min(axis=-1)
    assert first_overshoot(momentum=beta, stiffness=past_flip) == pytest.approx(deepest)
    assert overshoot_stiffness(momentum=beta, overshoot=50.0) is None  # no stable k gives it
    k_s = settling_target(beta)["stiffness"]  # the fastest settling overshoots within the band
    assert 0.05 < first_overshoot(momentum=beta, stiffness=k_s) <= 0.1
    with pytest.raises(InputError, match="momentum in"):
        overshoot_stiffness(momentum=0.0, overshoot=0.3)


def test_advice_on_an_overshoot_past_k_s_lowers_toward_it_and_says_why(tmp_path):
    advice = advise_log(load_run(_jsonl(tmp_path / "overshoot.jsonl", _overshoot(0.02, 1),
                                        learning_rate=1e-6)))
    tau = advice.basis["tau"]
    assert advice.basis["kind"] == "overshoot" and advice.basis["trend"] == "overshot"
    assert advice.recommendation["direction"] == "lower"
    k_os, k_s = tau["stiffness_lower"], tau["settling_stiffness"]
    # the flattened peak places k from below: between k_s and the run's own 0.02
    assert k_s < k_os <= 0.02
    assert advice.recommendation["lr_ratio"] == pytest.approx(max(0.5, k_s / k_os))
    assert advice.basis["stiffness"]["lower"] == pytest.approx(k_os)
    assert any("declining" in w and "overshoot" in w for w in advice.warnings)
    assert any("read from the reward's shape" in w for w in advice.warnings)


def test_a_small_overshoot_keeps_the_lr(tmp_path):
    advice = advise_log(load_run(_jsonl(tmp_path / "small.jsonl", _map(3, 1))))
    assert advice.basis["kind"] == "overshoot" and advice.recommendation["direction"] == "keep"


def test_an_overshoot_comes_before_the_instability_its_ringing_shows(tmp_path):
    """At 32 k_c the damped ringing (pole modulus sqrt(beta)) reads as an oscillation to the
    diagnosis; the advice reads the overshoot, a stable run past k_s: lower, not 'near the
    limit'."""
    advice = advise_log(load_run(_jsonl(tmp_path / "ringing.jsonl", _map(32, 0))))
    assert advice.basis["kind"] == "overshoot"
    assert advice.recommendation["direction"] == "lower"
    assert "near its stability limit" not in " ".join(advice.reasoning)


def test_a_fast_overshoot_is_read_from_the_first_points():
    """At 64 k_c the peak comes within the first twentieth: the start is the first 3 points."""
    for seed in range(3):
        assert series_trend(STEPS, _map(64, seed)).kind == "overshot"


def test_without_momentum_a_settled_fall_stays_a_fall(tmp_path):
    reward = _overshoot(0.02, 1)
    assert fell(STEPS, reward, None, momentum=0.0) and not fell(STEPS, reward, None)
    advice = advise_log(load_run(_jsonl(tmp_path / "sgd.jsonl", reward)), momentum=0.0)
    assert advice.basis["kind"] == "stability_limit"


def test_non_finite_points_of_a_run_are_left_out_of_the_reading():
    reward = _overshoot(0.02, 1)
    reward[[1, 190]] = np.nan
    trend = run_trend(STEPS, reward)
    assert settled_overshoot(trend, STEPS, reward).kind == settled_overshoot(
        trend, STEPS[np.isfinite(reward)], reward[np.isfinite(reward)]).kind


def test_a_spike_held_a_few_steps_is_not_an_overshoot_of_the_whole_gain(tmp_path):
    """The peak read from below decides both the half kept and the share: the share stays
    under 1, and a spike far above the plateau is no settled overshoot."""
    for top in (1.2, 1.6):
        reward = np.where(STEPS < 20, 0.2, np.where(STEPS < 28, top, 0.7))
        reward = reward + 0.01 * np.random.default_rng(1).standard_normal(STEPS.size)
        trend = series_trend(STEPS, reward)
        assert trend.kind != "overshot" or 0 < trend.overshoot < 1
        advice = advise_log(load_run(_jsonl(tmp_path / f"spike{top}.jsonl", reward)))
        assert advice.recommendation["direction"] == "lower"
