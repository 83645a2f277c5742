"""Fused kernels (numba), optional: the same operations in one pass, no temporaries.

numba is an optional dependency (``pip install grpodyn[fast]``). Without it, or with
``GRPODYN_NO_NUMBA=1`` in the environment, or with :data:`ENABLED` set to False (tests do this),
every caller takes its numpy path; both give the same bits (tested both ways). numba is imported
and the kernels compiled on first use only (``numerics/_fast_kernels.py``, compiled code cached
on disk), so ``import grpodyn.numerics`` never pays for it.

Kernels
-------
- :func:`two_arm_gradient`: the on-policy GRPO gradient of the two-arm bandit for every seed
  (docs/theory.md section 8), used by ``empirical.bandit.simulate_bandit`` on long runs;
  :func:`two_arm_sgd_kernel` adds the heavy-ball step (the simulator's whole inner loop but the
  binomial draws and the sigmoid, which stay numpy's so the random stream and bits are kept).

The oscillator's closed-form trajectory has no kernel here: a numba loop measured 0.76x the
hand-written numpy (scalar libm exponentials, no SIMD), where numpy's in-place forms evaluated
block by block reach 3-4x (``numerics.trajectory``).
"""

from __future__ import annotations

import importlib.util
import os
from collections.abc import Callable
from functools import cache

import numpy as np

__all__ = ["ENABLED", "MAX_PROMPTS", "BLOCK", "two_arm_gradient", "two_arm_sgd_kernel",
           "sigmoid_kernel"]

#: numba present and not switched off by GRPODYN_NO_NUMBA; tests monkeypatch it.
ENABLED: bool = (importlib.util.find_spec("numba") is not None
                 and os.environ.get("GRPODYN_NO_NUMBA", "") in ("", "0"))

#: Most groups per seed of :func:`two_arm_gradient` (one block of numpy's pairwise sum).
MAX_PROMPTS = 128


@cache
def _kernels() -> object:
    """Import the compiled kernels module (imports numba; compiled code cached on disk)."""
    from . import _fast_kernels

    return _fast_kernels


#: The rows of the metrics block of :func:`two_arm_gradient`: three of TRL's metrics, then the
#: clipped and the raw success probability (from which the caller forms kl and entropy).
BLOCK = ("reward", "reward_std", "frac_reward_zero_std", "p_clipped", "p")


def two_arm_gradient(x: np.ndarray, probs: np.ndarray, wins: np.ndarray,
                     win_terms: np.ndarray, loss_terms: np.ndarray, group_size: int, *,
                     p_ref: float, kl: float, forward: bool, x_ref: float
                     ) -> tuple[np.ndarray, np.ndarray]:
    """Compute the on-policy two-arm GRPO gradient and metrics of every seed (numba).

    The gradient takes the same operations in the same order as
    ``empirical.bandit._TwoArmEngine.gradient`` (the sum over a seed's groups is numpy's
    pairwise summation), so it has the same bits and runs follow the same paths; so do the
    metrics (no logarithm here: the caller forms kl and entropy with numpy).
    At most :data:`MAX_PROMPTS` groups per seed (numpy splits longer sums recursively).

    Parameters
    ----------
    x, probs : numpy.ndarray
        Logit gap and success probability sigmoid(x) per seed.
    wins : numpy.ndarray
        Successes per seed and group, (seeds, prompts) integers.
    win_terms, loss_terms : numpy.ndarray
        S a_win(S) and (G - S) a_loss(S) tabulated over S = 0..G.
    group_size : int
        G, completions per group.
    p_ref, kl, forward, x_ref
        Reference policy, KL coefficient, the exact forward KL (True) or TRL's k3, reference gap.

    Returns
    -------
    grad : numpy.ndarray
        Ascent direction of x per seed.
    block : numpy.ndarray
        (5, seeds): the rows :data:`BLOCK`.
    """
    seeds, prompts = wins.shape
    if prompts > MAX_PROMPTS:
        raise ValueError(f"two_arm_gradient: at most {MAX_PROMPTS} prompts, got {prompts}")
    grad, block = np.empty(seeds), np.empty((len(BLOCK), seeds))
    _kernels().two_arm_gradient_loop(np.ascontiguousarray(x, dtype=float),
                                     np.ascontiguousarray(probs, dtype=float),
                                     np.ascontiguousarray(wins, dtype=np.int64),
                                     win_terms, loss_terms, int(group_size), float(p_ref),
                                     float(kl), bool(forward), float(x_ref), grad, block,
                                     np.empty(prompts))
    return grad, block


def two_arm_sgd_kernel(*, one_group: bool = False) -> Callable[..., None]:
    """Return the compiled in-place step: :func:`two_arm_gradient`, heavy-ball SGD, logit clip.

    For the simulator's inner loop (no argument checks: the caller passes contiguous
    float64 arrays, int64 wins and a (5, seeds) block, rows :data:`BLOCK`).

    Parameters
    ----------
    one_group : bool
        One group per seed (``prompts == 1``): the single-pass step, with the same arguments
        less the ``grad`` and ``policy`` scratch vectors, plus a vector that receives -x (the
        same bits, about 1.5x faster).

    Returns
    -------
    callable
        The numba kernel.
    """
    return _kernels().two_arm_sgd_step_single if one_group else _kernels().two_arm_sgd_step


def sigmoid_kernel() -> Callable[..., None]:
    """Return the compiled end of the one-group step's sigmoid.

    ``(exp_negated, probs, state, state_row, probs_row)``: p = 1 / (1 + exp(-x)) from numpy's
    exp(-x), and x and p copied into the recorded rows (no argument checks).
    """
    return _kernels().sigmoid_from
