"""The words of a diagnosis say what its numbers can support, and agree with each other.

A plateau the noise cannot tell from a continuing rise is said to be one; the instability's best
level names its window beside the state's peak; an AR(2) pole outside the unit circle is called
what it is; a log is told of verl only when it is verl's; a reward that is itself the held-out
one is named as such. None of it moves a state, a flag or a score.
"""

from __future__ import annotations

import numpy as np
import pytest

from grpodyn.empirical.diagnostics.diagnose import diagnose
from grpodyn.empirical.diagnostics.instability import _cycle_words
from grpodyn.empirical.diagnostics.series import amount, segments
from grpodyn.empirical.diagnostics.state import classify_state
from grpodyn.empirical.logs.loaders import Run
from grpodyn.numerics.fit import estimate_noise


def _noisy(curve: np.ndarray, noise: float, seed: int, **metrics: np.ndarray) -> Run:
    """A run of the given mean curve plus white noise, steps 1..n."""
    rng = np.random.default_rng(seed)
    t = np.arange(1, curve.size + 1, dtype=float)
    return Run("synthetic", "test", t, curve + rng.normal(0, noise, curve.size), dict(metrics))


def test_a_rise_the_noise_hides_is_not_called_a_plateau() -> None:
    """A straight rise 0.2 -> 0.8 under noise 0.5: converged by the late test, but unresolved."""
    t = np.arange(1, 101, dtype=float)
    run = _noisy(0.2 + 0.006 * t, 0.5, seed=0)
    d = diagnose(run)
    assert d.state == "converged" and not d.resolved
    assert "at its plateau" not in d.state_evidence
    assert "a rise at the run's own average pace" in d.state_evidence
    assert "the noise cannot tell a plateau from a continuing rise" in d.state_evidence
    assert d.headline == "healthy: converged or still rising, the noise cannot tell which"
    assert "resolved" not in d.to_dict()  # the JSON keys stay those of the contract


def test_a_straight_rise_is_rarely_called_a_resolved_plateau() -> None:
    """A rise that never slows, its late test underpowered (about 2 s.e. at the run's pace):
    a resolved plateau needs the last quarter 2 s.e. below that pace, which noise gives in
    about 2% of runs; the check that asked only for an underpowered test called a third of
    such runs "at its plateau"."""
    t = np.arange(1, 201, dtype=float)
    resolved = 0
    for seed in range(40):
        run = _noisy(0.2 + 0.0027 * t, 0.12, seed=seed)
        early, late, _ = segments(run.n_points)
        state = classify_state(run, early, late, estimate_noise(run.reward).sigma)
        resolved += state.name == "converged" and state.resolved
    assert resolved <= 3


def test_a_last_quarter_well_below_the_pace_is_a_plateau() -> None:
    """A fast rise that stops: the last quarter is flat, far below the run's average pace."""
    t = np.arange(1, 201, dtype=float)
    run = _noisy(0.2 + 0.6 * (1 - np.exp(-t / 15)), 0.05, seed=3)
    early, late, _ = segments(run.n_points)
    state = classify_state(run, early, late, estimate_noise(run.reward).sigma)
    assert state.name == "converged" and state.resolved
    assert state.evidence.endswith("at its plateau")


def test_the_pace_gain_is_the_run_s_own_pace_over_the_late_span() -> None:
    """The expected late gain is (r1 - r0) over the centres' distance, times the late span."""
    t = np.arange(1, 101, dtype=float)
    run = _noisy(0.2 + 0.006 * t, 0.5, seed=0)
    early, late, _ = segments(run.n_points)
    state = classify_state(run, early, late, estimate_noise(run.reward).sigma)
    r0, r1 = run.reward[early].mean(), run.reward[late].mean()
    pace = (r1 - r0) / (0.5 * (t[late][0] + t[late][-1]) - 0.5 * (t[early][0] + t[early][-1]))
    assert f"({pace * (t[late][-1] - t[late][0]):.3f} over the quarter)" in state.evidence


def test_a_plateau_the_noise_resolves_is_called_one() -> None:
    """A saturated curve with little noise: at its plateau, and the headline says converged."""
    t = np.arange(1, 301, dtype=float)
    d = diagnose(_noisy(0.2 + 0.6 * (1 - np.exp(-t / 15)), 0.05, seed=0))
    assert d.state == "converged" and d.resolved
    assert d.state_evidence.endswith(": at its plateau")
    assert d.headline.startswith("converged") and "still rising" not in d.headline


def test_the_instability_s_best_level_names_its_window_beside_the_state_s_peak() -> None:
    """A spike in the first points tops the cut-short moving mean; the state's peak is later."""
    t = np.arange(1, 361, dtype=float)
    curve = np.where(t < 150, 0.10 + 0.05 * np.exp(-((t - 55) / 25) ** 2),
                     0.10 - 0.08 * np.minimum((t - 150) / 100, 1))
    curve[:6] = 0.25
    d = diagnose(_noisy(curve, 0.02, seed=1))
    assert d.state == "declining" and d.peak_step > 30
    words = d.modes["dynamical_instability"].evidence
    assert "best smoothed level at step" not in words
    assert "window cut short to 18 by the run's start" in words
    assert f"the state's peak near step {d.peak_step:g} is another measure" in words


def test_an_explosive_pole_on_noise_is_called_non_stationary_and_not_counted() -> None:
    """White noise can fit a pole outside the unit circle: the words say why it does not count."""
    d = diagnose(Run("noise", "test", np.arange(1, 301, dtype=float),
                     0.5 + np.random.default_rng(10).normal(0, 0.1, 300), {}))
    verdict = d.modes["dynamical_instability"]
    assert verdict.score == 0.0
    assert "outside the unit circle: the fit is not stationary" in verdict.evidence
    assert "not beyond the noise" in verdict.evidence and "do not count" in verdict.evidence


@pytest.mark.parametrize(("period", "p_value", "score", "said"), [
    (float("nan"), 1e-4, 0.0, "its poles are real: a slow drift the trend did not remove"),
    (4.3, 0.83, 0.0, "not beyond the noise at the false-alarm rate"),
    (4.3, 1e-4, 1.0, "a limit cycle, the map's poles beyond the unit circle"),
])
def test_every_explosive_pole_says_whether_and_why_it_counts(period: float, p_value: float,
                                                             score: float, said: str) -> None:
    """Real, unresolved or counted: each radius above 1 is worded for what the score did."""
    words = _cycle_words({"radius": 1.05, "period": period, "p_value": p_value, "r2": 0.3,
                          "score": score}, span=300.0)
    assert "outside the unit circle" in words and said in words


def test_a_stable_pole_keeps_its_plain_wording() -> None:
    """A radius below 1 is read as before: radius, kind, variance explained."""
    words = _cycle_words({"radius": 0.614, "period": 10.3, "p_value": 0.56, "r2": 0.0,
                          "score": 0.0}, span=300.0)
    assert words == ("AR(2) of the fluctuations around the trend: pole radius 0.614 "
                     "(oscillatory, period 10.3 steps), explains 0% of their variance "
                     "(p = 0.56 against white noise)")


def _entropy_run(fmt: str, reward_key: str = "reward") -> Run:
    """A success rate 0.2 -> 0.6 whose entropy falls x0.3, without a zero-std share."""
    t = np.arange(1, 201, dtype=float)
    rng = np.random.default_rng(0)
    reward = np.clip(0.2 + 0.4 * t / t.size + rng.normal(0, 0.03, t.size), 0, 1)
    entropy = 0.5 * np.exp(-t / 120) + rng.normal(0, 0.005, t.size)
    return Run("entropy", fmt, t, reward, {"entropy": entropy}, reward_key=reward_key)


def test_verl_is_named_only_on_a_verl_log() -> None:
    """The missing zero-std share is blamed on verl's defaults only where the log is verl's."""
    custom = diagnose(_entropy_run("custom_jsonl")).modes["policy_concentration"].evidence
    verl = diagnose(_entropy_run("verl_console")).modes["policy_concentration"].evidence
    through = diagnose(_entropy_run("wandb_csv", "critic/score/mean"))
    assert "no zero-std share in the log:" in custom and "verl" not in custom
    assert "no zero-std share in the log (verl's default metrics omit it)" in verl
    assert "verl's default metrics" in through.modes["policy_concentration"].evidence


def test_a_reward_that_is_the_held_out_one_is_named_so() -> None:
    """Read on 'eval/reward' for want of a training reward, the coupling is not 'missing'."""
    held = diagnose(_entropy_run("csv", "eval/reward")).modes["reward_hacking"]
    plain = diagnose(_entropy_run("csv")).modes["reward_hacking"]
    assert not held.judged and not plain.judged
    assert held.evidence.startswith("the analysed reward 'eval/reward' is itself the held-out "
                                    "one and no optimised training reward is read beside it")
    assert "no held-out or verifier reward" not in held.evidence
    assert plain.evidence.startswith("no held-out or verifier reward in the log")


def test_the_period_of_an_oscillation_is_in_steps_not_logged_points() -> None:
    """A period of 14 points logged every 10 steps is 140 steps; the same log every step, 14.

    Both readings: the AR(2)'s ("oscillatory, period P steps") and the sustained cycle's ("a
    period of P steps").
    """
    rng = np.random.default_rng(0)
    n = np.arange(300)
    reward = 0.5 + 0.15 * np.sin(2 * np.pi * n / 14) + rng.normal(0, 0.05, n.size)
    for marker in ("oscillatory, period ", "a period of "):
        periods = []
        for spacing in (1.0, 10.0):
            run = Run("shaped", "test", spacing * (n + 1.0), reward, {})
            words = diagnose(run).modes["dynamical_instability"].evidence
            periods.append(float(words.split(marker)[1].split(" steps")[0]))
        assert periods[0] == pytest.approx(14, rel=0.1) and periods[1] == pytest.approx(
            10 * periods[0], rel=1e-6)


def test_a_period_beyond_the_run_is_not_given_as_a_number() -> None:
    """An AR(2) angle near 0 gives a period longer than the run, which the run cannot measure."""
    words = _cycle_words({"radius": 0.95, "period": 780.9, "p_value": 0.2, "r2": 0.1,
                          "score": 0.0}, span=196.0)
    assert "its period beyond the run's 196 steps: not measured" in words
    assert "780" not in words


def test_a_best_before_the_end_of_a_short_run_is_not_at_its_end() -> None:
    """20 points (window 10) that rise to step 220 and fall back: the best is not "the end"."""
    t = np.arange(20, 420, 20, dtype=float)
    curve = np.where(t <= 220, 0.3 * t / 220, 0.3 - 0.3 * (t - 220) / 180)
    run = Run("short", "test", t, curve + np.random.default_rng(1).normal(0, 0.05, t.size), {})
    words = diagnose(run).modes["dynamical_instability"].evidence
    assert "at the end" not in words.split(";")[0]
    assert "fell" in words


def test_no_group_size_note_where_no_mode_reads_the_group_size() -> None:
    """A reward-only log: degeneracy and concentration are not judged; no note on G."""
    t = np.arange(1, 201, dtype=float)
    d = diagnose(_noisy(2.0 + 0.5 * (1 - np.exp(-t / 30)), 0.2, seed=2))
    assert not d.modes["advantage_degeneracy"].judged
    assert not any("group size G unknown" in note for note in d.notes)


def test_the_headline_says_why_a_mode_is_undecided_as_the_note_does() -> None:
    """The headline repeated "the log cannot confirm it" where the note said "can neither"."""
    t = np.arange(1, 201, dtype=float)
    d = diagnose(_noisy(np.full(t.size, 0.4), 0.05, seed=4))
    undecided = [name for name, v in d.modes.items() if v.undecided]
    assert undecided == ["policy_concentration"]
    for name in undecided:
        why = ("points to it but cannot confirm it" if d.modes[name].judged
               else "can neither confirm nor rule it out")
        assert f"{name} (the log {why})" in d.headline


def test_a_fall_within_the_noise_of_the_best_window_says_so() -> None:
    """A flat noisy run's best window mean sits above its last quarter by chance: said so."""
    t = np.arange(1, 201, dtype=float)
    d = diagnose(_noisy(np.full(t.size, 0.5), 0.2, seed=5))
    words = d.modes["dynamical_instability"].evidence
    assert "fell" in words and "not beyond the noise" in words
    assert not d.modes["dynamical_instability"].flag


def test_the_entropy_bound_of_a_reward_moving_toward_one_half_is_said_to_be_a_rise() -> None:
    """A reward 0.2 -> 0.3 predicts more answer entropy, not a fall that it explains."""
    t = np.arange(1, 201, dtype=float)
    entropy = np.linspace(1.0, 0.9, t.size)
    d = diagnose(_noisy(0.2 + 0.1 * (1 - np.exp(-t / 30)), 0.02, seed=6, entropy=entropy))
    words = d.modes["policy_concentration"].evidence
    assert "(a rise: the reward moved toward 1/2, where the answers spread most)" in words
    assert "a fall the move of the reward explains" not in words


def test_complex_poles_without_a_persisting_cycle_are_not_called_an_oscillation() -> None:
    """A step down bends the trend-filtered residual into one swing: complex AR(2) poles.

    Where the run was searched for a sustained cycle from 8 steps on and held none, poles that
    do not count are said to be one swing or a bent fall; where it was not searched (too short),
    they stay "oscillatory".
    """
    ar2 = {"radius": 0.855, "period": 51.4, "p_value": 1e-7, "r2": 0.77, "score": 0.0}
    searched = _cycle_words(ar2, span=499.0, searched_from=8.0)
    assert "no cycle persists over the run" in searched and "oscillatory" not in searched
    assert "oscillatory, period 51.4 steps" in _cycle_words(ar2, span=499.0)
    # poles not beyond the noise, or a period shorter than the search reads, stay the AR(2)'s
    assert "oscillatory, period 51.4" in _cycle_words({**ar2, "p_value": 0.1}, span=499.0,
                                                      searched_from=8.0)
    assert "oscillatory, period 5" in _cycle_words({**ar2, "period": 5.0}, span=499.0,
                                                   searched_from=8.0)


@pytest.mark.parametrize(("value", "text"), [(0.5, "0.500"), (0.0123, "0.012"), (0.0021, "0.0021"),
                                             (0.00031, "0.00031"), (-0.0042, "-0.0042"),
                                             (0.0, "0.000"), (1.2345, "1.234"),
                                             (0.00104, "0.0010"), (0.002, "0.0020")])
def test_an_amount_keeps_two_significant_digits(value: float, text: str) -> None:
    assert amount(value) == text


def test_a_reward_on_a_small_scale_is_not_said_to_be_zero() -> None:
    """Three fixed decimals said "0.002 at the start, 0.002 at its best ... fell back 0.001,
    beyond the 0.000 that noise (s.e. 0.000 per window mean) leaves"."""
    t = np.arange(1, 81, dtype=float)
    run = _noisy(0.002 - 0.0015 * (1 - np.exp(-t / 20)), 5e-5, 1)
    early, late, _ = segments(run.n_points)
    state = classify_state(run, early, late, estimate_noise(run.reward).sigma)
    assert state.name == "declining"
    assert not any(f"0.000{end}" in state.evidence for end in " ,)")  # no amount reads 0
    assert "s.e. " in state.evidence and "fell back 0.0011" in state.evidence
