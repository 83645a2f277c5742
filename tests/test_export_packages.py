"""The C, Python and Julia exports are packages ready to use: they build, import and document.

C: ``make`` builds the libraries with gcc, and a program that includes the header and links the
static library prints the values numpy computes. Python: the module imports with numpy alone,
every function has a docstring with its formula, and its ``pyproject.toml`` builds a wheel.
Julia: ``using GrpodynTheory`` where julia is installed; everywhere, the structure of the
package (Project.toml, module, exports, a docstring before every function, closed blocks).
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
import uuid

import pytest
import tomllib

from grpodyn.cli import main
from grpodyn.numerics.compiled import compiled

# (name, arguments): closed forms, one with a domain (trajectory), one with a bounded sum
CASES = [("critical_stiffness", (0.9,)), ("stiffness_max", (0.5,)),
         ("stationary_variance", (0.9, 0.01, 1e-4)), ("relaxation_time", (0.9, 0.01, 2.0)),
         ("trajectory", (5.0, 0.7, 0.0, 2.5, 0.3)), ("grpo_update_mean", (8.0, 0.3, 1e-4))]


def _agree(got: float, want: float) -> bool:
    return abs(got - want) <= 1e-12 * max(1.0, abs(want))


@pytest.fixture(scope="module")
def packages(tmp_path_factory):
    root = tmp_path_factory.mktemp("packages")
    for lang in ("c", "python", "julia"):
        assert main(["export", "--lang", lang, "--out", str(root / lang), "--json"]) == 0
    return root


def test_export_writes_the_package_files(packages, capsys):
    capsys.readouterr()
    assert main(["export", "--lang", "julia", "--out", str(packages / "again"), "--json"]) == 0
    files = json.loads(capsys.readouterr().out)["files"]
    assert sorted(p.split("again/")[1] for p in files) == ["Project.toml", "README.md",
                                                           "src/GrpodynTheory.jl"]
    assert {p.name for p in (packages / "c").iterdir()} == {
        "grpodyn_theory.h", "grpodyn_theory.c", "Makefile", "README.md"}
    assert {p.name for p in (packages / "python").iterdir()} == {
        "grpodyn_theory.py", "pyproject.toml", "README.md"}


def test_c_header_documents_every_function(packages, reg):
    header = (packages / "c" / "grpodyn_theory.h").read_text()
    blocks = re.findall(r"/\*\*\n(.*?)\*/\n([^\n]+);", header, flags=re.DOTALL)
    assert len(blocks) == len(reg)
    for (comment, prototype), (name, d) in zip(blocks, reg.items(), strict=True):
        assert f" grpodyn_{name}(" in prototype
        assert f"@brief {d.summary}" in comment
        assert f"{name}({', '.join(d.arg_names)}) = " in comment  # the formula
        assert [p for p in re.findall(r"@param (\w+)", comment)] == list(d.arg_names)
        assert (d.domain is None) == ("EDOM" not in comment), name


@pytest.mark.skipif(shutil.which("gcc") is None or shutil.which("make") is None,
                    reason="gcc or make not installed")
def test_c_package_builds_and_links(packages):
    folder = packages / "c"
    subprocess.run(["make", "CC=gcc",
                    "CFLAGS=-std=c99 -O2 -Wall -Wextra -Wstrict-prototypes -Werror"],
                   cwd=folder, check=True, capture_output=True)
    assert (folder / "libgrpodyn_theory.a").exists() and (folder / "libgrpodyn_theory.so").exists()
    calls = "\n".join(f'    printf("%.17g\\n", grpodyn_{name}({", ".join(map(repr, args))}));'
                      for name, args in CASES)
    (folder / "use.c").write_text("#include <stdio.h>\n#include \"grpodyn_theory.h\"\n"
                                  f"int main(void) {{\n{calls}\n    return 0;\n}}\n")
    subprocess.run(["gcc", "-std=c99", "-Wall", "-Wextra", "-Werror", "use.c", "-I.", "-L.",
                    "-l:libgrpodyn_theory.a", "-lm", "-o", "use"], cwd=folder, check=True)
    out = subprocess.run([str(folder / "use")], check=True, capture_output=True, text=True)
    for (name, args), line in zip(CASES, out.stdout.split(), strict=True):
        assert _agree(float(line), float(compiled(name)(*args))), name
    # the README's shared build runs as it stands (the library's folder on the run path)
    subprocess.run(["gcc", "-std=c99", "use.c", "-I.", "-L.", "-lgrpodyn_theory", "-lm",
                    f"-Wl,-rpath,{folder}", "-o", "use_shared"], cwd=folder, check=True)
    shared = subprocess.run([str(folder / "use_shared")], check=True, capture_output=True,
                            text=True)
    assert shared.stdout == out.stdout


@pytest.mark.skipif(shutil.which("g++") is None or shutil.which("make") is None,
                    reason="g++ or make not installed")
def test_c_package_links_from_cpp(packages):
    """The header declares the functions extern "C", so a C++ program links the C library."""
    folder = packages / "c"
    subprocess.run(["make", "CC=gcc"], cwd=folder, check=True, capture_output=True)
    name, args = CASES[0]
    (folder / "use.cpp").write_text(
        "#include <cstdio>\n#include \"grpodyn_theory.h\"\nint main() {\n"
        f'    std::printf("%.17g\\n", grpodyn_{name}({", ".join(map(repr, args))}));\n'
        "    return 0;\n}\n")
    subprocess.run(["g++", "use.cpp", "-I.", "-L.", "-l:libgrpodyn_theory.a", "-lm", "-o",
                    "use_cpp"], cwd=folder, check=True, capture_output=True)
    out = subprocess.run([str(folder / "use_cpp")], check=True, capture_output=True, text=True)
    assert _agree(float(out.stdout), float(compiled(name)(*args)))


def test_python_module_imports_with_numpy_alone_and_documents(packages, reg):
    folder = packages / "python"
    code = (
        "import sys, json, inspect\n"
        "sys.modules['sympy'] = None; sys.modules['scipy'] = None; sys.modules['grpodyn'] = None\n"
        f"sys.path.insert(0, {str(folder)!r})\n"
        "import grpodyn_theory as g\n"
        f"cases = {CASES!r}\n"
        "docs = {n: inspect.getdoc(getattr(g, n)) for n in g.SIGNATURES}\n"
        "print(json.dumps({'values': [float(getattr(g, n)(*a)) for n, a in cases], "
        "'docs': docs}))\n")
    out = json.loads(subprocess.run([sys.executable, "-c", code], check=True,
                                    capture_output=True, text=True).stdout)
    for (name, args), got in zip(CASES, out["values"], strict=True):
        assert _agree(got, float(compiled(name)(*args))), name
    assert set(out["docs"]) == set(reg)
    for name, d in reg.items():
        assert d.summary in out["docs"][name]
        assert f"``{name}({', '.join(d.arg_names)}) = " in out["docs"][name]


def test_python_package_builds_a_wheel(packages, tmp_path):
    folder = packages / "python"
    meta = tomllib.loads((folder / "pyproject.toml").read_text())
    assert meta["tool"]["setuptools"]["py-modules"] == ["grpodyn_theory"]
    assert meta["project"]["dependencies"] == ["numpy>=1.24"]
    setuptools = pytest.importorskip("setuptools")
    if tuple(int(x) for x in setuptools.__version__.split(".")[:2]) < (70, 1):
        pytest.importorskip("wheel", reason="setuptools < 70.1 builds wheels with `wheel`")
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation",
                    "--quiet", "--wheel-dir", str(tmp_path), str(folder)], check=True,
                   capture_output=True)
    assert [p.name for p in tmp_path.glob("*.whl")] == ["grpodyn_theory-0.1.0-py3-none-any.whl"]


def _julia_blocks_close(source: str) -> bool:
    """Check that every block opener (function, for, while, if, module) has its ``end``."""
    depth = 0
    in_docstring = False
    for line in source.splitlines():
        stripped = line.strip()
        if stripped == '"""':
            in_docstring = not in_docstring
            continue
        if in_docstring:
            continue
        depth += bool(re.match(r"(function|for|while|if|module) ", stripped))
        depth -= stripped == "end"
        if depth < 0:
            return False
    return depth == 0 and not in_docstring


def test_julia_package_structure(packages, reg):
    folder = packages / "julia"
    project = tomllib.loads((folder / "Project.toml").read_text())
    assert project["name"] == "GrpodynTheory" and project["version"] == "0.1.0"
    uuid.UUID(project["uuid"])
    source = (folder / "src" / "GrpodynTheory.jl").read_text()
    assert "\nmodule GrpodynTheory\n" in source and source.endswith("\nend\n")
    exported = re.search(r"^export (.*?)\n\n", source, flags=re.MULTILINE | re.DOTALL).group(1)
    assert [n.strip() for n in exported.split(",")] == list(reg)
    for name, d in reg.items():  # a docstring with the call and the formula, then the function
        params = ", ".join(f"{a}::Real" for a in d.arg_names)
        doc = f'"""\n    {name}({params})\n'
        at = source.index(doc)
        body = source[at:source.index(f"\nfunction {name}(", at)]
        assert body.count('"""') == 2 and f"    {name}({', '.join(d.arg_names)}) = " in body
    assert _julia_blocks_close(source)
    assert not _julia_blocks_close(source.replace("\nend\n", "\n", 1))


@pytest.mark.skipif(shutil.which("julia") is None,
                    reason="julia is not installed (Debian 12 has no julia package); the "
                    "package's structure is checked by test_julia_package_structure")
def test_julia_package_loads(packages):  # pragma: no cover - julia is not on the CI machine
    folder = packages / "julia"
    calls = "; ".join(f"println(Float64({name}({', '.join(map(repr, args))})))"
                      for name, args in CASES)
    out = subprocess.run(["julia", f"--project={folder}", "-e",
                          f"using GrpodynTheory; {calls}"], check=True, capture_output=True,
                         text=True).stdout.split()
    for (name, args), line in zip(CASES, out, strict=True):
        assert _agree(float(line), float(compiled(name)(*args))), name
