"""Assembly of a run from a log's records: resumed runs, run tags, held-out values at steps of
their own, duplicate columns, a last line cut short, directories of logs, gzip, decimal commas.

Each case writes a small log to ``tmp_path``.
"""

from __future__ import annotations

import gzip
import json
import math
from pathlib import Path

import numpy as np
import pytest

from grpodyn.cli import main
from grpodyn.empirical.logs.loaders import LogFormatError, list_runs, load_run, load_runs


def _error(capsys, argv: list[str]) -> str:
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err
    return err


def _curve(s: float) -> float:
    return 0.6 - 0.5 * math.exp(-s / 15)


# ---------------------------------------------------------------------------- resumed runs


def _verl_line(step: int, reward: float) -> str:
    return (f"(TaskRunner pid=9) step:{step} - actor/entropy:0.5 - actor/lr:1e-06 - "
            f"critic/score/mean:{reward:.4f} - response_length/mean:500.0\n")


def test_a_resumed_console_keeps_the_resumed_branch(tmp_path):
    """Steps 1-80 (collapsing after 50), a crash, then 50-150 resumed from step 50."""
    path = tmp_path / "verl_resumed.log"
    lines = [_verl_line(s, 0.01 if s > 50 else _curve(s)) for s in range(1, 81)]
    lines += ["Traceback (most recent call last):\n", "RuntimeError: NCCL timeout\n"]
    lines += [_verl_line(s, _curve(s)) for s in range(50, 151)]
    path.write_text("".join(lines))
    run = load_run(path)
    assert list(run.steps) == list(range(1, 151))
    assert np.allclose(run.reward, [round(_curve(s), 4) for s in range(1, 151)])
    assert ("resumed at step 50: the 31 earlier records from step 50 on are replaced by the "
            "resumed run's") in run.warnings
    assert not any("distinct step" in w or "sorted" in w for w in run.warnings)


def test_a_resumed_jsonl_drops_the_abandoned_records_of_every_metric(tmp_path):
    path = tmp_path / "metrics.jsonl"
    records = [{"step": s, "reward": 0.0, "eval_reward": 0.0} for s in range(1, 31)]
    records += [{"step": s, "reward": _curve(s)} for s in range(20, 41)]
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    run = load_run(path)
    assert list(run.steps) == list(range(1, 41))
    assert np.allclose(run.reward[19:], [_curve(s) for s in range(20, 41)])
    # the abandoned branch's held-out values from step 20 on are gone with it
    assert np.isfinite(run.metrics["heldout_reward"]).sum() == 19
    assert any(w.startswith("resumed at step 20: the 11 earlier records") for w in run.warnings)


def test_a_resumed_typed_jsonl_is_not_averaged_with_the_abandoned_branch(tmp_path):
    path = tmp_path / "metrics.jsonl"
    records = [{"type": "train", "step": s, "reward": 0.0} for s in range(1, 31)]
    records += [{"type": "train", "step": s, "reward": 1.0} for s in range(20, 41)]
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    run = load_run(path)
    assert list(run.steps) == list(range(1, 41))
    assert list(run.reward[19:]) == [1.0] * 21
    assert any(w.startswith("resumed at step 20") for w in run.warnings)


def test_a_resumed_trainer_state_keeps_the_resumed_entries(tmp_path):
    history = [{"step": s, "reward": 0.0} for s in range(1, 31)]
    history += [{"step": s, "reward": 1.0} for s in range(20, 41)]
    path = tmp_path / "trainer_state.json"
    path.write_text(json.dumps({"log_history": history}))
    run = load_run(path)
    assert list(run.reward[19:]) == [1.0] * 21 and run.n_points == 40
    assert any(w.startswith("resumed at step 20") for w in run.warnings)


def test_records_repeated_at_one_step_keep_the_first(tmp_path):
    """A metric logged twice per step is no resume: the first record of a step stays."""
    path = tmp_path / "log.json"
    path.write_text(json.dumps([{"step": 1 + i // 2, "reward": 0.01 * i} for i in range(40)]))
    run = load_run(path)
    assert run.n_points == 20 and list(run.reward[:2]) == [0.0, 0.02]
    assert not any("resumed" in w for w in run.warnings)


def test_a_shuffled_log_without_a_repeated_step_is_sorted_not_resumed(tmp_path):
    path = tmp_path / "messy.csv"
    path.write_text("step,reward\n3,0.3\n1,0.1\n2,0.2\n4,0.4\n")
    run = load_run(path)
    assert list(run.steps) == [1, 2, 3, 4]
    assert not any("resumed" in w for w in run.warnings)


# ---------------------------------------------------------------------------- run tags


def test_interleaved_runs_tagged_by_run_name_are_split(tmp_path):
    path = tmp_path / "interleaved.jsonl"
    with path.open("w") as f:
        for s in range(1, 41):
            for name, hi in (("lr1e-6", 0.7), ("lr4e-6", 0.2)):
                f.write(json.dumps({"run_name": name, "step": s, "reward": hi * _curve(s)}) + "\n")
    runs = load_runs(path)
    assert [r.run_name for r in runs] == ["lr1e-6", "lr4e-6"]
    assert all(r.n_points == 40 for r in runs)
    assert np.allclose(runs[1].reward, [0.2 * _curve(s) for s in range(1, 41)])
    assert not any("distinct step" in w for r in runs for w in r.warnings)
    assert any("'run_name'" in w for w in runs[0].warnings)


def test_appended_runs_are_named_by_their_tag(tmp_path):
    path = tmp_path / "two_runs.jsonl"
    path.write_text("".join(json.dumps({"run": run, "step": s, "reward": _curve(s)}) + "\n"
                            for run in ("runA", "runB") for s in range(1, 31)))
    assert list_runs(path) == ["runA", "runB"]


def test_the_long_csv_honours_the_same_run_tags(tmp_path):
    path = tmp_path / "long.csv"
    path.write_text("experiment,step,metric,value\n"
                    + "".join(f"{e},{s},reward,{_curve(s)}\n" for e in ("a", "b")
                              for s in range(1, 21)))
    assert list_runs(path) == ["a", "b"]


def test_a_wide_csv_with_a_run_column_is_split(tmp_path):
    path = tmp_path / "runs.csv"
    path.write_text("run_id,step,reward\n" + "".join(f"{r},{s},{h * _curve(s)}\n"
                                                   for s in range(1, 21)
                                                   for r, h in (("a", 1.0), ("b", 0.5))))
    runs = load_runs(path)
    assert [r.run_name for r in runs] == ["a", "b"]
    assert np.allclose(runs[1].reward, [0.5 * _curve(s) for s in range(1, 21)])


# ---------------------------------------------------------------------------- held-out values


def test_evaluations_at_steps_without_a_training_point_are_kept(tmp_path):
    """logging_steps 10, eval_steps 25: every evaluation is placed, and the note counts them."""
    history = []
    for s in range(1, 401):
        if s % 10 == 0:
            history.append({"step": s, "reward": _curve(s / 10)})
        if s % 25 == 0:
            history.append({"step": s, "eval_reward": s / 1000, "eval_loss": 0.0})
    path = tmp_path / "trainer_state.json"
    path.write_text(json.dumps({"log_history": history}))
    run = load_run(path)
    held = run.metrics["heldout_reward"]
    assert np.isfinite(held).sum() == 16
    at = dict(zip(run.steps, held, strict=True))
    assert at[50.0] == 0.05 and at[30.0] == 0.025 and at[80.0] == 0.075
    assert "8 evaluation entries merged into the training entries of their steps" \
        in run.warnings
    assert any(w.startswith("8 held-out values logged at steps without a training point")
               and "25->30" in w for w in run.warnings)


def test_held_out_values_that_find_no_free_training_step_are_said(tmp_path):
    records = [{"step": s, "reward": _curve(s)} for s in range(10, 101, 10)]
    records += [{"step": 21, "eval_reward": 0.1}, {"step": 23, "eval_reward": 0.2},
                {"step": 150, "eval_reward": 0.3}]
    path = tmp_path / "log.json"
    path.write_text(json.dumps(records))
    run = load_run(path)
    at = dict(zip(run.steps, run.metrics["heldout_reward"], strict=True))
    assert at[30.0] == 0.2 and np.isfinite(run.metrics["heldout_reward"]).sum() == 1
    assert any(w.startswith("1 held-out value not placed (logged at step 21)")
               for w in run.warnings)
    assert any(w.startswith("1 held-out value not placed (logged at step 150): outside")
               for w in run.warnings)


def test_an_evaluation_before_training_goes_to_the_first_training_point(tmp_path):
    """verl's val_before_train and TRL's eval_on_start log step 0; training starts at step 1.

    The first training point's rewards come from completions of the policy the evaluation
    scored (not yet updated): the value is placed there, and the note says so.
    """
    records = [{"step": 0, "val-core/math/acc/mean@1": 0.2}]
    records += [{"step": s, "critic/score/mean": _curve(s)} for s in range(1, 101)]
    records += [{"step": s, "val-core/math/acc/mean@1": 0.2 + s / 1000} for s in range(10, 101, 10)]
    path = tmp_path / "log.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    run = load_run(path)
    held = run.metrics["heldout_reward"]
    assert run.steps[0] == 1.0 and held[0] == 0.2 and np.isfinite(held).sum() == 11
    assert any("held-out value at step 0, before the first training point (step 1)" in w
               for w in run.warnings)
    assert not any("not placed" in w for w in run.warnings)


def test_an_evaluation_long_before_the_first_training_point_is_not_placed(tmp_path):
    """A log that starts at step 500 (an excerpt, a resumed run): a step-0 value is not its."""
    records = [{"step": 0, "eval_reward": 0.1}]
    records += [{"step": s, "reward": _curve(s)} for s in range(500, 601, 10)]
    path = tmp_path / "log.json"
    path.write_text(json.dumps(records))
    run = load_run(path)
    assert not np.isfinite(run.metrics.get("heldout_reward", np.full(1, np.nan))).any()
    assert any(w.startswith("1 held-out value not placed (logged at step 0): outside")
               for w in run.warnings)


# ---------------------------------------------------------------------------- tables


def test_a_duplicated_column_name_is_an_error(tmp_path, capsys):
    path = tmp_path / "dupcol.csv"
    path.write_text("step,reward,reward\n" + "".join(f"{s},0.{s},0.5\n" for s in range(1, 21)))
    with pytest.raises(LogFormatError, match="column 'reward' appears 2 times"):
        load_run(path)
    assert "dupcol.csv:1: the column 'reward' appears 2 times" in _error(
        capsys, ["diagnose", str(path)])


def test_semicolon_csv_with_decimal_commas_is_read(tmp_path):
    path = tmp_path / "euro.csv"
    path.write_text("step;reward;lr\n"
                    + "".join(f"{s};{str(round(_curve(s), 4)).replace('.', ',')};0,000001\n"
                              for s in range(1, 31)))
    run = load_run(path)
    assert np.allclose(run.reward, [round(_curve(s), 4) for s in range(1, 31)])
    assert np.allclose(run.metrics["learning_rate"], 1e-6)
    assert any("decimal comma" in w for w in run.warnings)


# ---------------------------------------------------------------------------- cut short


def test_a_jsonl_whose_last_line_is_cut_short_is_read_up_to_it(tmp_path):
    lines = [json.dumps({"step": s, "reward": _curve(s)}) for s in range(1, 41)]
    path = tmp_path / "killed.jsonl"
    path.write_text("\n".join(lines) + "\n" + lines[-1][:17])
    run = load_run(path)
    assert run.n_points == 40
    assert any("line 41: the last line is cut short (a run still writing or killed): not read"
               in w for w in run.warnings)


def test_a_csv_whose_last_row_is_cut_short_is_read_up_to_it(tmp_path):
    path = tmp_path / "killed.csv"
    path.write_text("step,reward,kl\n" + "".join(f"{s},{_curve(s):.4f},0.1\n"
                                                 for s in range(1, 41)) + "41,0.69")
    run = load_run(path)
    assert run.n_points == 40
    assert any("line 42: the last line is cut short" in w for w in run.warnings)


def test_a_malformed_line_the_writer_finished_stays_an_error(tmp_path, capsys):
    """A last line followed by a newline was written whole: not JSON there is an error."""
    path = tmp_path / "bad.jsonl"
    path.write_text('{"step": 1, "reward": 0.1}\n{"step": 2, "reward": \n')
    assert "bad.jsonl:2: not JSON" in _error(capsys, ["runs", str(path)])
    table = tmp_path / "bad.csv"
    table.write_text("step,reward\n1,0.5\n2\n")
    assert "bad.csv:3: 1 fields, the header has 2" in _error(capsys, ["runs", str(table)])


def test_a_malformed_line_in_the_middle_stays_an_error(tmp_path, capsys):
    lines = [json.dumps({"step": s, "reward": _curve(s)}) for s in range(1, 41)]
    path = tmp_path / "bad.jsonl"
    path.write_text("\n".join(lines[:20] + ['{"step": 21, "rew'] + lines[20:]) + "\n")
    assert "bad.jsonl:21: not JSON" in _error(capsys, ["runs", str(path)])
    table = tmp_path / "bad.csv"
    table.write_text("step,reward\n1,0.1\n2\n3,0.3\n")
    assert "bad.csv:3: 1 fields, the header has 2" in _error(capsys, ["runs", str(table)])


# ---------------------------------------------------------------------------- files and folders


def _jsonl(path: Path, hi: float) -> None:
    path.write_text("".join(json.dumps({"step": s, "reward": hi * _curve(s)}) + "\n"
                            for s in range(1, 31)))


def test_a_directory_of_logs_loads_one_run_per_file(tmp_path):
    for i in range(3):
        _jsonl(tmp_path / f"run{i}.jsonl", 0.5 + 0.1 * i)
    runs = load_runs(tmp_path)
    assert [r.run_name for r in runs] == ["run0", "run1", "run2"]
    assert np.allclose(runs[2].reward, [0.7 * _curve(s) for s in range(1, 31)])


def test_a_directory_of_one_log_reads_it(tmp_path):
    _jsonl(tmp_path / "metrics.jsonl", 0.5)
    run = load_run(tmp_path)
    assert run.n_points == 30 and run.run_name is None
    assert any("metrics.jsonl" in w for w in run.warnings)


def test_a_directory_of_logs_of_several_formats_says_which_to_give(tmp_path, capsys):
    _jsonl(tmp_path / "a.jsonl", 0.5)
    (tmp_path / "b.csv").write_text("step,reward\n1,0.1\n2,0.2\n")
    err = _error(capsys, ["runs", str(tmp_path)])
    assert "2 logs" in err and "a.jsonl" in err and "b.csv" in err and "give one" in err


def test_gzip_compressed_logs_are_read(tmp_path):
    lines = "".join(json.dumps({"step": s, "reward": _curve(s)}) + "\n" for s in range(1, 31))
    path = tmp_path / "metrics.jsonl.gz"
    path.write_bytes(gzip.compress(lines.encode()))
    run = load_run(path)
    assert run.format == "jsonl" and run.n_points == 30
    console = tmp_path / "train.log.gz"
    console.write_bytes(gzip.compress("".join(_verl_line(s, _curve(s))
                                              for s in range(1, 31)).encode()))
    assert load_run(console).n_points == 30


def test_a_broken_gzip_file_is_a_clear_error(tmp_path, capsys):
    path = tmp_path / "metrics.jsonl.gz"
    path.write_bytes(gzip.compress(b'{"step": 1, "reward": 0.1}\n' * 50)[:30])
    err = _error(capsys, ["runs", str(path)])
    assert "metrics.jsonl.gz: gzip-compressed, but" in err
