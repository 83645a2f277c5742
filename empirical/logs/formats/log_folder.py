"""A directory of log files: its one log, or one run per file of one format.

The files are ``*.jsonl``, ``*.csv``, ``*.tsv`` and ``*.log`` (gzipped or not) directly inside.
A directory that holds nothing but one folder (verl's file-logger root, whose logs lie in
``<project>/<experiment>.jsonl``) is read through that folder.

Tried after the directory formats that know a trainer's layout (a checkpoint, a W&B run, a
TensorBoard tree). Logs of several formats, or files whose hyperparameters differ, are not
read together: the error names the files, to give one of them.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from grpodyn.empirical.logs.common import LogFormatError, Parsed
from grpodyn.empirical.logs.formats import console, jsonl
from grpodyn.empirical.logs.formats.base import Options, Source, dispatch, log_suffix

__all__ = ["parse", "sniff", "SUFFIXES", "MAX_FILES"]

#: The suffixes of the files read as logs (past a ``.gz``).
SUFFIXES = (".jsonl", ".csv", ".tsv", ".log")

#: The most files read as the runs of one directory.
MAX_FILES = 64


def _logs(path: Path) -> list[Path]:
    """Return the log files directly inside ``path``, by name."""
    try:
        return sorted(p for p in path.iterdir() if not p.name.startswith(".") and p.is_file()
                      and log_suffix(p) in SUFFIXES)
    except OSError:
        return []


def _unread(path: Path, logs: list[Path]) -> str:
    """Say which other files directly inside ``path`` are left unread ("" when none).

    A ``trainer_state.json`` beside a ``.csv`` is not a log of this reading; the note names it
    so that the file read is not mistaken for the one meant.
    """
    try:
        others = sorted(p.name for p in path.iterdir()
                        if not p.name.startswith(".") and p.is_file() and p not in logs)
    except OSError:
        return ""
    if not others:
        return ""
    shown = ", ".join(others[:4]) + (f" and {len(others) - 4} more" if len(others) > 4 else "")
    return (f"; left unread: {shown} (not {', '.join(SUFFIXES)}; give a file's path to read "
            "it)")


def _stem(path: Path) -> str:
    """Return a log file's name less its suffixes: ``run0`` for ``run0.jsonl.gz``."""
    name = path.name[:-3] if path.name.lower().endswith(".gz") else path.name
    return Path(name).stem


def _only_folder(path: Path) -> Path | None:
    """Return the one folder ``path`` holds where it holds nothing else (hidden names aside).

    A link is not followed, so that a folder linking to itself is not entered without end.
    """
    try:
        entries = [p for p in path.iterdir() if not p.name.startswith(".")]
    except OSError:
        return None
    if len(entries) == 1 and entries[0].is_dir() and not entries[0].is_symlink():
        return entries[0]
    return None


def sniff(path: Path) -> bool:
    """Return whether ``path`` is a directory with a log file directly inside, or one folder."""
    return path.is_dir() and (bool(_logs(path)) or _only_folder(path) is not None)


def _refuse(path: Path, logs: list[Path], why: str) -> LogFormatError:
    """Return the error of a directory whose logs are not read together."""
    shown = ", ".join(p.name for p in logs[:8]) + (", ..." if len(logs) > 8 else "")
    return LogFormatError(f"{path}: a directory with {len(logs)} logs ({shown}), {why}: give "
                          "one of them")


def parse(path: Path, options: Options) -> Source:
    """Return the directory's one log, its logs as runs named by their files, or its folder's.

    Raises
    ------
    LogFormatError
        When the logs are of several formats or record different hyperparameters, when there
        are more than :data:`MAX_FILES`, when a file cannot be read (naming it), or when the one
        folder holds no log (naming the folder).
    """
    logs = _logs(path)
    inner = None if logs else _only_folder(path)
    if inner is not None:
        source = dispatch(inner, options)
        source.parsed.notes.append(f"a directory holding one folder: read {inner.name}")
        return source
    if len(logs) == 1:
        source = dispatch(logs[0], options)
        source.parsed.notes.append(f"a directory: read its one log, {logs[0].name}"
                                   f"{_unread(path, logs)}")
        return source
    if len(logs) > MAX_FILES:
        raise _refuse(path, logs, f"more than {MAX_FILES}")
    kind = {p: next(f for f in options.formats if f.sniff(p)) for p in logs}
    if set(kind.values()) == {jsonl, console} and not any(
            log_suffix(p) == ".jsonl" for p in logs):
        # text logs of which some are JSON lines throughout and some not (a run that crashed
        # and printed its traceback): read all of them as the console logs they all are
        kind = dict.fromkeys(logs, console)
        options = replace(options, formats=[console])
    if len(set(kind.values())) > 1:
        shown = "; ".join(f"{p.name}: {kind[p].__name__.rpartition('.')[2]}" for p in logs[:8])
        raise _refuse(path, logs, f"of several formats ({shown})")
    parsed = [dispatch(p, options).parsed for p in logs]
    first = parsed[0]
    if any((p.format, p.ecosystem, p.steps_reconstructed, p.config, p.meta)
           != (first.format, first.ecosystem, first.steps_reconstructed, first.config,
               first.meta) for p in parsed[1:]):
        raise _refuse(path, logs, "not read as runs of one log (their formats, steps or "
                      "recorded settings differ)")
    runs, notes = {}, []
    for log, one in zip(logs, parsed, strict=True):
        for name, rows in one.runs.items():
            runs[f"{_stem(log)}/{name}" if name else _stem(log)] = rows
        notes += [f"{log.name}: {note}" for note in one.notes]
    notes.insert(0, f"a directory of {len(logs)} logs: one run per file, named by the file"
                    f"{_unread(path, logs)}")
    combined = Parsed(first.format, runs, ecosystem=first.ecosystem,
                      steps_reconstructed=first.steps_reconstructed, notes=notes,
                      meta=first.meta, config=first.config)
    return Source(combined, str(path), [path])
