"""Advice never raises the lr against a diagnosis that flags an instability without a fall."""

from __future__ import annotations

import json

import numpy as np

from grpodyn.empirical.diagnostics.diagnose import diagnose
from grpodyn.empirical.logs.advice import advise_log
from grpodyn.empirical.logs.loaders import load_run


def _dip_run(tmp_path, seed: int):
    """A rise to its plateau with a short dip halfway, as a TRL trainer_state.json."""
    n, rng = 150, np.random.default_rng(seed)
    steps = np.arange(1, n + 1)
    reward = 0.7 - 0.6 * np.exp(-steps / (n / 6)) - 0.4 * ((steps > n * 0.5) & (steps < n * 0.55))
    reward = np.clip(reward + rng.normal(0, 0.03, n), 0, 1)
    history = [{"loss": 0.0, "learning_rate": 1e-6, "reward": float(r),
                "entropy": 0.7 - 0.3 * s / n, "step": int(s)}
               for s, r in zip(steps, reward, strict=True)]
    folder = tmp_path / f"dip{seed}"
    folder.mkdir()
    (folder / "trainer_state.json").write_text(json.dumps(
        {"global_step": n, "max_steps": n, "logging_steps": 1, "log_history": history}))
    return load_run(folder)


def test_a_flagged_instability_without_a_fall_lowers_the_lr(tmp_path):
    flagged = 0
    for seed in range(4):
        run = _dip_run(tmp_path, seed)
        if not diagnose(run).modes["dynamical_instability"].flag:
            continue
        flagged += 1
        advice = advise_log(run)
        assert advice.recommendation["direction"] == "lower"
        assert advice.basis["kind"] == "instability" and advice.status == "bound"
        assert "dynamical instability" in advice.basis["text"]
    assert flagged >= 2  # the dip is read as an instability on most seeds
