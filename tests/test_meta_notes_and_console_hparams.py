"""The loader's reason that G and B are open is data, and a console's printed G and KL are read.

Where a log determines neither the group size G nor the batch B, ``run.meta`` keeps the reason,
the note says it, and the note beside a G or B the user gives is rebuilt from that reason, not
from the note's text. A custom console that prints its G or KL coefficient in a setting line
(``num_generations: 8``, ``kl_coef=0.001``) gives them to ``run.meta`` under the names the config
files use, with the evidence of a printed line; a bare ``beta`` (Adam's, an EMA's) and Adam's
betas are never read as the KL's beta, nor a KL loss coefficient printed with the loss off.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from grpodyn.empirical.logs.infer import group_batch_notes
from grpodyn.empirical.logs.loaders import load_run
from grpodyn.empirical.logs.meta import META_FIELDS

REASON = "no common denominator up to 4096"
NOTE = f"group size G and batch B: not determined ({REASON})"


def _console(tmp_path: Path, header: list[str], n: int = 30) -> Path:
    """A console log: ``header`` lines, then one TRL-style dict per step, rewards on no grid."""
    rng = np.random.default_rng(1)
    rows = [f"{{'step': {i + 1}, 'loss': 0.1, 'reward': {0.3 + 0.05 * rng.random():.4f}}}"
            for i in range(n)]
    path = tmp_path / "train.log"
    path.write_text("\n".join([*header, *rows]) + "\n")
    return path


def test_the_reason_g_and_b_are_open_is_kept_as_data(tmp_path):
    run = load_run(_console(tmp_path, []))
    assert run.meta.group_batch_reason == REASON
    assert NOTE in run.warnings
    assert "group_batch_reason" not in META_FIELDS
    assert "group_batch_reason" not in run.meta.to_dict()
    assert run.meta.with_overrides(group_size=8).group_batch_reason == REASON


def test_the_note_beside_a_users_g_is_rebuilt_from_the_reason(tmp_path):
    run = load_run(_console(tmp_path, []))
    other = "group size G and batch B: not determined (a note of another reader)"
    run.warnings.append(other)
    run.meta = run.meta.with_overrides(group_size=8)
    notes = group_batch_notes(run)
    assert f"group size G = 8 (source: user); batch B: not determined ({REASON})" in notes
    assert NOTE not in notes and other in notes  # only the loader's own note is rewritten


@pytest.mark.parametrize(("line", "key", "value"), [
    ("num_generations: 8", "num_generations", 8),
    ("  group_size=8", "group_size", 8),
    ("n_samples_per_prompt = 8", "n_samples_per_prompt", 8),
    ("Namespace(model='q', num_generations=8, learning_rate=1e-06)", "num_generations", 8),
    ("actor_rollout_ref.rollout.n=8", "actor_rollout_ref.rollout.n", 8),
    ("+actor_rollout_ref.rollout.n=8", "actor_rollout_ref.rollout.n", 8),
    ("python train.py --num_generations=8 --lr 1e-6", "num_generations", 8),
])
def test_a_printed_group_size_is_read(tmp_path, line, key, value):
    run = load_run(_console(tmp_path, ["config:", line]))
    assert run.meta.group_size is not None and run.meta.group_size.value == value
    assert run.meta.group_size.source == "file:train.log"
    assert run.meta.group_size.evidence == f"{key} in a line the console printed"
    assert run.meta.group_batch_reason is None


@pytest.mark.parametrize(("line", "key", "value"), [
    ("kl_coef=0.001", "kl_coef", 0.001),
    ("Using kl_coef=0.001.", "kl_coef", 0.001),
    ("init_kl_coef = 1e-2", "init_kl_coef", 0.01),
    ("kl_beta: 0.1,", "kl_beta", 0.1),
])
def test_a_printed_kl_coefficient_is_read(tmp_path, line, key, value):
    run = load_run(_console(tmp_path, ["== settings ==", line, "training starts"]))
    assert run.meta.kl is not None and run.meta.kl.value == pytest.approx(value)
    assert run.meta.kl.source == "file:train.log"
    assert run.meta.kl.evidence == f"{key} in a line the console printed"


def test_adams_betas_are_not_the_kl_beta(tmp_path):
    header = ["betas: (0.9, 0.999)", "adam_beta1: 0.9", "beta1 = 0.9", "adam_beta2=0.999",
              "optimizer: AdamW(betas=(0.9, 0.95))", "Optimizer: Adam, beta: 0.9",
              "model.ema.beta: 0.999"]
    run = load_run(_console(tmp_path, header))
    assert run.meta.kl is None


def test_a_kl_loss_coefficient_with_the_loss_off_is_not_read(tmp_path):
    line = ("actor_rollout_ref.actor.use_kl_loss=False "
            "actor_rollout_ref.actor.kl_loss_coef=0.001")
    assert load_run(_console(tmp_path, [line])).meta.kl is None
    on = tmp_path / "on"
    on.mkdir()
    run = load_run(_console(on, [line.replace("False", "True")]))
    assert run.meta.kl is not None and run.meta.kl.value == pytest.approx(0.001)


def test_a_setting_printed_with_two_values_is_not_read(tmp_path):
    run = load_run(_console(tmp_path, ["kl_coef=0.001", "num_generations: 8",
                                       "kl_coef=0.002"]))
    assert run.meta.kl is None
    assert run.meta.value("group_size") == 8
    assert any(w.startswith("kl_coef printed with 2 values (0.001, 0.002)")
               for w in run.warnings)
