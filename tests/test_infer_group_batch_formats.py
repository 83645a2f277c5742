"""G and B from the granularity of a TRL log, where the total reward weighs several reward
functions and where the settings count the batch of one process of several.

Data: excerpts (steps 1-60) of logs written with TRL's and transformers' own classes, in
tests/data/formats/infer_*: B = 8 prompts x G = 8 completions, reward_weights [1.0, 0.1]
(a 0/1 accuracy reward and a 0/1 format reward); the 4-process run gathers 32 prompts a step
while its training_args.bin gives per_device_train_batch_size 16 x gradient_accumulation_steps 4
for num_generations 8.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest

from grpodyn.empirical.logs.loaders import load_run

FORMATS = Path(__file__).parent / "data" / "formats"
WEIGHTED = FORMATS / "infer_trl_weighted_rewards"
FOUR_PROCESSES = FORMATS / "infer_trl_4gpu_checkpoint"


def _group_note(run) -> str:
    notes = [w for w in run.warnings if w.startswith("group size G: not determined")]
    assert len(notes) == 1, run.warnings
    return notes[0]


@pytest.mark.parametrize("path", [WEIGHTED, FORMATS / "infer_trl_weighted_history_export.csv"])
def test_weighted_total_reward_gives_group_size_from_its_binary_function(path: Path) -> None:
    """TRL's reward sums reward_weights x rewards/<func>/mean: its 1/640 is not 1/(B G), the
    0/1 accuracy function's 1/64 is."""
    run = load_run(path)
    assert (run.meta.group_size.value, run.meta.group_size.source) == (8, "inferred")
    assert "rewards/accuracy_reward/mean" in run.meta.group_size.evidence
    assert "1/64" in run.meta.group_size.evidence and "1/640" not in run.meta.group_size.evidence
    # the zero-std share counts prompts whatever the weights: B stays
    assert (run.meta.batch.value, run.meta.batch.source) == (8, "inferred")
    assert not any(w.startswith("group size G: not determined") for w in run.warnings)


def test_weighted_total_without_its_functions_gives_no_group_size(tmp_path: Path) -> None:
    """The total alone: its granularity is not 1/(B G), and no function's mean is logged."""
    history = [{k: v for k, v in entry.items() if not k.startswith("rewards/")}
               for entry in _binary_history(prompts=8, group=4, weights=(1.0, 0.1))]
    run = load_run(_write_state(tmp_path, history))
    assert run.meta.group_size is None and run.meta.batch.value == 8
    note = _group_note(run)
    assert "not a mean of 0/1 rewards" in note and "reward_weights" in note
    assert "--group-size" in note and "--reward-key" in note


def test_one_binary_reward_function_gives_group_size() -> None:
    """Read as the reward, a 0/1 reward function's mean gives B G; the total's std is not its."""
    run = load_run(WEIGHTED, reward_key="rewards/accuracy_reward/mean")
    assert (run.meta.group_size.value, run.meta.group_size.source) == (8, "inferred")
    assert run.meta.batch.value == 8
    assert "multiple of 1/64" in run.meta.group_size.evidence


def test_weighted_total_with_settings_raises_no_conflict(tmp_path: Path) -> None:
    """G from the settings: the weighted total's granularity is no evidence against B G."""
    run = load_run(FOUR_PROCESSES)
    assert not any("1/2560" in w for w in run.warnings)


def _binary_history(*, prompts: int, group: int, steps: int = 60, std: str = "batch",
                    weights: tuple[float, ...] = (1.0,), seed: int = 0) -> list[dict]:
    """TRL log entries of 0/1 reward functions, summed with ``weights`` into ``reward``.

    ``std``: "batch" for TRL 1.x's std of all B G rewards, "groups" for earlier versions'
    mean of the per-group stds.
    """
    rng = np.random.default_rng(seed)
    history = []
    for step in range(1, steps + 1):
        p = rng.uniform(0.05, 0.95, size=prompts)
        functions = [rng.random((prompts, group)) < p[:, None] for _ in weights]
        total = sum(w * f for w, f in zip(weights, functions, strict=True))
        spread = (float(np.mean(total.std(axis=1, ddof=1))) if std == "groups"
                  else float(total.std(ddof=1)))
        entry = {"step": step, "reward": float(total.mean()), "reward_std": spread,
                 "frac_reward_zero_std": float(np.mean(total.std(axis=1) == 0)),
                 "learning_rate": 1e-6}
        for i, f in enumerate(functions):
            entry[f"rewards/f{i}/mean"] = float(f.mean())
        history.append(entry)
    return history


def _write_state(folder: Path, history: list[dict], settings: dict | None = None) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "trainer_state.json").write_text(json.dumps({"log_history": history}))
    if settings is not None:
        (folder / "training_args.json").write_text(json.dumps(settings))
    return folder


@pytest.mark.parametrize("std", ["batch", "groups"])
def test_binary_total_still_gives_group_size(tmp_path: Path, std: str) -> None:
    """One 0/1 reward function: its reward_std (either TRL version's) fits 0/1 rewards."""
    run = load_run(_write_state(tmp_path, _binary_history(prompts=8, group=4, std=std)))
    assert (run.meta.group_size.value, run.meta.batch.value) == (4, 8)
    assert not any("not determined" in w for w in run.warnings)


def test_weighted_total_of_synthetic_functions_gives_group_size_from_one(tmp_path: Path) -> None:
    """Weights 1 and 0.1 of two 0/1 functions: B G from a function's mean, not the total."""
    run = load_run(_write_state(tmp_path, _binary_history(prompts=8, group=4,
                                                          weights=(1.0, 0.1))))
    assert (run.meta.group_size.value, run.meta.batch.value) == (4, 8)
    assert "rewards/f0/mean" in run.meta.group_size.evidence


ONE_PROCESS = {"num_generations": 4, "per_device_train_batch_size": 8,
               "gradient_accumulation_steps": 4}  # 32 completions / G = 8 prompts a process


def test_settings_batch_of_one_process_gives_way_to_the_log() -> None:
    """4 processes x 8 prompts: the zero-std share is a multiple of 1/32, not of 1/8."""
    run = load_run(FOUR_PROCESSES)
    assert (run.meta.group_size.value, run.meta.group_size.source) == (8,
                                                                       "file:training_args.bin")
    assert (run.meta.batch.value, run.meta.batch.source) == (32, "inferred")
    assert "1/32" in run.meta.batch.evidence and "assuming one process" in run.meta.batch.evidence
    notes = [w for w in run.warnings if w.startswith("batch B:")]
    assert len(notes) == 1 and "32" in notes[0] and "8" in notes[0]
    assert "4 x 8" in notes[0] and "--batch" in notes[0]


def test_state_of_four_processes_without_settings(tmp_path: Path) -> None:
    """No settings beside the log: B from the zero-std share, G from the 0/1 function's mean."""
    shutil.copy(FOUR_PROCESSES / "trainer_state.json", tmp_path / "trainer_state.json")
    run = load_run(tmp_path)
    assert (run.meta.batch.value, run.meta.batch.source) == (32, "inferred")
    assert (run.meta.group_size.value, run.meta.group_size.source) == (8, "inferred")


def test_binary_rewards_of_four_processes_agree_on_the_batch(tmp_path: Path) -> None:
    """Binary total: the reward's 1/128 with G = 4 and the zero-std share's 1/32 both give 32."""
    folder = _write_state(tmp_path, _binary_history(prompts=32, group=4), ONE_PROCESS)
    run = load_run(folder)
    assert (run.meta.batch.value, run.meta.batch.source) == (32, "inferred")
    assert run.meta.group_size.value == 4
    assert any(w.startswith("batch B:") and "4 x 8" in w for w in run.warnings)


def test_settings_batch_that_fits_the_log_stays(tmp_path: Path) -> None:
    folder = _write_state(tmp_path, _binary_history(prompts=8, group=4), ONE_PROCESS)
    run = load_run(folder)
    assert (run.meta.batch.value, run.meta.batch.source) == (8, "inferred")
    assert "assuming one process" in run.meta.batch.evidence
    assert not any(w.startswith("batch B:") for w in run.warnings)


def test_short_log_notes_the_conflict_and_keeps_the_settings(tmp_path: Path) -> None:
    """Ten points do not pin B among the multiples of 32: the conflict is said, nothing taken."""
    folder = _write_state(tmp_path, _binary_history(prompts=32, group=4, steps=10), ONE_PROCESS)
    run = load_run(folder)
    assert run.meta.batch.value == 8
    notes = [w for w in run.warnings if w.startswith("batch B:")]
    assert len(notes) == 1 and "does not fit" in notes[0] and "--batch" in notes[0]
