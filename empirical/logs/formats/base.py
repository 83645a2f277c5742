"""What every log format module offers, and the dispatch through the registry.

A format is a module with two functions (:class:`Format`): ``sniff(path) -> bool`` says
whether the file or directory is in that format (cheaply: a name, a suffix, a file inside),
``parse(path, options) -> Source`` reads it. :func:`dispatch` asks the formats of
``options.formats`` in order (the registry, :data:`grpodyn.empirical.logs.formats.FORMATS`)
and parses with the first that claims the path.
"""

from __future__ import annotations

import errno
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from grpodyn.empirical.logs.common import LogFormatError, Parsed, read_text

__all__ = ["Format", "Options", "Source", "dispatch", "log_text", "log_suffix"]


@dataclass
class Source:
    """A parsed log and where its hyperparameter files may lie.

    Attributes
    ----------
    parsed : Parsed
        The runs' rows, the format's name, notes and any config record.
    label : str
        The path the runs are reported under.
    beside : list of pathlib.Path
        Folders whose config files hold the run's hyperparameters.
    """

    parsed: Parsed
    label: str
    beside: list[Path]


class Format(Protocol):
    """A log format: a module (or object) with ``sniff`` and ``parse``."""

    def sniff(self, path: Path) -> bool:
        """Return whether ``path`` is a log of this format."""

    def parse(self, path: Path, options: Options) -> Source:
        """Return the log at ``path`` parsed (raise ``LogFormatError`` on bad input)."""


@dataclass(frozen=True)
class Options:
    """What the caller of the loaders asked for, passed to every ``parse``.

    Attributes
    ----------
    step_key : str or None
        The field that holds the optimizer step (None: the usual names).
    logging_steps : int or None
        Optimizer steps between two logged points, for consoles that print no step.
    formats : sequence of Format
        The registry, in priority order: a format whose log holds another log (a checkpoint
        folder, a W&B folder) parses it through :func:`dispatch` with these options.
    reward_key : str or None
        The metric the caller reads as the reward (None: the trainers' names); a console log's
        dict lines that hold it are its records.
    """

    step_key: str | None
    logging_steps: int | None
    formats: Sequence[Format]
    reward_key: str | None = None


def dispatch(path: Path, options: Options) -> Source:
    """Parse ``path`` with the first format of ``options.formats`` that sniffs it.

    Parameters
    ----------
    path : pathlib.Path
        A log file or a run directory.
    options : Options
        The caller's options and the registry.

    Returns
    -------
    Source
        The parsed log.

    Raises
    ------
    LogFormatError
        When no format claims the path (a directory without a log, a missing path) or the
        format's parser refuses it.
    """
    if path.is_dir() and not os.access(path, os.R_OK | os.X_OK):
        raise _unreadable_folder(path)
    for candidate in options.formats:
        try:
            claimed = candidate.sniff(path)
        except PermissionError as exc:  # a folder inside that this user cannot look into
            raise _unreadable_folder(Path(exc.filename).parent if exc.filename else path) \
                from None
        if claimed:
            return candidate.parse(path, options)
    if path.is_dir():
        raise LogFormatError(f"{path}: a directory without a log (looked for trainer_state.json, "
                             "checkpoint-N/trainer_state.json, a W&B run's run-<id>.wandb, "
                             "files/wandb-history.jsonl or files/output.log with config.yaml, "
                             "an MLflow run's metrics/ with params/ or meta.yaml, *tfevents* "
                             "files, *.jsonl, *.csv, *.tsv, *.log files)")
    if not path.is_file():
        try:
            path.stat()
        except OSError as exc:  # a missing path, a broken link, a link loop
            reason = "a symbolic link loop" if exc.errno == errno.ELOOP else (
                "no such file or directory")
            raise LogFormatError(f"{path}: {reason}") from None
        raise LogFormatError(f"{path}: not a regular file or directory (a pipe, a device or a "
                             "socket): give the log's file")
    raise LogFormatError(f"{path}: no log format claims this file")


def _unreadable_folder(folder: Path) -> LogFormatError:
    """Return the error of a folder whose files this user may not list or open.

    The formats look for files inside a folder (trainer_state.json, checkpoint-N, ...); where
    the folder cannot be read, the error names it, not a file that may not exist.
    """
    return LogFormatError(f"{folder}: a directory this user cannot read (permission denied)")


def log_suffix(path: Path) -> str:
    """Return the suffix that says a log file's format, in lower case, past a ``.gz``.

    ``metrics.jsonl.gz`` is a JSON-lines log (``common.read_text`` decompresses it).

    Parameters
    ----------
    path : pathlib.Path
        The file.

    Returns
    -------
    str
        ``.jsonl`` for ``metrics.jsonl`` and ``metrics.jsonl.gz``; ``""`` for a bare ``.gz``.
    """
    if path.suffix.lower() == ".gz":
        return Path(path.stem).suffix.lower()
    return path.suffix.lower()


def log_text(path: Path) -> str:
    """Return the text of a log file, refusing an empty one.

    Parameters
    ----------
    path : pathlib.Path
        The file.

    Returns
    -------
    str
        Its text (``common.read_text``: UTF-8, with a clear error otherwise).

    Raises
    ------
    LogFormatError
        When the file cannot be read as text or holds only white space.
    """
    text = read_text(path)
    if not text.strip():
        raise LogFormatError(f"{path}: empty file")
    return text
