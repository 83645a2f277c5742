"""A second labelled simulator of GRPO runs: tabular categorical policies under heavy ball.

Unlike the bandit test bed (one softmax over arms, shared by every prompt) and the prompt-pool
simulator (a logistic success rate per prompt from shared features, Adam): every prompt here
has its own categorical policy over K candidate answers (one correct, each with its own token
length), sharpened by a shared inverse temperature exp(rho), and a shared verbosity u that
scales every length (lengths drawn log-normally around l_k exp(u)). Updates are heavy ball
(v <- beta v + g; params += lr v) on the GRPO direction of groups of G answers, from the
policy of ``staleness`` steps ago, with a KL pull to the reference. The families:

- ``healthy``: the verifier's reward, a KL pull, moderate lr;
- ``not_learning``: a negligible lr;
- ``reward_hacking``: a learned reward model pays correctness plus a length bonus that drifts
  upwards as it is refit on the policy's samples; it comes to prefer a long wrong answer over
  the short right one, and the verifier's accuracy (the held-out reward) stops following;
- ``advantage_degeneracy``: hard prompts (the right answer rarely sampled) and G = 2 or 3;
- ``policy_concentration``: no KL pull, a high lr on the shared temperature: the prompts that
  are right sharpen it, the others lock onto their wrong answers;
- ``limit_cycle``: heavy ball with momentum 0.9-0.97 and stale updates (d = 3-6) past the
  stability limit: the reward oscillates, bounded by the softmax;
- ``length_collapse``: a length bonus drives the verbosity up until completions reach the
  length cap, where they are truncated and score 0: the reward collapses.

Logs are TRL ``trainer_state.json`` files, with or without the zero-std share, the entropy, the
KL and the evaluation entries, with or without a ``training_args.json`` beside them that gives
G. Their ``epoch`` has TRL's meaning, passes over the dataset: B/N_p a step for B prompts a step
from a pool of N_p (format fidelity: the diagnosis reads the sampling fraction from it). The
prompts of a step are drawn without replacement independently of the step before, where the
trainers deal each epoch's shuffle in disjoint batches; the between-prompt part of the step
reward's change is then lower than a trainer's ((N_p - B)/(N_p - 1) of a fresh draw's, against
(N_p - B^2/N_p)/(N_p - 1); module ``fluctuation`` of the diagnosis).

Each run is labelled from the simulator's own exact state by :func:`label_of`, a rule fixed
before any run was diagnosed. Its limit-cycle rule calls healthy runs whose policy cycles
with an amplitude under its fixed threshold, or whose success collapsed below its start;
:func:`label_sustained` labels that family from the dynamics instead: it asks the simulator
whether the oscillation is the map's own (it survives when the sampling noise
is cut) and whether the success collapsed. Needs numpy.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, replace
from pathlib import Path

import numpy as np

from grpodyn.ground import write_atomic

__all__ = ["FAMILIES", "SimConfig", "settings", "simulate", "label_of", "label_sustained",
           "sustained_oscillation", "write_run"]

FAMILIES = ("healthy", "not_learning", "reward_hacking", "advantage_degeneracy",
            "policy_concentration", "limit_cycle", "length_collapse")
_CAP = 1024  # tokens: completions longer than this are truncated and score 0
#: the quiet copy of a run has this many times the group size: its sampling noise's standard
#: deviation is a quarter of the run's
_QUIET = 16


@dataclass(frozen=True)
class SimConfig:
    """Settings of one run (units: steps, prompts, answers, tokens)."""

    steps: int = 300
    prompts: int = 48
    answers: int = 6  # K
    batch: int = 16  # prompts per step
    group_size: int = 8  # G
    difficulty: float = 0.0  # the right answer's reference logit over the others' mean
    lr: float = 0.5
    momentum: float = 0.5
    staleness: int = 0
    kl: float = 0.05
    temperature_lr: float = 0.0  # lr multiplier of the shared inverse temperature rho
    length_bonus: float = 0.0  # reward per unit of length / cap (verbosity pressure)
    bonus_drift: float = 0.0  # growth of the reward model's length bonus over the run
    verbosity_lr: float = 0.0  # lr multiplier of the shared verbosity u
    eval_every: int = 10
    eval_samples: int = 4  # answers per prompt at an evaluation


def settings(family: str, seed: int) -> SimConfig:
    """Draw the settings of ``family`` from ``seed``."""
    rng = np.random.default_rng([FAMILIES.index(family), seed, 31])
    u = rng.uniform
    g = int(rng.choice([4, 8, 16]))
    if family == "healthy":
        return SimConfig(difficulty=u(-0.5, 1.0), lr=u(0.3, 0.8), kl=u(0.02, 0.08),
                         group_size=g)
    if family == "not_learning":
        return SimConfig(difficulty=u(-0.5, 1.0), lr=u(1e-4, 1e-3), group_size=g)
    if family == "reward_hacking":
        return SimConfig(difficulty=u(0.0, 1.0), lr=u(0.4, 0.8), kl=u(0.0, 0.02),
                         length_bonus=u(0.5, 0.8), bonus_drift=u(4.0, 6.0), group_size=g)
    if family == "advantage_degeneracy":
        return SimConfig(difficulty=u(-4.5, -3.5), lr=u(0.05, 0.2), kl=0.0,
                         group_size=int(rng.choice([2, 3])))
    if family == "policy_concentration":
        return SimConfig(difficulty=u(-0.5, 0.5), lr=u(1.0, 2.0), kl=0.0, momentum=0.0,
                         temperature_lr=u(0.3, 0.6), group_size=g)
    if family == "limit_cycle":
        return SimConfig(difficulty=u(-0.5, 0.5), lr=u(4.0, 8.0), momentum=u(0.93, 0.97),
                         staleness=int(rng.integers(3, 7)), kl=u(0.1, 0.3), group_size=g,
                         batch=48)
    if family == "length_collapse":
        return SimConfig(difficulty=u(0.0, 1.0), lr=u(0.4, 0.8), momentum=u(0.95, 0.98),
                         kl=0.0, length_bonus=u(0.4, 0.8), verbosity_lr=u(0.05, 0.15),
                         group_size=g)
    raise ValueError(f"family: unknown {family!r}; known: {', '.join(FAMILIES)}")


def _softmax(z: np.ndarray) -> np.ndarray:
    z = z - z.max(axis=-1, keepdims=True)
    e = np.exp(z)
    return e / e.sum(axis=-1, keepdims=True)


def _entropy(p: np.ndarray) -> np.ndarray:
    return -np.sum(p * np.log(np.clip(p, 1e-300, None)), axis=-1)


class _Task:
    """The prompts: reference logits, answer lengths, the right answer (index 0)."""

    def __init__(self, c: SimConfig, rng: np.random.Generator) -> None:
        self.logits = rng.normal(0.0, 1.0, size=(c.prompts, c.answers))
        self.logits[:, 0] += c.difficulty + rng.normal(0.0, 0.7, size=c.prompts)
        self.length = rng.uniform(150, 450, size=(c.prompts, c.answers))
        self.length[:, 0] = rng.uniform(120, 250, size=c.prompts)  # the right answer is short
        self.length[:, 1] = rng.uniform(550, 700, size=c.prompts)  # a long wrong answer


def _reward(c: SimConfig, correct: np.ndarray, length: np.ndarray, step: int) -> np.ndarray:
    """Return the optimised reward: the verifier's, or a reward model's with a length bonus."""
    bonus = c.length_bonus * (1.0 + c.bonus_drift * step / c.steps)
    value = correct + bonus * np.minimum(length, _CAP) / _CAP
    return np.where(length > _CAP, 0.0, value)  # truncated: no answer to grade


def _exact(c: SimConfig, task: _Task, theta: np.ndarray, rho: float, u: float,
           step: int) -> tuple[float, float, float, float]:
    """Exact verifier success, optimised reward, entropy and zero-std share at the policy."""
    p = _softmax(np.exp(rho) * theta)
    sd = 0.25
    z = (np.log(_CAP) - np.log(task.length) - u) / sd
    from math import erf, sqrt

    fits = 0.5 * (1 + np.vectorize(erf)(z / sqrt(2)))  # P(length <= cap)
    success = float(np.mean(np.sum(p[:, :1] * fits[:, :1], axis=1)))
    mean_len = task.length * np.exp(u + sd**2 / 2)
    reward = float(np.mean(np.sum(p * fits * _reward(c, np.eye(c.answers)[0][None, :],
                                                     np.minimum(mean_len, _CAP), step), axis=1)))
    q = np.sum(p[:, :1] * fits[:, :1], axis=1)
    zero_std = float(np.mean(q**c.group_size + (1 - q) ** c.group_size))
    return success, reward, float(np.mean(_entropy(p))), zero_std


def _step_grad(c: SimConfig, task: _Task, params: tuple, idx: np.ndarray,
               rng: np.random.Generator, step: int) -> tuple[np.ndarray, float, float, dict]:
    """Sample groups at ``params`` (theta, rho, u) and return the GRPO direction and metrics."""
    theta, rho, u = params
    scaled = np.exp(rho) * theta[idx]
    p = _softmax(scaled)
    cum = np.cumsum(p, axis=1)
    draws = (rng.random((idx.size, c.group_size, 1)) > cum[:, None, :]).sum(axis=2)
    draws = np.minimum(draws, c.answers - 1)
    noise = rng.normal(0.0, 1.0, size=draws.shape)
    length = task.length[idx[:, None], draws] * np.exp(u + 0.25 * noise)
    correct = (draws == 0).astype(float)
    reward = _reward(c, correct, length, step)
    std = reward.std(axis=1, ddof=1, keepdims=True)
    adv = (reward - reward.mean(axis=1, keepdims=True)) / (std + 1e-4)
    onehot = np.eye(c.answers)[draws]  # (B, G, K)
    score = onehot - p[:, None, :]  # d log pi / d scaled logits
    g_theta = np.zeros_like(theta)
    np.add.at(g_theta, idx, np.exp(rho) * np.einsum("bg,bgk->bk", adv, score))
    g_rho = float(np.einsum("bg,bgk,bk->", adv, score, scaled))
    g_u = float(np.sum(adv * noise / 0.25))
    n = idx.size * c.group_size
    metrics = {"reward": float(reward.mean()), "reward_std": float(reward.std(ddof=1)),
               "frac_reward_zero_std": float(np.mean(std[:, 0] == 0)),
               "completion_length": float(np.minimum(length, _CAP).mean()),
               "completions/clipped_ratio": float(np.mean(length > _CAP))}
    # each prompt's own logits: the mean over its group; the shared parameters: over the batch
    return g_theta / c.group_size, g_rho / n, g_u / n, metrics


def simulate(config: SimConfig, *, seed: int) -> tuple[list[dict], np.ndarray]:
    """Run one simulation.

    Returns
    -------
    log : list of dict
        TRL ``log_history`` (train entries, and ``eval_reward`` entries every ``eval_every``).
    truth : ndarray, shape (steps + 1, 4)
        Exact verifier success, optimised reward, mean entropy (nats) and zero-std share at
        each step's policy (row 0: the start).
    """
    c = config
    rng = np.random.default_rng(seed)
    task = _Task(c, rng)
    theta, rho, u = task.logits.copy(), 0.0, 0.0
    reference = task.logits.copy()
    velocity = [np.zeros_like(theta), 0.0, 0.0]
    history = [(theta.copy(), rho, u)]
    truth = [_exact(c, task, theta, rho, u, 0)]
    log: list[dict] = []
    for n in range(c.steps):
        sampler = history[max(0, len(history) - 1 - c.staleness)]
        idx = rng.choice(c.prompts, size=c.batch, replace=False)
        g_theta, g_rho, g_u, metrics = _step_grad(c, task, sampler, idx, rng, n)
        g_theta = g_theta - c.kl * (theta - reference)
        velocity = [c.momentum * velocity[0] + g_theta, c.momentum * velocity[1] + g_rho,
                    c.momentum * velocity[2] + g_u]
        theta = theta + c.lr * velocity[0]
        rho = rho + c.lr * c.temperature_lr * velocity[1]
        u = u + c.lr * c.verbosity_lr * velocity[2] - c.kl * u
        history = (history + [(theta.copy(), rho, u)])[-(c.staleness + 2):]
        p = _softmax(np.exp(rho) * theta[idx])
        p_ref = _softmax(reference[idx])
        entry = {"step": n + 1, "epoch": (n + 1) * c.batch / c.prompts, "learning_rate": c.lr,
                 **metrics,
                 "entropy": float(np.mean(_entropy(p))),
                 "kl": float(np.mean(np.sum(p * np.log(np.clip(p / p_ref, 1e-300, None)),
                                            axis=1)))}
        log.append(entry)
        truth.append(_exact(c, task, theta, rho, u, n + 1))
        if (n + 1) % c.eval_every == 0:
            pe = _softmax(np.exp(rho) * theta)
            hits = rng.random((c.prompts, c.eval_samples)) < pe[:, :1]
            length_ok = rng.random((c.prompts, c.eval_samples)) < _fits_right(task, u)[:, None]
            log.append({"step": n + 1, "eval_reward": float(np.mean(hits & length_ok))})
    return log, np.array(truth)


def _fits_right(task: _Task, u: float) -> np.ndarray:
    """P(the right answer fits under the cap) per prompt at verbosity u."""
    from math import erf, sqrt

    z = (np.log(_CAP) - np.log(task.length[:, 0]) - u) / 0.25
    return 0.5 * (1 + np.vectorize(erf)(z / sqrt(2)))


def label_of(family: str, truth: np.ndarray) -> str:
    """Label a run from its exact state (the rule fixed before any run was diagnosed).

    Columns of ``truth``: verifier success, optimised reward, entropy, zero-std share. Start:
    row 0; end: the mean of the last quarter; the best: the highest 10-step mean.

    - healthy / not_learning families: ``not_learning`` when the success moved less than 0.03,
      else ``healthy``;
    - ``reward_hacking``: kept when the optimised reward rose 0.1 or more while the success
      ended at most 0.02 above its start or 0.05 or more below its best, else ``healthy``;
    - ``advantage_degeneracy``: kept when the success ended below 0.5 with a zero-std share of
      0.6 or more, else ``healthy``;
    - ``policy_concentration``: kept when the success ended below 0.97 with the entropy under a
      fifth of its start, else ``healthy``;
    - ``limit_cycle``: ``dynamical_instability`` when the success's deviations from its 50-step
      mean over the second half have a standard deviation of 0.05 or more (it oscillates),
      else ``healthy``;
    - ``length_collapse``: ``dynamical_instability`` when the success ended below half its best
      (it collapsed) or oscillates as above (completions keep running into the cap), else
      ``healthy``.
    """
    n = truth.shape[0]
    late = truth[n - n // 4:].mean(axis=0)
    start = truth[0]
    best = np.convolve(truth[:, 0], np.ones(10) / 10, mode="valid").max()
    if family in ("healthy", "not_learning"):
        return "not_learning" if abs(late[0] - start[0]) < 0.03 else "healthy"
    if family == "reward_hacking":
        decoupled = late[0] <= start[0] + 0.02 or late[0] <= best - 0.05
        return family if late[1] - start[1] >= 0.1 and decoupled else "healthy"
    if family == "advantage_degeneracy":
        return family if late[0] < 0.5 and late[3] >= 0.6 else "healthy"
    if family == "policy_concentration":
        return family if late[0] < 0.97 and late[2] < 0.2 * start[2] else "healthy"
    oscillates = _oscillation(truth[:, 0]) >= 0.05
    if family == "limit_cycle":
        return "dynamical_instability" if oscillates else "healthy"
    if family == "length_collapse":
        collapsed = late[0] < 0.5 * best
        return "dynamical_instability" if collapsed or oscillates else "healthy"
    raise ValueError(f"family: unknown {family!r}")


def _oscillation(success: np.ndarray) -> float:
    """Return the std of the success's deviations from its 50-step mean over the second half."""
    half = success[success.size // 2:]
    trend = np.convolve(half, np.ones(50) / 50, mode="same")
    return float(np.std((half - trend)[25:-25]))


def sustained_oscillation(config: SimConfig, truth: np.ndarray, *, seed: int) -> dict:
    """Ask the simulator whether the success's oscillation is the map's own or the noise's.

    The run is repeated with the same seed and ``_QUIET`` times the group size, so its sampling
    noise has a quarter of the standard deviation. A fluctuation that the noise drives through
    a stable map shrinks with it (to a quarter); a limit cycle, an unstable linear mode held by
    the softmax's saturation, keeps its amplitude whatever the noise. The oscillation is
    sustained when, in the quiet copy, it keeps at least half its amplitude (the geometric
    middle of 1 and 1/4) and stands above that copy's own sampling noise of one step's reward,
    sqrt(m (1 - m) / (B G)) at the second half's mean success m.

    Returns
    -------
    dict
        ``sustained`` (bool), ``amplitude`` and ``quiet_amplitude`` (standard deviations of the
        success's deviations from its 50-step mean over the second half), ``quiet_noise``.
    """
    quiet = replace(config, group_size=config.group_size * _QUIET)
    _, calm = simulate(quiet, seed=seed)
    amplitude, kept = _oscillation(truth[:, 0]), _oscillation(calm[:, 0])
    m = float(np.mean(calm[calm.shape[0] // 2:, 0]))
    noise = float(np.sqrt(max(m * (1 - m), 0.0) / (quiet.batch * quiet.group_size)))
    return {"sustained": bool(kept >= 0.5 * amplitude and kept > noise),
            "amplitude": amplitude, "quiet_amplitude": kept, "quiet_noise": noise}


def label_sustained(family: str, truth: np.ndarray, *, config: SimConfig, seed: int) -> str:
    """Label a run as :func:`label_of` does, with the limit cycles read from the dynamics.

    For ``limit_cycle``: ``dynamical_instability`` when the success ended below half its best
    10-step mean (it collapsed, the rule :func:`label_of` applies to ``length_collapse``) or
    its oscillation is sustained (:func:`sustained_oscillation`), else ``healthy``. Every other
    family keeps :func:`label_of`'s label: ``length_collapse``'s swings (completions running
    into the cap, 0.1-0.2 in standard deviation) are failures whether the noise drives them or
    not. ``seed`` is the simulation's seed (the quiet copy reuses it).
    """
    if family != "limit_cycle":
        return label_of(family, truth)
    n = truth.shape[0]
    best = np.convolve(truth[:, 0], np.ones(10) / 10, mode="valid").max()
    collapsed = truth[n - n // 4:, 0].mean() < 0.5 * best
    if collapsed or sustained_oscillation(config, truth, seed=seed)["sustained"]:
        return "dynamical_instability"
    return "healthy"


def write_run(folder: Path, log: list[dict], *, config: SimConfig, keys: str, with_g: bool,
              label: str, seed: int) -> Path:
    """Write one run as TRL's ``trainer_state.json`` in its own folder.

    ``keys``: ``"full"`` (every metric, the share of completions truncated at the cap as TRL's
    ``completions/clipped_ratio``, and the evaluations), ``"no_spread"`` (no zero-std share nor
    reward std), ``"no_entropy"`` (no entropy nor KL) or ``"reward_only"`` (the reward, the
    length and the evaluations); only ``"full"`` has the truncated share. ``with_g`` writes
    ``training_args.json`` with G, B and the cap (``max_completion_length``) beside.
    """
    clipped = "completions/clipped_ratio"
    drop = {"full": set(), "no_spread": {"frac_reward_zero_std", "reward_std", clipped},
            "no_entropy": {"entropy", "kl", clipped},
            "reward_only": {"frac_reward_zero_std", "reward_std", "entropy", "kl", clipped}}[keys]
    history = [{k: v for k, v in entry.items() if k not in drop} for entry in log]
    folder.mkdir(parents=True, exist_ok=True)
    content = {"log_history": history, "global_step": config.steps, "label": label,
               "simulator_settings": {"seed": seed, **asdict(config)}}
    path = write_atomic(folder / "trainer_state.json", json.dumps(content))
    if with_g:
        write_atomic(folder / "training_args.json", json.dumps(
            {"num_generations": config.group_size, "per_device_train_batch_size":
             config.batch * config.group_size, "gradient_accumulation_steps": 1,
             "max_completion_length": _CAP}))
    return path
