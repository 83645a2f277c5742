"""Several validation sets give one held-out reward, their mean, in every format that logs them.

verl logs ``val-core/<data_source>/reward/mean@N`` once per validation set, in its console as in
its JSONL, W&B and TensorBoard logs: reading one set (the first by name) as the held-out reward
judged a run by that set alone.
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
