"""Time to load a TensorBoard log: ``python benchmarks/tensorboard_load.py``.

Writes one event file of ``--steps`` steps with ``--tags`` scalars each (a verl run logs about
30-150 per step), as PyTorch's writer frames them, into a temporary folder, and loads it with
``grpodyn.empirical.logs.loaders.load_run`` ``--repeat`` times in this process. Prints the
median and fastest wall time and the file's size; the checksum library in use is named (the
``tensorboard`` extra installs ``google-crc32c``; without it the pure Python checksum is used).
"""

from __future__ import annotations

import argparse
import statistics
import struct
import tempfile
import time
from pathlib import Path

import numpy as np


def write_event_file(path: Path, steps: int, tags: int, seed: int = 0) -> None:
    """Write ``steps`` events of ``tags`` scalars each (``critic/score/mean`` among them)."""
    from tensorboard.compat.proto import event_pb2, summary_pb2
    from tensorboard.compat.tensorflow_stub.pywrap_tensorflow import masked_crc32c

    names = ["critic/score/mean", "actor/entropy", "actor/lr"]
    names += [f"x/m{i}" for i in range(tags - 3)]
    rng = np.random.default_rng(seed)
    records = []
    for event in [event_pb2.Event(wall_time=0.0, file_version="brain.Event:2")] + [
            event_pb2.Event(step=step, wall_time=float(step), summary=summary_pb2.Summary(
                value=[summary_pb2.Summary.Value(tag=name, simple_value=float(rng.random()))]))
            for step in range(steps) for name in names]:
        data = event.SerializeToString()
        head = struct.pack("<Q", len(data))
        records.append(head + struct.pack("<I", masked_crc32c(head)) + data
                       + struct.pack("<I", masked_crc32c(data)))
    path.write_bytes(b"".join(records))


def main() -> None:
    """Write the file, load it ``--repeat`` times, print the timings."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=1000, help="logged steps (default 1000)")
    parser.add_argument("--tags", type=int, default=100, help="scalars per step (default 100)")
    parser.add_argument("--repeat", type=int, default=5, help="loads timed (default 5)")
    args = parser.parse_args()
    from grpodyn.empirical.logs.loaders import load_run

    try:
        import google_crc32c  # noqa: F401
        checksum = "google-crc32c"
    except ImportError:
        checksum = "pure Python (tensorboard)"
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "events.out.tfevents.bench"
        write_event_file(path, args.steps, args.tags)
        times = []
        for _ in range(args.repeat):
            start = time.perf_counter()
            run = load_run(path)
            times.append(time.perf_counter() - start)
        size = path.stat().st_size / 2**20
    print(f"{args.steps} steps x {args.tags} scalars ({size:.1f} MiB, {run.n_points} reward "
          f"points), checksum {checksum}: median {statistics.median(times):.2f} s, fastest "
          f"{min(times):.2f} s of {args.repeat}")


if __name__ == "__main__":
    main()
