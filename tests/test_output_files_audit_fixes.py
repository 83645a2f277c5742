"""Outputs that replaced a user's files, and inputs read silently short or wrong.

The export and the report wrote over files they did not write; an empty ``--out`` meant the
current folder; a truncated or damaged TensorBoard event file was read as a shorter run; an
empty reward cell of a CSV lost its point without a word; options a command does not use were
accepted and ignored; a write error named a temporary file; a reward range or a learning rate
near the largest float ran into overflows.
"""

from __future__ import annotations

import json
import math
import random
import struct
from pathlib import Path

import pytest

from grpodyn.cli import main

TINY = (Path(__file__).parent.parent / "studies" / "tiny_grids" / "data" / "tiny_grid"
        / "adam_lr0.0003_G4_B8_seed0.json")


def _error(argv, capsys):
    """Run ``argv``: exit 2, one stderr line without a traceback, nothing on stdout."""
    assert main(argv) == 2, argv
    out, err = capsys.readouterr()
    assert out == "" and len(err.strip().splitlines()) == 1 and "Traceback" not in err
    return err.strip()


def _jsonl(path, n=40, seed=0):
    rng = random.Random(seed)
    path.write_text("".join(json.dumps({"step": i, "reward": 0.2 + 0.6 * (1 - math.exp(-i / 8))
                                        + rng.gauss(0, 0.02)}) + "\n" for i in range(1, n + 1)))
    return str(path)


# ---------------------------------------------------------------------------- export --out


def test_export_refuses_to_replace_a_users_readme_unless_forced(tmp_path, capsys):
    out = tmp_path / "proj2"
    out.mkdir()
    (out / "README.md").write_text("my own readme\n")
    line = _error(["export", "--lang", "julia", "--out", str(out)], capsys)
    assert "README.md" in line and "--force" in line and str(out) in line
    assert (out / "README.md").read_text() == "my own readme\n"
    assert not (out / "Project.toml").exists()  # nothing written when one file is refused
    assert main(["export", "--lang", "julia", "--out", str(out), "--force", "--json"]) == 0
    assert (out / "README.md").read_text() != "my own readme\n"
    capsys.readouterr()


def test_export_again_into_its_own_folder_needs_no_force(tmp_path, capsys):
    out = tmp_path / "tex"
    assert main(["export", "--lang", "latex", "--out", str(out), "--json"]) == 0
    assert main(["export", "--lang", "latex", "--out", str(out), "--json"]) == 0
    capsys.readouterr()


def test_an_empty_out_is_refused_not_the_current_folder(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    Path("pyproject.toml").write_text("[project]\nname = 'mine'\n")
    Path("README.md").write_text("mine\n")
    for argv in (["export", "--lang", "python", "--out", ""], ["report", "--out", ""],
                 ["compare", str(TINY), "--out", ""]):
        assert "--out" in _error(argv, capsys)
    assert Path("pyproject.toml").read_text() == "[project]\nname = 'mine'\n"
    assert Path("README.md").read_text() == "mine\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["README.md", "pyproject.toml"]


def test_output_directory_refuses_an_empty_path():
    from grpodyn.cli.options import UsageError, output_directory

    with pytest.raises(UsageError, match="--out"):
        output_directory("")


# ---------------------------------------------------------------------------- report --out


@pytest.mark.parametrize("name", ["index.html", "summary.json", "reward_forecast.png"])
def test_report_of_a_log_refuses_a_folder_with_a_file_it_did_not_write(tmp_path, capsys,
                                                                       name):
    out = tmp_path / "site"
    out.mkdir()
    (out / name).write_text("the user's own\n")
    line = _error(["report", str(TINY), "--out", str(out)], capsys)
    assert name in line and "--out" in line
    assert (out / name).read_text() == "the user's own\n"


def test_reproduction_refuses_a_folder_with_a_figure_it_did_not_write(tmp_path, capsys):
    out = tmp_path / "site"
    out.mkdir()
    (out / "regimes.png").write_bytes(b"mine")
    assert "regimes.png" in _error(["report", "--out", str(out)], capsys)
    assert (out / "regimes.png").read_bytes() == b"mine"


def test_report_is_rerun_into_its_own_folder(tmp_path, capsys):
    from grpodyn.report import REPORT_MARKER

    out = tmp_path / "rr"
    assert main(["report", str(TINY), "--out", str(out), "--json"]) == 0
    assert REPORT_MARKER in (out / "index.html").read_text()
    assert main(["report", str(TINY), "--out", str(out), "--json"]) == 0
    capsys.readouterr()
    # a user's file put there under the summary's name is not replaced
    (out / "summary.json").write_text('{"step": 1, "reward": 0.5}\n')
    line = _error(["report", str(TINY), "--out", str(out)], capsys)
    assert f"{out / 'summary.json'} is not a grpodyn report's summary" in line
    assert (out / "summary.json").read_text() == '{"step": 1, "reward": 0.5}\n'


# ---------------------------------------------------------------------------- write errors


def test_a_write_error_names_the_users_path_not_the_temporary_file(tmp_path, monkeypatch):
    from grpodyn.ground import files

    def denied(*, dir, prefix, suffix):  # noqa: A002 (mkstemp's own keyword)
        raise PermissionError(13, "Permission denied", f"{dir}/{prefix}abc{suffix}")

    monkeypatch.setattr(files.tempfile, "mkstemp", denied)
    target = tmp_path / "x.png"
    with pytest.raises(PermissionError) as caught:
        files.write_atomic(target, "text")
    assert caught.value.filename == str(target)


def test_a_failing_figure_names_the_users_path_and_keeps_the_old_file(tmp_path):
    from grpodyn.ground import save_figure

    class Failing:
        def savefig(self, name, **_):
            raise OSError(28, "No space left on device", name)

    target = tmp_path / "old.png"
    target.write_bytes(b"the old figure")
    with pytest.raises(OSError) as caught:
        save_figure(Failing(), target)
    assert caught.value.filename == str(target)
    assert target.read_bytes() == b"the old figure"
    assert [p.name for p in tmp_path.iterdir()] == ["old.png"]


def test_compare_names_its_out_on_a_write_error(tmp_path, monkeypatch, capsys):
    from grpodyn.ground import files

    def denied(*, dir, prefix, suffix):  # noqa: A002 (mkstemp's own keyword)
        raise PermissionError(13, "Permission denied", f"{dir}/{prefix}slgo488h{suffix}")

    monkeypatch.setattr(files.tempfile, "mkstemp", denied)
    target = tmp_path / "x.png"
    line = _error(["compare", str(TINY), "--out", str(target)], capsys)
    assert f"{target}: Permission denied" in line and "slgo488h" not in line


# ---------------------------------------------------------------------------- TensorBoard


def _event_file(path, n=12):
    """Write ``n`` scalar events (train/reward at steps 1, 2, ...) as TFRecords of one size."""
    pytest.importorskip("tensorboard")
    from tensorboard.compat.proto import event_pb2, summary_pb2
    from tensorboard.compat.tensorflow_stub.pywrap_tensorflow import masked_crc32c

    blob = b""
    for i in range(1, n + 1):
        event = event_pb2.Event(step=i, wall_time=1.0 * i, summary=summary_pb2.Summary(
            value=[summary_pb2.Summary.Value(tag="train/reward", simple_value=0.1 + 0.01 * i)]))
        data = event.SerializeToString()
        head = struct.pack("<Q", len(data))
        blob += (head + struct.pack("<I", masked_crc32c(head)) + data
                 + struct.pack("<I", masked_crc32c(data)))
    path.write_bytes(blob)
    return blob


def test_a_truncated_event_file_is_read_up_to_its_cut_with_a_note(tmp_path):
    from grpodyn.empirical.logs.loaders import load_run

    full = _event_file(tmp_path / "events.out.tfevents.full")
    cut = tmp_path / "events.out.tfevents.cut"
    record = len(full) // 12
    for left in (5, 17, record - 1):  # inside the header, the data, the data's checksum
        cut.write_bytes(full[:9 * record + left])
        run = load_run(cut)
        assert run.n_points == 9
        assert any(f"the file ends inside a record: the last {left} bytes are not read" in w
                   for w in run.warnings)
    assert not any("ends inside" in w for w in load_run(tmp_path / "events.out.tfevents.full")
                   .warnings)


def test_a_damaged_record_inside_an_event_file_is_an_error_with_its_offset(tmp_path, capsys):
    full = bytearray(_event_file(tmp_path / "events.out.tfevents.full"))
    record = len(full) // 12
    for i in range(5 * record + 20, 5 * record + 30):  # inside the sixth record's data
        full[i] ^= 0xFF
    damaged = tmp_path / "events.out.tfevents.damaged"
    damaged.write_bytes(bytes(full))
    line = _error(["runs", str(damaged)], capsys)
    assert str(damaged) in line and f"byte {5 * record}" in line and "corrupt" in line


# ---------------------------------------------------------------------------- CSV cells


def test_an_empty_reward_cell_is_counted_as_a_dropped_point(tmp_path, capsys):
    path = tmp_path / "one.csv"
    path.write_text("step,reward\n1,0.1\n2,0.2\n3,\n4,0.3\n5,0.4\n6,0.42\n")
    assert main(["runs", str(path), "--json"]) == 0
    run = json.loads(capsys.readouterr().out)["runs"][0]
    assert run["n_points"] == 5
    assert "1 point(s) with a missing or non-finite reward dropped" in run["warnings"]


def test_four_bad_reward_cells_count_four(tmp_path):
    from grpodyn.empirical.logs.loaders import load_run

    path = tmp_path / "four.csv"
    path.write_text("step,reward\n1,0.1\n2,nan\n3,\n4,abc\n5,inf\n6,0.42\n7,0.5\n8,0.6\n")
    run = load_run(path)
    assert list(run.steps) == [1, 6, 7, 8]
    assert "4 point(s) with a missing or non-finite reward dropped" in run.warnings


def test_an_empty_cell_does_not_shadow_a_duplicate_steps_value(tmp_path):
    from grpodyn.empirical.logs.loaders import load_run

    path = tmp_path / "dup.csv"
    path.write_text("step,reward,entropy\n1,0.1,2\n2,,1.9\n2,0.2,\n3,0.3,1.8\n")
    run = load_run(path)
    assert list(run.reward) == [0.1, 0.2, 0.3]
    assert any("1 point(s) with a missing" in w for w in run.warnings)


def test_a_wandb_export_run_shorter_than_another_drops_nothing(tmp_path):
    from grpodyn.empirical.logs.loaders import load_runs

    path = tmp_path / "export.csv"
    rows = [f"{s},{0.1 * s:.2f},{0.05 * s if s <= 3 else ''}" for s in range(1, 7)]
    path.write_text('"Step","a - train/reward","b - train/reward"\n' + "\n".join(rows) + "\n")
    runs = {run.run_name: run for run in load_runs(path)}
    assert runs["b"].n_points == 3 and runs["a"].n_points == 6
    assert not any("dropped" in w for run in runs.values() for w in run.warnings)


# ---------------------------------------------------------------------------- ranges and lr


def test_a_reward_range_beyond_the_reward_bound_is_refused(tmp_path, capsys):
    for value in ("-1e308,1e308", "-1e200,1e200"):
        line = _error(["report", str(TINY), "--out", str(tmp_path / "rr"),
                       f"--reward-range={value}"], capsys)
        assert "--reward-range" in line
    assert not (tmp_path / "rr").exists()


def test_an_lr_beyond_any_learning_rate_is_refused_before_the_clock(tmp_path, capsys):
    for extra in (["--out", str(tmp_path / "big.png")], ["--json"]):
        line = _error(["compare", str(TINY), str(TINY), "--clock", "lr", "--lr", "1e308",
                       *extra], capsys)
        assert "--lr" in line and "a learning rate is at most 1e+06" in line
    assert not (tmp_path / "big.png").exists()


def test_a_logged_lr_that_overflows_the_clock_names_the_run():
    import numpy as np

    from grpodyn.empirical.logs.compare import lr_clock
    from grpodyn.empirical.logs.loaders import Run
    from grpodyn.ground import InputError

    steps = np.arange(1.0, 11.0)
    run = Run(source="big.jsonl", format="jsonl", steps=steps, reward=steps / 10,
              metrics={"learning_rate": np.linspace(1e307, 1.7e308, 10)}, reward_key="reward")
    with pytest.raises(InputError, match="big: the logged learning rate"):
        lr_clock(run, name="big")


# ---------------------------------------------------------------------------- unused options


@pytest.mark.parametrize("extra,option", [
    (["--lr", "5"], "--lr"), (["--reward-key", "nope"], "--reward-key"),
    (["--run", "x"], "--run"), (["--momentum", "0.5"], "--momentum"),
    (["--reward-range", "0,1"], "--reward-range"), (["--logging-steps", "5"], "--logging-steps"),
])
def test_report_without_log_refuses_the_options_of_a_log(tmp_path, capsys, extra, option):
    line = _error(["report", "--out", str(tmp_path / "r"), *extra], capsys)
    assert option in line and "LOG" in line
    assert not (tmp_path / "r").exists()


@pytest.mark.parametrize("extra,option", [(["--scheduler", "tcp://x:1"], "--scheduler"),
                                          (["--quick"], "--quick"), (["--serial"], "--serial")])
def test_report_of_a_log_refuses_the_options_of_the_reproduction(tmp_path, capsys, extra,
                                                                 option):
    line = _error(["report", str(TINY), "--out", str(tmp_path / "r"), *extra], capsys)
    assert option in line and "without LOG" in line
    assert not (tmp_path / "r").exists()


def test_runs_says_logging_steps_is_not_used_on_a_log_with_steps(tmp_path, capsys):
    log = _jsonl(tmp_path / "steps.jsonl")
    assert main(["runs", log, "--logging-steps", "5", "--json"]) == 0
    warnings = json.loads(capsys.readouterr().out)["runs"][0]["warnings"]
    assert any(w.startswith("logging_steps 5 not used") and "gives the step" in w
               for w in warnings)


def test_logging_steps_used_by_a_console_log_gets_no_such_note(tmp_path, capsys):
    log = tmp_path / "train.log"
    log.write_text("".join(f"{{'loss': 0.1, 'reward': {0.1 + 0.01 * i:.2f}}}\n"
                           for i in range(12)))
    assert main(["runs", str(log), "--logging-steps", "5", "--json"]) == 0
    run = json.loads(capsys.readouterr().out)["runs"][0]
    assert run["first_step"] == 5 and run["last_step"] == 60
    assert not any("not used" in w for w in run["warnings"])


def test_a_path_that_is_no_regular_file_is_named_for_what_it_is(tmp_path, capsys):
    import os

    from grpodyn.cli import main

    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    (tmp_path / "a").symlink_to(tmp_path / "b")
    (tmp_path / "b").symlink_to(tmp_path / "a")
    expected = {str(fifo): "not a regular file or directory (a pipe, a device or a socket)",
                str(tmp_path / "a"): "a symbolic link loop",
                str(tmp_path / "missing.json"): "no such file or directory"}
    for path, words in expected.items():
        assert main(["runs", path]) == 2
        err = capsys.readouterr().err.strip()
        assert err == f"grpodyn: error: {path}: {words}" or err.startswith(
            f"grpodyn: error: {path}: {words}")


def test_the_python_export_keeps_a_users_file_unless_forced_and_takes_a_str_path(tmp_path):
    from grpodyn.ground import InputError
    from grpodyn.numerics.export import export

    out = tmp_path / "mine"
    out.mkdir()
    (out / "README.md").write_text("my notes\n")
    with pytest.raises(InputError, match=r"README\.md.*force=True"):
        export("julia", str(out))
    assert (out / "README.md").read_text() == "my notes\n"
    assert not (out / "Project.toml").exists()  # nothing written when one file is refused
    written = export("julia", str(out), force=True)
    assert (out / "README.md") in written and (out / "README.md").read_text() != "my notes\n"
    assert export("julia", out) == written  # its own earlier export loses nothing
    (tmp_path / "file").write_text("x")
    for bad in (tmp_path / "file", "", 3):
        with pytest.raises(InputError, match="out"):
            export("julia", bad)


def test_the_python_export_takes_only_a_bool_for_force(tmp_path):
    from grpodyn.ground import InputError
    from grpodyn.numerics.export import export

    (tmp_path / "README.md").write_text("mine\n")
    with pytest.raises(InputError, match="force must be True or False"):
        export("julia", tmp_path, force="no")
    assert (tmp_path / "README.md").read_text() == "mine\n"
