"""The framework-free Monitor: forecast, margins and flags fed one step at a time."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest

from grpodyn.ground import InputError


def _saturating(n: int = 300, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    t = np.arange(1, n + 1)
    return 0.85 - 0.6 * np.exp(-t / 80) + 0.03 * rng.normal(size=t.size)


def test_monitor_forecasts_a_saturating_run():
    import grpodyn

    monitor = grpodyn.Monitor(momentum=0.9, refit_every=10, diagnose_every=0)
    states = [monitor.update(step, {"reward": r, "loss": 0.1})
              for step, r in enumerate(_saturating(), start=1)]
    assert states[20].analysed_at is None and states[20].plateau["status"] == "not_determined"
    last = states[-1]
    assert last.points == 300 and last.analysed_at == 300
    assert last.plateau["value"] == pytest.approx(0.85, abs=0.02)
    assert last.tau["value"] == pytest.approx(80, rel=0.15)
    assert 0 < last.stability_margin["value"] < 1
    assert last.regime["status"] == "determined" and last.regime["value"] == "overdamped"
    assert last.limits["refresh_max"]["value"] > 1 and last.limits["staleness_max"]["value"] >= 1
    assert set(last.log_values()) == {"grpodyn/plateau", "grpodyn/tau",
                                      "grpodyn/steps_to_plateau", "grpodyn/stability_margin"}
    json.dumps(last.to_dict(), allow_nan=False)  # JSON-ready
    with pytest.raises(AttributeError):
        last.step = 0  # frozen


def test_monitor_reads_trainer_keys_and_skips_steps_without_reward():
    from grpodyn import Monitor

    monitor = Monitor(refit_every=5, diagnose_every=0, min_points=10)
    before = monitor.update(1, {"loss": 0.3})  # no reward: nothing recorded
    assert before.points == 0
    for step, r in enumerate(_saturating(60), start=1):  # verl's name of the reward
        state = monitor.update(step, {"critic/score/mean": r, "actor/entropy": 0.5})
    assert state.points == 60 and state.analysed_at == 60


def test_monitor_without_momentum_leaves_the_margin_undetermined():
    from grpodyn import Monitor

    monitor = Monitor(momentum=None, refit_every=50, diagnose_every=0)
    for step, r in enumerate(_saturating(), start=1):
        state = monitor.update(step, {"reward": r})
    assert state.tau["status"] == "determined"
    assert state.stability_margin["status"] == "not_determined"
    assert "grpodyn/stability_margin" not in state.log_values()


def test_monitor_flags_a_collapse():
    from grpodyn import Monitor

    t = np.arange(1, 201)
    rewards = np.where(t < 120, 0.3 + 0.5 * (1 - np.exp(-t / 30)), 0.01)
    entropy = np.where(t < 120, 0.5, 1e-4)
    monitor = Monitor(diagnose_every=20, refit_every=1000)
    for step, (r, h) in enumerate(zip(rewards, entropy, strict=True), start=1):
        state = monitor.update(step, {"reward": r, "entropy": h})
    assert "dynamical_instability" in state.flags
    assert state.evidence["dynamical_instability"]


def _feed_e8(monitor):
    """Feed the public collapsing run (the README's e8 excerpt) step by step; yield states."""
    from pathlib import Path

    from grpodyn.empirical.logs.loaders import load_run

    run = load_run(Path(__file__).parent / "data" / "real_logs" / (
        "ShibukiZero__assignment5-alignment__artifacts_experiments_main_ch7_grpo_off_policy_"
        "sweep_runs_broad_e8_tb256_metrics.excerpt.jsonl"))
    for i, step in enumerate(run.steps):
        metrics = {"reward": run.reward[i], **{k: v[i] for k, v in run.metrics.items()}}
        yield step, monitor.update(step, metrics)


def test_an_early_warning_stands_through_the_collapse_until_a_diagnosis_reviews_it():
    """Its precursors fall silent once the reward collapses (step 22 of the e8 run); the
    warning stands, and the diagnosis after it carries the verdict instead."""
    from grpodyn import Monitor

    states = dict(_feed_e8(Monitor(momentum=0.9, diagnose_every=50)))  # 40 points: none
    assert states[19.0].early_warning["step"] == 19.0
    assert states[40.0].early_warning["step"] == 19.0 and states[40.0].flags == ()
    states = dict(_feed_e8(Monitor(momentum=0.9, diagnose_every=10)))
    assert states[29.0].early_warning["step"] == 19.0
    assert states[30.0].early_warning is None
    assert "dynamical_instability" in states[30.0].flags


@pytest.mark.parametrize("options,needle", [
    ({"refit_every": 0}, "refit_every"), ({"momentum": 1.0}, "momentum"),
    ({"min_points": 2}, "min_points"), ({"group_size": 1}, "group_size"),
    ({"reward_range": (1.0, 0.0)}, "reward_range"), ({"reward_range": (0.0,)}, "reward_range"),
])
def test_monitor_refuses_bad_options(options, needle):
    from grpodyn import Monitor

    with pytest.raises(InputError, match=needle):
        Monitor(**options)


def test_top_level_exports_stay_lazy():
    """``import grpodyn.numerics`` and ``import grpodyn`` do not pull the heavy modules."""
    code = ("import sys, grpodyn, grpodyn.numerics; "
            "assert 'grpodyn.empirical.monitor' not in sys.modules; "
            "assert 'sympy' not in sys.modules; "
            "assert callable(grpodyn.diagnose) and callable(grpodyn.analyse_run); "
            "assert grpodyn.Monitor.__name__ == 'Monitor'")
    subprocess.run([sys.executable, "-c", code], check=True)


def test_monitor_reads_numpy_rewards_and_ignores_a_repeated_step():
    """verl logs numpy scalars; a second log at the same step does not stop the analysis.

    It and a bool given as the reward are skipped, each kind said once.
    """
    from grpodyn import Monitor
    from grpodyn.empirical.monitor import GRPODynamicsWarning

    monitor = Monitor(refit_every=10, diagnose_every=0)
    with pytest.warns(GRPODynamicsWarning) as caught:
        for step, r in enumerate(_saturating(100), start=1):
            monitor.update(step, {"reward": np.float32(r)})
            if step == 5:  # a second log at the same step, and a bool that is no reward
                monitor.update(5, {"reward": 0.5})
                monitor.update(6, {"reward": True})
    state = monitor.state
    assert state.points == 100 and state.analysed_at == 100
    assert [str(w.message).split(" skipped: ")[1].split(";")[0] for w in caught] == [
        "at a step not after the last recorded one", "not one number"]


def test_monitor_says_why_a_flat_run_is_not_analysed():
    from grpodyn import Monitor

    monitor = Monitor(refit_every=10, diagnose_every=0, min_points=10)
    for step in range(1, 31):
        state = monitor.update(step, {"reward": 0.25})
    assert state.plateau["status"] == "not_determined"
    assert "has not changed" in state.plateau["reason"]


def test_callback_refuses_a_bad_group_size_when_built():
    pytest.importorskip("transformers")
    from grpodyn.empirical.callback import GRPODynamicsCallback

    with pytest.raises(InputError, match="group_size"):
        GRPODynamicsCallback(group_size=1)


def test_a_monitor_fed_no_reward_says_so_once():
    """A custom loop logging its reward under an unknown key saw 40 silent updates."""
    import warnings

    from grpodyn import Monitor
    from grpodyn.empirical.monitor import GRPODynamicsWarning

    monitor = Monitor()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for step in range(1, 41):
            monitor.update(step, {"my_score": 0.5, "loss": 1.0})
    said = [str(w.message) for w in caught if w.category is GRPODynamicsWarning]
    assert len(said) == 1 and "my_score" in said[0] and "reward" in said[0]
    assert monitor.state.points == 0
