"""numba kernels of :mod:`grpodyn.numerics.fast` (imported on first use: it imports numba)."""

from __future__ import annotations

import numba
import numpy as np


@numba.njit(cache=True, nogil=True)
def pairwise_sum(a: np.ndarray, n: int) -> float:
    """Sum a[:n] as numpy's pairwise summation does, for n <= 128.

    One block: the same grouping, so the same bits. Longer sums split recursively in numpy;
    callers keep to n <= 128 (a recursive kernel cannot be cached by numba).
    """
    if n < 8:
        res = 0.0
        for i in range(n):
            res += a[i]
        return res
    r0, r1, r2, r3, r4, r5, r6, r7 = a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7]
    i = 8
    while i < n - (n % 8):
        r0 += a[i]
        r1 += a[i + 1]
        r2 += a[i + 2]
        r3 += a[i + 3]
        r4 += a[i + 4]
        r5 += a[i + 5]
        r6 += a[i + 6]
        r7 += a[i + 7]
        i += 8
    res = ((r0 + r1) + (r2 + r3)) + ((r4 + r5) + (r6 + r7))
    while i < n:
        res += a[i]
        i += 1
    return res


@numba.njit(cache=True, nogil=True)
def clipped_probability(raw: float) -> float:
    """Clip p to [1e-300, 1 - 1e-16], as the numpy engine does before its logarithms."""
    p = raw if raw > 1e-300 else 1e-300
    return p if p < 1.0 - 1e-16 else 1.0 - 1e-16


@numba.njit(cache=True, nogil=True)
def kl_gradient(p: float, s: float, x: float, x_ref: float, p_ref: float,
                forward: bool) -> float:
    """Return the gradient of the KL penalty per unit coefficient (forward: exact; else k3)."""
    if forward:
        return p * (1.0 - p) * (x - x_ref)
    ratio_win, ratio_loss = p_ref / p, (1.0 - p_ref) / (1.0 - p)
    return s * (1.0 - ratio_win) * (1.0 - p) - (1.0 - s) * (1.0 - ratio_loss) * p


@numba.njit(cache=True, nogil=True)
def heavy_ball(x: float, v: float, g: float, momentum: float, lr: float,
               limit: float) -> tuple[float, float]:
    """Return (x, v) after v <- momentum v + g, x <- clip(x + lr v, -limit, limit)."""
    v = momentum * v + g
    x = x + lr * v
    if x < -limit:
        x = -limit
    if x > limit:
        x = limit
    return x, v


@numba.njit(cache=True, nogil=True)
def two_arm_gradient_loop(x: np.ndarray, probs: np.ndarray, wins: np.ndarray,
                           win_terms: np.ndarray, loss_terms: np.ndarray, group_size: int,
                           p_ref: float, kl: float, forward: bool, x_ref: float,
                           grad: np.ndarray, metrics: np.ndarray, policy: np.ndarray) -> None:
    """Compute the on-policy two-arm GRPO gradient of every seed and its metrics block.

    ``metrics`` rows: reward, reward_std, frac_reward_zero_std, then the clipped and the raw p
    (the logarithmic metrics are left to numpy, whose SIMD logarithms are faster and give the
    numpy path's bits). See ``empirical.bandit._TwoArmEngine``: the same operations.
    """
    seeds, prompts = wins.shape
    n = prompts * float(group_size)
    for i in range(seeds):
        raw = probs[i]
        p = clipped_probability(raw)
        total_wins = 0
        zero_std = 0
        for j in range(prompts):
            w = wins[i, j]
            policy[j] = win_terms[w] * (1.0 - p) - loss_terms[w] * p
            total_wins += w
            zero_std += (w == 0) | (w == group_size)
        g = (0.0 + pairwise_sum(policy, prompts)) / n
        s = total_wins / n
        if kl > 0:
            g = g - kl * kl_gradient(p, s, x[i], x_ref, p_ref, forward)
        grad[i] = g
        metrics[0, i] = s
        metrics[1, i] = np.sqrt(s * (1.0 - s) * n / (n - 1.0))
        metrics[2, i] = zero_std / prompts
        metrics[3, i] = p
        metrics[4, i] = raw


@numba.njit(cache=True, nogil=True)
def two_arm_sgd_step(state: np.ndarray, velocity: np.ndarray, probs: np.ndarray,
                     wins: np.ndarray, win_terms: np.ndarray, loss_terms: np.ndarray,
                     group_size: int, p_ref: float, kl: float, forward: bool, x_ref: float,
                     momentum: float, lr: float, limit: float, grad: np.ndarray,
                     metrics: np.ndarray, policy: np.ndarray) -> None:
    """Take one heavy-ball step of every seed in place.

    Gradient and metrics block, then v <- momentum v + g and
    x <- clip(x + lr v, -limit, limit) (NaN kept, as np.minimum/maximum).
    """
    two_arm_gradient_loop(state, probs, wins, win_terms, loss_terms, group_size, p_ref, kl,
                          forward, x_ref, grad, metrics, policy)
    for i in range(state.size):
        state[i], velocity[i] = heavy_ball(state[i], velocity[i], grad[i], momentum, lr, limit)


@numba.njit(cache=True, nogil=True)
def two_arm_sgd_step_single(state: np.ndarray, velocity: np.ndarray, probs: np.ndarray,
                            wins: np.ndarray, win_terms: np.ndarray, loss_terms: np.ndarray,
                            group_size: int, p_ref: float, kl: float, forward: bool,
                            x_ref: float, momentum: float, lr: float, limit: float,
                            metrics: np.ndarray, negated: np.ndarray) -> None:
    """Take :func:`two_arm_sgd_step` for one group per seed, in one pass over the seeds.

    The same operations in the same order (the one-term pairwise sum is 0.0 + term; G / 1
    groups), without the scratch vectors or a call per seed. ``negated`` receives -x, the
    argument of the sigmoid's exponential (numpy's, for its bits; see :func:`sigmoid_from`).
    """
    n = float(group_size)
    for i in range(state.size):
        raw = probs[i]
        p = clipped_probability(raw)
        w = wins[i, 0]
        g = (0.0 + (0.0 + (win_terms[w] * (1.0 - p) - loss_terms[w] * p))) / n
        s = w / n
        if kl > 0:
            g = g - kl * kl_gradient(p, s, state[i], x_ref, p_ref, forward)
        metrics[0, i] = s
        metrics[1, i] = np.sqrt(s * (1.0 - s) * n / (n - 1.0))
        metrics[2, i] = 1.0 if (w == 0) | (w == group_size) else 0.0
        metrics[3, i] = p
        metrics[4, i] = raw
        x, velocity[i] = heavy_ball(state[i], velocity[i], g, momentum, lr, limit)
        state[i] = x
        negated[i] = -x


@numba.njit(cache=True, nogil=True)
def sigmoid_from(exp_negated: np.ndarray, probs: np.ndarray, state: np.ndarray,
                 state_row: np.ndarray, probs_row: np.ndarray) -> None:
    """Finish the sigmoid, p = 1 / (1 + exp(-x)), and copy x and p into the recorded rows.

    IEEE addition and division are correctly rounded: the bits of numpy's ``np.add`` and
    ``np.divide`` on the same values.
    """
    for i in range(probs.size):
        p = 1.0 / (exp_negated[i] + 1.0)
        probs[i] = p
        probs_row[i] = p
        state_row[i] = state[i]
