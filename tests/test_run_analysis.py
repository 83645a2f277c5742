"""One analysis path: statuses, not meaningless numbers; the forecast JSON; bad inputs.

Bad inputs (strings, NaN, constants) go through the CLI.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from grpodyn.cli import main
from grpodyn.empirical.logs.loaders import Run
from grpodyn.empirical.logs.run_analysis import analyse_run, infer_reward_range
from grpodyn.ground import InputError

FORECAST_KEYS = {"model", "weights", "train_points", "steps", "mean", "lower", "upper", "level",
                 "plateau", "warnings"}


def _run(reward: np.ndarray, *, key: str = "reward", steps: np.ndarray | None = None) -> Run:
    reward = np.asarray(reward, dtype=float)
    steps = np.arange(1, reward.size + 1, dtype=float) if steps is None else steps
    return Run(source="<test>", format="test", steps=steps, reward=reward, metrics={},
               reward_key=key)


def _csv(path: Path, rewards: np.ndarray, *, quote: bool = False) -> Path:
    rows = "".join(f'{i},{chr(34) + f"{r:.5f}" + chr(34) if quote else f"{r:.5f}"}\n'
                   for i, r in enumerate(rewards, start=1))
    path.write_text("step,reward\n" + rows)
    return path


def test_reward_range_is_declared_inferred_or_unknown() -> None:
    """Check the reward range is declared, inferred from the name or values, or unknown."""
    accuracy = _run(np.linspace(0.1, 0.6, 30), key="eval/accuracy")
    assert infer_reward_range(accuracy)[0] == (0.0, 1.0)
    summed = _run(np.linspace(0.1, 2.6, 30))
    assert infer_reward_range(summed)[0] is None
    assert infer_reward_range(summed, (0.0, 5.0)) == ((0.0, 5.0), "declared")
    with pytest.raises(InputError, match="outside"):
        infer_reward_range(summed, (0.0, 1.0))


def test_non_saturating_run_has_no_plateau_number_and_says_why() -> None:
    """Check a non-saturating run gets a plateau status and a reason, not a number."""
    rng = np.random.default_rng(0)
    run = _run(0.05 + 0.004 * np.arange(50) + 0.02 * rng.standard_normal(50))
    analysis = analyse_run(run, momentum=0.9, diagnose_run=False)
    assert analysis.reward_range == (0.0, 1.0)
    assert analysis.plateau["status"] in ("not_determined", "at_bound")
    if analysis.plateau["status"] == "not_determined":
        assert analysis.plateau["value"] is None and analysis.plateau["reason"]
    assert analysis.dynamics["tau"]["status"] != "determined"
    assert analysis.dynamics["regime"]["status"] == "not_determined"
    for fit in analysis.fits.values():  # no printed plateau outside the range
        assert 0 <= fit.params["r_star"] <= 1
    assert analysis.warnings


def test_a_plateau_whose_interval_holds_the_start_is_not_determined() -> None:
    """IMJONEZZ's shaped reward: the exponential's plateau 2.6 +- 3 (90%) is no number."""
    from grpodyn.empirical.logs.loaders import load_run

    run = load_run(Path(__file__).parent / "data" / "real_logs" / (
        "IMJONEZZ__UnslothGRPO__outputs_checkpoint-250_trainer_state.reward.json"))
    plateau = analyse_run(run, diagnose_run=False).plateau
    assert plateau["status"] == "not_determined" and plateau["value"] is None
    assert plateau["lower"] < 0.6 < plateau["upper"] and "starting level" in plateau["reason"]


def test_collapsing_run_is_not_given_a_plateau() -> None:
    """Check a run that rises then collapses is not given a determined plateau silently."""
    t = np.arange(1, 201, dtype=float)
    reward = np.where(t < 120, 0.3 + 0.5 * (1 - np.exp(-t / 30)), 0.8 - 0.01 * (t - 120))
    reward = reward + 0.01 * np.random.default_rng(1).standard_normal(t.size)
    analysis = analyse_run(_run(np.clip(reward, 0, 1)), momentum=0.9)
    assert analysis.plateau["status"] != "determined" or analysis.diagnosis.primary
    # not silently: the plateau says why it is not determined (the fits' notes on models of no
    # weight, which this once read as the warning, are no longer given)
    assert analysis.plateau["status"] == "determined" or analysis.plateau["reason"]


def test_momentum_is_never_assumed() -> None:
    """Check an unknown momentum leaves the regime not determined, with a warning."""
    rng = np.random.default_rng(2)
    run = _run(0.8 - 0.6 * np.exp(-np.arange(200) / 30) + 0.02 * rng.standard_normal(200))
    unknown = analyse_run(run, diagnose_run=False)
    assert unknown.momentum is None
    assert unknown.dynamics["regime"]["status"] == "not_determined"
    assert any("momentum" in w for w in unknown.warnings)
    known = analyse_run(run, momentum=0.9, diagnose_run=False)
    assert known.plateau["status"] == "determined"
    assert known.dynamics["regime"]["value"] in ("overdamped", "critical", "oscillatory")


def test_forecast_json_contract(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Check the JSON keys of ``grpodyn forecast`` and its bad-input exits."""
    rng = np.random.default_rng(3)
    values = 0.8 - 0.6 * np.exp(-np.arange(120) / 40) + 0.02 * rng.standard_normal(120)
    log = _csv(tmp_path / "run.csv", values)
    assert main(["forecast", str(log), "--train-fraction", "0.5", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert FORECAST_KEYS | {"mae", "coverage"} <= set(out)
    assert set(out["plateau"]) >= {"value", "lower", "upper", "status"}
    assert len(out["steps"]) == len(out["mean"]) == len(out["lower"]) == 60
    assert "curve models' mixture mean" in out["mean_of"] and "'point'" in out["mean_of"]
    assert all(lo <= m <= hi for lo, m, hi in zip(out["lower"], out["mean"], out["upper"],
                                                   strict=True))
    assert abs(sum(out["weights"].values()) - 1) < 1e-9 and out["level"] == 0.9
    assert len(out["point"]) == 60 and abs(sum(out["point_weights"].values()) - 1) < 1e-9
    held = np.round(values[60:], 5)  # as written to the log; "mae" is the point forecast's
    assert out["mae"] == pytest.approx(np.mean(np.abs(held - out["point"])), rel=1e-6)
    # beyond the log, up to a horizon; no held-out part then
    assert main(["forecast", str(log), "--until", "100", "--horizon", "150", "--level", "0.5",
                 "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["steps"][-1] == 150 and out["level"] == 0.5 and FORECAST_KEYS <= set(out)
    assert main(["forecast", str(log)]) == 2
    assert "--train-fraction" in capsys.readouterr().err
    assert main(["forecast", str(log), "--train-fraction", "0.02"]) == 2
    assert "training points" in capsys.readouterr().err


def test_every_model_is_fitted_once_and_the_cheap_path_does_not_stack(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Check each model is fitted once on the whole run and stack=False refits nothing."""
    import grpodyn.numerics.forecast_members as forecast

    calls = []
    real = forecast.fit_curve

    def counting(name: str, *args: Any, **kwargs: Any) -> Any:
        calls.append((name, np.asarray(args[0]).size))
        return real(name, *args, **kwargs)

    monkeypatch.setattr(forecast, "fit_curve", counting)
    rng = np.random.default_rng(6)
    run = _run(0.8 - 0.6 * np.exp(-np.arange(300) / 60) + 0.02 * rng.standard_normal(300))
    cheap = analyse_run(run, momentum=0.9, models=("exponential",), diagnose_run=False,
                        stack=False)
    assert calls == [("exponential", 300)]  # one fit, no rolling-origin refits
    assert cheap.plateau["status"] == "determined"
    assert cheap.dynamics["tau"]["value"] == pytest.approx(60, rel=0.3)
    calls.clear()
    full = analyse_run(run, momentum=0.9, models=("exponential", "power"), diagnose_run=False)
    whole = [name for name, n in calls if n == 300]
    assert sorted(whole) == ["exponential", "power"]  # the whole run: each model once
    assert all(n < 300 for name, n in calls if name not in whole or n != 300)
    assert set(full.weights) == {"level", "flat", "exponential", "power"}
    assert full.fits["exponential"].params == cheap.fits["exponential"].params


def test_string_nan_and_constant_inputs(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Check quoted numbers, NaN and constant rewards: a number or a one-line error."""
    ramp = np.linspace(0.1, 0.9, 60)
    quoted = _csv(tmp_path / "quoted.csv", ramp, quote=True)
    code = main(["fit", str(quoted), "--json"])
    captured = capsys.readouterr()
    if code == 0:  # read as numbers: a ramp is not a plateau
        out = json.loads(captured.out)
        assert out["plateau"]["status"] != "determined" or out["plateau"]["value"] <= 1
        assert all(m["params"]["r_star"] is None or m["params"]["r_star"] <= 1
                   for m in out["models"].values())
    else:
        assert code == 2 and "Traceback" not in captured.err
    constant = _csv(tmp_path / "constant.csv", np.full(40, 0.5))
    assert main(["forecast", str(constant), "--train-fraction", "0.5"]) == 2
    assert "constant" in capsys.readouterr().err
    text = tmp_path / "nan.csv"
    text.write_text("step,reward\n" + "".join(f"{i},nan\n" for i in range(1, 30)))
    assert main(["fit", str(text)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err


def test_report_and_advise_use_the_analysis(tmp_path: Path,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    """Check report and advise use the analysis and never assume the momentum silently."""
    rng = np.random.default_rng(4)
    log = _csv(tmp_path / "run.csv", 0.85 - 0.6 * np.exp(-np.arange(200) / 50)
               + 0.02 * rng.standard_normal(200))
    out = tmp_path / "report"
    assert main(["report", str(log), "--out", str(out), "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["dynamics"]["regime"] is None  # momentum unknown: not assumed
    assert summary["dynamics"]["momentum"] is None
    assert main(["advise", "--log", str(log), "--lr", "1e-5", "--json"]) == 0
    assumed = json.loads(capsys.readouterr().out)  # advise needs one: said, not silent
    assert assumed["measured"]["momentum_source"] == "assumed"
    assert any("0.9 assumed" in line for line in assumed["reasoning"])
    assert main(["advise", "--log", str(log), "--momentum", "0.9", "--lr", "1e-5",
                 "--json"]) == 0
    advice = json.loads(capsys.readouterr().out)
    assert advice["measured"]["tau"] == pytest.approx(50, rel=0.3)
    assert advice["measured"]["momentum_source"].startswith("user")


def test_forecast_with_the_learned_prior_keeps_the_json_contract(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Check ``forecast --forecaster learned_prior`` gives the same keys, a path and no plateau."""
    rng = np.random.default_rng(8)
    values = 0.8 - 0.6 * np.exp(-np.arange(120) / 40) + 0.02 * rng.standard_normal(120)
    log = _csv(tmp_path / "run.csv", values)
    assert main(["forecast", str(log), "--train-fraction", "0.5", "--forecaster",
                 "learned_prior", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert FORECAST_KEYS | {"mae", "coverage"} <= set(out)
    assert out["model"] == "learned_prior" and out["weights"] == {"learned_prior": 1.0}
    assert out["plateau"]["status"] == "not_determined" and out["plateau"]["value"] is None
    assert all(0 <= lo <= m <= hi <= 1 for lo, m, hi in zip(out["lower"], out["point"],
                                                            out["upper"], strict=True))
    held = np.round(values[60:], 5)
    assert out["mae"] == pytest.approx(np.mean(np.abs(held - out["point"])), rel=1e-6)
    assert main(["forecast", str(log), "--train-fraction", "0.5", "--forecaster",
                 "learned_prior", "--level", "0.99"]) == 2
    assert "0.95" in capsys.readouterr().err


def test_an_unknown_forecaster_is_named_in_the_error() -> None:
    """Check analyse_run refuses a forecaster it does not know, before any fit."""
    with pytest.raises(InputError, match="forecaster: 'oracle'"):
        analyse_run(_run(np.linspace(0.1, 0.5, 40)), forecaster="oracle")
