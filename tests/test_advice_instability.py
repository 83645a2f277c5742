"""Advice never raises the lr against a diagnosis that flags an instability without a fall."""

from __future__ import annotations

import json

import numpy as np

from grpodyn.empirical.diagnostics.diagnose import diagnose
from grpodyn.empirical.logs.advice import advise_log
from grpodyn.empirical.logs.loaders import load_run


def _oscillating_run(tmp_path, seed: int):
    """A rise to its plateau that oscillates about it (a limit cycle), as a TRL trainer_state."""
    n, rng = 300, np.random.default_rng(seed)
    steps = np.arange(1, n + 1)
    reward = 0.6 - 0.4 * np.exp(-steps / 40) + 0.12 * np.sin(2 * np.pi * steps / 14)
    reward = np.clip(reward + rng.normal(0, 0.03, n), 0, 1)
    history = [{"loss": 0.0, "learning_rate": 1e-6, "reward": float(r),
                "entropy": 0.7 - 0.3 * s / n, "step": int(s)}
               for s, r in zip(steps, reward, strict=True)]
    folder = tmp_path / f"cycle{seed}"
    folder.mkdir()
    (folder / "trainer_state.json").write_text(json.dumps(
        {"global_step": n, "max_steps": n, "logging_steps": 1, "log_history": history}))
    return load_run(folder)


def test_a_flagged_instability_without_a_fall_lowers_the_lr(tmp_path):
    flagged = 0
    for seed in range(4):
        run = _oscillating_run(tmp_path, seed)
        if not diagnose(run).modes["dynamical_instability"].flag:
            continue
        flagged += 1
        advice = advise_log(run)
        assert advice.recommendation["direction"] == "lower"
        assert advice.basis["kind"] == "instability" and advice.status == "bound"
        assert "dynamical instability" in advice.basis["text"]
    assert flagged >= 2  # the oscillation is read as an instability on most seeds
