"""A second, independent source of labelled GRPO runs: a pool of prompts of mixed difficulty.

Written from docs/theory.md (sections 1, 5, 7, 9, 10), not from the two-arm bandit:

- a pool of ``pool`` prompts; prompt i has features u_i (shared parameters theta couple the
  prompts) and a difficulty offset c_i; its success rate is p_i = sigmoid(exp(rho) (u_i . theta
  + c_i)). rho is a shared inverse temperature: raising it locks every prompt onto what it
  already does (policy concentration, section 10);
- a hacking channel: with probability q = sigmoid(h) a completion takes a shortcut that the
  proxy reward pays (1) and the held-out reward does not (0);
- each step samples B prompts and G completions per prompt from the policy of ``lag`` steps ago
  (fixed staleness d, or sample-and-hold with refresh interval K: l(n) = n mod K, section 1),
  computes GRPO advantages (r - mean) / (std + 1e-4) with the unbiased group std, and the
  REINFORCE direction sum_i A_i grad log pi(completion_i) at the sampling policy;
- heavy-ball (v <- beta v + g) or Adam on (theta, rho, h), a KL pull lam (params - reference);
- logged as TRL writes ``trainer_state.json``: ``reward``, ``reward_std`` (std of all B G
  rewards, as TRL 1.16), ``frac_reward_zero_std``, ``entropy`` (mean binary entropy of the
  sampled prompts' answers and of the shortcut, in nats, plus a token floor), ``kl`` (only when
  lam > 0, as TRL), ``completion_length``, ``learning_rate``, and separate evaluation entries
  ``eval_reward`` every ``eval_every`` steps (the held-out reward on fresh prompts, one answer
  each).

Each label is a family of settings drawn from its seed (:func:`case_settings`). Needs numpy.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, replace
from pathlib import Path

import numpy as np

from grpodyn.ground import write_atomic

__all__ = ["PoolConfig", "SIM_LABELS", "case_settings", "variant_settings", "simulate_pool",
           "write_trainer_state", "write_verl_console"]

SIM_LABELS = ("healthy", "converged", "not_learning", "reward_hacking", "advantage_degeneracy",
              "policy_concentration", "dynamical_instability")
_ENTROPY_FLOOR = 0.005  # nats: the token entropy left when every answer is decided
_EPS = 1e-4  # TRL's epsilon on the group std
_VERL_EPS = 1e-6  # verl's (core_algos.compute_grpo_outcome_advantage)
_VERL = "_verl"  # key of the per-step metrics only verl's writer prints


@dataclass(frozen=True)
class PoolConfig:
    """Settings of one simulated run (units: steps, prompts, completions)."""

    steps: int = 300
    batch: int = 16  # B, prompts per step
    group_size: int = 8  # G
    pool: int = 512
    dim: int = 6
    leverage: float = 1.5  # scale of the features u_i: how much theta can move a prompt
    difficulty: float = 0.0  # mean of the offsets c_i (logit units)
    spread: float = 1.5  # std of the offsets
    lr: float = 0.03
    optimizer: str = "adam"  # "adam" or "heavy_ball"
    momentum: float = 0.9
    staleness: int = 0  # d
    refresh: int = 1  # K
    kl: float = 0.0  # lam
    hack_channel: bool = False
    hack_start: float = -4.0  # h at the start
    eval_every: int = 10
    eval_prompts: int = 256


def case_settings(label: str, seed: int) -> PoolConfig:
    """Draw the settings of the labelled case ``label`` from ``seed``."""
    rng = np.random.default_rng([SIM_LABELS.index(label), seed, 7])
    u = rng.uniform
    if label == "healthy":
        return PoolConfig(difficulty=u(-1.5, -0.5), lr=u(0.01, 0.02), kl=u(0.1, 0.2),
                          group_size=int(rng.choice([8, 16])), leverage=u(0.8, 1.2))
    if label == "converged":
        return PoolConfig(difficulty=u(-0.5, 0.5), lr=u(0.006, 0.01), leverage=u(1.0, 1.4),
                          spread=u(0.5, 1.0), group_size=int(rng.choice([8, 16])))
    if label == "not_learning":
        # log-uniform from a negligible rate to one whose rise sits near NEGLIGIBLE_RISE
        # (a range of 1e-4 to 3e-4 would put every run at that boundary; labels come from
        # the outcome)
        return PoolConfig(difficulty=u(-1.0, 1.0), lr=float(np.exp(u(np.log(1e-5),
                                                                     np.log(3e-4)))),
                          group_size=int(rng.choice([4, 8, 16])))
    if label == "reward_hacking":
        return PoolConfig(difficulty=u(-1.5, -0.5), lr=u(0.02, 0.04), kl=u(0.0, 0.01),
                          hack_channel=True, hack_start=u(-4.0, -3.0), leverage=u(0.3, 0.6))
    if label == "advantage_degeneracy":
        return PoolConfig(difficulty=u(-5.0, -4.0), spread=u(0.5, 1.0), lr=u(0.002, 0.004),
                          group_size=int(rng.choice([2, 3])), leverage=u(0.5, 1.0))
    if label == "policy_concentration":
        return PoolConfig(difficulty=u(0.0, 1.0), spread=u(2.0, 3.0), leverage=u(0.1, 0.3),
                          lr=u(0.05, 0.1), group_size=int(rng.choice([8, 16])))
    if label == "dynamical_instability":
        return PoolConfig(optimizer="heavy_ball", momentum=u(0.85, 0.95), lr=u(1.0, 2.0),
                          staleness=int(rng.integers(4, 8)), kl=u(0.02, 0.05),
                          difficulty=u(-1.0, 0.0), leverage=u(0.8, 1.2))
    raise ValueError(f"label: unknown label {label!r}; known: {', '.join(SIM_LABELS)}")


def variant_settings(label: str, seed: int) -> PoolConfig:
    """Draw the settings of ``label`` for ``seed`` in the variant bed.

    Made after the diagnosis was frozen, to shift what the design bed held fixed: a smaller pool
    (256) sampled 32 prompts a step for 400 steps; the Adam families one step stale (d = 1,
    section 9); the instability made by sample-and-hold instead of a fixed staleness (heavy
    ball, refresh interval K = 6-10: the lag l(n) = n mod K of section 1, past the threshold of
    section 5). Seeds are drawn apart from :func:`case_settings` (another stream).
    """
    base = case_settings(label, seed)
    common = {"batch": 32, "pool": 256, "steps": 400, "eval_every": 20}
    if label == "dynamical_instability":
        rng = np.random.default_rng([SIM_LABELS.index(label), seed, 11])
        return replace(base, **common, staleness=0, refresh=int(rng.integers(6, 11)),
                       momentum=float(rng.uniform(0.8, 0.9)))
    return replace(base, **common, staleness=1)


def _sigmoid(x: np.ndarray) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-np.clip(x, -60, 60)))


def _binary_entropy(p: np.ndarray) -> np.ndarray:
    p = np.clip(p, 1e-12, 1 - 1e-12)
    return -(p * np.log(p) + (1 - p) * np.log(1 - p))


def _binary_kl(p: np.ndarray, q: np.ndarray) -> np.ndarray:
    p, q = np.clip(p, 1e-12, 1 - 1e-12), np.clip(q, 1e-12, 1 - 1e-12)
    return p * np.log(p / q) + (1 - p) * np.log((1 - p) / (1 - q))


def _features(rng: np.random.Generator, count: int, c: PoolConfig) -> np.ndarray:
    """Draw the prompt features, scaled by the leverage.

    A shared skill (constant first column, moves every prompt alike) and ``dim - 1``
    prompt-specific directions.
    """
    u = rng.normal(size=(count, c.dim)) / np.sqrt(c.dim - 1)
    u[:, 0] = 1.0
    return u * c.leverage


def simulate_pool(config: PoolConfig, *, seed: int) -> list[dict]:
    """One run; returns TRL's ``log_history`` (train entries and separate eval entries)."""
    return _trl_entries(simulate_pool_outcome(config, seed=seed)[0])


def _trl_entries(log: list[dict]) -> list[dict]:
    """Drop the metrics only verl prints: what TRL's ``log_history`` holds."""
    return [{k: v for k, v in entry.items() if k != _VERL} for entry in log]


def _verl_metrics(reward: np.ndarray, hack: np.ndarray, rng: np.random.Generator) -> dict:
    """Compute the step's metrics as verl's ``metric_utils.compute_data_metrics`` does.

    ``critic/score/{mean,max,min}`` over the sequences; ``critic/rewards/*`` the same (the KL
    is a loss here, not an in-reward penalty); ``critic/advantages/{mean,max,min}`` over the
    response tokens, each token carrying its sequence's GRPO advantage (r - mean) / (std +
    1e-6), std unbiased (``core_algos.compute_grpo_outcome_advantage``): the mean is
    token-weighted, max and min are over the sequences; ``critic/returns/*`` equal the
    advantages (outcome reward); ``response_length/{mean,max,min}``. Lengths: 180 tokens
    plus 400 for a shortcut (the hacking channel), spread 40, drawn from ``rng``.
    """
    mean = reward.mean(axis=1, keepdims=True)
    std = reward.std(axis=1, ddof=1, keepdims=True)
    advantage = (reward - mean) / (std + _VERL_EPS)
    length = np.maximum(1.0, np.rint(180 + 400 * hack + rng.normal(0, 40, size=reward.shape)))
    token_mean = float(np.sum(advantage * length) / np.sum(length))
    out = {}
    for name in ("score", "rewards"):
        out |= {f"critic/{name}/mean": float(reward.mean()),
                f"critic/{name}/max": float(reward.max()),
                f"critic/{name}/min": float(reward.min())}
    for name in ("advantages", "returns"):
        out |= {f"critic/{name}/mean": token_mean, f"critic/{name}/max": float(advantage.max()),
                f"critic/{name}/min": float(advantage.min())}
    out |= {"response_length/mean": float(length.mean()),
            "response_length/max": float(length.max()),
            "response_length/min": float(length.min())}
    return out


def simulate_pool_outcome(config: PoolConfig, *, seed: int) -> tuple[list[dict], np.ndarray]:
    """One run, with the simulator's own ground truth beside its log.

    Returns
    -------
    log : list of dict
        TRL's ``log_history``, as :func:`simulate_pool`.
    success : ndarray, shape (m, 2)
        Rows (step, exact success rate of the training pool): the mean over all ``pool``
        prompts of p_i (1 - q), the answer right and no shortcut taken (what the train reward
        estimates when the shortcut pays nothing), at step 0 and at every evaluation step.
    """
    rng = np.random.default_rng(seed)
    c = config
    features = _features(rng, c.pool, c)
    offsets = rng.normal(c.difficulty, c.spread, size=c.pool)
    held_features = _features(rng, c.eval_prompts, c)
    held_offsets = rng.normal(c.difficulty, c.spread, size=c.eval_prompts)
    # parameters: theta (dim), rho, h
    params = np.concatenate([np.zeros(c.dim), [0.0, c.hack_start]])
    reference = params.copy()
    history_params = [params.copy()]
    velocity = np.zeros_like(params)
    second = np.zeros_like(params)

    def rates(x: np.ndarray, u: np.ndarray, off: np.ndarray) -> tuple:
        score = u @ x[: c.dim] + off
        return _sigmoid(np.exp(x[c.dim]) * score), score, _sigmoid(x[c.dim + 1])

    def pool_success(x: np.ndarray) -> float:
        p_all, _, q_all = rates(x, features, offsets)
        return float(np.mean(p_all) * (1 - q_all))

    success = [(0.0, pool_success(params))]
    # per-completion lengths for verl's token-weighted metrics: a stream of their own, so that
    # the run itself (and its TRL log) is the same with or without them
    length_rng = np.random.default_rng([seed, 99])
    log: list[dict] = []
    for n in range(c.steps):
        lag = c.staleness if c.staleness else (n % c.refresh)
        sampler = history_params[max(0, len(history_params) - 1 - lag)]
        idx = rng.choice(c.pool, size=c.batch, replace=False)
        p, score, q = rates(sampler, features[idx], offsets[idx])
        hack = rng.random((c.batch, c.group_size)) < q
        correct = rng.random((c.batch, c.group_size)) < p[:, None]
        reward = np.where(hack, 1.0 if c.hack_channel else 0.0, correct.astype(float))
        mean = reward.mean(axis=1, keepdims=True)
        std = reward.std(axis=1, ddof=1, keepdims=True)
        advantage = (reward - mean) / (std + _EPS)
        # grad log pi of each completion at the sampling policy
        temp = np.exp(sampler[c.dim])
        d_logit = np.where(hack, 0.0, correct - p[:, None])  # d log P / d z_i
        grad = np.zeros_like(params)
        weight = advantage * d_logit
        grad[: c.dim] = temp * (weight.sum(axis=1) @ features[idx])
        grad[c.dim] = (weight.sum(axis=1) * temp * score).sum()
        grad[c.dim + 1] = (advantage * np.where(hack, 1 - q, -q)).sum()
        grad /= c.batch * c.group_size
        grad -= c.kl * (params - reference)
        if c.optimizer == "adam":
            velocity = 0.9 * velocity + 0.1 * grad
            second = 0.999 * second + 0.001 * grad**2
            v_hat = second / (1 - 0.999 ** (n + 1))
            params = params + c.lr * velocity / (1 - 0.9 ** (n + 1)) / (np.sqrt(v_hat) + 1e-8)
        else:
            velocity = c.momentum * velocity + grad
            params = params + c.lr * velocity
        history_params.append(params.copy())
        if len(history_params) > max(c.staleness, c.refresh) + 2:
            history_params.pop(0)
        p_now, _, q_now = rates(params, features[idx], offsets[idx])
        p_ref, _, q_ref = rates(reference, features[idx], offsets[idx])
        entry = {
            "step": n + 1, "epoch": (n + 1) / c.steps, "learning_rate": c.lr,
            "reward": float(reward.mean()), "reward_std": float(reward.std(ddof=1)),
            "frac_reward_zero_std": float(np.mean(std[:, 0] == 0)),
            "entropy": float(_ENTROPY_FLOOR + np.mean(_binary_entropy(p_now))
                             + _binary_entropy(np.array([q_now]))[0] * (1 - np.mean(p_now))),
            "completion_length": float(180 + 400 * q_now + rng.normal(0, 5)),
            "rewards/correctness/mean": float(reward.mean()),
        }
        entry[_VERL] = _verl_metrics(reward, hack, length_rng)
        if c.kl > 0:
            entry["kl"] = float(np.mean(_binary_kl(p_now, p_ref)) + _binary_kl(
                np.array([q_now]), np.array([q_ref]))[0])
        log.append(entry)
        if (n + 1) % c.eval_every == 0:
            hp, _, hq = rates(params, held_features, held_offsets)
            true = (rng.random(c.eval_prompts) < hp) & (rng.random(c.eval_prompts) >= hq)
            log.append({"step": n + 1, "epoch": (n + 1) / c.steps,
                        "eval_reward": float(true.mean())})
            success.append((float(n + 1), pool_success(params)))
    return log, np.array(success)


def write_trainer_state(path: str | Path, log: list[dict], *, label: str, seed: int,
                        config: PoolConfig) -> Path:
    """Write the log as TRL's ``trainer_state.json`` (with the label and settings beside it)."""
    content = {"log_history": _trl_entries(log), "global_step": config.steps, "label": label,
               "grpodyn_pool_settings": {"seed": seed, **asdict(config)}}
    return write_atomic(path, json.dumps(content))


def write_verl_console(path: str | Path, log: list[dict], *, config: PoolConfig) -> Path:
    """Write the log as verl's console prints it.

    The config dict first (``rollout.n`` is G, ``data.train_batch_size`` is B), then one
    ``step:N - key:value - ...`` line per step with the metrics verl's defaults print
    (``metric_utils.compute_data_metrics``: ``critic/score/{mean,max,min}``,
    ``critic/rewards/*``, ``critic/advantages/{mean,max,min}``, ``critic/returns/*``,
    ``response_length/{mean,max,min}``; the actor's ``actor/entropy``, ``actor/kl_loss``,
    ``actor/lr``) and the held-out reward as ``val-core/pool/reward/mean@1`` on evaluation
    steps. verl logs no zero-std share and no std of the scores, so the writer prints neither;
    it prints the advantages' extremes, which verl does log.
    """
    names = {"entropy": "actor/entropy", "kl": "actor/kl_loss", "learning_rate": "actor/lr",
             "eval_reward": "val-core/pool/reward/mean@1"}
    settings = {"actor_rollout_ref": {"rollout": {"n": config.group_size},
                                      "actor": {"optim": {"lr": config.lr}}},
                "data": {"train_batch_size": config.batch}}
    steps: dict[int, dict] = {}
    for entry in log:
        row = steps.setdefault(int(entry["step"]), {})
        row.update(entry.get(_VERL, {}))
        row.update({names[k]: v for k, v in entry.items() if k in names})
    lines = [repr(settings)]
    lines += [f"step:{n} - " + " - ".join(f"{k}:{v:.6g}" for k, v in row.items())
              for n, row in sorted(steps.items())]
    return write_atomic(path, "\n".join(lines) + "\n")
