"""A TRL run directory with several ``checkpoint-N`` folders: the latest one is read."""

from __future__ import annotations

import re
from pathlib import Path

from grpodyn.empirical.logs.formats.base import Options, Source, dispatch

__all__ = ["parse", "sniff"]


def _number(path: Path) -> int:
    """Return N of a ``checkpoint-N`` folder, -1 for another name."""
    match = re.fullmatch(r"checkpoint-(\d+)", path.name)
    return int(match.group(1)) if match else -1


def _checkpoints(path: Path) -> list[Path]:
    """Return the ``checkpoint-N`` folders holding ``trainer_state.json``, by N."""
    return sorted((p for p in path.glob("checkpoint-*")
                   if _number(p) >= 0 and (p / "trainer_state.json").is_file()), key=_number)


def sniff(path: Path) -> bool:
    """Return whether ``path`` is a directory with a ``checkpoint-<N>/trainer_state.json``."""
    return path.is_dir() and bool(_checkpoints(path))


def parse(path: Path, options: Options) -> Source:
    """Return the latest checkpoint's ``trainer_state.json`` (it holds the whole history)."""
    checkpoints = _checkpoints(path)
    latest = checkpoints[-1]
    source = dispatch(latest / "trainer_state.json", options)
    source.beside = [latest, path]
    if len(checkpoints) > 1:
        source.parsed.notes.append(
            f"{len(checkpoints)} checkpoints: read the latest, {latest.name} (its "
            "trainer_state.json holds the whole history)")
    return source
