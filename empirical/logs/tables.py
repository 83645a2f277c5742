"""Logs that are tables: wide CSV/TSV, W&B CSV exports, long-format CSV.

- Wide: one row per step, one column per metric; the step column is the first of
  ``STEP_NAMES`` present (``train/global_step`` before W&B's own ``_step`` counter).
- W&B panel export: ``Step`` and ``<run> - <metric>`` columns (``__MIN``/``__MAX`` band columns
  dropped); one run per ``<run>`` prefix.
- Long: ``run, step, metric, value`` rows (``run`` optional).
"""

from __future__ import annotations

import csv
import io
from pathlib import Path
from typing import Any

from grpodyn.empirical.logs.common import LogFormatError, Parsed, Rows, number

__all__ = ["parse_table", "TABLE_STEP_NAMES"]

#: Step columns of a table, in order of preference.
TABLE_STEP_NAMES = ("step", "global_step", "train/global_step", "trainer/global_step",
                    "training/global_step", "Step", "_step", "grpo_step", "iteration")


def _table_rows(path: Path, text: str) -> tuple[list[str], list[list[str]]]:
    try:
        dialect = csv.Sniffer().sniff(text[:4096], delimiters=",;\t")
    except csv.Error:
        dialect = csv.excel
    reader = csv.reader(io.StringIO(text), dialect)
    try:
        header = next(reader)
    except StopIteration:
        raise LogFormatError(f"{path}: empty file") from None
    except csv.Error as exc:
        raise LogFormatError(f"{path}:1: not a readable table ({exc})") from None
    body = []
    lineno = 1
    try:
        for lineno, row in enumerate(reader, start=2):
            if not row:
                continue
            if len(row) != len(header):
                raise LogFormatError(f"{path}:{lineno}: {len(row)} fields, the header has "
                                     f"{len(header)}")
            body.append(row)
    except csv.Error as exc:
        raise LogFormatError(f"{path}:{lineno + 1}: not a readable table ({exc})") from None
    return [h.strip() for h in header], body


def _long_runs(header: list[str], body: list[list[str]]) -> dict[str, Rows]:
    col = {name.lower(): i for i, name in enumerate(header)}
    run_col = col.get("run", col.get("run_name"))
    by_run: dict[str, dict[float, dict[str, Any]]] = {}
    step_name = header[col["step"]]
    for row in body:
        name = row[run_col] if run_col is not None else ""
        step = number(row[col["step"]])
        entry = by_run.setdefault(name, {}).setdefault(step, {step_name: row[col["step"]]})
        entry[row[col["metric"]].strip()] = row[col["value"]]
    return {name: sorted(steps.items()) for name, steps in by_run.items()}


def _wide_runs(path: Path, header: list[str], body: list[list[str]], step_key: str | None
               ) -> tuple[dict[str, Rows], str]:
    names = (step_key,) if step_key else TABLE_STEP_NAMES
    step_col = next((header.index(n) for n in names if n in header), None)
    if step_col is None:
        raise LogFormatError(f"{path}: no step column (looked for {', '.join(names)}"
                             + ("" if step_key else "; give --step-key") + ")")
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
            entry[header[step_col]] = row[step_col]
            rows.append((number(row[step_col]), entry))
        runs[run] = rows
    if not runs:
        runs[""] = [(number(row[step_col]), {header[step_col]: row[step_col]}) for row in body]
    return runs, fmt


def parse_table(path: Path, text: str, step_key: str | None) -> Parsed:
    """Return a CSV/TSV log of any of the three shapes."""
    header, body = _table_rows(path, text)
    if {"metric", "value", "step"} <= {h.lower() for h in header}:
        runs = _long_runs(header, body)
        if not runs:
            raise LogFormatError(f"{path}: a long-format table with no rows")
        return Parsed("long_csv", runs)
    runs, fmt = _wide_runs(path, header, body, step_key)
    return Parsed(fmt, runs, ecosystem="wandb" if fmt == "wandb_csv" else "custom")
