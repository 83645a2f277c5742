"""``heldout_key`` (``--heldout-key``) names the held-out reward where the trainer's names do not.

A custom loop that logs its validation score as ``accuracy`` beside a training ``mean_reward``:
without the key the diagnosis says the log has no held-out reward; with it, hacking is judged.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

from grpodyn.empirical.diagnostics.diagnose import diagnose
from grpodyn.empirical.logs.common import LogFormatError
from grpodyn.empirical.logs.loaders import load_run

from .test_cli_input import _error


@pytest.fixture
def log(tmp_path):
    """A proxy reward that rises while the validation accuracy falls (every 5th step)."""
    rng = np.random.default_rng(0)
    rows = []
    for step in range(1, 201):
        row = {"step": step, "mean_reward": 0.2 + 0.6 * (1 - np.exp(-step / 40))
               + rng.normal(0, 0.03)}
        if step % 5 == 0:
            row["accuracy"] = 0.5 - 0.3 * (1 - np.exp(-step / 40)) + rng.normal(0, 0.02)
        rows.append(row)
    path = tmp_path / "custom.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def test_the_key_makes_the_metric_the_held_out_reward(log):
    assert "heldout_reward" not in load_run(log).metrics
    run = load_run(log, heldout_key="accuracy")
    assert run.metric_keys["heldout_reward"] == "accuracy"
    held = run.metrics["heldout_reward"]
    assert np.isfinite(held).sum() == 40 and np.isnan(held[0])
    d = diagnose(run)
    assert d.modes["reward_hacking"].judged and d.primary == "reward_hacking"
    assert not diagnose(load_run(log)).modes["reward_hacking"].judged


def test_a_key_the_log_lacks_or_the_reward_itself_is_refused(log):
    with pytest.raises(LogFormatError, match="no metric 'eval_acc' .* metrics present"):
        load_run(log, heldout_key="eval_acc")
    with pytest.raises(LogFormatError, match="is the metric read as the reward"):
        load_run(log, heldout_key="mean_reward")


@pytest.mark.parametrize("command", [["diagnose"], ["runs"], ["advise", "--log"], ["fit"]])
def test_the_cli_refuses_a_missing_key_in_one_line(log, capsys, command):
    err = _error([*command, str(log), "--heldout-key", "eval_acc"], capsys)
    assert "no metric 'eval_acc' (heldout_key=, --heldout-key)" in err


def test_in_a_log_of_several_runs_a_run_without_the_key_keeps_its_reward(log, tmp_path):
    """A folder of two runs, one without the held-out metric: both load, one says why."""
    folder = tmp_path / "runs"
    folder.mkdir()
    (folder / "a.jsonl").write_text(log.read_text())
    (folder / "b.jsonl").write_text("".join(
        json.dumps({"step": s, "mean_reward": 0.1 + 0.001 * s}) + "\n" for s in range(1, 60)))
    from grpodyn.empirical.logs.loaders import load_runs

    runs = {r.run_name: r for r in load_runs(folder, heldout_key="accuracy")}
    assert set(runs) == {"a", "b"}
    assert runs["a"].metric_keys["heldout_reward"] == "accuracy"
    assert "heldout_reward" not in runs["b"].metrics
    assert any(w.startswith("no metric 'accuracy'") for w in runs["b"].warnings)
    with pytest.raises(LogFormatError, match="no metric 'acc' .* metrics present"):
        load_runs(folder, heldout_key="acc")


def test_a_named_validation_set_is_read_alone(tmp_path):
    """verl's several validation sets are averaged, unless one is named."""
    path = tmp_path / "verl.jsonl"
    rows = [{"step": s, "critic/score/mean": 0.2 + 0.002 * s,
             "val-core/math/reward/mean@1": 0.3, "val-core/gsm8k/reward/mean@1": 0.7}
            for s in range(1, 60)]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    mean = load_run(path)
    assert np.nanmean(mean.metrics["heldout_reward"]) == pytest.approx(0.5)
    math_only = load_run(path, heldout_key="val-core/math/reward/mean@1")
    assert np.nanmean(math_only.metrics["heldout_reward"]) == pytest.approx(0.3)
    assert not any("validation sets" in w for w in math_only.warnings)
