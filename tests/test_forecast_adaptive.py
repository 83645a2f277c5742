"""The trend-aware forecaster on small seeded synthetic curves (numerics.forecast_adaptive)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from grpodyn.cli import main
from grpodyn.ground import InputError
from grpodyn.numerics.forecast_adaptive import adaptive_forecast, change_point, regime
from grpodyn.numerics.forecast_trend import TREND_MEMBERS, member_forecasts, relaxation_fit


def _noisy(mean: np.ndarray, seed: int, sd: float = 0.02) -> np.ndarray:
    return mean + sd * np.random.default_rng(seed).standard_normal(mean.size)


def test_a_climbing_line_is_continued() -> None:
    t = np.arange(1.0, 301.0)
    truth = 0.1 + 0.002 * t
    y = _noisy(truth, 0)
    fc = adaptive_forecast(t, y, n_train=150, future_steps=t[150:], bounds=(0.0, 1.0))
    at_cut = truth[149]
    # the run keeps climbing: the forecast at the end carries on at least half the true rise
    assert fc.point[-1] > at_cut + 0.5 * (truth[-1] - at_cut)
    assert np.mean(np.abs(fc.point - truth[150:])) < 0.5 * np.mean(np.abs(at_cut - truth[150:]))
    assert np.mean((y[150:] >= fc.lower) & (y[150:] <= fc.upper)) >= 0.8


def test_a_saturating_curve_saturates() -> None:
    t = np.arange(1.0, 301.0)
    truth = 0.8 - 0.6 * np.exp(-t / 40)
    y = _noisy(truth, 1)
    # cut at 3.75 tau: the deceleration is plain, the forecast sits on the plateau
    fc = adaptive_forecast(t, y, n_train=150, future_steps=t[150:], bounds=(0.0, 1.0))
    assert abs(fc.point[-1] - 0.8) < 0.05
    # cut at 2.5 tau: no straight line's overshoot (the line ends at the range's top)
    fc = adaptive_forecast(t, y, n_train=100, future_steps=t[100:], bounds=(0.0, 1.0))
    line = min(float(np.polyval(np.polyfit(t[:100], y[:100], 1), t[-1])), 1.0)
    assert abs(fc.point[-1] - 0.8) < abs(line - 0.8) / 3
    assert relaxation_fit(t[:100], y[:100]) is not None


def test_regime_tells_quiet_saturating_and_climbing() -> None:
    t = np.arange(1.0, 401.0)
    assert regime(t[:200], _noisy(np.full(200, 0.5), 7, sd=0.05)) == "quiet"
    assert regime(t[:150], _noisy(0.8 - 0.6 * np.exp(-t[:150] / 60), 0)) == "saturating"
    assert regime(t[:150], _noisy(0.1 + 0.002 * t[:150], 0)) == "climbing"
    # a fast rise, then a steady climb on top of it: the relaxation alone does not end it
    drift = 0.2 + 0.3 * (1 - np.exp(-t / 20)) + 0.001 * t
    assert regime(t[:120], _noisy(drift[:120], 0)) == "climbing"


def test_a_climbing_run_is_not_saturated_early() -> None:
    t = np.arange(1.0, 401.0)
    truth = 0.2 + 0.3 * (1 - np.exp(-t / 20)) + 0.001 * t
    y = _noisy(truth, 0)
    fc = adaptive_forecast(t, y, n_train=120, future_steps=t[120:])
    at_cut = truth[119]
    assert fc.weights["relaxation"] == 0.0  # the run goes on beyond the relaxation
    assert fc.point[-1] > at_cut + 0.5 * (truth[-1] - at_cut)
    # the members' disagreement stays in the band: the end of the run lies inside it
    assert fc.lower[-1] <= truth[-1] <= fc.upper[-1]


def test_a_saturating_run_leans_on_the_relaxation() -> None:
    t = np.arange(1.0, 401.0)
    y = _noisy(0.8 - 0.6 * np.exp(-t / 60), 0)
    fc = adaptive_forecast(t, y, n_train=150, future_steps=t[150:], bounds=(0.0, 1.0))
    assert fc.weights["relaxation"] >= 0.5
    assert fc.weights["linear"] == fc.weights["theta"] == 0.0  # the deceleration rules them out
    assert abs(fc.point[-1] - 0.8) < 0.05


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_a_quiet_band_is_not_wider_than_needed(seed: int) -> None:
    t = np.arange(1.0, 401.0)
    sd = 0.05
    y = _noisy(np.full(400, 0.5), seed, sd=sd)
    fc = adaptive_forecast(t, y, n_train=200, future_steps=t[200:], bounds=(0.0, 1.0))
    half = float(np.mean(fc.upper - fc.lower)) / 2
    # white noise around a known level needs z sd; the level's own error adds a little
    assert half < 1.2 * 1.645 * sd
    assert 0.8 <= np.mean((y[200:] >= fc.lower) & (y[200:] <= fc.upper)) <= 0.98


def test_a_collapse_widens_the_band_and_is_not_averaged_away() -> None:
    t = np.arange(1.0, 241.0)
    truth = np.where(t < 110, 0.2 + 0.004 * t, 0.15)
    y = _noisy(truth, 2)
    fc = adaptive_forecast(t, y, n_train=160, future_steps=t[160:], bounds=(0.0, 1.0))
    assert any("change point" in note for note in fc.warnings)
    assert abs(fc.point[0] - 0.15) < 0.05  # the level after the collapse, not an average
    after = adaptive_forecast(t[109:], y[109:], n_train=51, future_steps=t[160:],
                              bounds=(0.0, 1.0))
    assert np.all(fc.upper - fc.lower > after.upper - after.lower)


def test_change_point_sees_a_step_and_not_a_smooth_relaxation() -> None:
    t = np.arange(1.0, 201.0)
    assert change_point(t, _noisy(np.where(t < 120, 0.2 + 0.003 * t, 0.1), 3)) in range(
        115, 125)
    assert change_point(t, _noisy(0.2 + 0.5 * (1 - np.exp(-t / 50)), 4)) is None


def test_no_curvature_leaves_the_relaxation_out() -> None:
    t = np.arange(1.0, 101.0)
    y = _noisy(0.1 + 0.003 * t, 5)
    assert relaxation_fit(t, y) is None
    forecasts = member_forecasts(t, y, np.arange(101.0, 121.0), bounds=(0.0, 1.0))
    assert forecasts.shape == (len(TREND_MEMBERS), 20)
    assert np.all(np.isnan(forecasts[TREND_MEMBERS.index("relaxation")]))
    assert np.all((forecasts[:-1] >= 0) & (forecasts[:-1] <= 1))


def test_weights_and_band_come_from_the_training_part_only() -> None:
    t = np.arange(1.0, 201.0)
    y = _noisy(0.3 + 0.1 * np.sin(t / 15), 6)
    changed = y.copy()
    changed[100:] += 0.5  # the future changes, the forecast must not
    a = adaptive_forecast(t, y, n_train=100, future_steps=t[100:])
    b = adaptive_forecast(t, changed, n_train=100, future_steps=t[100:])
    assert np.array_equal(a.point, b.point) and np.array_equal(a.upper, b.upper)
    assert a.weighting == "rolling_origin"
    assert abs(sum(a.weights.values()) - 1) < 1e-9


@pytest.mark.parametrize("n_train", [3, 7])
def test_too_few_points_is_refused(n_train: int) -> None:
    t = np.arange(1.0, 21.0)
    with pytest.raises(InputError, match="at least 8 training points"):
        adaptive_forecast(t, _noisy(t * 0.01, 7), n_train=n_train, future_steps=t[n_train:])


def test_a_constant_training_part_is_refused() -> None:
    t = np.arange(1.0, 21.0)
    with pytest.raises(InputError, match="constant"):
        adaptive_forecast(t, np.full(20, 0.5), n_train=10, future_steps=t[10:])


def test_forecast_adaptive_keeps_the_json_contract(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``grpodyn forecast --forecaster adaptive --json`` gives the ensemble's keys and a path."""
    values = _noisy(0.8 - 0.6 * np.exp(-np.arange(120) / 40), 8)
    log = tmp_path / "run.csv"
    log.write_text("step,reward\n" + "".join(f"{i},{r:.5f}\n" for i, r in
                                             enumerate(values, start=1)))
    assert main(["forecast", str(log), "--train-fraction", "0.5", "--json"]) == 0
    ensemble = json.loads(capsys.readouterr().out)
    assert main(["forecast", str(log), "--train-fraction", "0.5", "--forecaster", "adaptive",
                 "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert set(ensemble) == set(out)
    assert out["weighting"] == "rolling_origin" and set(out["weights"]) == set(TREND_MEMBERS)
    assert out["plateau"]["status"] == "not_determined"
    assert all(lo <= m <= hi for lo, m, hi in zip(out["lower"], out["point"], out["upper"],
                                                  strict=True))
    held = np.round(values[60:], 5)
    assert out["mae"] == pytest.approx(np.mean(np.abs(held - out["point"])), rel=1e-6)


def _matrix_script() -> dict:
    import runpy

    return runpy.run_path(str(Path(__file__).resolve().parents[1] / "benchmarks"
                              / "forecast_matrix.py"))


def test_the_categorical_source_draws_families_in_turn_and_repeats_a_seed() -> None:
    import argparse

    matrix = _matrix_script()
    runs = matrix["categorical_runs"](range(0, 4))
    assert [name.rsplit("_s", 1)[0] for name, _ in runs] == [
        f"categorical_{family}" for family in matrix["CATEGORICAL_FAMILIES"]]
    assert all(300 <= run.n_points <= 600 for _, run in runs)
    again = matrix["categorical_runs"](range(2, 3))[0][1]
    np.testing.assert_array_equal(again.reward, runs[2][1].reward)
    assert matrix["_seed_range"]("1000-1039") == range(1000, 1040)
    with pytest.raises(argparse.ArgumentTypeError):
        matrix["_seed_range"]("9-3")
