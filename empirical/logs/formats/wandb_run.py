"""A W&B run directory: ``files/wandb-history.jsonl``, else its console ``files/output.log``."""

from __future__ import annotations

from pathlib import Path

from grpodyn.empirical.logs.formats.base import Options, Source, dispatch

__all__ = ["parse", "sniff"]


def _log(path: Path) -> tuple[Path, Path] | None:
    """Return (the log, its folder) of a W&B run directory, or None.

    The history first, then a console ``output.log`` beside a ``config.yaml``; in ``files/``
    first, then in the directory itself.
    """
    for files in (path / "files", path):
        if (files / "wandb-history.jsonl").is_file():
            return files / "wandb-history.jsonl", files
        if (files / "output.log").is_file() and (files / "config.yaml").is_file():
            return files / "output.log", files
    return None


def sniff(path: Path) -> bool:
    """Return whether ``path`` is a directory holding a W&B history or console log."""
    return path.is_dir() and _log(path) is not None


def parse(path: Path, options: Options) -> Source:
    """Return the run's history (format ``wandb_run``) or its console log, with a note."""
    log, files = _log(path)
    source = dispatch(log, options)
    if log.name == "wandb-history.jsonl":
        source.parsed.format = "wandb_run"
    else:
        source.parsed.notes.append("W&B run directory without wandb-history.jsonl: read "
                                   "its console output.log")
    source.beside = [files, path]
    return source
