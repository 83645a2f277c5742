"""A raise read off a flat run names the fit's plateau where the run sits inside it.

``grpodyn fit`` may place a plateau that a run reached early while ``grpodyn advise`` reads the
run as flat and raises the lr; the advice's caveat then gives the fit's plateau and says that a
run at its plateau gains nothing from a higher lr, instead of a general remark.
"""

from __future__ import annotations

import json

import numpy as np

from grpodyn.empirical.logs.advice import advise_log
from grpodyn.empirical.logs.loaders import load_run


def _log(tmp_path, reward):
    path = tmp_path / "trainer_state.json"
    path.write_text(json.dumps({"log_history": [
        {"step": 20 * (n + 1), "reward": float(r), "learning_rate": 5e-6}
        for n, r in enumerate(reward)]}))
    return load_run(path)


def _flat_notes(advice):
    return [w for w in advice.warnings if "plateau" in w and "higher lr gains nothing" in w]


def test_a_flat_run_sitting_at_its_fitted_plateau_is_told_so_with_the_plateau(tmp_path):
    # a small early rise (0.04 over tau 200 steps) then 1,600 flat steps: flat in practice,
    # while the fit places the plateau the run reached (seed 4; as on Ning-Guo's public log)
    t = 20.0 * np.arange(1, 94)
    noise = np.random.default_rng(4).normal(0, 0.02, t.size)
    run = _log(tmp_path, 0.65 + 0.04 * (1 - np.exp(-t / 200)) + noise)
    advice = advise_log(run)
    assert advice.recommendation["lr_ratio"] > 1  # raised: the run is read as flat
    (note,) = _flat_notes(advice)
    assert note.startswith("the curve fit places a plateau at 0.6")
    assert "grpodyn fit" in note and "last quarter averages" in note


def test_a_flat_run_with_no_plateau_placed_keeps_the_general_caveat(tmp_path):
    t = 20.0 * np.arange(1, 94)
    run = _log(tmp_path, 0.4 + np.random.default_rng(4).normal(0, 0.02, t.size))
    advice = advise_log(run)
    notes = _flat_notes(advice)
    assert notes == ["a run already at its plateau also stays flat; then a higher lr gains "
                     "nothing"]

