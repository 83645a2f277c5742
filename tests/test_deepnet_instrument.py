"""The deep-network instrument (empirical/deepnet/instrument.py): curvature, lr_max."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from grpodyn.empirical.deepnet.instrument import Curvature, LrMax, predict_lr_max
from grpodyn.empirical.deepnet.section import DATA as REPORTED

STUDY_DATA = Path(__file__).resolve().parents[1] / "studies" / "deepnet" / "data"


def test_lr_max_is_the_jury_limit_over_the_top_eigenvalue():
    (plain, heavy) = predict_lr_max(40.0)
    assert plain.lr_max == pytest.approx(2.0 / 40.0)
    assert heavy.lr_max == pytest.approx(2.0 * 1.9 / 40.0)
    assert (plain.momentum, heavy.momentum) == (0.0, 0.9)
    assert "collapse" in plain.note and "one grid step" in heavy.note
    (untested,) = predict_lr_max(40.0, momenta=(0.5,))
    assert untested.lr_max == pytest.approx(3.0 / 40.0) and "did not test" in untested.note
    assert json.loads(json.dumps(heavy.to_dict()))["stiffness_max"] == pytest.approx(3.8)


@pytest.mark.parametrize("size", ["70k", "330k"])
def test_the_instrument_reproduces_the_committed_lr_max_predictions(size):
    """From the shipped measurement, the values committed before the runs (predictions.json)."""
    measured = STUDY_DATA / f"measurements_{size}.json"
    if not measured.is_file():
        pytest.skip("the deep-network study's data (studies/deepnet/data) are absent")
    curvature = Curvature.from_spectrum(json.loads(measured.read_text())["spectrum"])
    committed = {item["setting"]["momentum"]: item["value"]
                 for item in json.loads((REPORTED / "predictions.json").read_text())["items"]
                 if item["model"] == size and item["quantity"] == "lr_max"}
    predicted = {limit.momentum: limit.lr_max for limit in predict_lr_max(curvature)}
    assert set(predicted) == set(committed) == {0.0, 0.9}
    for momentum, value in committed.items():
        assert predicted[momentum] == pytest.approx(value, rel=1e-12)


def test_curvature_round_trips_through_json():
    spectrum = {"top_eigenvalues": [11.0, 2.8], "top_eigenvalues_se": [0.6, 0.2],
                "top_cross_validated": 8.3, "top_cross_validated_se": 1.3,
                "curvature_along_update": None, "replicates": 4,
                "completions_per_replicate": 2048, "lanczos_iterations": 20}
    curvature = Curvature.from_spectrum(spectrum)
    assert curvature.top == 11.0
    assert Curvature.from_spectrum(json.loads(json.dumps(curvature.to_dict()))) == curvature


@pytest.mark.parametrize("bad", [0.0, -3.0, math.inf, math.nan])
def test_a_curvature_that_is_not_positive_is_refused(bad):
    with pytest.raises(ValueError, match="curvature"):
        predict_lr_max(bad)


def test_a_momentum_outside_the_unit_interval_is_refused():
    with pytest.raises(ValueError, match="momenta"):
        predict_lr_max(10.0, momenta=(1.0,))


def test_measure_curvature_on_an_untrained_model(monkeypatch):
    pytest.importorskip("torch")
    pytest.importorskip("transformers")
    from grpodyn.empirical.deepnet.instrument import measure_curvature

    from .deepnet_support import score_half_of_every_group, untrained_70k

    score_half_of_every_group(monkeypatch)
    model, tokenizer = untrained_70k()
    curvature = measure_curvature(model, tokenizer, replicates=2, prompts=4, group_size=4,
                                  iterations=4, seed=0)
    assert isinstance(curvature, Curvature) and curvature.replicates == 2
    assert len(curvature.top_eigenvalues) >= 1 and math.isfinite(curvature.top)
    assert curvature.completions_per_replicate == 16
    if curvature.top > 0:
        assert all(isinstance(limit, LrMax) for limit in predict_lr_max(curvature))
    with pytest.raises(ValueError, match="replicates"):
        measure_curvature(model, tokenizer, replicates=1)


def test_the_old_study_command_says_where_the_study_lives():
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-m", "grpodyn.empirical.deepnet"], capture_output=True,
                          text=True, cwd="/")
    assert done.returncode == 2
    assert "studies/deepnet" in done.stderr and done.stderr.count("\n") == 1
