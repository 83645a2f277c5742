"""A ``wandb/`` folder of runs: ``latest-run``, else its only run."""

from __future__ import annotations

from pathlib import Path

from grpodyn.empirical.logs.common import LogFormatError
from grpodyn.empirical.logs.formats.base import Options, Source, dispatch

__all__ = ["parse", "sniff"]


def _runs(path: Path) -> list[Path]:
    """Return the run folders (``*run-*`` with a ``files/`` inside), by name."""
    return sorted(p for p in path.glob("*run-*") if (p / "files").is_dir())


def sniff(path: Path) -> bool:
    """Return whether ``path`` is a directory of W&B runs."""
    return path.is_dir() and bool(_runs(path))


def parse(path: Path, options: Options) -> Source:
    """Return ``latest-run`` (or the only run) parsed, with a note naming it.

    Raises
    ------
    LogFormatError
        When the folder holds several runs and no ``latest-run``.
    """
    runs = _runs(path)
    latest = path / "latest-run"
    if not latest.is_dir() and len(runs) > 1:
        raise LogFormatError(f"{path}: a W&B folder with {len(runs)} runs and no "
                             f"latest-run: give one of {', '.join(p.name for p in runs)}")
    chosen = latest if latest.is_dir() else runs[0]
    source = dispatch(chosen, options)
    source.parsed.notes.append(f"a W&B folder: read {chosen.name}"
                               + (f" ({chosen.resolve().name})" if chosen == latest else ""))
    return source
