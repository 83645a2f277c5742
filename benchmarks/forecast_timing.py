"""Wall time of ``grpodyn forecast`` on a 1,000-point log: ``python benchmarks/forecast_timing.py``.

The log is a simulated bandit run of 1,000 steps written by ``grpodyn bandit --write-log``
(a TRL trainer_state.json), or ``--log PATH``. Each forecaster is run ``--repeat`` times as
a fresh process (``python -m grpodyn forecast LOG --train-fraction 0.5 --forecaster NAME
--json``: start-up and imports included, as a user meets them); the median and the fastest
wall time are printed, and the median CPU time (user + system of the child process), which is
what the wall time comes to on an otherwise idle machine. The target is under 1.5 s on two
cores.

Python's compiled bytecode is cached as an installed package has it: the children write it to a
temporary ``PYTHONPYCACHEPREFIX`` in one untimed run per forecaster, whatever
``PYTHONDONTWRITEBYTECODE`` says. Where that variable is set and an editable install has no
cache, every run compiles grpodyn's modules from source, about a fifth of a second more.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

FORECASTERS = ("ensemble", "adaptive", "learned_prior", "calibrated_prior")


def _grpodyn(*args: str, env: dict[str, str] | None = None) -> None:
    subprocess.run([sys.executable, "-P", "-m", "grpodyn", *args], check=True,
                   stdout=subprocess.DEVNULL, env=env)


def _environment(cache: str) -> dict[str, str]:
    """Return the children's environment: bytecode written to and read from ``cache``."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["PYTHONPYCACHEPREFIX"] = cache
    return env


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
        env = _environment(str(Path(folder) / "pycache"))
        log = args.log
        if log is None:
            log = str(Path(folder) / "trainer_state.json")
            _grpodyn("bandit", "--write-log", log, "--steps", "1000", "--seed", "0")
        print("| forecaster | median wall time (s) | fastest (s) | median CPU time (s) |")
        print("|---|---|---|---|")
        for name in FORECASTERS:
            command = ("forecast", log, "--train-fraction", "0.5", "--forecaster", name, "--json")
            _grpodyn(*command, env=env)  # untimed: writes the bytecode cache
            times, cpu = [], []
            for _ in range(args.repeat):
                start, used = time.perf_counter(), _child_cpu()
                _grpodyn(*command, env=env)
                times.append(time.perf_counter() - start)
                cpu.append(_child_cpu() - used)
            print(f"| {name} | {statistics.median(times):.2f} | {min(times):.2f} | "
                  f"{statistics.median(cpu):.2f} |")


if __name__ == "__main__":
    main()
