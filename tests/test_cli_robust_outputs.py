"""Outputs of several files are written all or nothing.

``export`` and ``report`` check every target before writing any and replace the old files
only once all new ones are written: a folder named like one of their files leaves the output
folder as it was, without a fresh file beside the old ones and without temporary files.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from grpodyn.cli import main
from grpodyn.ground.files import check_targets, staged_folder, write_all_atomic
from grpodyn.report import REPORT_MARKER

from .written_logs import rise_csv


def _error(argv, capsys):
    """Run ``argv``: exit 2, one line on stderr, nothing on stdout; return the line."""
    assert main(argv) == 2, argv
    out, err = capsys.readouterr()
    assert out == "" and len(err.strip().splitlines()) == 1 and "Traceback" not in err
    return err.strip()


def _snapshot(folder: Path) -> dict[str, bytes | None]:
    """Every entry below ``folder`` (hidden ones too): a file's bytes, None for a folder."""
    return {str(p.relative_to(folder)): None if p.is_dir() else p.read_bytes()
            for p in sorted(folder.rglob("*"))}


# -- the helpers ----------------------------------------------------------------------------------

def test_write_all_atomic_writes_nothing_when_one_target_is_a_folder(tmp_path):
    (tmp_path / "b.txt").mkdir()
    (tmp_path / "c.txt").write_text("old")
    before = _snapshot(tmp_path)
    with pytest.raises(IsADirectoryError) as error:
        write_all_atomic({tmp_path / "a.txt": "A", tmp_path / "sub" / "x.txt": "X",
                          tmp_path / "b.txt": "B", tmp_path / "c.txt": "C"})
    assert error.value.filename == str(tmp_path / "b.txt")
    assert _snapshot(tmp_path) == before


def test_write_all_atomic_leaves_nothing_when_a_write_fails(tmp_path, monkeypatch):
    import grpodyn.ground.files as files

    (tmp_path / "c.txt").write_text("old")
    before = _snapshot(tmp_path)
    real = files.os.replace
    calls = []

    def full(src, dst):
        calls.append(dst)
        raise OSError(28, "No space left on device", str(dst))

    monkeypatch.setattr(files.os, "replace", full)
    with pytest.raises(OSError):
        write_all_atomic({tmp_path / "new" / "a.txt": "A", tmp_path / "c.txt": "C"})
    monkeypatch.setattr(files.os, "replace", real)
    assert len(calls) == 1 and _snapshot(tmp_path) == before


def test_write_all_atomic_replaces_every_file(tmp_path):
    (tmp_path / "c.txt").write_text("old")
    written = write_all_atomic({tmp_path / "sub" / "a.txt": "A", tmp_path / "c.txt": "C"})
    assert written == [tmp_path / "sub" / "a.txt", tmp_path / "c.txt"]
    assert _snapshot(tmp_path) == {"c.txt": b"C", "sub": None, "sub/a.txt": b"A"}


def test_check_targets_names_the_file_where_a_folder_would_go(tmp_path):
    (tmp_path / "a_file").write_text("")
    with pytest.raises(NotADirectoryError) as error:
        check_targets([tmp_path / "a_file" / "deeper" / "out.json"])
    assert error.value.filename == str(tmp_path / "a_file")


def test_a_staged_folder_replaces_the_files_only_when_all_fit(tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    (out / "index.html").write_text("old page")
    (out / "summary.json").mkdir()
    before = _snapshot(out)
    with pytest.raises(IsADirectoryError), staged_folder(out) as stage:
        (stage / "index.html").write_text("new page")
        (stage / "figure.png").write_bytes(b"png")
        (stage / "summary.json").write_text("{}")
    assert _snapshot(out) == before
    with staged_folder(out) as stage:
        (stage / "index.html").write_text("new page")
        (stage / "figure.png").write_bytes(b"png")
    assert _snapshot(out) == {"figure.png": b"png", "index.html": b"new page",
                              "summary.json": None}


def test_a_staged_folder_keeps_the_old_files_when_the_block_fails(tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    (out / "index.html").write_text("old page")
    before = _snapshot(out)
    with pytest.raises(RuntimeError), staged_folder(out) as stage:
        (stage / "index.html").write_text("new page")
        raise RuntimeError("a simulation failed")
    assert _snapshot(out) == before


# -- export ---------------------------------------------------------------------------------------

def test_export_writes_no_file_when_one_target_is_a_folder(tmp_path, capsys):
    out = tmp_path / "ex"
    (out / "grpodyn_theory.c").mkdir(parents=True)
    line = _error(["export", "--lang", "c", "--out", str(out), "--force"], capsys)
    assert str(out / "grpodyn_theory.c") in line
    assert _snapshot(out) == {"grpodyn_theory.c": None}


def test_export_keeps_an_earlier_export_when_one_target_is_a_folder(tmp_path, capsys):
    out = tmp_path / "ex"
    assert main(["export", "--lang", "c", "--out", str(out)]) == 0
    capsys.readouterr()
    header = next(p for p in out.iterdir() if p.suffix == ".h")
    header.write_text("an older export")
    source = out / "grpodyn_theory.c"
    source.unlink()
    source.mkdir()
    before = _snapshot(out)
    _error(["export", "--lang", "c", "--out", str(out), "--force"], capsys)
    assert _snapshot(out) == before


# -- report ---------------------------------------------------------------------------------------

@pytest.fixture()
def log(tmp_path):
    return rise_csv(tmp_path / "run.csv", points=80, tau=15, seed=5)


def test_a_run_report_keeps_the_earlier_one_when_summary_json_is_a_folder(log, tmp_path,
                                                                          capsys):
    out = tmp_path / "report"
    assert main(["report", log, "--out", str(out), "--json"]) == 0
    capsys.readouterr()
    (out / "summary.json").unlink()
    (out / "summary.json").mkdir()
    # an earlier report's files, told apart from what this one would write
    (out / "index.html").write_text(f"{REPORT_MARKER}\nan earlier page")
    (out / "reward_forecast.png").write_bytes(b"an earlier figure")
    before = _snapshot(out)
    line = _error(["report", log, "--out", str(out)], capsys)
    assert str(out / "summary.json") in line
    assert _snapshot(out) == before


def test_the_reproduction_writes_its_files_together(tmp_path, monkeypatch):
    """The reproduction's figures come from several modules: they are staged, then moved."""
    import grpodyn.report as report

    def drawn(out, stage, **kwargs):
        (stage / "index.html").write_text("new page")
        (stage / "regimes.png").write_bytes(b"new png")
        (stage / "summary.json").write_text("{}")
        return {"html": str(out / "index.html")}

    monkeypatch.setattr(report, "_write_report", drawn)
    out = tmp_path / "rep"
    out.mkdir()
    (out / "index.html").write_text("old page")
    (out / "regimes.png").write_bytes(b"old png")
    (out / "summary.json").mkdir()
    before = _snapshot(out)
    with pytest.raises(IsADirectoryError):
        report.write_report(out)
    assert _snapshot(out) == before
    (out / "summary.json").rmdir()
    assert report.write_report(out) == {"html": str(out / "index.html")}
    assert _snapshot(out) == {"index.html": b"new page", "regimes.png": b"new png",
                              "summary.json": b"{}"}


def test_a_run_report_that_fails_part_way_leaves_the_earlier_one(log, tmp_path, monkeypatch):
    # the figure is drawn, then the page fails: nothing of the new report reaches the folder
    from grpodyn import run_report

    out = tmp_path / "report"
    assert main(["report", log, "--out", str(out), "--json"]) == 0
    before = _snapshot(out)

    def broken(*args, **kwargs):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(run_report, "_page", broken)
    with pytest.raises(OSError):
        run_report.write_run_report(log, out)
    assert _snapshot(out) == before
    assert not [p for p in out.iterdir() if p.name.startswith(".staging-")]
