"""Where the studies' data live (empirical/data_paths.py): studies/ or $GRPODYN_STUDIES."""

from __future__ import annotations

from pathlib import Path

import pytest

from grpodyn.empirical.data_paths import (
    STUDIES_ENV,
    StudyDataMissing,
    studies_root,
    study_data,
    study_folder,
    study_path,
)

CHECKOUT_STUDIES = Path(__file__).resolve().parents[1] / "studies"


def test_the_checkout_studies_folder_is_the_default(monkeypatch):
    monkeypatch.delenv(STUDIES_ENV, raising=False)
    assert studies_root() == CHECKOUT_STUDIES
    assert study_path("tiny_grids", "tiny_testbed") == CHECKOUT_STUDIES / "tiny_grids" / "data" \
        / "tiny_testbed"


def test_the_environment_names_another_folder(monkeypatch, tmp_path):
    (tmp_path / "deepnet" / "data").mkdir(parents=True)
    (tmp_path / "deepnet" / "data" / "runs_70k.json").write_text("{}")
    monkeypatch.setenv(STUDIES_ENV, str(tmp_path))
    assert study_data("deepnet", "runs_70k.json") == tmp_path / "deepnet" / "data" / "runs_70k.json"


def test_absent_data_are_refused_in_one_line_that_says_where_they_live(monkeypatch, tmp_path):
    monkeypatch.setenv(STUDIES_ENV, str(tmp_path / "nowhere"))
    path = study_path("tiny_grids", "tiny_grid2")  # a default: computed, not checked
    assert path == tmp_path / "nowhere" / "tiny_grids" / "data" / "tiny_grid2"
    with pytest.raises(StudyDataMissing) as error:
        study_data("tiny_grids", "tiny_grid2")
    message = str(error.value)
    assert "\n" not in message and "studies/" in message and STUDIES_ENV in message
    assert isinstance(error.value, FileNotFoundError)
    with pytest.raises(StudyDataMissing):
        study_folder(path)


def test_the_report_data_stay_in_the_package_and_the_studies_data_do_not():
    package_data = Path(__file__).resolve().parents[1] / "empirical" / "data"
    assert sorted(p.name for p in (package_data / "deepnet").iterdir()) == [
        "comparison.json", "predictions.json", "predictions_two_mode.json"]
    for moved in ("tiny_grid", "tiny_grid2", "tiny_testbed"):
        assert not (package_data / moved).exists(), f"{moved} is study data"
