"""Make the labelled tiny-model test bed: ``python -m grpodyn.empirical.tinylm.make_testbed``.

Short TRL GRPO runs of the tiny Llama (see :mod:`grpodyn.empirical.tinylm.training`), each
failure mode induced on purpose (docs/theory.md section 10), five seeds per label:

- healthy: G = 8, lr 1e-3, KL 0.1;
- reward_hacking: a length bonus (+1 for an answer of three or more characters, which is never
  correct on single-digit addition) added to correctness; the correctness reward alone is the
  verifier reward, logged as ``eval/reward``;
- advantage_degeneracy: G = 2 on an easy task (warm-up to 0.7-0.95 accuracy);
- policy_concentration: no KL and a high learning rate (3e-3), reached by a linear warm-up over
  ``--concentration-warmup`` steps (20; the runs of seeds 0-24 had none, and in 5 of 25 the first
  updates wrecked the policy: reward 0.2 -> 0 in 2-3 steps with the entropy unchanged, a failed
  induction rather than a concentrated policy);
- dynamical_instability: lr 1e-3, raised to 1e-2 at step 150, past the stability limit.

Writes one small trainer_state.json per run (metrics rounded to 6 digits) to
``studies/tiny_grids/data/tiny_testbed``, named by label and seed. Seeds 0-39 are the design
data of the diagnosis; seeds 40-49 (``--first-seed 40 --seeds 10``) were made while the
diagnosis was frozen: the independent check
(:data:`grpodyn.empirical.diagnostics.testbed.HELDOUT_SEEDS`; the rounds are recorded in
``studies/tiny_grids/README.md``). Needs the ``trl`` extra; about 15 minutes per ten seeds
(50 runs) on two idle CPU cores.
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from grpodyn.empirical.data_paths import study_path
from grpodyn.empirical.tinylm.make_runs import short_number
from grpodyn.empirical.tinylm.training import (
    GRPORunSettings,
    build_model,
    build_tokenizer,
    clean_answer,
    run_grpo,
    warm_up,
)
from grpodyn.ground import write_atomic

if TYPE_CHECKING:  # optional dependencies (the trl extra), for annotations only
    import torch
    from transformers import (
        TrainerCallback,
        TrainerControl,
        TrainerState,
        TrainingArguments,
    )

DEFAULT_OUT = study_path("tiny_grids", "tiny_testbed")
_KEPT = ("step", "reward", "reward_std", "frac_reward_zero_std", "entropy", "kl",
         "learning_rate", "grad_norm", "completions/mean_length", "rewards/correct/mean")

#: label -> (warm-up band, GRPO settings without seed, whether a length bonus is added)
CASES: dict[str, tuple[tuple[float, float], dict, bool]] = {
    "healthy": ((0.25, 0.5), {"group_size": 8, "learning_rate": 1e-3, "kl": 0.1}, False),
    "reward_hacking": ((0.25, 0.5), {"group_size": 8, "learning_rate": 1e-3, "kl": 0.02},
                       True),
    "advantage_degeneracy": ((0.7, 0.95), {"group_size": 2, "learning_rate": 1e-3,
                                           "kl": 0.02}, False),
    "policy_concentration": ((0.25, 0.5), {"group_size": 8, "learning_rate": 3e-3, "kl": 0.0},
                             False),
    "dynamical_instability": ((0.25, 0.5), {"group_size": 8, "learning_rate": 1e-3,
                                            "kl": 0.02}, False),
}
#: label -> (step, learning rate): the learning rate jumps past the stability limit mid-run, so
#: that the log holds the level the run collapses from (an lr of 1e-2 from the start kills the
#: policy within the first updates, before the log shows anything but the wreck)
LR_JUMPS: dict[str, tuple[int, float]] = {"dynamical_instability": (150, 1e-2)}


def _lr_jump_callback(step: int, learning_rate: float) -> TrainerCallback:
    from transformers import TrainerCallback

    class LearningRateJump(TrainerCallback):
        def on_step_begin(self, args: TrainingArguments, state: TrainerState,
                          control: TrainerControl, optimizer: torch.optim.Optimizer | None = None,
                          lr_scheduler: Any = None, **kwargs: Any) -> None:
            if state.global_step == step:
                if lr_scheduler is not None:
                    lr_scheduler.base_lrs = [learning_rate] * len(lr_scheduler.base_lrs)
                for group in getattr(optimizer, "param_groups", []):
                    group["lr"] = learning_rate

    return LearningRateJump()


def length_bonus(completions: list[str], **_: Any) -> list[float]:
    """+1 for three or more characters: a hackable format reward."""
    return [1.0 if len(clean_answer(c)) >= 3 else 0.0 for c in completions]


def make_case(label: str, seed: int, *, steps: int, concentration_warmup: int = 20) -> dict:
    """Run one labelled case of the test bed and return its trainer_state dict.

    Parameters
    ----------
    label : str
        A key of :data:`CASES` (the failure mode induced).
    seed : int
        Seed of the model, the warm-up and the GRPO run.
    steps : int
        GRPO steps.
    concentration_warmup : int
        Extra warm-up steps of the policy-concentration case.

    Returns
    -------
    dict
        The trainer_state-like dict that is shipped (log history, settings, label).
    """
    band, grpo, hackable = CASES[label]
    tokenizer = build_tokenizer()
    model = build_model(seed=seed)
    warm = warm_up(model, tokenizer, band=band, seed=seed, max_steps=1500)
    if label == "policy_concentration":
        grpo = {**grpo, "warmup_steps": concentration_warmup}
    settings = GRPORunSettings(prompts_per_step=8, steps=steps, seed=seed, **grpo)
    start = time.perf_counter()
    with tempfile.TemporaryDirectory() as scratch:
        jump = LR_JUMPS.get(label)
        result = run_grpo(model, tokenizer, settings, output_dir=scratch,
                          extra_rewards=[length_bonus] if hackable else None,
                          callbacks=[_lr_jump_callback(*jump)] if jump else None)
    history = []
    for h in result["log_history"]:
        entry = {k: short_number(h[k]) for k in _KEPT if k in h}
        if hackable:  # the verifier's reward, tracked beside the optimised one
            entry["eval/reward"] = entry.pop("rewards/correct/mean")
        else:
            entry.pop("rewards/correct/mean", None)
        history.append(entry)
    return {"global_step": result["global_step"], "log_history": history, "label": label,
            "grpodyn_settings": settings.__dict__, "warm_up": warm,
            "train_seconds": time.perf_counter() - start}


def main() -> None:
    """Make the test bed runs (command line: see the module docstring)."""
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    parser.add_argument("--seeds", type=int, default=5, help="runs per label")
    parser.add_argument("--first-seed", type=int, default=0,
                        help="seed of the first run; fresh seeds make a held-out test bed")
    parser.add_argument("--steps", type=int, default=300)
    parser.add_argument("--labels", nargs="+", default=list(CASES), choices=list(CASES))
    parser.add_argument("--concentration-warmup", type=int, default=20,
                        help="steps of linear learning-rate warm-up of the concentration runs "
                             "(0 remakes seeds 0-24 as shipped)")
    args = parser.parse_args()
    if args.seeds < 1 or args.first_seed < 0 or args.concentration_warmup < 0:
        parser.error("--seeds must be at least 1, --first-seed and --concentration-warmup "
                     "not negative")
    args.out.mkdir(parents=True, exist_ok=True)
    seeds = range(args.first_seed, args.first_seed + args.seeds)
    jobs = [(label, seed) for seed in seeds for label in args.labels]
    for index, (label, seed) in enumerate(jobs, start=1):
        print(f"[{index}/{len(jobs)}] {label} seed {seed}", flush=True)
        write_atomic(args.out / f"{label}_seed{seed}.json",
                     json.dumps(make_case(label, seed, steps=args.steps,
                                          concentration_warmup=args.concentration_warmup)))


if __name__ == "__main__":
    main()
