"""benchmarks/transfer_sweeps.py: a mean outside the reward range is counted against the sweep's."""

import runpy
from pathlib import Path

import numpy as np
import pytest

from grpodyn.empirical.logs.sweep import SweepRun

SWEEPS = runpy.run_path(str(Path(__file__).resolve().parents[1] / "benchmarks"
                            / "transfer_sweeps.py"))


def _run(lr: float, seed: int) -> SweepRun:
    """A verifier plus a format bonus: 0.25 -> 1.1, beyond [0, 1] (the loaders read no range)."""
    rng = np.random.default_rng([seed, int(lr * 1e9)])
    steps = np.arange(120.0)
    reward = 1.1 - 0.85 * np.exp(-steps * lr / 4e-8) + rng.normal(0, 0.02, steps.size)
    return SweepRun(f"lr{lr:g}_s{seed}", steps, reward,
                    {"optimizer": "adam", "momentum": 0.9, "lr": lr, "group_size": 8,
                     "batch": 16, "seed": seed})


@pytest.mark.filterwarnings("ignore::RuntimeWarning")  # a fit's trial steps overflow
def test_means_above_one_are_inside_the_range_of_a_reward_that_reaches_beyond_it():
    runs = [_run(lr, seed) for lr in (1e-6, 2e-6, 4e-6) for seed in (0, 1)]
    scores = SWEEPS["score_held_out"](runs, draws=20)
    assert len(scores) == 3
    assert all(s["mean_outside_range"] == 0 for s in scores)
    assert max(s["r2_transfer"] for s in scores) > 0.5  # the transfer follows the sweep
