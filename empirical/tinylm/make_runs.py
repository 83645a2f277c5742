"""Make the shipped tiny-model GRPO runs: ``python -m grpodyn.empirical.tinylm.make_runs``.

For G = 4 and G = 16 and each seed: a tiny Llama (seeded), a supervised warm-up to a sampled
accuracy in [0.25, 0.5], then TRL's GRPOTrainer on single-digit addition (16 prompts per step,
lr 1e-3 constant, Adam, KL beta 0.02); plus one run that reuses each batch of samples for four
steps (num_iterations = 4, importance-corrected with clipping); 1500 steps each. The final
model of each run is evaluated on the training family and the eight held-out families. Each
run is written as a small TRL trainer_state.json (the metrics TRL logs that grpodyn reads)
with its settings, its warm-up and its transfer scores. Needs the ``trl`` extra; about
fifteen minutes on two CPU cores.
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path
from typing import Any

from grpodyn.empirical.tinylm.training import (
    TASK_FAMILIES,
    GRPORunSettings,
    accuracy,
    build_model,
    build_tokenizer,
    run_grpo,
    warm_up,
)
from grpodyn.ground import write_atomic

DEFAULT_OUT = Path(__file__).resolve().parents[1] / "data" / "tiny_runs"
#: Settings shared by every shipped run (and by the curvature probe's re-runs).
TRAIN_SETTINGS = {"warm_up_band": (0.25, 0.5), "prompts_per_step": 16, "learning_rate": 1e-3,
                  "kl": 0.02}
#: The logged keys kept in a shipped trainer_state.json.
SHIPPED_KEYS = ("step", "reward", "reward_std", "frac_reward_zero_std", "entropy", "kl",
         "learning_rate", "loss", "grad_norm", "completions/mean_length")


def short_number(value: Any) -> Any:
    """Round a logged float to 6 significant digits (the logs ship with the package).

    Parameters
    ----------
    value : Any
        A logged value; only floats are rounded.

    Returns
    -------
    Any
        The rounded float, or ``value`` unchanged.
    """
    return float(f"{value:.6g}") if isinstance(value, float) else value


def make_run(group_size: int, seed: int, *, steps: int, num_iterations: int = 1) -> dict:
    """One warm-up plus GRPO run; returns the trainer_state dict to ship."""
    tokenizer = build_tokenizer()
    model = build_model(seed=seed)
    warm = warm_up(model, tokenizer, band=TRAIN_SETTINGS["warm_up_band"], seed=seed)
    settings = GRPORunSettings(group_size=group_size, steps=steps, seed=seed,
                               prompts_per_step=TRAIN_SETTINGS["prompts_per_step"],
                               learning_rate=TRAIN_SETTINGS["learning_rate"],
                               kl=TRAIN_SETTINGS["kl"], num_iterations=num_iterations)
    start = time.perf_counter()
    with tempfile.TemporaryDirectory() as scratch:
        result = run_grpo(model, tokenizer, settings, output_dir=scratch)
    seconds = time.perf_counter() - start
    transfer = {family: accuracy(result["model"], tokenizer, family, n=512, seed=999)
                for family in TASK_FAMILIES}
    history = [{k: short_number(h[k]) for k in SHIPPED_KEYS if k in h}
               for h in result["log_history"]]
    return {"global_step": result["global_step"], "log_history": history,
            "grpodyn_settings": settings.__dict__, "warm_up": warm, "transfer": transfer,
            "train_seconds": seconds}


def main() -> None:
    """Make the shipped tiny runs (command line: see the module docstring)."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--steps", type=int, default=1500)
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    jobs = [(g, s, 1) for g in (4, 16) for s in range(args.seeds)] + [(4, 0, 4)]
    for index, (group, seed, reuse) in enumerate(jobs, start=1):
        name = f"tiny_G{group}_seed{seed}" + (f"_reuse{reuse}" if reuse > 1 else "") + ".json"
        print(f"[{index}/{len(jobs)}] {name}", flush=True)
        write_atomic(args.out / name,
                     json.dumps(make_run(group, seed, steps=args.steps, num_iterations=reuse)))


if __name__ == "__main__":
    main()
