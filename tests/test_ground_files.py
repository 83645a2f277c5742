"""Atomic outputs of the ground floor: a failed write clobbers nothing."""

from __future__ import annotations

import pytest

from grpodyn.ground import save_figure, write_atomic
from grpodyn.ground.files import write_new


def test_write_atomic_replaces_only_when_complete(tmp_path):
    target = tmp_path / "out.json"
    target.write_text("old")
    write_atomic(target, "new")
    assert target.read_text() == "new"
    assert [p.name for p in tmp_path.iterdir()] == ["out.json"]  # no temporary file left


def test_write_new_writes_a_new_file_and_never_replaces_one(tmp_path):
    fresh = write_new(tmp_path / "new.json", "text")
    assert fresh.read_text() == "text" and oct(fresh.stat().st_mode & 0o777) == "0o644"
    kept = tmp_path / "kept.json"
    kept.write_text("the user's")
    dangling = tmp_path / "link.json"
    dangling.symlink_to(tmp_path / "nowhere")
    for target in (kept, dangling):
        with pytest.raises(FileExistsError) as caught:
            write_new(target, "ours")
        assert caught.value.filename == str(target)
    assert kept.read_text() == "the user's" and dangling.is_symlink()
    assert not (tmp_path / "nowhere").exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["kept.json", "link.json", "new.json"]


def test_write_new_without_hard_links_claims_the_name_and_leaves_nothing_on_failure(
        tmp_path, monkeypatch):
    """Where os.link is refused (FAT, FUSE, SMB), the name is claimed exclusively and then
    filled; a failed fill removed nothing: an empty file blocked every later write."""
    import errno
    import os

    def no_links(src, dst):
        raise OSError(errno.ENOSYS, "no hard links here")

    monkeypatch.setattr(os, "link", no_links)
    assert write_new(tmp_path / "a.json", "text").read_text() == "text"
    with pytest.raises(FileExistsError):
        write_new(tmp_path / "a.json", "ours")
    assert (tmp_path / "a.json").read_text() == "text"

    def failing(src, dst):
        raise OSError(errno.EIO, "input/output error")

    monkeypatch.setattr(os, "replace", failing)
    with pytest.raises(OSError, match="input/output"):
        write_new(tmp_path / "b.json", "text")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.json"]


def test_save_figure_keeps_the_old_file_when_saving_fails(tmp_path):
    matplotlib = pytest.importorskip("matplotlib")
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    target = tmp_path / "fig.png"
    fig, ax = plt.subplots()
    ax.plot([0, 1], [0, 1])
    save_figure(fig, target)
    first = target.read_bytes()
    assert first.startswith(b"\x89PNG")

    class Broken:
        def savefig(self, *args: object, **kwargs: object) -> None:
            raise RuntimeError("disk full")

    with pytest.raises(RuntimeError):
        save_figure(Broken(), target)
    assert target.read_bytes() == first
    assert sorted(p.name for p in tmp_path.iterdir()) == ["fig.png"]
    plt.close(fig)


def test_a_full_disk_names_the_file_it_stopped_and_leaves_nothing(tmp_path):
    """An OSError without a file name (a full disk, ENOSPC) is raised naming the target."""
    import os
    from unittest import mock

    from grpodyn.ground.files import write_all_atomic

    real = os.fdopen

    class Full:
        def __init__(self, fh):
            self.fh = fh

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            self.fh.close()

        def write(self, text):
            raise OSError(28, "No space left on device")

    with mock.patch("grpodyn.ground.files.os.fdopen",
                    lambda fd, *a, **k: Full(real(fd, *a, **k))):
        with pytest.raises(OSError, match=r"No space left on device: '.*a\.txt'"):
            write_all_atomic({tmp_path / "a.txt": "x", tmp_path / "b.txt": "y"})
    assert list(tmp_path.iterdir()) == []
