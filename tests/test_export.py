"""Exported code compiles where a toolchain exists and agrees with numpy to 1e-12."""

from __future__ import annotations

import ctypes
import json
import shutil
import subprocess
import sys

import numpy as np
import pytest

from grpodyn.cli import main
from grpodyn.numerics.compiled import compiled
from grpodyn.numerics.export import LANGUAGES

from .points import POINTS, argument_values


def _reference(reg):
    """(name, args, numpy value) for every derivation and sample point with a finite value
    (points outside a derivation's domain are refused, and left out)."""
    cases = []
    for point in range(len(POINTS)):
        for name, d in reg.items():
            args = argument_values(name, d.arg_names, point)
            with np.errstate(all="ignore"):
                try:
                    value = compiled(name)(*args)
                except ValueError:
                    continue
            if np.ndim(value) == 0 and np.isfinite(float(value)):
                cases.append((name, [float(a) for a in args], float(value)))
    return cases


def _agree(got: float, want: float) -> bool:
    return abs(got - want) <= 1e-12 * max(1.0, abs(want))


@pytest.fixture(scope="module")
def exported(tmp_path_factory, reg):
    root = tmp_path_factory.mktemp("export")
    for lang in LANGUAGES:
        assert main(["export", "--lang", lang, "--out", str(root / lang), "--json"]) == 0
    return root


@pytest.mark.skipif(shutil.which("gcc") is None, reason="gcc not installed")
def test_c_compiles_with_werror_and_agrees(exported, reg, capsys):
    capsys.readouterr()
    src = exported / "c" / "grpodyn_theory.c"
    lib = exported / "c" / "libgrpodyn.so"
    subprocess.run(["gcc", "-std=c99", "-Wall", "-Wextra", "-Werror", "-O2", "-shared", "-fPIC",
                    str(src), "-o", str(lib), "-lm"], check=True)
    so = ctypes.CDLL(str(lib))
    checked = 0
    for name, args, want in _reference(reg):
        fn = getattr(so, f"grpodyn_{name}")
        fn.argtypes = [ctypes.c_double] * len(args)
        is_bool = "condition" in name
        fn.restype = ctypes.c_int if is_bool else ctypes.c_double
        got = fn(*args)
        assert (bool(got) == bool(want)) if is_bool else _agree(got, want), (name, got, want)
        checked += 1
    assert checked >= len(reg)
    # outside its domain a function refuses: NaN (and errno EDOM), never a plausible number
    so.grpodyn_trajectory.argtypes = [ctypes.c_double] * 5
    so.grpodyn_trajectory.restype = ctypes.c_double
    assert np.isnan(so.grpodyn_trajectory(5.0, 0.7, 0.0, 0.4, 0.3))
    assert np.isfinite(so.grpodyn_trajectory(5.0, 0.7, 0.0, 2.5, 0.3))


def test_python_export_runs_with_numpy_alone(exported, reg):
    module = exported / "python" / "grpodyn_theory.py"
    cases = [c for c in _reference(reg)][:200]
    code = (
        "import sys, json\n"
        "sys.modules['sympy'] = None; sys.modules['scipy'] = None\n"
        f"sys.path.insert(0, {str(module.parent)!r})\n"
        "import grpodyn_theory as g\n"
        f"cases = json.loads({json.dumps(json.dumps(cases))})\n"
        "print(json.dumps([float(getattr(g, n)(*a)) for n, a, _ in cases]))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True,
                         text=True, cwd=exported).stdout
    for (name, _, want), got in zip(cases, json.loads(out), strict=True):
        assert _agree(got, want), name


@pytest.mark.skipif(shutil.which("node") is None, reason="node not installed")
def test_javascript_agrees(exported, reg):
    cases = _reference(reg)
    script = exported / "javascript" / "check.mjs"
    script.write_text(
        "import * as g from './grpodyn_theory.mjs';\n"
        f"const cases = {json.dumps([[n, a] for n, a, _ in cases])};\n"
        "console.log(JSON.stringify(cases.map(([n, a]) => Number(g[n](...a)))));\n")
    out = subprocess.run(["node", str(script)], check=True, capture_output=True, text=True)
    for (name, _, want), got in zip(cases, json.loads(out.stdout), strict=True):
        assert _agree(got, want), (name, got, want)


@pytest.mark.skipif(shutil.which("rustc") is None, reason="rustc not installed")
def test_rust_compiles_and_agrees(exported, reg):
    cases = _reference(reg)
    folder = exported / "rust"
    calls = []
    for name, args, _ in cases:
        call = f"grpodyn_theory::{name}({', '.join(repr(a) + '_f64' for a in args)})"
        calls.append(f"    println!(\"{{:e}}\", ({call}) as i32 as f64);" if "condition" in name
                     else f"    println!(\"{{:e}}\", {call});")
    (folder / "main.rs").write_text("#[path = \"grpodyn_theory.rs\"]\n#[allow(dead_code)]\n"
                                    "mod grpodyn_theory;\n"
                                    "fn main() {\n" + "\n".join(calls) + "\n}\n")
    binary = folder / "check"
    subprocess.run(["rustc", "--edition", "2021", "-D", "warnings", "-O", str(folder / "main.rs"),
                    "-o", str(binary)], check=True, capture_output=True)
    out = subprocess.run([str(binary)], check=True, capture_output=True, text=True).stdout
    for (name, _, want), line in zip(cases, out.split(), strict=True):
        assert _agree(float(line), float(want)), (name, line, want)


@pytest.mark.skipif(shutil.which("julia") is None, reason="julia not installed")
def test_julia_agrees(exported, reg):  # pragma: no cover - julia is not on the CI machine
    cases = _reference(reg)[:50]
    script = exported / "julia" / "check.jl"
    lines = ['include("src/GrpodynTheory.jl")', "using .GrpodynTheory"]
    lines += [f"println(Float64(GrpodynTheory.{n}({', '.join(map(repr, a))})))"
              for n, a, _ in cases]
    script.write_text("\n".join(lines) + "\n")
    out = subprocess.run(["julia", str(script)], check=True, capture_output=True, text=True,
                         cwd=script.parent).stdout.split()
    for (name, _, want), got in zip(cases, out, strict=True):
        assert _agree(float(got), want), name


def test_latex_and_julia_cover_every_derivation(exported, reg):
    tex = (exported / "latex" / "grpodyn_theory.tex").read_text()
    jl = (exported / "julia" / "src" / "GrpodynTheory.jl").read_text()
    for name in reg:
        assert f"\\label{{eq:{name}}}" in tex
        assert f"function {name}(" in jl
    # every function and the module closed
    assert jl.count("\nend") == jl.count("\nfunction ") + 1
    # the packages the LaTeX needs, and each domain after its formula
    assert "\\usepackage{amsmath, amssymb}" in tex
    for name, d in reg.items():
        if d.domain is not None:
            assert f",\\qquad {d.domain_latex()}\n\\end{{equation}}" in tex, name
    assert "G \\in \\mathbb{Z},\\ S \\in \\mathbb{Z}" in tex  # binomial_pmf's counts


@pytest.mark.skipif(shutil.which("gcc") is None, reason="gcc not installed")
@pytest.mark.parametrize("flag", ["-ffast-math", "-ffinite-math-only"])
def test_c_refuses_fast_math(exported, flag):
    src = exported / "c" / "grpodyn_theory.c"
    done = subprocess.run(["gcc", "-std=c99", "-O2", flag, "-c", str(src), "-o",
                           str(exported / "c" / "fast.o")], capture_output=True, text=True)
    assert done.returncode != 0 and "without -ffast-math" in done.stderr


def test_javascript_and_rust_document_every_function(exported, reg):
    js = (exported / "javascript" / "grpodyn_theory.mjs").read_text()
    rs = (exported / "rust" / "grpodyn_theory.rs").read_text()
    for name, d in reg.items():
        jsdoc = js.split(f"export function {name}(")[0].rsplit("/**", 1)[1]
        rustdoc = rs.split(f"pub fn {name}(")[0].rsplit("\n\n", 1)[1]
        for arg in d.arg_names:
            assert f"@param {{number}} {arg} " in jsdoc and f"/// - `{arg}`: " in rustdoc, name
        assert f"derivation {name}" in jsdoc and f"derivation {name}." in rustdoc
        if d.domain is not None:
            assert "@throws {RangeError}" in jsdoc and "outside the domain" in rustdoc, name
    python = (exported / "python" / "grpodyn_theory.py").read_text()
    assert python.startswith('"""Numpy functions generated by grpodyn ')


def test_export_refuses_a_file_as_directory(tmp_path, capsys):
    target = tmp_path / "file"
    target.write_text("keep")
    assert main(["export", "--lang", "c", "--out", str(target)]) == 2
    assert target.read_text() == "keep"


def test_json_export_rebuilds_every_derivation(exported, reg):
    """The JSON export holds every derivation as data that sympy rebuilds exactly."""
    import json

    import sympy as sp
    from sympy.codegen.cfunctions import expm1, log1p

    document = json.loads((exported / "json" / "grpodyn_theory.json").read_text())
    assert document["generator"].startswith("grpodyn ")
    records = {r["name"]: r for r in document["derivations"]}
    assert list(records) == list(reg)
    for name, d in reg.items():
        record = records[name]
        reals = {s: sp.Symbol(s.name, real=True) for s in d.args}
        assert [a["name"] for a in record["arguments"]] == list(d.arg_names)
        for key, expr in (("formula", d.expr), ("domain", d.domain),
                          ("numeric_form", d.numeric_form)):
            if expr is None:
                assert record[key] is None, (name, key)
                continue
            rebuilt = sp.sympify(record[key]["srepr"], locals={"expm1": expm1, "log1p": log1p})
            assert rebuilt == expr.xreplace(reals), (name, key)
    pmf = records["binomial_pmf"]
    assert pmf["domain"]["description"] == ("G <= 1024 and G is a whole number and S is a whole "
                                            "number")
    assert pmf["domain"]["text"] == sp.sstr(reg["binomial_pmf"].domain)
    assert pmf["domain"]["latex"] == reg["binomial_pmf"].domain_latex()
    assert "log1p" in records["finite_group_drift_factor"]["numeric_form"]["latex"]
    assert document["format"] == 1
    assert pmf["arguments"][1] == {"name": "G", "meaning": "group size (completions per prompt)",
                                   "unit": "completions", "assumptions": ["integer", "positive"]}
    assert records["refresh_stability_condition"]["returns"] == "condition"
    assert pmf["returns"] == "number"
