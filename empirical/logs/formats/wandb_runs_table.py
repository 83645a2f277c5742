"""A W&B runs table (a project's runs exported as CSV): refused, since it holds no history.

The runs table's export has one row per run: its ``Name``, ``State``, ``Notes``, ``User``,
``Tags``, ``Created``, ``Runtime``, ``Sweep``, its config and the last value of each metric (its
summary; ``_step`` and ``train/global_step`` there are the last step, not a step column). Read
as a table, its rows would be points of one run mixing the runs' values. A history export (a
panel's CSV, one row per logged step) has none of the first three columns.
"""

from __future__ import annotations

import csv
import gzip
import io
import zlib
from pathlib import Path

from grpodyn.empirical.logs.common import LogFormatError
from grpodyn.empirical.logs.formats.base import Options, Source, log_suffix, log_text

__all__ = ["parse", "sniff", "COLUMNS"]

#: The columns of a runs table's header that a history export never has.
COLUMNS = frozenset({"Name", "State", "Runtime"})

#: How much of a file its header is looked for in (bytes).
_HEAD = 65536


def _header(path: Path) -> set[str]:
    """Return the column names of a CSV or TSV file's first line (none where unreadable)."""
    try:
        with path.open("rb") as stream:
            head = stream.read(_HEAD)
        if head[:2] == b"\x1f\x8b":
            with gzip.open(path, "rb") as stream:
                head = stream.read(_HEAD)
    except (OSError, EOFError, zlib.error):
        return set()
    line = head.decode("utf-8-sig", errors="replace").splitlines()[:1]
    delimiter = "\t" if log_suffix(path) == ".tsv" else ","
    return {name.strip() for row in csv.reader(line, delimiter=delimiter) for name in row}


def sniff(path: Path) -> bool:
    """Return whether ``path`` is a CSV or TSV file whose header has Name, State and Runtime."""
    return path.is_file() and log_suffix(path) in {".csv", ".tsv"} and COLUMNS <= _header(path)


def parse(path: Path, options: Options) -> Source:
    """Refuse the table, saying what it holds and how to export a run's history.

    Raises
    ------
    LogFormatError
        Always.
    """
    delimiter = "\t" if log_suffix(path) == ".tsv" else ","
    try:
        rows = [row for row in csv.reader(io.StringIO(log_text(path)), delimiter=delimiter)
                if any(cell.strip() for cell in row)]
    except csv.Error as exc:
        raise LogFormatError(f"{path}: a W&B runs table that is not valid CSV ({exc})") from None
    runs = len(rows) - 1
    raise LogFormatError(f"{path}: a W&B runs table (Name, State, Runtime columns; {runs} "
                         f"run{'' if runs == 1 else 's'}) holds one summary row per run, its last "
                         "values, not a history: export one run's history instead (its history "
                         "CSV from the run's page, wandb.Api().run('ENTITY/PROJECT/RUN_ID')"
                         ".history(), or give the run's folder wandb/run-*/)")
