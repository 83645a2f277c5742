"""The forecaster registry, the Forecaster protocol and the one Forecast result."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from grpodyn.cli import main
from grpodyn.empirical.logs.loaders import Run
from grpodyn.empirical.logs.run_analysis import FORECASTERS as ANALYSIS_FORECASTERS
from grpodyn.empirical.logs.run_analysis import analyse_run
from grpodyn.ground import InputError
from grpodyn.numerics.forecast import EnsembleForecast, Forecast, forecast_curve
from grpodyn.numerics.forecasters import FORECASTERS, get_forecaster, register, unregister

N, CUT = 160, 96


def _run() -> Run:
    rng = np.random.default_rng(3)
    steps = np.arange(1, N + 1, dtype=float)
    reward = 0.8 - 0.6 * np.exp(-steps / 40) + 0.02 * rng.standard_normal(N)
    return Run(source="<test>", format="test", steps=steps, reward=reward, metrics={},
               reward_key="reward")


class LastValue:
    """A toy forecaster: the last training reward, with a fixed band of +-0.05."""

    name = "last_value"

    def forecast(self, steps: np.ndarray, reward: np.ndarray, *, n_train: int,
                 future_steps: np.ndarray, level: float = 0.9,
                 bounds: tuple[float, float] | None = None, momentum: float | None = None,
                 learning_rate: tuple[np.ndarray, np.ndarray] | None = None) -> Forecast:
        future = np.asarray(future_steps, dtype=float)
        flat = np.full(future.size, float(reward[n_train - 1]))
        return Forecast({"last_value": 1.0}, "single", n_train, future, flat, flat - 0.05,
                        flat + 0.05, level, bounds, median=flat, point=flat,
                        point_weights={"last_value": 1.0})


@pytest.fixture
def toy() -> Iterator[str]:
    register(LastValue())
    yield LastValue.name
    unregister(LastValue.name)


def test_the_registry_lists_the_four_forecasters():
    assert tuple(FORECASTERS)[:4] == ("ensemble", "learned_prior", "adaptive", "calibrated_prior")
    assert ANALYSIS_FORECASTERS == ("ensemble", "learned_prior", "adaptive", "calibrated_prior")
    for name in ANALYSIS_FORECASTERS:
        assert get_forecaster(name).name == name
    choices = "ensemble, learned_prior, adaptive, calibrated_prior"
    with pytest.raises(InputError, match=f"'nope' is none of {choices}"):
        get_forecaster("nope")


def test_a_registered_toy_is_served_by_analyse_run_and_the_cli(
        toy: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run = _run()
    analysis = analyse_run(run, train_fraction=CUT / N, forecaster=toy, diagnose_run=False,
                           stack=False)
    assert isinstance(analysis.forecast, Forecast)
    assert np.all(analysis.forecast.point == run.reward[CUT - 1])
    assert analysis.forecast_dict()["model"] == toy
    log = tmp_path / "run.csv"
    log.write_text("step,reward\n" + "".join(f"{s:g},{r:.6f}\n"
                                             for s, r in zip(run.steps, run.reward, strict=True)))
    assert main(["forecast", str(log), "--train-fraction", "0.6", "--forecaster", toy,
                 "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["weights"] == {toy: 1.0} and out["per_model"] == {}
    assert out["plateau"]["status"] == "not_determined"
    with pytest.raises(InputError, match="forecaster: 'other' is none of"):
        analyse_run(run, train_fraction=0.6, forecaster="other", diagnose_run=False)


@pytest.mark.parametrize("name", ["ensemble", "learned_prior", "adaptive", "calibrated_prior"])
def test_every_forecaster_returns_one_forecast_type(name: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.axes import Axes

    run = _run()
    fc = get_forecaster(name).forecast(run.steps, run.reward, n_train=CUT,
                                       future_steps=run.steps[CUT:], level=0.9,
                                       bounds=(0.0, 1.0), momentum=None, learning_rate=None)
    assert isinstance(fc, Forecast)
    assert isinstance(fc, EnsembleForecast) == (name == "ensemble")
    assert hasattr(fc, "members") == (name == "ensemble")  # no field it does not have
    text = repr(fc)
    assert len(text) < 300 and text.startswith(type(fc).__name__ + "(model=")
    report = fc.report()
    assert 1 < len(report.splitlines()) < 10 and "training points" in report
    as_dict = fc.to_dict()
    json.dumps(as_dict)
    assert as_dict["steps"] == run.steps[CUT:].tolist() and as_dict["weighting"] == fc.weighting
    assert "<table>" in fc._repr_html_()
    ax = fc.plot()
    assert isinstance(ax, Axes) and ax.get_xlabel() == "step"
    _, given = plt.subplots()
    assert fc.plot(given) is given
    plt.close("all")


def _noisy(shape: np.ndarray) -> np.ndarray:
    """``shape`` plus white noise of sd 0.01 (seed 6: one of the regime test's 95% of noise
    that reads as quiet; its false alarms are the other 5%)."""
    return shape + 0.01 * np.random.default_rng(6).standard_normal(shape.size)


def test_where_the_run_is_quiet_the_point_and_band_are_the_priors_and_the_plateau_the_curves():
    # noise around a level (quiet at the cut): the point and the band are the calibrated
    # learned prior's, with no note on the regime; the members and their weights (the
    # plateau) stay the curve models'; the point weights name the prior alone
    steps = np.arange(1.0, 201.0)
    kwargs = {"n_train": 100, "future_steps": steps[100:], "bounds": (0.0, 1.0)}
    quiet = _noisy(0.5 + 0 * steps)
    fc = get_forecaster("ensemble").forecast(steps, quiet, **kwargs)
    curves = forecast_curve(steps, quiet, **kwargs)
    prior = get_forecaster("calibrated_prior").forecast(steps, quiet, **kwargs)
    assert np.allclose(fc.point, prior.point) and np.allclose(fc.lower, prior.lower)
    assert np.allclose(fc.upper, prior.upper) and np.allclose(fc.mean, curves.mean)
    assert fc.point_weights == {"calibrated_prior": 1.0} and fc.model == "calibrated_prior"
    assert fc.weights == curves.weights and set(fc.members) == set(curves.members)
    assert np.all((fc.lower <= fc.point) & (fc.point <= fc.upper))
    assert not any("at the cut" in w for w in fc.warnings)


def test_without_the_prior_the_curve_models_stand_alone_and_say_why():
    steps = np.arange(1.0, 201.0)
    kwargs = {"n_train": 100, "future_steps": steps[100:], "bounds": (0.0, 1.0)}
    # a training part without step-to-step noise: the prior refuses it, and the note gives
    # its reason without its hint to use the ensemble (the forecaster in use)
    line = 0.2 + 0.002 * steps
    fc = get_forecaster("ensemble").forecast(steps, line, **kwargs)
    assert np.allclose(fc.point, forecast_curve(steps, line, **kwargs).point)
    note = next(w for w in fc.warnings if "gives no forecast" in w)
    assert "no step-to-step noise" in note and "use the ensemble" not in note


@pytest.mark.parametrize("curve", ["quiet", "rise"])
def test_a_higher_level_never_narrows_the_band_nor_moves_the_point(curve):
    """Above the learned prior's widest band (0.95) the point stays the prior's and the band
    holds that band and the curve models' at the level (the curve models' alone had given a 99%
    band narrower than the 90% one, around another point)."""
    steps = np.arange(1.0, 201.0)
    y = _noisy(0.5 + 0 * steps) if curve == "quiet" else _noisy(
        0.2 + 0.5 * (1 - np.exp(-steps / 30)))
    kwargs = {"n_train": 60, "future_steps": steps[60:], "bounds": (0.0, 1.0)}
    bands = {level: get_forecaster("ensemble").forecast(steps, y, level=level, **kwargs)
             for level in (0.9, 0.95, 0.99)}
    for low, high in ((0.9, 0.95), (0.95, 0.99)):
        assert np.allclose(bands[low].point, bands[high].point)
        assert np.all(bands[high].lower <= bands[low].lower + 1e-12)
        assert np.all(bands[high].upper >= bands[low].upper - 1e-12)
    top = bands[0.99]
    assert top.point_weights == {"calibrated_prior": 1.0}
    assert any("above the learned prior's widest band" in w and "union" in w
               for w in top.warnings)
    curves = forecast_curve(steps, y, level=0.99, **kwargs)
    assert np.all(top.lower <= curves.lower + 1e-12) and np.all(top.upper >= curves.upper - 1e-12)


def test_the_priors_notes_reach_the_user_and_the_model_names_the_prior():
    # far beyond the training span the prior holds its forecast: the note it gives reaches
    # the ensemble's warnings, marked as the prior's; the model named is the point's
    steps = np.arange(1.0, 41.0)
    y = _noisy(0.3 + 0.2 * (1 - np.exp(-steps / 15)))
    future = np.linspace(41.0, 2000.0, 50)
    fc = get_forecaster("ensemble").forecast(steps, y, n_train=40, future_steps=future,
                                             bounds=(0.0, 1.0))
    assert any(w.startswith("calibrated prior (the point and band): ")
               and "holds its forecast" in w for w in fc.warnings)
    assert fc.model == "calibrated_prior"


def test_where_the_run_decelerates_the_band_averages_the_two_bands():
    # a relaxation still under way at the cut: the band's bounds are the means of the
    # calibrated prior's band and the trend-aware forecaster's, and a note says so
    steps = np.arange(1.0, 201.0)
    kwargs = {"n_train": 100, "future_steps": steps[100:], "bounds": (0.0, 1.0)}
    ensemble = get_forecaster("ensemble")
    y = _noisy(0.2 + 0.6 * (1 - np.exp(-steps / 40)))
    fc, curves = ensemble.forecast(steps, y, **kwargs), forecast_curve(steps, y, **kwargs)
    trend = get_forecaster("adaptive").forecast(steps, y, **kwargs)
    prior = get_forecaster("calibrated_prior").forecast(steps, y, **kwargs)
    assert np.allclose(fc.lower, 0.5 * (prior.lower + trend.lower))
    assert np.allclose(fc.upper, 0.5 * (prior.upper + trend.upper))
    assert np.allclose(fc.mean, curves.mean)
    assert np.allclose(fc.point, np.clip(prior.point, fc.lower, fc.upper))
    assert any("still moves at the cut (its last half's slope" in w and "decelerating" in w
               for w in fc.warnings)


@pytest.mark.parametrize(("shape", "word"), [(lambda s: 0.2 + 0.6 * (1 - np.exp(-s / 300)),
                                              "rises"),
                                             (lambda s: 0.8 - 0.002 * s, "falls")])
def test_where_the_run_climbs_without_deceleration_the_band_holds_the_trend_too(shape, word):
    """A climb (or fall) with no deceleration at the cut: the ensemble's point is the
    calibrated learned prior's, and its band is the union of the prior's, the curve models'
    and the trend-aware forecaster's (the prior only up to its widest level, 0.95)."""
    steps = np.arange(1.0, 201.0)
    y = _noisy(shape(steps))
    kwargs = {"n_train": 100, "future_steps": steps[100:], "bounds": (0.0, 1.0)}
    fc = get_forecaster("ensemble").forecast(steps, y, **kwargs)
    curves = forecast_curve(steps, y, **kwargs)
    trend = get_forecaster("adaptive").forecast(steps, y, **kwargs)
    prior = get_forecaster("calibrated_prior").forecast(steps, y, **kwargs)
    assert np.allclose(fc.point, prior.point) and np.allclose(fc.mean, curves.mean)
    assert np.allclose(fc.lower, np.minimum.reduce([curves.lower, trend.lower, prior.lower]))
    assert np.allclose(fc.upper, np.maximum.reduce([curves.upper, trend.upper, prior.upper]))
    wide = get_forecaster("ensemble").forecast(steps, y, level=0.99, **kwargs)
    curves = forecast_curve(steps, y, level=0.99, **kwargs)
    trend = get_forecaster("adaptive").forecast(steps, y, level=0.99, **kwargs)
    assert np.allclose(wide.upper, np.maximum(curves.upper, trend.upper))
    assert np.any(fc.upper - fc.lower > curves.upper - curves.lower + 1e-9)  # it widened
    assert any(f"still {word} at the cut with no deceleration seen" in w for w in fc.warnings)
    assert not any("climbing" in w for w in fc.warnings)  # the direction's word only


@pytest.mark.parametrize("curve,reward_range", [("straight", None), ("slow", (-20.0, 20.0))])
def test_a_plateau_the_fit_pushes_to_an_edge_without_saturation_is_not_determined(
        tmp_path, capsys, curve, reward_range):
    """A rise that has made a fifth or a tenth of its fitted gain says nothing of its end: the
    power law's plateau, pushed to the reward range's edge (1, or a declared 20), was called
    at_bound there (a straight climb 0.1 + 0.003 t; a slow one from -5 towards -2)."""
    steps = np.arange(1, 201)
    rng = np.random.default_rng(0)
    draws = [rng.normal(0, sd, 200) for sd in (0.03, 0.02, 0.03, 0.02, 0.2)]
    reward = (0.1 + 0.003 * steps + draws[1] if curve == "straight"
              else -5 + 3 * (1 - np.exp(-steps / 40)) + draws[4])
    path = tmp_path / "rise.jsonl"
    path.write_text("\n".join(json.dumps({"step": int(s), "reward": float(r)})
                              for s, r in zip(steps, reward, strict=True)))
    argv = ["forecast", str(path), "--train-fraction", "0.3", "--json"]
    if reward_range is not None:
        argv.append(f"--reward-range={reward_range[0]:g},{reward_range[1]:g}")
    assert main(argv) == 0
    plateau = json.loads(capsys.readouterr().out)["plateau"]
    assert plateau["status"] == "not_determined" and plateau["bound"] == "lower", plateau
    assert "has not begun to saturate" in plateau["reason"]
