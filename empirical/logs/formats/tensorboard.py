"""TensorBoard event files: one ``*tfevents*`` file, or a tree of them (the ``logs`` extra)."""

from __future__ import annotations

from pathlib import Path

from grpodyn.empirical.logs.formats.base import Options, Source
from grpodyn.empirical.logs.tensorboard_events import parse_tensorboard

__all__ = ["parse", "sniff"]


def sniff(path: Path) -> bool:
    """Return whether ``path`` is an event file or a directory with one somewhere below."""
    if path.is_file():
        return "tfevents" in path.name
    return path.is_dir() and next(path.rglob("*tfevents*"), None) is not None


def parse(path: Path, options: Options) -> Source:
    """Return the scalars and ``args`` settings of the event file(s), and the folder beside."""
    return Source(parse_tensorboard(path), str(path), [path.parent if path.is_file() else path])
