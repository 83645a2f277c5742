"""JSON lines: flat or typed records, verl's file logger, W&B ``wandb-history.jsonl``."""

from __future__ import annotations

import json
from pathlib import Path

from grpodyn.empirical.logs.common import LogFormatError
from grpodyn.empirical.logs.formats.base import Options, Source, log_suffix, log_text
from grpodyn.empirical.logs.records import parse_jsonl

__all__ = ["parse", "sniff", "TEXT_SUFFIXES", "HEAD_BYTES"]


#: Suffixes of a file whose text decides whether it is JSON lines (a loop's ``metrics.log``).
TEXT_SUFFIXES = (".log", ".txt", ".out", "")
#: Bytes read from such a file to decide.
HEAD_BYTES = 65536


def sniff(path: Path) -> bool:
    """Return whether ``path`` is a JSON-lines file: by its suffix, or by its text.

    A ``.jsonl`` file is; a plain-text log (``.log``, ``.txt``, ``.out``, no suffix; not
    compressed) is when every line of its first 64 KiB (the last, maybe cut, aside) is a JSON
    object: read as a console log, its held-out rows would be taken for training rows.
    """
    if not path.is_file():
        return False
    if log_suffix(path) == ".jsonl":
        return True
    if path.suffix.lower() not in TEXT_SUFFIXES:
        return False
    try:
        with path.open("rb") as fh:
            head = fh.read(HEAD_BYTES + 1)
    except OSError:
        return False
    lines = head[:HEAD_BYTES].decode("utf-8", errors="replace").splitlines()
    if len(head) > HEAD_BYTES:
        lines = lines[:-1]
    lines = [line for line in lines if line.strip()]
    return len(lines) >= 2 and all(_json_object(line) for line in lines)


def _json_object(line: str) -> bool:
    """Return whether ``line`` is one JSON object."""
    try:
        return isinstance(json.loads(line), dict)
    except ValueError:
        return False


def parse(path: Path, options: Options) -> Source:
    """Return the records of the file, by step.

    A file taken for JSON lines by its text alone that the JSON-lines reading refuses (records
    without a reward or a step: a job stream whose lines wrap a console's text) is read as the
    console log it also is, with a note saying why.
    """
    text = log_text(path)
    try:
        return Source(parse_jsonl(path, text, options.step_key), str(path), [path.parent])
    except LogFormatError as exc:
        if log_suffix(path) == ".jsonl":
            raise
        why = str(exc).removeprefix(f"{path}").lstrip(":0123456789 ")
    from grpodyn.empirical.logs.formats import console

    source = console.parse(path, options)
    source.parsed.notes.append(f"its lines are JSON objects, but not JSON-lines records ({why}): "
                               "read as a console log")
    return source
