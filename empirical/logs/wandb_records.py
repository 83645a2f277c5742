"""W&B's binary run file ``run-<id>.wandb``: its history and config, read without wandb.

Since wandb 0.10 a run's history lives in this file (an offline run holds nothing else; the
``files/wandb-history.jsonl`` of older versions is no longer written). Its layout, as wandb's
datastore writes it (the Python writer, then wandb-core):

- a 7-byte file header: ``:W&B``, the magic number 0xBEE1 (little-endian), version 0;
- LevelDB-log framing: 32 KiB blocks of chunks, each a 7-byte header (the CRC-32 of the chunk's
  type byte and data, little-endian; the data's length, 2 bytes; the type: 1 a whole record,
  2, 3, 4 the first, a middle and the last part of a record split across blocks) and its data;
  fewer than 7 bytes left in a block are zero padding;
- each record a protocol-buffer ``Record`` of wandb's ``wandb_internal.proto``.

Only the few fields needed are decoded, by hand (neither wandb nor protobuf is a dependency):
``Record.history`` (2: ``HistoryRecord`` with its items, 1, and ``step.num``, 2.1),
``Record.config`` (5) and the config of ``Record.run`` (17.4): ``ConfigRecord`` updates (1)
and removals (2). An item's key is ``key`` (1) or its ``nested_key`` parts (2) joined by dots;
its value ``value_json`` (16), or one of the typed values of wandb 0.31's ``HistoryItem``
(``none`` 3, ``boolean`` 4, ``integer`` 5, ``number`` 6, ``text`` 7, ``json`` 8). Summaries,
system metrics and console output are skipped. Every length is checked against what is left of
its buffer; a checksum that does not match, a length past its block or a malformed record is an
error naming the file and the byte offset. A file that ends inside a record (a run still
writing, a copy cut short) is read up to it, with a note.
"""

from __future__ import annotations

import json
import struct
import zlib
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from grpodyn.empirical.logs.common import MAX_BYTES, LogFormatError

__all__ = ["RunFile", "read_run_file", "BLOCK", "IDENT"]

#: The size of a block of the LevelDB-log framing (bytes).
BLOCK = 32768
#: The first four bytes of a W&B run file.
IDENT = b":W&B"
_FILE_HEADER = struct.Struct("<4sHB")  # ident, magic, version
_MAGIC = 0xBEE1
_CHUNK = struct.Struct("<IHB")  # checksum, length, type
_FULL, _FIRST, _MIDDLE, _LAST = 1, 2, 3, 4
# field numbers of wandb_internal.proto
_RECORD_HISTORY, _RECORD_CONFIG, _RECORD_RUN, _RUN_CONFIG = 2, 5, 17, 4


@dataclass
class RunFile:
    """What a W&B run file records of a run.

    Attributes
    ----------
    history : list of dict
        One row per history record (``wandb.log`` call), in the order written; W&B's own
        counter ``_step`` is set from the record's step where no item holds it.
    config : dict
        The run's config (``wandb.config``), keys of nested parts joined by dots.
    notes : list of str
        What was left unread (a record cut short at the file's end).
    """

    history: list[dict[str, Any]] = field(default_factory=list)
    config: dict[str, Any] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)


class _Malformed(ValueError):
    """A record's bytes are not the protocol buffer they should be."""


def _varint(buf: bytes, pos: int) -> tuple[int, int]:
    """Return the varint at ``pos`` and the position after it (at most 10 bytes)."""
    value = 0
    for shift in range(0, 70, 7):
        if pos >= len(buf):
            raise _Malformed("a number cut short")
        byte = buf[pos]
        pos += 1
        value |= (byte & 0x7F) << shift
        if not byte & 0x80:
            return value, pos
    raise _Malformed("a number longer than 10 bytes")


def _fields(buf: bytes) -> Iterator[tuple[int, int, int | bytes]]:
    """Yield (field number, wire type, value) of a protocol-buffer message.

    A varint's value is an int; a fixed-size or length-delimited value is its bytes.
    """
    pos = 0
    while pos < len(buf):
        tag, pos = _varint(buf, pos)
        number, wire = tag >> 3, tag & 7
        if wire == 0:
            value, pos = _varint(buf, pos)
            yield number, wire, value
            continue
        if wire == 2:
            size, pos = _varint(buf, pos)
        elif wire in (1, 5):
            size = 8 if wire == 1 else 4
        else:
            raise _Malformed(f"wire type {wire} of field {number}")
        if pos + size > len(buf):
            raise _Malformed(f"field {number} runs past its message")
        yield number, wire, buf[pos:pos + size]
        pos += size


def _text(raw: int | bytes) -> str:
    """Return a string field's text."""
    if not isinstance(raw, bytes):
        raise _Malformed("a string field holds a number")
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        raise _Malformed("a string field is not UTF-8") from None


def _json(raw: int | bytes) -> Any:
    """Return the value a JSON string field holds."""
    try:
        return json.loads(_text(raw))
    except (ValueError, RecursionError):
        raise _Malformed("a value that is not JSON") from None


def _item(buf: bytes) -> tuple[str, Any]:
    """Return the key and value of a ``HistoryItem`` or ``ConfigItem``."""
    key, parts, value = "", [], None
    for number, wire, raw in _fields(buf):
        if number == 1 and wire == 2:
            key = _text(raw)
        elif number == 2 and wire == 2:
            parts.append(_text(raw))
        elif number in (8, 16) and wire == 2:  # json, value_json
            value = _json(raw)
        elif number == 7 and wire == 2:  # text
            value = _text(raw)
        elif number == 6 and wire == 1:  # number (a double)
            value = struct.unpack("<d", raw)[0]
        elif number == 5 and wire == 0:  # integer (zigzag-encoded)
            value = (raw >> 1) ^ -(raw & 1)
        elif number == 4 and wire == 0:  # boolean
            value = bool(raw)
    return key or ".".join(parts), value


def _history(buf: bytes) -> dict[str, Any]:
    """Return a ``HistoryRecord`` as a row of metrics."""
    row: dict[str, Any] = {}
    step = None
    for number, wire, raw in _fields(buf):
        if number == 1 and wire == 2:
            key, value = _item(raw)
            row[key] = value
        elif number == 2 and wire == 2:
            step = next((v for n, w, v in _fields(raw) if n == 1 and w == 0), 0)
    if step is not None:
        row.setdefault("_step", step)
    return row


def _config(buf: bytes, config: dict[str, Any]) -> None:
    """Apply a ``ConfigRecord``'s updates and removals to ``config``."""
    for number, wire, raw in _fields(buf):
        if number in (1, 2) and wire == 2:
            key, value = _item(raw)
            if number == 1:
                config[key] = value
            else:
                config.pop(key, None)


def _chunks(path: Path, blob: bytes, notes: list[str]) -> Iterator[tuple[int, bytes]]:
    """Yield (offset, bytes) of each record of the framing, checked.

    Raises
    ------
    LogFormatError
        On a checksum that does not match, a chunk past its block or out of sequence.
    """
    pos, pending, start = _FILE_HEADER.size, None, 0
    while pos < len(blob):
        room = BLOCK - pos % BLOCK
        if room < _CHUNK.size:  # the block's padding
            pos += room
            continue
        if pos + _CHUNK.size > len(blob):
            break
        crc, length, kind = _CHUNK.unpack_from(blob, pos)
        if (crc, length, kind) == (0, 0, 0):  # zeros to the block's end
            pos += room
            continue
        if length > room - _CHUNK.size:
            raise LogFormatError(f"{path}: corrupt at byte offset {pos}: a chunk of {length} "
                                 f"bytes runs past its {BLOCK // 1024} KiB block")
        end = pos + _CHUNK.size + length
        if end > len(blob):
            break
        data = blob[pos + _CHUNK.size:end]
        if zlib.crc32(data, zlib.crc32(bytes([kind]))) != crc:
            raise LogFormatError(f"{path}: corrupt at byte offset {pos}: a chunk's checksum "
                                 "does not match its data")
        if kind not in (_FULL, _FIRST, _MIDDLE, _LAST) or (
                (kind in (_FULL, _FIRST)) != (pending is None)):
            raise LogFormatError(f"{path}: corrupt at byte offset {pos}: a chunk of type {kind} "
                                 "where a chunk of a record's sequence was expected")
        if kind == _FULL:
            yield pos, data
        elif kind == _FIRST:
            pending, start = bytearray(data), pos
        else:
            pending += data
            if kind == _LAST:
                yield start, bytes(pending)
                pending = None
        pos = end
    left = start if pending is not None else pos
    if pending is not None or blob[left:].strip(b"\0"):
        notes.append(f"the file ends inside a record (a run still writing, or a copy cut "
                     f"short): its last {len(blob) - left} bytes not read")


def read_run_file(path: Path) -> RunFile:
    """Return the history and config of a W&B run file.

    Parameters
    ----------
    path : pathlib.Path
        A ``run-<id>.wandb`` file.

    Returns
    -------
    RunFile
        Its history rows, its config and notes.

    Raises
    ------
    LogFormatError
        When the file cannot be read, has no W&B header, is larger than ``common.MAX_BYTES``
        or is corrupt (naming the byte offset).
    """
    try:
        size = path.stat().st_size
        if size > MAX_BYTES:
            raise LogFormatError(f"{path}: {size} bytes is larger than the {MAX_BYTES} byte "
                                 "limit")
        blob = path.read_bytes()
    except OSError as exc:
        raise LogFormatError(f"{path}: cannot read ({exc.strerror})") from None
    if len(blob) < _FILE_HEADER.size or blob[:4] != IDENT:
        raise LogFormatError(f"{path}: not a W&B run file (it does not begin with W&B's "
                             "':W&B' header)")
    _, magic, version = _FILE_HEADER.unpack_from(blob)
    if magic != _MAGIC or version != 0:
        raise LogFormatError(f"{path}: a W&B run file of an unknown version (magic {magic:#x}, "
                             f"version {version}; known: {_MAGIC:#x}, 0)")
    found = RunFile()
    for offset, record in _chunks(path, blob, found.notes):
        try:
            for number, wire, raw in _fields(record):
                if number == _RECORD_HISTORY and wire == 2:
                    found.history.append(_history(raw))
                elif number == _RECORD_CONFIG and wire == 2:
                    _config(raw, found.config)
                elif number == _RECORD_RUN and wire == 2:
                    for inner, inner_wire, value in _fields(raw):
                        if inner == _RUN_CONFIG and inner_wire == 2:
                            _config(value, found.config)
        except _Malformed as exc:
            raise LogFormatError(f"{path}: corrupt record at byte offset {offset} ({exc})"
                                 ) from None
    return found
