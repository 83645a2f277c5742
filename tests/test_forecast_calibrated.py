"""The learned prior's median with a calibrated band (numerics.forecast_calibrated), seeded."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from grpodyn.cli import main
from grpodyn.ground import InputError
from grpodyn.numerics.forecast_calibrated import calibrated_prior_forecast
from grpodyn.numerics.forecasters import get_forecaster
from grpodyn.numerics.learned_prior import learned_prior_forecast, sample_prior_curves


def _noisy(mean: np.ndarray, seed: int, sd: float = 0.02) -> np.ndarray:
    return mean + sd * np.random.default_rng(seed).standard_normal(mean.size)


def test_the_band_covers_its_level_on_curves_of_the_prior() -> None:
    """On curves drawn from the theory's prior, cut at half, the 90% band covers about 90%."""
    hits, total, per_curve = 0, 0, []
    for seed in (0, 1):
        for curve in sample_prior_curves(np.random.default_rng(seed), 60):
            n = curve.reward.size
            if n < 40:
                continue
            t = np.arange(1.0, n + 1)
            try:
                fc = calibrated_prior_forecast(t, curve.reward, n_train=n // 2,
                                               future_steps=t[n // 2:], bounds=curve.bounds)
            except InputError:  # a noiseless stretch: the learned prior refuses it
                continue
            held = curve.reward[n // 2:]
            inside = (held >= fc.lower) & (held <= fc.upper)
            hits, total = hits + int(inside.sum()), total + held.size
            per_curve.append(float(inside.mean()))
    assert len(per_curve) > 80
    assert 0.85 <= hits / total <= 0.95
    assert np.mean(np.array(per_curve) >= 0.6) >= 0.9


def test_the_point_is_the_learned_priors_median() -> None:
    t = np.arange(1.0, 241.0)
    y = _noisy(0.8 - 0.6 * np.exp(-t / 50), 2)
    fc = get_forecaster("calibrated_prior").forecast(t, y, n_train=120, future_steps=t[120:],
                                                     bounds=(0.0, 1.0))
    lp = learned_prior_forecast(t, y, n_train=120, future_steps=t[120:], bounds=(0.0, 1.0))
    np.testing.assert_array_equal(fc.point, lp.point)
    np.testing.assert_array_equal(fc.median, lp.median)
    assert np.all(fc.lower <= fc.point) and np.all(fc.point <= fc.upper)


def test_a_quiet_band_covers_near_its_level() -> None:
    """White noise about a level: the calibrated band covers near 90%, no wider than needed."""
    t = np.arange(1.0, 601.0)
    covered = []
    for seed in range(4):
        y = _noisy(np.full(t.size, 0.5), 10 + seed)
        fc = calibrated_prior_forecast(t, y, n_train=300, future_steps=t[300:])
        covered.append(np.mean((y[300:] >= fc.lower) & (y[300:] <= fc.upper)))
        assert not fc.warnings
    assert 0.8 <= np.mean(covered) <= 0.97


def test_a_climbing_run_gets_a_band_that_holds_its_trend() -> None:
    """A run still climbing at the cut: the band reaches the line carried on, the prior's not."""
    t = np.arange(1.0, 301.0)
    truth = 0.1 + 0.002 * t
    y = _noisy(truth, 0)
    fc = calibrated_prior_forecast(t, y, n_train=150, future_steps=t[150:], bounds=(0.0, 1.0))
    lp = learned_prior_forecast(t, y, n_train=150, future_steps=t[150:], bounds=(0.0, 1.0))
    assert fc.warnings and "still moves" in fc.warnings[0]
    assert fc.upper[-1] >= truth[-1] and fc.lower[-1] <= fc.point[-1]
    assert fc.upper[-1] - fc.lower[-1] >= 2 * (lp.upper[-1] - lp.lower[-1])
    assert np.mean((y[150:] >= fc.lower) & (y[150:] <= fc.upper)) >= 0.85


@pytest.mark.parametrize("n_train", [5, 7])
def test_too_few_points_is_refused(n_train: int) -> None:
    t = np.arange(1.0, 21.0)
    with pytest.raises(InputError, match="n_train"):
        calibrated_prior_forecast(t, _noisy(np.full(20, 0.5), 3), n_train=n_train,
                                  future_steps=t[n_train:])


def test_forecast_calibrated_prior_keeps_the_json_contract(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``grpodyn forecast --forecaster calibrated_prior --json`` gives the ensemble's keys."""
    values = _noisy(0.8 - 0.6 * np.exp(-np.arange(120) / 40), 8)
    log = tmp_path / "run.csv"
    log.write_text("step,reward\n" + "".join(f"{i},{r:.5f}\n" for i, r in
                                             enumerate(values, start=1)))
    assert main(["forecast", str(log), "--train-fraction", "0.5", "--forecaster", "ensemble",
                 "--json"]) == 0
    ensemble = json.loads(capsys.readouterr().out)
    assert main(["forecast", str(log), "--train-fraction", "0.5", "--forecaster",
                 "calibrated_prior", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert set(ensemble) == set(out)
    assert out["weighting"] == "conformal" and out["weights"] == {"learned_prior": 1.0}
    assert all(lo <= m <= hi for lo, m, hi in zip(out["lower"], out["point"], out["upper"],
                                                  strict=True))
    held = np.round(values[60:], 5)
    assert out["mae"] == pytest.approx(np.mean(np.abs(held - out["point"])), rel=1e-6)
