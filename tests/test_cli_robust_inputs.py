"""Bad input and interruptions on the command line: one line naming the input, exit 2 (130 for
Ctrl-C), never a traceback and never a silent wrong number.

Covers Ctrl-C, ``bandit --write-log`` paths and executor options, a step key that is the
reward's column, whose error an ``OSError`` is, a tiny stiffness in ``predict``, a fit whose
numerics fail without naming the log, the count of a refused forecast horizon, a given logging
interval that the log's progress bar contradicts, and a directory that cannot be read.
"""

from __future__ import annotations

import errno
import json
import math
import os
import subprocess
import sys
from pathlib import Path

import pytest

import grpodyn.cli as cli
from grpodyn.cli import main
from grpodyn.console import console_main

from .written_logs import rise_csv

REAL = Path(__file__).parent / "data" / "real_logs"
CONSOLE = REAL / ("Sunshine535__nips-grpo-dynamics__results_gates_1_2_logs_gate2_rho1.00_seed42"
                  ".excerpt.log")


def _error(argv, capsys):
    """Run ``argv``: exit 2, one line on stderr, nothing on stdout; return the line."""
    assert main(argv) == 2, argv
    out, err = capsys.readouterr()
    assert out == "" and len(err.strip().splitlines()) == 1 and "Traceback" not in err
    return err.strip()


@pytest.fixture()
def csv_log(tmp_path):
    """A noisy exponential rise logged at steps 0-99, as a CSV with a ``reward`` column."""
    return rise_csv(tmp_path / "good.csv", points=100, tau=20, seed=3)


# -- Ctrl-C ---------------------------------------------------------------------------------------

def test_ctrl_c_exits_130_with_one_line(monkeypatch, capsys):
    def interrupted():
        raise KeyboardInterrupt

    monkeypatch.setattr(cli, "main", interrupted)
    with pytest.raises(SystemExit) as stop:
        console_main()
    assert stop.value.code == 130
    assert capsys.readouterr().err == "grpodyn: interrupted\n"


@pytest.mark.parametrize("entry", ["from grpodyn.console import console_main; console_main()",
                                   "import runpy; runpy.run_module('grpodyn', run_name="
                                   "'__main__')"])
def test_ctrl_c_while_the_command_line_imports_is_one_line(entry):
    """A Ctrl-C in the 0.15 s the command line's modules take to import: no traceback."""
    interrupt_the_import = (
        "import sys\n"
        "class Stop:\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        "        if name == 'grpodyn.cli':\n"
        "            raise KeyboardInterrupt\n"
        "sys.meta_path.insert(0, Stop())\n")
    done = subprocess.run([sys.executable, "-c", interrupt_the_import + entry, "--help"],
                          capture_output=True, text=True, timeout=120)
    assert (done.returncode, done.stderr) == (130, "grpodyn: interrupted\n")


# -- bandit --write-log ---------------------------------------------------------------------------

@pytest.mark.parametrize("name", ["sim.csv", "trainer_state", "run.jsonl"])
def test_write_log_refuses_a_name_the_loaders_would_not_read_back(name, tmp_path, capsys):
    target = tmp_path / name
    line = _error(["bandit", "--write-log", str(target), "--steps", "20"], capsys)
    assert f"--write-log {target}" in line and ".json" in line
    assert not target.exists()


def test_a_written_log_reads_back(tmp_path, capsys):
    target = tmp_path / "sim.json"
    assert main(["bandit", "--write-log", str(target), "--steps", "20", "--json"]) == 0
    capsys.readouterr()
    assert main(["runs", str(target), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["runs"][0]["n_points"] == 20


@pytest.mark.parametrize("extra,needle", [
    (["--serial", "--scheduler", "tcp://127.0.0.1:1"], "at most one"),
    (["--scheduler", "tcp://127.0.0.1:1"], "--scheduler"),
    (["--momenta", "0.1"], "--momenta"),
])
def test_write_log_refuses_executor_options_as_the_experiments_do(extra, needle, tmp_path,
                                                                  capsys):
    pytest.importorskip("distributed")
    target = tmp_path / "sim.json"
    line = _error(["bandit", "--write-log", str(target), "--steps", "5", *extra], capsys)
    assert needle in line and not target.exists()


# -- a step key that is the reward's column --------------------------------------------------------

@pytest.mark.parametrize("command", ["fit", "runs", "forecast", "compare"])
def test_a_step_key_that_is_the_reward_is_refused(command, csv_log, capsys):
    argv = [command, csv_log, "--step-key", "reward"]
    if command == "forecast":
        argv += ["--train-fraction", "0.8"]
    line = _error(argv, capsys)
    assert csv_log in line and "--step-key reward" in line and "reward" in line


def test_the_api_names_a_refused_horizon_s_count_exactly(csv_log):
    from grpodyn.empirical.logs.loaders import load_run
    from grpodyn.empirical.logs.run_analysis import analyse_run

    with pytest.raises(ValueError, match="asks for 100,001 points"):
        analyse_run(load_run(csv_log), horizon=100_100)


def test_the_step_column_as_step_key_still_fits(csv_log, capsys):
    assert main(["fit", csv_log, "--step-key", "step", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["n_points"] == 100


# -- which OSError is the scheduler's --------------------------------------------------------------

def test_a_file_error_is_not_blamed_on_the_scheduler(tmp_path, capsys):
    pytest.importorskip("distributed")
    blocker = tmp_path / "a_file"
    blocker.write_text("")
    out = blocker / "report"
    line = _error(["report", "--out", str(out), "--scheduler", "tcp://127.0.0.1:1", "--quick"],
                  capsys)
    assert "--scheduler" not in line and str(blocker) in line


def test_an_error_without_a_file_names_the_scheduler():
    text = cli._os_error_text(OSError("Timed out trying to connect"), "tcp://127.0.0.1:1")
    assert text == "--scheduler tcp://127.0.0.1:1: Timed out trying to connect"
    error = OSError(errno.ENOENT, "No such file or directory", "/proc/x")
    assert cli._os_error_text(error, "tcp://127.0.0.1:1") == "/proc/x: No such file or directory"


# -- a tiny stiffness ------------------------------------------------------------------------------

def test_predict_at_a_tiny_stiffness_puts_the_staleness_limit_beyond_the_cap(capsys):
    assert main(["predict", "--lr", "0.01", "--momentum", "0.5", "--kappa", "1e-300",
                 "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["staleness_max"] is None and result["staleness_max_status"] == "beyond_cap"


def test_the_staleness_crossing_is_resolved_at_any_stiffness():
    from grpodyn.numerics import stability

    for beta in (0.0, 0.5, 0.9):
        for k in (1e-302, 1e-200, 1e-12):
            d0 = stability._staleness_crossing(beta, k)
            # the continuum limit: k d0 -> pi (1 - beta) / 2
            assert d0 * k == pytest.approx(math.pi * (1 - beta) / 2, rel=1e-9)
        with pytest.raises(stability.BeyondCap):
            stability.staleness_max(momentum=beta, stiffness=1e-302)
    assert stability._staleness_crossing(0.5, 1e-320) == math.inf


# -- a fit whose numerics fail --------------------------------------------------------------------

@pytest.mark.parametrize("command,meaning", [
    (["fit"], "no model, weight or plateau is reported"),
    (["report", "--out", "OUT"], "none of its files is written"),
])
def test_a_failed_fit_names_the_log_and_says_there_is_no_result(command, meaning, csv_log,
                                                                tmp_path, capsys, monkeypatch):
    """A reward near 1e11 made HiGHS fail on the curve models' stack: no log in the error."""
    from grpodyn.empirical.logs import plateau_stacks
    from grpodyn.ground import InputError

    def failed(*args, **kwargs):
        raise InputError("point weights: the linear programme failed (HiGHS Status 15)")

    monkeypatch.setattr(plateau_stacks, "member_weights", failed)
    out = tmp_path / "report"
    argv = [str(out) if a == "OUT" else a for a in command]
    line = _error([argv[0], csv_log, *argv[1:]], capsys)
    assert line.startswith(f"grpodyn: error: {csv_log}: ") and "HiGHS" in line
    assert meaning in line and not out.exists()


# -- a refused forecast horizon ------------------------------------------------------------------

def test_a_refused_horizon_says_its_count_exactly(csv_log, capsys):
    line = _error(["forecast", csv_log, "--horizon", "100100"], capsys)
    assert "100,001 points past step 99" in line and "at most 100,000" in line
    assert "e+05" not in line


# -- a given logging interval the log contradicts --------------------------------------------------

def test_a_logging_interval_past_the_progress_bar_is_noted(capsys):
    assert main(["runs", str(CONSOLE), "--logging-steps", "5", "--json"]) == 0
    run = json.loads(capsys.readouterr().out)["runs"][0]
    assert run["last_step"] == 300 and run["hyperparameters"]["planned_steps"]["value"] == 200
    notes = [w for w in run["warnings"] if "contradicts the log" in w]
    assert len(notes) == 1 and "logging_steps 5" in notes[0] and "200" in notes[0]


def test_a_logging_interval_within_the_progress_bar_is_not_noted(capsys):
    assert main(["runs", str(CONSOLE), "--logging-steps", "3", "--json"]) == 0
    run = json.loads(capsys.readouterr().out)["runs"][0]
    assert not [w for w in run["warnings"] if "contradicts the log" in w]
    assert not [w for w in run["warnings"] if "short of half" in w]


def test_a_logging_interval_short_of_the_progress_bar_is_noted(capsys):
    """60 points at interval 1 end at step 60 of the 200 planned: stopped, or interval 3."""
    assert main(["runs", str(CONSOLE), "--logging-steps", "1", "--json"]) == 0
    run = json.loads(capsys.readouterr().out)["runs"][0]
    notes = [w for w in run["warnings"] if "short of half" in w]
    assert len(notes) == 1 and "logging_steps 1" in notes[0] and "stopped early" in notes[0]
    assert "up to 3 steps between points" in notes[0]


# -- a directory that cannot be read ------------------------------------------------------------

def test_a_folder_that_cannot_be_listed_is_named(tmp_path, capsys, monkeypatch):
    """As another user, a root-only folder was reported as its trainer_state.json."""
    from grpodyn.empirical.logs.formats import trainer_checkpoint

    folder = tmp_path / "noreaddir"
    folder.mkdir()

    def denied(path):
        raise PermissionError(errno.EACCES, "Permission denied", str(path / "trainer_state.json"))

    monkeypatch.setattr(trainer_checkpoint, "sniff", denied)
    line = _error(["runs", str(folder)], capsys)
    assert line == (f"grpodyn: error: {folder}: a directory this user cannot read "
                    "(permission denied)")


def test_a_folder_without_read_permission_is_named(tmp_path, capsys, monkeypatch):
    from grpodyn.empirical.logs.formats import base

    folder = tmp_path / "noreaddir"
    folder.mkdir()
    access = os.access
    monkeypatch.setattr(base.os, "access",
                        lambda path, mode: Path(path) != folder and access(path, mode))
    line = _error(["runs", str(folder)], capsys)
    assert f"{folder}: a directory this user cannot read" in line


def test_a_log_behind_an_unreadable_folder_is_not_called_missing(tmp_path, capsys, monkeypatch):
    target = str(tmp_path / "noreaddir" / "log.csv")
    lstat = os.lstat

    def denied(path, *args, **kwargs):
        if str(path) == target:
            raise PermissionError(errno.EACCES, "Permission denied", target)
        return lstat(path, *args, **kwargs)

    monkeypatch.setattr(cli.os, "lstat", denied)
    line = _error(["fit", target], capsys)
    assert target in line and "permission denied" in line and "no such file" not in line


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() == 0,
                    reason="root reads every folder")
def test_a_real_unreadable_folder_is_named(tmp_path, capsys):  # pragma: no cover - not as root
    folder = tmp_path / "noreaddir"
    folder.mkdir()
    folder.chmod(0)
    try:
        line = _error(["runs", str(folder)], capsys)
    finally:
        folder.chmod(0o700)
    assert f"{folder}: a directory this user cannot read" in line


# -- the diagnose help ---------------------------------------------------------------------------

def test_the_until_help_says_when_the_monitor_holds_the_warning(capsys):
    assert main(["diagnose", "-h"]) == 0
    text = " ".join(capsys.readouterr().out.split())
    assert ("the one a Monitor holds at STEP when it diagnoses at that step (diagnose_every=1 "
            "at every step)") in text
