"""Wall time of a sweep's joint fit and of a transfer: ``python benchmarks/sweep_timing.py``.

The sweep is the shipped grid 2's Adam runs of seed 0 (7 runs of 360 steps, the finite-G
map with Adam's split noise: ``python -m grpodyn.empirical.tinylm.make_grid --design grid2``),
as notebook 05 reads it. Timed in this process, each ``--repeat`` times (median and fastest):

- ``fit_sweep`` of the seven runs;
- ``transfer`` of the G = 16 setting from the other six, with the band's cross-validated
  transfer error (six leave-one-setting-out refits), as ``grpodyn transfer`` does by default.

Compare two revisions by running this file under each, alternated on one machine: install each
checkout editable in its own virtual environment (``PYTHONPATH`` alone mixes the revisions:
the installed package maps ``grpodyn.numerics`` and the others to its own folders).
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable


def _times(fn: Callable[[], object], repeat: int) -> list[float]:
    out = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        out.append(time.perf_counter() - start)
    return out


def main() -> None:
    """Time the fit and the transfer and print one line each."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3, help="runs of each (default 3)")
    parser.add_argument("--fit-only", action="store_true", help="time the joint fit alone")
    args = parser.parse_args()
    from grpodyn.empirical.logs.sweep import fit_sweep, load_sweep_run, transfer
    from grpodyn.empirical.tinylm.make_grid import DESIGNS

    folder = DESIGNS["grid2"].out
    if not folder.is_dir():
        raise SystemExit(f"{folder}: the shipped grid is missing (a checkout's studies/ folder)")
    runs = [load_sweep_run(p) for p in sorted(folder.glob("adam_*_seed0.json"))]
    sources = [r for r in runs if "_G16_B8_" not in r.name]
    cases = {"fit_sweep, 7 runs x 360 steps": lambda: fit_sweep(runs)}
    if not args.fit_only:
        cases["transfer, 6 sources, cross-validated"] = lambda: transfer(
            sources, {"group_size": 16, "batch": 8, "lr": 2e-4, "seed": 0}, steps=359)
    for name, fn in cases.items():
        times = _times(fn, args.repeat)
        print(f"{name}: median {statistics.median(times):.2f} s, fastest {min(times):.2f} s "
              f"({args.repeat} runs)")


if __name__ == "__main__":
    main()
