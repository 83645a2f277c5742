"""Trainer metric names read as the canonical quantities: several validation sets."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from grpodyn.empirical.diagnostics.diagnose import diagnose
from grpodyn.empirical.logs.aliases import resolve
from grpodyn.empirical.logs.loaders import load_run

FORMATS = Path(__file__).parent / "data" / "formats"
AIME = "val-core/aime24/reward/mean@1"
GSM8K = "val-core/openai/gsm8k/reward/mean@1"


def _logged(path: Path, name: str) -> dict[float, float]:
    """Return a metric of a verl file-logger log by step."""
    out = {}
    for line in path.read_text().splitlines():
        record = json.loads(line)
        if name in record["data"]:
            out[float(record["step"])] = record["data"][name]
    return out


# ---------------------------------------------------------------- several validation sets


def test_two_validation_sets_are_averaged_with_a_note():
    path = FORMATS / "aliases_verl_two_val_sources.jsonl"
    run = load_run(path)
    key = run.metric_keys["heldout_reward"]
    assert AIME in key and GSM8K in key and key.startswith("mean(")
    aime, gsm8k = _logged(path, AIME), _logged(path, GSM8K)
    held = run.metrics["heldout_reward"]
    at = {float(s): v for s, v in zip(run.steps, held, strict=True) if np.isfinite(v)}
    assert sorted(at) == [s for s in sorted(aime) if s >= run.steps[0]]
    for step, value in at.items():
        assert value == pytest.approx((aime[step] + gsm8k[step]) / 2)
    note = next(w for w in run.warnings if "validation sets" in w)
    assert "aime24" in note and "openai/gsm8k" in note and "equal weights" in note
    # the flat set alone beside a rising reward would read as reward hacking
    assert diagnose(run).primary != "reward_hacking"


def test_one_validation_set_is_read_as_before():
    run = load_run(FORMATS / "verl_file_logger.jsonl")
    assert run.metric_keys["heldout_reward"] == GSM8K
    assert not any("validation sets" in w for w in run.warnings)


def test_a_validation_set_chosen_as_the_reward_leaves_the_other_held_out():
    run = load_run(FORMATS / "aliases_verl_two_val_sources.jsonl", reward_key=AIME)
    assert run.reward_key == AIME
    assert run.metric_keys["heldout_reward"] == GSM8K


def test_the_mean_of_validation_sets_is_a_held_out_name():
    mean = f"mean({AIME}, {GSM8K})"
    assert resolve("heldout_reward", {mean}, "verl") == mean
    assert resolve("heldout_reward", {mean, AIME, GSM8K}, "verl") == mean
    assert resolve("heldout_reward", {mean, GSM8K}, "verl") == GSM8K  # AIME read as the reward


def test_validation_sets_in_a_table_are_averaged(tmp_path):
    lines = ["step,critic/score/mean," + AIME + "," + GSM8K]
    for step in range(1, 21):
        held = f"{0.1 + step / 1000:.4f},{0.2 + step / 100:.4f}" if step % 5 == 0 else ","
        lines.append(f"{step},{0.2 + step / 100:.4f},{held}")
    path = tmp_path / "verl.csv"
    path.write_text("\n".join(lines) + "\n")
    run = load_run(path)
    held = run.metrics["heldout_reward"]
    assert list(run.steps[np.isfinite(held)]) == [5, 10, 15, 20]
    assert held[run.steps == 10][0] == pytest.approx((0.11 + 0.3) / 2)
    assert any("validation sets" in w for w in run.warnings)
