"""Small logs the tests write: a noisy exponential rise of the reward as a CSV."""

from __future__ import annotations

import math
import random
from pathlib import Path


def rise_csv(path: Path, *, points: int, tau: float, seed: int) -> str:
    """Write ``step,reward`` rows of 0.2 + 0.6 (1 - exp(-step/tau)) + N(0, 0.01) at 0..points-1.

    Returns the path as a string, as the command line takes it.
    """
    rng = random.Random(seed)
    rows = [f"{i},{0.2 + 0.6 * (1 - math.exp(-i / tau)) + rng.gauss(0, 0.01)}"
            for i in range(points)]
    path.write_text("step,reward\n" + "\n".join(rows) + "\n")
    return str(path)
