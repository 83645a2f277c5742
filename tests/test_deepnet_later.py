"""Later sweeps of the deep-network demonstration: lr extension, staleness (small, no network)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

STUDY = pytest.importorskip("deepnet_study",
                            reason="the deep-network study (studies/deepnet) is absent")

from deepnet_study.forecast import predict_two_mode_staleness  # noqa: E402
from deepnet_study.sweeps import (  # noqa: E402
    compare_step,
    lr_extension_runs,
    observe_two_mode,
    staleness_runs,
)

from grpodyn.numerics.stability import staleness_max as one_mode_staleness_max  # noqa: E402
from grpodyn.numerics.two_mode import staleness_max  # noqa: E402


def _stale(k: tuple[float, float], *, staleness: int, steps: int) -> np.ndarray:
    """Plain gradient descent on u with the force diag(k) u of ``staleness`` steps ago."""
    k_arr = np.asarray(k, dtype=float)
    history = [np.ones(2)] * (staleness + 1)
    for _ in range(steps):
        history.append(history[-1] - k_arr * history[-1 - staleness])
    return np.asarray(history)


@pytest.mark.parametrize("k_s", [0.3, 0.9, 1.1])
def test_two_mode_staleness_threshold_matches_simulation(k_s: float) -> None:
    k_r = 0.02
    d_max = staleness_max(momentum=0.0, stiffness_stiff=k_s, stiffness_soft=k_r)
    assert d_max == one_mode_staleness_max(momentum=0.0, stiffness=k_s)  # the stiff mode binds
    for d, bounded in ((d_max, True), (d_max + 1, False)):
        u = _stale((k_s, k_r), staleness=d, steps=3000)
        assert bool(np.abs(u[-50:]).max() < 1.0) is bounded
    # the soft mode alone would tolerate a far larger lag
    assert one_mode_staleness_max(momentum=0.0, stiffness=k_r) > 10 * max(d_max, 1)


def test_two_mode_staleness_unstable_on_policy() -> None:
    assert staleness_max(momentum=0.0, stiffness_stiff=2.5, stiffness_soft=0.1) is None


def test_staleness_predictions_per_curvature_source() -> None:
    measured = {"spectrum": {"top_eigenvalues": [300.0], "top_cross_validated": 200.0},
                "critical_lr": {"value": 0.025}}
    plan = {"base_lr": 0.003125}
    items = {i["quantity"]: i for i in predict_two_mode_staleness(
        "m", measured, {"curvature": 150.0}, plan)}
    assert set(items) == {"staleness_max", "staleness_max_cross_validated",
                          "staleness_max_critical"}
    for item in items.values():
        assert item["setting"] == {"lr": 0.003125, "momentum": 0.0, "runs": "two_mode"}
        assert item["value"] == one_mode_staleness_max(momentum=0.0,
                                                       stiffness=item["stiffness"])
    assert items["staleness_max_critical"]["stiffness"] == pytest.approx(0.25)
    # a soft curvature that is not positive does not change the stiff mode's threshold
    same = predict_two_mode_staleness("m", measured, {"curvature": -3.0}, plan)
    assert [i["value"] for i in same] == [i["value"] for i in items.values()]


def test_lr_extension_doubles_each_momentum_grid_up_to_the_limit() -> None:
    plan = {"lr_sweep": {"0.0": [0.0015625, 0.003125, 0.00625, 0.0125],
                         "0.9": [0.003125, 0.00625, 0.0125, 0.025]}}
    runs = lr_extension_runs(plan, 0.1)
    assert [(r["momentum"], r["lr"]) for r in runs] == [
        (0.0, 0.025), (0.9, 0.05), (0.0, 0.05), (0.9, 0.1), (0.0, 0.1)]
    assert all(r["steps"] == 40 and r["sweep"] == "lr" for r in runs)
    assert lr_extension_runs(plan, 0.02) == []
    with pytest.raises(ValueError, match="lr-up-to"):
        lr_extension_runs(plan, 0.0)


def _records(settings: list[dict], bad: object) -> list[dict]:
    return [{"setting": s, "seed": seed, "unstable": bool(bad(s)), "reward": [0.1] * s["steps"],
             "update_norm": [0.1] * s["steps"], "update_cosine": [], "finite": True}
            for s in settings for seed in range(3)]


def test_extended_lr_sweep_is_observed_as_one_grid() -> None:
    plan = {"lr_sweep": {"0.0": [0.0125], "0.9": [0.025]}}
    first = [{"sweep": "lr", "lr": 0.0125, "momentum": 0.0, "steps": 40},
             {"sweep": "lr", "lr": 0.025, "momentum": 0.9, "steps": 40}]
    records = _records(first + lr_extension_runs(plan, 0.1), lambda s: s["lr"] >= 0.05)
    found = {i["setting"]["momentum"]: i for i in observe_two_mode("m", records)
             if i["quantity"] == "lr_max"}
    assert found[0.0]["value"] == 0.025 and found[0.0]["grid"] == [0.0125, 0.025, 0.05, 0.1]
    assert found[0.9]["value"] == 0.025 and found[0.9]["grid"] == [0.025, 0.05, 0.1]


def test_staleness_sweep_compared_with_both_prediction_files(tmp_path: Path) -> None:
    settings = staleness_runs(0.1)
    assert [s["staleness"] for s in settings] == [0, 1, 2, 3, 4, 6, 8]
    runs = {"size": "m", "seeds": 3, "runs": _records(settings, lambda s: s["staleness"] >= 3)}
    (tmp_path / "runs2_m.json").write_text(json.dumps(runs))
    setting = {"lr": 0.1, "momentum": 0.0}
    (tmp_path / "predictions.json").write_text(json.dumps({
        "commit": "a" * 40, "commit_by_model": {"m": "a" * 40},
        "items": [{"model": "m", "quantity": "staleness_max", "setting": setting, "value": 5}]}))
    (tmp_path / "predictions_two_mode.json").write_text(json.dumps({
        "commit": "b" * 40, "plans": {}, "items": []}))
    (tmp_path / "predictions_staleness.json").write_text(json.dumps({
        "commit": "c" * 40, "commit_by_model": {"m": "c" * 40},
        "items": [{"model": "m", "quantity": "staleness_max",
                   "setting": {**setting, "runs": "two_mode"}, "value": 2}]}))
    rows = json.loads(compare_step(out=tmp_path).read_text())["rows"]
    by_commit = {r["commit"][0]: r for r in rows if r["quantity"] == "staleness_max"}
    assert set(by_commit) == {"a", "c"}
    assert by_commit["c"]["observed"] == 2 and by_commit["c"]["within_target"] is True
    assert by_commit["a"]["predicted"] == 5 and by_commit["a"]["within_target"] is False
    assert by_commit["a"]["source"].startswith("one-mode")


def test_run2_options_are_checked(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    from deepnet_study.cli import main

    for argv in (["run2", "--sweeps", "lr"], ["run2", "--sweeps", "lr", "refresh"],
                 ["run2", "--sweeps", "staleness", "--lr-up-to", "0.1"],
                 ["run2", "--sweeps", "momentum"], ["predict-staleness", "--sizes", "m"],
                 ["sharpening", "--sizes", "1m", "--lr", "0"]):
        with pytest.raises(SystemExit) as stop:
            main([*argv, "--out", str(tmp_path)])
        assert stop.value.code == 2
        assert capsys.readouterr().err.startswith("error:")


def _run(reward: list[float]) -> dict:
    return {"finite": True, "reward": reward}


def test_post_hoc_rule_sees_an_early_collapse_the_fixed_rule_misses() -> None:
    from deepnet_study.sweeps import is_unstable, is_unstable_post_hoc

    collapsed = _run([0.11] + [0.03] * 9 + [0.06] * 30)  # falls in 10 steps, recovers partly
    assert not is_unstable(collapsed)
    assert is_unstable_post_hoc(collapsed, 0.11)
    flat = _run([0.11] * 40)
    assert not is_unstable_post_hoc(flat, 0.11)
    assert is_unstable_post_hoc({"finite": False, "reward": [0.11] * 40}, 0.11)


def test_post_hoc_rows_are_labelled_and_never_pass(tmp_path: Path) -> None:
    from grpodyn.claims import evaluate
    from grpodyn.empirical.deepnet.section import comparison_data

    settings = [{"sweep": "lr", "lr": lr, "momentum": 0.9, "steps": 40}
                for lr in (0.0125, 0.025, 0.05)]
    records = [{"setting": s, "seed": seed, "unstable": False,
                "reward": [0.11] + ([0.02] * 39 if s["lr"] >= 0.025 else [0.11] * 39),
                "update_norm": [0.1] * 40, "update_cosine": [], "finite": True}
               for s in settings for seed in range(3)]
    (tmp_path / "runs2_m.json").write_text(json.dumps({"size": "m", "seeds": 3,
                                                       "runs": records}))
    (tmp_path / "measurements_m.json").write_text(json.dumps({"warm_up": {"accuracy": 0.11}}))
    (tmp_path / "predictions.json").write_text(json.dumps({"commit": "a" * 40, "items": []}))
    (tmp_path / "predictions_two_mode.json").write_text(json.dumps({
        "commit": "b" * 40, "commit_by_model": {"m": "b" * 40}, "plans": {}, "items": [
            {"model": "m", "quantity": "lr_max", "value": 0.0126,
             "setting": {"momentum": 0.9, "runs": "two_mode"}}]}))
    rows = json.loads(compare_step(out=tmp_path).read_text())["rows"]
    fixed, late = sorted(rows, key=lambda r: bool(r.get("post_hoc")))
    assert fixed["observed"] == 0.05 and fixed["within_target"] is False  # a lower bound
    assert late["observed"] == 0.0125 and late["within_target"] is True
    assert late["post_hoc"].startswith("post hoc")
    checks = [c for c in evaluate("deep network", comparison_data(tmp_path))
              if c.key == "deepnet_lr_max_momentum"]
    # no route row (the two-mode map is a later route): the ledger row says so and fails
    assert [(c.study, c.agrees) for c in checks] == [(False, False), (True, False),
                                                     (True, False)]
    assert checks[0].computed.startswith("the route was not run")
    assert "post hoc" in checks[2].computed
    # within its target yet not counted: the row says both, and the page's column says "met
    # as a test" (it read "within target: no" beside 0.0126 against 0.0125)
    assert checks[2].computed.endswith("within target, not counted as met")
    assert "within target, not counted" not in checks[1].computed
    from grpodyn.html import study_table

    assert "<th>met as a test</th>" in study_table(checks[1:])


def test_staleness_figure_draws_the_sweep_and_the_predictions(tmp_path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    from deepnet_study.figures import two_mode_staleness_figure

    runs = _records(staleness_runs(0.1), lambda s: s["staleness"] >= 3)
    (tmp_path / "runs2_m.json").write_text(json.dumps({"size": "m", "runs": runs}))
    (tmp_path / "predictions_staleness.json").write_text(json.dumps({"items": [
        {"model": "m", "quantity": "staleness_max", "value": 2},
        {"model": "m", "quantity": "staleness_max_critical", "value": None}]}))
    ax = two_mode_staleness_figure("m", data=tmp_path).axes[0]
    (line,) = ax.lines[:1]
    assert list(line.get_ydata()) == [0, 0, 0, 1, 1, 1, 1]
    assert [v.get_xdata()[0] for v in ax.lines[1:]] == [2.5]


def test_a_refresh_prediction_is_tested_again_by_new_seeds(tmp_path: Path) -> None:
    from deepnet_study.sweeps import refresh_runs

    fresh = refresh_runs(0.1)
    # section 10's sweep: the same settings without a run length in them, other seeds
    earlier = [{**r, "setting": {k: v for k, v in r["setting"].items() if k != "steps"}}
               for r in _records(fresh, lambda s: s["refresh"] >= 8)]
    (tmp_path / "runs_m.json").write_text(json.dumps({"size": "m", "steps": 60, "seeds": 3,
                                                      "runs": earlier}))
    (tmp_path / "runs2_m.json").write_text(json.dumps({
        "size": "m", "seeds": 3, "runs": _records(fresh, lambda s: s["refresh"] >= 6)}))
    setting = {"lr": 0.1, "momentum": 0.0, "mode": "hold"}
    (tmp_path / "predictions.json").write_text(json.dumps({
        "commit": "a" * 40, "commit_by_model": {"m": "a" * 40},
        "items": [{"model": "m", "quantity": "refresh_max_critical", "setting": setting,
                   "value": 7}]}))
    (tmp_path / "predictions_two_mode.json").write_text(json.dumps({
        "commit": "b" * 40, "plans": {}, "items": []}))
    rows = json.loads(compare_step(out=tmp_path).read_text())["rows"]
    assert sorted((r["observed"], r["within_target"], "runs" in r["setting"]) for r in rows) == [
        (4, True, True), (6, True, False)]
