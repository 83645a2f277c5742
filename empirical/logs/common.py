"""What every log parser shares: the error type, number parsing, text reading, parsed runs.

A parser turns a file into a :class:`Parsed` log (one or several runs of ``(step, {metric:
value})`` rows, plus notes and hyperparameters); ``loaders.load_run`` then picks a run, maps the
metric names onto the canonical quantities and builds the ``Run``.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from grpodyn.empirical.logs.meta import RunMeta

__all__ = ["LogFormatError", "Parsed", "Rows", "number", "read_text", "MAX_BYTES",
           "missing_step_key", "merged_steps", "MERGED_STEPS"]

#: Logs larger than this are refused before reading (bytes).
MAX_BYTES = 512 * 2**20

#: One run's rows: (step, {metric: value}); steps may repeat or be non-finite until assembled.
Rows = list[tuple[float, dict[str, Any]]]

# numbers as trainers print them: 0.5, np.float64(0.5), tensor(0.5), tensor(0.5, device=...)
_WRAPPED = re.compile(r"^(?:np\.\w+|numpy\.\w+|torch\.\w+|tensor|float|int)\(\s*"
                      r"([-+0-9.eEinfatyINFATYN]+)\s*(?:,[^()]*)?\)$")


class LogFormatError(ValueError):
    """A log cannot be read; the message names the file, the line where known, and the problem."""


@dataclass
class Parsed:
    """A parsed log before assembly.

    Attributes
    ----------
    format : str
        Detected format (a stable name, listed in the README's format table).
    runs : dict of str to Rows
        Rows of each run; a single-run format has one run named ``""``.
    ecosystem : str
        Which alias table names its metrics (``trl``, ``verl``, ``openrlhf``, ``wandb``,
        ``custom``).
    steps_reconstructed : bool
        True when the log holds no step and steps are the order of the logged points.
    notes : list of str
        What the parser repaired, assumed or chose (shown with the run).
    meta : RunMeta
        Hyperparameters read from the log itself.
    config : dict
        Settings the log records about itself (a config record, a printed config), read into
        hyperparameters by ``logs_config``.
    """

    format: str
    runs: dict[str, Rows]
    ecosystem: str = "custom"
    steps_reconstructed: bool = False
    notes: list[str] = field(default_factory=list)
    meta: RunMeta = field(default_factory=RunMeta)
    config: dict[str, Any] = field(default_factory=dict)


def number(value: Any) -> float:
    """Return a float from a number or numeric string (also ``np.float64(x)``, ``tensor(x)``).

    NaN for anything else.
    """
    if isinstance(value, bool):
        return math.nan
    try:
        if isinstance(value, (int, float)):
            return float(value)
        if isinstance(value, str):
            text = value.strip()
            wrapped = _WRAPPED.match(text)
            return float(wrapped.group(1) if wrapped else text)
    except (ValueError, OverflowError):  # not a number, or an integer beyond float range
        return math.nan
    return math.nan


def missing_step_key(label: str, step_key: str, entries: list[dict[str, Any]]
                     ) -> LogFormatError:
    """Return the error of a ``--step-key`` that no record of a log holds.

    It names the key and lists the keys that do hold numbers, among which the step usually is
    (names with "step" or "iter" first).

    Parameters
    ----------
    label : str
        The log, as its errors name it.
    step_key : str
        The key given as the step field.
    entries : list of dict
        The log's records.

    Returns
    -------
    LogFormatError
        The error, to raise.
    """
    numeric = sorted({str(k) for entry in entries for k, v in entry.items()
                      if math.isfinite(number(v))},
                     key=lambda k: ("step" not in k.lower() and "iter" not in k.lower(), k))
    shown = ", ".join(numeric[:20]) + (f", ... ({len(numeric)} in all)" if len(numeric) > 20
                                       else "")
    return LogFormatError(f"{label}: no field {step_key!r} (--step-key) in any record of the "
                          f"log; keys with numbers: {shown or 'none'}")


#: The words of every note that says records of one step were merged into one point.
MERGED_STEPS = "distinct step"


def merged_steps(records: int, steps: int, how: str) -> str:
    """Say that ``records`` records shared ``steps`` distinct steps and became one point each.

    A log whose records repeat a step (an appended rerun, a trainer that logs several times
    per step) keeps fewer points than it has records; the note says how many and how the
    values of a step were combined, so that a later "too few points" is understood.

    Parameters
    ----------
    records : int
        Records read.
    steps : int
        Distinct steps among them (the points kept).
    how : str
        How the values of one step were combined, in words.

    Returns
    -------
    str
        The note.
    """
    return (f"{records} records shared {steps} {MERGED_STEPS}{'' if steps == 1 else 's'} and "
            f"were merged into one point per step ({how})")


def read_text(path: Path) -> str:
    """Return the text of a log (UTF-8, or UTF-16 with a byte-order mark), size-checked first."""
    try:
        size = path.stat().st_size
    except OSError as exc:
        raise LogFormatError(f"{path}: cannot read ({exc.strerror})") from None
    if size > MAX_BYTES:
        raise LogFormatError(f"{path}: {size} bytes is larger than the {MAX_BYTES} byte limit")
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise LogFormatError(f"{path}: cannot read ({exc.strerror})") from None
    for encoding in ("utf-8-sig", "utf-16"):
        try:
            text = raw.decode(encoding)
        except UnicodeDecodeError:
            continue
        if encoding == "utf-16" and raw[:2] not in (b"\xff\xfe", b"\xfe\xff"):
            continue
        return text
    raise LogFormatError(f"{path}: not UTF-8 or UTF-16 text")
