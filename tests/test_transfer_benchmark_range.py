"""benchmarks/transfer_sweeps.py: the range a transfer's mean is checked against."""

import runpy
from pathlib import Path

import numpy as np
import pytest

from grpodyn.empirical.logs.sweep import SweepRun

SWEEPS = runpy.run_path(str(Path(__file__).resolve().parents[1] / "benchmarks"
                            / "transfer_sweeps.py"))


def _runs(top: float) -> list[SweepRun]:
    """Three lrs whose reward climbs from 0.25 to ``top`` (noise 0.02)."""
    out = []
    for lr in (1e-6, 2e-6, 4e-6):
        rng = np.random.default_rng(int(lr * 1e9))
        steps = np.arange(120.0)
        reward = np.clip(top - (top - 0.25) * np.exp(-steps * lr / 4e-8)
                         + rng.normal(0, 0.02, steps.size), 0.0, None)
        out.append(SweepRun(f"lr{lr:g}", steps, reward,
                            {"optimizer": "adam", "momentum": 0.9, "lr": lr, "group_size": 8,
                             "batch": 16, "seed": 0}))
    return out


def test_a_rate_is_checked_against_zero_to_one() -> None:
    """A reward the loaders read as a rate: [0, 1], so a mean of 1.02 is out of range."""
    low, high, source = SWEEPS["range_checked"](_runs(0.9))
    assert (low, high) == (0.0, 1.0) and source == "the reward's range"


def test_a_reward_beyond_one_is_checked_against_the_span_it_logged() -> None:
    """A verifier plus a format bonus (up to 1.2; here 1.1): no range read, the logged span."""
    runs = _runs(1.1)
    low, high, source = SWEEPS["range_checked"](runs)
    assert source == "the span of the logged rewards"
    assert low == pytest.approx(min(r.reward.min() for r in runs))
    assert high == pytest.approx(max(r.reward.max() for r in runs)) and high > 1.0


def test_nothing_to_score_leaves_the_results_file_as_it_is(tmp_path, capsys) -> None:
    """Without the public logs, the benchmark wrote an empty result over the committed one."""
    benchmark = runpy.run_path(str(Path(__file__).resolve().parents[1] / "benchmarks"
                                   / "transfer.py"))
    out = tmp_path / "transfer.json"
    out.write_text("kept")
    empty = tmp_path / "empty"  # a folder of public logs that holds none of the sweeps
    empty.mkdir()
    for folder in (tmp_path / "none", empty):
        code = benchmark["main"](["--only", "public", "--public-dir", str(folder),
                                  "--out", str(out)])
        assert code == 2 and out.read_text() == "kept"
        assert "no sweep to score in public" in capsys.readouterr().err
