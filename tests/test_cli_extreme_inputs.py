"""Inputs at the edge of a double: a step of 1e200, an lr of 1e100, a plateau of 1e308.

Each reached a traceback (an OverflowError in a fit, a failed SVD, a scipy error on non-finite
residuals, a numpy error on an integer beyond 64 bits) or a silently wrong path; each is now
refused in one line that names the input, with exit 2.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from grpodyn.ground import InputError
from grpodyn.numerics.predict import predict

from .test_cli_input import _error
from .test_numeric_limits_audit_fixes import _json

REAL = Path(__file__).parent / "data" / "real_logs"
GARG = REAL / "garg-aayush__building-from-scratch__grpo_results_lr_sweep_lr_sweep_data.excerpt.csv"


@pytest.mark.parametrize("last_step", [1e200, 1e308])
@pytest.mark.parametrize("command", [["fit"], ["advise", "--log"], ["diagnose"], ["forecast"]])
def test_a_step_beyond_any_count_is_refused(tmp_path, capsys, command, last_step):
    points = [{"step": n, "reward": 0.2 + 0.6 * (1 - math.exp(-n / 20))} for n in range(1, 100)]
    points.append({"step": last_step, "reward": 0.8})
    log = tmp_path / "corrupt.json"
    log.write_text(json.dumps({"log_history": points}))
    assert "a logged step reaches" in _error([*command, str(log)], capsys)


@pytest.mark.parametrize(("setting", "needle"), [("lr=1e100", "lr must be positive and at most"),
                                                 ("batch=100000000000000000000", "batch must be")])
def test_a_sweep_setting_beyond_any_run_is_refused(capsys, setting, needle):
    hparams = "momentum=0.9,optimizer=adamw,group_size=8," + (
        setting if setting.startswith("batch") else f"batch=32,{setting}")
    assert needle in _error(["sweep", str(GARG), "--hparams", hparams], capsys)


def test_a_plateau_beyond_the_reward_bound_is_refused(capsys):
    argv = ["predict", "--lr", "0.1", "--kappa", "1", "--momentum", "0.9", "--r0", "-5",
            "--plateau", "1e308", "--steps", "3"]
    assert _error(argv, capsys).startswith("grpodyn: error: --plateau 1e+308")
    with pytest.raises(InputError, match="plateau = 1e"):
        predict(lr=0.1, kappa=1.0, momentum=0.9, r0=-5.0, plateau=1e300, steps=3)


def test_write_log_keeps_a_dangling_link(tmp_path, capsys):
    link = tmp_path / "run.json"
    link.symlink_to(tmp_path / "nowhere")
    assert "exists; refusing" in _error(["bandit", "--write-log", str(link)], capsys)
    assert link.is_symlink() and not (tmp_path / "nowhere").exists()


@pytest.mark.parametrize(("option", "value", "needle"), [
    ("--momentum", "0.9999", "argument --momentum: not in [0, 0.999]"),
    ("--group-size", "100000000000000000000", "argument --group-size: group_size G must be"),
    ("--batch", "100000000000000000000", "argument --batch: batch B must be"),
])
@pytest.mark.parametrize("command", [["compare"], ["fit"]])
def test_a_setting_no_analysis_takes_is_refused_before_any_run(command, option, value, needle,
                                                              capsys):
    """compare turned these into a per-run note with exit 0; fit took G and B of 1e20."""
    log = str(REAL / "IMJONEZZ__UnslothGRPO__outputs_checkpoint-250_trainer_state.excerpt.json")
    assert needle in _error([*command, log, option, value], capsys)


@pytest.mark.parametrize("value", ["1e-400", "-1e-320", "\u0661e-400"])
def test_a_number_below_the_least_normal_double_is_refused_as_given(capsys, value):
    """1e-400 read as 0.0 and was refused as "got 0.0", a number the user never gave."""
    err = _error(["predict", f"--lr={value}", "--kappa", "1", "--momentum", "0.9"], capsys)
    assert f"argument --lr: '{value}' is below 2.23e-308" in err


def test_an_advised_lr_below_the_least_normal_double_is_refused(capsys):
    """kappa 1e308 gave an lr of 2.6e-311, its digits lost."""
    err = _error(["advise", "--kappa", "1e308"], capsys)
    assert "kappa 1e+308 is too large" in err


def test_advise_margin_without_a_target_is_the_margin_target(capsys):
    """--margin 0.3 alone was ignored under the default critical target."""

    def lr(*extra: str) -> float:
        return _json(["advise", "--kappa", "1", "--momentum", "0.9", *extra], capsys)["lr"]

    limit = predict(lr=1.0, kappa=1.0, momentum=0.9).stiffness_max
    assert lr("--margin", "0.3") == pytest.approx(0.3 * limit)
    assert lr() == lr("--margin", "0.3", "--target", "critical") == pytest.approx(
        (1 - math.sqrt(0.9)) ** 2)


def test_bandit_refuses_a_momentum_given_twice(capsys):
    """--momenta 0.5 0.5 printed each row twice."""
    assert "--momenta: 0.5 given twice" in _error(["bandit", "--momenta", "0.5", "0.50"], capsys)


def test_compare_on_the_lr_clock_names_the_log_without_an_lr(capsys):
    """The error named the file's stem and the Python spelling of the fix."""
    bare = REAL / "IMJONEZZ__UnslothGRPO__outputs_checkpoint-250_trainer_state.reward.json"
    err = _error(["compare", str(GARG), str(bare), "--clock", "lr"], capsys)
    assert err == (f"grpodyn: error: {bare}: no learning rate in the log for --clock lr; give "
                   "--lr (the run's peak lr) or use --clock step")


def test_a_folder_names_the_file_it_left_unread(tmp_path):
    """A folder with a CSV and a trainer_state.json read the CSV without a word of the other."""
    from grpodyn.empirical.logs.loaders import load_run

    (tmp_path / "metrics.csv").write_text("step,reward\n" + "".join(
        f"{n},{0.1 + 0.01 * n}\n" for n in range(1, 30)))
    (tmp_path / "run.json").write_text("{}")
    notes = load_run(tmp_path).warnings
    assert any("read its one log, metrics.csv; left unread: run.json" in n
               for n in notes), notes
