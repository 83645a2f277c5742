"""``fit`` and ``forecast`` on one training part: fits, weights, the plateau and the forecaster.

``fit --train-fraction`` fits every model on the training part only (the forecast scores the
rest); the models the stack never weighs get a null weight with the reason; tau's reason says
what is true; ``fit`` and ``forecast`` give one plateau for one training part; the forecast's
JSON names the forecaster asked for beside the model that supplied the point.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from grpodyn.cli import main
from grpodyn.empirical.logs.loaders import load_run
from grpodyn.empirical.logs.run_analysis import FIT_MODELS, analyse_run
from grpodyn.ground import InputError

LOGS = Path(__file__).parent / "data" / "real_logs"
LZHIHAN = str(LOGS / ("lzhihan__grpo-math-pipeline__outputs_grpo_qwen2.5-1.5b-sft-grpo-lora_"
                      "checkpoint-1200_trainer_state.excerpt.json"))
IMJONEZZ = str(LOGS / "IMJONEZZ__UnslothGRPO__outputs_checkpoint-250_trainer_state.excerpt.json")
PLATEAU_KEYS = ("status", "value", "lower", "upper")


def _json(argv: list[str], capsys: pytest.CaptureFixture[str]) -> dict[str, Any]:
    assert main([*argv, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def _plateau(entry: dict[str, Any]) -> tuple[Any, ...]:
    return tuple(entry[k] for k in PLATEAU_KEYS)


def test_fit_with_a_train_fraction_fits_the_training_part_only(capsys):
    """The models, the plateau and the weights of ``fit --train-fraction`` see no held-out step."""
    whole = _json(["fit", LZHIHAN], capsys)
    cut = _json(["fit", LZHIHAN, "--train-fraction", "0.5"], capsys)
    run = load_run(LZHIHAN)
    n = int(np.floor(0.5 * run.n_points))
    assert cut["fitted_on"] == {"first_step": float(run.steps[0]),
                                "last_step": float(run.steps[n - 1]), "points": n,
                                "of": run.n_points}
    assert whole["fitted_on"]["points"] == whole["fitted_on"]["of"] == run.n_points
    part = analyse_run(run, train_fraction=0.5, fit_on_training_part=True, diagnose_run=False,
                       models=FIT_MODELS)
    assert part.fits["exponential"].n == n
    for name, entry in cut["models"].items():
        assert entry["params"] == pytest.approx(part.fits[name].to_dict()["params"]), name
    assert cut["models"]["exponential"]["params"] != whole["models"]["exponential"]["params"]
    # one plateau for one training part: the top level's is the forecast's
    assert _plateau(cut["plateau"]) == _plateau(cut["forecast"]["plateau"])
    assert main(["fit", LZHIHAN, "--train-fraction", "0.5"]) == 0
    text = capsys.readouterr().out
    assert f"fitted on steps {run.steps[0]:g}-{run.steps[n - 1]:g}, {n} of {run.n_points} " \
           "points" in text


def test_the_python_analysis_with_a_cut_fits_the_training_part_by_default(capsys):
    """``analyse_run(train_fraction=F)`` fits what ``grpodyn fit --train-fraction F`` fits."""
    run = load_run(LZHIHAN)
    cut = _json(["fit", LZHIHAN, "--train-fraction", "0.5"], capsys)
    part = analyse_run(run, train_fraction=0.5, diagnose_run=False)
    assert part.fits["exponential"].n == cut["fitted_on"]["points"] < run.n_points
    assert _plateau(part.to_dict()["plateau"]) == _plateau(cut["plateau"])
    whole = analyse_run(run, train_fraction=0.5, fit_on_training_part=False, diagnose_run=False)
    assert whole.fits["exponential"].n == run.n_points


def test_forecast_with_a_cut_reads_the_plateau_of_fit_with_the_same_cut(capsys):
    """``forecast --train-fraction F`` and ``fit --train-fraction F`` give one plateau."""
    fit = _json(["fit", LZHIHAN, "--train-fraction", "0.5"], capsys)
    forecast = _json(["forecast", LZHIHAN, "--train-fraction", "0.5"], capsys)
    assert _plateau(forecast["plateau"]) == _plateau(fit["plateau"])


def test_fit_and_forecast_do_not_bound_one_plateau_on_opposite_sides(capsys):
    """The whole IMJONEZZ log: fit read >= 0.054, forecast <= 0.5085; now one plateau."""
    fit = _json(["fit", IMJONEZZ], capsys)
    forecast = _json(["forecast", IMJONEZZ, "--horizon", "2000"], capsys)
    assert _plateau(fit["plateau"]) == _plateau(forecast["plateau"])
    plateau = fit["plateau"]
    assert plateau["status"] == "not_determined"
    assert plateau["lower"] is None and plateau["upper"] is None  # no range: no bound at all
    assert "damped trend" in plateau["reason"] and "rises or falls" in plateau["reason"]


def test_models_the_stack_never_weighs_have_a_null_weight_and_the_reason(capsys):
    """sigmoid (no member) and inertial without a momentum: weight null, not 0.0, and why."""
    result = _json(["fit", LZHIHAN], capsys)
    models, weights = result["models"], result["weights"]
    for name, entry in models.items():
        if name in weights:
            assert entry["weight"] == weights[name] and entry["weight_reason"] is None, name
        else:
            assert entry["weight"] is None and entry["weight_reason"], name
    assert "not one of the forecaster's members" in models["sigmoid"]["weight_reason"]
    assert "momentum" in models["inertial"]["weight_reason"]
    with_momentum = _json(["fit", LZHIHAN, "--momentum", "0.9"], capsys)["models"]["inertial"]
    assert isinstance(with_momentum["weight"], float) and with_momentum["weight_reason"] is None


def test_taus_reason_says_what_is_true_of_a_single_model(capsys):
    """--model sigmoid fitted a sigmoid; --model inertial without momentum derived a tau."""
    sigmoid = _json(["fit", LZHIHAN, "--model", "sigmoid"], capsys)
    assert "sigmoid" in sigmoid["models"]
    reason = sigmoid["dynamics"]["tau"]["reason"]
    assert "could be fitted" not in reason
    assert "sigmoid" in reason and "no single relaxation time" in reason
    inertial = _json(["fit", LZHIHAN, "--model", "inertial"], capsys)
    tau = inertial["models"]["inertial"]["derived"]["tau"]
    reason = inertial["dynamics"]["tau"]["reason"]
    assert "has no relaxation time" not in reason
    assert "momentum" in reason and f"{tau:.4g}" in reason


@pytest.mark.parametrize("extra, asked", [([], "ensemble"), (["--level", "0.99"], "ensemble"),
                                          (["--forecaster", "calibrated_prior"],
                                           "calibrated_prior")])
def test_the_forecast_json_names_the_forecaster_asked_for(extra, asked, capsys):
    """``forecaster`` is the one asked for; ``model`` (what supplied the point) stays."""
    result = _json(["forecast", LZHIHAN, "--train-fraction", "0.5", *extra], capsys)
    assert result["forecaster"] == asked and result["model"]
    fit = _json(["fit", LZHIHAN, "--train-fraction", "0.5"], capsys)
    assert fit["forecast"]["forecaster"] == "ensemble"


def test_a_direction_only_the_forecasters_stack_reads_is_kept_by_both(capsys):
    """The collapsed e8 run: a flat level carries the curve models' weight (no direction), the
    damped trend reads the fall: fit and forecast both bound the plateau from above."""
    log = str(LOGS / ("ShibukiZero__assignment5-alignment__artifacts_experiments_main_ch7_grpo_"
                      "off_policy_sweep_runs_broad_e8_tb256_metrics.excerpt.jsonl"))
    fit = _json(["fit", log], capsys)["plateau"]
    forecast = _json(["forecast", log, "--horizon", "300"], capsys)["plateau"]
    assert _plateau(fit) == _plateau(forecast)
    assert "plateau <=" in fit["reason"] and "forecaster's stack" in fit["reason"]


def test_a_cut_past_the_log_is_refused_with_a_horizon_too(capsys):
    """``--until`` past the last step fitted the whole log silently when a horizon was given."""
    last = load_run(LZHIHAN).steps[-1]
    assert main(["forecast", LZHIHAN, "--until", f"{last + 100:g}", "--horizon",
                 f"{last + 500:g}"]) == 2
    assert f"is past the log's last step {last:g}" in capsys.readouterr().err
    with pytest.raises(InputError, match="past the log's last step"):
        analyse_run(load_run(LZHIHAN), until=last + 100, horizon=last + 500, diagnose_run=False)
    first = load_run(LZHIHAN).steps[0]
    assert main(["forecast", LZHIHAN, "--until", f"{first - 5:g}"]) == 2
    err = capsys.readouterr().err  # said as such, not "leaves 0 points" with a merging note
    assert f"is before the log's first step {first:g}" in err and "merged" not in err
