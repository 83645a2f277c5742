"""Cold and warm derivation of the whole registry, each in a fresh interpreter.

Run: python benchmarks/bench_derivation.py [--repeats N]
Cold: no cache (everything derived with sympy). Warm: read from the disk cache. The figure is the
wall time of ``registry()`` inside the process, median of N runs.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

_CHILD = ("import json, time; from grpodyn.theory import registry, build_info; "
          "t = time.perf_counter(); registry(); "
          "print(json.dumps({'seconds': time.perf_counter() - t, 'source': build_info().source}))")


def _run(cache_dir: str) -> dict:
    env = {**os.environ, "GRPODYN_CACHE_DIR": cache_dir}
    out = subprocess.run([sys.executable, "-c", _CHILD], env=env, check=True,
                         capture_output=True, text=True).stdout
    return json.loads(out)


def main() -> dict:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    cold, warm = [], []
    for _ in range(args.repeats):
        with tempfile.TemporaryDirectory() as cache:
            first = _run(cache)
            second = _run(cache)
        assert first["source"] == "derived" and second["source"] == "cache"
        cold.append(first["seconds"])
        warm.append(second["seconds"])
    result = {"cold_median_s": statistics.median(cold), "warm_median_s": statistics.median(warm),
              "repeats": args.repeats}
    print(json.dumps(result))
    return result


if __name__ == "__main__":
    main()
