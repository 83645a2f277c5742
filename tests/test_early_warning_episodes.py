"""The early warning a user sees: one episode, one onset; the Monitor and ``diagnose --until``
agree; a short run that keeps climbing clears a warning as a longer one does.

Seeded synthetic runs and the public e8 excerpt.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from grpodyn.empirical.diagnostics.diagnose import diagnose
from grpodyn.empirical.diagnostics.early_warning import (
    early_warning,
    prefix,
    reviews,
    standing_warning,
)
from grpodyn.empirical.logs.loaders import Run, load_run

LOGS = Path(__file__).parent / "data" / "real_logs"
E8 = LOGS / ("ShibukiZero__assignment5-alignment__artifacts_experiments_main_ch7_grpo_off_policy_"
             "sweep_runs_broad_e8_tb256_metrics.excerpt.jsonl")
NO_CLIP = LOGS / ("ShibukiZero__assignment5-alignment__artifacts_experiments_main_ch7_grpo_off_"
                  "policy_clip_ablation_runs_GRPO-No-Clip_(e2_tb256)_metrics.excerpt.jsonl")


def _length_ramp(n: int = 80, onset: float = 60.0) -> Run:
    """A reward settling near 0.7 while the completion length ramps up from step ``onset``."""
    rng = np.random.default_rng(0)
    t = np.arange(1.0, n + 1.0)
    reward = 0.5 + 0.2 * (1 - np.exp(-t / 20)) + 0.01 * rng.standard_normal(t.size)
    length = np.where(t < onset, 300.0, 300.0 + 100 * (t - onset + 1))
    length = length + 3 * rng.standard_normal(t.size)
    return Run("ramp", "test", t, reward, {"completion_length": length})


def _feed(run: Run, monitor):
    for i, step in enumerate(run.steps):
        metrics = {"reward": float(run.reward[i])}
        metrics.update({k: float(v[i]) for k, v in run.metrics.items()
                        if np.isfinite(v[i])})
        yield float(step), monitor.update(float(step), metrics)


def test_a_warning_found_at_consecutive_steps_keeps_its_first_onset():
    """The ramp's precursor fires at step 60 and goes on firing; each prefix finds its onset
    among its own last steps (60, 61, 62), but the warning shown stays the one of step 60."""
    run = _length_ramp()
    drifted = [early_warning(prefix(run, s)).step for s in (62.0, 63.0, 64.0)]
    assert drifted == [60.0, 61.0, 62.0]
    for until in (60.0, 63.0, 64.0, 70.0):
        cut = prefix(run, until)
        assert standing_warning(cut).step == 60.0
    assert diagnose(prefix(run, 64.0)).early_warning["step"] == 60.0


def test_the_monitor_reports_the_first_onset_of_an_episode():
    from grpodyn import Monitor

    states = dict(_feed(_length_ramp(), Monitor(momentum=0.9, diagnose_every=1)))
    assert {states[s].early_warning["step"] for s in (60.0, 62.0, 63.0, 64.0)} == {60.0}


def test_the_monitor_and_diagnose_until_agree_at_every_step():
    """With diagnose_every=1 the Monitor's warning and flags are those of ``grpodyn diagnose
    LOG --until STEP`` at every step, on two public runs and on the ramp. On the No-Clip run a
    verdict at steps 65-66 reviews the warning of step 62, and the decline at 67-68 raises it
    again in both (the Monitor had dropped it for good)."""
    from grpodyn import Monitor

    for run, group in ((load_run(E8), 8), (load_run(NO_CLIP), 8), (_length_ramp(), None)):
        monitor = Monitor(momentum=0.9, group_size=group, diagnose_every=1)
        for step, state in _feed(run, monitor):
            if state.diagnosed_at is None:
                continue
            diagnosis = diagnose(prefix(run, step), group_size=group)
            assert state.early_warning == diagnosis.early_warning, step
            assert set(state.flags) == {m for m, v in diagnosis.modes.items() if v.flag}, step


def test_a_short_run_that_keeps_climbing_clears_a_warning():
    """A length jump at step 12 warns; 30 points on, the modes judged, no mode flagged and the
    reward still rising across its thirds: the diagnosis reviews the warning, as the state
    'learning' does for a longer run. A short run whose reward fell keeps it."""
    rng = np.random.default_rng(3)
    t = np.arange(1.0, 31.0)
    length = np.where(t < 12, 300.0, 600.0) + 3 * rng.standard_normal(t.size)
    rising = 0.4 + 0.01 * t + 0.01 * rng.standard_normal(t.size)
    run = Run("short", "test", t, rising, {"completion_length": length})
    assert standing_warning(prefix(run, 14.0)) is not None  # it fired
    diagnosis = diagnose(run)
    assert diagnosis.state == "too_short" and diagnosis.primary is None
    assert reviews(False, "too_short", run)
    assert diagnosis.early_warning is None
    falling = Run("short", "test", t, 0.8 - 0.02 * t + 0.01 * rng.standard_normal(t.size),
                  {"completion_length": length})
    assert not reviews(False, "too_short", falling)
    assert not reviews(False, "too_short")  # no run given: the warning stands


def test_a_kl_spike_over_by_the_last_quarter_still_says_the_policy_moved():
    """The e8 run's KL spikes to x150 its first half's level while the reward collapses (steps
    21-28) and settles back: read up to step 37, the last quarter alone missed it and called
    the fall 'a slow fluctuation or a concentration' between two prefixes flagged unstable."""
    run = load_run(E8)
    primaries = {s: diagnose(prefix(run, s), group_size=8).primary for s in run.steps[24:]}
    assert set(primaries.values()) == {"dynamical_instability"}
    words = diagnose(prefix(run, 37.0), group_size=8).modes["dynamical_instability"].evidence
    assert "the KL rose to x" in words and "the policy moved" in words
