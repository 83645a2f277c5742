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
from typing import Any, NamedTuple

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


class Cut(NamedTuple):
    """One run cut at a fraction: its training part, both forecasts and the held-out part."""

    t_train: np.ndarray
    y_train: np.ndarray
    t_held: np.ndarray
    curves: Any
    prior: Any
    held: np.ndarray
    floor: float  # the noise floor sigma sqrt(2 / pi) [reward]
    stratum: str
    quiet_at_cut: bool

    def errors(self, point: np.ndarray) -> tuple[float, float]:
        """Return the MAE and the signed error (held-out minus point) over the noise floor."""
        return (float(np.mean(np.abs(self.held - point)) / self.floor),
                float(np.mean(self.held - point) / self.floor))


def two_forecasts(run: Run, fraction: float) -> Cut | None:
    """Return the cut of ``run`` at ``fraction`` with the curve models' and the prior's forecasts.

    None where the cut is too short or a forecaster refuses the training part.
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
    held = y[n_train:]
    return Cut(t[:n_train], y[:n_train], t[n_train:], curves, prior, held,
               sigma * np.sqrt(2 / np.pi),
               stratum(y[:n_train], held, sigma), regime(t[:n_train], y[:n_train]) == "quiet")


def _one(job: tuple[str, Run, float]) -> dict | None:
    """Both forecasts of one run cut at one fraction, scored (None where the cut is too short)."""
    cut = two_forecasts(job[1], job[2])
    if cut is None:
        return None
    curves, prior = cut.curves, cut.prior
    bands = {"curves": (curves.point, curves.lower, curves.upper),
             "prior": (prior.point, prior.lower, prior.upper)}
    bands["average"] = tuple(0.5 * (a + b) for a, b in zip(bands["curves"], bands["prior"],
                                                            strict=True))
    out: dict[str, Any] = {"stratum": cut.stratum, "quiet_at_cut": cut.quiet_at_cut}
    for name, (point, lower, upper) in bands.items():
        out[name] = (*cut.errors(point), ((cut.held >= lower) & (cut.held <= upper)).tolist())
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


def tiny_climb_design() -> list[tuple[str, Run]]:
    """Return the tiny-model climb runs at seeds 49-56 (real runs still climbing at the cut)."""
    return [(path.stem, load_run(path))
            for path in sorted((GRIDS / "tiny_climb").glob("*_seed*.json"))
            if 49 <= int(path.stem.rsplit("_seed", 1)[-1]) <= 56]


def design_loaders(logs: Path, extra: dict[str, Any] | None = None) -> dict[str, Any]:
    """Return the design sources, label -> loader, ``extra`` after tiny's.

    The public logs in ``logs``, every other run of grid2 and grid2_high at seeds 0-20,
    categorical seeds 0-39 and bandit seeds 0-3.
    """
    return {"public": lambda: load_matrix_source("public", logs),
            "tiny grid2 (seeds 0-20)": tiny_design, **(extra or {}),
            "categorical 0-39": lambda: categorical_runs(range(40)),
            "bandit 0-3": lambda: _bandit(range(4))}


def design_sources(description: str, extra: dict[str, Any] | None = None
                   ) -> dict[str, Any]:
    """Parse ``--logs`` (default ``../shared/data/real_logs``) and return the design sources.

    As :func:`design_loaders`.
    """
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--logs", default=str(ROOT.parent / "shared" / "data" / "real_logs"))
    args = parser.parse_args()
    return design_loaders(Path(args.logs), extra)


def main() -> None:
    """Print the design table."""
    sources = design_sources(__doc__.splitlines()[0])
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
