"""G and B from the granularity of a TRL log whose total reward weighs several reward functions.

Data: excerpts (steps 1-60) of logs written with TRL's and transformers' own classes, in
tests/data/formats/infer_*: B = 8 prompts x G = 8 completions, reward_weights [1.0, 0.1]
(a 0/1 accuracy reward and a 0/1 format reward).
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from grpodyn.empirical.logs.loaders import load_run

FORMATS = Path(__file__).parent / "data" / "formats"
WEIGHTED = FORMATS / "infer_trl_weighted_rewards"


def _group_note(run) -> str:
    notes = [w for w in run.warnings if w.startswith("group size G: not determined")]
    assert len(notes) == 1, run.warnings
    return notes[0]


@pytest.mark.parametrize("path", [WEIGHTED, FORMATS / "infer_trl_weighted_history_export.csv"])
def test_weighted_total_reward_gives_no_group_size(path: Path) -> None:
    """TRL's reward sums reward_weights x rewards/<func>/mean: its 1/640 is not 1/(B G)."""
    run = load_run(path)
    assert run.meta.group_size is None
    # the zero-std share counts prompts whatever the weights: B stays
    assert (run.meta.batch.value, run.meta.batch.source) == (8, "inferred")
    note = _group_note(run)
    assert "not a mean of 0/1 rewards" in note and "reward_weights" in note
    assert "--group-size" in note and "--reward-key" in note


def test_one_binary_reward_function_gives_group_size() -> None:
    """Read as the reward, a 0/1 reward function's mean gives B G; the total's std is not its."""
    run = load_run(WEIGHTED, reward_key="rewards/accuracy_reward/mean")
    assert (run.meta.group_size.value, run.meta.group_size.source) == (8, "inferred")
    assert run.meta.batch.value == 8
    assert "multiple of 1/64" in run.meta.group_size.evidence


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


def test_weighted_total_of_synthetic_functions_gives_no_group_size(tmp_path: Path) -> None:
    """Weights 1 and 0.1 of two 0/1 functions: B G is not read from the total."""
    run = load_run(_write_state(tmp_path, _binary_history(prompts=8, group=4,
                                                          weights=(1.0, 0.1))))
    assert run.meta.group_size is None and run.meta.batch.value == 8
    assert "not a mean of 0/1 rewards" in _group_note(run)
