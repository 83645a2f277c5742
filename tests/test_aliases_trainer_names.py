"""Trainer metric names read as the canonical quantities: several validation sets, OpenRLHF's
W&B and TensorBoard names, and the rows of a W&B table that are not training points."""

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
    # the evaluation before training (step 0) goes to the first training point
    logged_at = {max(s, float(run.steps[0])): s for s in sorted(aime)}
    assert sorted(at) == sorted(logged_at) and min(aime) < run.steps[0]
    for step, value in at.items():
        source = logged_at[step]
        assert value == pytest.approx((aime[source] + gsm8k[source]) / 2)
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


# ---------------------------------------------------------------- OpenRLHF through W&B, TensorBoard


def _check_openrlhf(run) -> None:
    assert run.metric_keys["entropy"] == "train/entropy_loss"
    assert run.metric_keys["clipped_share"] == "train/response_clip_ratio"
    assert run.metric_keys["heldout_reward"] == "eval/eval_gsm8k_pass1"
    held = run.metrics["heldout_reward"]
    assert list(run.steps[np.isfinite(held)]) == [10, 20, 30, 40]
    assert not any("placed at the step" in w or "finite step" in w for w in run.warnings)


def test_openrlhf_wandb_history_jsonl():
    run = load_run(FORMATS / "aliases_openrlhf_wandb_history.jsonl")
    _check_openrlhf(run)
    assert run.metrics["heldout_reward"][run.steps == 10][0] == pytest.approx(0.302089)


def test_openrlhf_wandb_history_csv():
    run = load_run(FORMATS / "aliases_openrlhf_wandb_history_export.csv")
    _check_openrlhf(run)
    assert not any("dropped" in w for w in run.warnings)


def test_openrlhf_tensorboard(tmp_path):
    pytest.importorskip("tensorboard")
    from tensorboard.compat.proto import event_pb2, summary_pb2
    from tensorboard.summary.writer.event_file_writer import EventFileWriter

    writer = EventFileWriter(str(tmp_path))
    history = [json.loads(line) for line in
               (FORMATS / "aliases_openrlhf_wandb_history.jsonl").read_text().splitlines()]
    for record in history:
        step = record.get("train/global_step", record.get("eval/global_step"))
        values = [summary_pb2.Summary.Value(tag=k, simple_value=v) for k, v in record.items()
                  if not k.startswith("_") and not k.endswith("global_step")]
        writer.add_event(event_pb2.Event(wall_time=1.0 + step, step=int(step),
                                         summary=summary_pb2.Summary(value=values)))
    writer.close()
    _check_openrlhf(load_run(tmp_path))


def test_openrlhf_names():
    assert resolve("entropy", {"train/entropy_loss"}, "openrlhf") == "train/entropy_loss"
    assert resolve("clipped_share", {"train/rollout/truncated_rate"}) \
        == "train/rollout/truncated_rate"
    assert resolve("heldout_reward", {"eval_gsm8k_pass1"}, "openrlhf") == "eval_gsm8k_pass1"
    # pass@k is the best of k samples, not a mean reward
    assert resolve("heldout_reward", {"eval/eval_gsm8k_pass8"}, "openrlhf") is None


# ---------------------------------------------------------------- rows of a W&B table


def test_wandb_table_evaluation_and_closing_rows_are_said_as_such():
    run = load_run(FORMATS / "aliases_trl_wandb_history_export.csv")
    assert not any("dropped" in w for w in run.warnings)
    assert any("2 rows hold only evaluation metrics" in w and "held-out reward" in w
               for w in run.warnings)
    assert any("1 row holds only the step and the epoch" in w for w in run.warnings)
    held = run.metrics["heldout_reward"]
    assert list(run.steps[np.isfinite(held)]) == [25, 50]
