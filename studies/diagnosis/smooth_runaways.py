"""Count the smooth runaways the early warning announces before the reward loses half its fall.

A policy that runs away drags its entropy and its KL to the reference up with it, and the
reward falls after them. The grid (all seeded): over 400 steps the reward rises as
0.2 + 0.5 (1 - exp(-t/40)) and falls by 90% along a logistic of width 3, 6, 10 or 15 steps
centred on step 250; the entropy (x5) and the KL (x20) rise along a logistic of the same
width centred 0, 5 or 10 steps earlier (their lead), with multiplicative noise (5% and 15%),
and the completion length wanders on a slow trend; three seeds each (36 runs). A run is
warned when :func:`grpodyn.empirical.diagnostics.early_warning.early_warning` fires on one of
its prefixes in the 40 logged steps before the reward lost half its fall (the diagnosis
benchmark's ``half_loss_index``). Run ``python studies/diagnosis/smooth_runaways.py [--out
FILE]``; it prints the first warning of every run and the count.
"""

from __future__ import annotations

import argparse
import itertools
import sys
from pathlib import Path

import numpy as np

from grpodyn.empirical.diagnostics.early_warning import early_warning, prefix
from grpodyn.empirical.logs.loaders import Run
from grpodyn.ground import write_atomic

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
from diagnosis import half_loss_index  # noqa: E402

WIDTHS, LEADS, SEEDS = (3, 6, 10, 15), (0, 5, 10), range(3)


def _logistic(x: np.ndarray) -> np.ndarray:
    return 1 / (1 + np.exp(-x))


def runaway(width: float, lead: float, seed: int, n: int = 400, middle: float = 250) -> Run:
    """Return one run of the grid: precursors ``lead`` steps before the reward's fall."""
    rng = np.random.default_rng([seed, int(width), int(lead)])
    t = np.arange(1.0, n + 1)
    reward = (0.2 + 0.5 * (1 - np.exp(-t / 40))) * (1 - 0.9 * _logistic((t - middle) / width))
    rise = _logistic((t - middle + lead) / width)
    metrics = {"entropy": (0.8 - 0.001 * t) * (1 + 4 * rise) * np.exp(rng.normal(0, 0.05, n)),
               "kl": (0.01 + 1e-4 * t) * (1 + 19 * rise) * np.exp(rng.normal(0, 0.15, n)),
               "completion_length": 300 + 0.3 * t + rng.normal(0, 10, n)}
    return Run(f"runaway width {width} lead {lead} seed {seed}", "synthetic", t,
               reward + rng.normal(0, 0.03, n), metrics)


def first_warning(run: Run) -> tuple[float, float | None, tuple[str, ...]]:
    """Return the half-loss step, the first step warned in the 40 before it, and the signals."""
    _, half = half_loss_index(run.reward)
    for end in range(max(9, half - 40), half):
        warning = early_warning(prefix(run, float(run.steps[end])))
        if warning is not None:
            return float(run.steps[half]), float(run.steps[end]), warning.signals
    return float(run.steps[half]), None, ()


def main() -> None:
    """Print (and with ``--out`` write) the grid's first warnings and the count."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, help="also write the table here (markdown)")
    args = parser.parse_args()
    lines = ["| width | lead | seed | half the fall lost at | first warning | signals |",
             "|---|---|---|---|---|---|"]
    warned = 0
    for width, lead, seed in itertools.product(WIDTHS, LEADS, SEEDS):
        half, step, signals = first_warning(runaway(width, lead, seed))
        warned += step is not None
        lines.append(f"| {width} | {lead} | {seed} | {half:g} | "
                     f"{'-' if step is None else f'{step:g}'} | {', '.join(signals) or '-'} |")
    total = len(WIDTHS) * len(LEADS) * len(SEEDS)
    lines += ["", f"Warned before half the fall: {warned} of {total}."]
    text = "\n".join(lines) + "\n"
    print(text, end="")
    if args.out is not None:
        write_atomic(args.out, text)


if __name__ == "__main__":
    main()
