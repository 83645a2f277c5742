"""The tour notebooks execute from top to bottom (nbclient), as in CI; the regime explorer's
widgets are driven by the test."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

NOTEBOOKS = sorted((Path(__file__).resolve().parents[1] / "notebooks").glob("*.ipynb"))
EXPLORER = "08_regime_explorer.ipynb"


def test_there_are_eight_notebooks() -> None:
    """Count the tour notebooks (08_regime_explorer.ipynb is the eighth)."""
    assert len(NOTEBOOKS) == 8
    assert NOTEBOOKS[-1].name == EXPLORER


def _errors(notebook: object) -> list[dict]:
    return [o for cell in notebook.cells if cell.cell_type == "code"
            for o in cell.get("outputs", []) if o.get("output_type") == "error"]


@pytest.mark.parametrize("path", [p for p in NOTEBOOKS if p.name != EXPLORER],
                         ids=lambda p: p.name)
def test_notebook_executes(path: Path, tmp_path: Path) -> None:
    """Execute one notebook from top to bottom without an error output."""
    nbformat = pytest.importorskip("nbformat")
    nbclient = pytest.importorskip("nbclient")
    notebook = nbformat.read(path, as_version=4)
    client = nbclient.NotebookClient(notebook, timeout=300, kernel_name="python3",
                                     resources={"metadata": {"path": str(tmp_path)}})
    client.execute()
    assert not _errors(notebook)
    latex = [o for cell in notebook.cells if cell.cell_type == "code"
             for o in cell.get("outputs", []) if "text/latex" in o.get("data", {})]
    if path.name.startswith("01_"):
        assert latex, "derivations render as LaTeX in Jupyter"


#: Slider moves from the notebook's start (lr 0.02, momentum 0.9, kappa 1, no lag, K or d = 4),
#: each with the regime it leads to: a few controls per move, one redraw per control moved.
MOVES = [
    ({"lr": 0.002}, "overdamped"),  # k 0.002 under (1 - sqrt 0.9)^2 = 0.0026
    ({"lr": 0.05}, "oscillatory"),
    ({"lag": "refresh"}, "oscillatory"),  # K = 4, below the first unstable K = 6
    ({"lag_steps": 8}, "unstable"),
    ({"lag": "staleness", "lag_steps": 3}, "unstable"),  # k 0.05 above k*(d = 3)
    ({"lag": "none", "lr": 1.9, "momentum": 0.1}, "flip"),  # k above (1 + sqrt 0.1)^2 = 1.73
]

_DRIVE = """
import json
moves = json.loads({moves!r})
controls = {{'lr': lr, 'momentum': momentum, 'kappa': kappa, 'lag': lag, 'lag_steps': lag_steps}}
seen = []
for move in moves:
    for name, value in move.items():
        controls[name].value = value
    seen.append(dict(state, drawn=drawn[0], label=label.value))
print(json.dumps(seen))
"""


def test_regime_explorer_widgets_follow_the_theory(tmp_path: Path) -> None:
    """Run the explorer, move its sliders from the kernel, and check that each move redraws
    the panels and that the regime and pole radius shown are ``grpodyn.predict``'s and
    ``MeanFieldMap``'s at the sliders' values."""
    nbformat = pytest.importorskip("nbformat")
    nbclient = pytest.importorskip("nbclient")
    pytest.importorskip("ipywidgets")
    import grpodyn

    notebook = nbformat.read(NOTEBOOKS[-1], as_version=4)
    client = nbclient.NotebookClient(notebook, timeout=300, kernel_name="python3",
                                     resources={"metadata": {"path": str(tmp_path)}})
    with client.setup_kernel():
        for index, cell in enumerate(notebook.cells):
            client.execute_cell(cell, index)
        moves = json.dumps([move for move, _ in MOVES])
        probe = nbformat.v4.new_code_cell(_DRIVE.format(moves=moves))
        notebook.cells.append(probe)
        client.execute_cell(probe, len(notebook.cells) - 1)
    assert not _errors(notebook)
    text = "".join(o.get("text", "") for o in probe.outputs if o.get("name") == "stdout")
    seen = json.loads(text)
    assert len(seen) == len(MOVES)
    drawn = [s["drawn"] for s in seen]
    assert all(b > a for a, b in zip(drawn, drawn[1:], strict=False)), drawn
    regimes = []
    for s in seen:
        expected = grpodyn.predict(lr=s["lr"], momentum=s["momentum"], kappa=s["kappa"],
                                   refresh=s["refresh"], staleness=s["staleness"])
        system = grpodyn.MeanFieldMap(lr=s["lr"], kappa=s["kappa"], momentum=s["momentum"],
                                      refresh=s["refresh"], staleness=s["staleness"])
        assert s["regime"] == expected.regime
        assert s["spectral_radius"] == pytest.approx(system.spectral_radius, rel=1e-12)
        assert (s["spectral_radius"] < 1) == (s["regime"] != "unstable")
        assert f"<b>{s['regime']}</b>" in s["label"]
        regimes.append(s["regime"])
    assert regimes == [regime for _, regime in MOVES]
    assert [(s["refresh"], s["staleness"]) for s in seen[2:]] == [(4, 0), (8, 0), (1, 3), (1, 0)]


def test_the_static_explorer_draws_the_same_three_panels(tmp_path: Path) -> None:
    """The site's static version: path, poles and the regime map for given parameters; the
    map names its regimes and marks the lag's threshold; the gallery writes one PNG a point."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    import grpodyn
    from grpodyn.numerics.explorer import GALLERY, explorer_figure, write_gallery

    fig = explorer_figure(lr=0.05, momentum=0.9, kappa=1.0, refresh=8, steps=60)
    state = fig.explorer_state
    assert state.regime == grpodyn.predict(lr=0.05, momentum=0.9, kappa=1.0,
                                           refresh=8).regime == "unstable"
    path, poles, regimes = fig.axes[:3]
    assert len(path.lines[1].get_ydata()) == 61
    assert "Re z" in poles.get_xlabel() and "radius 1.0" in poles.get_title()
    names = {t.get_text() for t in regimes.texts}
    assert {"overdamped", "oscillatory", "flip", "unstable"} <= names
    labels = [t.get_text() for t in regimes.get_legend().get_texts()]
    assert any("Jury limit" in t for t in labels) and any("refresh K = 8" in t for t in labels)
    assert "[1/step^2]" in regimes.get_ylabel()
    plt.close(fig)
    written = write_gallery(tmp_path, points=GALLERY[:1])
    assert [p.name for p in written] == ["explorer_overdamped.png"]
    assert written[0].stat().st_size > 20_000


@pytest.mark.parametrize("lr,momentum,kappa,edge", [
    (1e-4, 0.0, 0.01, "bottom"), (5.0, 0.5, 100.0, "top"), (0.01, 0.995, 1.0, "right")])
def test_a_run_beyond_the_regime_map_is_marked_at_its_edge(lr, momentum, kappa, edge) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from grpodyn.numerics.explorer import explorer_figure

    fig = explorer_figure(lr=lr, momentum=momentum, kappa=kappa, steps=20)
    regimes = fig.axes[2]
    labels = [t.get_text() for t in regimes.get_legend().get_texts()]
    assert any(f"(off the map: marked at its {edge})" in t for t in labels)
    (x, y), = regimes.lines[-1].get_xydata()
    x_lo, x_hi = regimes.get_xlim()
    y_lo, y_hi = regimes.get_ylim()
    assert x_lo <= x <= x_hi and y_lo <= y <= y_hi
    plt.close(fig)
