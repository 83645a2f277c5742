"""The curvature-scale probe: its straight-line fit, its shipped result, and its torch path."""

from __future__ import annotations

import numpy as np
import pytest

from grpodyn.empirical.tinylm.curvature_probe import (
    DEFAULT_OUT,
    ProbePoint,
    fit_probe,
    summarise_probe,
)
from grpodyn.ground import InputError


def test_fit_recovers_stiffness_and_plateau():
    k, r_star = 0.004, 0.93
    rewards = np.linspace(0.3, 0.9, 7)
    points = [ProbePoint(step=i, reward=r, reward_se=0.01, drift=k * (r_star - r),
                         drift_se=1e-5) for i, r in enumerate(rewards)]
    fit = fit_probe(points)
    assert fit.stiffness == pytest.approx(k, rel=1e-9)
    assert fit.plateau == pytest.approx(r_star, rel=1e-9)
    assert fit.tau == pytest.approx(1 / k, rel=1e-9)


def test_fit_refuses_a_drift_that_does_not_fall():
    points = [ProbePoint(step=i, reward=r, reward_se=0.01, drift=0.1 * r, drift_se=0.01)
              for i, r in enumerate((0.2, 0.5, 0.8))]
    with pytest.raises(InputError, match="does not fall"):
        fit_probe(points)
    with pytest.raises(InputError, match="at least 3"):
        fit_probe(points[:2])


def test_shipped_probe_is_summarised():
    rows = summarise_probe(DEFAULT_OUT)
    assert {r["group_size"] for r in rows} == {4, 16}
    for r in rows:
        assert r["tau_fitted"] > 0 and r["checkpoints"] >= 3
        assert 0 <= r["full_step_loses"] <= 1


def test_probe_drift_runs_on_a_tiny_model():
    pytest.importorskip("torch")
    import torch

    from grpodyn.empirical.tinylm.curvature_probe import probe_drift
    from grpodyn.empirical.tinylm.training import build_model, build_tokenizer

    tokenizer = build_tokenizer()
    model, reference = build_model(seed=0), build_model(seed=0)
    n = sum(p.numel() for p in model.parameters())
    point = probe_drift(model, reference, tokenizer, torch.ones(n), learning_rate=1e-3,
                        group_size=4, kl=0.02, replicates=2, prompts_per_replicate=4,
                        samples_per_prompt=2, step_fractions=(0.5,))
    assert np.isfinite(point.drift) and point.drift_se >= 0 and len(point.reward_change) == 1
