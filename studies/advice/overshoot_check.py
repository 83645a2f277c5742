"""How the advice and a sweep read a stable run's overshoot, beside collapses and falls under way.

The exact on-policy map at beta = 0.9 started from rest (``numerics.settling.step_response``),
read as a reward from 0.2 to its plateau 0.7 with white noise, at stiffnesses from below critical
damping to 256 k_c (all stable; the overshoot reaches the whole gain near 430 k_c); controls: a
rise then a collapse to a level at or under the start, and a rise held, then a steady fall that
has not yet given back half of the rise, and a rise held then a fall of a fifth of it over ten
steps that stopped (at step 90: a partial fall that the shape reads as an overshoot, a limit of
the reading; at step 130: within the quarter before the last, read as a fall still under way).
Each series is read by ``trend.series_trend`` (a sweep's fall test) and advised by
``advise_log`` (``grpodyn advise``, beta = 0.9 assumed). Prints a table of the counts.

Usage: ``python studies/advice/overshoot_check.py [--seeds N] [--out FILE]``.
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from pathlib import Path

import numpy as np
from tqdm import tqdm

from grpodyn import advise_log
from grpodyn.empirical.logs.loaders import Run
from grpodyn.empirical.logs.trend import series_trend
from grpodyn.ground import write_atomic
from grpodyn.numerics.settling import step_response

STEPS = np.arange(1.0, 201.0)
BETA = 0.9
CRITICAL = (1 - np.sqrt(BETA)) ** 2
MULTIPLES = (0.5, 1.5, 3, 8, 32, 48, 64, 128, 256)


def _map_run(multiple: float, noise: float, seed: int) -> tuple[np.ndarray, float]:
    """Reward of the map at ``multiple`` k_c with noise, and the map's own overshoot."""
    x = step_response(momentum=BETA, stiffness=multiple * CRITICAL, steps=STEPS.size - 1)
    reward = 0.7 - 0.5 * x
    rng = np.random.default_rng(seed)
    return reward + noise * rng.standard_normal(STEPS.size), float(max(0.0, -x.min()))


def _collapse(end: float, noise: float, seed: int) -> np.ndarray:
    """Return a rise to 0.7 by step 40, then a collapse toward ``end`` (time scale 15 steps)."""
    path = np.where(STEPS < 40, 0.2 + 0.5 * STEPS / 40,
                    end + (0.7 - end) * np.exp(-(STEPS - 40) / 15))
    return path + noise * np.random.default_rng(seed).standard_normal(STEPS.size)


def _fall_under_way(rate: float, noise: float, seed: int) -> np.ndarray:
    """Return a rise to 0.7 by step 40, held, then a fall of ``rate`` a step from step 120."""
    path = np.where(STEPS < 40, 0.2 + 0.5 * STEPS / 40,
                    np.where(STEPS < 120, 0.7, 0.7 - rate * (STEPS - 120)))
    return path + noise * np.random.default_rng(seed).standard_normal(STEPS.size)


def _fall_that_stopped(start: float, noise: float, seed: int) -> np.ndarray:
    """Return a rise to 0.7 by step 40, held, then a fall of 0.1 over 10 steps from ``start``."""
    path = np.where(STEPS < 40, 0.2 + 0.5 * STEPS / 40,
                    np.where(STEPS < start, 0.7,
                             np.maximum(0.6, 0.7 - 0.1 * (STEPS - start) / 10)))
    return path + noise * np.random.default_rng(seed).standard_normal(STEPS.size)


def main(argv: list[str] | None = None) -> None:
    """Read every case over its seeds and print (and write) the table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=10, help="noise draws per case")
    parser.add_argument("--out", type=Path, help="also write the table to this file")
    args = parser.parse_args(argv)
    rows = ["| case | noise | map's overshoot | reading (trend) | advice (direction, basis) |",
            "|---|---|---|---|---|"]
    cases: list[tuple[str, float, object]] = []
    for multiple in MULTIPLES:
        for noise in (0.01, 0.03):
            cases.append((f"map at {multiple:g} k_c", noise,
                          lambda s, m=multiple, n=noise: _map_run(m, n, s)))
    for end in (0.2, 0.1, 0.0):
        for noise in (0.01, 0.03):
            cases.append((f"collapse to {end:g}", noise,
                          lambda s, e=end, n=noise: (_collapse(e, n, s), None)))
    for rate in (0.001, 0.002):
        for noise in (0.01, 0.03):
            cases.append((f"fall under way, {rate:g} per step", noise,
                          lambda s, r=rate, n=noise: (_fall_under_way(r, n, s), None)))
    for start in (80, 120):
        for noise in (0.01, 0.03):
            cases.append((f"fall of 0.1 over steps {start}-{start + 10}, then held", noise,
                          lambda s, b=start, n=noise: (_fall_that_stopped(b, n, s), None)))
    for name, noise, make in tqdm(cases, desc="cases", disable=not sys.stderr.isatty()):
        kinds, advice, overshoot = Counter(), Counter(), None
        for seed in range(args.seeds):
            reward, overshoot = make(seed)
            kinds[series_trend(STEPS, reward).kind] += 1
            said = advise_log(Run(name, name, STEPS, reward, {}))
            advice[f"{said.recommendation['direction']} ({said.basis['kind']})"] += 1
        shown = "-" if overshoot is None else f"{overshoot:.2f}"
        rows.append(f"| {name} | {noise:g} | {shown} | {_counts(kinds)} | {_counts(advice)} |")
    table = "\n".join(rows) + "\n"
    print(table, end="")
    if args.out is not None:
        write_atomic(args.out, table)


def _counts(counter: Counter) -> str:
    return ", ".join(f"{kind} {count}" for kind, count in sorted(counter.items()))


if __name__ == "__main__":
    main()
