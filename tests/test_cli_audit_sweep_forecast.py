"""What a practitioner read in sweep, transfer, compare and forecast, made to agree with itself.

A logged lr replaced by --lr without a word; names that the cut made identical; missing
hyperparameters asked for one batch at a time; a z against the law printed beside a standard
error it was not divided by; a forecast point outside the plateau's interval, unexplained.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from grpodyn.cli.forecast import _point_off_plateau
from grpodyn.empirical.logs.compare import short_names
from grpodyn.empirical.logs.sweep_runs import check_complete, parse_hparams
from grpodyn.ground import InputError

from .test_cli_input import _error
from .test_numeric_limits_audit_fixes import _json

REAL = Path(__file__).parent / "data" / "real_logs"
JSONL = REAL / ("ShibukiZero__assignment5-alignment__artifacts_experiments_main_ch7_grpo_off_"
                "policy_sweep_runs_broad_e8_tb256_metrics.excerpt.jsonl")
GARG = REAL / "garg-aayush__building-from-scratch__grpo_results_lr_sweep_lr_sweep_data.excerpt.csv"


def test_a_logged_lr_replaced_by_the_option_is_said(capsys):
    warnings = _json(["advise", "--log", str(JSONL), "--lr", "1e-5"], capsys)["warnings"]
    assert "the log's lr 4e-05 (logged) replaced by --lr 1e-05" in warnings


def test_names_alike_after_the_cut_are_cut_again_among_themselves():
    stem = "ShibukiZero__assignment5-alignment__artifacts_experiments_main_ch7_grpo_"
    names = [f"{stem}clip_runs_GRPO-Clip_0.20_0.20_(e2_tb256)_metrics",
             f"{stem}clip_runs_GRPO-Clip_0.20_0.28_(e2_tb256)_metrics",
             f"{stem}clip_runs_GRPO-No-Clip_(e2_tb256)_metrics",
             "esmaeil-abedi-dev__verifier-as-reward__training_log_qwen05b_naive_seed7"]
    shown = short_names(names)
    assert len(set(shown)) == len(shown) and all(len(n) <= 40 for n in shown)
    assert "0.20_0.28" in shown[1] and "No-Clip" in shown[2]


@pytest.mark.parametrize(("hparams", "said"), [
    ({}, "hyperparameters optimizer, lr, momentum not found in the log; for Adam also "
         "group_size and batch"),
    ({"optimizer": "adam", "lr": 1e-5, "momentum": 0.9, "group_size": 2},
     "hyperparameter batch not found in the log; Adam's v_hat depends on B G; give it with"),
    ({"optimizer": "adam", "lr": 1e-5}, "hyperparameters momentum, group_size, batch not found"),
])
def test_every_missing_hyperparameter_is_named_at_once(hparams, said):
    with pytest.raises(InputError, match=said.replace("(", r"\(").replace(")", r"\)")):
        check_complete(hparams, "run.csv", "--hparams")
    check_complete({"optimizer": "sgd", "lr": 1e-3, "momentum": 0.0}, "run.csv", "--hparams")


def test_a_sweep_asks_for_what_is_missing_in_one_line(capsys):
    err = _error(["sweep", str(GARG), "--hparams", "optimizer=adam,momentum=0.9,group_size=2"],
                 capsys)
    assert "hyperparameter batch not found in the log" in err


def test_an_integer_key_says_integer():
    with pytest.raises(InputError, match="batch must be an integer, got '1.5'"):
        parse_hparams("batch=1.5", name="--to")


def test_a_point_off_the_plateau_interval_is_said_with_whether_the_band_holds_it():
    out = {"plateau": {"status": "determined", "value": 0.69, "lower": 0.678, "upper": 0.6975},
           "point": [0.70, 0.7052], "lower": [0.6, 0.62], "upper": [0.8, 0.79],
           "steps": [1840.0, 1860.0], "model": "calibrated_prior"}
    said = _point_off_plateau(out)
    assert said.startswith("the point at step 1860 (0.7052, from calibrated_prior) lies above")
    assert said.endswith("; the band holds the plateau")
    out["upper"][-1] = None
    assert said.split(";")[0] in _point_off_plateau(out)
    assert _point_off_plateau(out).endswith("and the band does not hold the plateau")
    out["point"][-1] = 0.69
    assert _point_off_plateau(out) is None
    out["plateau"] = {"status": "not_determined"}
    assert _point_off_plateau(out) is None


def test_a_shared_model_worse_than_a_constant_on_a_run_weakens_every_determined_constant(
        monkeypatch):
    """R^2 -37 on one run of a sweep left its constants "determined"."""
    from grpodyn.empirical.logs.sweep import fit_sweep
    from grpodyn.empirical.logs.sweep_fit import SweepFit
    from grpodyn.empirical.logs.sweep_runs import load_sweep_run

    fit = fit_sweep([load_sweep_run(str(GARG), {"optimizer": "sgd", "momentum": 0.9})])
    report = fit.run_report()
    monkeypatch.setattr(SweepFit, "run_report",
                        lambda self: [{**r, "r2": -37.3} for r in report])
    statuses = [c["status"] for c in fit.constants().values()]
    assert not any(s.startswith("determined") for s in statuses)
    assert all("worse than a constant at its mean (R^2 down to -37.3)" in s for s in statuses)
    from grpodyn.empirical.logs.sweep_fit import _weakened

    assert _weakened("determined") == "weakly determined"
    assert _weakened("not determined: x") == "not determined: x"
