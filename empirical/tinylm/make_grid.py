"""Make a controlled tiny-model sweep grid: ``python -m grpodyn.empirical.tinylm.make_grid``.

Real TRL GRPO runs of the tiny Llama (:mod:`grpodyn.empirical.tinylm.training`) on single-digit
addition, one knob changed at a time, for the sweep fit and the transfer predictions
(docs/theory.md sections 7 and 9, ``studies/transfer/README.md``), and the lr sweeps that
score the advice (``benchmarks/advice.py --tiny-grids``). Four designs (``--design``), each
for Adam (TRL's AdamW, beta1 0.9, beta2 0.999, no weight decay) and heavy-ball SGD (momentum
0.9): the first two have three learning rates a factor 2 apart at a centre (G, B), and a cross
in G and B at the middle learning rate with two pairs of equal B G and different G (the test
of Adam's B G collapse against G-invariance); the third extends the second's lrs upward; the fourth
lowers them and quadruples the prompts per step.

- ``grid1`` (``studies/tiny_grids/data/tiny_grid``): centre G 4, B 8; Adam 3e-4, 6e-4,
  1.2e-3; SGD 0.005, 0.01, 0.02; cross G {2, 8} at B 8, B {4, 16} at G 4; warm-up to a sampled
  accuracy in [0.25, 0.5]; 240 steps. The top learning rates sat just below collapse.
- ``grid2`` (``studies/tiny_grids/data/tiny_grid2``): centre G 8, B 8; Adam 1e-4, 2e-4,
  4e-4; SGD 0.0015, 0.003, 0.006 (top lr 1/3 of the lr at which the calibration saw the reward
  drop first: Adam 1.2e-3, SGD 0.02 at G 8, B 8); cross G {4, 16} at B 8, B {4, 16} at G 8
  (pairs B G = 32 and 128); warm-up to [0.3, 0.45]; 360 steps. Seeds 0-2 are the design data;
  the later seeds were made in pairs as held-out scores (``--first-seed K --seeds N --out DIR``:
  an existing seed is skipped, the new ones follow setting by setting); which pair scored
  which method is recorded in ``studies/tiny_grids/README.md``.
- ``grid2_high`` (``studies/tiny_grids/data/tiny_grid2_high``): grid2's centre, warm-up and
  length at the learning rates above it, Adam 1.2e-3 and 3.6e-3, SGD 0.02 and 0.06 (the
  calibration's first drop and three times it); with grid2's runs of the same seed (the same
  warmed-up weights) each seed is an lr sweep over a factor 36 that reaches the collapse, the
  sweep that ``benchmarks/advice.py --tiny-grids`` scores the advice on.
- ``climb`` (``studies/tiny_grids/data/tiny_climb``): grid2's warm-up and length at its two
  lower lrs and half its lowest (Adam 5e-5, 1e-4, 2e-4; SGD 0.00075, 0.0015, 0.003) with four
  times the prompts per step (G 8, B 32: a quarter of the reward's sampling variance), so that
  grid2's slow rise after the first steps stands above the noise; no cross. These are the
  runs still climbing at the cut that the forecast benchmark scores on.

KL beta 0.02, constant learning rate, one optimizer step per generation, seeds ``--first-seed``
.. (three by default). The supervised warm-up depends only on the seed, so every run of a seed
starts from the same warmed-up weights. The first seed is made whole first (design data); the
later seeds follow setting by setting. One thread, so that it can run beside other work. Each run
is written atomically as a small TRL trainer_state.json with its hyperparameters
(``grpodyn_settings`` in TRL's names and ``grpodyn_hparams`` in grpodyn's ``--hparams`` names)
and its warm-up; a run whose file exists is skipped, so the script resumes where it stopped.
Needs the ``trl`` extra.
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from grpodyn.empirical.data_paths import study_path
from grpodyn.empirical.tinylm.make_runs import SHIPPED_KEYS, short_number
from grpodyn.empirical.tinylm.training import (
    GRPORunSettings,
    build_model,
    build_tokenizer,
    run_grpo,
    warm_up,
)
from grpodyn.ground import write_atomic


@dataclass(frozen=True)
class GridDesign:
    """One controlled grid: learning rates per optimizer, the (G, B) cross, warm-up and length.

    ``optimizers`` maps a name to (its learning rates, low to high; TRL optim name;
    optim_args; beta1). The cross is made at the middle learning rate.
    """

    out: Path
    optimizers: dict[str, tuple[tuple[float, ...], str | None, str | None, float]]
    centre: tuple[int, int]  # (G, B)
    cross: tuple[tuple[int, int], ...]
    warm_up_band: tuple[float, float]
    steps: int
    kl: float = 0.02


#: The designs: "grid1" (studies/tiny_grids/data/tiny_grid) and "grid2"
#: (studies/tiny_grids/data/tiny_grid2; calibration in studies/tiny_grids/README.md).
DESIGNS: dict[str, GridDesign] = {
    "grid1": GridDesign(study_path("tiny_grids", "tiny_grid"),
                        {"adam": ((3e-4, 6e-4, 1.2e-3), None, None, 0.9),
                         "sgd": ((0.005, 0.01, 0.02), "sgd", "momentum=0.9", 0.9)},
                        (4, 8), ((2, 8), (8, 8), (4, 4), (4, 16)), (0.25, 0.5), 240),
    "grid2": GridDesign(study_path("tiny_grids", "tiny_grid2"),
                        {"adam": ((1e-4, 2e-4, 4e-4), None, None, 0.9),
                         "sgd": ((0.0015, 0.003, 0.006), "sgd", "momentum=0.9", 0.9)},
                        (8, 8), ((4, 8), (16, 8), (8, 4), (8, 16)), (0.3, 0.45), 360),
    "grid2_high": GridDesign(study_path("tiny_grids", "tiny_grid2_high"),
                             {"adam": ((1.2e-3, 3.6e-3), None, None, 0.9),
                              "sgd": ((0.02, 0.06), "sgd", "momentum=0.9", 0.9)},
                             (8, 8), (), (0.3, 0.45), 360),
    "climb": GridDesign(study_path("tiny_grids", "tiny_climb"),
                        {"adam": ((5e-5, 1e-4, 2e-4), None, None, 0.9),
                         "sgd": ((0.00075, 0.0015, 0.003), "sgd", "momentum=0.9", 0.9)},
                        (8, 32), (), (0.3, 0.45), 360),
}
DEFAULT_OUT = DESIGNS["grid1"].out


def settings_grid(design: str = "grid1") -> list[tuple[str, float, int, int]]:
    """Return the (optimizer, lr, G, B) settings of a grid design, each made once per seed.

    Parameters
    ----------
    design : str
        A key of :data:`DESIGNS`.

    Returns
    -------
    list of tuple
        (optimizer, lr, G, B) per setting.
    """
    plan = DESIGNS[design]
    grid = []
    for name, (lrs, *_rest) in plan.optimizers.items():
        grid += [(name, lr, *plan.centre) for lr in lrs]
        grid += [(name, lrs[1], g, b) for g, b in plan.cross]
    return grid


def run_name(optimizer: str, lr: float, group: int, batch: int, seed: int) -> str:
    """Return the file name of one run, e.g. ``adam_lr0.002_G4_B4_seed0.json``.

    Parameters
    ----------
    optimizer : str
        ``adam`` or ``sgd``.
    lr : float
        Learning rate.
    group, batch : int
        G completions per prompt and B prompts per step.
    seed : int
        Seed of the run (and of its warm-up).

    Returns
    -------
    str
        The file name.
    """
    return f"{optimizer}_lr{lr:g}_G{group}_B{batch}_seed{seed}.json"


def make_run(optimizer: str, lr: float, group: int, batch: int, seed: int, *, steps: int,
             warm_state: dict, warm: dict, design: str = "grid1") -> dict:
    """Make one GRPO run from the seed's warmed-up weights.

    Parameters
    ----------
    optimizer, lr, group, batch, seed
        The setting (see :func:`run_name`).
    steps : int
        Optimizer steps.
    warm_state : dict
        The seed's warmed-up weights (a state dict).
    warm : dict
        The warm-up record (steps and sampled accuracy), shipped with the run.
    design : str
        A key of :data:`DESIGNS` (its optimizers and KL).

    Returns
    -------
    dict
        The trainer_state to ship (log history, settings, hyperparameters, warm-up).
    """
    plan = DESIGNS[design]
    _lrs, optim, optim_args, beta1 = plan.optimizers[optimizer]
    tokenizer = build_tokenizer()
    model = build_model(seed=seed)
    model.load_state_dict(warm_state)
    settings = GRPORunSettings(group_size=group, prompts_per_step=batch, steps=steps,
                               learning_rate=lr, kl=plan.kl, seed=seed, optim=optim,
                               optim_args=optim_args)
    start = time.perf_counter()
    with tempfile.TemporaryDirectory() as scratch:
        result = run_grpo(model, tokenizer, settings, output_dir=scratch)
    history = [{k: short_number(h[k]) for k in SHIPPED_KEYS if k in h}
               for h in result["log_history"]]
    hparams = {"optimizer": optimizer, "lr": lr, "momentum": beta1, "group_size": group,
               "batch": batch, "kl": plan.kl, "num_iterations": 1, "schedule": "constant",
               "warmup": 0, "steps": steps, "seed": seed}
    return {"global_step": result["global_step"], "log_history": history,
            "grpodyn_settings": settings.__dict__, "grpodyn_hparams": hparams,
            "warm_up": warm, "train_seconds": time.perf_counter() - start}


def jobs_in_order(design: str, seeds: list[int], optimizers: list[str]
                  ) -> list[tuple[str, float, int, int, int]]:
    """Return the runs to make: the first seed's settings, then the others setting by setting.

    The first seed (the design data) is made whole first; the later seeds follow with all
    seeds of one setting together, so that a grid stopped early holds complete settings.

    Parameters
    ----------
    design : str
        A key of :data:`DESIGNS`.
    seeds : list of int
        Seeds, the design seed first.
    optimizers : list of str
        Optimizers to make.

    Returns
    -------
    list of tuple
        (optimizer, lr, G, B, seed) per run.
    """
    grid = [s for s in settings_grid(design) if s[0] in optimizers]
    first = [(*setting, seeds[0]) for setting in grid]
    return first + [(*setting, seed) for setting in grid for seed in seeds[1:]]


def main() -> None:
    """Make the missing runs of a grid (command line: see the module docstring)."""
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--design", choices=list(DESIGNS), default="grid1")
    parser.add_argument("--out", type=Path, default=None,
                        help="folder of the runs (default: the design's data folder)")
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--first-seed", type=int, default=0)
    parser.add_argument("--steps", type=int, default=None,
                        help="steps per run (default: the design's)")
    parser.add_argument("--optimizers", nargs="+", default=["adam", "sgd"],
                        choices=["adam", "sgd"])
    args = parser.parse_args()
    plan = DESIGNS[args.design]
    out = plan.out if args.out is None else args.out
    steps = plan.steps if args.steps is None else args.steps
    if args.seeds < 1 or args.first_seed < 0 or steps < 10:
        parser.error("--seeds must be at least 1, --first-seed not negative, --steps >= 10")
    import torch

    torch.set_num_threads(1)
    out.mkdir(parents=True, exist_ok=True)
    seeds = list(range(args.first_seed, args.first_seed + args.seeds))
    jobs = jobs_in_order(args.design, seeds, args.optimizers)
    warmed: dict[int, tuple[dict, dict]] = {}
    for index, job in enumerate(jobs, start=1):
        path = out / run_name(*job)
        if path.exists():
            continue
        seed = job[-1]
        if seed not in warmed:
            model = build_model(seed=seed)
            warm = warm_up(model, build_tokenizer(), band=plan.warm_up_band, seed=seed)
            warmed[seed] = ({k: v.detach().clone() for k, v in model.state_dict().items()},
                            warm)
        print(f"[{index}/{len(jobs)}] {path.name}", flush=True)
        state, warm = warmed[seed]
        write_atomic(path, json.dumps(make_run(*job, steps=steps, warm_state=state, warm=warm,
                                               design=args.design)))


if __name__ == "__main__":
    main()
