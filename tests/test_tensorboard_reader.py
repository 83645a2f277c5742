"""The event-file reader against TensorBoard's own ``EventAccumulator``, record by record."""

from __future__ import annotations

import struct

import numpy as np
import pytest

pytest.importorskip("tensorboard")

from tensorboard.backend.event_processing.event_accumulator import EventAccumulator  # noqa: E402
from tensorboard.compat.proto import event_pb2, summary_pb2  # noqa: E402
from tensorboard.compat.tensorflow_stub.pywrap_tensorflow import crc32c, masked_crc32c  # noqa: E402
from tensorboard.util import tensor_util  # noqa: E402

from grpodyn.empirical.logs.common import LogFormatError  # noqa: E402
from grpodyn.empirical.logs.tensorboard_events import _crc32c, _scalars  # noqa: E402

START = event_pb2.SessionLog.START


def _record(event: event_pb2.Event) -> bytes:
    data = event.SerializeToString()
    head = struct.pack("<Q", len(data))
    return (head + struct.pack("<I", masked_crc32c(head)) + data
            + struct.pack("<I", masked_crc32c(data)))


def _scalar(step: int, **values: float) -> event_pb2.Event:
    return event_pb2.Event(step=step, wall_time=float(step), summary=summary_pb2.Summary(
        value=[summary_pb2.Summary.Value(tag=tag, simple_value=v) for tag, v in values.items()]))


def _write(path, events, version="brain.Event:2"):
    path.write_bytes(b"".join(_record(e) for e in
                              [event_pb2.Event(wall_time=0.0, file_version=version), *events]))
    return path


def _accumulated(folder):
    """The scalars as TensorBoard's own reader gives them, by step."""
    accumulator = EventAccumulator(str(folder), size_guidance={"scalars": 0})
    accumulator.Reload()
    by_step: dict[float, dict[str, float]] = {}
    for tag in accumulator.Tags()["scalars"]:
        for event in accumulator.Scalars(tag):
            by_step.setdefault(float(event.step), {})[tag] = float(event.value)
    return sorted(by_step.items())


def _read(folder):
    notes: list[str] = []
    return _scalars(folder, folder, notes)


def test_a_plain_run_reads_as_tensorboard_reads_it(tmp_path):
    rng = np.random.default_rng(0)
    _write(tmp_path / "events.out.tfevents.1", [
        _scalar(s, **{"train/reward": float(rng.random()), "train/kl": float(rng.random())})
        for s in range(40)])
    assert _read(tmp_path) == _accumulated(tmp_path)
    assert len(_read(tmp_path)) == 40


def test_a_restart_purges_the_steps_it_rewrites_as_tensorboard_does(tmp_path):
    events = [_scalar(s, **{"train/reward": 0.1 * s}) for s in range(10)]
    events += [event_pb2.Event(step=5, session_log=event_pb2.SessionLog(status=START))]
    events += [_scalar(s, **{"train/reward": 1.0 + s}) for s in range(5, 8)]
    _write(tmp_path / "events.out.tfevents.1", events)
    rows = _read(tmp_path)
    assert rows == _accumulated(tmp_path)
    assert [s for s, _ in rows] == list(range(8)) and rows[6][1]["train/reward"] == 7.0


def test_an_old_file_purges_per_tag_from_the_step_that_goes_back(tmp_path):
    events = [_scalar(s, a=float(s), b=float(s)) for s in range(10)]
    events += [_scalar(s, a=100.0 + s) for s in range(4, 6)]
    _write(tmp_path / "events.out.tfevents.1", events, version="brain.Event:1")
    rows = _read(tmp_path)
    assert rows == _accumulated(tmp_path)
    assert rows[4][1] == {"a": 104.0, "b": 4.0} and rows[9][1] == {"b": 9.0}


def test_tensorflow_2_scalars_are_read_though_only_their_first_event_names_the_plugin(tmp_path):
    metadata = summary_pb2.SummaryMetadata(
        plugin_data=summary_pb2.SummaryMetadata.PluginData(plugin_name="scalars"))
    events = []
    for step in range(6):
        value = summary_pb2.Summary.Value(
            tag="reward", tensor=tensor_util.make_tensor_proto(np.float32(0.5 + 0.1 * step)))
        if step == 0:
            value.metadata.CopyFrom(metadata)
        events.append(event_pb2.Event(step=step, summary=summary_pb2.Summary(value=[value])))
    _write(tmp_path / "events.out.tfevents.1", events)
    rows = _read(tmp_path)
    assert [s for s, _ in rows] == list(range(6))
    assert rows[5][1]["reward"] == pytest.approx(1.0)


def test_a_record_whose_checksum_holds_but_whose_content_is_no_event_is_an_error(tmp_path):
    data = b"\xff" * 16
    head = struct.pack("<Q", len(data))
    bad = tmp_path / "events.out.tfevents.bad"
    bad.write_bytes(_record(_scalar(0, r=0.1)) + head + struct.pack("<I", masked_crc32c(head))
                    + data + struct.pack("<I", masked_crc32c(data)))
    with pytest.raises(LogFormatError, match="not a TensorBoard event"):
        _read(tmp_path)


def test_the_fast_checksum_is_tensorboards(tmp_path):
    rng = np.random.default_rng(1)
    for n in (0, 1, 7, 100, 4097):
        data = rng.integers(0, 256, n, dtype=np.uint8).tobytes()
        assert _crc32c()(data) == crc32c(data)
