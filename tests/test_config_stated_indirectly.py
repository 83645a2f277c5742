"""Settings stated indirectly: a warm-up as a share of the planned steps, verl's KL switches.

A warm-up given as a share of the planned steps becomes steps, as transformers computes it:
transformers reads ``warmup_steps`` below 1 as that share of the training steps (ceil), and an
older config's ``warmup_ratio`` wherever ``warmup_steps`` is 0; read as a count, 0.1 was a
warm-up of 0.1 steps. A console that prints both of verl's KL switches is read with both.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from grpodyn.empirical.logs.loaders import load_run


def _run(folder: Path, **settings: float) -> Path:
    folder.mkdir()
    rows = [{"step": s, "reward": 0.2 + s / 500, "learning_rate": 1e-6} for s in range(1, 61)]
    (folder / "trainer_state.json").write_text(json.dumps({"log_history": rows}))
    (folder / "training_args.json").write_text(json.dumps(settings))
    return folder / "trainer_state.json"


@pytest.mark.parametrize(("settings", "steps"), [
    ({"warmup_steps": 0.1, "max_steps": 200}, 20),
    ({"warmup_steps": 0.05, "max_steps": 130}, 7),
    ({"warmup_steps": 0, "warmup_ratio": 0.05, "max_steps": 100}, 5),
    ({"warmup_steps": 12, "warmup_ratio": 0.05, "max_steps": 100}, 12),
    ({"warmup_steps": 0, "warmup_ratio": 0.0, "max_steps": 100}, 0),
])
def test_a_share_of_the_planned_steps_is_turned_into_steps(tmp_path, settings, steps):
    run = load_run(_run(tmp_path / "run", **settings))
    assert run.meta.value("warmup_steps") == steps


def test_a_share_without_a_planned_length_is_left_unset_with_a_note(tmp_path):
    run = load_run(_run(tmp_path / "run", warmup_steps=0.1, max_steps=-1))
    assert run.meta.warmup_steps is None or run.meta.warmup_steps.source == "inferred"
    assert any("warm-up is not turned into steps" in w for w in run.warnings), run.warnings


def test_a_console_that_prints_both_kl_switches_is_read_with_both(tmp_path):
    """Hydra overrides printed on a console: both KL terms off, so no KL term at all.

    Read with the loss's switch alone, the reward's term counted as on (verl before its own
    switch), and its coefficient was taken.
    """
    lines = ["actor_rollout_ref.actor.use_kl_loss=False algorithm.use_kl_in_reward=False "
             "algorithm.kl_ctrl.kl_coef=0.002 actor_rollout_ref.actor.kl_loss_coef=0.05"]
    lines += [f"step:{s} - critic/score/mean:{0.2 + s / 200:.3f}" for s in range(1, 41)]
    path = tmp_path / "verl.log"
    path.write_text("\n".join(lines) + "\n")
    run = load_run(path)
    assert run.meta.value("kl") == 0, run.meta.kl
