"""A model picked with ``grpodyn fit --model`` is weighed against the flat baselines.

The sigmoid and the inertial form without a momentum are no members of the forecaster, so the
default stack (``--model all``) leaves them unweighed. Picked alone, they were left out too, and
only the flat level and the flat line were weighed: a clean saturating curve that the inertial
form fits at R^2 0.98 came out as "no saturation seen". A picked model now takes part in the
stack; the default stack is unchanged.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from grpodyn.cli import main


def _saturating_log(folder: Path) -> str:
    """Write a clean saturating reward curve: 100 points, plateau 0.8, tau 29 steps, noise 0.02."""
    steps = np.arange(100.0)
    reward = (0.8 - 0.6 * np.exp(-steps / 29)
              + np.random.default_rng(7).normal(0.0, 0.02, steps.size))
    path = folder / "saturating.csv"
    np.savetxt(path, np.column_stack([steps, reward]), delimiter=",", header="step,reward",
               comments="", fmt=["%d", "%.17g"])
    return str(path)


def _fit(argv: list[str], capsys: pytest.CaptureFixture[str]) -> dict[str, Any]:
    assert main(["fit", *argv, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_a_picked_inertial_form_is_weighed_and_gives_its_plateau(tmp_path, capsys):
    """--model inertial without a momentum: the stack weighs it and reports its plateau."""
    log = _saturating_log(tmp_path)
    result = _fit([log, "--model", "inertial"], capsys)
    entry, plateau = result["models"]["inertial"], result["plateau"]
    assert entry["r2"] > 0.97
    assert "inertial" in result["weights"] and result["weights"]["inertial"] > 0.5
    assert entry["weight"] == result["weights"]["inertial"] and entry["weight_reason"] is None
    assert plateau["status"] == "determined" and plateau["model"] == "inertial"
    assert plateau["value"] == pytest.approx(entry["params"]["r_star"])
    assert plateau["lower"] < 0.8 < plateau["upper"]
    assert main(["fit", log, "--model", "inertial"]) == 0
    text = capsys.readouterr().out
    assert "no saturation" not in text and "a flat level (no curve)" not in text
    assert f"plateau: {plateau['value']:.4g} [" in text


def test_a_picked_sigmoid_is_weighed_and_the_plateau_reason_is_its_own(tmp_path, capsys):
    """--model sigmoid: the sigmoid carries a weight; the plateau's reason is the sigmoid's."""
    result = _fit([_saturating_log(tmp_path), "--model", "sigmoid"], capsys)
    entry = result["models"]["sigmoid"]
    assert isinstance(entry["weight"], float) and entry["weight_reason"] is None
    assert result["weights"]["sigmoid"] > 0.5
    reason = result["plateau"]["reason"]
    assert reason.startswith("sigmoid: ")
    assert "no saturation" not in reason and "flat or linear" not in reason


def test_the_default_stack_still_leaves_the_sigmoid_and_free_inertial_form_out(tmp_path, capsys):
    """--model all: the forecaster's members only, the plateau the exponential law's."""
    result = _fit([_saturating_log(tmp_path)], capsys)
    assert set(result["weights"]) == {"level", "flat", "exponential", "power"}
    for name in ("sigmoid", "inertial"):
        assert result["models"][name]["weight"] is None
        assert result["models"][name]["weight_reason"]
    assert result["plateau"]["status"] == "determined"
    assert result["plateau"]["model"] == "exponential"
