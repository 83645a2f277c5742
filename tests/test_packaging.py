"""The package layout of DESIGN.md and its known traps."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import tomllib

ROOT = Path(__file__).resolve().parents[1]
LAYERS = {"theory": "grpodyn.theory", "numerics": "grpodyn.numerics",
          "empirical": "grpodyn.empirical"}
#: Which layers each layer may import (DESIGN.md: empirical -> numerics -> theory).
ALLOWED = {"theory": {"theory"}, "numerics": {"numerics", "theory"},
           "empirical": {"empirical", "numerics", "theory"}}


def _pyproject() -> dict:
    return tomllib.loads((ROOT / "pyproject.toml").read_text())


def test_every_layer_is_packaged():
    setuptools = _pyproject()["tool"]["setuptools"]
    for folder, package in LAYERS.items():
        assert (ROOT / folder / "__init__.py").exists()
        assert package in setuptools["packages"], f"{package} missing from packages"
        assert setuptools["package-dir"][package] == folder
    for init in ROOT.glob("*/__init__.py"):
        folder = init.parent.name
        if folder not in {"grpodyn", "tests"}:
            assert folder in LAYERS, f"{folder}/ has an __init__.py but is not a listed layer"


def test_gitignore_covers_build_outputs():
    ignored = (ROOT / ".gitignore").read_text().split()
    for pattern in ("build/", "dist/", "*.egg-info/"):
        assert pattern in ignored


def _imports(path: Path) -> list[str]:
    tree = ast.parse(path.read_text(), filename=str(path))
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.append(node.module)
    return found


def test_layer_dependencies_point_one_way():
    for folder in LAYERS:
        for path in (ROOT / folder).rglob("*.py"):
            for module in _imports(path):
                head = module.split(".")[0]
                assert head not in LAYERS, f"{path}: bare layer import {module!r}"
                if module.startswith("grpodyn."):
                    layer = module.split(".")[1]
                    assert layer in ALLOWED[folder], f"{path}: {folder} imports {module}"
                assert module != "grpodyn", f"{path}: a layer imports the top-level package"


def test_numerics_imports_without_sympy():
    code = ("import sys, grpodyn.numerics.predict, grpodyn.numerics.trajectory, "
            "grpodyn.numerics.stability, grpodyn.numerics.fluctuations; "
            "assert 'sympy' not in sys.modules, 'sympy was imported'")
    subprocess.run([sys.executable, "-c", code], check=True, cwd=ROOT.parent)


def test_theory_dependencies_are_core_only():
    deps = " ".join(_pyproject()["project"]["dependencies"])
    for heavy in ("torch", "transformers", "trl", "jupyter", "pandas"):
        assert heavy not in deps


def test_top_level_reexports_resolve_without_sympy():
    code = ("import sys, grpodyn\n"
            "for name in grpodyn.__all__:\n"
            "    assert getattr(grpodyn, name) is not None, name\n"
            "assert 'sympy' not in sys.modules, 'sympy was imported'\n")
    subprocess.run([sys.executable, "-c", code], check=True, cwd=ROOT.parent)
