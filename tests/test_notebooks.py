"""The tour notebooks execute from top to bottom (nbclient), as in CI."""

from __future__ import annotations

from pathlib import Path

import pytest

NOTEBOOKS = sorted((Path(__file__).resolve().parents[1] / "notebooks").glob("*.ipynb"))


def test_there_are_seven_notebooks() -> None:
    """Count the tour notebooks (07_deepnet.ipynb is the seventh)."""
    assert len(NOTEBOOKS) == 7


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_notebook_executes(path: Path, tmp_path: Path) -> None:
    """Execute one notebook from top to bottom without an error output."""
    nbformat = pytest.importorskip("nbformat")
    nbclient = pytest.importorskip("nbclient")
    notebook = nbformat.read(path, as_version=4)
    client = nbclient.NotebookClient(notebook, timeout=300, kernel_name="python3",
                                     resources={"metadata": {"path": str(tmp_path)}})
    client.execute()
    errors = [o for cell in notebook.cells if cell.cell_type == "code"
              for o in cell.get("outputs", []) if o.get("output_type") == "error"]
    assert not errors
    latex = [o for cell in notebook.cells if cell.cell_type == "code"
             for o in cell.get("outputs", []) if "text/latex" in o.get("data", {})]
    if path.name.startswith("01_"):
        assert latex, "derivations render as LaTeX in Jupyter"
