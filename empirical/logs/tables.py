"""Logs that are tables: wide CSV/TSV, W&B CSV exports, long-format CSV.

- Wide: one row per step, one column per metric; the step column is the first of
  ``TABLE_STEP_NAMES`` present (``train/global_step`` before W&B's own ``_step`` counter), and
  a row with no value there takes the next trainer's step it holds (the ``eval/global_step`` of
  OpenRLHF's evaluation rows); a run column (``common.RUN_TAGS``) splits the rows into runs
  named by it.
- W&B panel export: ``Step`` and ``<run> - <metric>`` columns (``__MIN``/``__MAX`` band columns
  dropped); one run per ``<run>`` prefix.
- Long: ``run, step, metric, value`` rows (the run column optional: ``common.RUN_TAGS``).

The delimiter (comma, semicolon, tab) is the one the header line holds most of; in a table
delimited by semicolons or tabs, numbers with a decimal comma (``0,25``, as spreadsheets of many
locales export them) are read with a note. A header that names one column twice is an error; a
last row cut short (a run still writing, a job killed: no newline ends the file) is left unread
with a note.

A wide table that interleaves training rows with rows of another kind (a W&B history export:
evaluation rows holding only ``eval/*`` values, the closing row holding only the step and the
epoch) says so: those rows are no training points with a missing reward.
"""

from __future__ import annotations

import csv
import io
import math
import re
from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np

from grpodyn.empirical.logs.aliases import is_evaluation, resolve
from grpodyn.empirical.logs.common import RUN_TAGS, LogFormatError, Parsed, Rows, number
from grpodyn.empirical.logs.records import STEP_NAMES

__all__ = ["parse_table", "TABLE_STEP_NAMES"]

#: Step columns of a table, in order of preference: the records' step fields but ``iter``.
TABLE_STEP_NAMES = tuple(name for name in STEP_NAMES if name != "iter")


#: A number written with a decimal comma: ``0,25``, ``-1,5e-06``.
_DECIMAL_COMMA = re.compile(r"^\s*[-+]?\d*,\d+(?:[eE][-+]?\d+)?\s*$")


def _delimiter(text: str) -> str | None:
    """Return the delimiter the header line holds most of (None when no one stands out)."""
    header = text.split("\n", 1)[0]
    counts = sorted(((header.count(d), d) for d in ",;\t"), reverse=True)
    return counts[0][1] if counts[0][0] > counts[1][0] else None


def _table_rows(path: Path, text: str) -> tuple[list[str], list[list[str]], str, list[str]]:
    """Return the header, the rows, the delimiter and notes (a last row cut short)."""
    delimiter = _delimiter(text)
    if delimiter is None:
        try:
            delimiter = csv.Sniffer().sniff(text[:4096], delimiters=",;\t").delimiter
        except csv.Error:
            delimiter = ","
    reader = csv.reader(io.StringIO(text), delimiter=delimiter)
    try:
        header = next(reader)
    except StopIteration:
        raise LogFormatError(f"{path}: empty file") from None
    except csv.Error as exc:
        raise LogFormatError(f"{path}:1: not a readable table ({exc})") from None
    twice = [(name, n) for name, n in Counter(h.strip() for h in header).items()
             if n > 1 and name]
    if twice:
        raise LogFormatError(f"{path}:1: the column {twice[0][0]!r} appears {twice[0][1]} times "
                             "in the header: rename or remove one (which holds the values "
                             "meant is not known)")
    body, bad = [], None
    lineno = 1
    try:
        for lineno, row in enumerate(reader, start=2):
            if not row:
                continue
            if bad is not None:  # a short or long row before the last: an error
                raise LogFormatError(bad[1])
            if len(row) != len(header):
                bad = lineno, f"{path}:{lineno}: {len(row)} fields, the header has {len(header)}"
                continue
            body.append(row)
    except csv.Error as exc:
        raise LogFormatError(f"{path}:{lineno + 1}: not a readable table ({exc})") from None
    notes = []
    if bad is not None:  # the last row: cut short where the writer did not finish its line
        if not body or text.endswith(("\n", "\r")):
            raise LogFormatError(bad[1])
        notes.append(f"line {bad[0]}: the last line is cut short (a run still "
                     "writing or killed): not read")
    return [h.strip() for h in header], body, delimiter, notes


def _decimal_commas(body: list[list[str]]) -> int:
    """Rewrite numbers with a decimal comma as numbers with a point; return how many."""
    n = 0
    for row in body:
        for i, cell in enumerate(row):
            if "," in cell and _DECIMAL_COMMA.match(cell):
                row[i] = cell.replace(",", ".")
                n += 1
    return n


def _long_runs(header: list[str], body: list[list[str]]) -> dict[str, Rows]:
    col = {name.lower(): i for i, name in enumerate(header)}
    run_col = next((col[tag] for tag in RUN_TAGS if tag in col), None)
    by_run: dict[str, dict[float, dict[str, Any]]] = {}
    step_name = header[col["step"]]
    for row in body:
        name = row[run_col] if run_col is not None else ""
        step = number(row[col["step"]])
        entry = by_run.setdefault(name, {}).setdefault(step, {step_name: row[col["step"]]})
        entry[row[col["metric"]].strip()] = row[col["value"]]
    return {name: sorted(steps.items()) for name, steps in by_run.items()}


def _increasing_columns(header: list[str], body: list[list[str]]) -> str:
    """Name the columns whose numbers rise at every row: the candidates for ``--step-key``."""
    found = []
    for i, name in enumerate(header):
        values = np.array([number(row[i]) if i < len(row) else math.nan for row in body])
        if values.size > 1 and (np.diff(values) > 0).all():
            found.append(name)
    return f"; columns that rise at every row: {', '.join(found[:6])}" if found else ""


def _wide_runs(path: Path, header: list[str], body: list[list[str]], step_key: str | None
               ) -> tuple[dict[str, Rows], str]:
    names = (step_key,) if step_key else TABLE_STEP_NAMES
    step_cols = [header.index(n) for n in names if n in header]
    if not step_cols:
        raise LogFormatError(f"{path}: no step column (looked for {', '.join(names)}"
                             + ("" if step_key else "; give --step-key") + ")"
                             + _increasing_columns(header, body))
    step_col = step_cols[0]
    # a row without the table's step takes the next trainer's step it holds (OpenRLHF's
    # evaluation rows log eval/global_step alone), never W&B's own counter
    steps_of_row = [step_col] + [i for i in step_cols[1:] if header[i] != "_step"]
    columns: dict[str, list[tuple[int, str]]] = {}
    fmt = "csv"
    for i, h in enumerate(header):
        if i == step_col:
            continue
        run, metric = "", h
        if " - " in h:  # W&B export: "<run> - <metric>", with __MIN/__MAX band columns
            fmt = "wandb_csv"
            run, metric = h.rsplit(" - ", 1)
            if metric.endswith(("__MIN", "__MAX")):
                continue
        columns.setdefault(run, []).append((i, metric))
    if fmt == "wandb_csv":
        columns.pop("", None)  # columns of no run (wall time, ...)
    runs = {}
    for run, cols in columns.items():
        filled = [j for j, row in enumerate(body) if any(row[i].strip() for i, _ in cols)]
        # a W&B export aligns its runs on one Step column: a run's rows before its first value
        # and after its last are the other runs' steps, not points of this run
        rows_of = body[filled[0]:filled[-1] + 1] if fmt == "wandb_csv" and filled else body
        rows: Rows = []
        for row in rows_of:
            # an empty cell stays an empty string: the loader counts an empty reward as a
            # dropped point, and treats every other empty cell as a metric not logged there
            entry = {metric: row[i] for i, metric in cols if metric}
            col = next((i for i in steps_of_row if row[i].strip()), step_col)
            entry[header[col]] = row[col]
            rows.append((number(row[col]), entry))
        runs[run] = rows
    if not runs:
        runs[""] = [(number(row[step_col]), {header[step_col]: row[step_col]}) for row in body]
    return runs, fmt


def _rows_of_no_point(rows: Rows) -> tuple[Rows, list[str]]:
    """Return a wide table's rows with those that are no training points said, and notes.

    Beside its training rows a W&B history export holds evaluation rows (only evaluation
    metrics, :func:`aliases.is_evaluation`, besides the step, the epoch and W&B's own ``_*``
    columns) and a closing row (only the step and the epoch). Their empty cells are dropped,
    so that the loader reads them as what they are (evaluations at their steps; no point)
    rather than as points whose reward is missing. Rows without a finite step are left to the
    loader, which drops them as such; a table of no training row is returned as it is.

    Parameters
    ----------
    rows : Rows
        One run's rows, every column in every row (empty cells as empty strings).

    Returns
    -------
    rows : Rows
        The rows, evaluation and closing rows without their empty cells.
    notes : list of str
        How many rows of each kind, and how they are read.
    """
    names = {k for _, entry in rows for k in entry}
    epochs = {k for k in names if resolve("epoch", {k}) is not None}
    other = {k for k in names if k.startswith("_") or k in TABLE_STEP_NAMES} | epochs
    kinds = []
    for step, entry in rows:
        filled = {k for k, v in entry.items() if str(v).strip()}
        metrics = filled - other
        kinds.append("" if not math.isfinite(step)  # no step: dropped as such by the loader
                     else "eval" if metrics and all(is_evaluation(k) for k in metrics)
                     else "closing" if not metrics and filled & epochs
                     else "train" if metrics else "")
    if "train" not in kinds:
        return rows, []
    out: Rows = [(step, {k: v for k, v in entry.items() if str(v).strip()})
                 if kind in ("eval", "closing") else (step, entry)
                 for (step, entry), kind in zip(rows, kinds, strict=True)]
    notes = []
    n_eval, n_closing = kinds.count("eval"), kinds.count("closing")
    if n_eval:
        logged = sorted({k for (_, entry), kind in zip(out, kinds, strict=True)
                         if kind == "eval" for k in entry} - other)
        held = resolve("heldout_reward", set(logged)) is not None
        notes.append(f"{n_eval} row{' holds' if n_eval == 1 else 's hold'} only evaluation "
                     f"metrics ({', '.join(logged[:3])}{', ...' if len(logged) > 3 else ''}): "
                     "evaluations at their steps"
                     + (", where the held-out reward is read" if held else "")
                     + ", not training points")
    if n_closing:
        notes.append(f"{n_closing} row{' holds' if n_closing == 1 else 's hold'} only the step "
                     "and the epoch (a run's closing log, as TRL's Trainer writes at the end of "
                     "training): not a training point")
    return out, notes


def parse_table(path: Path, text: str, step_key: str | None) -> Parsed:
    """Return a CSV/TSV log of any of the three shapes."""
    header, body, delimiter, notes = _table_rows(path, text)
    if delimiter != ",":
        n = _decimal_commas(body)
        if n:
            notes.append(f"{n} numbers written with a decimal comma (a table delimited by "
                         f"{'semicolons' if delimiter == ';' else 'tabs'}) read as decimals: "
                         "0,25 as 0.25")
    if {"metric", "value", "step"} <= {h.lower() for h in header}:
        runs = _long_runs(header, body)
        if not runs:
            raise LogFormatError(f"{path}: a long-format table with no rows")
        return Parsed("long_csv", runs, notes=notes)
    runs, fmt = _wide_runs(path, header, body, step_key)
    tag = next((i for i, h in enumerate(header) if h.lower() in RUN_TAGS), None)
    if fmt == "csv" and tag is not None and body:  # a run column: one run per tag
        groups: dict[str, list[list[str]]] = {}
        for row in body:
            groups.setdefault(row[tag].strip() or "untagged", []).append(row)
        runs = {name: _wide_runs(path, header, rows, step_key)[0][""]
                for name, rows in groups.items()}
        if len(groups) > 1:
            notes.append(f"rows tagged with their run by the column {header[tag]!r}: "
                         f"{len(groups)} runs, named by the tag")
    ecosystem = "wandb" if fmt == "wandb_csv" else "custom"
    for name, rows in runs.items():
        runs[name], kinds = _rows_of_no_point(rows)
        notes += [f"{name}: {note}" if name else note for note in kinds]
    return Parsed(fmt, runs, ecosystem=ecosystem, notes=notes)
