"""Make the controlled tiny-model sweep grid: ``python -m grpodyn.empirical.tinylm.make_grid``.

Real TRL GRPO runs of the tiny Llama (:mod:`grpodyn.empirical.tinylm.training`) on single-digit
addition, one knob changed at a time, for the sweep fit and the transfer predictions
(THEORY.md section 9, docs/findings.md). For each optimizer (Adam, i.e. TRL's AdamW with
beta1 0.9, beta2 0.999, no weight decay; and heavy-ball SGD with momentum 0.9):

- three learning rates, a factor 2 apart, at the centre setting G = 4 completions, B = 8
  prompts per step (Adam 3e-4, 6e-4, 1.2e-3; SGD 0.005, 0.01, 0.02);
- a cross in G and B at the middle learning rate: G in {2, 8} at B = 8 and B in {4, 16} at
  G = 4, so that two pairs share the product B G (16 and 64) with different G: the test of
  Adam's B G collapse against G-invariance.

The learning rates were chosen from short calibration runs (G = 8, B = 8, 120 steps, seed 0):
Adam 5e-4 and SGD 0.01 learned; Adam 2e-3 at G = B = 4 and SGD 0.03 or more drove the reward
to zero within 100 steps.

KL beta 0.02, constant learning rate, one optimizer step per generation, 240 steps
(``--steps``), seeds ``--first-seed`` .. (three by default). The supervised warm-up (to a sampled
accuracy in [0.25, 0.5]) depends only on the seed, so it is made once per seed and every run of
that seed starts from the same warmed-up weights. One thread, so that it can run beside other
work. Each run is written atomically as a small TRL trainer_state.json with its
hyperparameters (``grpodyn_settings`` in TRL's names and ``grpodyn_hparams`` in grpodyn's
``--hparams`` names) to ``empirical/data/tiny_grid``; a run whose file exists is skipped, so the
script resumes where it stopped. Needs the ``trl`` extra.
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path

from grpodyn.empirical.tinylm.make_runs import SHIPPED_KEYS, short_number
from grpodyn.empirical.tinylm.training import (
    GRPORunSettings,
    build_model,
    build_tokenizer,
    run_grpo,
    warm_up,
)
from grpodyn.ground import write_atomic

DEFAULT_OUT = Path(__file__).resolve().parents[1] / "data" / "tiny_grid"
#: optimizer -> (its three learning rates, low to high; TRL optim name; optim_args; beta1)
OPTIMIZERS: dict[str, tuple[tuple[float, float, float], str | None, str | None, float]] = {
    "adam": ((3e-4, 6e-4, 1.2e-3), None, None, 0.9),
    "sgd": ((0.005, 0.01, 0.02), "sgd", "momentum=0.9", 0.9),
}
CENTRE = (4, 8)  # (G, B)
CROSS = ((2, 8), (8, 8), (4, 4), (4, 16))
KL = 0.02
WARM_UP_BAND = (0.25, 0.5)


def settings_grid() -> list[tuple[str, float, int, int]]:
    """Return the (optimizer, lr, G, B) settings of the grid, each made once per seed."""
    grid = []
    for name, (lrs, *_rest) in OPTIMIZERS.items():
        grid += [(name, lr, *CENTRE) for lr in lrs]
        grid += [(name, lrs[1], g, b) for g, b in CROSS]
    return grid


def run_name(optimizer: str, lr: float, group: int, batch: int, seed: int) -> str:
    """File name of one run, e.g. ``adam_lr0.002_G4_B4_seed0.json``."""
    return f"{optimizer}_lr{lr:g}_G{group}_B{batch}_seed{seed}.json"


def make_run(optimizer: str, lr: float, group: int, batch: int, seed: int, *, steps: int,
             warm_state: dict, warm: dict) -> dict:
    """One GRPO run from the seed's warmed-up weights; returns the trainer_state to ship."""
    _lrs, optim, optim_args, beta1 = OPTIMIZERS[optimizer]
    tokenizer = build_tokenizer()
    model = build_model(seed=seed)
    model.load_state_dict(warm_state)
    settings = GRPORunSettings(group_size=group, prompts_per_step=batch, steps=steps,
                               learning_rate=lr, kl=KL, seed=seed, optim=optim,
                               optim_args=optim_args)
    start = time.perf_counter()
    with tempfile.TemporaryDirectory() as scratch:
        result = run_grpo(model, tokenizer, settings, output_dir=scratch)
    history = [{k: short_number(h[k]) for k in SHIPPED_KEYS if k in h}
               for h in result["log_history"]]
    hparams = {"optimizer": optimizer, "lr": lr, "momentum": beta1, "group_size": group,
               "batch": batch, "kl": KL, "num_iterations": 1, "schedule": "constant",
               "warmup": 0, "steps": steps, "seed": seed}
    return {"global_step": result["global_step"], "log_history": history,
            "grpodyn_settings": settings.__dict__, "grpodyn_hparams": hparams,
            "warm_up": warm, "train_seconds": time.perf_counter() - start}


def main() -> None:
    """Make the missing runs of the grid (command line: see the module docstring)."""
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--first-seed", type=int, default=0)
    parser.add_argument("--steps", type=int, default=240)
    parser.add_argument("--optimizers", nargs="+", default=list(OPTIMIZERS),
                        choices=list(OPTIMIZERS))
    args = parser.parse_args()
    if args.seeds < 1 or args.first_seed < 0 or args.steps < 10:
        parser.error("--seeds must be at least 1, --first-seed not negative, --steps >= 10")
    import torch

    torch.set_num_threads(1)
    args.out.mkdir(parents=True, exist_ok=True)
    grid = [s for s in settings_grid() if s[0] in args.optimizers]
    seeds = range(args.first_seed, args.first_seed + args.seeds)
    jobs = [(*setting, seed) for seed in seeds for setting in grid]
    warmed: dict[int, tuple[dict, dict]] = {}
    for index, job in enumerate(jobs, start=1):
        path = args.out / run_name(*job)
        if path.exists():
            continue
        seed = job[-1]
        if seed not in warmed:
            warmed.clear()
            model = build_model(seed=seed)
            warm = warm_up(model, build_tokenizer(), band=WARM_UP_BAND, seed=seed)
            warmed[seed] = ({k: v.detach().clone() for k, v in model.state_dict().items()},
                            warm)
        print(f"[{index}/{len(jobs)}] {path.name}", flush=True)
        state, warm = warmed[seed]
        write_atomic(path, json.dumps(make_run(*job, steps=args.steps, warm_state=state,
                                               warm=warm)))


if __name__ == "__main__":
    main()
