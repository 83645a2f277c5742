"""Design look: what at the cut tells a run that climbs on from one that saturates.

The section "What tells a climb that runs on from one that saturates" of this folder's README.
``python studies/forecast/climb_separation.py [--logs DIR] [--rows FILE]`` cuts every design
source at F = 0.3 and 0.5 (the public logs, every other run of the tiny-model grid2 and
grid2_high at seeds 0-20, the tiny-model climb runs at seeds 49-56, categorical seeds 0-39,
bandit seeds 0-3) and scores two points over the rest of the run, in noise-floor units: the
default's (the calibrated learned prior's median) and the Theta method's (statsmodels, the
benchmark's baseline). For each forecast it records the regime of the training part's end
(``regime``: quiet, saturating, climbing), the stratum (moving or quiet, known only after), and
the headroom fraction z = |slope| H / room: the last half's least-squares slope carried over the
horizon H, over the distance from the recent level to the reward range's bound ahead (none where
the range is unknown); and whether the whole training part climbs on a line: its slope's t
statistic beyond 2 (``whole_t``: ``slope_t``, which ``trend_t`` reads on the last half) with no
curvature seen (``relaxation_fit`` refuses it: ``no_curvature``). It writes the records to
``--rows`` (default
``results/climb_separation_rows.json``; given an existing file, it prints from it without
forecasting) and prints, per source: the moving forecasts by regime at the cut, then the
medians of the two points and of Theta's taken where z < 0.5, or where the whole training part
climbs on a line. About 15 minutes on two cores.
Needs the ``baselines`` extra.
"""

from __future__ import annotations

import argparse
import json
import sys
from multiprocessing import Pool
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "benchmarks"))
sys.path.insert(0, str(Path(__file__).resolve().parent))
from combination_design import design_loaders, tiny_climb_design  # noqa: E402
from forecast_baselines import stratum, theta  # noqa: E402  (a benchmark script)
from forecast_matrix import scored_cut  # noqa: E402

from grpodyn.empirical.logs.loaders import Run  # noqa: E402
from grpodyn.empirical.logs.run_analysis import infer_reward_range  # noqa: E402
from grpodyn.ground import InputError  # noqa: E402
from grpodyn.numerics.forecast_adaptive import regime, slope_t  # noqa: E402
from grpodyn.numerics.forecast_calibrated import calibrated_prior_forecast  # noqa: E402
from grpodyn.numerics.forecast_trend import relaxation_fit  # noqa: E402

#: The headroom fraction below which the table takes Theta's point (a design look, not kept).
Z_GATE = 0.5


def _one(job: tuple[str, str, Run, float]) -> dict | None:
    """Score both points of one run cut at one fraction (None: too short a cut, or refused)."""
    source, name, run, fraction = job
    cut = scored_cut(run, fraction)
    if cut is None:
        return None
    n, sigma = cut
    t, y = run.steps, run.reward
    bounds, _ = infer_reward_range(run)
    try:
        prior = calibrated_prior_forecast(t, y, n_train=n, future_steps=t[n:], bounds=bounds)
    except InputError:
        return None
    t_train, y_train, held = t[:n], y[:n], y[n:]
    theta_point = theta(t_train, y_train, t[n:])[0]
    floor = sigma * np.sqrt(2 / np.pi)
    half = n // 2
    slope = float(np.polyfit(t_train[half:], y_train[half:], 1)[0])
    level = float(np.mean(y_train[-max(3, n // 10):]))
    z = None
    if bounds is not None:
        room = bounds[1] - level if slope > 0 else level - bounds[0]
        z = abs(slope) * float(t[-1] - t_train[-1]) / max(room, 1e-12)
    return {"source": source, "name": name, "fraction": fraction,
            "stratum": stratum(y_train, held, sigma), "regime": regime(t_train, y_train),
            "z": z, "whole_t": slope_t(t_train, y_train),
            "no_curvature": relaxation_fit(t_train, y_train) is None,
            **{key: (float(np.mean(np.abs(held - point)) / floor),
                     float(np.mean(held - point) / floor))
               for key, point in (("prior", prior.point), ("theta", theta_point))}}


def _records(logs: Path) -> list[dict]:
    """Forecast every design source (a pool of two processes)."""
    sources = design_loaders(logs, {"tiny climb (seeds 49-56)": tiny_climb_design})
    rows: list[dict] = []
    for label, load in sources.items():
        jobs = [(label, name, run, f) for name, run in load() for f in (0.3, 0.5)]
        with Pool(2) as pool:
            rows += [r for r in pool.imap(_one, jobs, chunksize=2) if r is not None]
    return rows


def _median(rows: list[dict], key: str) -> float:
    return float(np.median([r[key][0] for r in rows]))


def _headroom_gate(row: dict) -> bool:
    return row["z"] is not None and row["z"] < Z_GATE


def _line_gate(row: dict) -> bool:
    return abs(row["whole_t"]) > 2 and row["no_curvature"]


def _gated(rows: list[dict], gate: Any) -> float:
    return float(np.median([r["theta"][0] if gate(r) else r["prior"][0] for r in rows]))


def print_tables(rows: list[dict]) -> None:
    """Print the moving forecasts by regime at the cut, then the gated point's medians."""
    sources = list(dict.fromkeys(r["source"] for r in rows))
    print("| source | regime at the cut | moving forecasts | Theta better | prior | Theta | "
          "signed error prior / Theta | z (median) |")
    print("|---|---|---|---|---|---|---|---|")
    for source in sources:
        for name in ("quiet", "saturating", "climbing"):
            chosen = [r for r in rows if r["source"] == source and r["stratum"] == "moving"
                      and r["regime"] == name]
            if not chosen:
                continue
            z = [r["z"] for r in chosen if r["z"] is not None]
            print(f"| {source} | {name} | {len(chosen)} | "
                  f"{sum(r['theta'][0] < r['prior'][0] for r in chosen)} | "
                  f"{_median(chosen, 'prior'):.2f} | {_median(chosen, 'theta'):.2f} | "
                  f"{np.median([r['prior'][1] for r in chosen]):+.2f} / "
                  f"{np.median([r['theta'][1] for r in chosen]):+.2f} | "
                  + (f"{np.median(z):.2f} ({len(z)} bounded)" if z else "no range") + " |")
    print(f"\n| source | stratum | forecasts | prior | Theta | Theta where z < {Z_GATE:g} | "
          "Theta where the whole part climbs on a line (forecasts) |")
    print("|---|---|---|---|---|---|---|")
    for source in sources:
        for part in ("all", "moving", "quiet"):
            chosen = [r for r in rows if r["source"] == source
                      and (part == "all" or r["stratum"] == part)]
            if chosen:
                print(f"| {source} | {part} | {len(chosen)} | {_median(chosen, 'prior'):.2f} | "
                      f"{_median(chosen, 'theta'):.2f} | {_gated(chosen, _headroom_gate):.2f} | "
                      f"{_gated(chosen, _line_gate):.2f} "
                      f"({sum(map(_line_gate, chosen))}) |")


def main() -> None:
    """Forecast the design sources (or read the records) and print the tables."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--logs", default=str(ROOT.parent / "shared" / "data" / "real_logs"))
    parser.add_argument("--rows", default=str(Path(__file__).resolve().parent / "results"
                                              / "climb_separation_rows.json"))
    args = parser.parse_args()
    path = Path(args.rows)
    if path.exists():
        rows = json.loads(path.read_text())
    else:
        rows = _records(Path(args.logs))
        path.write_text(json.dumps(rows))
    print_tables(rows)


if __name__ == "__main__":
    main()
