"""Export of the theory registry to other languages, from the same derivations.

Languages: ``c`` (a header and a C99 source, symbols ``grpodyn_<name>``), ``python`` (the numpy
module of :mod:`grpodyn.numerics.codegen`, numpy only), ``latex`` (one labelled equation per
derivation), ``javascript`` (an ES module), ``julia``, ``rust``, and ``json`` (every derivation
as data: arguments with units, formula and domain as text, LaTeX and sympy ``srepr``). Every
function takes its arguments in the derivation's order, all as double precision; stability
conditions return a boolean (``int`` in C). Bounded sums become loops; the binomial coefficient
is a product loop, exact while it stays below 2^53 and dividing first where the next product
would overflow. A derivation with a domain refuses arguments outside it: C sets
``errno = EDOM`` and returns NaN (0 for a condition), JavaScript throws a ``RangeError``, Julia
a ``DomainError``, Rust returns NaN (false for a condition). A function without a domain is
the arithmetic of its formula: the signs its arguments take in the theory (a > 0, beta >= 0)
are documented with each argument, not checked. In C only EDOM marks a refusal: a
branch evaluated but not selected may leave another errno (ERANGE from ``log(0)``) on a valid
argument. A regime-dependent closed form (``autocorrelation``) is a ``Piecewise``: ``?:`` in C
and JavaScript, an ``if`` expression in Rust. Inside the domains every target evaluates the same
expression as numpy and agrees with it to 1e-12 (relative, or absolute below 1); the binomial
formulas stop at G <= 1024 (``grpodyn.theory.finite_group.MAX_GROUP``), where C(G, G/2) still
fits a double.

The C, Python and Julia exports are small packages ready to use (:mod:`.export_packages`): every
function documented with its summary, formula, arguments with units, and domain.
"""

from __future__ import annotations

import json
import math
import os
import textwrap
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import sympy as sp
from sympy.printing.c import C99CodePrinter
from sympy.printing.jscode import JavascriptCodePrinter
from sympy.printing.julia import JuliaCodePrinter

from grpodyn.ground import InputError, check_flag
from grpodyn.ground.files import write_all_atomic
from grpodyn.theory import Derivation, registry, to_latex
from grpodyn.theory.sourcehash import theory_source_hash
from grpodyn.theory.symbols import TABLE

from .codegen import render_module
from .export_packages import (
    c_doc_comment,
    domain_text,
    grpodyn_version,
    is_condition,
    jsdoc_comment,
    julia_docstring,
    package_files,
    rust_doc_comment,
)

__all__ = ["LANGUAGES", "export", "render", "replaced_files", "signature", "write_files"]

LANGUAGES = ("c", "python", "latex", "javascript", "julia", "rust", "json")
_BINOMIAL = "grpodyn_binomial"
#: Version of the JSON export's layout: it changes when a key is renamed or removed.
JSON_FORMAT = 1
_C_CONSTANTS = {"M_E": math.e, "M_LOG2E": math.log2(math.e), "M_LOG10E": math.log10(math.e),
                "M_LN2": math.log(2), "M_LN10": math.log(10), "M_PI": math.pi,
                "M_PI_2": math.pi / 2, "M_PI_4": math.pi / 4, "M_1_PI": 1 / math.pi,
                "M_2_PI": 2 / math.pi, "M_2_SQRTPI": 2 / math.sqrt(math.pi),
                "M_SQRT2": math.sqrt(2), "M_SQRT1_2": math.sqrt(0.5)}


def _as_reals(d: Derivation) -> tuple[sp.Basic, tuple[sp.Symbol, ...]]:
    """Return the expression with every argument (and summation index) as a real symbol."""
    swap = {s: sp.Symbol(s.name, real=True) for s in d.args}
    expr = d.evaluated.xreplace(swap)
    for node in expr.atoms(sp.Sum):
        ((index, _, _),) = node.limits
        expr = expr.xreplace({index: sp.Symbol(index.name, real=True)})
    return expr, tuple(swap[s] for s in d.args)


class _BinomialHelper:
    """Print binomial(n, k) as a call of the exported helper (a product loop)."""

    def _print_binomial(self, expr: sp.Basic) -> str:
        return f"{_BINOMIAL}({self._print(expr.args[0])}, {self._print(expr.args[1])})"


class _CPrinter(_BinomialHelper, C99CodePrinter):
    pass


class _AccurateFunctions:
    """Print the numeric forms' ``expm1`` and ``log1p`` as the language's function ``name``."""

    accurate_names: dict[str, str] = {}

    def _print_expm1(self, expr: sp.Basic) -> str:
        return f"{self.accurate_names['expm1']}({self._print(expr.args[0])})"

    def _print_log1p(self, expr: sp.Basic) -> str:
        return f"{self.accurate_names['log1p']}({self._print(expr.args[0])})"


class _JsPrinter(_BinomialHelper, _AccurateFunctions, JavascriptCodePrinter):
    accurate_names = {"expm1": "Math.expm1", "log1p": "Math.log1p"}


class _JuliaPrinter(_BinomialHelper, _AccurateFunctions, JuliaCodePrinter):
    accurate_names = {"expm1": "expm1", "log1p": "log1p"}

    def _print_atan2(self, expr: sp.atan2) -> str:
        """Julia spells the two-argument arctangent ``atan(y, x)``."""
        return f"atan({self._print(expr.args[0])}, {self._print(expr.args[1])})"


class _RustPrinter(_CPrinter):
    """Rust through the C99 printer: C's math calls map to inline wrappers of f64 methods.

    sympy's own Rust printer loses parentheses and digits on these expressions; C99 output with
    float literals is valid Rust once ``sqrt``, ``pow`` ... and the ``M_`` constants exist.
    """

    def _print_Integer(self, expr: sp.Integer) -> str:
        return f"{int(expr)}.0"

    def _print_Relational(self, expr: sp.Basic) -> str:
        return f"{self._print(expr.lhs)} {expr.rel_op} {self._print(expr.rhs)}"

    def _print_Piecewise(self, expr: sp.Piecewise) -> str:
        """Rust has no ``?:``: a Piecewise is an ``if`` expression, NaN where no condition holds."""
        text = "".join(f"if {self._print(cond)} {{ {self._print(value)} }} else "
                       for value, cond in expr.args if cond is not sp.true)
        last = expr.args[-1]
        return f"({text}{{ {self._print(last.expr) if last.cond is sp.true else 'f64::NAN'} }})"


#: C math function -> the f64 method that Rust wraps it as.
_RUST_MATH = {"fabs": "abs", "sqrt": "sqrt", "cbrt": "cbrt", "exp": "exp", "expm1": "exp_m1",
              "log": "ln", "log1p": "ln_1p", "floor": "floor", "cos": "cos", "sin": "sin",
              "tan": "tan",
              "acos": "acos", "asin": "asin", "atan": "atan", "cosh": "cosh", "sinh": "sinh",
              "tanh": "tanh", "acosh": "acosh", "asinh": "asinh", "atanh": "atanh"}
_RUST_PRELUDE = ("".join(f"#[inline] fn {c}(x: f64) -> f64 {{ x.{r}() }}\n"
                         for c, r in _RUST_MATH.items())
                 + "#[inline] fn pow(x: f64, y: f64) -> f64 { x.powf(y) }\n"
                 + "#[inline] fn atan2(y: f64, x: f64) -> f64 { y.atan2(x) }\n")


@dataclass(frozen=True)
class _Language:
    """How one language writes assignments, loops, functions and the domain refusal."""

    printer: Callable[[], sp.printing.codeprinter.CodePrinter]
    assign: str  # "{name}" and "{value}"
    loop: str  # "{acc}", "{index}", "{lower}", "{upper}", "{term}"
    function: str  # "{name}", "{params}", "{type}", "{body}"
    param: str  # "{name}"
    number_type: str
    bool_type: str
    refuse: str  # "{condition}", "{message}", "{refused}": leave the function outside the domain
    refused: tuple[str, str] = ("", "")  # the value returned there: a number's, a condition's
    indent: str = "    "


_C = _Language(
    _CPrinter, "const double {name} = {value};",
    "double {acc} = 0.0;\nfor (double {index} = {lower}; {index} <= {upper}; {index} += 1.0) "
    "{{\n    {acc} += {term};\n}}",
    "{type} grpodyn_{name}({params}) {{\n{body}\n}}", "double {name}", "double", "int",
    "if (!({condition})) {{ errno = EDOM; return {refused}; }}", ("NAN", "0"))
_JS = _Language(
    _JsPrinter, "const {name} = {value};",
    "let {acc} = 0.0;\nfor (let {index} = {lower}; {index} <= {upper}; {index} += 1) "
    "{{\n    {acc} += {term};\n}}",
    "export function {name}({params}) {{\n{body}\n}}", "{name}", "", "",
    "if (!({condition})) {{ throw new RangeError(\"{message}\"); }}")
_JULIA = _Language(
    _JuliaPrinter, "{name} = {value}",
    "{acc} = 0.0\nfor {index} in ({lower}):({upper})\n    {acc} += {term}\nend",
    "function {name}({params})\n{body}\nend", "{name}::Real", "", "",
    "({condition}) || throw(DomainError(\"{message}\"))")
_RUST = _Language(
    _RustPrinter, "let {name}: f64 = {value};",
    "let mut {acc}: f64 = 0.0;\nlet mut {index}: f64 = {lower};\nwhile {index} <= {upper} "
    "{{\n    {acc} += {term};\n    {index} += 1.0;\n}}",
    "pub fn {name}({params}) -> {type} {{\n{body}\n}}", "{name}: f64", "f64", "bool",
    "if !({condition}) {{ return {refused}; }}", ("f64::NAN", "false"))


def _function(d: Derivation, lang: _Language) -> str:
    printer = lang.printer()
    expr, args = _as_reals(d)
    lines: list[str] = []
    is_bool = is_condition(d)
    if lang is _C:  # an argument a result does not depend on (kept for the calling convention)
        lines += [f"(void){a.name};" for a in args if a not in expr.free_symbols]
    if d.domain is not None:  # refuse outside the domain (C: errno EDOM, Rust: NaN or false)
        domain = d.domain.xreplace({s: sp.Symbol(s.name, real=True) for s in d.args})
        lines += lang.refuse.format(condition=printer.doprint(domain),
                                    message=f"{d.name}: defined only where {domain_text(d)}",
                                    refused=lang.refused[is_bool]).splitlines()
    for i, node in enumerate(sorted(expr.atoms(sp.Sum), key=sp.srepr)):
        ((index, lower, upper),) = node.limits
        acc = f"sum{i}"
        loop = lang.loop.format(acc=acc, index=index.name, lower=printer.doprint(lower),
                                upper=printer.doprint(upper), term=printer.doprint(node.function))
        lines += loop.splitlines()
        expr = expr.xreplace({node: sp.Symbol(acc, real=True)})
    if not is_bool:
        replacements, (expr,) = sp.cse(expr, symbols=sp.numbered_symbols("x"))
        conditions: dict[sp.Symbol, sp.Basic] = {}  # stay inline: a Rust f64 cannot hold one
        for s, v in replacements:
            v = v.xreplace(conditions)
            if isinstance(v, sp.logic.boolalg.Boolean):
                conditions[s] = v
            else:
                lines.append(lang.assign.format(name=s.name, value=printer.doprint(v)))
        expr = expr.xreplace(conditions)
    result = printer.doprint(expr)
    lines.append(f"return {result};" if lang is not _JULIA else f"return {result}")
    if lang is _RUST:
        lines[-1] = result  # Rust: the tail expression is the value
        lines = [line.replace("const double ", "let ") for line in lines]
    body = "\n".join(lang.indent + line for line in lines)
    params = ", ".join(lang.param.format(name=a.name) for a in args)
    if not params and lang is _C:
        params = "void"  # C99: "()" declares no prototype
    kind = lang.bool_type if is_bool else lang.number_type
    return lang.function.format(name=d.name, params=params, type=kind, body=body)


#: What the LaTeX export needs from the including document.
_LATEX_PACKAGES = (r"% Needs \usepackage{amsmath, amssymb}: cases, \operatorname, \text, \mathbb."
                   "\n% A function's domain follows its formula after a comma.")


#: The C source refuses -ffast-math: it drops the binomial's overflow check (isinf) and reorders
#: the sums that decide a stability condition near its boundary, with no diagnostic.
_NO_FAST_MATH = ("#if defined(__FAST_MATH__) || (defined(__FINITE_MATH_ONLY__) && "
                 "__FINITE_MATH_ONLY__)\n#error \"grpodyn_theory.c needs IEEE arithmetic: "
                 "compile it without -ffast-math or -ffinite-math-only (its infinity checks and "
                 "the order of its sums decide results)\"\n#endif")


def _latex_domain(d: Derivation) -> str:
    """Return the LaTeX that follows a formula: its domain after a comma, or nothing."""
    return rf",\qquad {d.domain_latex()}" if d.domain is not None else ""


def _header_note(marker: str) -> str:
    return (f"{marker} Generated by grpodyn {grpodyn_version()} from the theory registry "
            f"(theory hash {theory_source_hash()}). Do not edit.")


def render(lang: str, derivations: list[Derivation] | None = None) -> dict[str, str]:
    """File name -> contents of the export to ``lang``."""
    ds = list(derivations if derivations is not None else registry().values())
    if lang == "python":
        return {"grpodyn_theory.py": render_module(ds, formulas=True),
                **package_files("python", ds)}
    if lang == "latex":
        body = "\n".join(
            f"% {d.summary}\n\\begin{{equation}}\\label{{eq:{d.name}}}\n"
            f"{d.latex()}{_latex_domain(d)}\n\\end{{equation}}" for d in ds)
        return {"grpodyn_theory.tex": f"{_header_note('%')}\n{_LATEX_PACKAGES}\n{body}\n"}
    if lang == "c":
        prototypes = "\n\n".join(
            f"{c_doc_comment(d)}\n{signature(d, 'c')};" for d in ds)
        header = (f"{_header_note('/*')} */\n#ifndef GRPODYN_THEORY_H\n#define GRPODYN_THEORY_H\n"
                  "\n#ifdef __cplusplus\nextern \"C\" {\n#endif\n"
                  f"\n{prototypes}\n\n#ifdef __cplusplus\n}}\n#endif\n\n#endif\n")
        helper = (f"static double {_BINOMIAL}(double n, double k) {{\n"
                  "    if (k < 0.0 || k > n) { return 0.0; }\n    double r = 1.0;\n"
                  "    for (double i = 1.0; i <= k; i += 1.0) {\n"
                  "        const double t = r * (n - k + i);\n"
                  "        r = isinf(t) ? r / i * (n - k + i) : t / i;\n    }\n"
                  "    return r;\n}")
        constants = "".join(f"#ifndef {name}\n#define {name} {value!r}\n#endif\n"
                            for name, value in _C_CONSTANTS.items())
        source = (f"{_header_note('/*')} */\n#include <errno.h>\n#include <math.h>\n"
                  f"#include \"grpodyn_theory.h\"\n\n{_NO_FAST_MATH}\n\n"
                  f"/* C99 does not define the M_ constants that math.h offers as an extension */\n"
                  f"{constants}\n"
                  f"{helper}\n\n" + "\n\n".join(_function(d, _C) for d in ds) + "\n")
        return {"grpodyn_theory.h": header, "grpodyn_theory.c": source, **package_files("c", ds)}
    if lang == "javascript":
        helper = (f"function {_BINOMIAL}(n, k) {{\n    if (k < 0 || k > n) {{ return 0; }}\n"
                  "    let r = 1;\n    for (let i = 1; i <= k; i++) {\n"
                  "        const t = r * (n - k + i);\n"
                  "        r = Number.isFinite(t) ? t / i : r / i * (n - k + i);\n    }\n"
                  "    return r;\n}")
        return {"grpodyn_theory.mjs": f"{_header_note('//')}\n{helper}\n\n" + "\n\n".join(
            f"{jsdoc_comment(d)}\n{_function(d, _JS)}" for d in ds) + "\n"}
    if lang == "julia":
        helper = (f"function {_BINOMIAL}(n, k)\n    (k < 0 || k > n) && return 0.0\n"
                  "    r = 1.0\n    for i in 1:k\n        t = r * (n - k + i)\n"
                  "        r = isinf(t) ? r / i * (n - k + i) : t / i\n    end\n"
                  "    return r\nend")
        exports = textwrap.fill(", ".join(d.name for d in ds), width=96,
                                initial_indent="export ", subsequent_indent="    ")
        return {"src/GrpodynTheory.jl": f"{_header_note('#')}\nmodule GrpodynTheory\n\n"
                f"{exports}\n\n{helper}\n\n"
                + "\n\n".join(f"{julia_docstring(d)}\n{_function(d, _JULIA)}" for d in ds)
                + "\n\nend\n", **package_files("julia", ds)}
    if lang == "rust":
        helper = (f"pub fn {_BINOMIAL}(n: f64, k: f64) -> f64 {{\n"
                  "    if k < 0.0 || k > n { return 0.0; }\n    let mut r = 1.0_f64;\n"
                  "    let mut i = 1.0_f64;\n"
                  "    while i <= k {\n        let t = r * (n - k + i);\n"
                  "        r = if t.is_infinite() { r / i * (n - k + i) } else { t / i };\n"
                  "        i += 1.0;\n    }\n"
                  "    r\n}")
        constants = "".join(f"const {name}: f64 = {value!r};\n"
                            for name, value in _C_CONSTANTS.items())
        return {"grpodyn_theory.rs": f"{_header_note('//')}\n#![allow(non_snake_case, "
                "unused_variables, dead_code, unused_parens, clippy::all)]\n\n"
                + constants + _RUST_PRELUDE + "\n" + helper + "\n\n" + "\n\n".join(
                    f"{rust_doc_comment(d)}\n{_function(d, _RUST)}" for d in ds) + "\n"}
    if lang == "json":
        document = {"format": JSON_FORMAT, "generator": f"grpodyn {grpodyn_version()}",
                    "theory_hash": theory_source_hash(),
                    "derivations": [_json_record(d) for d in ds]}
        return {"grpodyn_theory.json": json.dumps(document, indent=1) + "\n"}
    raise ValueError(f"unknown language {lang!r}; choose from {', '.join(LANGUAGES)}")


def _json_record(d: Derivation) -> dict:
    """Return one derivation as plain JSON types: what a codebase needs to rebuild or use it.

    Each of formula, domain and numeric form has ``text`` (sympy's string form, for display: a
    sum's index ``S`` reads as sympy's ``S`` there), ``latex`` and ``srepr``, the form that
    ``sympy.sympify`` rebuilds (with ``expm1`` and ``log1p`` from ``sympy.codegen.cfunctions``
    among its locals). As in every export, the arguments are real numbers there: their declared
    assumptions are listed with them, and a whole-number condition stays a condition. A domain
    also has ``description``, the words of the functions' refusals. ``numeric_form`` is the
    equal expression the generated code evaluates where the formula cancels in doubles.
    """
    reals = {s: sp.Symbol(s.name, real=True) for s in d.args}

    def form(expr: sp.Basic, latex: str) -> dict[str, str]:
        return {"text": sp.sstr(expr), "latex": latex, "srepr": sp.srepr(expr.xreplace(reals))}

    arguments = [{"name": name, "meaning": TABLE[name].meaning, "unit": TABLE[name].unit,
                  "assumptions": sorted(k for k, v in TABLE[name].assumptions.items() if v)}
                 for name in d.arg_names]
    return {"name": d.name, "summary": d.summary, "section": d.section,
            "returns": "condition" if is_condition(d) else "number", "arguments": arguments,
            "formula": form(d.expr, d.latex()),
            "domain": None if d.domain is None else {
                **form(d.domain, d.domain_latex()), "description": domain_text(d)},
            "numeric_form": None if d.numeric_form is None else form(
                d.numeric_form, to_latex(d.numeric_form))}


_SIGNATURE_LANGUAGES = {"c": _C, "javascript": _JS, "julia": _JULIA, "rust": _RUST}


def signature(d: Derivation, lang: str) -> str:
    """Return the signature of the exported function of ``d`` in ``lang``.

    Parameters
    ----------
    d
        The derivation.
    lang
        One of ``c``, ``python``, ``javascript``, ``julia``, ``rust``.

    Returns
    -------
    str
        The declaration as the export writes it (C: the prototype without ``;``; Python: the
        ``def`` line without ``:``).
    """
    if lang == "python":
        return f"def {d.name}({', '.join(d.arg_names)})"
    if lang not in _SIGNATURE_LANGUAGES:
        raise ValueError(f"no signature for language {lang!r}")
    first = _function(d, _SIGNATURE_LANGUAGES[lang]).splitlines()[0]
    return first.removesuffix(" {")


def export(lang: str, out: str | os.PathLike[str], *, force: bool = False) -> list[Path]:
    """Write the export in ``lang`` to the folder ``out`` (created if needed), all files or none.

    Parameters
    ----------
    lang : str
        One of the languages of :func:`render`.
    out : str or path-like
        The output folder.
    force : bool
        Replace files in ``out`` that hold other text (a README.md or a pyproject.toml of
        one's own); without it such files are kept and nothing is written.

    Returns
    -------
    list of pathlib.Path
        The files written.

    Raises
    ------
    InputError
        ``out`` is not a folder, ``force`` not a bool, or, without ``force``, the export
        would replace a file that holds other text (:func:`replaced_files`).
    ValueError
        An unknown ``lang``.
    """
    force = check_flag("force", force)
    if not isinstance(out, (str, os.PathLike)) or not str(out):
        raise InputError(f"out must be a folder's path (str or pathlib.Path), got {out!r:.60}")
    out = Path(out)
    if out.exists() and not out.is_dir():
        raise InputError(f"out {out}: exists and is not a folder")
    files = render(lang)
    replaced = replaced_files(out, files)
    if replaced and not force:
        raise InputError(f"out {out}: the export would replace files there that hold other "
                         f"text: {', '.join(replaced)}; pass force=True to replace them, or "
                         "choose another folder")
    return write_files(files, out)


def replaced_files(out: Path, files: dict[str, str]) -> list[str]:
    """Return the names of ``files`` that exist in ``out`` with another content.

    Those are what writing the export would destroy; a file that already holds the exported
    text (an earlier export) loses nothing.
    """
    replaced = []
    for name, text in files.items():
        path = out / name
        if path.is_file():
            try:
                same = path.read_text(encoding="utf-8") == text
            except (UnicodeDecodeError, OSError):
                same = False
            if same:
                continue
        if path.exists():
            replaced.append(name)
    return replaced


def write_files(files: dict[str, str], out: Path) -> list[Path]:
    """Write rendered files (name -> text, :func:`render`) under ``out``, all or none.

    Every target is checked before any is written, and the files replace the old ones only
    once all are written (:func:`grpodyn.ground.files.write_all_atomic`): a target that cannot
    be written (a folder of that name) leaves ``out`` as it was.
    """
    return write_all_atomic({out / name: text for name, text in files.items()})
