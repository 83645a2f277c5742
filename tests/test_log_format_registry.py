"""The registry of log formats: one module with sniff and parse, one entry in FORMATS."""

from __future__ import annotations

import types
from pathlib import Path

import numpy as np
import pytest

from grpodyn.empirical.logs import formats
from grpodyn.empirical.logs.common import Parsed
from grpodyn.empirical.logs.loaders import LogFormatError, load_run


def _toy_format() -> types.ModuleType:
    """A format of lines 'STEP|REWARD' in files ending in .toy, built as a module."""
    toy = types.ModuleType("toy")

    def sniff(path: Path) -> bool:
        return path.is_file() and path.suffix == ".toy"

    def parse(path: Path, options: formats.Options) -> formats.Source:
        rows = []
        for line in path.read_text().splitlines():
            step, reward = line.split("|")
            rows.append((float(step), {"reward": float(reward)}))
        return formats.Source(Parsed("toy", {"": rows}), str(path), [path.parent])

    toy.sniff, toy.parse = sniff, parse
    return toy


def test_every_registered_format_has_sniff_and_parse():
    names = [module.__name__.rsplit(".", 1)[-1] for module in formats.FORMATS]
    assert names[-1] == "console"  # the fallback comes last
    for module in formats.FORMATS:
        assert callable(module.sniff) and callable(module.parse), module.__name__
        folder = Path(formats.__file__).parent
        assert (folder / f"{module.__name__.rsplit('.', 1)[-1]}.py").is_file()


def test_a_registered_toy_format_is_sniffed_and_parsed(tmp_path, monkeypatch):
    log = tmp_path / "run.toy"
    log.write_text("\n".join(f"{10 * i}|{0.1 + 0.01 * i}" for i in range(12)))
    with pytest.raises(LogFormatError):  # unregistered: the console fallback cannot read it
        load_run(log)
    monkeypatch.setattr(formats, "FORMATS", [_toy_format(), *formats.FORMATS])
    run = load_run(log)
    assert run.format == "toy" and run.n_points == 12
    np.testing.assert_allclose(run.steps, 10 * np.arange(12))
    np.testing.assert_allclose(run.reward, 0.1 + 0.01 * np.arange(12))


def test_nested_logs_dispatch_through_the_registry(tmp_path, monkeypatch):
    """A checkpoint folder's trainer_state.json goes through the registry too."""
    folder = tmp_path / "checkpoint-7"
    folder.mkdir()
    (folder / "trainer_state.json").write_text("{}")
    claimed = []
    toy = _toy_format()
    toy.sniff = lambda path: path.name == "trainer_state.json" and not claimed.append(path)
    monkeypatch.setattr(formats, "FORMATS", [*formats.FORMATS[:2], toy, *formats.FORMATS[2:]])
    with pytest.raises(ValueError):  # the toy parser on JSON text: it was the one asked
        load_run(tmp_path)
    assert claimed == [folder / "trainer_state.json"]


def test_a_path_no_format_claims_is_refused_by_name(tmp_path, monkeypatch):
    monkeypatch.setattr(formats, "FORMATS", [])
    (tmp_path / "log.txt").write_text("step 1 reward 0.5\n")
    with pytest.raises(LogFormatError, match="no log format claims this file"):
        load_run(tmp_path / "log.txt")
    with pytest.raises(LogFormatError, match="a directory without a log"):
        load_run(tmp_path)
    with pytest.raises(LogFormatError, match="no such file or directory"):
        load_run(tmp_path / "missing.csv")
