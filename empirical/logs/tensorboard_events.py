"""TensorBoard logs: an event file, or a directory tree of them (searched recursively).

Event files in one folder are one run (TensorBoard's own convention); folders of a tree are runs
named by their path below the directory given. Scalars only; needs the ``tensorboard`` extra.
TRL writes its metrics as ``train/<name>`` and evaluations as ``eval/<name>``.
"""

from __future__ import annotations

from pathlib import Path

from grpodyn.empirical.logs.common import LogFormatError, Parsed, Rows

__all__ = ["parse_tensorboard"]


def _scalars(path: Path, folder: Path) -> Rows:
    try:
        from tensorboard.backend.event_processing.event_accumulator import EventAccumulator
    except ImportError:
        raise LogFormatError(f"{path}: a TensorBoard event file; reading it needs the "
                             "tensorboard package (pip install grpodyn[tensorboard])") from None
    accumulator = EventAccumulator(str(folder), size_guidance={"scalars": 0})
    try:
        accumulator.Reload()
    except Exception as exc:  # corrupt records surface as several exception types
        raise LogFormatError(f"{path}: not a readable TensorBoard event file ({exc})") from None
    by_step: dict[float, dict[str, float]] = {}
    for tag in accumulator.Tags().get("scalars", []):
        for event in accumulator.Scalars(tag):
            by_step.setdefault(float(event.step), {})[tag] = float(event.value)
    return sorted(by_step.items())


def parse_tensorboard(path: Path) -> Parsed:
    """Return an event file or a directory searched recursively for event files."""
    if path.is_file():
        rows = _scalars(path, path)
        if not rows:
            raise LogFormatError(f"{path}: no scalar summaries in the event file")
        return Parsed("tensorboard", {"": rows}, ecosystem="trl")
    folders = sorted({p.parent for p in path.rglob("*tfevents*") if p.is_file()})
    runs: dict[str, Rows] = {}
    for folder in folders:
        rows = _scalars(path if folder == path else folder, folder)
        if rows:
            runs["" if folder == path else folder.relative_to(path).as_posix()] = rows
    if not runs:
        raise LogFormatError(f"{path}: no scalar summaries in its event files")
    if len(runs) == 1:
        runs = {"": next(iter(runs.values()))}
    return Parsed("tensorboard", runs, ecosystem="trl")
