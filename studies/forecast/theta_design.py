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
from multiprocessing import Pool
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "benchmarks"))
from forecast_baselines import stratum, theta  # noqa: E402  (a benchmark script)
from forecast_matrix import (  # noqa: E402
    _bandit,
    categorical_runs,
    load_matrix_source,
    scored_cut,
)

from grpodyn.empirical.logs.loaders import Run, load_run  # noqa: E402
from grpodyn.empirical.logs.run_analysis import (  # noqa: E402
    infer_reward_range,
    learning_rate_of,
    momentum_of,
)
from grpodyn.ground import InputError  # noqa: E402
from grpodyn.numerics.forecast import forecast_curve  # noqa: E402
from grpodyn.numerics.forecast_adaptive import regime  # noqa: E402
from grpodyn.numerics.forecast_calibrated import calibrated_prior_forecast  # noqa: E402

GRIDS = ROOT / "studies" / "tiny_grids" / "data"


def _tiny_design() -> list[tuple[str, Run]]:
    """Every other run of grid2 and grid2_high at seeds 0-20."""
    runs = []
    for folder in ("tiny_grid2", "tiny_grid2_high"):
        for path in sorted((GRIDS / folder).glob("*.json")):
            seed = path.stem.rsplit("_seed", 1)[-1]
            if seed.isdigit() and int(seed) <= 20:
                runs.append((f"{folder}/{path.stem}", load_run(path)))
    return runs[::2]


def _one(job: tuple[str, Run, float]) -> dict | None:
    """Both forecasts of one run cut at one fraction, scored (None where the cut is too short)."""
    _, run, fraction = job
    cut = scored_cut(run, fraction)
    if cut is None:
        return None
    n_train, sigma = cut
    t, y = run.steps, run.reward
    held = y[n_train:]
    bounds, _ = infer_reward_range(run)
    beta, _ = momentum_of(run, None)
    lr = learning_rate_of(run)
    try:
        curves = forecast_curve(t, y, n_train=n_train, future_steps=t[n_train:], momentum=beta,
                                learning_rate=None if lr is None else (t, lr), bounds=bounds)
        prior = calibrated_prior_forecast(t, y, n_train=n_train, future_steps=t[n_train:],
                                          bounds=bounds)
    except InputError:
        return None
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
               "tiny grid2 (seeds 0-20)": _tiny_design,
               "tiny climb (seeds 49-56)": _climb,
               "categorical 0-39": lambda: categorical_runs(range(40)),
               "bandit 0-3": lambda: _bandit(range(4))}
    keys = ("ensemble", "three", "three_moving")
    print("| source | stratum | forecasts | ensemble | three-way | three-way where not quiet | "
          "signed error (same order) |")
    print("|---|---|---|---|---|---|---|")
    for label, load in sources.items():
        jobs = [(name, run, f) for name, run in load() for f in (0.3, 0.5)]
        with Pool(2) as pool:
            rows = [r for r in pool.imap(_one, jobs, chunksize=2) if r is not None]
        for part in ("all", "moving", "quiet"):
            chosen = [r for r in rows if part == "all" or r["stratum"] == part]
            if not chosen:
                continue
            mae = [np.median([r[k][0] for r in chosen]) for k in keys]
            bias = [np.median([r[k][1] for r in chosen]) for k in keys]
            print(f"| {label} | {part} | {len(chosen)} | " + " | ".join(f"{m:.3f}" for m in mae)
                  + " | " + " / ".join(f"{b:+.2f}" for b in bias) + " |", flush=True)


if __name__ == "__main__":
    main()
