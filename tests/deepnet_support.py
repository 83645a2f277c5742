"""Support shared by the deep-network tests (imported only where torch is present)."""

from __future__ import annotations

import pytest
import torch

from grpodyn.empirical.deepnet import grpo, measure


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
