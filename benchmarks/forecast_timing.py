"""Wall time of ``grpodyn forecast`` on a 1,000-point log: ``python benchmarks/forecast_timing.py``.

The log is a simulated bandit run of 1,000 steps written by ``grpodyn bandit --write-log``
(a TRL trainer_state.json), or ``--log PATH``. Each forecaster is run ``--repeat`` times as
a fresh process (``python -m grpodyn forecast LOG --train-fraction 0.5 --forecaster NAME
--json``: start-up and imports included, as a user meets them); the median and the fastest
wall time are printed, and the median CPU time (user + system of the child process), which is
what the wall time comes to on an otherwise idle machine. The target is under 1.5 s on two
cores.
"""

from __future__ import annotations

import argparse
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

FORECASTERS = ("ensemble", "adaptive", "learned_prior", "calibrated_prior")


def _grpodyn(*args: str) -> None:
    subprocess.run([sys.executable, "-P", "-m", "grpodyn", *args], check=True,
                   stdout=subprocess.DEVNULL)


def _child_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def main() -> None:
    """Time every forecaster and print one line each."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--log", help="the log to forecast (default: a simulated 1,000 steps)")
    parser.add_argument("--repeat", type=int, default=3, help="runs per forecaster")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        log = args.log
        if log is None:
            log = str(Path(folder) / "trainer_state.json")
            _grpodyn("bandit", "--write-log", log, "--steps", "1000", "--seed", "0")
        print("| forecaster | median wall time (s) | fastest (s) | median CPU time (s) |")
        print("|---|---|---|---|")
        for name in FORECASTERS:
            times, cpu = [], []
            for _ in range(args.repeat):
                start, used = time.perf_counter(), _child_cpu()
                _grpodyn("forecast", log, "--train-fraction", "0.5", "--forecaster", name,
                         "--json")
                times.append(time.perf_counter() - start)
                cpu.append(_child_cpu() - used)
            print(f"| {name} | {statistics.median(times):.2f} | {min(times):.2f} | "
                  f"{statistics.median(cpu):.2f} |")


if __name__ == "__main__":
    main()
