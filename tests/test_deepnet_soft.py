"""The soft-mode measurement, the two-mode predictions and their comparison (small, no network)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

STUDY = pytest.importorskip("deepnet_study",
                            reason="the deep-network study (studies/deepnet) is absent")
import torch  # noqa: E402
from deepnet_study.forecast import predict_two_mode, two_mode_plan  # noqa: E402
from deepnet_study.sweeps import compare_step, observe_two_mode, two_mode_runs  # noqa: E402

from grpodyn.empirical.deepnet.measure import debiased_curvature  # noqa: E402
from grpodyn.numerics import _generated as gen  # noqa: E402


def _operator(diagonal: torch.Tensor) -> object:
    return lambda v: diagonal * v


def test_debiased_curvature_removes_the_noise_directions() -> None:
    dim, replicates = 12, 5
    diagonal = torch.full((dim,), 100.0)
    diagonal[0] = 0.1  # the mean update lies along a soft direction
    mean = torch.zeros(dim)
    mean[0] = 1.0
    # orthogonal noises in stiff directions: the estimator is exact, the plain quotient is not
    updates = [mean + 2.0 * torch.eye(dim)[1 + i] for i in range(replicates)]
    out = debiased_curvature(updates, [_operator(diagonal)] * replicates)
    assert out["curvature"] == pytest.approx(0.1, rel=1e-6)
    assert out["noisy_curvature"] == pytest.approx((0.1 + 400.0) / 5.0, rel=1e-6)
    assert out["signal_fraction"] == pytest.approx(1 / 5, rel=1e-6)
    with pytest.raises(ValueError, match="replicates"):
        debiased_curvature(updates[:3], [_operator(diagonal)] * 3)


def test_debiased_curvature_with_random_noise_brackets_the_truth() -> None:
    gen_t = torch.Generator().manual_seed(0)
    dim, replicates = 400, 8
    diagonal = torch.linspace(0.05, 20.0, dim)
    mean = torch.zeros(dim)
    mean[:5] = 1.0  # soft directions: curvature about 0.15
    truth = float(mean @ (diagonal * mean)) / float(mean @ mean)
    updates = [mean + 0.2 * torch.randn(dim, generator=gen_t) for _ in range(replicates)]
    out = debiased_curvature(updates, [_operator(diagonal)] * replicates)
    assert abs(out["curvature"] - truth) < 3 * out["curvature_se"] + 1e-3
    assert out["noisy_curvature"] > 10 * truth


def _measured(top: float, lr_critical: float) -> dict:
    return {"spectrum": {"top_eigenvalues": [top, 1.0, 0.5]},
            "critical_lr": {"value": lr_critical}}


def test_two_mode_predictions_resolved_and_not() -> None:
    items, plan = predict_two_mode("m", _measured(10.0, 0.8), {"curvature": 0.05,
                                                               "curvature_se": 0.01})
    assert plan["relaxation"][0] == {"lr": 0.1, "momentum": 0.0}
    relax = [i for i in items if i["quantity"] == "relaxation_time"]
    assert relax[0]["value"] == pytest.approx(gen.two_mode_relaxation_time(0.0, 0.1 * 0.05))
    assert relax[0]["lower_bound"] < relax[0]["value"]
    lr_max = [i for i in items if i["quantity"] == "lr_max"]
    assert [i["value"] for i in lr_max] == pytest.approx([0.2, 0.38])
    soft = next(i for i in items if i["setting"].get("mode") == "soft")
    assert soft["value"] == pytest.approx((1 - np.sqrt(0.005)) ** 2)
    items, _ = predict_two_mode("m", _measured(10.0, 0.8), {"curvature": 1.0,
                                                            "curvature_se": 2.0})
    relax = [i for i in items if i["quantity"] == "relaxation_time"]
    assert all(i["value"] is None and i["status"] == "undetermined" for i in relax)


def test_plan_and_runs() -> None:
    plan = two_mode_plan(0.8, 0.2)
    assert plan["lr_sweep"]["0.0"] == [0.05, 0.1, 0.2, 0.4]
    items = [{"quantity": "relaxation_time", "value": 20.0, "setting": {"lr": 0.1,
                                                                        "momentum": 0.0}},
             {"quantity": "relaxation_time", "value": None, "lower_bound": 400.0,
              "setting": {"lr": 0.05, "momentum": 0.0}},
             {"quantity": "relaxation_time", "value": None, "lower_bound": None,
              "setting": {"lr": 0.05, "momentum": 0.5}}]
    runs = two_mode_runs(items, plan, has_lr_sweep=True)
    assert [r["steps"] for r in runs] == [100, 300]
    assert len(two_mode_runs(items, plan, has_lr_sweep=False)) == 2 + 8
    first = two_mode_runs(items, plan, has_lr_sweep=False)[:2]
    assert [(r["momentum"], r["steps"]) for r in first] == [(0.0, 40), (0.9, 40)]


def test_observe_and_compare_two_mode(tmp_path: Path) -> None:
    steps, tau = 150, 30.0
    n = np.arange(steps)
    records = []
    for seed in range(3):
        curve = 0.3 - 0.2 * np.exp(-n / tau) + 0.002 * np.sin(n + seed)
        records.append({"setting": {"sweep": "relax", "lr": 0.1, "momentum": 0.0,
                                    "steps": steps}, "seed": seed, "unstable": False,
                        "reward": curve.tolist(), "update_norm": [0.1] * steps,
                        "update_cosine": [], "finite": True})
    items = observe_two_mode("m", records)
    (relax,) = [i for i in items if i["quantity"] == "relaxation_time"]
    assert relax["setting"] == {"lr": 0.1, "momentum": 0.0, "runs": "two_mode"}
    assert relax["value"] == pytest.approx(tau, rel=0.05)
    assert not [i for i in items if i["quantity"] == "lr_max"]
    (tmp_path / "predictions.json").write_text(json.dumps({"items": []}))
    prediction = {"model": "m", "quantity": "relaxation_time", "value": 28.0,
                  "setting": {"lr": 0.1, "momentum": 0.0, "runs": "two_mode"}}
    (tmp_path / "predictions_two_mode.json").write_text(json.dumps({"items": [prediction]}))
    (tmp_path / "runs2_m.json").write_text(json.dumps({"size": "m", "runs": records}))
    rows = json.loads(compare_step(out=tmp_path).read_text())["rows"]
    assert rows[0]["within_target"] is True and "postdiction" not in rows[0]


def test_reward_period_finds_a_planted_oscillation_and_not_noise() -> None:
    from deepnet_study.sweeps import reward_period

    rng = np.random.default_rng(0)
    n = np.arange(100)
    noise = [list(0.1 + 0.001 * n + 0.02 * rng.standard_normal(100)) for _ in range(3)]
    planted = [list(np.array(c) + 0.03 * np.cos(2 * np.pi * n / 12)) for c in noise]
    found = reward_period(planted, 12.0)
    assert found["oscillation_at_predicted"] and found["period"] == pytest.approx(12, rel=0.1)
    assert not reward_period(noise, 12.0)["oscillation_at_predicted"]


def test_oscillation_run_is_planned_when_the_period_fits() -> None:
    item = {"quantity": "oscillation_momentum", "value": 0.24,
            "setting": {"lr": 0.1, "mode": "soft"}, "period_at_momentum": {"0.9": 12.0}}
    runs = two_mode_runs([item], {"lr_sweep": {}}, has_lr_sweep=True)
    assert runs == [{"sweep": "osc", "lr": 0.1, "momentum": 0.9, "steps": 100}]
    item["period_at_momentum"] = {"0.9": 60.0}
    assert two_mode_runs([item], {"lr_sweep": {}}, has_lr_sweep=True) == []


def test_a_relaxation_far_below_the_observed_bound_is_refuted() -> None:
    from deepnet_study.sweeps import join

    obs = [{"model": "m", "quantity": "relaxation_time", "setting": {"lr": 0.1}, "value": None,
            "status": "undetermined", "lower_bound": 200.0}]
    rows = join([{"model": "m", "quantity": "relaxation_time", "setting": {"lr": 0.1},
                  "value": 2.0}, ], obs)
    assert rows[0]["within_target"] is False
    rows = join([{"model": "m", "quantity": "relaxation_time", "setting": {"lr": 0.1},
                  "value": 190.0}], obs)
    assert rows[0]["within_target"] is None


def test_refresh_sweep_is_observed_under_the_two_mode_tag() -> None:
    from deepnet_study.sweeps import refresh_runs

    settings = refresh_runs(0.003125)
    assert [s["refresh"] for s in settings] == [1, 2, 3, 4, 6, 8]
    records = [{"setting": s, "seed": seed, "unstable": s["refresh"] >= 3,
                "reward": [0.1] * 60, "update_norm": [0.1] * 60, "update_cosine": [],
                "finite": True} for s in settings for seed in range(3)]
    (item,) = [i for i in observe_two_mode("m", records) if i["quantity"] == "refresh_max"]
    assert item["value"] == 2
    assert item["setting"] == {"lr": 0.003125, "momentum": 0.0, "mode": "hold",
                               "runs": "two_mode"}
