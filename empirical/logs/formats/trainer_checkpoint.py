"""A TRL checkpoint or output directory: ``trainer_state.json`` inside it."""

from __future__ import annotations

from pathlib import Path

from grpodyn.empirical.logs.formats.base import Options, Source, dispatch

__all__ = ["parse", "sniff"]


def sniff(path: Path) -> bool:
    """Return whether ``path`` is a directory holding ``trainer_state.json``."""
    return path.is_dir() and (path / "trainer_state.json").is_file()


def parse(path: Path, options: Options) -> Source:
    """Return its ``trainer_state.json``, with the folder and its parent for config files."""
    source = dispatch(path / "trainer_state.json", options)
    source.beside = [path, path.parent]
    return source
