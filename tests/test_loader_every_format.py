"""What the loader does for every format: validation sets averaged, a config's open settings said.

Several validation sets give one held-out reward, their mean, in every format that logs them:
verl logs ``val-core/<data_source>/reward/mean@N`` once per validation set, in its console as in
its JSONL, W&B and TensorBoard logs: reading one set (the first by name) as the held-out reward
judged a run by that set alone. A log's own config record that leaves a setting open (verl's two
KL terms both on) says so in the run's warnings, as a config file beside the log does.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from grpodyn.empirical.logs.loaders import load_run


def _console(path: Path) -> Path:
    lines = []
    for step in range(1, 41):
        score = 0.3 + 0.4 * (1 - np.exp(-step / 10))
        fields = [f"step:{step}", f"critic/score/mean:{score:.4f}",
                  "actor/lr:np.float64(1e-06)"]
        if step % 10 == 0:
            fields += ["val-core/aime24/reward/mean@1:0.1",
                       f"val-core/openai/gsm8k/reward/mean@1:{0.2 + step / 100:.2f}"]
        lines.append("(TaskRunner pid=1) " + " - ".join(fields))
    path.write_text("\n".join(lines) + "\n")
    return path


def test_a_verl_console_averages_its_validation_sets(tmp_path):
    run = load_run(_console(tmp_path / "verl_console.log"))
    held = run.metrics["heldout_reward"]
    steps = run.steps[np.isfinite(held)]
    assert list(steps) == [10, 20, 30, 40]
    assert np.allclose(held[np.isfinite(held)], [(0.1 + 0.2 + s / 100) / 2 for s in steps])
    assert any("mean of 2 validation sets" in w for w in run.warnings), run.warnings


def test_a_log_whose_own_config_turns_on_both_kl_terms_says_so(tmp_path):
    """verl with use_kl_loss and use_kl_in_reward both on: no one KL coefficient, and a note."""
    path = tmp_path / "verl.jsonl"
    config = ('{"actor_rollout_ref": {"actor": {"use_kl_loss": true, "kl_loss_coef": 0.01}}, '
              '"algorithm": {"use_kl_in_reward": true, "kl_ctrl": {"kl_coef": 0.001}}}')
    rows = [f'{{"step": {s}, "critic/score/mean": {0.2 + s / 100}}}' for s in range(1, 31)]
    path.write_text(f'{{"type": "config", "config": {config}}}\n' + "\n".join(rows) + "\n")
    run = load_run(path)
    assert run.meta.kl is None
    assert any("both KL terms are on" in w for w in run.warnings), run.warnings
