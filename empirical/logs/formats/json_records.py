"""JSON: TRL ``trainer_state.json``, arrays of step dicts, an HF-Jobs stream of console lines."""

from __future__ import annotations

import json
from pathlib import Path

from grpodyn.empirical.logs.common import LogFormatError
from grpodyn.empirical.logs.formats.base import Options, Source, log_suffix, log_text
from grpodyn.empirical.logs.records import parse_json
from grpodyn.empirical.logs.text import parse_text

__all__ = ["parse", "sniff"]


def sniff(path: Path) -> bool:
    """Return whether ``path`` is a file ending in ``.json``."""
    return path.is_file() and log_suffix(path) == ".json"


def parse(path: Path, options: Options) -> Source:
    """Return the records of the JSON document (a console stream: its lines, as a console).

    Raises
    ------
    LogFormatError
        When the file is not valid JSON (naming the line) or holds no log.
    """
    text = log_text(path)
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise LogFormatError(f"{path}:{exc.lineno}: not valid JSON ({exc.msg})") from None
    except (ValueError, RecursionError) as exc:  # e.g. a huge integer, deep nesting
        raise LogFormatError(f"{path}: not valid JSON ({type(exc).__name__}: "
                             f"{str(exc)[:80]})") from None
    if isinstance(data, list) and data and isinstance(data[0], dict) \
            and "stream_name" in data[0]:  # an HF-Jobs stream of console output
        parsed = parse_text(path, text, step_key=options.step_key,
                            logging_steps=options.logging_steps, reward_key=options.reward_key)
    else:
        parsed = parse_json(path, data, options.step_key)
    return Source(parsed, str(path), [path.parent])
