"""What every log parser shares: the error type, number parsing, text reading, parsed runs.

A parser turns a file into a :class:`Parsed` log (one or several runs of ``(step, {metric:
value})`` rows, plus notes and hyperparameters); ``loaders.load_run`` then picks a run, maps the
metric names onto the canonical quantities and builds the ``Run``.
"""

from __future__ import annotations

import gzip
import io
import math
import re
import zlib
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from grpodyn.empirical.logs.meta import RunMeta

__all__ = ["LogFormatError", "Parsed", "Rows", "number", "counted", "unread", "read_text",
           "MAX_BYTES", "missing_step_key", "merged_steps", "MERGED_STEPS", "RUN_TAGS",
           "drop_abandoned", "stray_steps", "STRAY_INTERVALS", "check_series"]

#: A few records whose steps lie this many logging intervals beyond all the others', out of the
#: file's order, are corrupt step numbers, not late or swapped records (:func:`stray_steps`).
STRAY_INTERVALS = 10
#: The most records such a cluster holds: this share of the log, and at least 3.
STRAY_SHARE = 0.02

#: Logs larger than this are refused before reading (bytes).
MAX_BYTES = 512 * 2**20

#: Fields (table columns, record keys) that tag the run a record belongs to, in order of
#: preference: a long-format table's ``run`` column, a record's ``run_name``, ... (lower case).
RUN_TAGS = ("run", "run_name", "run_id", "experiment", "experiment_name", "exp_name")

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
    run_configs : dict of str to dict
        The config each run of a log of several printed for itself, by run name (read for that
        run instead of ``config``, which then holds what the runs share).
    """

    format: str
    runs: dict[str, Rows]
    ecosystem: str = "custom"
    steps_reconstructed: bool = False
    notes: list[str] = field(default_factory=list)
    meta: RunMeta = field(default_factory=RunMeta)
    config: dict[str, Any] = field(default_factory=dict)
    run_configs: dict[str, dict[str, Any]] = field(default_factory=dict)


def check_series(source: str, steps: Any, reward: Any, metrics: dict[str, Any]
                 ) -> tuple[np.ndarray, np.ndarray, dict[str, np.ndarray]]:
    """Return a run's steps, reward and metrics as float arrays, refusing what no analysis reads.

    The steps and the reward must be one-dimensional arrays of numbers of one length, the steps
    finite and strictly increasing, and every metric as long as the steps (the loaders build
    such series; a run built by hand may not, from lists or ints too).

    Raises
    ------
    LogFormatError
        On series of other shapes, lengths or kinds, or steps that do not increase, naming the
        first fault.
    """
    checked = []
    for name, values in (("steps", steps), ("reward", reward), *metrics.items()):
        array = np.asarray(values)
        if array.ndim != 1 or array.dtype.kind not in "biuf":
            raise LogFormatError(f"{source}: {name} must be a one-dimensional array of numbers, "
                                 f"got {array.ndim} dimension(s) of dtype {array.dtype}")
        if array.size != np.size(steps):
            raise LogFormatError(f"{source}: {name} holds {array.size} values for "
                                 f"{np.size(steps)} steps")
        checked.append(array.astype(float, copy=False))
    steps, reward, *values = checked
    if not np.isfinite(steps).all() or (np.diff(steps) <= 0).any():
        raise LogFormatError(f"{source}: the steps must be finite and strictly increasing")
    return steps, reward, dict(zip(metrics, values, strict=True))


def counted(n: int, noun: str) -> str:
    """Say ``n`` with its noun, singular for one: "1 warning", "3 warnings"."""
    return f"{n} {noun}{'' if n == 1 else 's'}"


def unread(values: list[Any]) -> str:
    """Say what a metric that gave no number held (booleans, text, other values), or nothing.

    The words follow "no finite value of 'reward'" in a loader's error: a log that writes its
    reward as true/false is told to log 1/0; one of NaN or inf is told so.
    """
    if not values:
        return ""
    if all(isinstance(v, bool) or str(v).strip().lower() in ("true", "false") for v in values):
        return " (its values are true/false, which are not read as numbers: log 1/0)"
    if all(_non_finite(v) for v in values):
        return f" (every value is NaN or infinite, such as {values[0]!r:.40})"
    text = [v for v in values if isinstance(v, str)]
    if text:
        return f" (text such as {text[0]!r:.40}, not a number)"
    return f" (values such as {values[0]!r:.40})"


def _non_finite(value: Any) -> bool:
    """Return whether ``value`` reads as a number that is NaN or infinite ("nan", inf)."""
    try:
        return not math.isfinite(float(value))
    except (TypeError, ValueError, OverflowError):
        return False


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


def drop_abandoned(rows: Rows, counts: Callable[[dict[str, Any]], bool] | None = None
                   ) -> tuple[Rows, list[str]]:
    """Return the rows with the branches a resumed run abandoned dropped, and notes saying so.

    A run restarted from a checkpoint logs again from the checkpoint's step: where the step of
    a record goes back to a step already logged (but not to the run's first step, where the log
    holds a new run), the earlier records from that step on are the abandoned branch, replaced
    by the resumed run's (as TensorBoard's reader purges them). A record that repeats the step
    just logged (a metric logged twice) or goes back to a step not logged (records out of order)
    marks no resume: assembly keeps the first record of a step, and sorts.

    Parameters
    ----------
    rows : Rows
        One run's rows in the order of the log.
    counts : callable, optional
        Whether a record's step can mark a resume (default: every record); held-out records an
        evaluator writes late, or a final summary, are left out by the callers.

    Returns
    -------
    rows : Rows
        The rows kept, in the order of the log.
    notes : list of str
        One note per resume (a single one for more than three).
    """
    first = next((s for s, e in rows if math.isfinite(s) and (counts is None or counts(e))),
                 math.nan)
    kept: Rows = []
    start, seen = 0, set()  # the current run's first row in ``kept``, and its steps
    previous = math.nan  # the step of the last record that counts
    resumes: list[tuple[float, int]] = []
    for step, entry in rows:
        if math.isfinite(step) and (counts is None or counts(entry)):
            if step == first and any(s > first for s in seen):  # a new run appended
                start, seen = len(kept), set()
            elif step < previous and step in seen:  # back to a step logged before
                tail = kept[start:]
                kept[start:] = [(s, e) for s, e in tail if not s >= step]
                resumes.append((step, len(tail) - (len(kept) - start)))
                seen = {s for s in seen if s < step}
            seen.add(step)
            previous = step
        kept.append((step, entry))
    notes = [f"resumed at step {step:g}: the {n} earlier record{'' if n == 1 else 's'} from "
             f"step {step:g} on {'is' if n == 1 else 'are'} replaced by the resumed run's"
             for step, n in resumes]
    if len(resumes) > 3:
        notes = [f"resumed {len(resumes)} times (at steps "
                 f"{', '.join(f'{s:g}' for s, _ in resumes[:6])}"
                 f"{', ...' if len(resumes) > 6 else ''}): the "
                 f"{sum(n for _, n in resumes)} earlier records from each resume's step on are "
                 "replaced by the resumed runs'"]
    return kept, notes


def _gunzip(path: Path, raw: bytes) -> bytes:
    """Return the decompressed bytes of a gzip file, refusing more than ``MAX_BYTES``."""
    try:
        with gzip.GzipFile(fileobj=io.BytesIO(raw)) as stream:
            data = stream.read(MAX_BYTES + 1)
    except (OSError, EOFError, zlib.error) as exc:
        raise LogFormatError(f"{path}: gzip-compressed, but it cannot be decompressed ("
                             f"{str(exc) or type(exc).__name__}): a file cut short?") from None
    if len(data) > MAX_BYTES:
        raise LogFormatError(f"{path}: decompressed, larger than the {MAX_BYTES} byte limit")
    return data


def read_text(path: Path) -> str:
    """Return the text of a log (UTF-8, or UTF-16 with a byte-order mark), size-checked first.

    A gzip-compressed log (an archived ``.log.gz``, ``.jsonl.gz``) is decompressed first.
    """
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
    if raw[:2] == b"\x1f\x8b":
        raw = _gunzip(path, raw)
    for encoding in ("utf-8-sig", "utf-16"):
        try:
            text = raw.decode(encoding)
        except UnicodeDecodeError:
            continue
        if encoding == "utf-16" and raw[:2] not in (b"\xff\xfe", b"\xfe\xff"):
            continue
        return text
    raise LogFormatError(f"{path}: not UTF-8 or UTF-16 text")


def stray_steps(steps: np.ndarray) -> np.ndarray:
    """Return the records, in the file's order, whose step number is corrupt.

    A step is a count from 0, so a negative one is corrupt. So are the few records (at most
    the larger of 3 and :data:`STRAY_SHARE` of the log, and fewer than the rest) whose steps
    lie more than :data:`STRAY_INTERVALS` of the log's median interval beyond all the others,
    above or below, where the file holds them out of order (a smaller step after a larger, a
    larger before a smaller): one record written 4000 among steps 39 and 41, which sorting
    would move to the run's end. A late or swapped record inside the run's span, a shuffled
    log, a counter restarted over the steps the log holds, or a last record far ahead in the
    file's order is no stray: sorting places it.

    Parameters
    ----------
    steps : ndarray
        The records' step numbers, in the order the file holds them.

    Returns
    -------
    ndarray of bool
        True for each stray record.
    """
    stray = steps < 0
    values = np.sort(steps[~stray])
    if values.size < 3 or np.all(np.diff(steps[~stray]) >= 0):
        return stray
    gaps = np.diff(values)
    interval = float(np.median(gaps[gaps > 0])) if np.any(gaps > 0) else 1.0
    wide = np.flatnonzero(gaps > STRAY_INTERVALS * interval)  # value j | value j + 1
    most = max(3, int(STRAY_SHARE * values.size))
    later_least = np.minimum.accumulate(np.append(steps, np.inf)[::-1])[::-1][1:]
    earlier_most = np.maximum.accumulate(np.insert(steps, 0, -np.inf))[:-1]
    # a cluster is the smaller side of its gap, at most `most` values
    small_top = (wide >= values.size - 1 - most) & (values.size - 1 - wide < wide + 1)
    small_bottom = (wide < most) & (wide + 1 < values.size - 1 - wide)
    high, low = wide[small_top], wide[small_bottom]
    if high.size:
        stray |= (steps > values[high.min()]) & (steps > later_least)
    if low.size:
        stray |= (steps >= 0) & (steps <= values[low.max()]) & (steps < earlier_most)
    return stray
