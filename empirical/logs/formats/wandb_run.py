"""A W&B run directory: its history (``wandb-history.jsonl``, ``run-<id>.wandb``) or console."""

from __future__ import annotations

from pathlib import Path

from grpodyn.empirical.logs.common import LogFormatError
from grpodyn.empirical.logs.formats.base import Options, Source, dispatch

__all__ = ["parse", "sniff"]


def _run_files(path: Path) -> list[Path]:
    """Return the binary run files (``run-*.wandb``) directly inside ``path``, by name."""
    try:
        return sorted(p for p in path.glob("run-*.wandb") if p.is_file())
    except OSError:
        return []


def _log(path: Path) -> tuple[Path, Path] | None:
    """Return (the log, its config folder) of a W&B run directory, or None.

    The history of wandb before 0.10 (``wandb-history.jsonl``), then the binary run file of
    later versions, then a console ``output.log`` beside a ``config.yaml``; in ``files/`` first,
    then in the directory itself.
    """
    folders = (path / "files", path)
    for files in folders:
        if (files / "wandb-history.jsonl").is_file():
            return files / "wandb-history.jsonl", files
    binary = _run_files(path)
    if binary:
        return binary[0], folders[0] if folders[0].is_dir() else path
    for files in folders:
        if (files / "output.log").is_file() and (files / "config.yaml").is_file():
            return files / "output.log", files
    return None


def sniff(path: Path) -> bool:
    """Return whether ``path`` is a directory holding a W&B history or console log."""
    return path.is_dir() and _log(path) is not None


def parse(path: Path, options: Options) -> Source:
    """Return the run's history (format ``wandb_run`` or ``wandb_binary``) or its console log.

    Raises
    ------
    LogFormatError
        When the directory holds several run files (``run-*.wandb``).
    """
    log, files = _log(path)
    if log.suffix == ".wandb" and len(binary := _run_files(path)) > 1:
        raise LogFormatError(f"{path}: a W&B run directory with {len(binary)} run files: give "
                             f"one of {', '.join(p.name for p in binary)}")
    source = dispatch(log, options)
    if log.name == "wandb-history.jsonl":
        source.parsed.format = "wandb_run"
    elif log.name == "output.log":
        source.parsed.notes.append("W&B run directory without wandb-history.jsonl or "
                                   "run-<id>.wandb: read its console output.log")
    source.beside = [files, path]
    return source
