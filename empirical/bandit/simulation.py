"""A vectorised GRPO simulator for the softmax bandit: many seeds at once.

K arms, arm 0 rewarded (reward 1), the others 0. With two arms the policy has one parameter, the
logit gap x (arm 1's logit stays 0) and the mean-field reduction of docs/theory.md section 8 is
exact; with K > 2 every logit is trained. Each optimizer step draws B groups of G completions per
seed, computes advantages (GRPO with TRL's unbiased std and eps, Dr. GRPO, RLOO), the policy
gradient, a KL penalty toward the initial policy (the exact KL(pi || pi_ref), or TRL's sampled
k3 estimator), and applies heavy-ball SGD or Adam (bias-corrected).

Off-policy lag, two mechanisms kept apart:

- ``refresh`` K / ``staleness`` d: the whole gradient is held for K steps (sample-and-hold) or
  applied d steps late: stale samples without importance correction, a fully stale force.
- ``num_iterations`` mu: samples drawn every mu steps are reused with the ratio pi / pi_old and
  PPO clipping at 1 +- ``clip``, as TRL does for num_iterations > 1.

It logs what TRL logs (reward, reward_std, frac_reward_zero_std, entropy, kl), so the loaders and
diagnostics read a simulated run like a real one.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import asdict, dataclass, fields
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from grpodyn.ground import (
    InputError,
    check_finite,
    check_group_size,
    check_int,
    check_momentum,
    check_positive,
)
from grpodyn.numerics import fast

__all__ = ["BanditConfig", "BanditRun", "simulate_bandit", "advantages", "expected_update",
           "group_update_moments"]

ESTIMATORS = ("grpo", "dr_grpo", "rloo")
_LOGIT_LIMIT = 1000.0
_PROB_FLOOR = 1e-300
_FUSED_MIN_WORK = 100_000  # seed-steps from which the fused kernel is used


@dataclass(frozen=True, kw_only=True)
class BanditConfig:
    """Settings of a bandit GRPO run (keyword-only, validated on creation).

    Parameters
    ----------
    lr : float
        Learning rate eta > 0 [logit per unit of policy gradient]; with SGD the map's stiffness
        is k = eta kappa (docs/theory.md sections 1 and 8).
    momentum : float
        Heavy-ball beta, or Adam's beta1, in [0, 0.999] (docs/theory.md sections 1 and 9).
    optimizer : {"sgd", "adam"}
        Heavy-ball SGD (v = beta v + g, x += eta v) or bias-corrected Adam (docs/theory.md
        section 9).
    beta2 : float
        Adam's second-moment decay, in [0, 1) (docs/theory.md section 9); SGD ignores it.
    adam_eps : float
        Adam's epsilon > 0, added to sqrt(v_hat) [policy-gradient units]; SGD ignores it.
    group_size : int
        Completions per prompt G >= 2 (docs/theory.md section 7).
    prompts : int
        Prompts (groups) per step B >= 1; the step's noise variance falls like 1 / (B G)
        (docs/theory.md section 6).
    arms : int
        Arms K >= 2, arm 0 rewarded (reward 1), the others 0; with two the policy is the logit
        gap x alone (docs/theory.md section 8).
    estimator : {"grpo", "dr_grpo", "rloo"}
        The advantage estimator (docs/theory.md section 7).
    eps : float
        GRPO's epsilon >= 0 added to the group's reward std [reward] (docs/theory.md section 7).
    kl : float
        KL coefficient lambda >= 0 toward the reference policy (TRL's beta; docs/theory.md
        section 8).
    kl_estimator : {"k3", "forward"}
        TRL's sampled k3 estimator, or the exact KL(pi || pi_ref) (docs/theory.md section 8).
    x_ref : float
        The reference policy's logit of arm 0, x_ref [logit] (docs/theory.md section 8).
    refresh : int
        Refresh interval K >= 1 [steps]: the gradient is held for K steps (sample-and-hold;
        docs/theory.md section 5).
    staleness : int
        Fixed staleness d >= 0 [steps]: the gradient is applied d steps late (docs/theory.md
        section 5).
    num_iterations : int
        Reuse mu >= 1: samples drawn every mu steps, reused with the importance ratio and PPO
        clipping (TRL's ``num_iterations``; docs/theory.md section 8).
    clip : float
        PPO clipping range > 0 of the importance ratio, 1 +- ``clip`` (dimensionless).

    Raises
    ------
    InputError
        On an invalid setting, naming it; also for more than one of refresh, staleness and
        num_iterations.
    """

    lr: float = 0.1
    momentum: float = 0.0
    optimizer: str = "sgd"  # "sgd" (heavy-ball) or "adam"
    beta2: float = 0.999
    adam_eps: float = 1e-8
    group_size: int = 16
    prompts: int = 1
    arms: int = 2
    estimator: str = "grpo"
    eps: float = 1e-4
    kl: float = 0.0
    kl_estimator: str = "k3"  # "k3" (TRL, sampled) or "forward" (exact KL(pi || pi_ref))
    x_ref: float = 0.0
    refresh: int = 1
    staleness: int = 0
    num_iterations: int = 1
    clip: float = 0.2

    def __post_init__(self) -> None:
        check_positive("lr", self.lr)
        check_momentum(self.momentum)
        if self.optimizer not in ("sgd", "adam"):
            raise InputError(f"optimizer must be 'sgd' or 'adam', got {self.optimizer!r}")
        check_momentum(self.beta2, "beta2", largest=None)
        check_positive("adam_eps", self.adam_eps)
        check_group_size(self.group_size)
        check_int("prompts", self.prompts, minimum=1)
        check_int("arms", self.arms, minimum=2)
        if self.estimator not in ESTIMATORS:
            raise InputError(f"estimator must be one of {', '.join(ESTIMATORS)}, got "
                             f"{self.estimator!r}")
        if self.kl_estimator not in ("k3", "forward"):
            raise InputError(f"kl_estimator must be 'k3' or 'forward', got {self.kl_estimator!r}")
        check_positive("kl", self.kl, allow_zero=True)
        check_positive("eps", self.eps, allow_zero=True)
        check_finite("x_ref", self.x_ref)
        check_int("refresh", self.refresh, minimum=1)
        check_int("staleness", self.staleness, minimum=0)
        check_int("num_iterations", self.num_iterations, minimum=1)
        check_positive("clip", self.clip)
        lags = (self.refresh > 1) + (self.staleness > 0) + (self.num_iterations > 1)
        if lags > 1:
            raise InputError("use one of refresh, staleness, num_iterations at a time")

    def __repr__(self) -> str:
        """Return the constructor call with the fields that differ from their defaults."""
        shown = [f"{f.name}={getattr(self, f.name)!r}" for f in fields(self)
                 if getattr(self, f.name) != f.default]
        return f"BanditConfig({', '.join(shown)})"


@dataclass(eq=False)
class BanditRun:
    """A simulated run: the parameter path and TRL-style metrics, per step and seed.

    Compared by identity (``a == b`` is ``a is b``), as it holds arrays.
    """

    config: BanditConfig
    x: np.ndarray  # (steps + 1, seeds): logit gap (two arms) or logit of the rewarded arm
    p: np.ndarray  # (steps + 1, seeds): probability of the rewarded arm
    metrics: dict[str, np.ndarray]  # each (steps, seeds)

    def __repr__(self) -> str:
        """Return one line: the config, the recorded steps and seeds, the mean p at both ends."""
        steps, seeds = self.x.shape[0] - 1, self.x.shape[1]
        mean = self.p.mean(axis=1)
        return (f"BanditRun({self.config!r}, {steps} recorded steps, {seeds} seeds, "
                f"mean p {mean[0]:.4g} -> {mean[-1]:.4g})")

    def log_history(self, seed: int = 0) -> list[dict[str, float]]:
        """TRL-style ``log_history`` of one seed (step counted from 1)."""
        steps = self.metrics["reward"].shape[0]
        return [{"step": n + 1, "learning_rate": self.config.lr,
                 **{k: float(v[n, seed]) for k, v in self.metrics.items()}} for n in range(steps)]

    def write_trainer_state(self, path: str | Path, seed: int = 0, *,
                            replace: bool = True) -> Path:
        """Write one seed as a TRL trainer_state.json (with the config in it), atomically.

        With ``replace=False`` an existing ``path`` raises ``FileExistsError`` and is kept,
        even one that appears while the file is written (:func:`grpodyn.ground.files.write_new`).

        The whole config goes under ``grpodyn_bandit_config``; the settings of ``--hparams``
        also under ``grpodyn_hparams``, in its names: the loaders read the optimizer, lr,
        momentum, beta2 (Adam), G, B (``prompts``), the KL coefficient and the reuse back
        (``grpodyn runs``, ``advise``, ``fit``, ``sweep``, ``transfer``). A held refresh or a
        fixed staleness is not among them: such a run reads as on-policy.
        """
        from grpodyn.ground.files import write_atomic, write_new

        c = self.config
        hparams = {"optimizer": c.optimizer, "lr": c.lr, "momentum": c.momentum,
                   **({"beta2": c.beta2} if c.optimizer == "adam" else {}),
                   "group_size": c.group_size, "batch": c.prompts, "kl": c.kl,
                   "num_iterations": c.num_iterations}
        state = {"global_step": self.metrics["reward"].shape[0], "log_history":
                 self.log_history(seed), "grpodyn_bandit_config": asdict(c),
                 "grpodyn_hparams": hparams}
        return (write_atomic if replace else write_new)(path, json.dumps(state))


def _batch_std(share: np.ndarray, n: int) -> np.ndarray:
    """Std of n 0/1 rewards with mean ``share`` (Bessel-corrected), as TRL logs reward_std."""
    return np.sqrt(share * (1.0 - share) * n / (n - 1.0))


def advantages(successes: np.ndarray, group_size: int, estimator: str, eps: float = 1e-4
               ) -> tuple[np.ndarray, np.ndarray]:
    """Advantages of a success and of a failure in groups with ``successes`` rewarded draws."""
    g = float(group_size)
    mean = successes / g
    if estimator == "grpo":
        std = np.sqrt(successes * (g - successes) / (g * (g - 1.0)))  # unbiased, as torch.std
        return (1.0 - mean) / (std + eps), -mean / (std + eps)
    if estimator == "dr_grpo":
        return 1.0 - mean, -mean
    if estimator == "rloo":
        return (g - successes) / (g - 1.0), -successes / (g - 1.0)
    raise InputError(f"estimator must be one of {', '.join(ESTIMATORS)}, got {estimator!r}")


def _softmax(logits: np.ndarray) -> np.ndarray:
    shifted = logits - logits.max(axis=-1, keepdims=True)
    weights = np.exp(shifted)
    return weights / weights.sum(axis=-1, keepdims=True)


class _Engine:
    """One step's gradient for all seeds; arms = 2 uses binomial draws and the gap x."""

    def __init__(self, config: BanditConfig, rng: np.random.Generator, seeds: int) -> None:
        self.c, self.rng, self.seeds = config, rng, seeds
        ref = np.zeros(config.arms)
        ref[0] = config.x_ref
        self.ref_probs = _softmax(ref)
        self.trainable = np.ones(config.arms)
        if config.arms == 2:
            self.trainable[1] = 0.0  # the gap x is the logit of arm 0; arm 1 stays at 0

    def sample(self, probs: np.ndarray) -> np.ndarray:
        """Draw the counts per arm, shape (seeds, B, arms)."""
        c = self.c
        shape = (self.seeds, c.prompts)
        if c.arms == 2:
            wins = self.rng.binomial(c.group_size, np.broadcast_to(probs[:, None, 0], shape))
            return np.stack([wins, c.group_size - wins], axis=-1)
        return self.rng.multinomial(c.group_size, np.broadcast_to(probs[:, None, :],
                                                                  (*shape, c.arms)))

    def gradient(self, logits: np.ndarray, counts: np.ndarray, old_probs: np.ndarray | None, *,
                 probs: np.ndarray | None = None) -> tuple[np.ndarray, dict[str, np.ndarray]]:
        """Return the ascent direction in the logits and the metrics of these samples.

        ``probs``: the softmax of ``logits``, when the caller has it.
        """
        c = self.c
        probs = _softmax(logits) if probs is None else probs
        wins = counts[..., 0].astype(float)
        a_win, a_loss = advantages(wins, c.group_size, c.estimator, c.eps)
        per_arm_adv = np.concatenate([a_win[..., None], np.repeat(a_loss[..., None],
                                                                  c.arms - 1, axis=-1)], axis=-1)
        weight = np.ones_like(per_arm_adv)
        if old_probs is not None:  # importance ratio with PPO clipping (per arm: one token)
            ratio = (probs / old_probs)[:, None, :]
            clipped = ((per_arm_adv > 0) & (ratio > 1 + c.clip)) | \
                      ((per_arm_adv < 0) & (ratio < 1 - c.clip))
            weight = np.where(clipped, 0.0, ratio)
        n = c.prompts * c.group_size
        # sum_i A_i w_i (e_{y_i} - pi): per arm count * A * w, minus (sum) times pi
        per_arm = (counts * per_arm_adv * weight).sum(axis=1) / n
        grad = per_arm - per_arm.sum(axis=-1, keepdims=True) * probs
        kl_grad, kl_value = self._kl(probs, counts)
        grad = (grad - c.kl * kl_grad) * self.trainable
        share = wins.mean(axis=1) / c.group_size
        metrics = {"reward": share, "reward_std": _batch_std(share, n),
                   "frac_reward_zero_std": ((wins == 0) | (wins == c.group_size)).mean(axis=1),
                   "kl": kl_value}
        return grad, metrics

    def _kl(self, probs: np.ndarray, counts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        ref = self.ref_probs[None, :]
        probs = np.maximum(probs, _PROB_FLOOR)
        log_ratio = np.log(ref) - np.log(probs)  # log pi_ref - log pi, per arm
        k3 = np.exp(log_ratio) - log_ratio - 1.0
        share = counts.sum(axis=1) / (self.c.prompts * self.c.group_size)  # sample frequency
        kl_value = (share * k3).sum(axis=-1)
        if self.c.kl_estimator == "forward":
            kl = (probs * -log_ratio).sum(axis=-1, keepdims=True)
            return probs * (-log_ratio - kl), kl_value
        # k3 differentiated through log pi on the drawn samples: (1 - ref/pi)(e_y - pi)
        coefficient = share * (1.0 - ref / probs)
        return coefficient - coefficient.sum(axis=-1, keepdims=True) * probs, kl_value


class _TwoArmEngine:
    """Two arms in the gap x alone: (seeds, B) arrays of success counts, no arm axis.

    Same update as :class:`_Engine` restricted to x (its tests compare the two), and
    table-driven: the advantage terms S a_win(S), (G - S) a_loss(S) and their signs depend on
    a group's success count S alone, so they are tabulated once over S = 0..G and looked up.
    The per-group products and the sums over groups are the former elementwise ones, in the
    same order, so paths are bit-identical to the direct formula (near a stability threshold
    round-off grows ~1e10-fold over 1000 steps: a changed summation order changes the noise).
    """

    def __init__(self, config: BanditConfig, rng: np.random.Generator, seeds: int, *,
                 fused: bool = False) -> None:
        self.c, self.rng, self.seeds, self.fused = config, rng, seeds, fused
        self.p_ref = 1.0 / (1.0 + np.exp(-config.x_ref))
        g = config.group_size
        successes = np.arange(g + 1)
        with np.errstate(divide="ignore", invalid="ignore"):
            a_win, a_loss = advantages(successes.astype(float), g, config.estimator, config.eps)
            self.win_terms = successes * a_win  # as wins * a_win, elementwise
            self.loss_terms = (float(g) - successes) * a_loss
        # PPO clipping depends on the advantage's sign: 0 for A > 0, 1 for A < 0, 2 otherwise
        self.win_sign = np.where(a_win > 0, 0, np.where(a_win < 0, 1, 2))
        self.loss_sign = np.where(a_loss > 0, 0, np.where(a_loss < 0, 1, 2))

    def sample(self, p: np.ndarray) -> np.ndarray:
        return self.rng.binomial(self.c.group_size, np.broadcast_to(p[:, None],
                                                                    (self.seeds, self.c.prompts)))

    def _clipped(self, ratio: np.ndarray, sign: np.ndarray) -> np.ndarray:
        """Return the importance weights per group with PPO clipping.

        0 where A > 0 and the ratio exceeds 1 + clip, or A < 0 and it is below 1 - clip.
        ``ratio`` is per seed (seeds, 1); the three weights of a seed are formed once and
        picked per group by the sign class.
        """
        clip = self.c.clip
        weights = np.concatenate([np.where(ratio > 1 + clip, 0.0, ratio),
                                  np.where(ratio < 1 - clip, 0.0, ratio), ratio], axis=1)
        return np.take_along_axis(weights, sign, axis=1)

    def gradient(self, x: np.ndarray, wins: np.ndarray, p_old: np.ndarray | None, *,
                 probs: np.ndarray | None = None) -> tuple[np.ndarray, dict[str, np.ndarray]]:
        c = self.c
        g = float(c.group_size)
        p = 1.0 / (1.0 + np.exp(-x)) if probs is None else probs  # the caller's sigmoid(x)
        if p_old is None and self.fused:  # the same operations in one numba loop
            grad, block = fast.two_arm_gradient(x, p, wins, self.win_terms, self.loss_terms,
                                                c.group_size, p_ref=self.p_ref, kl=c.kl,
                                                forward=c.kl_estimator == "forward",
                                                x_ref=c.x_ref)
            # entropy is logged at record time from the current policy (a held gradient's
            # step may be older), as on the numpy path
            return grad, _block_metrics(block, self.p_ref, entropy=False)
        p = np.minimum(np.maximum(p, _PROB_FLOOR), 1.0 - 1e-16)  # np.clip, without its wrapper
        win_terms, loss_terms = self.win_terms[wins], self.loss_terms[wins]
        if p_old is None:
            # sum_i A_i (r_i - p) = wins a_win (1 - p) - losses a_loss p
            policy = win_terms * (1.0 - p[:, None]) - loss_terms * p[:, None]
        else:
            w_win = self._clipped((p / p_old)[:, None], self.win_sign[wins])
            w_loss = self._clipped(((1.0 - p) / (1.0 - p_old))[:, None], self.loss_sign[wins])
            policy = win_terms * w_win * (1.0 - p[:, None]) - loss_terms * w_loss * p[:, None]
        n = c.prompts * g
        grad = policy.sum(axis=1) / n
        share = wins.sum(axis=1) / n
        ratio_win, ratio_loss = self.p_ref / p, (1.0 - self.p_ref) / (1.0 - p)
        if c.kl > 0:
            if c.kl_estimator == "forward":
                kl_grad = p * (1.0 - p) * (x - c.x_ref)
            else:
                kl_grad = share * (1.0 - ratio_win) * (1.0 - p) - \
                    (1.0 - share) * (1.0 - ratio_loss) * p
            grad = grad - c.kl * kl_grad
        degenerate = np.count_nonzero((wins == 0) | (wins == c.group_size), axis=1)
        metrics = {"reward": share, "reward_std": _batch_std(share, n),
                   "frac_reward_zero_std": degenerate / c.prompts,
                   "kl": _kl_value(share, p, self.p_ref)}
        return grad, metrics


def _kl_value(share: np.ndarray, p: np.ndarray, p_ref: float) -> np.ndarray:
    """TRL's logged kl (the k3 estimate's mean) of a batch with rewarded ``share``, policy p."""
    ratio_win, ratio_loss = p_ref / p, (1.0 - p_ref) / (1.0 - p)
    return share * (ratio_win - np.log(ratio_win) - 1.0) + \
        (1.0 - share) * (ratio_loss - np.log(ratio_loss) - 1.0)


def _two_arm_entropy(probs: np.ndarray) -> np.ndarray:
    """Entropy of the two-arm policy [nats], with p floored at 1e-300."""
    safe = np.maximum(probs, _PROB_FLOOR)
    return -(safe * np.log(safe) + (1 - safe) * np.log(np.maximum(1 - safe, _PROB_FLOOR)))


def _block_metrics(block: np.ndarray, p_ref: float, *, entropy: bool = True
                   ) -> dict[str, np.ndarray]:
    """Return TRL's metrics from a fused kernel's block (rows ``fast.BLOCK``, any shape after).

    The entropy of the block's raw p is included when ``entropy``.

    kl and entropy take the operations of :func:`_kl_value` and :func:`_two_arm_entropy` in
    their order (the same bits), 8192 values at a time into three reused buffers: no fresh
    run-sized or block-sized temporaries (about 2x faster than 32k-value blocks here).
    """
    share, p_clipped, p = (np.ascontiguousarray(block[k]).reshape(-1) for k in (0, 3, 4))
    kl, values = np.empty(share.size), np.empty(share.size)
    size = 8192
    a, b, c = np.empty(size), np.empty(size), np.empty(size)
    for lo in range(0, share.size, size):
        part = slice(lo, lo + size)
        m = share[part].size
        a_, b_, c_ = a[:m], b[:m], c[:m]
        s_, q_ = share[part], p_clipped[part]
        # kl = s (r_w - log r_w - 1) + (1 - s) (r_l - log r_l - 1), r_w = p_ref / p,
        # r_l = (1 - p_ref) / (1 - p)
        np.divide(p_ref, q_, out=a_)
        np.log(a_, out=b_)
        np.subtract(a_, b_, out=b_)
        np.subtract(b_, 1.0, out=b_)
        np.multiply(s_, b_, out=b_)
        np.subtract(1.0, q_, out=a_)
        np.divide(1.0 - p_ref, a_, out=a_)
        np.log(a_, out=c_)
        np.subtract(a_, c_, out=c_)
        np.subtract(c_, 1.0, out=c_)
        np.subtract(1.0, s_, out=a_)
        np.multiply(a_, c_, out=c_)
        np.add(b_, c_, out=kl[part])
        if entropy:  # -(q log q + (1 - q) log max(1 - q, floor)), q = max(p, floor)
            np.maximum(p[part], _PROB_FLOOR, out=a_)
            np.log(a_, out=b_)
            np.multiply(a_, b_, out=b_)
            np.subtract(1, a_, out=a_)
            np.maximum(a_, _PROB_FLOOR, out=c_)
            np.log(c_, out=c_)
            np.multiply(a_, c_, out=c_)
            np.add(b_, c_, out=c_)
            np.negative(c_, out=values[part])
    shape = block.shape[1:]
    out = {"reward": block[0], "reward_std": block[1], "frac_reward_zero_std": block[2],
           "kl": kl.reshape(shape)}
    if entropy:
        out["entropy"] = values.reshape(shape)
    return out


def simulate_bandit(config: BanditConfig, *, steps: int, seeds: int = 1, seed: int = 0,
                    x0: float | None = None, record_every: int = 1) -> BanditRun:
    """Run ``seeds`` independent GRPO runs on the bandit for ``steps`` optimizer steps.

    Logits are clipped at +-1000 (p is then exactly 0 or 1), so a diverging run saturates
    instead of producing NaN.

    Parameters
    ----------
    config : BanditConfig
    steps, seeds : int
    seed : int
        Seed of the random generator (runs are reproducible).
    x0 : float, optional
        Initial logit of the rewarded arm (default: the reference policy's, ``config.x_ref``).
    record_every : int
        Keep every n-th step of the path and metrics (memory for long runs).
    """
    if not isinstance(config, BanditConfig):
        raise InputError(f"config: expected a BanditConfig (grpodyn.BanditConfig(lr=...)), got "
                         f"{type(config).__name__} {config!r:.40}")
    steps = check_int("steps", steps, minimum=1)
    seeds = check_int("seeds", seeds, minimum=1)
    record_every = check_int("record_every", record_every, minimum=1)
    c = config
    rng = np.random.default_rng(seed)
    two_arms = c.arms == 2
    # the fused numba gradient (numerics.fast) when installed and the run is long enough to
    # repay its first-call compilation; same bits as the numpy path
    fused = (two_arms and fast.ENABLED and seeds * steps >= _FUSED_MIN_WORK
             and c.prompts <= fast.MAX_PROMPTS)
    engine = _TwoArmEngine(c, rng, seeds, fused=fused) if two_arms else _Engine(c, rng, seeds)
    start = c.x_ref if x0 is None else float(check_finite("x0", x0, scalar=True))
    # two arms: the state is the gap x; K arms: the logits (arm 0 rewarded)
    state = np.full(seeds, start) if two_arms else np.zeros((seeds, c.arms))
    if not two_arms:
        state[:, 0] = start
    velocity = np.zeros_like(state)
    second = np.zeros_like(state)
    queue: list[np.ndarray] = []
    held = None
    old = samples = None
    kept = steps // record_every
    xs = np.empty((kept + 1, seeds))
    ps = np.empty((kept + 1, seeds))

    if fused and c.optimizer == "sgd" and c.num_iterations == 1 and c.refresh == 1 \
            and c.staleness == 0:
        return _fused_sgd_run(engine, state, steps, record_every)

    def probability(values: np.ndarray) -> np.ndarray:
        return 1.0 / (1.0 + np.exp(-values)) if two_arms else _softmax(values)

    def gap(values: np.ndarray) -> np.ndarray:
        return values if two_arms else values[:, 0] - values[:, 1]

    def rewarded(probs: np.ndarray) -> np.ndarray:
        return probs if two_arms else probs[:, 0]

    probs = probability(state)  # of the current state, carried to the next step
    xs[0], ps[0] = gap(state), rewarded(probs)
    logged: dict[str, np.ndarray] = {}
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        for n in range(steps):
            if probs is None:
                probs = probability(state)
            if c.num_iterations > 1:
                if n % c.num_iterations == 0:
                    old, samples = probs, engine.sample(probs)
                grad, metrics = engine.gradient(state, samples, old, probs=probs)
            elif c.refresh > 1:
                if n % c.refresh == 0:
                    held = engine.gradient(state, engine.sample(probs), None, probs=probs)
                grad, metrics = held
            else:
                grad, metrics = engine.gradient(state, engine.sample(probs), None, probs=probs)
                if c.staleness > 0:
                    queue.append(grad)
                    grad = queue.pop(0) if len(queue) > c.staleness else queue[0]
            if c.optimizer == "sgd":
                velocity = c.momentum * velocity + grad
                state = state + c.lr * velocity
            else:
                velocity = c.momentum * velocity + (1 - c.momentum) * grad
                second = c.beta2 * second + (1 - c.beta2) * grad**2
                m_hat = velocity / (1 - c.momentum ** (n + 1))
                v_hat = second / (1 - c.beta2 ** (n + 1))
                state = state + c.lr * m_hat / (np.sqrt(v_hat) + c.adam_eps)
            # a diverged run saturates (p exactly 0 or 1) instead of overflowing to NaN
            state = np.minimum(np.maximum(state, -_LOGIT_LIMIT), _LOGIT_LIMIT)  # np.clip
            if (n + 1) % record_every == 0:
                row = (n + 1) // record_every
                new_probs = probability(state)
                xs[row], ps[row] = gap(state), rewarded(new_probs)
                if "entropy" not in metrics:  # the fused kernel returns it
                    safe = np.maximum(probs, _PROB_FLOOR)
                    entropy = (_two_arm_entropy(probs) if two_arms
                               else -(safe * np.log(safe)).sum(axis=-1))
                    metrics = {**metrics, "entropy": entropy}
                if not logged:
                    logged = {key: np.empty((kept, seeds)) for key in metrics}
                for key, value in metrics.items():
                    logged[key][row - 1] = value
                probs = new_probs
            else:
                probs = None
    return BanditRun(config, xs, ps, logged)


def _fused_sgd_run(engine: _TwoArmEngine, state: np.ndarray, steps: int, record_every: int
                   ) -> BanditRun:
    """Run the on-policy two-arm heavy-ball loop of :func:`simulate_bandit`, step fused.

    The step is numerics.fast's kernel: the same draws, the same operations in the same order,
    the same paths.
    """
    c, seeds = engine.c, state.size
    kept = steps // record_every
    xs, ps = np.empty((kept + 1, seeds)), np.empty((kept + 1, seeds))
    block = np.empty((len(fast.BLOCK), kept, seeds))
    scratch = np.empty((len(fast.BLOCK), seeds))
    velocity, grad, policy = np.zeros(seeds), np.empty(seeds), np.empty(c.prompts)
    step = fast.two_arm_sgd_kernel(one_group=c.prompts == 1)
    constants = (engine.win_terms, engine.loss_terms, c.group_size, engine.p_ref, c.kl,
                 c.kl_estimator == "forward", c.x_ref, c.momentum, c.lr, _LOGIT_LIMIT)
    state, probs, work = state.copy(), np.empty(seeds), np.empty(seeds)
    shape = (seeds, c.prompts)

    def sigmoid() -> None:  # probs = 1 / (1 + exp(-state)): numpy's ufuncs, in place
        np.negative(state, out=work)
        np.exp(work, out=work)
        np.add(work, 1.0, out=work)
        np.divide(1.0, work, out=probs)

    with np.errstate(over="ignore"):
        sigmoid()
        xs[0], ps[0] = state, probs
        if c.prompts == 1:
            _one_group_loop(engine, step, constants, state, velocity, probs, work, xs, ps,
                            block, scratch, steps=steps, record_every=record_every)
            return BanditRun(c, xs, ps, _block_metrics(block, engine.p_ref))
        for n in range(steps):
            # the draws of engine.sample, in the same C order (the same stream), from a
            # contiguous p: numpy's broadcast-iterator path costs half as much again
            wins = engine.rng.binomial(c.group_size, np.repeat(probs, c.prompts)).reshape(shape)
            row = (n + 1) // record_every if (n + 1) % record_every == 0 else 0
            step(state, velocity, probs, wins, *constants, grad,
                 block[:, row - 1] if row else scratch, policy)
            sigmoid()
            if row:
                xs[row], ps[row] = state, probs
    return BanditRun(c, xs, ps, _block_metrics(block, engine.p_ref))


def _one_group_loop(engine: _TwoArmEngine, step: Callable[..., None],
                    constants: tuple[Any, ...], state: np.ndarray, velocity: np.ndarray,
                    probs: np.ndarray, work: np.ndarray, xs: np.ndarray, ps: np.ndarray,
                    block: np.ndarray, scratch: np.ndarray, *, steps: int, record_every: int
                    ) -> None:
    """Run the steps of :func:`_fused_sgd_run` with one group per seed, in place.

    Per step: numpy's draws (the same stream), the single-pass kernel (which also writes -x),
    numpy's exp (its bits), and the compiled end of the sigmoid with the recorded rows.
    """
    c, seeds = engine.c, state.size
    finish = fast.sigmoid_kernel()
    spare = np.empty((2, seeds))
    for n in range(steps):
        wins = engine.rng.binomial(c.group_size, probs).reshape(seeds, 1)
        row = (n + 1) // record_every if (n + 1) % record_every == 0 else 0
        step(state, velocity, probs, wins, *constants, block[:, row - 1] if row else scratch,
             work)
        np.exp(work, out=work)
        if row:
            finish(work, probs, state, xs[row], ps[row])
        else:
            finish(work, probs, state, spare[0], spare[1])


def group_update_moments(x: npt.ArrayLike, config: BanditConfig
                         ) -> tuple[np.ndarray | float, np.ndarray | float]:
    """Return the exact mean and variance of one group's ascent direction of x (two arms).

    By enumerating every success count S with its binomial probability.

    Uses the simulator's own advantage and KL code: an independent check of the sympy drift (it
    shares no code with it). The k3 KL is the sampled estimator, so it adds to the variance; the
    exact forward KL is deterministic.

    Parameters
    ----------
    x : float or array_like
        Logit gap(s); an array gives arrays of means and variances (one enumeration for all).
    config : BanditConfig

    Returns
    -------
    tuple
        (mean, variance): floats for a scalar x, arrays of x's shape otherwise.
    """
    from scipy.stats import binom

    if config.arms != 2:
        raise InputError("the enumerated update is defined for two arms")
    scalar = np.ndim(x) == 0
    x = np.asarray(x, dtype=float)[..., None]  # successes run along the last axis
    g = config.group_size
    successes = np.arange(g + 1, dtype=float)
    p = 1.0 / (1.0 + np.exp(-x))
    weights = binom.pmf(successes, g, p)
    a_win, a_loss = advantages(successes, g, config.estimator, config.eps)
    policy = (successes * a_win * (1 - p) + (g - successes) * a_loss * (0 - p)) / g
    if config.kl_estimator == "forward":
        kl = np.broadcast_to(p * (1 - p) * (x - config.x_ref), policy.shape)
    else:
        p_ref = 1.0 / (1.0 + np.exp(-config.x_ref))
        share = successes / g
        kl = share * (1 - p_ref / p) * (1 - p) + (1 - share) * (1 - (1 - p_ref) / (1 - p)) * (-p)
    update = policy - config.kl * kl
    if scalar:  # weights and update are vectors over S
        mean = float(weights @ update)
        return mean, float(weights @ update**2 - mean**2)
    mean = np.einsum("...j,...j->...", weights, update)
    return mean, np.einsum("...j,...j->...", weights, update**2) - mean**2


def expected_update(x: npt.ArrayLike, config: BanditConfig) -> np.ndarray | float:
    """Return the exact expected ascent direction of x for two arms.

    From :func:`group_update_moments`: a float for a scalar x, an array for an array.
    """
    return group_update_moments(x, config)[0]
