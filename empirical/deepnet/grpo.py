"""A small GRPO loop on the tiny Llama of ``tiny_lm``: heavy-ball SGD, refresh, staleness, reuse.

The loss is TRL's GRPO loss (``loss_type="dapo"``: token-level ratio, two-sided clip
epsilon = 0.2, token-normalised over the generation batch; k3 KL to the initial model when
``kl > 0``) with group-scaled advantages (r - mean_group) / (std_group + 1e-4), std with
Bessel's correction as TRL's ``nanstd``; ``tests/test_deepnet.py`` holds both against
GRPOTrainer on one fixed batch. The optimizer is heavy-ball SGD (``torch.optim.SGD`` with
dampening 0): theta_{n+1} = theta_n - lr g_n + momentum (theta_n - theta_{n-1}), the effective
step of docs/theory.md section 1 is a = lr exactly. Lag structures (docs/theory.md sections 1 and
5):

- ``refresh`` K with ``mode="hold"``: samples are drawn every K steps and the force computed from
  them at the refresh is applied unchanged for K steps (sample-and-hold, l(n) = n mod K, no
  importance correction);
- ``refresh`` K with ``mode="reuse"``: the samples of the refresh are reused for K steps with the
  importance ratio pi_theta / pi_old at the current weights (TRL's ``num_iterations = K``);
- ``staleness`` d: the force applied at step n was computed at step n - d (nothing is applied
  during the first d steps).
"""

from __future__ import annotations

import copy
import random
from collections import deque
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from grpodyn.empirical.tinylm.training import (
    TASK_FAMILIES,
    TRAIN_FAMILY,
    build_model,
    build_tokenizer,
    warm_up,
)

__all__ = ["SIZES", "WARM_UP_LR", "MAX_NEW_TOKENS", "Batch", "RunSettings", "warmed_model",
           "sample_batch", "group_advantages", "degenerate_share", "token_logps", "grpo_loss",
           "run"]

#: Model sizes: name -> keyword arguments of ``tiny_lm.build_model``.
SIZES: dict[str, dict[str, int]] = {"70k": {"hidden": 64, "layers": 2, "heads": 4},
                                    "330k": {"hidden": 128, "layers": 2, "heads": 4},
                                    "1m": {"hidden": 224, "layers": 2, "heads": 4}}
#: Supervised warm-up lr by size (AdamW; tiny_lm's default 3e-3 does not reach the accuracy band
#: at hidden 224 or 256 within 600 steps, 3e-4 does in 50: measured once before any GRPO run).
WARM_UP_LR: dict[str, float] = {"1m": 3e-4}
MAX_NEW_TOKENS = 4
_ADV_EPS = 1e-4  # TRL's advantage denominator offset
_CLIP = 0.2  # TRL's epsilon_low = epsilon_high default
_PAD, _EOS, _FIRST_CHAR = 0, 2, 3
_CHARS = "0123456789+-*="


@dataclass
class Batch:
    """One generation batch: prompt and completion ids, masks, rewards, sampling log-probs."""

    prompt_ids: Any  # (N, P) long
    completion_ids: Any  # (N, T) long, padded with 0 after the first eos
    completion_mask: Any  # (N, T) int, 1 up to and including the first eos
    rewards: Any  # (N,) float in {0, 1}
    group_size: int
    old_logps: Any = None  # (N, T) per-token log-probs of the sampling policy

    @property
    def advantages(self) -> Any:
        """Group-scaled advantages of TRL (scale_rewards="group")."""
        return group_advantages(self.rewards, self.group_size)


def warmed_model(size: str, seed: int) -> tuple[Any, Any, dict[str, Any]]:
    """Build the model of ``size`` from ``seed`` and warm it up into reward [0.1, 0.5].

    Returns
    -------
    tuple
        (model, tokenizer, warm-up record with ``steps`` and ``accuracy``).
    """
    if size not in SIZES:
        raise ValueError(f"unknown model size {size!r}; known: {', '.join(SIZES)}")
    tokenizer = build_tokenizer()
    model = build_model(seed=seed, **SIZES[size])
    # eager attention: the fused CPU kernel has no double backward (Hessian-vector products)
    model.set_attn_implementation("eager")
    record = warm_up(model, tokenizer, seed=seed, lr=WARM_UP_LR.get(size, 3e-3))
    record["parameters"] = int(sum(p.numel() for p in model.parameters()))
    return model, tokenizer, record


def _prompts(batch: int, group_size: int, rng: random.Random) -> tuple[list[str], list[str]]:
    pairs = [TASK_FAMILIES[TRAIN_FAMILY](rng) for _ in range(batch)]
    return ([p for p, _ in pairs for _ in range(group_size)],
            [a for _, a in pairs for _ in range(group_size)])


def _decode(ids: list[int]) -> str:
    out = []
    for i in ids:
        if i == _EOS:
            break
        if i >= _FIRST_CHAR:
            out.append(_CHARS[i - _FIRST_CHAR])
    return "".join(out)


def sample_batch(model: Any, tokenizer: Any, *, batch: int, group_size: int,
                 rng: random.Random, generator: Any) -> Batch:
    """Draw ``group_size`` completions (temperature 1, at most 4 tokens) for ``batch`` prompts.

    The prompts of the training family all have the same length, so no padding is needed; after
    the first eos the completion is padded with 0 and masked out, as TRL does.
    """
    import torch

    prompts, answers = _prompts(batch, group_size, rng)
    ids = tokenizer(prompts, return_tensors="pt", padding=True)["input_ids"]
    width = ids.shape[1]
    finished = torch.zeros(len(prompts), dtype=torch.bool)
    with torch.no_grad():
        for _ in range(MAX_NEW_TOKENS):
            logits = model(input_ids=ids).logits[:, -1].float()
            nxt = torch.multinomial(torch.softmax(logits, -1), 1, generator=generator).squeeze(1)
            nxt = torch.where(finished, torch.full_like(nxt, _PAD), nxt)
            ids = torch.cat([ids, nxt.unsqueeze(1)], dim=1)
            finished = finished | (nxt == _EOS)
            if bool(finished.all()):
                break
    completion = ids[:, width:]
    is_eos = completion == _EOS
    first = torch.where(is_eos.any(1), is_eos.int().argmax(1),
                        torch.full((len(prompts),), completion.shape[1]))
    mask = (torch.arange(completion.shape[1]).unsqueeze(0) <= first.unsqueeze(1)).int()
    rewards = torch.tensor([1.0 if _decode(row) == a else 0.0
                            for row, a in zip(completion.tolist(), answers, strict=True)])
    return Batch(ids[:, :width], completion, mask, rewards, group_size)


def group_advantages(rewards: Any, group_size: int) -> Any:
    """(r - mean_group) / (std_group + 1e-4), std with Bessel's correction (TRL's nanstd)."""
    grouped = rewards.view(-1, group_size)
    mean = grouped.mean(1, keepdim=True)
    std = grouped.std(1, keepdim=True)
    return ((grouped - mean) / (std + _ADV_EPS)).flatten()


def degenerate_share(rewards: Any, group_size: int) -> float:
    """Share of the groups whose completions all score alike (advantage 0: no force)."""
    grouped = rewards.view(-1, group_size)
    return float((grouped.max(1).values == grouped.min(1).values).float().mean())


def token_logps(model: Any, prompt_ids: Any, completion_ids: Any) -> Any:
    """Per-token log-probabilities of the completion under ``model``, shape (N, T)."""
    ids = _cat(prompt_ids, completion_ids)
    logits = model(input_ids=ids).logits[:, prompt_ids.shape[1] - 1:-1].float()
    return logits.log_softmax(-1).gather(-1, completion_ids.unsqueeze(-1)).squeeze(-1)


def _cat(a: Any, b: Any) -> Any:
    import torch

    return torch.cat([a, b], dim=1)


def grpo_loss(model: Any, batch: Batch, *, kl: float = 0.0, reference: Any = None) -> Any:
    """TRL's ``dapo`` GRPO loss of ``batch`` at the current weights (one accumulation window).

    loss = sum_tokens mask * (-min(rho A, clip(rho, 0.8, 1.2) A) + kl rho k3) / sum mask, with
    rho = exp(logp - old_logp) per token (old_logp = logp detached when the batch is fresh) and
    k3 = exp(ref - logp) - (ref - logp) - 1 (times rho, TRL's ``use_bias_correction_kl``).
    """
    import torch

    logps = token_logps(model, batch.prompt_ids, batch.completion_ids)
    old = logps.detach() if batch.old_logps is None else batch.old_logps
    ratio = torch.exp(logps - old)
    adv = batch.advantages.unsqueeze(1)
    per_token = -torch.min(ratio * adv, torch.clamp(ratio, 1 - _CLIP, 1 + _CLIP) * adv)
    if kl:
        with torch.no_grad():
            ref = token_logps(reference, batch.prompt_ids, batch.completion_ids)
        # TRL's use_bias_correction_kl (default True): the KL term is importance-weighted
        per_token = per_token + kl * (torch.exp(ref - logps) - (ref - logps) - 1) * ratio
    mask = batch.completion_mask
    return (per_token * mask).sum() / mask.sum().clamp(min=1)


@dataclass(frozen=True)
class RunSettings:
    """One GRPO run of the demonstration (heavy-ball SGD, constant learning rate)."""

    lr: float
    momentum: float = 0.0
    refresh: int = 1
    mode: str = "hold"  # "hold" (sample-and-hold) or "reuse" (importance-corrected, TRL)
    staleness: int = 0
    steps: int = 100
    batch: int = 16
    group_size: int = 8
    kl: float = 0.0
    seed: int = 0
    extra: dict = field(default_factory=dict)


def run(model: Any, tokenizer: Any, settings: RunSettings, *,
        directions: Any = None) -> dict[str, Any]:
    """Train ``model`` in place; return the per-step rewards and stability signals.

    Parameters
    ----------
    model, tokenizer
        The warmed-up tiny Llama and its tokenizer.
    settings : RunSettings
        Hyperparameters; ``refresh > 1`` and ``staleness > 0`` are exclusive.
    directions : torch.Tensor, optional
        (m, P) unit vectors: the displacement of the flat weights from the start, projected on
        them, is recorded at each step (e.g. the top Hessian eigenvectors), and so is the
        update direction -grad computed at that step (when one is computed: not on the held
        steps of sample-and-hold).

    Returns
    -------
    dict
        ``reward`` (batch mean per step), ``update_norm`` (|theta_{n+1} - theta_n| per step),
        ``update_cosine`` (cosine between successive updates), ``degenerate_share`` (share of
        the groups of the batch in use whose rewards are all alike, per step), ``projection``
        (per step, per direction, after the step, when asked), ``force_projection`` (per
        step, per direction, the fresh -grad at the weights before the step; None on a held
        step), ``finite``.
    """
    import torch

    if settings.refresh > 1 and settings.staleness > 0:
        raise ValueError("give either refresh > 1 or staleness > 0, not both")
    if settings.mode not in ("hold", "reuse"):
        raise ValueError(f"mode must be 'hold' or 'reuse', got {settings.mode!r}")
    rng = random.Random(10_000 + settings.seed)
    generator = torch.Generator().manual_seed(settings.seed)
    params = [p for p in model.parameters()]
    start = torch.nn.utils.parameters_to_vector(params).detach().clone()
    reference = None
    if settings.kl:
        reference = copy.deepcopy(model).eval()
    optimizer = torch.optim.SGD(params, lr=settings.lr, momentum=settings.momentum)
    model.train()
    rewards, norms, projections, cosines, degenerate, forces = [], [], [], [], [], []
    last_update = None
    held: list[Any] | None = None
    pending: deque = deque()
    batch = None
    finite = True
    previous = start.clone()
    for n in range(settings.steps):
        if n % settings.refresh == 0 or batch is None:
            model.eval()
            batch = sample_batch(model, tokenizer, batch=settings.batch,
                                 group_size=settings.group_size, rng=rng, generator=generator)
            model.train()
            if settings.mode == "reuse" and settings.refresh > 1:
                with torch.no_grad():
                    batch.old_logps = token_logps(model, batch.prompt_ids, batch.completion_ids)
            held = None
        rewards.append(float(batch.rewards.mean()))
        degenerate.append(degenerate_share(batch.rewards, settings.group_size))
        if settings.refresh > 1 and settings.mode == "hold" and held is not None:
            grads = held
            forces.append(None)
        else:
            optimizer.zero_grad()
            grpo_loss(model, batch, kl=settings.kl, reference=reference).backward()
            grads = [p.grad.detach().clone() for p in params]
            held = grads
            if directions is not None:
                flat = torch.cat([g.reshape(-1) for g in grads])
                forces.append((-(directions @ flat)).tolist())
        if settings.staleness:
            pending.append(grads)
            grads = pending.popleft() if len(pending) > settings.staleness else None
        for p, g in zip(params, grads or [torch.zeros_like(p) for p in params], strict=True):
            p.grad = g.clone()
        optimizer.step()
        current = torch.nn.utils.parameters_to_vector(params).detach()
        if not bool(torch.isfinite(current).all()):
            finite = False
            break
        update = current - previous
        norms.append(float(update.norm()))
        if last_update is not None:
            denominator = float(update.norm() * last_update.norm())
            cosines.append(float(update @ last_update) / denominator if denominator else 0.0)
        last_update = update
        if directions is not None:
            projections.append((directions @ (current - start)).tolist())
        previous = current.clone()
    return {"reward": rewards, "update_norm": norms, "update_cosine": cosines,
            "degenerate_share": degenerate, "projection": projections,
            "force_projection": forces if directions is not None else [], "finite": finite}


def mean_curve(curves: list[list[float]]) -> np.ndarray:
    """Mean over runs of equal-length curves (a run that stopped early is padded with NaN)."""
    width = max(len(c) for c in curves)
    table = np.full((len(curves), width), np.nan)
    for i, c in enumerate(curves):
        table[i, :len(c)] = c
    return np.nanmean(table, axis=0)
