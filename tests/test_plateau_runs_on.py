"""A plateau the data run on beyond is not determined, and the advice then keeps the slow mode.

A fast relaxation followed by a slow drift: the saturating curve fits the first and stops; the
residuals about it still slope over the run's last half, so its plateau is contradicted by the
run's own end (docs/theory.md section 6; the test is ``regime``'s ``climbing``).
"""

from __future__ import annotations

import json

import numpy as np

from grpodyn.empirical.logs.advice import advise_log
from grpodyn.empirical.logs.loaders import load_run
from grpodyn.empirical.logs.run_analysis import analyse_run


def _log(tmp_path, drift: float, seed: int = 0) -> str:
    """A TRL log: 0.2 -> 0.6 with tau 15 steps, plus ``drift`` per step, noise 0.02, 200 steps."""
    rng = np.random.default_rng(seed)
    t = np.arange(1, 201)
    y = 0.2 + 0.4 * (1 - np.exp(-t / 15)) + drift * t + 0.02 * rng.normal(size=t.size)
    path = tmp_path / f"drift{drift}_trainer_state.json"
    path.write_text(json.dumps({"log_history": [
        {"step": int(s), "reward": float(r), "learning_rate": 1e-5}
        for s, r in zip(t, y, strict=True)]}))
    return str(path)


def test_a_run_that_rises_on_beyond_its_fitted_curve_has_no_plateau(tmp_path) -> None:
    plateau = analyse_run(load_run(_log(tmp_path, drift=0.0008)), diagnose_run=False).plateau
    assert plateau["status"] == "not_determined" and plateau["value"] is None
    assert plateau["runs_on_t"] > 2
    assert "rises on beyond the fitted curve" in plateau["reason"]
    assert "plateau >=" in plateau["reason"]


def test_a_single_relaxation_keeps_its_plateau(tmp_path) -> None:
    plateau = analyse_run(load_run(_log(tmp_path, drift=0.0)), diagnose_run=False).plateau
    assert plateau["status"] == "determined" and "runs_on_t" not in plateau
    assert abs(plateau["value"] - 0.6) < 0.02


def test_the_advice_on_a_run_rising_on_rests_on_its_slow_mode(tmp_path) -> None:
    advice = advise_log(load_run(_log(tmp_path, drift=0.0008)))
    assert advice.recommendation["direction"] == "raise"
    assert advice.basis["kind"] == "slow_mode"
