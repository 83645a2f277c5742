"""A determined plateau of a run that rose is not placed below where the run is at the cut."""

from __future__ import annotations

import numpy as np
import pytest

from grpodyn.empirical.logs.loaders import Run
from grpodyn.empirical.logs.run_analysis import analyse_run


@pytest.mark.parametrize("seed", [1, 4])
def test_the_interval_of_a_rising_run_stays_above_its_level(seed: int) -> None:
    """60 noisy points of a rise toward 0.7: the Wald interval of r* reached 0.39-0.41.

    A saturating curve approaches its plateau from below, so the plateau of a run that rose to
    about 0.55 lies at or above that level; the interval is cut at the level's one-sided bound.
    """
    t = np.arange(1.0, 61)
    rng = np.random.default_rng(seed)
    reward = 0.2 + 0.5 * (1 - np.exp(-t / 40)) + rng.normal(0, 0.08, t.size)
    plateau = analyse_run(Run("rise", "test", t, reward, {}), reward_range=(0.0, 1.0),
                          diagnose_run=False).plateau
    assert plateau["status"] == "determined"
    level, se = reward[-20:].mean(), 0.08 / np.sqrt(20)
    assert plateau["lower"] >= level - 2 * se
    assert plateau["lower"] <= plateau["value"] <= plateau["upper"]
