"""Measure when the diagnosis reads a sustained cycle, and what it reads without one.

The question: a reward that oscillates over the whole run (a limit cycle) with a period of
about 100 steps over 500 was flagged unstable, but its evidence said "real poles: no
oscillation" and its state turned with the cycle's phase (declining, learning, declining from
the start). :func:`grpodyn.empirical.diagnostics.cycle.sustained_cycle` reads the cycle from the
periodogram of the reward less a quadratic trend. This grid (all seeded) measures:

1. how often it calls a cycle where there is none: AR(1) red noise of poles 0.8-0.99 under
   white noise, at 150, 300 and 500 points (200 runs each), and steps, sigmoids, rises and
   damped oscillations (20 runs each);
2. how often it finds one that is there: sinusoids of periods from 8 points to a third of the
   run, amplitudes 1-3.3 times the noise (200 runs per length);
3. what the whole diagnosis says of a cycle of period 100 over 500 steps at four phases.

Run ``python studies/diagnosis/slow_oscillations.py [--out FILE]``; it prints the tables
(about a minute).
"""

from __future__ import annotations

import argparse
from collections.abc import Callable

import numpy as np

from grpodyn.empirical.diagnostics.cycle import sustained_cycle
from grpodyn.empirical.diagnostics.diagnose import diagnose
from grpodyn.empirical.logs.loaders import Run
from grpodyn.ground import write_atomic
from grpodyn.numerics.noise import estimate_noise

NOISE, LENGTHS, POLES, RUNS = 0.03, (150, 300, 500), (0.8, 0.9, 0.97, 0.99), 200


def red_noise(rng: np.random.Generator, n: int, pole: float) -> np.ndarray:
    """AR(1) of innovations 0.02 under white noise ``NOISE``, around 0.5."""
    x, kicks = np.zeros(n), rng.normal(0, 0.02, n)
    for i in range(1, n):
        x[i] = pole * x[i - 1] + kicks[i]
    return 0.5 + x + rng.normal(0, NOISE, n)


def sinusoid(rng: np.random.Generator, n: int) -> np.ndarray:
    """Return a sinusoid of a random period (8 points to n / 3.3) and amplitude (1-3.3 s.d.)."""
    t = np.arange(n)
    period, amplitude = rng.uniform(8, n / 3.3), rng.choice([0.03, 0.06, 0.1])
    return 0.5 + amplitude * np.sin(2 * np.pi * t / period + rng.uniform(0, 2 * np.pi)) \
        + rng.normal(0, NOISE, n)


SHAPES: dict[str, Callable[[np.random.Generator, np.ndarray], np.ndarray]] = {
    "step down": lambda rng, t: np.where(t < rng.uniform(0.2, 0.8) * t[-1], 0.6, 0.1),
    "sigmoid rise": lambda rng, t: 0.2 + 0.5 / (1 + np.exp(-(t - rng.uniform(0.2, 0.8) * t[-1])
                                                        / 20)),
    "exponential rise": lambda rng, t: 0.2 + 0.5 * (1 - np.exp(-t / rng.uniform(30, 200))),
    "damped oscillation": lambda rng, t: 0.5 + 0.3 * np.exp(-t / 100) * np.sin(
        2 * np.pi * t / rng.uniform(30, 90)),
}


def _called(r: np.ndarray) -> bool:
    t = np.arange(1.0, r.size + 1)
    return sustained_cycle(t, r, estimate_noise(r).sigma) is not None


def detection_table() -> list[str]:
    """Rows: how often a cycle is called, per source and length."""
    lines = ["| source | " + " | ".join(f"{n} points" for n in LENGTHS) + " |",
             "|---|" + "---|" * len(LENGTHS)]
    for pole in POLES:
        cells = []
        for n in LENGTHS:
            rng = np.random.default_rng([1, n, int(pole * 100)])
            cells.append(f"{sum(_called(red_noise(rng, n, pole)) for _ in range(RUNS))} / {RUNS}")
        lines.append(f"| red noise, pole {pole} (no cycle) | " + " | ".join(cells) + " |")
    for name, shape in SHAPES.items():
        cells = []
        for n in LENGTHS:
            rng, t = np.random.default_rng([2, n, len(name)]), np.arange(float(n))
            called = sum(_called(shape(rng, t) + rng.normal(0, NOISE, n)) for _ in range(20))
            cells.append(f"{called} / 20")
        lines.append(f"| {name} (no cycle) | " + " | ".join(cells) + " |")
    cells = []
    for n in LENGTHS:
        rng = np.random.default_rng([3, n])
        cells.append(f"{sum(_called(sinusoid(rng, n)) for _ in range(RUNS))} / {RUNS}")
    lines.append("| sinusoid (a cycle) | " + " | ".join(cells) + " |")
    return lines


def diagnosis_table() -> list[str]:
    """Rows: the whole diagnosis of a cycle of period 100 over 500 steps at four phases."""
    lines = ["| phase | seed | state | instability | its evidence says of the AR(2) poles |",
             "|---|---|---|---|---|"]
    t = np.arange(1.0, 501)
    for phase in (0.0, 1.5, 3.0, 4.5):
        for seed in range(3):
            rng = np.random.default_rng([4, seed])
            r = 0.5 + 0.2 * np.sin(2 * np.pi * t / 100 + phase) + rng.normal(0, NOISE, t.size)
            found = diagnose(Run("cycle", "grid", t, r, {}))
            verdict = found.modes["dynamical_instability"]
            poles = verdict.evidence.split("pole radius ")[1].split(")")[0] + ")"
            lines.append(f"| {phase} | {seed} | {found.state} | "
                         f"{'flagged' if verdict.flag else 'not flagged'} | {poles} |")
    return lines


def main() -> None:
    """Print the two tables, and write them to ``--out`` if given."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", help="also write the tables to this file")
    args = parser.parse_args()
    text = "\n".join(["Cycles called (sustained_cycle), per source and run length:", "",
                      *detection_table(), "",
                      "The whole diagnosis of a cycle of period 100 steps, amplitude 0.2, "
                      "noise 0.03, over 500 steps:", "", *diagnosis_table()]) + "\n"
    print(text, end="")
    if args.out:
        write_atomic(args.out, text)


if __name__ == "__main__":
    main()
