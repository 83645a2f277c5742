"""Atomic outputs of the ground floor: a failed write clobbers nothing."""

from __future__ import annotations

import pytest

from grpodyn.ground import save_figure, write_atomic


def test_write_atomic_replaces_only_when_complete(tmp_path):
    target = tmp_path / "out.json"
    target.write_text("old")
    write_atomic(target, "new")
    assert target.read_text() == "new"
    assert [p.name for p in tmp_path.iterdir()] == ["out.json"]  # no temporary file left


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
