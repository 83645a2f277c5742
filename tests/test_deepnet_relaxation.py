"""The relaxation time from the measured finite-step drift (the deep-network study's routes).

Covers ``studies/deepnet/deepnet_study/relaxation.py`` and the routes beside it.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable
from pathlib import Path

import numpy as np
import pytest

STUDY = pytest.importorskip("deepnet_study",
                            reason="the deep-network study (studies/deepnet) is absent")

from deepnet_study import relaxation  # noqa: E402
from deepnet_study.sweeps import fit_relaxation  # noqa: E402


def _points(coef: tuple[float, float, float], rs: np.ndarray, se: float = 1e-4,
            noise: np.ndarray | None = None) -> list[dict[str, float]]:
    a, b, c = coef
    drift = a + b * rs + c * rs * rs + (0.0 if noise is None else noise)
    return [{"reward_mid": float(r), "drift": float(d), "drift_se": se}
            for r, d in zip(rs, drift, strict=True)]


def test_fit_drift_recovers_a_quadratic_and_widens_errors_with_scatter() -> None:
    rs = np.linspace(0.1, 0.3, 8)
    exact = relaxation.fit_drift(_points((-0.01, 0.2, -0.6), rs))
    assert exact["coef"] == pytest.approx([-0.01, 0.2, -0.6], abs=1e-9)
    assert exact["r_range"] == pytest.approx([0.1, 0.3])
    noise = np.random.default_rng(1).normal(0, 1e-3, rs.size)  # 10x the stated errors
    scattered = relaxation.fit_drift(_points((-0.01, 0.2, -0.6), rs, noise=noise))
    assert scattered["reduced_chi2"] > 10
    unscaled = relaxation.fit_drift(_points((-0.01, 0.2, -0.6), rs, se=1e-3, noise=noise))
    assert np.diag(scattered["cov"]) == pytest.approx(np.diag(unscaled["cov"]), rel=0.5)
    with pytest.raises(ValueError, match="at least 4"):
        relaxation.fit_drift(_points((0, 0, 0), rs[:3]))


def test_linear_drift_relaxes_with_one_over_k_by_both_routes() -> None:
    k, plateau, r0, steps = 0.02, 0.3, 0.1, 300
    coef = [k * plateau, -k, 0.0]
    curve = relaxation.mean_field_curve(coef, r0, steps)
    exact = plateau - (plateau - r0) * (1 - k) ** np.arange(steps)
    assert curve == pytest.approx(exact)
    assert fit_relaxation(curve, steps)["value"] == pytest.approx(-1 / math.log(1 - k), rel=1e-3)
    root = relaxation.stable_root(coef)
    assert root == pytest.approx({"plateau": plateau, "stiffness": k})


def test_stable_root_is_the_falling_one_and_none_without_it() -> None:
    # D = -(r - 0.1)(r - 0.4): rises through 0.1, falls through 0.4
    coef = [-0.04, 0.5, -1.0]
    root = relaxation.stable_root(coef)
    assert root["plateau"] == pytest.approx(0.4)
    assert root["stiffness"] == pytest.approx(0.3)
    assert relaxation.stable_root([0.01, 0.1, 0.0]) is None  # rising everywhere
    assert relaxation.stable_root([0.0, 0.0, 0.0]) is None


def _measured(coef: tuple[float, float, float]) -> dict:
    rs = np.linspace(0.1, 0.3, 8)
    return {"start": {"reward": 0.1, "reward_se": 1e-4},
            "drift": {"0.1": _points(coef, rs, se=1e-5)}}


def test_predictions_of_a_linear_drift_agree_and_carry_an_interval() -> None:
    k = 0.02
    items = relaxation.predict_relaxation("m", _measured((k * 0.3, -k, 0.0)), steps=300,
                                          boot=40)
    by = {i["quantity"]: i for i in items}
    assert set(by) == {"relaxation_time", "relaxation_time_late"}
    assert by["relaxation_time"]["setting"] == {"lr": 0.1, "momentum": 0.0,
                                                "runs": "relaxation", "steps": 300}
    assert by["relaxation_time"]["value"] == pytest.approx(-1 / math.log(1 - k), rel=1e-3)
    assert by["relaxation_time_late"]["value"] == pytest.approx(1 / k, rel=1e-6)
    assert by["relaxation_time_late"]["kappa_per_unit_lr"] == pytest.approx(k / 0.1)
    lo, hi = by["relaxation_time"]["interval_68"]
    assert lo <= by["relaxation_time"]["value"] <= hi


def test_a_drift_too_slow_for_the_run_is_undetermined() -> None:
    items = relaxation.predict_relaxation("m", _measured((1e-5 * 0.3, -1e-5, 0.0)), steps=100,
                                          boot=10)
    tau = next(i for i in items if i["quantity"] == "relaxation_time")
    assert tau["value"] is None and tau["status"] == "undetermined"


def _run(setting: dict, seed: int, reward: list[float]) -> dict:
    return {"setting": setting, "seed": seed, "reward": reward, "finite": True,
            "unstable": bool(reward[-1] < reward[0] - 0.05)}


def _relaxing_runs(setting: dict, seeds: Iterable[int], k: float) -> tuple[list[float], list[dict]]:
    """Runs of ``setting`` whose reward relaxes as 0.3 - 0.2 (1 - k)^n (tau = -1 / ln(1 - k))."""
    curve = list(0.3 - 0.2 * (1 - k) ** np.arange(setting["steps"]))
    return curve, [_run(setting, s, curve) for s in seeds]


def test_relaxation_rows_judge_by_the_fixed_rule(tmp_path: Path) -> None:
    steps, k = 120, 0.05
    setting = {"lr": 0.1, "momentum": 0.0, "steps": steps}
    curve, runs = _relaxing_runs(setting, (800, 801, 802), k)
    (tmp_path / "relaxruns_m.json").write_text(json.dumps({"size": "m", "runs": runs}))
    observed, rows = relaxation.relaxation_rows(tmp_path)
    assert rows == []  # no predictions yet
    assert observed[0]["value"] == pytest.approx(-1 / math.log(1 - k), rel=1e-3)
    assert observed[0]["seeds"] == [800, 801, 802]
    tagged = {**setting, "runs": "relaxation"}
    items = [{"model": "m", "quantity": "relaxation_time", "setting": tagged, "value": 22.0,
              "source": "s"},
             {"model": "m", "quantity": "relaxation_time_late", "setting": tagged,
              "value": 10.0, "source": "s"},
             {"model": "m", "quantity": "relaxation_time", "setting": {**tagged, "lr": 0.2},
              "value": None, "status": "undetermined", "source": "s"}]
    (tmp_path / "predictions_relaxation.json").write_text(json.dumps({"commit": "abc",
                                                                     "items": items}))
    _, rows = relaxation.relaxation_rows(tmp_path)
    assert [r["within_target"] for r in rows] == [True, False]  # 22 vs 19.5: within 25 %
    assert all(r["commit"] == "abc" for r in rows)
    runs += [_run({**setting, "lr": 0.2}, s, curve) for s in (800, 801, 802)]
    (tmp_path / "relaxruns_m.json").write_text(json.dumps({"size": "m", "runs": runs}))
    _, rows = relaxation.relaxation_rows(tmp_path)
    assert rows[-1]["within_target"] is False  # undetermined predicted, observed determined
    flat = list(0.1 + 1e-4 * np.arange(steps))  # tau far beyond twice the run
    runs += [_run({**setting, "lr": 0.4}, s, flat) for s in (800, 801, 802)]
    (tmp_path / "relaxruns_m.json").write_text(json.dumps({"size": "m", "runs": runs}))
    items += [{"model": "m", "quantity": q, "setting": {**tagged, "lr": 0.4}, "value": v,
               "source": "s"} for q, v in (("relaxation_time", 50.0),
                                           ("relaxation_time_late", 200.0))]
    (tmp_path / "predictions_relaxation.json").write_text(json.dumps({"commit": "abc",
                                                                     "items": items}))
    _, rows = relaxation.relaxation_rows(tmp_path)
    # observed beyond 2 x 120 steps: 50 < 0.75 x 240 refuted, 200 neither met nor refuted
    assert [r["within_target"] for r in rows[-2:]] == [False, None]


def test_unstable_setting_has_no_relaxation_time() -> None:
    setting = {"lr": 0.4, "momentum": 0.0, "steps": 40}
    losing = [0.2] * 20 + [0.05] * 20
    items = relaxation.observe_relaxation("m", [_run(setting, s, losing) for s in range(3)])
    assert items[0]["value"] is None and items[0]["status"] == "unstable"


def test_copy_states_and_segment_drift_on_a_tiny_model(monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("torch")
    from .deepnet_support import score_half_of_every_group, untrained_70k

    score_half_of_every_group(monkeypatch)  # the evaluations; the runs' own batches score 0
    monkeypatch.setattr(relaxation, "EVAL_PROMPTS", 8)
    model, tokenizer = untrained_70k()
    before = {k: v.clone() for k, v in model.state_dict().items()}
    states = relaxation.copy_states(model, tokenizer, lr=0.1, steps=4, every=2, seed=5)
    assert [s["step"] for s in states] == [0, 2, 4]
    assert all((model.state_dict()[k] == v).all() for k, v in before.items())  # untouched
    point = relaxation.segment_drift(model, tokenizer, lr=0.1, segment=1, repeats=2, seed=9)
    assert all((model.state_dict()[k] == v).all() for k, v in before.items())
    assert set(point) >= {"reward", "drift", "drift_se", "reward_mid", "changes"}
    assert point["reward"] == pytest.approx(0.5)  # the scored sampler: half of every group
    burned = relaxation.segment_drift(model, tokenizer, lr=0.1, segment=1, repeats=2, seed=9,
                                      burn_in=1)
    assert all((model.state_dict()[k] == v).all() for k, v in before.items())
    assert burned["burn_in"] == 1 and len(burned["burn_in_changes"]) == 2
    assert burned["state_rewards"] == pytest.approx([0.5, 0.5])  # the state's own rewards
    assert "burn_in" not in point
    with pytest.raises(ValueError, match="burn_in"):
        relaxation.segment_drift(model, tokenizer, lr=0.1, segment=1, repeats=2, seed=9,
                                 burn_in=-1)
    with pytest.raises(ValueError, match="repeats"):
        relaxation.segment_drift(model, tokenizer, lr=0.1, segment=1, repeats=1, seed=9)
    with pytest.raises(ValueError, match="every"):
        relaxation.copy_states(model, tokenizer, lr=0.1, steps=1, every=2, seed=5)


def test_state_regression_sees_a_deviation_undone_within_a_segment() -> None:
    steps = np.arange(0, 330, 30)
    trend = 0.1 + 0.0005 * steps
    deviation = 0.02 * np.array([1, -1, 0.5, -0.5, 1, 0, -1, 0.5, -0.5, 1, -1])
    deviation -= np.polyval(np.polyfit(steps, deviation, 2), steps)  # orthogonal to the trend
    points = [{"copy_step": int(n), "reward": float(t + d), "segment": 20,
               "drift": float((0.01 - d) / 20)} for n, t, d in zip(steps, trend, deviation,
                                                                     strict=True)]
    found = relaxation.state_regression(points)
    assert found["slope_on_deviation"] == pytest.approx(-1.0)
    assert found["slope_on_trend"] == pytest.approx(0.0, abs=1e-9)
    assert found["correlation"] == pytest.approx(-1.0)
    with pytest.raises(ValueError, match="at least 5"):
        relaxation.state_regression(points[:4])


def test_window_slopes_of_a_line() -> None:
    curve = 0.1 + 0.001 * np.arange(120)
    rows = relaxation.window_slopes(curve, [0.002, 0.0, 0.0], 60)
    assert [r["start"] for r in rows] == [0, 60]
    assert [r["run_slope"] for r in rows] == pytest.approx([0.001, 0.001])
    assert [r["drift"] for r in rows] == pytest.approx([0.002, 0.002])
    assert rows[1]["reward"] == pytest.approx(0.1 + 0.001 * 89.5)


def _states(slow: tuple[float, float, float], fast: float, deviation: np.ndarray,
            se: float = 1e-5) -> list[dict]:
    """Copy states on a linear trend 0.1 -> 0.3 with a deviation each, their segment drift the
    slow drift at the trend level plus ``fast`` x deviation (per step)."""
    steps = np.arange(deviation.size) * 30
    trend = 0.1 + 0.2 * steps / steps[-1]
    a, b, c = slow
    drift = a + b * trend + c * trend * trend + fast * deviation
    return [{"copy_step": int(n), "reward": float(t + e), "drift": float(d), "drift_se": se,
             "segment": 20} for n, t, e, d in zip(steps, trend, deviation, drift, strict=True)]


def test_slow_fit_separates_the_slow_drift_from_the_fluctuation_undone() -> None:
    from deepnet_study.slow import fit_slow_drift

    deviation = np.random.default_rng(3).normal(0, 0.02, 11)
    deviation -= np.polyval(np.polyfit(np.arange(11), deviation, 2), np.arange(11))
    slow = (0.006, -0.02, 0.0)  # plateau 0.3, per-step stiffness 0.02
    fit = fit_slow_drift(_states(slow, -1.0 / 20, deviation))
    assert fit["coef"] == pytest.approx(slow, abs=1e-8)
    assert fit["fast_slope"] == pytest.approx(-1.0)  # the whole deviation undone in 20 steps
    assert fit["r_range"] == pytest.approx([0.1, 0.3])
    # the state route's quadratic through the same states inherits the fast slope: stiffer than 0.02
    points = [{**p, "reward_mid": p["reward"]} for p in _states(slow, -1.0 / 20, deviation)]
    naive = relaxation.stable_root(relaxation.fit_drift(points)["coef"])
    assert naive["stiffness"] > 1.1 * 0.02
    with pytest.raises(ValueError, match="at least 6 states"):
        fit_slow_drift(_states(slow, 0.0, deviation[:5]))


def test_slow_route_predictions_carry_the_path_and_their_own_runs_label() -> None:
    deviation = np.array([0.0, 0.01, -0.01, 0.02, -0.02, 0.0, 0.01, -0.01])
    deviation -= np.polyval(np.polyfit(np.arange(8), deviation, 2), np.arange(8))
    k = 0.02
    measured = {"start": {"reward": 0.1, "reward_se": 1e-4},
                "drift": {"0.1": _states((k * 0.3, -k, 0.0), -0.04, deviation)}}
    items = relaxation.predict_relaxation("m", measured, steps=300, boot=20, route="slow")
    tau = next(i for i in items if i["quantity"] == "relaxation_time")
    assert tau["setting"]["runs"] == "relaxation_slow"
    assert tau["value"] == pytest.approx(-1 / math.log(1 - k), rel=1e-3)
    assert len(tau["path"]) == 5 and tau["path"][0] < tau["path"][-1] < 0.3
    with pytest.raises(ValueError, match="route"):
        relaxation.predict_relaxation("m", measured, steps=300, route="fast")


def test_path_within_judges_every_window() -> None:
    from deepnet_study.slow import path_windows, path_within

    assert path_windows(np.arange(130.0), 60) == [29.5, 89.5]
    assert path_within([0.2, 0.3], [0.19, 0.25]) == {"path_within": True,
                                                     "path_windows_within": 2}
    assert path_within([0.2, 0.2], [0.19, 0.3]) == {"path_within": False,
                                                    "path_windows_within": 1}
    assert path_within(None, [0.1])["path_within"] is None


def test_slow_rows_join_only_slow_runs(tmp_path: Path) -> None:
    steps, k = 120, 0.05
    setting = {"lr": 0.05, "momentum": 0.0, "steps": steps}
    curve, runs = _relaxing_runs(setting, (900, 901, 902), k)
    (tmp_path / "relaxruns_slow_m.json").write_text(json.dumps({"size": "m", "runs": runs}))
    tagged = {**setting, "runs": "relaxation_slow"}
    items = [{"model": "m", "quantity": "relaxation_time", "setting": tagged, "value": 22.0,
              "path": [0.25], "source": "s"}]
    (tmp_path / "predictions_relaxation_slow.json").write_text(
        json.dumps({"commit": "def", "items": items}))
    observed, rows = relaxation.relaxation_rows(tmp_path)
    assert [o["setting"]["runs"] for o in observed] == ["relaxation_slow"]
    assert observed[0]["path"] == pytest.approx([float(np.mean(curve[:60])),
                                                 float(np.mean(curve[60:]))])
    assert len(rows) == 1 and rows[0]["within_target"] is True and rows[0]["commit"] == "def"
    assert rows[0]["path_within"] is None  # one predicted window against two observed
    # the state route's predictions do not join the slow runs
    (tmp_path / "predictions_relaxation.json").write_text(json.dumps(
        {"commit": "abc", "items": [{**items[0], "setting": {**setting, "runs": "relaxation"}}]}))
    assert len(relaxation.relaxation_rows(tmp_path)[1]) == 1


def test_cli_rejects_an_unknown_route(capsys: pytest.CaptureFixture[str]) -> None:
    from deepnet_study.cli import main

    with pytest.raises(SystemExit) as stop:
        main(["predict-relaxation", "--route", "fast"])
    assert stop.value.code == 2
    assert "--route" in capsys.readouterr().err


@pytest.mark.parametrize("route", ["state", "slow", "burnin", "linear", "long", "precise"])
def test_cli_predicts_the_relaxation_of_each_route(tmp_path: Path, route: str) -> None:
    """``predict-relaxation [--route slow]`` writes its route's file from its route's drift."""
    from deepnet_study.cli import main

    deviation = np.array([0.0, 0.01, -0.01, 0.02, -0.02, 0.0, 0.01, -0.01])
    deviation -= np.polyval(np.polyfit(np.arange(8), deviation, 2), np.arange(8))
    drift = [{**p, "reward_mid": p["reward"]}
             for p in _states((0.006, -0.02, 0.0), -0.04, deviation)]
    if route in relaxation.BURNED_IN_ROUTES:
        drift = [{**p, "state_rewards": [0.1, 0.1], "burn_in_changes": [0.0, 0.0],
                  "reward_se": 1e-4} for p in drift]
    suffix = relaxation.route_suffix(route)
    (tmp_path / f"drift{suffix}_m.json").write_text(json.dumps(
        {"start": {"reward": 0.1, "reward_se": 1e-4}, "drift": {"0.1": drift}, "burn_in": 20}))
    main(["predict-relaxation", "--route", route, "--sizes", "m", "--steps", "120",
          "--out", str(tmp_path)])
    made = json.loads((tmp_path / f"predictions_relaxation{suffix}.json").read_text())
    assert {i["quantity"] for i in made["items"]} == {"relaxation_time", "relaxation_time_late"}
    label = "relaxation" + suffix
    assert all(i["model"] == "m" and i["setting"]["runs"] == label for i in made["items"])


def test_slow_diagnosis_reads_both_routes(tmp_path: Path) -> None:
    from deepnet_study.cli import relaxation_diagnosis_step

    deviation = np.array([0.0, 0.01, -0.01, 0.02, -0.02, 0.0, 0.01, -0.01])
    deviation -= np.polyval(np.polyfit(np.arange(8), deviation, 2), np.arange(8))
    k, steps = 0.02, 120
    for suffix, lr, seed in (("", 0.1, 800), ("_slow", 0.05, 900)):
        drift = _states((k * 0.3, -k, 0.0), -0.04, deviation)
        (tmp_path / f"drift{suffix}_m.json").write_text(json.dumps(
            {"start": {"reward": 0.1, "reward_se": 1e-4}, "drift": {str(lr): drift}}))
        setting = {"lr": lr, "momentum": 0.0, "steps": steps}
        _, runs = _relaxing_runs(setting, range(seed, seed + 3), k)
        (tmp_path / f"relaxruns{suffix}_m.json").write_text(json.dumps({"size": "m", "runs": runs}))
    burned = [{**p, "burn_in": 20, "burn_in_changes": [0.02, 0.04]} for p in drift]
    (tmp_path / "drift_slow_burnin20_m.json").write_text(json.dumps({"drift": {"0.05": burned}}))
    result = relaxation_diagnosis_step(["m"], out=tmp_path, route="slow")
    after = result["post_hoc"]["m lr 0.05"]["burn_in_20"]
    assert after["mean_burn_in_change_per_step"] == pytest.approx(0.03 / 20)
    assert after["mean_segment_drift"] == pytest.approx(np.mean([p["drift"] for p in drift]))
    assert after["relaxation_time"] == pytest.approx(-1 / math.log(1 - k), rel=1e-3)
    assert len(after["path"]) == 2  # 60-step windows of the runs' 120 steps
    check = result["design_check"]["m lr 0.1 relaxation_time"]
    assert check["within_target"] is True and check["path_within"] is True
    assert set(result["post_hoc"]) == {"label", "m lr 0.05", "m lr 0.1"}
    assert len(result["post_hoc"]["m lr 0.05"]["windows"]) == 2


@pytest.mark.parametrize("route", ["state", "slow", "burnin", "linear", "long", "precise"])
def test_relaxation_figure_draws_each_route_from_the_shipped_data(route: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    from deepnet_study import figures

    fig = figures.relaxation_figure("70k", route=route)
    left, right = fig.axes
    assert len(right.get_lines()) == 4  # two lrs, predicted and observed each
    assert ("slow drift" in fig._suptitle.get_text()) == (route == "slow")


def test_relaxation_figure_rejects_an_unknown_route() -> None:
    from deepnet_study import figures

    with pytest.raises(ValueError, match="route"):
        figures.relaxation_figure("70k", route="fast")


def _burned_in(k: float, r_star: float, burn_in: int, rs: np.ndarray) -> dict:
    """A burn-in measurement of a linear drift k (r* - r): state 0 at 0.1, its burn-in on the
    exact path, the segments' mid rewards ``rs``."""
    burned = r_star - (r_star - 0.1) * (1 - k) ** burn_in
    points = [{"copy_step": 30 * i, "reward": float(burned if i == 0 else r),
               "reward_se": 1e-4, "reward_mid": float(r), "drift": float(k * (r_star - r)),
               "drift_se": 1e-5, "segment": 20, "burn_in": burn_in,
               "state_rewards": [0.1 - 1e-4, 0.1 + 1e-4],
               "burn_in_changes": [float(burned - 0.1)] * 2} for i, r in enumerate(rs)]
    return {"start": {"reward": float(burned), "reward_se": 1e-4}, "burn_in": burn_in,
            "drift": {"0.1": points}}


def test_burnin_curve_measures_the_start_then_follows_the_map() -> None:
    from deepnet_study.burnin import burnin_curve

    curve = burnin_curve([0.006, -0.02, 0.0], 0.1, 0.2, 4, 10)
    assert curve.size == 10 and curve[:5] == pytest.approx([0.1, 0.125, 0.15, 0.175, 0.2])
    assert curve[5] == pytest.approx(0.2 + 0.006 - 0.02 * 0.2)  # the map from step 4 on
    for burn_in, steps in ((0, 10), (10, 10)):
        with pytest.raises(ValueError, match="burn_in"):
            burnin_curve([0.0, 0.0, 0.0], 0.1, 0.2, burn_in, steps)


def test_run_start_pools_the_state_rewards_and_reads_the_burn_in_at_state_0() -> None:
    from deepnet_study.burnin import run_start

    measured = _burned_in(0.02, 0.3, 20, np.linspace(0.15, 0.28, 8))
    measured["drift"]["0.2"] = [{**p, "state_rewards": [0.104, 0.106], "reward": 0.09}
                                for p in measured["drift"]["0.1"]]
    start = run_start(measured, "0.2")
    assert start["reward"] == pytest.approx(0.1025)  # both lrs' evaluations of state 0
    assert start["burned"] == pytest.approx(0.09) and start["burn_in"] == 20
    assert start["reward_se"] == pytest.approx(np.std([0.0999, 0.1001, 0.104, 0.106], ddof=1)
                                               / 2)
    # 10f's burn-in files kept the state reward's mean only: reward less the burn-in change
    old = {**measured, "drift": {"0.1": [{k: v for k, v in p.items() if k != "state_rewards"}
                                         for p in measured["drift"]["0.1"]]}}
    assert run_start(old, "0.1")["reward"] == pytest.approx(0.1)
    with pytest.raises(ValueError, match="burn-in"):
        run_start({**measured, "burn_in": 0}, "0.1")
    with pytest.raises(ValueError, match="state 0"):
        run_start({**measured, "drift": {"0.1": measured["drift"]["0.1"][1:]}}, "0.1")


def test_burnin_route_predicts_a_linear_drift_from_the_measured_start() -> None:
    k, r_star = 0.02, 0.3
    measured = _burned_in(k, r_star, 20, np.linspace(0.15, 0.28, 8))
    items = relaxation.predict_relaxation("m", measured, steps=300, boot=20, route="burnin")
    tau = next(i for i in items if i["quantity"] == "relaxation_time")
    late = next(i for i in items if i["quantity"] == "relaxation_time_late")
    assert tau["setting"]["runs"] == "relaxation_burnin"
    assert tau["start_reward"] == pytest.approx(0.1) and tau["burn_in"] == 20
    # the burn-in lies on the exact path, drawn straight: the curve is nearly the exponential
    assert tau["value"] == pytest.approx(-1 / math.log(1 - k), rel=0.05)
    assert late["value"] == pytest.approx(1 / k, rel=1e-6)
    assert len(tau["path"]) == 5 and tau["path"][0] < tau["path"][-1] < r_star
    assert "burn-in" in tau["source"]


@pytest.mark.parametrize(("route", "lr", "seeds", "predicted", "met"), [
    ("burnin", 0.075, (1000, 1001, 1002), 30.0, False),  # 30 against 19.5
    ("linear", 0.0625, tuple(range(1100, 1109)), 21.0, True),  # 21 against 19.5
])
def test_route_rows_join_only_their_runs(tmp_path: Path, route: str, lr: float,
                                         seeds: tuple[int, ...], predicted: float,
                                         met: bool) -> None:
    steps, k = 120, 0.05
    setting = {"lr": lr, "momentum": 0.0, "steps": steps}
    _, runs = _relaxing_runs(setting, seeds, k)
    (tmp_path / f"relaxruns_{route}_m.json").write_text(json.dumps({"size": "m", "runs": runs}))
    items = [{"model": "m", "quantity": "relaxation_time", "value": predicted,
              "path": [0.2, 0.28], "setting": {**setting, "runs": f"relaxation_{route}"},
              "source": "s"}]
    (tmp_path / f"predictions_relaxation_{route}.json").write_text(
        json.dumps({"commit": "fff", "items": items}))
    observed, rows = relaxation.relaxation_rows(tmp_path)
    assert [o["setting"]["runs"] for o in observed] == [f"relaxation_{route}"]
    assert observed[0]["seeds"] == list(seeds)
    assert len(rows) == 1 and rows[0]["within_target"] is met
    assert rows[0]["path_windows_within"] == 2 and rows[0]["commit"] == "fff"


def test_drift_curve_burnin_route_needs_a_burn_in(tmp_path: Path,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    pytest.importorskip("torch")
    from deepnet_study.cli import main

    with pytest.raises(SystemExit) as stop:
        main(["drift-curve", "--route", "burnin", "--burn-in", "0", "--out", str(tmp_path)])
    assert stop.value.code == 2 and "--burn-in" in capsys.readouterr().err
    assert list(tmp_path.iterdir()) == []


def test_burnin_diagnosis_reads_seen_burn_in_data_and_every_route_runs(tmp_path: Path) -> None:
    from deepnet_study.cli import relaxation_diagnosis_step

    k, steps = 0.02, 120
    measured = _burned_in(k, 0.3, 20, np.linspace(0.15, 0.28, 8))
    (tmp_path / "drift_slow_burnin20_m.json").write_text(json.dumps(measured))
    setting = {"lr": 0.1, "momentum": 0.0, "steps": steps}
    _, runs = _relaxing_runs(setting, (900, 901, 902), k)
    (tmp_path / "relaxruns_slow_m.json").write_text(json.dumps({"size": "m", "runs": runs}))
    result = relaxation_diagnosis_step(["m"], out=tmp_path, route="burnin")
    check = result["design_check"]["m lr 0.1 relaxation_time"]
    assert check["within_target"] is True and check["path_within"] is True
    turn = result["turnover"]["relaxruns_slow_m.json lr 0.1"]
    assert set(turn["seed_windows"]) == {900, 901, 902}
    assert turn["tau"] == pytest.approx(-1 / math.log(1 - k), rel=1e-3)
    assert "tau_first_60" in turn and turn["largest_fall"] == {900: 0.0, 901: 0.0, 902: 0.0}
    assert set(result["post_hoc"]) == {"label"}  # no burn-in route runs yet
    (tmp_path / "drift_burnin_m.json").write_text(json.dumps(measured))
    (tmp_path / "relaxruns_burnin_m.json").write_text(json.dumps({"size": "m", "runs": runs}))
    item = relaxation.predict_relaxation("m", measured, steps=steps, boot=5, route="burnin")[0]
    (tmp_path / "predictions_relaxation_burnin.json").write_text(json.dumps(
        {"commit": "c", "items": [{**item, "setting": {**item["setting"], "lr": 0.1}}]}))
    after = relaxation_diagnosis_step(["m"], out=tmp_path, route="burnin")["post_hoc"]["m lr 0.1"]
    assert after["median_segment_drift_se"] == pytest.approx(1e-5)
    assert len(after["windows"]) == 2


def test_fit_linear_drift_recovers_kappa_and_the_plateau() -> None:
    from deepnet_study.linear import fit_linear_drift

    rs = np.array([0.12, 0.2, 0.3])
    fit = fit_linear_drift(_points((0.004 * 0.35, -0.004, 0.0), rs))
    assert fit["coef"] == pytest.approx([0.0014, -0.004, 0.0], abs=1e-12)
    assert fit["kappa"] == pytest.approx(0.004) and fit["plateau"] == pytest.approx(0.35)
    cov = np.array(fit["cov"])
    assert cov.shape == (3, 3) and not cov[2].any() and not cov[:, 2].any()
    # the slope's error: se / sqrt(sum (r - mean r)^2) for equal errors and no excess scatter
    assert fit["kappa_se"] == pytest.approx(1e-4 / np.sqrt(np.sum((rs - rs.mean()) ** 2)))
    assert fit["r_range"] == pytest.approx([0.12, 0.3])
    with pytest.raises(ValueError, match="at least 3"):
        fit_linear_drift(_points((0.0, 0.0, 0.0), rs[:2]))


def test_linear_route_predicts_one_over_kappa_from_the_measured_start() -> None:
    k, r_star = 0.02, 0.3
    measured = _burned_in(k, r_star, 20, np.array([0.15, 0.2, 0.28]))
    items = relaxation.predict_relaxation("m", measured, steps=300, boot=20, route="linear")
    tau = next(i for i in items if i["quantity"] == "relaxation_time")
    late = next(i for i in items if i["quantity"] == "relaxation_time_late")
    assert tau["setting"]["runs"] == "relaxation_linear" and "linear drift" in tau["source"]
    assert tau["value"] == pytest.approx(-1 / math.log(1 - k), rel=0.05)
    assert late["value"] == pytest.approx(1 / k, rel=1e-6)
    assert tau["drift_fit"]["kappa"] == pytest.approx(k)
    assert len(tau["path"]) == 5 and tau["path"][0] < tau["path"][-1] < r_star


def test_linear_route_without_stiffness_is_undetermined_and_judged_so() -> None:
    from deepnet_study.linear import no_stiffness

    assert no_stiffness([0.001, 0.0, 0.0]) and no_stiffness([0.001, 0.01, 0.0])
    assert not no_stiffness([0.001, -0.01, 0.0])
    measured = _burned_in(-0.005, 0.05, 20, np.array([0.15, 0.2, 0.28]))  # rising drift
    items = relaxation.predict_relaxation("m", measured, steps=300, boot=20, route="linear")
    tau = next(i for i in items if i["quantity"] == "relaxation_time")
    assert tau["value"] is None and tau["status"] == "undetermined"
    assert "no positive stiffness" in tau["reason"] and tau["interval_68"] == [math.inf] * 2
    made = {"commit": "c", "items": [tau]}
    seen = {"model": "m", "setting": tau["setting"], "path": [0.2] * 5}
    row = relaxation.join_relaxation(made, [{**seen, "value": 150.0, "se": 20.0}])[0]
    assert row["within_target"] is False  # undetermined against a measured tau
    row = relaxation.join_relaxation(made, [{**seen, "value": None, "status": "undetermined",
                                             "lower_bound": 600.0}])[0]
    assert row["within_target"] is None  # both beyond twice the run: not counted


def test_measure_drift_curve_rejects_a_state_the_copy_run_lacks() -> None:
    with pytest.raises(ValueError, match="keep"):
        relaxation.measure_drift_curve(None, None, lrs=[0.1], copy_lr=0.1, copy_steps=300,
                                       every=30, segment=60, repeats=12, seed=700,
                                       burn_in=20, keep=(0, 140))


def _post_hoc_after_runs(tmp_path: Path, route: str, measured: dict, setting: dict,
                         seeds: range, k: float) -> dict:
    """Write a route's runs and its prediction from ``measured``; return its post-hoc entry."""
    from deepnet_study.cli import relaxation_diagnosis_step

    _, runs = _relaxing_runs(setting, seeds, k)
    (tmp_path / f"relaxruns_{route}_m.json").write_text(json.dumps({"size": "m", "runs": runs}))
    item = relaxation.predict_relaxation("m", measured, steps=setting["steps"], boot=5,
                                         route=route)[0]
    (tmp_path / f"predictions_relaxation_{route}.json").write_text(
        json.dumps({"commit": "c", "items": [item]}))
    return relaxation_diagnosis_step(["m"], out=tmp_path, route=route)["post_hoc"]["m lr 0.1"]


def test_linear_diagnosis_pools_the_nine_seen_seeds_and_reads_the_spread(tmp_path: Path) -> None:
    from deepnet_study.cli import relaxation_diagnosis_step

    k, steps = 0.02, 120
    measured = _burned_in(k, 0.3, 20, np.linspace(0.15, 0.28, 8))
    for p, j in zip(measured["drift"]["0.1"], range(8), strict=True):
        p["burn_in_changes"] = [0.01 * j, 0.01 * j + 0.02]  # s.d. 0.0141 at every state
        p["changes"] = [0.0, 0.02]  # s.d. 0.0141; the 40-step change through both 0.0283
    for name in ("drift_slow_burnin20_m.json", "drift_burnin_m.json"):
        (tmp_path / name).write_text(json.dumps(measured))
    setting = {"lr": 0.1, "momentum": 0.0, "steps": steps}
    for name, seeds in (("relaxruns_slow_m.json", (900, 901, 902)),
                        ("relaxruns_burnin_m.json", (1000, 1001, 1002)),
                        ("moreseeds_relaxruns_burnin_m.json", range(1003, 1009))):
        _, runs = _relaxing_runs(setting, seeds, k)
        (tmp_path / name).write_text(json.dumps({"size": "m", "runs": runs}))
    result = relaxation_diagnosis_step(["m"], out=tmp_path, route="linear")
    nine = result["design_check"]["10g"]["m lr 0.1 relaxation_time"]
    assert nine["within_target"] is True and nine["path_within"] is True
    assert result["design_check"]["10f"]["m lr 0.1 relaxation_time"]["within_target"] is True
    spread = result["segment_spread"]["drift_burnin_m.json lr 0.1"]
    assert spread["burn_in_20"] == pytest.approx(0.02 / np.sqrt(2))
    assert spread["through_40"] == pytest.approx(0.04 / np.sqrt(2))
    assert spread["ratio_40_to_20"] == pytest.approx(2.0)
    assert spread["ratio_40_to_20_same_start"] == pytest.approx(2.0)
    assert set(result["post_hoc"]) == {"label"}  # no linear-route runs yet
    linear = {**measured, "drift": {"0.1": measured["drift"]["0.1"][::3]}}
    (tmp_path / "drift_linear_m.json").write_text(json.dumps(linear))
    after = _post_hoc_after_runs(tmp_path, "linear", linear, setting, range(1100, 1109), k)
    assert after["kappa"] == pytest.approx(k) and len(after["states"]) == 3
    assert len(after["windows"]) == 2


@pytest.mark.parametrize("route", ["long", "precise"])
def test_long_route_predicts_over_600_steps_with_ten_windows(route: str) -> None:
    """The long and precise variants: the linear route's rules, own labels, ten windows."""
    k, r_star = 0.005, 0.4
    measured = _burned_in(k, r_star, 20, np.array([0.15, 0.25, 0.35]))
    items = relaxation.predict_relaxation("m", measured, steps=600, boot=20, route=route)
    tau = next(i for i in items if i["quantity"] == "relaxation_time")
    assert tau["setting"] == {"lr": 0.1, "momentum": 0.0, "runs": f"relaxation_{route}",
                              "steps": 600}
    assert "0, 300, 600" in tau["source"]
    assert tau["value"] == pytest.approx(-1 / math.log(1 - k), rel=0.05)  # 200 < 1200
    assert len(tau["path"]) == 10 and tau["path"][-1] < r_star


def test_long_rows_join_only_long_runs(tmp_path: Path) -> None:
    steps, k = 120, 0.05
    setting = {"lr": 0.0875, "momentum": 0.0, "steps": steps}
    _, runs = _relaxing_runs(setting, range(1200, 1209), k)
    for suffix in ("_linear", "_long"):
        (tmp_path / f"relaxruns{suffix}_m.json").write_text(
            json.dumps({"size": "m", "runs": runs}))
    items = [{"model": "m", "quantity": "relaxation_time", "value": 40.0, "path": [0.2, 0.28],
              "setting": {**setting, "runs": "relaxation_long"}, "source": "s"}]
    (tmp_path / "predictions_relaxation_long.json").write_text(
        json.dumps({"commit": "fff", "items": items}))
    observed, rows = relaxation.relaxation_rows(tmp_path)
    assert sorted(o["setting"]["runs"] for o in observed) == ["relaxation_linear",
                                                              "relaxation_long"]
    assert len(rows) == 1 and rows[0]["commit"] == "fff"
    assert rows[0]["within_target"] is False  # 40 against 19.5


@pytest.mark.parametrize(("route", "repeats", "base"), [("long", 12, 100_000),
                                                        ("precise", 96, 200_000)])
def test_drift_curve_long_measures_a_600_step_copy_run_at_0_300_600(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, route: str, repeats: int,
        base: int) -> None:
    from deepnet_study import cli

    from grpodyn.empirical.deepnet import grpo

    seen = {}

    def fake_measure(model, tokenizer, **kw):
        seen.update(kw)
        return {"drift": {}}

    monkeypatch.setattr(grpo, "warmed_model", lambda size, seed: (None, None, {}))
    monkeypatch.setattr(relaxation, "measure_drift_curve", fake_measure)
    path = cli.drift_curve_step("m", out=tmp_path, lrs=(0.0875,), route=route, burn_in=20)
    assert path.name == f"drift_{route}_m.json"
    assert seen["copy_steps"] == 600 and seen["keep"] == (0, 300, 600)
    assert seen["segment"] == 60 and seen["repeats"] == repeats and seen["every"] == 30
    assert seen["segment_seed"] == base and seen["seed"] == 700 and seen["burn_in"] == 20


@pytest.mark.parametrize(("route", "first"), [("long", 1200), ("precise", 1300)])
def test_long_diagnosis_reads_its_own_files_and_the_first_half(tmp_path: Path, route: str,
                                                               first: int) -> None:
    from deepnet_study.cli import relaxation_diagnosis_step

    k, steps = 0.02, 120
    measured = _burned_in(k, 0.3, 20, np.array([0.15, 0.22, 0.28]))
    (tmp_path / f"drift_{route}_m.json").write_text(json.dumps(measured))
    setting = {"lr": 0.1, "momentum": 0.0, "steps": steps}
    assert set(relaxation_diagnosis_step(["m"], out=tmp_path, route=route)["post_hoc"]) == {
        "label"}  # no runs yet
    after = _post_hoc_after_runs(tmp_path, route, measured, setting, range(first, first + 9),
                                 k)
    assert after["kappa"] == pytest.approx(k) and len(after["states"]) == 3
    assert len(after["windows"]) == 2 and after["first_half"]["steps"] == 60
    assert after["first_half"]["value"] == pytest.approx(-1 / math.log(1 - k), rel=0.1)
