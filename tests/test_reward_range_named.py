"""A reward whose name reads as a rate but whose values leave [0, 1] has no inferred range.

TRL sums its reward functions into the logged reward (``rewards/correctness_reward/mean +
rewards/format_reward/mean`` reaches 1.54), and an accuracy may be logged in percent: the name
alone set [0, 1], and every forecast was clipped to a range the data leave.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from grpodyn.cli import main
from grpodyn.empirical.logs.loaders import load_run
from grpodyn.empirical.logs.run_analysis import infer_reward_range

DATA = Path(__file__).parent / "data" / "formats" / "trl_run"


def _percent_log(tmp_path: Path) -> Path:
    steps = np.arange(1, 81)
    accuracy = 30 + 40 * (1 - np.exp(-steps / 30)) + np.random.default_rng(2).normal(0, 2, 80)
    path = tmp_path / "metrics.jsonl"
    path.write_text("".join(json.dumps({"step": int(s), "accuracy": float(a)}) + "\n"
                            for s, a in zip(steps, accuracy, strict=True)))
    return path


def test_a_named_rate_outside_zero_one_has_no_range_and_says_why(tmp_path):
    for run in (load_run(DATA), load_run(_percent_log(tmp_path))):
        bounds, why = infer_reward_range(run)
        assert bounds is None
        assert f"the reward's name {run.reward_key!r} reads as a rate in [0, 1]" in why
        assert "lie outside it" in why and "declare reward_range= (--reward-range)" in why


def test_a_named_rate_inside_zero_one_keeps_its_range(tmp_path):
    run = load_run(_percent_log(tmp_path))
    run.reward = run.reward / 100
    assert infer_reward_range(run) == ((0.0, 1.0),
                                       f"inferred from the reward's name {run.reward_key!r}")


def test_the_summed_trl_reward_is_forecast_unclipped(capsys):
    assert main(["forecast", str(DATA), "--train-fraction", "0.7", "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["reward_range"] is None and max(result["upper"]) > 1
