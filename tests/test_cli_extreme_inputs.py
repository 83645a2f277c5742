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
