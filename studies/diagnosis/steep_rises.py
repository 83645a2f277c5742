"""Count the steep, quiet rises, falls and oscillations that the diagnosis calls unstable.

A reward that rises along a sigmoid over a few steps at little noise is learning; the same
sigmoid falling is the sudden collapse an instability leaves; a sustained oscillation around a
rise is a limit cycle. The grid (all seeded, in the reward's units):

- rises and falls: 0.2 <-> 0.8 along a sigmoid of width 3, 5, 10 or 20 steps, at point noise
  0.005, 0.01 or 0.03, over 100, 200 or 400 points, three seeds each (108 runs per sign);
- oscillations: 0.3 + 0.4 (1 - exp(-t/50)) plus a sine of period 8, 15 or 30 steps and
  amplitude 0.03 or 0.08, noise 0.02, over 200 or 400 points, three seeds each (36 runs);
- relaxations: 0.2 + 0.6 exp(-t/tau) from the first step, tau a tenth, a third or two thirds
  of the run, at point noise 0.005, 0.01 or 0.03, over 100, 200 or 400 points, three seeds each
  (81 runs): a stable map settling to a lower level, which is no instability.

The logs carry the reward alone (no KL, no entropy), so only the reward's signatures can flag
the instability. Run ``python studies/diagnosis/steep_rises.py [--out FILE]``; it prints the
counts per family and width (seconds).
"""

from __future__ import annotations

import argparse
from collections import Counter
from pathlib import Path

import numpy as np

from grpodyn.empirical.diagnostics.diagnose import diagnose
from grpodyn.empirical.logs.loaders import Run
from grpodyn.ground import write_atomic


def _run(reward: np.ndarray) -> Run:
    steps = np.arange(1, reward.size + 1, dtype=float)
    return Run(source="synthetic", format="synthetic", steps=steps, reward=reward, metrics={})


def _sigmoids() -> list[tuple[str, np.ndarray]]:
    """Return the rises and falls of the grid, each named by its sign and width."""
    cases = []
    for sign, name in ((1, "rise"), (-1, "fall")):
        for n in (100, 200, 400):
            for width in (3, 5, 10, 20):
                for noise in (0.005, 0.01, 0.03):
                    for seed in range(3):
                        t = np.arange(n)
                        step = 0.6 / (1 + np.exp(-(t - n * (0.3 if sign > 0 else 0.6)) / width))
                        base = 0.2 + step if sign > 0 else 0.8 - step
                        rng = np.random.default_rng([seed, n, width, int(noise * 1e3)])
                        cases.append((f"{name}, width {width}",
                                      base + noise * rng.standard_normal(n)))
    return cases


def _oscillations() -> list[tuple[str, np.ndarray]]:
    """Return the oscillations around a rise, each named by its period."""
    cases = []
    for n in (200, 400):
        for period in (8, 15, 30):
            for amplitude in (0.03, 0.08):
                for seed in range(3):
                    t = np.arange(n)
                    rng = np.random.default_rng([seed, n, period, int(amplitude * 1e3)])
                    r = (0.3 + 0.4 * (1 - np.exp(-t / 50))
                         + amplitude * np.sin(2 * np.pi * t / period)
                         + 0.02 * rng.standard_normal(n))
                    cases.append((f"oscillation, period {period}", r))
    return cases


def _relaxations() -> list[tuple[str, np.ndarray]]:
    """Return the exponential falls from the first step, each named by tau over the run."""
    cases = []
    for n in (100, 200, 400):
        for share, name in ((0.1, "1/10"), (1 / 3, "1/3"), (2 / 3, "2/3")):
            for noise in (0.005, 0.01, 0.03):
                for seed in range(3):
                    t = np.arange(n)
                    rng = np.random.default_rng([seed, n, int(share * 1e3), int(noise * 1e3)])
                    r = 0.2 + 0.6 * np.exp(-t / (share * n)) + noise * rng.standard_normal(n)
                    cases.append((f"relaxation, tau {name} of the run", r))
    return cases


def main() -> None:
    """Diagnose the grid and print how many runs of each family are called unstable."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", type=Path, help="also write the table to this file")
    args = parser.parse_args()
    total, unstable = Counter(), Counter()
    for family, reward in _sigmoids() + _oscillations() + _relaxations():
        total[family] += 1
        unstable[family] += diagnose(_run(reward)).modes["dynamical_instability"].flag
    lines = ["| family | runs | flagged dynamical_instability |", "|---|---|---|"]
    lines += [f"| {family} | {total[family]} | {unstable[family]} |" for family in total]
    for kind in ("rise", "fall", "oscillation", "relaxation"):
        runs = sum(v for k, v in total.items() if k.startswith(kind))
        flagged = sum(v for k, v in unstable.items() if k.startswith(kind))
        lines.append(f"| every {kind} | {runs} | {flagged} |")
    text = "\n".join(lines) + "\n"
    print(text, end="")
    if args.out:
        write_atomic(args.out, text)


if __name__ == "__main__":
    main()
