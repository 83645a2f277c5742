"""Support shared by the deep-network tests (imported only where torch is present)."""

from __future__ import annotations

import pytest
import torch

from grpodyn.empirical.deepnet import grpo, measure
from grpodyn.empirical.tinylm.training import build_model, build_tokenizer


def score_half_of_every_group(monkeypatch: pytest.MonkeyPatch) -> None:
    """Make measure's sampled batches score [1, 0, 0, 1] in every group of 4.

    The untrained model scores 0 everywhere, which leaves no update direction to measure.
    """
    sampler = measure.sample_batch

    def scored(*args: object, **kwargs: object) -> grpo.Batch:
        batch = sampler(*args, **kwargs)
        batch.rewards = torch.tensor([1.0, 0, 0, 1] * (batch.rewards.numel() // 4))
        return batch

    monkeypatch.setattr(measure, "sample_batch", scored)


def untrained_70k() -> tuple:
    """Build an untrained 70k model (eager attention, one thread) and the tokenizer."""
    torch.set_num_threads(1)
    model = build_model(seed=3, **grpo.SIZES["70k"])
    model.set_attn_implementation("eager")
    return model, build_tokenizer()
