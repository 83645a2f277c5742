"""``grpodyn runs`` and the log options every log-reading command shares (--run, --reward-key,
--step-key, --logging-steps, hyperparameter overrides)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from grpodyn.cli import main

FORMATS = Path(__file__).parent / "data" / "formats"
APPENDED = FORMATS / "jorahn__rookworld-rlvr__src_mini_logs_training_history.excerpt.jsonl"


def _run(capsys, *argv: str) -> tuple[int, dict | None, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, (json.loads(out) if code == 0 and "--json" in argv else None), err


def test_runs_json_contract(capsys):
    code, result, _ = _run(capsys, "runs", str(FORMATS / "trl_run"), "--json")
    assert code == 0 and set(result) >= {"format", "runs"}
    (run,) = result["runs"]
    assert set(run) >= {"name", "n_points", "first_step", "last_step", "metrics",
                        "hyperparameters"}
    assert (run["n_points"], run["first_step"], run["last_step"]) == (30, 2, 60)
    assert run["hyperparameters"]["group_size"]["value"] == 4
    assert all(set(h) >= {"value", "source"} for h in run["hyperparameters"].values())
    code, result, _ = _run(capsys, "runs", str(APPENDED), "--json")
    assert [r["name"] for r in result["runs"]] == ["run1", "run2", "run3"]


def test_runs_text_output(capsys):
    code, _, _ = _run(capsys, "runs", str(APPENDED))
    assert code == 0


def test_several_runs_the_pick_is_said_and_run_chooses(capsys):
    code, result, _ = _run(capsys, "fit", str(APPENDED), "--json", "--model", "exponential")
    assert code == 0 and result["run"] == "run3"
    assert "3 runs in this log" in result["warnings"][0]
    code, result, _ = _run(capsys, "fit", str(APPENDED), "--json", "--model", "exponential",
                           "--run", "run2")
    assert code == 0 and result["run"] == "run2" and result["n_points"] == 5


def test_report_of_a_log_reads_the_chosen_run(capsys, tmp_path):
    code, result, _ = _run(capsys, "report", str(APPENDED), "--run", "run2", "--out",
                           str(tmp_path / "report"), "--json")
    assert code == 0 and result["n_points"] == 5


@pytest.mark.parametrize("argv,needle", [
    (["fit", str(APPENDED), "--run", "nope"], "no run named 'nope'; runs: run1, run2, run3"),
    (["diagnose", str(FORMATS / "custom_loop_history.json"), "--run", "x"], "holds one run"),
    (["fit", str(FORMATS / "custom_loop_history.json"), "--reward-key", "zz"], "--reward-key"),
    (["runs", str(FORMATS / "nope.json")], "no such file"),
    (["fit", str(FORMATS / "custom_loop_history.json"), "--lr", "-1"], "not a positive number"),
    (["fit", str(FORMATS / "custom_loop_history.json"), "--model", "exponential_lr"],
     "exponential_lr needs a logged learning rate that varies"),
    (["report", str(APPENDED), "--run", "nope"], "no run named 'nope'; runs: run1, run2, run3"),
    (["fit", str(FORMATS / "custom_loop_history.json"), "--logging-steps", "0"],
     "positive integer"),
])
def test_bad_log_options_exit_2_with_one_line(capsys, argv, needle):
    code, _, err = _run(capsys, *argv)
    assert code == 2 and needle in err and err.count("\n") == 1


def test_advise_uses_the_peak_learning_rate_not_the_last(capsys, tmp_path):
    steps = np.arange(1, 201)
    lr = 1e-5 * (1 - (steps - 1) / 200)  # linear decay to 5e-8: last value 200x below peak
    reward = 0.2 + 0.6 * (1 - np.exp(-steps / 40))
    log = tmp_path / "trainer_state.json"
    log.write_text(json.dumps({"log_history": [
        {"step": int(s), "reward": float(r), "learning_rate": float(x)}
        for s, r, x in zip(steps, reward, lr, strict=True)]}))
    code, result, _ = _run(capsys, "advise", "--log", str(log), "--json")
    assert code == 0
    assert result["measured"]["lr"] == pytest.approx(1e-5)
    assert result["measured"]["lr_source"] == "logged"
    code, user, _ = _run(capsys, "advise", "--log", str(log), "--lr", "2e-5", "--json")
    assert user["measured"]["lr"] == 2e-5 and user["measured"]["lr_source"] == "user"
    assert user["measured"]["kappa"] == pytest.approx(result["measured"]["kappa"] / 2)


def test_diagnose_uses_the_group_size_of_the_log(capsys):
    log = str(FORMATS / "trl_run")  # G = 4 in its training_args.bin
    code, meta_g, _ = _run(capsys, "diagnose", log, "--json")
    assert code == 0 and meta_g["hyperparameters"]["group_size"]["value"] == 4
    code, given, _ = _run(capsys, "diagnose", log, "--json", "--group-size", "4")
    assert given["modes"] == meta_g["modes"]
    assert given["hyperparameters"]["group_size"]["source"] == "user"


@pytest.mark.parametrize("command", ["fit", "forecast", "diagnose", "runs"])
def test_every_log_command_prints_text(capsys, command):
    """Each command's human-readable printer is chosen by the command, not guessed from keys."""
    argv = [command, str(FORMATS / "trl_run")]
    if command == "forecast":
        argv += ["--train-fraction", "0.5"]
    code, _, err = _run(capsys, *argv)
    assert code == 0, err
