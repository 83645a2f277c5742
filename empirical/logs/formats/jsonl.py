"""JSON lines: flat or typed records, verl's file logger, W&B ``wandb-history.jsonl``."""

from __future__ import annotations

from pathlib import Path

from grpodyn.empirical.logs.formats.base import Options, Source, log_suffix, log_text
from grpodyn.empirical.logs.records import parse_jsonl

__all__ = ["parse", "sniff"]


def sniff(path: Path) -> bool:
    """Return whether ``path`` is a file ending in ``.jsonl``."""
    return path.is_file() and log_suffix(path) == ".jsonl"


def parse(path: Path, options: Options) -> Source:
    """Return the records of the file, by step."""
    return Source(parse_jsonl(path, log_text(path), options.step_key), str(path), [path.parent])
