"""Curvature-scale probe: the relaxation time of a real GRPO run without fitting its trajectory.

The mean-field theory says the expected reward drifts as dr/dn = k (r* - r) per step in the
overdamped regime (docs/theory.md sections 3 and 9), so the relaxation time is tau = 1/k. The probe
measures the drift directly at saved checkpoints, from the first-order change of the expected
reward under the optimizer's expected step:

    D = grad r . E[Delta theta] = lr * sum_j (grad r)_j g_j / (sqrt(v_hat_j) + eps),

with grad r the gradient of the expected reward (REINFORCE with a leave-one-out baseline),
g = -grad L the expected GRPO direction (TRL's ``dapo`` token-normalised loss with group-scaled
advantages and the k3 KL to the reference model) and v_hat Adam's bias-corrected second moment
saved with the checkpoint (section 9: G enters the step through v_hat). grad r and g come from
independent samples, so their product is unbiased; replicates give a jackknife standard error.
A weighted straight line D = k (r* - r) through the checkpoints gives k and r*, hence
tau = 1/k, which is then compared with the tau fitted to the same run's logged reward.

Needs the ``trl`` extra. ``python -m grpodyn.empirical.tinylm.curvature_probe`` re-runs the
G = 4 and G = 16 tiny runs with checkpoints and writes ``empirical/data/curvature_probe.json``.
"""

from __future__ import annotations

import argparse
import json
import tempfile
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from grpodyn.ground import (
    InputError,
    check_group_size,
    check_int,
    check_positive,
    write_atomic,
)
from grpodyn.numerics.fit import fit_curve

if TYPE_CHECKING:  # optional dependencies (the trl extra), for annotations only
    import torch
    from transformers import (
        PreTrainedModel as Model,
    )
    from transformers import (
        PreTrainedTokenizerFast as HFTokenizer,
    )
    from transformers import (
        TrainerControl,
        TrainerState,
        TrainingArguments,
    )

__all__ = ["ProbePoint", "ProbeFit", "AdamCheckpoint", "probe_drift", "fit_probe",
           "probe_run", "summarise_probe", "DEFAULT_OUT"]

DEFAULT_OUT = Path(__file__).resolve().parents[1] / "data" / "curvature_probe.json"
_ADV_EPS = 1e-4  # TRL's advantage denominator offset
#: Multiples of the expected Adam step at which the reward change is measured directly.
PROBE_FRACTIONS = (-1.0, -0.25, 0.25, 1.0)


@dataclass(frozen=True)
class ProbePoint:
    """Probe at one checkpoint: expected reward and predicted drift per step, with s.e."""

    step: int
    reward: float
    reward_se: float
    drift: float  # first-order expected reward change per optimizer step
    drift_se: float
    step_fractions: tuple[float, ...] = ()  # s: multiples of the expected Adam step u
    reward_change: tuple[float, ...] = ()  # r(theta + s u) - r(theta), common random numbers


@dataclass(frozen=True)
class ProbeFit:
    """Straight line D = k (r* - r) through the probe points (weighted least squares)."""

    stiffness: float  # k, 1/steps
    stiffness_se: float
    plateau: float  # r*
    plateau_se: float
    tau: float  # 1/k, steps
    tau_se: float
    n_points: int


@dataclass
class AdamCheckpoint:
    """Weights and Adam's preconditioner 1/(sqrt(v_hat) + eps) at one step."""

    step: int
    weights: dict
    preconditioner: dict  # parameter name -> tensor


def _sample(model: Model, tokenizer: HFTokenizer, pairs: list[tuple[str, str]], n: int
            ) -> tuple[Any, ...]:
    """Return n completions per prompt: ids, masks and 0/1 rewards (as TRL builds them)."""
    import torch

    from grpodyn.empirical.tinylm.training import clean_answer

    prompts = [p for p, _ in pairs for _ in range(n)]
    answers = [a for _, a in pairs for _ in range(n)]
    enc = tokenizer(prompts, return_tensors="pt", padding=True)
    with torch.no_grad():
        out = model.generate(**enc, max_new_tokens=4, do_sample=True, temperature=1.0,
                             pad_token_id=0, eos_token_id=2)
    width = enc["input_ids"].shape[1]
    completion = out[:, width:]
    is_eos = completion == 2
    first_eos = torch.where(is_eos.any(1), is_eos.int().argmax(1),
                            torch.full((len(completion),), completion.shape[1]))
    positions = torch.arange(completion.shape[1]).unsqueeze(0)
    mask = (positions <= first_eos.unsqueeze(1)).int()
    texts = tokenizer.batch_decode(completion, skip_special_tokens=True)
    rewards = torch.tensor([1.0 if clean_answer(t) == a else 0.0
                            for t, a in zip(texts, answers, strict=True)])
    return enc["input_ids"], enc["attention_mask"], completion, mask, rewards


def _token_logps(model: Model, prompt_ids: torch.Tensor, prompt_mask: torch.Tensor,
                 completion: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    import torch

    ids = torch.cat([prompt_ids, completion], dim=1)
    attention = torch.cat([prompt_mask, mask], dim=1)
    logits = model(input_ids=ids, attention_mask=attention).logits[:, prompt_ids.shape[1] - 1:-1]
    return logits.log_softmax(-1).gather(-1, completion.unsqueeze(-1)).squeeze(-1)


def _flat_grad(model: Model, loss: torch.Tensor) -> Any:
    import torch

    params = [p for _, p in model.named_parameters()]
    grads = torch.autograd.grad(loss, params, allow_unused=True)
    return torch.cat([(torch.zeros_like(p) if g is None else g).flatten()
                      for p, g in zip(params, grads, strict=True)])


def _reward_gradient(model: Model, tokenizer: HFTokenizer, pairs: list[tuple[str, str]], n: int
                     ) -> tuple[Any, ...]:
    """Unbiased grad of the expected reward and the rewards drawn (leave-one-out baseline)."""
    prompt_ids, prompt_mask, completion, mask, rewards = _sample(model, tokenizer, pairs, n)
    grouped = rewards.view(-1, n)
    baseline = (grouped.sum(1, keepdim=True) - grouped) / (n - 1)
    weight = (grouped - baseline).flatten()
    logps = _token_logps(model, prompt_ids, prompt_mask, completion, mask)
    objective = (weight * (logps * mask).sum(1)).mean()
    return _flat_grad(model, objective), rewards


def _grpo_direction(model: Model, reference: Model, tokenizer: HFTokenizer,
                    pairs: list[tuple[str, str]], group_size: int, kl: float) -> Any:
    """-grad of TRL's dapo GRPO loss (group-scaled advantages, k3 KL) at on-policy samples."""
    import torch

    prompt_ids, prompt_mask, completion, mask, rewards = _sample(model, tokenizer, pairs,
                                                                 group_size)
    grouped = rewards.view(-1, group_size)
    advantages = ((grouped - grouped.mean(1, keepdim=True))
                  / (grouped.std(1, keepdim=True) + _ADV_EPS)).flatten().unsqueeze(1)
    logps = _token_logps(model, prompt_ids, prompt_mask, completion, mask)
    per_token = -advantages * logps
    if kl:
        with torch.no_grad():
            ref = _token_logps(reference, prompt_ids, prompt_mask, completion, mask)
        per_token = per_token + kl * (torch.exp(ref - logps) - (ref - logps) - 1)
    loss = (per_token * mask).sum() / mask.sum().clamp(min=1)
    return -_flat_grad(model, loss)


def probe_drift(model: Model, reference: Model, tokenizer: HFTokenizer,
                preconditioner: dict[str, torch.Tensor] | None, *, learning_rate: float,
                group_size: int, kl: float, step: int = 0, replicates: int = 8,
                prompts_per_replicate: int = 64, samples_per_prompt: int = 8,
                step_fractions: tuple[float, ...] = (), seed: int = 0) -> ProbePoint:
    """Return the expected reward and the predicted drift per step at the model's current weights.

    Parameters
    ----------
    model, reference : the policy and the KL reference model (torch modules).
    preconditioner : flat tensor 1/(sqrt(v_hat) + eps) in ``named_parameters`` order.
    learning_rate : Adam's lr (per step).
    group_size : G of the run (the advantage scaling depends on it).
    kl : the KL coefficient beta of the run.
    replicates : independent (grad r, g) pairs; the jackknife over them gives the s.e.
    step_fractions : multiples s of the expected Adam step u = lr g / (sqrt(v_hat) + eps) at
        which the reward change is measured directly, to test the first-order drift (s D).
    """
    import torch

    from grpodyn.empirical.tinylm.training import TRAIN_FAMILY, make_prompts

    check_positive("learning_rate", learning_rate)
    check_group_size(group_size)
    check_int("replicates", replicates, minimum=2)
    check_int("samples_per_prompt", samples_per_prompt, minimum=2)
    grads_r, grads_g, rewards = [], [], []
    was_training = model.training
    model.eval()  # no dropout in the tiny Llama; eval only silences generate's warnings
    for replicate in range(replicates):
        torch.manual_seed(seed * 1000 + replicate)
        pairs = make_prompts(TRAIN_FAMILY, prompts_per_replicate, seed * 1000 + 2 * replicate)
        grad_r, drawn = _reward_gradient(model, tokenizer, pairs, samples_per_prompt)
        pairs = make_prompts(TRAIN_FAMILY, prompts_per_replicate, seed * 1000 + 2 * replicate + 1)
        grads_r.append(grad_r)
        grads_g.append(_grpo_direction(model, reference, tokenizer, pairs, group_size, kl))
        rewards.append(drawn)
    model.train(was_training)
    r_mat = torch.stack(grads_r).double()
    g_mat = (torch.stack(grads_g) * preconditioner).double()

    def drift(keep: slice | np.ndarray) -> float:
        return float(learning_rate * r_mat[keep].mean(0) @ g_mat[keep].mean(0))

    full = drift(slice(None))
    index = np.arange(replicates)
    leave_out = np.array([drift(index[index != i]) for i in range(replicates)])
    jack_se = float(np.sqrt((replicates - 1) / replicates
                            * np.sum((leave_out - leave_out.mean()) ** 2)))
    drawn = torch.cat(rewards).numpy()
    mean_step = (learning_rate * g_mat.mean(0)).float()
    change = tuple(_reward_along(model, tokenizer, mean_step, s, seed) for s in step_fractions)
    return ProbePoint(step=step, reward=float(drawn.mean()),
                      reward_se=float(drawn.std(ddof=1) / np.sqrt(drawn.size)),
                      drift=full, drift_se=jack_se, step_fractions=tuple(step_fractions),
                      reward_change=change)


def _reward_along(model: Model, tokenizer: HFTokenizer, direction: torch.Tensor, fraction: float,
                  seed: int,
                  n_prompts: int = 512, samples_per_prompt: int = 8) -> float:
    """r(theta + fraction * direction) - r(theta), both with the same prompts and random draws."""
    import torch

    from grpodyn.empirical.tinylm.training import TRAIN_FAMILY, make_prompts

    pairs = make_prompts(TRAIN_FAMILY, n_prompts, seed + 99)

    def reward() -> float:
        torch.manual_seed(seed + 99)
        return float(_sample(model, tokenizer, pairs, samples_per_prompt)[-1].mean())

    before = reward()
    params = [p for _, p in model.named_parameters()]
    sizes = [p.numel() for p in params]
    with torch.no_grad():
        for p, d in zip(params, torch.split(direction, sizes), strict=True):
            p.add_(fraction * d.view_as(p))
        after = reward()
        for p, d in zip(params, torch.split(direction, sizes), strict=True):
            p.sub_(fraction * d.view_as(p))
    return after - before


def fit_probe(points: list[ProbePoint]) -> ProbeFit:
    """Weighted straight line D = k (r* - r) through probe points; tau = 1/k (steps)."""
    if len(points) < 3:
        raise InputError(f"points: need at least 3 probe points, got {len(points)}")
    r = np.array([p.reward for p in points])
    d = np.array([p.drift for p in points])
    se = np.array([p.drift_se for p in points])
    if np.any(~np.isfinite(se)) or np.any(se <= 0):
        raise InputError("points: every drift_se must be finite and positive")
    design = np.column_stack([np.ones_like(r), r]) / se[:, None]
    coef, *_ = np.linalg.lstsq(design, d / se, rcond=None)
    covariance = np.linalg.inv(design.T @ design)
    intercept, slope = coef
    k = -slope
    if k <= 0:
        raise InputError(f"points: drift does not fall with reward (slope {slope:.3g}); "
                         "no relaxation time")
    r_star = intercept / k
    # delta method: r* = -a/b, tau = -1/b
    jac_r = np.array([-1.0 / slope, intercept / slope**2])
    jac_tau = np.array([0.0, 1.0 / slope**2])
    return ProbeFit(stiffness=float(k), stiffness_se=float(np.sqrt(covariance[1, 1])),
                    plateau=float(r_star), plateau_se=float(np.sqrt(jac_r @ covariance @ jac_r)),
                    tau=float(1.0 / k), tau_se=float(np.sqrt(jac_tau @ covariance @ jac_tau)),
                    n_points=len(points))


def _adam_preconditioner(optimizer: torch.optim.Optimizer, model: Model) -> dict:
    """1/(sqrt(v_hat) + eps) per named parameter from a torch Adam(W) optimizer's state."""
    import torch

    inner = getattr(optimizer, "optimizer", optimizer)  # accelerate wraps the optimizer
    group = inner.param_groups[0]
    beta2, eps = group["betas"][1], group["eps"]
    out = {}
    for name, param in model.named_parameters():
        state = inner.state.get(param)
        if not state:
            raise InputError(f"optimizer: no Adam state for parameter {name!r}")
        step = float(state["step"])
        v_hat = state["exp_avg_sq"] / (1.0 - beta2**step)
        out[name] = (1.0 / (torch.sqrt(v_hat) + eps)).detach().clone()
    return out


def probe_run(group_size: int, seed: int, *, steps: int = 1500, every: int = 100,
              replicates: int = 8, progress: bool = True) -> dict[str, Any]:
    """Re-run one shipped tiny-run setting with Adam checkpoints and probe each of them."""
    import torch
    from transformers import TrainerCallback

    from grpodyn.empirical.tinylm.make_runs import TRAIN_SETTINGS
    from grpodyn.empirical.tinylm.training import (
        GRPORunSettings,
        build_model,
        build_tokenizer,
        run_grpo,
        warm_up,
    )

    check_int("every", every, minimum=1)
    tokenizer = build_tokenizer()
    model = build_model(seed=seed)
    warm_up(model, tokenizer, band=TRAIN_SETTINGS["warm_up_band"], seed=seed)
    reference = build_model(seed=seed)
    reference.load_state_dict(model.state_dict())
    reference.eval()
    settings = GRPORunSettings(group_size=group_size, steps=steps, seed=seed,
                               prompts_per_step=TRAIN_SETTINGS["prompts_per_step"],
                               learning_rate=TRAIN_SETTINGS["learning_rate"],
                               kl=TRAIN_SETTINGS["kl"])
    saved: list[AdamCheckpoint] = []

    class SaveAdam(TrainerCallback):
        def on_step_end(self, args: TrainingArguments, state: TrainerState,
                        control: TrainerControl, model: Model | None = None,
                        optimizer: torch.optim.Optimizer | None = None, **kwargs: Any) -> None:
            if state.global_step % every == 0 and state.global_step < steps:
                saved.append(AdamCheckpoint(
                    state.global_step,
                    {k: v.detach().clone() for k, v in model.state_dict().items()},
                    _adam_preconditioner(optimizer, model)))

    with tempfile.TemporaryDirectory() as scratch:
        result = run_grpo(model, tokenizer, settings, output_dir=scratch, callbacks=[SaveAdam()])
    history = result["log_history"]
    logged_steps = np.array([h["step"] for h in history], dtype=float)
    logged_reward = np.array([h["reward"] for h in history], dtype=float)
    fitted = fit_curve("exponential", logged_steps, logged_reward)
    points = []
    probe_model = build_model(seed=seed)
    for index, checkpoint in enumerate(saved, start=1):
        probe_model.load_state_dict(checkpoint.weights)
        flat = torch.cat([checkpoint.preconditioner[name].flatten()
                          for name, _ in probe_model.named_parameters()])
        points.append(probe_drift(probe_model, reference, tokenizer, flat,
                                  learning_rate=settings.learning_rate, group_size=group_size,
                                  kl=settings.kl, step=checkpoint.step, replicates=replicates,
                                  step_fractions=PROBE_FRACTIONS, seed=seed + 17 * index))
        if progress:
            p = points[-1]
            print(f"  G={group_size} seed={seed} step {p.step}: r {p.reward:.3f}, "
                  f"drift {p.drift:.2e} +- {p.drift_se:.1e}", flush=True)
    try:
        probe, problem = asdict(fit_probe(points)), None
    except InputError as error:  # a finding, kept: the drift does not fall with the reward
        probe, problem = None, str(error)
    return {"group_size": group_size, "seed": seed, "steps": steps,
            "points": [asdict(p) for p in points], "probe": probe, "probe_problem": problem,
            "fitted": {"tau": fitted.params["tau"], "tau_se": fitted.stderr["tau"],
                       "r_star": fitted.params["r_star"], "r2": fitted.r2},
            "log": {"step": logged_steps.tolist(),
                    "reward": [float(f"{x:.6g}") for x in logged_reward]}}


def summarise_probe(path: str | Path = DEFAULT_OUT) -> list[dict[str, Any]]:
    """Per probed run: tau fitted vs predicted, and how far the first-order drift holds.

    ``overprediction``: median over checkpoints of the first-order drift D over the drift the
    fitted law gives at the same reward, (r* - r) / tau. ``quarter_step_linearity``: median of
    the measured reward change at a quarter of the expected Adam step over D / 4.
    ``full_step_loses``: share of checkpoints where a full expected step lowers the reward.
    Needs numpy only.
    """
    runs = json.loads(Path(path).read_text())["runs"]
    out = []
    for run in runs:
        fitted = run["fitted"]
        points = run["points"]
        observed = [(fitted["r_star"] - p["reward"]) / fitted["tau"] for p in points]
        over = [p["drift"] / o for p, o in zip(points, observed, strict=True) if o > 0]
        fractions = points[0]["step_fractions"]
        quarter = fractions.index(0.25)
        full = fractions.index(1.0)
        linear = [p["reward_change"][quarter] / (0.25 * p["drift"]) for p in points
                  if p["drift"] > 0]
        out.append({"group_size": run["group_size"], "seed": run["seed"],
                    "tau_fitted": fitted["tau"], "tau_fitted_se": fitted["tau_se"],
                    "tau_probe": None if run["probe"] is None else run["probe"]["tau"],
                    "probe_problem": run["probe_problem"], "checkpoints": len(points),
                    "overprediction": float(np.median(over)) if over else float("nan"),
                    "quarter_step_linearity": float(np.median(linear)) if linear
                    else float("nan"),
                    "full_step_loses": float(np.mean([p["reward_change"][full] < 0
                                                      for p in points]))})
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--steps", type=int, default=1500)
    parser.add_argument("--every", type=int, default=100)
    parser.add_argument("--replicates", type=int, default=8)
    parser.add_argument("--group-sizes", type=int, nargs="+", default=[4, 16])
    parser.add_argument("--append", action="store_true",
                        help="add the runs to those already in --out")
    args = parser.parse_args()
    runs = json.loads(args.out.read_text())["runs"] if args.append and args.out.is_file() else []
    for group_size in args.group_sizes:
        for seed in range(args.seeds):
            print(f"probe run G={group_size} seed={seed}", flush=True)
            runs.append({**probe_run(group_size, seed, steps=args.steps, every=args.every,
                                     replicates=args.replicates),
                         "every": args.every, "replicates": args.replicates})
            write_atomic(args.out, json.dumps({"runs": runs}, indent=1))


if __name__ == "__main__":
    main()
