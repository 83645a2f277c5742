"""A reward pinned at one value: the plateau and the forecast's point are that value."""

from __future__ import annotations

import numpy as np
import pytest

from grpodyn.empirical.logs.loaders import Run
from grpodyn.empirical.logs.run_analysis import analyse_run


def _pinned_run() -> Run:
    """A reward that falls from -0.6 to -1 over ten steps and sits at -1 for 230 more."""
    steps = np.arange(1.0, 241)
    rng = np.random.default_rng(0)
    reward = np.where(steps <= 10, -0.6 - 0.04 * steps + rng.normal(0, 0.01, steps.size), -1.0)
    return Run("pinned.jsonl", "test", steps, reward, {})


@pytest.mark.parametrize("forecaster", ["ensemble", "adaptive", "learned_prior"])
def test_the_point_of_a_pinned_reward_holds_its_value(forecaster: str) -> None:
    analysis = analyse_run(_pinned_run(), train_fraction=0.5, forecaster=forecaster)
    forecast = analysis.forecast
    assert np.all(forecast.point == -1.0)
    assert np.all(forecast.lower <= -1.0) and np.all(forecast.upper >= -1.0)
    assert forecast.point_weights == {"pinned": 1.0}
    assert any("pinned at -1" in w for w in forecast.warnings)


def test_the_plateau_of_a_pinned_reward_is_its_value() -> None:
    plateau = analyse_run(_pinned_run()).plateau
    assert (plateau["value"], plateau["lower"], plateau["upper"]) == (-1.0, -1.0, -1.0)
    assert plateau["status"] == "determined" and "pinned" in plateau["reason"]


def test_a_moving_reward_keeps_its_forecast() -> None:
    steps = np.arange(1.0, 241)
    reward = 0.2 + 0.5 * (1 - np.exp(-steps / 60)) + np.random.default_rng(1).normal(0, 0.02, 240)
    analysis = analyse_run(Run("moving.jsonl", "test", steps, reward, {}), train_fraction=0.5)
    assert analysis.forecast.point_weights != {"pinned": 1.0}
    assert analysis.plateau.get("model") != "pinned"
