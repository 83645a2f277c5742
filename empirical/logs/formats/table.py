"""CSV and TSV tables: wide (one column per metric), W&B exports, long format."""

from __future__ import annotations

from pathlib import Path

from grpodyn.empirical.logs.formats.base import Options, Source, log_suffix, log_text
from grpodyn.empirical.logs.tables import parse_table

__all__ = ["parse", "sniff"]


def sniff(path: Path) -> bool:
    """Return whether ``path`` is a file ending in ``.csv`` or ``.tsv``."""
    return path.is_file() and log_suffix(path) in {".csv", ".tsv"}


def parse(path: Path, options: Options) -> Source:
    """Return the table's rows, by step."""
    return Source(parse_table(path, log_text(path), options.step_key), str(path), [path.parent])
