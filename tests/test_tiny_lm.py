"""A short real GRPO run with TRL on the tiny local model (keeps the real-run path alive)."""

from __future__ import annotations

import re

import pytest

from grpodyn.empirical.tinylm.training import TASK_FAMILIES, make_prompts


def _value(expression: str) -> int:
    """Integer value of a prompt like '12+3+4', '7-9', '3*4' (no eval: parsed by hand)."""
    if "*" in expression:
        left, right = expression.split("*")
        return int(left) * int(right)
    total, sign, number = 0, 1, ""
    for char in expression + "+":
        if char.isdigit():
            number += char
        else:
            total += sign * int(number)
            number, sign = "", (1 if char == "+" else -1)
    return total


@pytest.mark.parametrize("family", list(TASK_FAMILIES))
def test_task_families_are_correct(family):
    for prompt, answer in make_prompts(family, 50, seed=1):
        assert re.fullmatch(r"[0-9+\-*]+==?", prompt), prompt
        assert int(answer) == _value(prompt.rstrip("=")), (prompt, answer)
    with pytest.raises(ValueError, match="unknown task family"):
        make_prompts("division", 1, 0)


def test_short_real_grpo_run(tmp_path):
    pytest.importorskip("trl")
    from grpodyn.empirical.logs.loaders import load_run
    from grpodyn.empirical.tinylm.training import (
        GRPORunSettings,
        build_model,
        build_tokenizer,
        run_grpo,
        warm_up,
        write_trainer_state,
    )

    tokenizer = build_tokenizer()
    model = build_model(seed=0)
    warm = warm_up(model, tokenizer, band=(0.0, 1.0), max_steps=10)
    assert warm["steps"] == 10
    settings = GRPORunSettings(group_size=4, prompts_per_step=2, steps=6, seed=0)
    result = run_grpo(model, tokenizer, settings, output_dir=tmp_path / "run",
                      checkpoint_steps=(0, 6))
    assert len(result["log_history"]) == 6 and set(result["checkpoints"]) == {0, 6}
    path = write_trainer_state(result, tmp_path / "trainer_state.json")
    run = load_run(path)
    assert run.n_points == 6
    assert {"reward_std", "frac_reward_zero_std", "entropy"} <= set(run.metrics)
    assert all(0 <= r <= 1 for r in run.reward)
