"""What the documentation and the docstrings promise, held against what the code does.

The on-policy stability limit of ``predict`` beside the limit at the run's lag, a forecast of
``analyse_run`` from a horizon alone, the forecasters its docstring names, the theory sections
the map's constants cite, the claim example of docs/architecture.md and a command line whose
parser loads no numerical library.
"""

from __future__ import annotations

import ast
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

import grpodyn
from grpodyn.cli import main
from grpodyn.ground import InputError
from grpodyn.numerics.advise import advise
from grpodyn.numerics.forecasters import FORECASTERS
from grpodyn.numerics.mean_field_map import MeanFieldMap
from grpodyn.numerics.predict import PredictionResult, predict

ROOT = Path(__file__).resolve().parents[1]
#: a whole TRL log of 250 steps, one point a step
REWARD_LOG = (ROOT / "tests" / "data" / "real_logs"
              / "IMJONEZZ__UnslothGRPO__outputs_checkpoint-250_trainer_state.reward.json")


def test_building_the_parser_loads_no_numerical_library_and_no_log_code():
    """``grpodyn --help`` builds every command's parser: each imports its work inside ``run``."""
    code = ("import sys, grpodyn.cli as c; c.build_parser(); print(sorted(m for m in sys.modules "
            "if m.split('.')[0] in ('scipy', 'sympy') or m.startswith('grpodyn.empirical')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout
    assert out.strip() == "[]"


@pytest.mark.parametrize(("lag", "label"), [({"refresh": 4}, "refresh K = 4"),
                                            ({"staleness": 4}, "staleness d = 4")])
def test_predict_gives_the_limit_at_the_run_lag_beside_the_on_policy_one(lag, label):
    result = predict(lr=0.01, momentum=0.9, kappa=1.0, **lag).to_dict()
    limit = advise(kappa=1.0, momentum=0.9, target="margin", **lag).stiffness_limit
    assert result["stiffness_max"] == pytest.approx(3.8)  # the on-policy key is kept
    assert result["stiffness_max_lag"] == pytest.approx(limit, rel=1e-9)
    assert result["lag"] == label


def test_predict_on_policy_limit_is_the_run_limit():
    result = predict(lr=0.01, momentum=0.9, kappa=1.0)
    assert isinstance(result, PredictionResult)
    assert result.lag == "on-policy"
    assert result.stiffness_max_lag == pytest.approx(result.stiffness_max)


def test_predict_terminal_labels_the_on_policy_limit_and_shows_the_lag_limit(capsys):
    assert main(["predict", "--lr", "0.01", "--momentum", "0.9", "--kappa", "1",
                 "--refresh", "4"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert "stiffness_max: 3.8 (on-policy)" in lines
    assert "stiffness_max_lag: 0.0730614 (refresh K = 4)" in lines
    assert not any(line.startswith("lag:") for line in lines)


def test_predict_json_keeps_its_keys_and_adds_the_lag_limit(capsys):
    assert main(["predict", "--lr", "0.01", "--momentum", "0.9", "--kappa", "1",
                 "--staleness", "4", "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert {"stiffness_max", "refresh_max", "staleness_max", "stiffness_max_lag",
            "lag"} <= set(result)
    assert result["lag"] == "staleness d = 4"
    assert result["stiffness_max_lag"] == pytest.approx(
        MeanFieldMap(lr=0.01, kappa=1.0, optimizer="sgd", momentum=0.9,
                     staleness=4).stiffness_max)


def test_analyse_run_with_a_horizon_alone_forecasts_the_whole_run_as_the_cli_does(capsys):
    run = grpodyn.load_run(REWARD_LOG)
    forecast = grpodyn.analyse_run(run, horizon=300, diagnose_run=False).forecast
    assert forecast is not None
    assert main(["forecast", str(REWARD_LOG), "--horizon", "300", "--json"]) == 0
    cli = json.loads(capsys.readouterr().out)
    shown = forecast.to_dict()
    assert cli["train_points"] == run.n_points == shown["train_points"]
    assert shown["steps"] == cli["steps"] and shown["steps"][-1] == 300
    assert shown["point"] == pytest.approx(cli["point"])


def test_analyse_run_with_a_horizon_inside_the_run_names_it():
    run = grpodyn.load_run(REWARD_LOG)
    with pytest.raises(InputError, match="horizon 100 is not after step 250"):
        grpodyn.analyse_run(run, horizon=100, diagnose_run=False)


def test_analyse_run_docstring_names_every_registered_forecaster():
    doc = grpodyn.analyse_run.__doc__
    assert all(f"``{name}``" in doc for name in FORECASTERS)


@pytest.mark.parametrize(("doc", "derivation"), [
    (MeanFieldMap.mass.__doc__, "mass"),
    (MeanFieldMap.damping.__doc__, "damping"),
    (MeanFieldMap.effective_damping.__doc__, "effective_damping"),
    (MeanFieldMap.zeta.__doc__, "damping_ratio"),
    (MeanFieldMap.omega0.__doc__, "natural_frequency"),
    (PredictionResult.__doc__.split("critical_stiffness, critical_stiffness_discrete")[1]
     .split("\n    stiffness_max")[0], "critical_stiffness"),
])
def test_the_map_constants_cite_the_section_of_their_derivation(reg, doc, derivation):
    number = reg[derivation].section.split(".")[0]
    assert re.findall(r"docs/theory\.md section (\d+)", doc) == [number]


def test_the_architecture_claim_example_is_the_registered_claim():
    from grpodyn.theory.claims import Claim, get_claim

    text = (ROOT / "docs" / "architecture.md").read_text()
    example = re.search(r'^(claim\(key="stiffness_limit".*?\))\n```', text,
                        flags=re.M | re.S).group(1)
    call = ast.parse(example.replace('f"{NUMERICS}:', '"grpodyn.numerics.claim_checks:'),
                     mode="eval").body
    fields = {keyword.arg: ast.literal_eval(keyword.value) for keyword in call.keywords}
    assert Claim(**fields) == get_claim("stiffness_limit")


def test_a_fit_result_repr_is_one_short_line() -> None:
    import numpy as np

    import grpodyn

    t = np.arange(60.0)
    y = 0.2 + 0.6 * (1 - np.exp(-t / 15)) + 0.01 * np.random.default_rng(0).normal(size=60)
    text = repr(grpodyn.fit_curve("exponential", t, y))
    assert "\n" not in text and len(text) < 300
    assert text.startswith("FitResult('exponential', r0=") and "plateau=" in text


def test_a_fit_above_the_estimated_r2_ceiling_gets_no_share_of_it() -> None:
    import numpy as np

    from grpodyn.empirical.logs.loaders import Run
    from grpodyn.empirical.logs.run_analysis import analyse_run

    # anticorrelated noise: first differences overstate it, so the ceiling falls below the fit
    rng = np.random.default_rng(4)
    t = np.arange(1, 201, dtype=float)
    e = rng.normal(0, 0.05, t.size + 1)
    y = 0.3 + 0.4 * (1 - np.exp(-t / 40)) + (e[1:] - e[:-1]) / 2
    out = analyse_run(Run("anti", "test", t, y, {}), diagnose_run=False).to_dict()
    ceiling = out["noise"]["r2_ceiling"]
    for entry in out["models"].values():
        share = entry["r2_of_explainable"]
        assert (share is None) == (entry["r2"] > ceiling)
        assert share is None or share <= 1
    assert any(entry["r2_of_explainable"] is None for entry in out["models"].values())
