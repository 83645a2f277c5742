"""The design look at the Theta method's point as a third member of the ensemble's average.

The section "Real runs still climbing at the cut" of this folder's README.
``python studies/forecast/theta_design.py [--logs DIR]`` forecasts every design source cut at
F = 0.3 and 0.5 with the stacked curve models (``forecast_curve``), the calibrated learned
prior (``calibrated_prior_forecast``) and the Theta method (statsmodels' ``ThetaModel``, the
benchmark's baseline), and prints, per source and stratum, the median MAE over the noise floor
and the median signed error (held-out mean minus point, noise-floor units) of three points:
the ensemble's (the curve models' and the prior's average), the average of all three, and the
three-way average only where the run is not quiet at the cut (``regime``), the two-way one
elsewhere. Sources: the public logs (``--logs``, default ``../shared/data/real_logs``), every
other run of the tiny-model grid2 and grid2_high at seeds 0-20, the tiny-model climb runs at
seeds 49-56, categorical seeds 0-39 and bandit seeds 0-3. Needs the ``baselines`` extra.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "benchmarks"))
sys.path.insert(0, str(Path(__file__).resolve().parent))
from combination_design import GRIDS, print_source, tiny_design, two_forecasts  # noqa: E402
from forecast_baselines import stratum, theta  # noqa: E402  (a benchmark script)
from forecast_matrix import _bandit, categorical_runs, load_matrix_source  # noqa: E402

from grpodyn.empirical.logs.loaders import Run, load_run  # noqa: E402
from grpodyn.numerics.forecast_adaptive import regime  # noqa: E402


def _one(job: tuple[str, Run, float]) -> dict | None:
    """Score the three points of one run cut at one fraction (None: too short a cut)."""
    made = two_forecasts(job[1], job[2])
    if made is None:
        return None
    t, y, n_train, sigma, curves, prior = made
    held = y[n_train:]
    floor = sigma * np.sqrt(2 / np.pi)
    theta_point = theta(t[:n_train], y[:n_train], t[n_train:])[0]
    quiet = regime(t[:n_train], y[:n_train]) == "quiet"
    pair = 0.5 * (curves.point + prior.point)
    three = (curves.point + prior.point + theta_point) / 3
    points = {"ensemble": pair, "three": three, "three_moving": pair if quiet else three}
    out = {"stratum": stratum(y[:n_train], held, sigma), "quiet_at_cut": quiet}
    for name, point in points.items():
        out[name] = (float(np.mean(np.abs(held - point)) / floor),
                     float(np.mean(held - point) / floor))
    return out


def _climb() -> list[tuple[str, Run]]:
    """Return the tiny-model climb runs at seeds 49-56."""
    return [(path.stem, load_run(path))
            for path in sorted((GRIDS / "tiny_climb").glob("*_seed*.json"))
            if 49 <= int(path.stem.rsplit("_seed", 1)[-1]) <= 56]


def main() -> None:
    """Print the design table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--logs", default=str(ROOT.parent / "shared" / "data" / "real_logs"))
    args = parser.parse_args()
    sources = {"public": lambda: load_matrix_source("public", Path(args.logs)),
               "tiny grid2 (seeds 0-20)": tiny_design,
               "tiny climb (seeds 49-56)": _climb,
               "categorical 0-39": lambda: categorical_runs(range(40)),
               "bandit 0-3": lambda: _bandit(range(4))}
    keys = ("ensemble", "three", "three_moving")
    print("| source | stratum | forecasts | ensemble | three-way | three-way where not quiet | "
          "signed error (same order) |")
    print("|---|---|---|---|---|---|---|")
    for label, load in sources.items():
        print_source(label, load, _one, keys)


if __name__ == "__main__":
    main()
