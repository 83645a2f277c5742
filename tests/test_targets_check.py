"""studies/forecast/targets_check.py: each target's verdict under a bootstrap over runs."""

from __future__ import annotations

import runpy
from pathlib import Path

import numpy as np

CHECK = runpy.run_path(str(Path(__file__).resolve().parents[1] / "studies" / "forecast"
                           / "targets_check.py"))
BASELINES = ("last_value", "mean_last20", "linear", "damped_ets", "theta", "scalerl_sigmoid")


def score(mae: float) -> dict:
    """One forecast's scores: its MAE over the noise floor and a band holding 9 of 10 points."""
    return {"mae_floor": mae, "inside": 9, "n": 10, "coverage": 0.9, "is_sigma": 5.0}


def rows(runs: int, moving_every: int, ours: float, spread: float, seed: int = 1) -> dict:
    """Per-forecast rows of ``runs`` runs cut twice: baselines near 1, the forecaster near ``ours``.

    Every ``moving_every``-th run is moving at both cuts; the oracle reads 0.5.
    """
    rng = np.random.default_rng(seed)
    out = {}
    for run in range(runs):
        stratum = "moving" if run % moving_every == 0 else "quiet"
        for cut in ("0.3", "0.5"):
            row = {"stratum": stratum, "ensemble": score(ours + spread * rng.normal()),
                   "oracle_median": score(0.5)}
            row.update({b: score(1.0 + spread * rng.normal()) for b in BASELINES})
            out[f"run{run}_s{run}@{cut}"] = row
    return out


def test_a_clear_win_is_met_and_a_clear_loss_missed():
    """A forecaster far below every baseline meets the MAE targets; far above, misses them."""
    win = CHECK["verdicts"](rows(60, 3, ours=0.5, spread=0.05), "ensemble", 300)
    loss = CHECK["verdicts"](rows(60, 3, ours=2.0, spread=0.05), "ensemble", 300)
    assert [v[2] for v in win[:3]] == ["met", "met", "met"]
    assert [v[2] for v in loss[:3]] == ["missed", "missed", "missed"]
    assert all(v[0] <= v[1] for v in win + loss)


def test_a_tie_within_the_noise_is_undetermined():
    """The forecaster's scores are the best baseline's, dealt to other runs: a tie in the data.

    The full sample's ratio is exactly 1; the bootstrap's interval holds it.
    """
    data = rows(40, 2, ours=1.0, spread=0.5)
    rng = np.random.default_rng(7)
    for stratum in ("moving", "quiet"):
        keys = [k for k, row in data.items() if row["stratum"] == stratum]
        for key, other in zip(keys, rng.permutation(keys), strict=True):
            data[key]["ensemble"] = dict(data[other]["linear"])
    for row in data.values():
        row.update({b: score(3.0) for b in BASELINES if b != "linear"})
    low, high, status = CHECK["verdicts"](data, "ensemble", 300)[0]
    assert low < 1 < high and status == "undetermined"


def test_a_thin_stratum_has_no_verdict():
    """Fewer than ten moving forecasts: the moving targets are undetermined without a draw."""
    verdict = CHECK["verdicts"](rows(40, 10, ours=0.5, spread=0.05), "ensemble", 100)
    assert verdict[0][2] == "undetermined" and np.isnan(verdict[0][0])
    assert verdict[1][2] == "met"


def test_an_overall_target_the_oracle_misses_is_marked():
    """An overall limit below the constant at the future median's own figure is out of reach;
    the strata's limits, set by a baseline that reaches them, never are."""
    data = rows(30, 3, ours=0.9, spread=0.01)
    for row in data.values():
        row["oracle_median"] = score(0.95)
    table = CHECK["summarise"](list(data.values()))
    assert CHECK["oracle_misses"](table) == [False, False, True]


def test_a_baseline_of_zero_error_is_missed_not_a_crash():
    """A baseline that forecasts perfectly sets a limit of zero: a ZeroDivisionError before."""
    data = rows(30, 3, ours=0.5, spread=0.05)
    for row in data.values():
        row.update({b: score(0.0) for b in BASELINES})
    verdicts = CHECK["verdicts"](data, "ensemble", 200)
    assert [v[2] for v in verdicts[:3]] == ["missed", "missed", "missed"]
