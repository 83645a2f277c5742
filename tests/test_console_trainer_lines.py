"""Trainer console lines that carry their own step: OpenRLHF's ``Global step N: {...}`` records
and evaluations; verl's ``Total training steps: N``."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from grpodyn.empirical.logs.loaders import load_run, load_runs
from grpodyn.empirical.logs.text import parse_text

FORMATS = Path(__file__).parent / "data" / "formats"
#: An OpenRLHF GRPO console (ray PPO trainer): 20 global steps, each with the micro-batch
#: ``Train epoch`` bar (8 updates) before its ``Global step`` line, evaluations at 10 and 20.
OPENRLHF = FORMATS / "console_openrlhf_global_steps.log"
#: A verl console under Ray: its printed config, ``Total training steps: 870``, steps 0-12.
VERL = FORMATS / "console_verl_total_steps.log"


def _printed(path: Path, pattern: str) -> dict[int, dict]:
    """The dicts a console prints after ``pattern`` (a regex with the step as its group)."""
    out = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        match = re.search(pattern + r"(\{.*\})$", line)
        if match:
            out[int(match.group(1))] = ast.literal_eval(match.group(2))
    return out


def _no_bars(tmp_path: Path) -> Path:
    lines = OPENRLHF.read_text(encoding="utf-8").splitlines()
    path = tmp_path / "console_no_bars.log"
    path.write_text("\n".join(line for line in lines if "Train epoch" not in line
                              and "Episode [" not in line) + "\n", encoding="utf-8")
    return path


def test_openrlhf_global_step_dicts_are_the_records_at_their_own_steps():
    parsed = parse_text(OPENRLHF, OPENRLHF.read_text(encoding="utf-8"))
    assert parsed.format == "openrlhf_console" and not parsed.steps_reconstructed
    rows = parsed.runs[""]
    assert [step for step, _ in rows] == [float(s) for s in range(1, 21)]  # not 1-160
    printed = _printed(OPENRLHF, r"Global step (\d+): ")
    for step, entry in rows:
        for name in ("policy_loss", "actor_lr", "entropy_loss", "kl", "reward",
                     "response_length", "response_clip_ratio", "rollout/truncated_rate"):
            assert entry[name] == printed[int(step)][name]
    assert any("'Train epoch [*]'" in note and "not read as steps" in note
               for note in parsed.notes)


def test_openrlhf_evaluations_join_the_global_step_they_name():
    parsed = parse_text(OPENRLHF, OPENRLHF.read_text(encoding="utf-8"))
    evals = _printed(OPENRLHF, r"global_step (\d+), eval_metrics: ")
    assert sorted(evals) == [10, 20]
    rows = dict(parsed.runs[""])
    for step, metrics in evals.items():
        assert rows[float(step)]["eval_gsm8k_pass1"] == metrics["eval_gsm8k_pass1"]
        assert rows[float(step)]["reward"] is not None  # the training record of that step
    assert "eval_gsm8k_pass1" not in rows[9.0]
    assert any("2 evaluation records" in note for note in parsed.notes)


def test_openrlhf_console_without_progress_bars_is_read(tmp_path):
    path = _no_bars(tmp_path)
    parsed = parse_text(path, path.read_text(encoding="utf-8"))
    with_bars = parse_text(OPENRLHF, OPENRLHF.read_text(encoding="utf-8"))
    assert parsed.runs == with_bars.runs
    assert not any("progress bar" in note for note in parsed.notes)


def test_openrlhf_global_steps_loaded_with_their_metrics():
    run = load_run(OPENRLHF)
    assert list(run.steps) == list(range(1, 21)) and not run.steps_reconstructed
    assert run.metric_keys["reward"] == "reward"
    assert run.metric_keys["kl"] == "kl"
    assert run.metric_keys["learning_rate"] == "actor_lr"
    assert run.metric_keys["completion_length"] == "response_length"


def test_openrlhf_global_step_restarting_at_one_is_a_new_run(tmp_path):
    lines = [f"(PPOTrainer pid=1) INFO 06-01 12:00:00 ppo_trainer.py:366] ✨ Global step {s}: "
             f"{{'policy_loss': 0.01, 'reward': {r / 10 + s / 100}, 'kl': 0.001}}"
             for r in (1, 2) for s in range(1, 13)]
    path = tmp_path / "two.log"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    runs = load_runs(path)
    assert [r.n_points for r in runs] == [12, 12]
    assert runs[1].reward[0] == pytest.approx(0.21)


def test_verl_total_training_steps_is_the_planned_length():
    parsed = parse_text(VERL, VERL.read_text(encoding="utf-8"))
    assert parsed.format == "verl_console"
    planned = parsed.meta.planned_steps
    assert planned is not None and planned.value == 870 and planned.source == "inferred"
    assert "Total training steps: 870" in planned.evidence


@pytest.mark.parametrize("total", ["-1", "0"])
def test_verl_total_training_steps_not_positive_is_no_planned_length(tmp_path, total):
    text = VERL.read_text(encoding="utf-8").replace("Total training steps: 870",
                                                   f"Total training steps: {total}")
    parsed = parse_text(tmp_path / "verl.log", text)
    assert parsed.meta.planned_steps is None
    assert any(f"Total training steps: {total}" in note and "not a planned length" in note
               for note in parsed.notes)


def test_verl_total_training_steps_that_differ_between_runs_are_not_read(tmp_path):
    run = VERL.read_text(encoding="utf-8")
    text = run + run.replace("Total training steps: 870", "Total training steps: 500")
    parsed = parse_text(tmp_path / "verl.log", text)
    assert len(parsed.runs) == 2 and parsed.meta.planned_steps is None
    assert any("870, 500" in note for note in parsed.notes)
