"""How ``diagnose`` grows with the log length: median seconds per call at n = 1e3 .. 1e5 points,
the moving sums from cumulative sums (present) side by side with the plain np.convolve.

Run ``python benchmarks/diagnose_scaling.py``; prints a markdown table.
"""

from __future__ import annotations

import statistics
import time
from unittest import mock

import numpy as np

from grpodyn.empirical.diagnostics import diagnose as diagnostics
from grpodyn.empirical.logs.loaders import Run


def _convolve_sums(values: np.ndarray, window: int, mode: str) -> np.ndarray:
    return np.convolve(values, np.ones(window), mode)


def _run(n: int) -> Run:
    rng = np.random.default_rng(0)
    steps = np.arange(1.0, n + 1)
    reward = 0.9 - 0.6 * np.exp(-steps / (n / 5)) + 0.05 * rng.normal(size=n)
    return Run(source="bench", format="bench", steps=steps, reward=reward,
               metrics={"entropy": 0.5 + 0.01 * rng.normal(size=n),
                        "kl": 0.1 + 0.01 * rng.random(n)})


def _median(run: Run, repeats: int) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        diagnostics.diagnose(run)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> None:
    print("| points | cumulative sums (s) | np.convolve (s) | ratio |")
    print("|---|---|---|---|")
    for n in (1_000, 10_000, 100_000):
        run = _run(n)
        repeats = 5 if n < 100_000 else 3
        fast = _median(run, repeats)
        with mock.patch.object(diagnostics, "_window_sums", _convolve_sums):
            slow = _median(run, repeats)
        print(f"| {n} | {fast:.4f} | {slow:.4f} | {slow / fast:.1f}x |")


if __name__ == "__main__":
    main()
