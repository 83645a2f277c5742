"""Fits and forecasts on the real GRPO logs: ``python benchmarks/real_logs.py [DIR]``.

Default DIR: the shared real logs beside the project (``../shared/data/real_logs``), else the
excerpts in ``tests/data/real_logs``. Prints a markdown table: per run and model, R^2, the noise
ceiling of R^2, the model with the largest stacking weight, and the forecast from the first
half (holdout R^2, MAE, coverage of the 90% band).
"""

from __future__ import annotations

import sys
from pathlib import Path

from grpodyn.analysis import fit_run
from grpodyn.empirical.logs.loaders import load_run

ROOT = Path(__file__).resolve().parents[1]


def main() -> None:
    default = ROOT.parent / "shared" / "data" / "real_logs"
    folder = Path(sys.argv[1]) if len(sys.argv) > 1 else (
        default if default.is_dir() else ROOT / "tests" / "data" / "real_logs")
    print("| run | points | R^2 ceiling | inertial | exponential | sigmoid | exponential_lr "
          "| best (stacking weight) | forecast F=0.5: holdout R^2 / MAE / 90% coverage |")
    print("|---|---|---|---|---|---|---|---|---|")
    for path in sorted(p for p in folder.iterdir() if p.suffix != ".md"):
        result = fit_run(load_run(path), train_fraction=0.5)
        models = result["models"]
        cells = [f"{models[m]['r2']:.3f}" if m in models else "n/a"
                 for m in ("inertial", "exponential", "sigmoid", "exponential_lr")]
        f = result["forecast"]
        name = path.name.split("__")[0] + "/" + path.name.split("__")[1]
        print(f"| {name} ({result['reward_key']}) | {result['n_points']} | "
              f"{result['noise']['r2_ceiling']:.3f} | " + " | ".join(cells)
              + f" | {result['best']} | {_cell(f['r2_holdout'], '.2f')} / "
              f"{f['mae_holdout']:.3f} / {100 * f['coverage']:.0f}% |")


def _cell(value: float | None, spec: str) -> str:
    return "n/a" if value is None else format(value, spec)


if __name__ == "__main__":
    main()
