"""The stiff direction of the deep network: eigenvectors, 1-D scan, lag limits, tracked runs."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import numpy as np
import pytest

STUDY = pytest.importorskip("deepnet_study",
                            reason="the deep-network study (studies/deepnet) is absent")

torch = pytest.importorskip("torch")

from deepnet_study import stiff  # noqa: E402

from grpodyn.empirical.deepnet import grpo, measure  # noqa: E402
from grpodyn.numerics.stability import refresh_stable, staleness_max  # noqa: E402

from .deepnet_support import score_half_of_every_group, untrained_70k  # noqa: E402


@pytest.fixture(scope="module")
def tiny() -> tuple:
    """Build an untrained 70k model (eager attention) and the tokenizer."""
    return untrained_70k()


@pytest.fixture
def scored(monkeypatch: pytest.MonkeyPatch) -> None:
    """Make measure's sampled batches score [1, 0, 0, 1] in every group of 4 (a force exists)."""
    score_half_of_every_group(monkeypatch)


def test_lanczos_vectors_are_the_top_eigenvectors_of_a_known_matrix() -> None:
    """Three top Ritz vectors of a diagonal operator are its top coordinate axes, in order."""
    diag = torch.tensor(np.r_[np.linspace(-1, 1, 60), 2.0, 3.0, 5.0], dtype=torch.float32)
    values, vectors, residuals = measure.lanczos_vectors(lambda v: diag * v, diag.numel(),
                                                         iterations=50, count=3)
    assert values[:3] == pytest.approx([5.0, 3.0, 2.0], rel=1e-3)
    assert vectors.shape == (3, diag.numel())
    for row, axis in zip(vectors, (62, 61, 60), strict=True):
        assert abs(float(row[axis])) == pytest.approx(1.0, rel=1e-3)
    assert max(residuals) < 1e-2


def test_degenerate_share_counts_groups_scored_alike() -> None:
    rewards = torch.tensor([1.0, 1, 1, 1, 0, 0, 0, 0, 1, 0, 0, 0])
    assert grpo.degenerate_share(rewards, 4) == pytest.approx(2 / 3)


@pytest.mark.parametrize("momentum", [0.0, 0.5])
def test_lag_stiffness_limit_is_the_boundary_of_the_lag_maps(momentum: float) -> None:
    """k_lim(d) and k_lim(K) separate stable from unstable stiffnesses of the one-mode maps."""
    assert stiff.lag_stiffness_limit(momentum=momentum) == pytest.approx(2 * (1 + momentum))
    for d in (1, 2, 4, 8):
        limit = stiff.lag_stiffness_limit(momentum=momentum, staleness=d)
        assert staleness_max(momentum=momentum, stiffness=limit * 0.999) >= d
        assert staleness_max(momentum=momentum, stiffness=limit * 1.001) < d
    for k in (2, 4, 8):
        limit = stiff.lag_stiffness_limit(momentum=momentum, refresh=k)
        assert bool(refresh_stable(momentum, limit * 0.999, k))
        assert not bool(refresh_stable(momentum, limit * 1.001, k))
    # momentum 0, sample-and-hold: K k < 2 (the held force flips the coordinate)
    assert stiff.lag_stiffness_limit(refresh=4) == pytest.approx(0.5, rel=1e-6)
    with pytest.raises(ValueError):
        stiff.lag_stiffness_limit(staleness=2, refresh=4)


def test_saturation_amplitude_reads_the_first_side_point_below_the_limit() -> None:
    rows = [{"s": s, "curvature": h, "curvature_se": 0.1}
            for s, h in ((-0.4, 0.5), (-0.2, 8.0), (-0.1, 10.0), (0.0, 10.0), (0.1, 9.0),
                         (0.2, 2.0), (0.4, 1.0))]
    out = stiff.saturation_amplitude(rows, lr=0.1, limit=0.5)
    assert out == {"positive": 0.2, "negative": 0.4}
    # nothing below the limit on one side: said so, not a number
    out = stiff.saturation_amplitude(rows[:4] + [{"s": 0.5, "curvature": 9.0,
                                                  "curvature_se": 0.1}], lr=0.1, limit=0.5)
    assert out["positive"] is None and "positive_status" in out
    # already stable at the start
    assert stiff.saturation_amplitude(rows, lr=0.01, limit=0.5)["negative"] == 0.0


def test_scan_grid_is_symmetric_and_rejects_a_bad_step() -> None:
    grid = stiff.scan_grid(0.1, (1, 2))
    assert grid == pytest.approx([-0.2, -0.1, 0.0, 0.1, 0.2])
    with pytest.raises(ValueError):
        stiff.scan_grid(0.0)


def test_scan_along_measures_the_curvature_and_restores_the_weights(tiny: tuple,
                                                                     scored: None) -> None:
    """At s = 0 the scan's v.Hv equals the operator's on the same sample; weights come back."""
    model, tokenizer = tiny
    before = torch.nn.utils.parameters_to_vector(model.parameters()).detach().clone()
    found = stiff.stiff_directions(model, tokenizer, count=2, prompts=4, group_size=4,
                                   iterations=4)
    v = found["vectors"][0]
    assert float(v.norm()) == pytest.approx(1.0, rel=1e-4)
    assert found["eigenvalues"][0] >= found["eigenvalues"][1]
    rows = stiff.scan_along(model, tokenizer, v, [-0.5, 0.0, 0.5], replicates=2, prompts=4,
                            group_size=4)
    after = torch.nn.utils.parameters_to_vector(model.parameters()).detach()
    assert torch.equal(before, after)
    zero = rows[1]
    assert zero["s"] == 0.0 and zero["reward"] == 0.5 and zero["degenerate"] == 0.0
    # the scan's replicates at s = 0 are the samples of seeds 31, 32: the same v.Hv and v.g
    curvatures, forces = [], []
    for seed in (31, 32):
        (b,) = measure.sample_batches(model, tokenizer, 1, prompts=4, group_size=4, seed=seed)
        hvp, grad = measure.hvp_operator(model, [b])
        curvatures.append(float(v @ hvp(v)))
        forces.append(float(-(v @ grad)))
    assert zero["curvature"] == pytest.approx(np.mean(curvatures), rel=1e-4, abs=1e-6)
    assert zero["force"] == pytest.approx(np.mean(forces), rel=1e-4, abs=1e-7)
    assert zero["curvature_se"] == pytest.approx(abs(curvatures[0] - curvatures[1]) / 2,
                                                 rel=1e-3, abs=1e-6)
    # far along v the curvature differs from the start (the network is not a quadratic)
    assert rows[0]["curvature"] != pytest.approx(zero["curvature"], rel=1e-6)


def test_run_records_the_stiff_coordinates(tiny: tuple) -> None:
    """Projections of the displacement and of the fresh force; held steps have no force."""
    model, tokenizer = tiny
    gen = torch.Generator().manual_seed(1)
    dirs = torch.randn(2, sum(p.numel() for p in model.parameters()), generator=gen)
    dirs = dirs / dirs.norm(dim=1, keepdim=True)
    start = torch.nn.utils.parameters_to_vector(model.parameters()).detach().clone()
    a = copy.deepcopy(model)
    out = grpo.run(a, tokenizer, grpo.RunSettings(lr=0.1, refresh=2, steps=3, batch=2),
                   directions=dirs)
    end = torch.nn.utils.parameters_to_vector(a.parameters()).detach()
    assert len(out["projection"]) == 3 and len(out["projection"][0]) == 2
    assert out["projection"][-1] == pytest.approx((dirs @ (end - start)).tolist(), abs=1e-6)
    assert out["force_projection"][1] is None and out["force_projection"][2] is not None
    assert len(out["degenerate_share"]) == 3
    # the untrained model scores 0 everywhere: every group degenerate, no force
    assert out["degenerate_share"] == [1.0, 1.0, 1.0]
    assert out["force_projection"][0] == pytest.approx([0.0, 0.0], abs=1e-9)
    plain = grpo.run(copy.deepcopy(model), tokenizer, grpo.RunSettings(lr=0.1, steps=1, batch=2))
    assert plain["force_projection"] == [] and plain["projection"] == []


def test_tracking_plan_and_runs(tiny: tuple) -> None:
    plan = stiff.tracking_plan(lr=0.1, staleness=(0, 2), refresh=(1, 4), steps=2)
    assert [p.get("staleness", p.get("refresh")) for p in plan] == [0, 2, 4]
    model, tokenizer = tiny
    dirs = torch.zeros(1, sum(p.numel() for p in model.parameters()))
    dirs[0, 0] = 1.0
    records = stiff.track_runs(model, tokenizer, dirs, plan[:1], seeds=2, seed_offset=7)
    assert [r["seed"] for r in records] == [7, 8]
    assert len(records[0]["projection"]) == 2 and records[0]["finite"]


def test_scan_and_track_options_are_checked(tmp_path: Path,
                                            capsys: pytest.CaptureFixture) -> None:
    """Bad lags or lr, or no plan for the size: one-line errors, exit code 2."""
    from deepnet_study.cli import main

    (tmp_path / "predictions_two_mode.json").write_text(json.dumps({"plans": {}, "items": []}))
    for argv in (["scan", "--sizes", "330k", "--lr", "-0.1"],
                 ["track", "--sizes", "330k", "--lr", "0.1", "--refresh", "0"],
                 ["scan", "--sizes", "330k", "--lr", "0.1", "--staleness", "-1"],
                 ["track", "--sizes", "330k"]):
        with pytest.raises(SystemExit) as stop:
            main([*argv, "--out", str(tmp_path)])
        assert stop.value.code == 2
        err = capsys.readouterr().err
        assert err.startswith("error:") and err.count("\n") == 1


def test_track_adds_settings_to_a_file_tracked_along_the_same_directions(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A later track keeps the other settings' runs; other directions are refused."""
    from deepnet_study import cli

    found = {"eigenvalues": [3.0, 2.0, 1.0]}
    monkeypatch.setattr(grpo, "warmed_model", lambda size, seed: (None, None, {}))
    monkeypatch.setattr(stiff, "stiff_directions",
                        lambda *a, **k: {**found, "vectors": torch.zeros(3, 2)})

    def fake_runs(model: object, tokenizer: object, directions: object, plan: list, *,
                  seeds: int, seed_offset: int, progress: object = None) -> list:
        return [{"setting": s, "seed": seed_offset, "reward": [0.1] * 12, "finite": True}
                for s in plan]

    monkeypatch.setattr(stiff, "track_runs", fake_runs)
    cli.track_step("m", out=tmp_path, lr=0.1, staleness=(0, 2), refresh=(1,), steps=12)
    path = cli.track_step("m", out=tmp_path, lr=0.1, staleness=(0,), refresh=(4,), steps=12)
    runs = json.loads(path.read_text())["runs"]
    assert sorted((r["setting"]["sweep"], r["setting"].get("staleness", r["setting"].get(
        "refresh"))) for r in runs) == [("refresh", 4), ("staleness", 0), ("staleness", 2)]
    found["eigenvalues"] = [9.0, 2.0, 1.0]
    with pytest.raises(ValueError, match="other directions"):
        cli.track_step("m", out=tmp_path, lr=0.1, staleness=(0,), refresh=(1,), steps=12)
