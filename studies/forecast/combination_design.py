"""The design look behind the ensemble's average with the calibrated learned prior.

The section "The ensemble averaged with the calibrated prior" of this folder's README.
``python studies/forecast/combination_design.py [--logs DIR]`` forecasts every design source
cut at F = 0.3 and 0.5 with the stacked curve models alone (``forecast_curve``) and with the
calibrated learned prior (``calibrated_prior_forecast``), and prints, per source and stratum,
the median MAE over the noise floor of each one's point and of their equal-weight average, with
the signed error (held-out mean minus point, noise-floor units: positive where the forecast runs
low), and the pooled 90% coverage of the curve models' band and of the averaged band where the
run is quiet at the cut. Sources: the public logs (``--logs``, default
``../shared/data/real_logs``), every other run of the tiny-model grid2 and grid2_high at seeds
0-20, categorical seeds 0-39 and bandit seeds 0-3 (the design data of the forecasters before
it). A few minutes on two cores.
"""

from __future__ import annotations

import argparse
import sys
from multiprocessing import Pool
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "benchmarks"))
from forecast_baselines import stratum  # noqa: E402  (a benchmark script)
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


def tiny_design() -> list[tuple[str, Run]]:
    """Every other run of grid2 and grid2_high at seeds 0-20."""
    runs = []
    for folder in ("tiny_grid2", "tiny_grid2_high"):
        for path in sorted((GRIDS / folder).glob("*.json")):
            seed = path.stem.rsplit("_seed", 1)[-1]
            if seed.isdigit() and int(seed) <= 20:
                runs.append((f"{folder}/{path.stem}", load_run(path)))
    return runs[::2]


def two_forecasts(run: Run, fraction: float) -> tuple | None:
    """Return the cut of ``run`` at ``fraction`` with the curve models' and the prior's forecasts.

    Returns (t, y, n_train, sigma, curves, prior), or None where the cut is too short or a
    forecaster refuses the training part.
    """
    cut = scored_cut(run, fraction)
    if cut is None:
        return None
    n_train, sigma = cut
    t, y = run.steps, run.reward
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
    return t, y, n_train, sigma, curves, prior


def _one(job: tuple[str, Run, float]) -> dict | None:
    """Both forecasts of one run cut at one fraction, scored (None where the cut is too short)."""
    made = two_forecasts(job[1], job[2])
    if made is None:
        return None
    t, y, n_train, sigma, curves, prior = made
    held = y[n_train:]
    floor = sigma * np.sqrt(2 / np.pi)
    bands = {"curves": (curves.point, curves.lower, curves.upper),
             "prior": (prior.point, prior.lower, prior.upper)}
    bands["average"] = tuple(0.5 * (a + b) for a, b in zip(bands["curves"], bands["prior"],
                                                            strict=True))
    out = {"stratum": stratum(y[:n_train], held, sigma), "quiet_at_cut": regime(
        t[:n_train], y[:n_train]) == "quiet"}
    for name, (point, lower, upper) in bands.items():
        out[name] = (float(np.mean(np.abs(held - point)) / floor),
                     float(np.mean(held - point) / floor),
                     ((held >= lower) & (held <= upper)).tolist())
    return out


def print_source(label: str, load: Any, one: Any, keys: tuple[str, ...]) -> list[dict]:
    """Score every run of a source cut at 0.3 and 0.5 with ``one``; print its table rows.

    Each row: the median MAE over the noise floor of each of ``keys`` per stratum, then their
    median signed errors. Returns the scored rows.
    """
    jobs = [(name, run, f) for name, run in load() for f in (0.3, 0.5)]
    with Pool(2) as pool:
        rows = [r for r in pool.imap(one, jobs, chunksize=2) if r is not None]
    for part in ("all", "moving", "quiet"):
        chosen = [r for r in rows if part == "all" or r["stratum"] == part]
        if not chosen:
            continue
        mae = [np.median([r[k][0] for r in chosen]) for k in keys]
        bias = [np.median([r[k][1] for r in chosen]) for k in keys]
        print(f"| {label} | {part} | {len(chosen)} | " + " | ".join(f"{m:.3f}" for m in mae)
              + " | " + " / ".join(f"{b:+.2f}" for b in bias) + " |", flush=True)
    return rows


def main() -> None:
    """Print the design table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--logs", default=str(ROOT.parent / "shared" / "data" / "real_logs"))
    args = parser.parse_args()
    sources = {"public": lambda: load_matrix_source("public", Path(args.logs)),
               "tiny grid2 (seeds 0-20)": tiny_design,
               "categorical 0-39": lambda: categorical_runs(range(40)),
               "bandit 0-3": lambda: _bandit(range(4))}
    print("| source | stratum | forecasts | curve models | calibrated prior | average | "
          "signed error (curves / prior / average) |")
    print("|---|---|---|---|---|---|---|")
    coverage = []
    for label, load in sources.items():
        rows = print_source(label, load, _one, ("curves", "prior", "average"))
        quiet = [r for r in rows if r["quiet_at_cut"]]
        coverage.append((label, len(quiet), *(np.mean(np.concatenate([r[k][2] for r in quiet]))
                                              for k in ("curves", "average"))))
    print("\n| source | quiet at the cut | coverage, curve models' band | averaged band |")
    print("|---|---|---|---|")
    for label, n, curves, average in coverage:
        print(f"| {label} | {n} | {curves:.3f} | {average:.3f} |")


if __name__ == "__main__":
    main()
