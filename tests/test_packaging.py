"""The package layout (docs/architecture.md) and its known traps."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import tomllib

ROOT = Path(__file__).resolve().parents[1]
LAYERS = {"theory": "grpodyn.theory", "numerics": "grpodyn.numerics",
          "empirical": "grpodyn.empirical"}
#: Which layers each layer may import (docs/architecture.md: empirical -> numerics -> theory);
#: every layer
#: may import the ground floor.
ALLOWED = {"theory": {"theory", "ground"}, "numerics": {"numerics", "theory", "ground"},
           "empirical": {"empirical", "numerics", "theory", "ground"}}
#: The ground floor (errors, checks, atomic writes, JSON): a leaf every layer may import.
GROUND = ROOT / "grpodyn" / "ground"


def _pyproject() -> dict:
    return tomllib.loads((ROOT / "pyproject.toml").read_text())


def _package_name(folder: Path) -> str | None:
    """The import name of a source folder under the package-dir mapping, or None outside it."""
    mapping = _pyproject()["tool"]["setuptools"]["package-dir"]
    for package, root in sorted(mapping.items(), key=lambda item: -len(item[1])):
        try:
            rest = folder.relative_to(ROOT / root)
        except ValueError:
            continue
        return ".".join([package, *rest.parts])
    return None


def _source_folders() -> list[Path]:
    """Every folder of the mapped source trees (caches and hidden folders left out)."""
    roots = [ROOT / root for root in _pyproject()["tool"]["setuptools"]["package-dir"].values()]
    found = []
    for root in roots:
        found += [root, *(p for p in root.rglob("*") if p.is_dir())]
    return [p for p in found
            if not any(part.startswith((".", "__pycache__")) for part in p.relative_to(ROOT).parts)]


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


def test_every_package_and_data_folder_is_listed():
    """Walk the source trees: each folder with code or data is a listed package, its data declared.

    An unlisted subpackage vanishes from the wheel while the editable install still works; an
    unlisted data folder makes setuptools warn (and, before it, ship nothing).
    """
    setuptools = _pyproject()["tool"]["setuptools"]
    listed, declared = set(setuptools["packages"]), setuptools.get("package-data", {})
    needed = set()
    for folder in _source_folders():
        files = [p for p in folder.iterdir() if p.is_file() and not p.name.startswith(".")]
        if not files:
            continue
        package = _package_name(folder)
        needed.add(package)
        where = folder.relative_to(ROOT)
        assert package in listed, f"{where} holds files but {package} is unlisted"
        if (folder / "__init__.py").exists():
            continue
        assert not [p for p in files if p.suffix == ".py"], f"{folder}: code without __init__.py"
        patterns = declared.get(package, [])
        undeclared = [p.name for p in files if not any(p.match(pattern) for pattern in patterns)]
        assert not undeclared, f"{package}: data files not in package-data: {undeclared[:5]}"
    assert not listed - needed, f"listed packages without a folder: {sorted(listed - needed)}"


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


def test_ground_floor_is_a_leaf(tmp_path):
    """The ground floor imports nothing of grpodyn but itself, and no sympy."""
    assert (GROUND / "__init__.py").exists()
    for path in GROUND.rglob("*.py"):
        for module in _imports(path):
            head = module.split(".")[0]
            assert head not in {*LAYERS, "sympy"}, f"{path}: imports {module}"
            if module.startswith("grpodyn"):
                assert module.startswith("grpodyn.ground"), f"{path}: imports {module}"
        tree = ast.parse(path.read_text())
        relative = [n for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.level > 1]
        assert not relative, f"{path}: relative import out of the ground floor"
    code = ("import sys, grpodyn.ground; "
            "assert not [m for m in sys.modules if m.startswith(('sympy', 'grpodyn.theory', "
            "'grpodyn.numerics', 'grpodyn.empirical'))], 'the ground floor imported a layer'")
    subprocess.run([sys.executable, "-c", code], check=True, cwd=tmp_path)




def test_no_private_names_across_modules():
    """No module imports another module's private (underscore) name."""
    folders = [ROOT / name for name in (*LAYERS, "grpodyn")]
    for path in (p for folder in folders for p in folder.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
            if isinstance(node, ast.ImportFrom):
                private = [a.name for a in node.names
                           if a.name.startswith("_") and a.name != "_generated"
                               and not (a.name.startswith("__") and a.name.endswith("__"))
                               # a private sibling module behind its public facade
                               and not (node.level == 1 and node.module is None
                                        and (path.parent / f"{a.name}.py").exists())]
                assert not private, f"{path}: imports private {private} from {node.module}"


def test_numerics_imports_without_sympy(tmp_path):
    code = ("import sys, grpodyn.numerics.predict, grpodyn.numerics.trajectory, "
            "grpodyn.numerics.stability, grpodyn.numerics.fluctuations; "
            "assert 'sympy' not in sys.modules, 'sympy was imported'")
    subprocess.run([sys.executable, "-c", code], check=True, cwd=tmp_path)


def test_theory_dependencies_are_core_only():
    deps = " ".join(_pyproject()["project"]["dependencies"])
    for heavy in ("torch", "transformers", "trl", "jupyter", "pandas"):
        assert heavy not in deps


def test_top_level_reexports_resolve_without_sympy(tmp_path):
    """Run from an empty folder: a checkout's parent may hold a folder named grpodyn."""
    code = ("import sys, grpodyn\n"
            "for name in grpodyn.__all__:\n"
            "    assert getattr(grpodyn, name) is not None, name\n"
            "assert 'sympy' not in sys.modules, 'sympy was imported'\n")
    subprocess.run([sys.executable, "-c", code], check=True, cwd=tmp_path)


def test_the_studies_are_not_installed():
    """studies/ (the laboratory notebook) is beside the package, not in it."""
    setuptools = _pyproject()["tool"]["setuptools"]
    assert not any("studies" in root for root in setuptools["package-dir"].values())
    assert not any("studies" in package for package in setuptools["packages"])
    assert not any("studies" in package for package in setuptools.get("package-data", {}))
    assert (ROOT / "studies" / "README.md").is_file()
    assert not (ROOT / "studies" / "__init__.py").exists()
