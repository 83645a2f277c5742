"""The delayed relay (theory/relay.py) and its predictions and observations (empirical/deepnet)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

STUDY = pytest.importorskip("deepnet_study",
                            reason="the deep-network study (studies/deepnet) is absent")

from deepnet_study import relay  # noqa: E402

from grpodyn.numerics import _generated as gen  # noqa: E402
from grpodyn.numerics.stability import staleness_max  # noqa: E402
from grpodyn.theory import get, sym  # noqa: E402


def _relay(d: int, step: float, start: float, n: int = 400) -> np.ndarray:
    """Simulate u_{n+1} = u_n - step sign(u_{n-d}) from u = start (held for d steps)."""
    u = [start] * (d + 1)
    for _ in range(n):
        u.append(u[-1] - step * np.sign(u[-1 - d]))
    return np.asarray(u[200:])


@pytest.mark.parametrize("d", [0, 1, 2, 4, 8])
@pytest.mark.parametrize("phase", [0.1, 0.37, 0.93])
def test_relay_swing_and_period_match_simulation(d: int, phase: float) -> None:
    step = 0.03
    u = _relay(d, step, phase * step)
    assert (u.max() - u.min()) / 2 == pytest.approx(float(gen.relay_half_swing(d, 0.1, 0.3)),
                                                    rel=1e-9)
    crossings = np.nonzero(np.sign(u[1:]) != np.sign(u[:-1]))[0]
    assert set(np.diff(crossings[::2]).tolist()) == {int(gen.relay_period(d))}
    assert get("relay_period").expr.subs(sym.d, d) == 4 * d + 2


def _scan(step: float = 0.05) -> dict:
    rows = [{"s": s, "force": -np.sign(s) * f, "reward": r}
            for s, f, r in ((-0.4, 0.2, 0.04), (-0.1, 0.3, 0.09), (-0.02, 0.1, 0.10),
                            (0.0, 0.0, 0.10), (0.02, 0.2, 0.10), (0.1, 0.3, 0.08),
                            (0.4, 0.4, 0.06))]
    return {"scan": rows, "directions": {"update_norm": step / 0.1, "eigenvalues": [9.0],
                                         "cross_validated": [6.0]}}


def test_saturated_force_and_reward_loss_read_the_scan() -> None:
    rows = _scan()["scan"]
    # |s| >= 0.05: forces 0.2, 0.3, 0.3, 0.4 -> median 0.3
    assert relay.saturated_force(rows, step=0.05) == pytest.approx(0.3)
    with pytest.raises(ValueError):
        relay.saturated_force(rows, step=1.0)
    # at 0.1: loss 0.01 (negative side) and 0.02 (positive side); beyond the scan: the end
    assert relay.reward_loss_at(rows, 0.1) == pytest.approx(0.015)
    assert relay.reward_loss_at(rows, 0.25) == pytest.approx((0.035 + 0.03) / 2)
    assert relay.reward_loss_at(rows, 9.0) == pytest.approx((0.06 + 0.04) / 2)


def test_relay_predictions_and_the_linear_contrast() -> None:
    items = relay.predict_relay("m", _scan(), lr=0.2, staleness=(0, 1, 2, 4))
    swings = {i["setting"]["staleness"]: i["value"] for i in items
              if i["quantity"] == "stiff_swing"}
    # F = median of 0.3, 0.2, 0.3, 0.4 over |s| >= lr |g| = 0.1
    assert swings == pytest.approx({1: 1.5 * 0.2 * 0.3, 2: 2.5 * 0.06, 4: 4.5 * 0.06})
    by_q = {i["quantity"]: i for i in items if i["quantity"] != "stiff_swing"}
    # reward loss at the swings 0.03, 0.09, 0.15: 0.0047, 0.013, 0.021 > 0.02 from d = 2
    assert by_q["staleness_max"]["value"] == 1
    assert by_q["staleness_max"]["reward_loss_at_swing"]["2"] == pytest.approx(
        (0.0183333 + 0.0233333) / 2, rel=1e-4)
    assert by_q["staleness_max_linear"]["value"] == staleness_max(momentum=0.0, stiffness=1.8)
    assert by_q["staleness_max_linear_cross_validated"]["stiffness"] == pytest.approx(1.2)
    # at lr 0.1 the swings stay where the scan loses less than the margin: no threshold
    half = relay.predict_relay("m", _scan(), lr=0.1, staleness=(0, 1, 2, 4))
    assert [i["value"] for i in half if i["quantity"] == "staleness_max"] == [4]
    assert all(i["setting"]["runs"] == "tracked" for i in items)
    with pytest.raises(ValueError):
        relay.predict_relay("m", _scan(), lr=0.0)


def _record(d: int, u: list[float], reward: list[float], lr: float = 0.1) -> dict:
    return {"setting": {"sweep": "staleness", "lr": lr, "momentum": 0.0, "staleness": d,
                        "steps": len(reward)},
            "projection": [[x, 0.0] for x in u], "reward": reward, "finite": True}


def test_observe_tracking_swings_and_threshold() -> None:
    flat, losing = [0.1] * 40, [0.1] * 20 + [0.05] * 20
    records = [_record(0, [0.1, -0.1], flat), _record(0, [0.2, 0.0], flat),
               _record(0, [0.3, 0.1], flat),
               _record(2, [0.4, -0.4], losing), _record(2, [0.2], losing),
               _record(2, [0.1], flat)]
    items = {(i["quantity"], i["setting"].get("staleness")): i
             for i in relay.observe_tracking("m", records)}
    assert items[("stiff_swing", 0)]["value"] == pytest.approx(0.1)  # median of 0.1, 0.1, 0.15
    assert items[("stiff_swing", 2)]["seeds"] == pytest.approx([0.4, 0.1, 0.05])
    assert items[("staleness_max", None)]["value"] == 0
    assert items[("staleness_max", None)]["unstable"] == [False, True]


def test_relay_rows_label_postdictions_and_carry_the_commit(tmp_path: Path) -> None:
    (tmp_path / "scan_m.json").write_text(json.dumps(_scan()))
    flat = [0.1] * 40
    runs = [_record(d, [0.03 * (d + 0.5), -0.03 * (d + 0.5)], flat, lr=lr)
            for lr in (0.1, 0.2) for d in (0, 1, 2) for _ in range(3)]
    (tmp_path / "tracking_m.json").write_text(json.dumps({"size": "m", "runs": runs}))
    items = relay.predict_relay("m", _scan(), lr=0.2, staleness=(0, 1, 2))
    (tmp_path / "predictions_relay.json").write_text(json.dumps({"commit": "abc",
                                                                "items": items}))
    rows = relay.relay_rows(tmp_path)
    tested = [r for r in rows if r["setting"]["lr"] == 0.2]
    post = [r for r in rows if r["setting"]["lr"] == 0.1]
    assert tested and all(r["commit"] == "abc" and "postdiction" not in r for r in tested)
    assert post and all("postdiction" in r for r in post)
    swing = {r["setting"]["staleness"]: r for r in post if r["quantity"] == "stiff_swing"}
    assert swing[1]["within_target"] is True  # observed (d + 1/2) 0.03 = 0.1 x 0.3 (d + 1/2)
    wide = {r["setting"]["staleness"]: r for r in tested if r["quantity"] == "stiff_swing"}
    assert wide[2]["within_target"] is False  # predicted twice the observed swing


def test_predict_relay_needs_an_lr(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    from deepnet_study.cli import main

    for argv in (["predict-relay", "--sizes", "m"], ["predict-relay", "--sizes", "m",
                                                      "--lr", "0.1"]):
        with pytest.raises(SystemExit) as stop:
            main([*argv, "--out", str(tmp_path)])
        assert stop.value.code == 2
        assert capsys.readouterr().err.startswith("error:")


def test_stiff_figures_draw_the_scan_and_the_swings(tmp_path: Path) -> None:
    """Both figures draw from small files; a rule without a prediction is a postdiction."""
    import matplotlib

    matplotlib.use("Agg")
    from deepnet_study import figures

    scan = _scan()
    for r in scan["scan"]:
        r.update(curvature=1.0, degenerate=0.5,
                 **{f"{k}_se": 0.01 for k in ("force", "curvature", "reward", "degenerate")})
    scan.update(step_length=0.05, lr=0.1)
    (tmp_path / "scan_m.json").write_text(json.dumps(scan))
    runs = [_record(d, [0.01, -0.02, 0.03], [0.1] * 3) for d in (0, 2) for _ in range(2)]
    (tmp_path / "tracking_m_lr0.1.json").write_text(json.dumps({"size": "m", "runs": runs}))
    fig = figures.stiff_scan_figure("m", tmp_path)
    assert len(fig.axes) == 4
    fig = figures.stiff_tracking_figure("m", 0.1, tmp_path)
    labels = fig.axes[1].get_legend_handles_labels()[1]
    assert any("postdiction" in label for label in labels)


def test_tracked_refresh_threshold_carries_seeds_and_steps() -> None:
    flat, losing = [0.1] * 40, [0.1] * 20 + [0.05] * 20

    def hold(k: int, reward: list[float], seed: int) -> dict:
        return {"setting": {"sweep": "refresh", "lr": 0.1, "momentum": 0.0, "refresh": k,
                            "mode": "hold", "steps": 40}, "seed": seed, "reward": reward,
                "projection": [[0.0, 0.0]], "finite": True}

    records = [{**_record(0, [0.1], flat), "seed": s} for s in (7, 8, 9)]
    records += [hold(2, flat, s) for s in (7, 8, 9)]
    records += [hold(3, r, s) for r, s in ((losing, 7), (flat, 8), (losing, 9))]
    items = [i for i in relay.observe_tracking("m", records) if i["quantity"] == "refresh_max"]
    assert len(items) == 1
    item = items[0]
    assert item["grid"] == [1, 2, 3]  # the on-policy runs are K = 1
    assert item["unstable"] == [False, False, True]
    assert item["value"] == 2
    assert item["setting"] == {"lr": 0.1, "momentum": 0.0, "mode": "hold", "runs": "tracked",
                               "seeds": [7, 8, 9], "steps": 40}
    stale = next(i for i in relay.observe_tracking("m", records)
                 if i["quantity"] == "staleness_max")
    assert "seeds" not in stale["setting"] and stale["seeds"] == [7, 8, 9]
