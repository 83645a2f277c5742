"""What a new user meets first: the API given a path, a step key that names nothing, records
merged on a shared step, counts in reprs, a monitor that has not diagnosed yet, a bound that
says nothing, a planned length read from a progress counter, and a keyword-only config.

Each case writes a small log to ``tmp_path`` or reads the repository's excerpts.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest

import grpodyn
from grpodyn.cli import main
from grpodyn.empirical.logs.loaders import LogFormatError, load_run
from grpodyn.ground import InputError, TooFewPoints

REAL = Path(__file__).parent / "data" / "real_logs"
E8 = REAL / ("ShibukiZero__assignment5-alignment__artifacts_experiments_main_ch7_grpo_off_"
             "policy_sweep_runs_broad_e8_tb256_metrics.excerpt.jsonl")


def _trainer_state(path: Path, steps: list[int], seed: int = 0) -> str:
    rng = np.random.default_rng(seed)
    history = [{"step": s, "reward": float(0.2 + 0.6 * (1 - math.exp(-s / 15))
                                           + 0.02 * rng.normal()), "loss": 0.1}
               for s in steps]
    path.write_text(json.dumps({"log_history": history}))
    return str(path)


def _error(capsys, argv: list[str]) -> str:
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err
    return err


# ---------------------------------------------------------------------------- the API on paths


def test_the_api_takes_the_path_of_a_log(tmp_path):
    path = _trainer_state(tmp_path / "trainer_state.json", list(range(1, 41)))
    assert grpodyn.diagnose(path).to_dict() == grpodyn.diagnose(load_run(path)).to_dict()
    assert grpodyn.diagnose(Path(path)).headline == grpodyn.diagnose(load_run(path)).headline
    assert grpodyn.analyse_run(path, stack=False).run.n_points == 40
    assert grpodyn.advise_log(path).status


@pytest.mark.parametrize("name", ["diagnose", "analyse_run", "advise_log"])
def test_the_api_refuses_what_is_neither_a_run_nor_a_path(name):
    with pytest.raises(InputError, match=rf"^{name}\(\): run must be a Run "
                       r"\(grpodyn.load_run\(path\)\) or the path of a log, got int$"):
        getattr(grpodyn, name)(3)


def test_the_api_names_a_missing_log_and_reads_a_log_of_several_runs_as_load_run(tmp_path):
    with pytest.raises(LogFormatError, match="nosuch.json"):
        grpodyn.diagnose(str(tmp_path / "nosuch.json"))
    path = tmp_path / "two.jsonl"
    path.write_text("".join(json.dumps({"step": s, "reward": 0.1 * (s % 7)}) + "\n"
                            for s in [*range(1, 31), *range(1, 41)]))
    analysis = grpodyn.analyse_run(str(path), diagnose_run=False)
    assert analysis.run.n_points == 40 and analysis.run.run_name == "run2"
    assert any("2 runs in this log (run1, run2)" in w for w in analysis.warnings)
    assert grpodyn.diagnose(str(path)).to_dict() == grpodyn.diagnose(
        grpodyn.load_run(path)).to_dict()


def test_the_api_shows_that_it_takes_a_path():
    import inspect

    for name in ("diagnose", "analyse_run", "advise_log"):
        function = getattr(grpodyn, name)
        summary = function.__doc__.split("\n\n")
        assert "``run`` may also be the path of a log" in summary[1], name
        assert "Parameters\n----------" in function.__doc__, name  # the rest as it was
        assert "PathLike" in str(inspect.signature(function).parameters["run"].annotation)


# ---------------------------------------------------------------------------- --step-key


def test_a_step_key_that_no_record_holds_is_named_with_the_keys_that_hold_numbers(
        tmp_path, capsys):
    path = _trainer_state(tmp_path / "trainer_state.json", list(range(1, 31)))
    err = _error(capsys, ["diagnose", path, "--step-key", "nosuch"])
    assert "no field 'nosuch' (--step-key) in any record of the log" in err
    assert "keys with numbers: step, loss, reward" in err
    records = tmp_path / "log.jsonl"
    records.write_text("".join(json.dumps({"it": i, "score": i / 40}) + "\n"
                               for i in range(1, 31)))
    err = _error(capsys, ["diagnose", str(records), "--step-key", "nosuch"])
    assert "'nosuch'" in err and "keys with numbers: it, score" in err


# ---------------------------------------------------------------------------- merged records


def test_records_merged_on_one_step_are_said_where_too_few_points_remain(tmp_path, capsys):
    path = _trainer_state(tmp_path / "dupsteps.json", [1] * 100)
    run = load_run(path)
    assert run.n_points == 1
    assert run.warnings == ["100 records shared 1 distinct step and were merged into one "
                            "point per step (the first value of each metric kept)"]
    err = _error(capsys, ["diagnose", path])
    assert "needs at least 10 logged points, got 1: the log's 100 records shared 1 " \
           "distinct step and were merged" in err
    assert "100 records shared 1 distinct step" in _error(capsys, ["fit", path])
    with pytest.raises(TooFewPoints, match="100 records shared 1 distinct step"):
        grpodyn.diagnose(path)


def test_too_few_points_is_its_own_error_and_only_it_gets_the_merged_note(tmp_path):
    from grpodyn.numerics.forecast import forecast_curve

    t = np.arange(1.0, 21.0)
    with pytest.raises(TooFewPoints, match="at least 8 training points, got 5"):
        forecast_curve(t, 0.01 * t, n_train=5, future_steps=t[5:])
    with pytest.raises(InputError, match="more points than the series holds") as caught:
        forecast_curve(t, 0.01 * t, n_train=30, future_steps=t[5:])
    assert not isinstance(caught.value, TooFewPoints)
    merged = load_run(_trainer_state(tmp_path / "dupsteps.json", [1] * 100))
    with pytest.raises(InputError, match="run must be a Run") as caught:  # not about points
        grpodyn.analysis.saying_merged_steps(merged).__enter__()
        grpodyn.diagnose(3)
    assert "records shared" not in str(caught.value)


def test_evaluation_entries_of_a_step_are_not_merged_records(tmp_path):
    history = [{"step": s, "reward": 0.1 * s} for s in range(1, 21)]
    history += [{"step": 10, "eval_reward": 0.5}, {"step": 20, "train_runtime": 9.0}]
    path = tmp_path / "trainer_state.json"
    path.write_text(json.dumps({"log_history": history}))
    assert not any("distinct step" in w for w in load_run(path).warnings)


def test_duplicate_steps_of_records_say_how_many_records_and_steps(tmp_path):
    path = tmp_path / "log.json"
    path.write_text(json.dumps([{"step": 1 + i // 2, "reward": 0.01 * i} for i in range(40)]))
    run = load_run(path)
    assert run.n_points == 20
    assert ("40 records shared 20 distinct steps and were merged into one point per step "
            "(duplicate steps: the first record of each kept, the others dropped)") in run.warnings


# ---------------------------------------------------------------------------- reprs


def test_reprs_count_in_the_singular_and_say_when_no_step_was_seen(tmp_path):
    run = load_run(_trainer_state(tmp_path / "dupsteps.json", [1, 1]))
    assert repr(run).endswith("0 hyperparameters, 1 warning)")
    monitor = grpodyn.Monitor()
    assert repr(monitor) == "Monitor(0 points, no step yet, not diagnosed yet)"
    assert "nan" not in repr(monitor)


# ---------------------------------------------------------------------------- the monitor


def _feed(monitor: grpodyn.Monitor) -> dict[float, grpodyn.MonitorState]:
    run = load_run(E8)
    states = {}
    for i, step in enumerate(run.steps):
        metrics = {"reward": run.reward[i], **{k: v[i] for k, v in run.metrics.items()}}
        states[float(step)] = monitor.update(step, metrics)
    return states


def test_the_monitor_says_that_no_diagnosis_has_run_and_when_the_first_will():
    states = _feed(grpodyn.Monitor(momentum=0.9, diagnose_every=50))  # 40 points
    last = states[40.0]
    assert last.flags == () and last.diagnosed_at is None
    assert last.headline == ("not diagnosed yet: the first diagnosis runs when 50 rewards are "
                             "recorded (diagnose_every=50)")
    assert last.to_dict()["diagnosed_at"] is None
    assert repr(grpodyn.Monitor(diagnose_every=10)) == \
        "Monitor(0 points, no step yet, not diagnosed yet)"
    assert "needs 20" in grpodyn.Monitor(diagnose_every=10).state.headline
    never = grpodyn.Monitor(diagnose_every=0)
    assert "the diagnosis is off" in never.state.headline
    assert repr(never) == "Monitor(0 points, no step yet, never diagnosed (diagnose_every=0))"
    for step in range(1, 60):  # a climb that slows toward a level beyond the range's edge 1
        state = never.update(step, {"reward": 1.15 - 0.85 * np.exp(-step / 40)})
    assert "plateau=at_bound (1)" in repr(state) and "never diagnosed" in repr(state)
    straight = grpodyn.Monitor(diagnose_every=0)
    for step in range(1, 60):  # a straight climb: no deceleration, no plateau at the edge
        state = straight.update(step, {"reward": 0.3 + 0.005 * step})
    assert "plateau=not_determined (>= " in repr(state)
    diagnosed = _feed(grpodyn.Monitor(momentum=0.9, diagnose_every=20))
    assert diagnosed[19.0].diagnosed_at is None and diagnosed[20.0].diagnosed_at == 20.0
    assert not diagnosed[40.0].headline.startswith("not diagnosed")


def test_an_early_warning_keeps_the_evidence_it_fired_with():
    states = _feed(grpodyn.Monitor(momentum=0.9, diagnose_every=50))  # no verdict by step 40
    first = states[19.0].early_warning
    assert first["step"] == 19.0
    for step in (20.0, 21.0, 30.0, 40.0):
        assert states[step].early_warning == first, step


# ---------------------------------------------------------------------------- compare


def test_the_comparison_shows_the_bound_that_says_something():
    from grpodyn.empirical.logs.compare import ComparedRun, Comparison

    def compared(plateau, reward_range):
        summary = {"name": "run", "steps": 40.0, "final_reward": {"value": 0.0},
                   "plateau": plateau, "reward_range": reward_range,
                   "tau": {"value": None, "status": "not_determined"},
                   "diagnosis": {"state": "not_learning", "primary": None}}
        table = Comparison("step", (ComparedRun("run", "x", np.zeros(2), np.zeros(2),
                                                summary),)).to_text()
        return table.splitlines()[1]

    falling = {"value": None, "lower": 0.0, "upper": 0.005677, "status": "not_determined"}
    assert "not_determined (<= 0.005677)" in compared(falling, [0.0, 1.0])
    rising = {"value": None, "lower": 0.62, "upper": 1.0, "status": "not_determined"}
    assert "not_determined (>= 0.62)" in compared(rising, [0.0, 1.0])
    assert "not_determined [0.62, 1]" in compared(rising, None)
    edge = {"value": 1.0, "lower": None, "upper": None, "status": "at_bound"}
    assert "1 (at_bound)" in compared(edge, [0.0, 1.0])  # it said "at_bound" without the value
    flat = {"value": None, "lower": 0.0, "upper": 1.0, "status": "not_determined"}
    assert "not_determined  " in compared(flat, [0.0, 1.0])


# ---------------------------------------------------------------------------- planned length


def _console(path: Path, total: int | None, n: int = 40) -> str:
    lines = []
    for i in range(1, n + 1):
        if total is not None:
            lines.append(f"{100 * i // total:3d}%|#| {5 * i}/{total} [00:{i:02d}<01:00, "
                         "1.50s/it]")
        reward = 0.2 + 0.6 * (1 - math.exp(-i / 10)) + 0.01 * math.sin(i)
        lines.append(str({"loss": 0.1, "reward": reward, "learning_rate": 1e-5,
                          "epoch": i / n}))
    path.write_text("\n".join(lines) + "\n")
    return str(path)


def test_a_progress_counter_gives_the_planned_length(tmp_path, capsys):
    run = load_run(_console(tmp_path / "console.log", 500))
    assert run.steps[-1] == 200 and run.meta.value("planned_steps") == 500
    assert run.meta.planned_steps.source == "inferred"
    assert "n/500" in run.meta.planned_steps.evidence
    err = _error(capsys, ["forecast", _console(tmp_path / "bare.log", None),
                          "--logging-steps", "5"])
    assert "no planned length (TRL max_steps, or the total N of a console's progress " \
           "counter n/N)" in err


def test_a_trainer_state_still_gives_its_max_steps(tmp_path):
    path = tmp_path / "trainer_state.json"
    path.write_text(json.dumps({"max_steps": 300, "log_history": [
        {"step": s, "reward": 0.01 * s} for s in range(1, 31)]}))
    assert load_run(path).meta.value("planned_steps") == 300


# ---------------------------------------------------------------------------- BanditConfig


def test_bandit_config_is_keyword_only_as_its_doc_says():
    assert "keyword-only" in grpodyn.BanditConfig.__doc__
    with pytest.raises(TypeError):
        grpodyn.BanditConfig(0.5, 0.9)
    assert grpodyn.BanditConfig(lr=0.5, momentum=0.9).momentum == 0.9


def test_the_run_may_be_passed_by_keyword(tmp_path):
    """diagnose(run=...), analyse_run(run=...) and advise_log(run=...) work as the signatures
    show (the path-taking wrapper made ``run`` positional-only)."""
    import numpy as np

    import grpodyn

    rows = [{"step": i + 1, "reward": float(0.2 + 0.5 * (1 - np.exp(-i / 30)))}
            for i in range(120)]
    path = tmp_path / "trainer_state.json"
    path.write_text(__import__("json").dumps({"log_history": rows}))
    run = grpodyn.load_run(path)
    assert grpodyn.diagnose(run=run).state == grpodyn.diagnose(run).state
    assert grpodyn.analyse_run(run=str(path)).run.n_points == 120
    assert grpodyn.advise_log(run=run).recommendation["direction"]


def test_a_tie_for_the_longest_run_is_said(tmp_path):
    """Two runs of 30 points: 'the one with the most reward points' named one of a tie."""
    path = tmp_path / "two.jsonl"
    path.write_text("".join(json.dumps({"step": s, "reward": 0.1 * (s % 7)}) + "\n"
                            for s in [*range(1, 31), *range(1, 31)]))
    run = grpodyn.load_run(path)
    assert run.run_name == "run1"
    assert "read 'run1', the first of the 2 with the most reward points (30)" in run.warnings[0]


def test_a_run_built_by_hand_is_checked():
    from grpodyn.empirical.logs.loaders import Run

    steps, reward = np.arange(40.0), np.linspace(0, 1, 40)
    with pytest.raises(LogFormatError, match="strictly increasing"):
        Run("x", "custom", steps[::-1], reward, {})
    with pytest.raises(LogFormatError, match="reward holds 30 values for 40 steps"):
        Run("x", "custom", steps, reward[:30], {})
    with pytest.raises(LogFormatError, match="entropy must be a one-dimensional array of numbers"):
        Run("x", "custom", steps, reward, {"entropy": np.array(["a"] * 40)})
