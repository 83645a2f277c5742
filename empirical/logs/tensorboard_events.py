"""TensorBoard logs: an event file, or a directory tree of them (searched recursively).

Event files in one folder are one run (TensorBoard's own convention); folders of a tree are runs
named by their path below the directory given. Scalars only (a summary's ``simple_value``, as
PyTorch's and tensorboardX's writers log them, or a one-element tensor of the scalars plugin, as
TensorFlow 2 does); needs the ``tensorboard`` extra. TRL writes its metrics as ``train/<name>``
and evaluations as ``eval/<name>``.

Beside the scalars, a run's ``args`` text summary is its config record: transformers'
``TensorBoardCallback`` writes the training arguments there as JSON (``add_text("args",
args.to_json_string())``, tag ``args/text_summary`` from PyTorch's writer, ``args`` from
TensorFlow's), read as a ``training_args.json`` is; one that is not a JSON mapping is ignored
with a note.

The records (TFRecord frames: a length, its checksum, the serialised ``Event``, its checksum)
are read and checked here in one pass, with ``google-crc32c`` where it is installed (the pure
Python checksum of TensorBoard's own reader costs more than the rest of the load). A file that
ends inside a record (a run still writing, a copy cut short) is read up to that record with a
note saying how many bytes are left unread; a record whose length or content does not match its
checksum in the middle of the file is an error that names the file and the record's byte offset,
as a bad line of a JSON-lines log is (TensorBoard's reader stops there without a word).

A run restarted from a checkpoint rewrites the steps after it; the rows it left are purged as
TensorBoard purges them: from a ``SessionLog.START`` on (event files of version 2 and later), or,
in older files, per tag from the first step that goes back.
"""

from __future__ import annotations

import json
import struct
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from grpodyn.empirical.logs.common import LogFormatError, Parsed, Rows

__all__ = ["parse_tensorboard", "event_records"]

#: A record's frame: its length (8 bytes) and the length's checksum (4) before the data, the
#: data's checksum (4) after it (TFRecord).
_HEADER, _FOOTER = 12, 4
#: The constant of TFRecord's checksum mask (a CRC-32C rotated by 15 bits plus this).
_MASK_DELTA = 0xA282EAD8
#: Tags of the text summary of the training arguments (PyTorch's writer adds ``/text_summary``).
_ARGS_TAGS = frozenset({"args/text_summary", "args"})


def _crc32c() -> Callable[[bytes], int]:
    """Return a CRC-32C function of bytes: ``google_crc32c``'s, else TensorBoard's (pure Python)."""
    try:
        import google_crc32c
    except ImportError:
        from tensorboard.compat.tensorflow_stub.pywrap_tensorflow import crc32c
        return crc32c
    return google_crc32c.value


def event_records(path: Path, notes: list[str]) -> Iterator[tuple[int, bytes]]:
    """Yield the byte offset and the data of each record of an event file, checked.

    Parameters
    ----------
    path : Path
        The event file.
    notes : list of str
        Where a note on a file that ends inside a record is appended (the records before it are
        sound and are yielded).

    Raises
    ------
    LogFormatError
        When a record's length or content does not match its checksum: the records after it
        cannot be found, so the run would be read short without a word.
    """
    crc32c = _crc32c()

    def masked(data: bytes) -> int:
        crc = crc32c(data)
        return (((crc >> 15) | (crc << 17)) + _MASK_DELTA) & 0xFFFFFFFF

    blob = path.read_bytes()
    size, offset = len(blob), 0
    while offset + _HEADER <= size:
        length, crc = struct.unpack_from("<QI", blob, offset)
        if masked(blob[offset:offset + 8]) != crc:
            raise LogFormatError(f"{path}: a corrupt record at byte {offset} (its length "
                                 "does not match its checksum): the file is damaged there")
        end = offset + _HEADER + length
        if end + _FOOTER > size:
            break
        data = blob[offset + _HEADER:end]
        if masked(data) != struct.unpack_from("<I", blob, end)[0]:
            raise LogFormatError(f"{path}: a corrupt record at byte {offset} (its content "
                                 "does not match its checksum): the file is damaged there")
        yield offset, data
        offset = end + _FOOTER
    if offset != size:
        notes.append(f"{path.name}: the file ends inside a record: the last {size - offset} "
                     "bytes are not read")


class _Scalars:
    """The scalars of one run's event files, read in order, with TensorBoard's restart purge.

    Beside them ``args`` keeps the strings of the last ``args`` text summary read (None before
    one).
    """

    def __init__(self) -> None:
        from tensorboard.util import tensor_util

        self._tensor = tensor_util.make_ndarray
        self.by_step: dict[float, dict[str, float]] = {}
        self.args: list[bytes] | None = None
        self._scalar_tags: set[str] = set()  # tensor tags of the scalars plugin (first event)
        self._latest = float("-inf")
        self._version = 1.0

    def add(self, event: Any) -> None:
        """Take one ``Event`` (a protobuf message): its file version, a restart, its scalars."""
        from tensorboard.compat.proto.event_pb2 import SessionLog

        if event.HasField("file_version"):
            self._version = _file_version(event.file_version)
        values = self._values(event)
        if self._version >= 2:
            if event.HasField("session_log") and event.session_log.status == SessionLog.START:
                self._purge(event.step, tags=None)
        elif event.HasField("summary") and event.step < self._latest:
            self._purge(event.step, tags=set(values))
        else:
            self._latest = event.step
        if values:
            self.by_step.setdefault(float(event.step), {}).update(values)

    def _values(self, event: Any) -> dict[str, float]:
        """Return the scalars an event's summary holds, by tag."""
        values: dict[str, float] = {}
        for value in event.summary.value:
            kind = value.WhichOneof("value")
            if kind == "simple_value":
                values[value.tag] = float(value.simple_value)
            elif kind == "tensor":
                plugin = value.metadata.plugin_data.plugin_name
                if plugin == "scalars":
                    self._scalar_tags.add(value.tag)
                elif plugin == "text" and value.tag in _ARGS_TAGS:
                    self.args = list(value.tensor.string_val)
                if value.tag in self._scalar_tags:
                    array = self._tensor(value.tensor)
                    if array.size == 1:
                        values[value.tag] = float(array.reshape(()))
        return values

    def _purge(self, step: int, tags: set[str] | None) -> None:
        """Drop the values at ``step`` and after (of ``tags`` only, when given)."""
        for at in [s for s in self.by_step if s >= step]:
            row = self.by_step[at]
            for tag in list(row) if tags is None else tags & row.keys():
                del row[tag]
            if not row:
                del self.by_step[at]


def _file_version(text: str) -> float:
    """Return N of a ``brain.Event:N`` file version (1 when it cannot be read)."""
    try:
        return float(text.rsplit(":", 1)[-1])
    except ValueError:
        return 1.0


def _args_config(strings: list[bytes] | None, file: Path, notes: list[str]
                 ) -> dict[str, Any]:
    """Return the training arguments of an ``args`` text summary ({} with a note where malformed).

    Parameters
    ----------
    strings : list of bytes or None
        The summary's string tensor (one JSON text), None where the run wrote none.
    file : Path
        The event file that holds it, named in the note.
    notes : list of str
        Where the note on a summary that is not one JSON mapping is appended.
    """
    if strings is None:
        return {}
    why = f"{len(strings)} strings, not one"
    if len(strings) == 1:
        try:
            config = json.loads(strings[0].decode("utf-8", errors="replace"))
        except (ValueError, RecursionError):
            why = "not valid JSON"
        else:
            if isinstance(config, dict):
                return config
            why = f"a JSON {type(config).__name__}, not a mapping"
    notes.append(f"{file.name}: the args text summary is {why}: its settings are ignored")
    return {}


def _scalars(path: Path, folder: Path, notes: list[str],
             config: dict[str, Any] | None = None) -> Rows:
    """Return the scalars of the event files of ``folder`` (``path`` when it is a file).

    The settings of the run's last ``args`` text summary are put into ``config``, where one is
    given (they come in the same pass over the records). A note on a file that ends inside a
    record, or on a malformed ``args``, is added to ``notes``.
    """
    try:
        from google.protobuf.message import DecodeError
        from tensorboard.compat.proto.event_pb2 import Event
    except ImportError:
        raise LogFormatError(f"{path}: a TensorBoard event file; reading it needs the "
                             "tensorboard package (pip install grpodyn[tensorboard])") from None
    files = [folder] if folder.is_file() else sorted(
        p for p in folder.iterdir() if p.is_file() and "tfevents" in p.name)
    scalars = _Scalars()
    args: tuple[list[bytes], Path] | None = None
    for file in files:
        for offset, data in event_records(file, notes):
            try:
                event = Event.FromString(data)
            except DecodeError:
                raise LogFormatError(f"{file}: the record at byte {offset} is not a TensorBoard "
                                     "event (its checksum holds, its content does not parse)"
                                     ) from None
            scalars.add(event)
        if scalars.args is not None:
            args, scalars.args = (scalars.args, file), None
    if args is not None and config is not None:
        config.update(_args_config(*args, notes))
    return sorted((step, row) for step, row in scalars.by_step.items() if row)


def parse_tensorboard(path: Path) -> Parsed:
    """Return an event file or a directory searched recursively for event files."""
    notes: list[str] = []
    if path.is_file():
        config: dict[str, Any] = {}
        rows = _scalars(path, path, notes, config)
        if not rows:
            raise LogFormatError(f"{path}: no scalar summaries in the event file")
        return Parsed("tensorboard", {"": rows}, ecosystem="trl", notes=notes, config=config)
    folders = sorted({p.parent for p in path.rglob("*tfevents*") if p.is_file()})
    runs: dict[str, Rows] = {}
    configs: dict[str, dict[str, Any]] = {}
    for folder in folders:
        config = {}
        rows = _scalars(path if folder == path else folder, folder, notes, config)
        if rows:
            name = "" if folder == path else folder.relative_to(path).as_posix()
            runs[name], configs[name] = rows, config
    if not runs:
        raise LogFormatError(f"{path}: no scalar summaries in its event files")
    if len(runs) == 1:
        return Parsed("tensorboard", {"": next(iter(runs.values()))}, ecosystem="trl",
                      notes=notes, config=next(iter(configs.values())))
    return Parsed("tensorboard", runs, ecosystem="trl", notes=notes,
                  run_configs={name: config for name, config in configs.items() if config})
