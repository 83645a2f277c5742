"""The Monitor and the TRL callback on a huge reward, an evaluation event, the reporters' order,
a plateau bound on the reward range's edge, a warning standing after its precursors, and a
constant reward."""

from __future__ import annotations

import json
import warnings
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[1]
E8 = ROOT / "tests" / "data" / "real_logs" / (
    "ShibukiZero__assignment5-alignment__artifacts_experiments_main_ch7_grpo_off_policy_sweep_"
    "runs_broad_e8_tb256_metrics.excerpt.jsonl")
TESTBED = ROOT / "studies" / "tiny_grids" / "data" / "tiny_testbed"


def _feed(monitor, run):
    """Feed a loaded run to ``monitor`` step by step; return the states by step."""
    states = {}
    for i, step in enumerate(run.steps):
        metrics = {"reward": run.reward[i], **{k: v[i] for k, v in run.metrics.items()}}
        states[float(step)] = monitor.update(step, metrics)
    return states


@pytest.mark.parametrize("spike", [1e13, 1e20, 1e300, -1e300])
def test_a_huge_reward_is_skipped_with_a_warning_and_a_note_not_a_crash(spike):
    from grpodyn import Monitor
    from grpodyn.empirical.monitor import GRPODynamicsWarning

    monitor = Monitor(momentum=0.9)
    with pytest.warns(GRPODynamicsWarning, match=r"at step 20 skipped") as caught:
        for step in range(1, 61):
            state = monitor.update(step, {"reward": 0.3 + 0.001 * step if step != 20
                                          else spike})
    assert sum("skipped" in str(w.message) for w in caught) == 1
    assert state.points == 59 and 20 not in monitor.steps
    assert len(state.notes) == 1 and f"{spike:.3g} at step 20" in state.notes[0]
    assert "e+" not in state.plateau.get("reason", "")  # no bound in the spike's units
    json.dumps(state.to_dict(), allow_nan=False)


def test_the_monitor_takes_the_command_lines_reward_limit():
    from grpodyn.cli.options import REWARD_MAGNITUDE_MAX as CLI_LIMIT
    from grpodyn.empirical.monitor import REWARD_MAGNITUDE_MAX

    assert REWARD_MAGNITUDE_MAX == CLI_LIMIT


def test_an_evaluation_event_gives_its_step_the_held_out_reward():
    from grpodyn import Monitor

    monitor = Monitor(diagnose_every=0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # evaluation events are no updates without a reward
        for step in range(1, 11):
            if step == 1:  # TRL's eval_on_start: step 0 records no reward; then one logged
                monitor.update(0, {"eval_reward": 0.05})  # before its training step, nearer
                monitor.update(1, {"eval_reward": 0.1})
            monitor.update(step, {"reward": 0.5})
            if step % 3 == 0:
                monitor.update(step, {"eval_reward": step / 100, "epoch": 1.0})
            if step == 7:  # at a step that records no reward: the next one's, as the loaders
                monitor.update(7.5, {"eval_reward": 0.9})  # place it
    held = monitor.metrics["heldout_reward"]
    assert held[0] == 0.1 and held[2] == 0.03 and held[5] == 0.06 and held[8] == 0.09
    assert held[7] == 0.9 and np.isnan([held[i] for i in (1, 3, 4, 6, 9)]).all()
    assert monitor.state.points == 10


def _evaluations(first: int, order: str) -> list[dict]:
    """Training every 10 steps from ``first`` to 100; evaluations at 0, 25, 50, 75 and 100.

    ``order``: "logged" (by step, each training record before its step's evaluation, as a
    trainer logs them), "reversed_evals" (two more evaluations, at 26 and 28, fed 28 first: the
    one nearest to step 30 is kept), "early" (the evaluation of step 75 fed before training
    step 70).
    """
    records = [{"step": 0, "eval_reward": 0.05}]
    records += [{"step": step, "reward": 0.3 + step / 1000} for step in range(first, 101, 10)]
    records += [{"step": s, "eval_reward": s / 1000} for s in (25, 50, 75, 100)]
    if order == "reversed_evals":
        records += [{"step": 28, "eval_reward": 0.5}, {"step": 26, "eval_reward": 0.9}]
    records.sort(key=lambda r: (r["step"], "reward" not in r))
    if order == "reversed_evals":
        at = [i for i, r in enumerate(records) if r["step"] in (26, 28)]
        records[at[0]], records[at[1]] = records[at[1]], records[at[0]]
    if order == "early":
        evaluation = next(r for r in records if r["step"] == 75 and "eval_reward" in r)
        records.remove(evaluation)
        records.insert(next(i for i, r in enumerate(records) if r["step"] == 70), evaluation)
    return records


@pytest.mark.parametrize(("first", "order"), [(10, "logged"), (500, "logged"),
                                              (10, "reversed_evals"), (10, "early")])
def test_the_monitor_places_evaluations_as_the_loaders_do(tmp_path, first, order):
    """eval_on_start (step 0), training every 10 steps, evaluations every 25: same held-out.

    A log that starts at step 500 (an excerpt) leaves the step-0 evaluation out in both.
    """
    from grpodyn import Monitor, load_run

    records = _evaluations(first, order)
    if first == 500:
        records = [{"step": 0, "eval_reward": 0.05}] + [
            {"step": s, "reward": 0.3 + s / 10000} for s in range(500, 601, 10)]
    path = tmp_path / "log.json"
    path.write_text(json.dumps(records))
    monitor = Monitor(diagnose_every=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for record in records:
            monitor.update(record["step"], {k: v for k, v in record.items() if k != "step"})
    run = load_run(path)
    from_log = run.metrics.get("heldout_reward", np.full(run.n_points, np.nan))
    held = np.asarray(monitor.metrics["heldout_reward"])
    assert np.array_equal(np.isfinite(held), np.isfinite(from_log))
    assert np.allclose(held[np.isfinite(held)], from_log[np.isfinite(from_log)])
    if first == 10:
        assert held[0] == 0.05 and held[2] == (0.5 if order == "reversed_evals" else 0.025)
        assert held[7] == 0.075
    else:
        assert np.isnan(held).all()


def test_the_callback_sees_the_held_out_reward_of_a_reward_hacking_run():
    """TRL logs ``eval_reward`` in an event of its own; the diagnosis needs it."""
    pytest.importorskip("transformers")
    from transformers import TrainerControl, TrainerState

    import grpodyn
    from grpodyn.empirical.callback import GRPODynamicsCallback

    path = TESTBED / "reward_hacking_seed9.json"
    args = SimpleNamespace(num_generations=8, adam_beta1=0.9, max_completion_length=16)
    callback, state, control = GRPODynamicsCallback(), TrainerState(), TrainerControl()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for record in json.loads(path.read_text())["log_history"]:
            train = {k: v for k, v in record.items() if k not in ("step", "eval/reward")}
            state.global_step = record["step"]
            callback.on_log(args, state, control, logs=train)
            if "eval/reward" in record:
                callback.on_log(args, state, control, logs={"eval_reward": record["eval/reward"]})
        assert grpodyn.diagnose(str(path), group_size=8).modes["reward_hacking"].flag
    assert "heldout_reward" in callback.monitor.run().metrics
    assert "reward_hacking" in callback.monitor.state.flags


class _Board:
    """A stand-in for TensorBoard's writer: the tags it was sent."""

    def __init__(self):
        self.tags = set()

    def add_scalar(self, tag, *_):
        self.tags.add(tag)

    def add_text(self, tag, *_):
        self.tags.add(tag)

    def flush(self):
        pass


def test_attach_puts_the_callback_ahead_of_the_reporters_so_they_send_its_numbers(tmp_path):
    pytest.importorskip("tensorboard")
    torch = pytest.importorskip("torch")
    from transformers import Trainer, TrainingArguments
    from transformers.integrations import TensorBoardCallback
    from transformers.trainer_callback import ProgressCallback

    from grpodyn.empirical.callback import GRPODynamicsCallback

    args = TrainingArguments(output_dir=str(tmp_path), report_to=["tensorboard"], use_cpu=True)
    trainer = Trainer(model=torch.nn.Linear(2, 2), args=args)
    callback = GRPODynamicsCallback(min_points=10, refit_every=5, diagnose_every=0)
    trainer.add_callback(callback)  # as callbacks=[...] does: after the reporters
    assert callback.attach(trainer) is trainer
    kinds = [type(c) for c in trainer.callback_handler.callbacks]
    assert kinds.count(GRPODynamicsCallback) == 1
    assert (kinds.index(GRPODynamicsCallback) < kinds.index(TensorBoardCallback)
            and kinds.index(GRPODynamicsCallback) < kinds.index(ProgressCallback))
    board = next(c for c in trainer.callback_handler.callbacks
                 if isinstance(c, TensorBoardCallback))
    board.tb_writer = _Board()
    for step in range(1, 41):
        trainer.state.global_step = step
        logs = {"reward": 0.8 - 0.5 * np.exp(-step / 8) + 0.01 * np.sin(step)}
        trainer.state.log_history.append({**logs, "step": step})
        trainer.control = trainer.callback_handler.on_log(args, trainer.state, trainer.control,
                                                          logs)
    sent = {tag for tag in board.tb_writer.tags if tag.startswith("train/grpodyn/")}
    assert sent and {f"train/{k}" for k in callback.monitor.state.log_values()} <= sent


def test_a_plateau_bound_on_the_reward_ranges_edge_is_not_logged():
    import grpodyn
    from grpodyn.empirical.monitor import MonitorState

    run = grpodyn.load_run(str(TESTBED / "dynamical_instability_seed0.json"))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        state = _feed(grpodyn.Monitor(momentum=0.9, group_size=8), run)[200.0]
    assert state.plateau["lower"] == 0.0 and state.plateau["upper"] == 1.0  # the range
    assert not any(k.startswith("grpodyn/plateau") for k in state.log_values())
    rising = {"value": None, "lower": 0.62, "upper": 1.0, "status": "not_determined",
              "reason": "no saturation seen; plateau >= 0.62 at 90%"}
    measured = MonitorState(step=50.0, points=50, plateau=rising, reward_range=(0.0, 1.0))
    assert measured.log_values() == {"grpodyn/plateau_lower": 0.62}


def test_a_warning_stands_through_a_diagnosis_too_short_to_give_a_verdict():
    """At step 22 of the e8 run the precursors of step 19 have fallen silent and the diagnosis,
    too short to read the trend, flags nothing: the warning stands, as the replay of the log
    (``standing_warning``) has it; at step 25 the diagnosis flags the collapse instead."""
    import grpodyn
    from grpodyn.empirical.diagnostics.early_warning import prefix, standing_warning

    run = grpodyn.load_run(str(E8))
    for until, flagged in ((22.0, False), (25.0, True)):
        cut = prefix(run, until)
        state = _feed(grpodyn.Monitor(momentum=0.9, diagnose_every=cut.n_points), cut)[until]
        assert state.diagnosed_at == until and bool(state.flags) == flagged
        standing = standing_warning(cut, reviewed=flagged)
        assert state.early_warning == (None if standing is None else standing.to_dict())
        assert (standing is None) == flagged
    assert standing_warning(prefix(run, 22.0)).step == 19.0


def test_diagnose_until_reports_the_warning_a_monitor_holds(capsys):
    from grpodyn.cli import main

    assert main(["diagnose", str(E8), "--until", "22", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["early_warning"]["step"] == 19.0


def test_a_constant_reward_gives_every_number_its_reason():
    from grpodyn import Monitor

    monitor = Monitor(momentum=0.9, min_points=5, refit_every=1, diagnose_every=5)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for step in range(1, 40):
            state = monitor.update(step, {"reward": 0.5})
    for entry in (state.plateau, state.tau, state.stability_margin, state.regime):
        assert entry["reason"] == "the reward has not changed in 39 points"
    assert state.log_values() == {}


def test_a_reward_outside_the_declared_range_is_kept_and_the_range_inferred():
    """One reward past the range used to turn the analysis off for the rest of the run."""
    from grpodyn import Monitor
    from grpodyn.empirical.monitor import GRPODynamicsWarning

    monitor = Monitor(reward_range=(0, 1), momentum=0.9, diagnose_every=0)
    t = np.arange(1, 201)
    rewards = 0.2 + 0.6 * (1 - np.exp(-t / 50)) + 0.02 * np.random.default_rng(0).normal(size=200)
    rewards[99] = 1.02
    with pytest.warns(GRPODynamicsWarning, match="outside reward_range"):
        for step, reward in zip(t, rewards, strict=True):
            state = monitor.update(int(step), {"reward": float(reward)})
    assert len(monitor.rewards) == 200 and monitor.rewards[99] == 1.02
    assert state.plateau["status"] == "determined" and state.analysed_at == 200
    assert any("1 reward(s) outside reward_range [0.0, 1.0]" in note for note in state.notes)


def test_a_late_evaluation_goes_to_its_step_or_is_noted():
    from grpodyn import Monitor
    from grpodyn.empirical.monitor import GRPODynamicsWarning

    monitor = Monitor()
    for step in (10, 20, 30):
        monitor.update(step, {"reward": step / 100})
    monitor.update(20, {"eval_reward": 0.9})  # the evaluation of step 20, after step 30
    assert monitor.metrics["heldout_reward"][1] == 0.9
    with pytest.warns(GRPODynamicsWarning, match="arriving after later steps"):
        state = monitor.update(15, {"eval_reward": 0.7})  # step 20 holds one already
    assert monitor.metrics["heldout_reward"][1] == 0.9
    assert any("held-out, arriving after later steps" in note for note in state.notes)


def test_a_late_evaluation_far_before_the_first_step_is_dropped_as_the_loaders_drop_it():
    from grpodyn import Monitor
    from grpodyn.empirical.monitor import GRPODynamicsWarning

    monitor = Monitor()
    for step in range(100, 110):
        monitor.update(step, {"reward": step / 1000})
    with pytest.warns(GRPODynamicsWarning, match="before the first"):
        monitor.update(0, {"eval_reward": 0.77})  # step 0, a hundred intervals before
    assert np.isnan(monitor.metrics["heldout_reward"]).all()
    monitor.update(99, {"eval_reward": 0.5})  # within one interval of the first: placed
    assert monitor.metrics["heldout_reward"][0] == 0.5


def _smooth_collapse():
    """A rise, then a collapse over a few steps at step 200, entropy x5 and KL x20 with it."""
    from grpodyn.empirical.logs.loaders import Run

    rng = np.random.default_rng(7)
    s = np.arange(1, 301, dtype=float)
    c = 1 / (1 + np.exp(-(s - 200) / 2))
    reward = np.clip((0.2 + 0.5 * (1 - np.exp(-s / 50))) * (1 - c) + 0.02 * c
                     + rng.normal(0, 0.03, s.size), 0, 1)
    entropy = 1 + 4 * c + rng.normal(0, 0.02, s.size)
    kl = 0.01 * (1 + 19 * c) + np.abs(rng.normal(0, 0.0005, s.size))
    return Run(source="collapse", format="synthetic", steps=s, reward=reward,
               metrics={"entropy": entropy, "kl": kl})


def test_a_warning_stands_through_a_decline_that_no_mode_explains():
    """Its precursors fired at the collapse's start; a few steps on, the reward has fallen beyond
    its noise but not yet into the last quarter that the instability reads: the state is a
    decline with no mode, and the warning, the one account of it, stands (it was dropped)."""
    import grpodyn
    from grpodyn.empirical.diagnostics.early_warning import prefix, reviews, standing_warning

    run = _smooth_collapse()
    cut = prefix(run, 210.0)
    d = grpodyn.diagnose(cut)
    assert d.state == "declining" and d.primary is None
    assert d.early_warning is not None and d.early_warning["step"] < 205
    state = _feed(grpodyn.Monitor(diagnose_every=cut.n_points), cut)[210.0]
    assert state.diagnosed_at == 210.0 and state.flags == ()
    assert state.early_warning == d.early_warning
    assert not reviews(False, "declining") and reviews(True, "declining")
    assert reviews(False, "learning") and not reviews(False, "too_short")
    assert standing_warning(cut, reviewed=True) is None  # a verdict would have dropped it
