"""TensorBoard logs: an event file, or a directory tree of them (searched recursively).

Event files in one folder are one run (TensorBoard's own convention); folders of a tree are runs
named by their path below the directory given. Scalars only; needs the ``tensorboard`` extra.
TRL writes its metrics as ``train/<name>`` and evaluations as ``eval/<name>``.

TensorBoard's reader stops silently at the first damaged record, so every event file is checked
first (:func:`record_check`): a file that ends inside a record (a run still writing, a copy cut
short) is read up to that record with a note saying how many bytes are left unread; a record
whose length or content does not match its checksum in the middle of the file is an error that
names the file and the record's byte offset, as a bad line of a JSON-lines log is.
"""

from __future__ import annotations

import struct
from pathlib import Path

from grpodyn.empirical.logs.common import LogFormatError, Parsed, Rows

__all__ = ["parse_tensorboard", "record_check"]

#: A record's frame: its length (8 bytes) and the length's checksum (4) before the data, the
#: data's checksum (4) after it (TFRecord).
_HEADER, _FOOTER = 12, 4


def record_check(path: Path) -> str | None:
    """Check the records of an event file against their lengths and checksums.

    Parameters
    ----------
    path : Path
        The event file.

    Returns
    -------
    str or None
        A note when the file ends inside a record (the records before it are sound and are
        read), else None.

    Raises
    ------
    LogFormatError
        When a record's length or content does not match its checksum: the records after it
        cannot be found, so the run would be read short without a word.
    """
    from tensorboard.compat.tensorflow_stub.pywrap_tensorflow import masked_crc32c

    size = path.stat().st_size
    offset = 0
    with path.open("rb") as fh:
        while offset < size:
            header = fh.read(_HEADER)
            if len(header) < _HEADER:
                break
            (length,), (crc,) = struct.unpack("<Q", header[:8]), struct.unpack("<I", header[8:])
            if masked_crc32c(header[:8]) != crc:
                raise LogFormatError(f"{path}: a corrupt record at byte {offset} (its length "
                                     "does not match its checksum): the file is damaged there")
            if offset + _HEADER + length + _FOOTER > size:
                break
            data, footer = fh.read(length), fh.read(_FOOTER)
            if masked_crc32c(data) != struct.unpack("<I", footer)[0]:
                raise LogFormatError(f"{path}: a corrupt record at byte {offset} (its content "
                                     "does not match its checksum): the file is damaged there")
            offset += _HEADER + length + _FOOTER
    if offset == size:
        return None
    return (f"{path.name}: the file ends inside a record: the last {size - offset} bytes are "
            "not read")


def _scalars(path: Path, folder: Path, notes: list[str]) -> Rows:
    """Return the scalars of the event files of ``folder`` (``path`` when it is a file).

    A note on a file that ends inside a record is added to ``notes``.
    """
    try:
        from tensorboard.backend.event_processing.event_accumulator import EventAccumulator
    except ImportError:
        raise LogFormatError(f"{path}: a TensorBoard event file; reading it needs the "
                             "tensorboard package (pip install grpodyn[tensorboard])") from None
    files = [folder] if folder.is_file() else sorted(
        p for p in folder.iterdir() if p.is_file() and "tfevents" in p.name)
    for file in files:
        note = record_check(file)
        if note is not None:
            notes.append(note)
    accumulator = EventAccumulator(str(folder), size_guidance={"scalars": 0})
    try:
        accumulator.Reload()
    except Exception as exc:  # corrupt records surface as several exception types
        raise LogFormatError(f"{path}: not a readable TensorBoard event file ({exc})") from None
    by_step: dict[float, dict[str, float]] = {}
    for tag in accumulator.Tags().get("scalars", []):
        for event in accumulator.Scalars(tag):
            by_step.setdefault(float(event.step), {})[tag] = float(event.value)
    return sorted(by_step.items())


def parse_tensorboard(path: Path) -> Parsed:
    """Return an event file or a directory searched recursively for event files."""
    notes: list[str] = []
    if path.is_file():
        rows = _scalars(path, path, notes)
        if not rows:
            raise LogFormatError(f"{path}: no scalar summaries in the event file")
        return Parsed("tensorboard", {"": rows}, ecosystem="trl", notes=notes)
    folders = sorted({p.parent for p in path.rglob("*tfevents*") if p.is_file()})
    runs: dict[str, Rows] = {}
    for folder in folders:
        rows = _scalars(path if folder == path else folder, folder, notes)
        if rows:
            runs["" if folder == path else folder.relative_to(path).as_posix()] = rows
    if not runs:
        raise LogFormatError(f"{path}: no scalar summaries in its event files")
    if len(runs) == 1:
        runs = {"": next(iter(runs.values()))}
    return Parsed("tensorboard", runs, ecosystem="trl", notes=notes)
