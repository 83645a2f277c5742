"""Pooled coverage of ``grpodyn forecast``'s band at several levels, on the public logs.

Does ``--level`` mean what it says? For every public log that loads (``../shared/data/
real_logs`` beside the checkout, or ``--logs DIR``), cut at 30% and 50% of the run
(``--train-fraction``), the command's band at each level is scored on the held-out rest: the
share of held-out points inside it, pooled over the forecasts (weighted by their held-out
points) and per forecast (median). Run ``python benchmarks/forecast_levels.py [--logs DIR]
[--levels 0.5 0.8 0.9]``; about 8 minutes on two cores.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
from tqdm import tqdm

ROOT = Path(__file__).resolve().parents[1]
LOGS = ROOT.parent / "shared" / "data" / "real_logs"


def coverage(log: Path, fraction: float, level: float) -> tuple[float, int] | None:
    """Held-out coverage and held-out points of one forecast (None: the command refused)."""
    done = subprocess.run([sys.executable, "-m", "grpodyn", "forecast", str(log),
                           "--train-fraction", str(fraction), "--level", str(level), "--json"],
                          capture_output=True, text=True, check=False)
    if done.returncode:
        return None
    out = json.loads(done.stdout)
    if out.get("coverage") is None or not out.get("n_holdout"):
        return None
    return float(out["coverage"]), int(out["n_holdout"])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--logs", type=Path, default=LOGS, help="folder of the public logs")
    parser.add_argument("--levels", type=float, nargs="+", default=[0.5, 0.8, 0.9])
    args = parser.parse_args(argv)
    if not args.logs.is_dir():
        print(f"--logs {args.logs}: not a folder", file=sys.stderr)
        return 2
    logs = sorted(p for p in args.logs.iterdir() if p.suffix.lower() not in (".md", ".txt"))
    cells = [(log, f, level) for log in logs for f in (0.3, 0.5) for level in args.levels]
    scored = {cell: coverage(*cell) for cell in tqdm(cells, desc="forecasts", unit="forecast")}
    print("| level | forecasts | pooled coverage | median per-forecast coverage |")
    print("|---|---|---|---|")
    for level in args.levels:
        rows = [v for (_, _, lv), v in scored.items() if lv == level and v is not None]
        share = np.array([c for c, _ in rows])
        points = np.array([n for _, n in rows])
        print(f"| {level:g} | {len(rows)} | {share @ points / points.sum():.3f} | "
              f"{np.median(share):.3f} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
