"""Code generation from the theory registry: one printer, one calling convention.

Every derivation becomes a function named after it whose positional arguments are the
derivation's ``args``, in order (pydy's convention). The numpy rendering is used twice: written
to ``numerics/_generated.py`` (so importing the numeric layer needs no sympy) and compiled lazily
in memory when the theory has changed since generation. Other languages are rendered by
:mod:`grpodyn.numerics.export`.

This module imports sympy; the rest of the numeric layer imports it only on the fallback path.
"""

from __future__ import annotations

import textwrap
from collections.abc import Iterable

import sympy as sp
from sympy.printing.numpy import NumPyPrinter

from grpodyn.theory import Derivation, registry
from grpodyn.theory.sourcehash import theory_source_hash
from grpodyn.theory.symbols import TABLE

from .export_packages import domain_text, formula_text, grpodyn_version

__all__ = ["NumpyPrinter", "render_function", "render_module", "FINITE_SUM_SOURCE"]

#: Helpers of the generated code: a bounded sum vectorised over the other arguments, and an
#: exact binomial coefficient (numpy has none; math.comb is exact for the integer G and S).
FINITE_SUM_SOURCE = '''
_binomial = numpy.vectorize(
    lambda n, k: float(math.comb(int(n), int(k))) if 0 <= k <= n else 0.0, otypes=[float])


def _finite_sum(term, lower, upper, arguments):
    """sum_{j=lower}^{upper} term(j), broadcast over ``arguments`` (the sum's free symbols)."""
    lower = numpy.asarray(lower)
    upper = numpy.asarray(upper)
    ndim = numpy.broadcast(*arguments, lower, upper).ndim if arguments else 0
    if upper.size == 0:
        return numpy.zeros(numpy.broadcast(*arguments).shape)
    index = numpy.arange(int(numpy.min(lower)), int(numpy.max(upper)) + 1)
    index = index.reshape((-1,) + (1,) * ndim)
    with numpy.errstate(all="ignore"):
        values = term(index)
    inside = (index >= lower) & (index <= upper)
    return numpy.sum(numpy.where(inside, values, 0.0), axis=0)
'''.strip()


class NumpyPrinter(NumPyPrinter):
    """Numpy printer with a vectorised bounded ``Sum`` and an exact binomial coefficient."""

    def _print_binomial(self, expr: sp.binomial) -> str:
        n, k = expr.args
        return f"_binomial({self._print(n)}, {self._print(k)})"

    def _print_Piecewise(self, expr: sp.Piecewise) -> str:
        """Nested ``numpy.where``: the first branch whose condition holds, as numpy.select picks.

        numpy.select builds its lists of conditions and choices on every call, twenty times the
        cost of a where on the short arrays of a map iterated step by step. Every branch is
        evaluated (errors of the unused ones are silenced by the caller); without a final
        ``True`` branch, NaN where no condition holds.
        """
        *branches, (last, condition) = expr.args
        out = self._print(last) if condition == sp.true else \
            f"numpy.where({self._print(condition)}, {self._print(last)}, numpy.nan)"
        for value, test in reversed(branches):
            out = f"numpy.where({self._print(test)}, {self._print(value)}, {out})"
        return out

    def _print_Sum(self, expr: sp.Sum) -> str:
        ((index, lower, upper),) = expr.limits
        free = sorted(expr.free_symbols, key=lambda s: s.name)
        arguments = "".join(f"{s.name}, " for s in free)
        return (f"_finite_sum(lambda {index.name}: {self._print(expr.function)}, "
                f"{self._print(lower)}, {self._print(upper)}, ({arguments}))")


def _printer() -> NumpyPrinter:
    return NumpyPrinter({"fully_qualified_modules": True, "inline": True,
                         "allow_unknown_functions": False})


def _docstring(d: Derivation, *, formula: bool = False) -> str:
    lines = [d.summary, ""]
    if formula:  # the exported module: the formula itself, for readers without the theory
        lines += [f"``{formula_text(d)}``", ""]
    lines += [f"docs/theory.md section {d.section}. Generated from the derivation "
              f"``{d.name}``.", ""]
    if d.args:
        lines += ["Parameters", "----------"]
        for s in d.args:
            row = TABLE[s.name]
            lines += [f"{s.name} : array_like", f"    {row.meaning} [{row.unit}]"]
    if d.domain is not None:
        lines += ["", "Raises", "------", "ValueError",
                  "    Outside the domain where this real-arithmetic form is the result:",
                  f"    {domain_text(d)}"]
    return '"""' + "\n".join(lines).rstrip() + '\n"""'


def render_function(d: Derivation, *, formula: bool = False) -> str:
    """Source of the numpy function of ``d`` (numpy and math only).

    ``formula``: the docstring also shows the formula.
    """
    printer = _printer()
    body: list[str] = []
    if d.domain is not None:  # refuse instead of returning NaN outside the domain
        names = ", ".join(s.name for s in sorted(d.domain.free_symbols, key=lambda s: s.name))
        arrays = ", ".join(f"numpy.asarray({s.name}, dtype=float)"
                           for s in sorted(d.domain.free_symbols, key=lambda s: s.name))
        conditions = d.domain.args if isinstance(d.domain, sp.And) else (d.domain,)
        tests = " and ".join(f"numpy.all({printer.doprint(c)})" for c in conditions)
        body += ["with numpy.errstate(all=\"ignore\"):  # arrays: 1/0 is inf, not an exception",
                 f"    _inside = (lambda {names}: {tests})({arrays})",
                 "if not _inside:",
                 f"    raise ValueError(\"{d.name}: defined only where {domain_text(d)}\")"]
    expr = d.evaluated
    evaluation: list[str] = []
    if not expr.has(sp.Sum):  # cse could hoist the summation index out of its lambda
        replacements, (expr,) = sp.cse(expr, symbols=sp.numbered_symbols("_x"))
        evaluation += [f"{s} = {printer.doprint(sub)}" for s, sub in replacements]
    result = printer.doprint(expr)
    if not expr.has(sp.Piecewise):
        evaluation.append(f"return {result}")
    else:  # numpy.where evaluates every branch, the unused ones too, and returns a 0-d array
        # for scalars: [()] makes that a number and leaves an array as it is
        evaluation.append(f"return numpy.asarray({result})[()]")
        evaluation = ["with numpy.errstate(all=\"ignore\"):  # only the selected branch counts",
                      *("    " + line for line in evaluation)]
    # Python numbers raise ZeroDivisionError at a pole where numpy's give inf or nan: the same
    # point as numpy scalars then gives what an array gives there
    scalars = ", ".join(f"numpy.asarray({a})[()]" for a in d.arg_names)
    body += ["try:", *("    " + line for line in evaluation),
             "except ZeroDivisionError:  # Python numbers at a pole: as numpy's (inf or nan)",
             "    with numpy.errstate(all=\"ignore\"):",
             f"        return {d.name}({scalars})"]
    header = f"def {d.name}({', '.join(d.arg_names)}):"
    docstring = _docstring(d, formula=formula)
    return header + "\n" + textwrap.indent(docstring + "\n" + "\n".join(body), "    ")


def _symbol_row(name: str) -> tuple[str, str, tuple[str, ...]]:
    """Return (unit, LaTeX, true assumptions) of the declared symbol ``name``."""
    row = TABLE[name]
    return row.unit, row.latex, tuple(sorted(k for k, v in row.assumptions.items() if v))


def render_module(derivations: Iterable[Derivation] | None = None, *,
                  formulas: bool = False) -> str:
    """Render a self-contained module with every derivation as a numpy function.

    ``formulas``: each docstring also shows the formula, and the module's names the grpodyn
    version that wrote it (the exported module; the numeric layer's ``_generated.py`` needs
    neither, and names the test that holds it to the theory instead).
    """
    ds = list(derivations if derivations is not None else registry().values())
    if formulas:
        doc = (f'"""Numpy functions generated by grpodyn {grpodyn_version()} from its theory '
               'registry. Do not edit.\n\nRegenerate with ``grpodyn export --lang python --out '
               'DIR``; ``THEORY_HASH`` names the\ntheory it was generated from.\n"""')
    else:
        doc = ('"""Numpy functions generated from the grpodyn theory registry. Do not edit.\n\n'
               'Regenerate with ``grpodyn export --lang python --out DIR`` or\n'
               '``python -m grpodyn.numerics.generate``; ``tests/test_compiled.py`` fails when '
               'this\nfile is out of date.\n"""')
    signatures = ",\n".join(f"    {d.name!r}: {d.arg_names!r}" for d in ds)
    arguments = sorted({name for d in ds for name in d.arg_names})
    symbols = ",\n".join(f"    {name!r}: {_symbol_row(name)!r}" for name in arguments)
    parts = [
        doc,
        "import math\n\nimport numpy",
        f"THEORY_HASH = {theory_source_hash()!r}",
        f"SIGNATURES = {{\n{signatures},\n}}",
        "#: argument -> (unit, LaTeX, assumptions that are true): numeric code reads a\n"
        "#: parameter's domain here (e.g. a fit's bounds) without importing sympy\n"
        f"SYMBOLS = {{\n{symbols},\n}}",
        FINITE_SUM_SOURCE,
        *(render_function(d, formula=formulas) for d in ds),
    ]
    return "\n\n\n".join(parts) + "\n"
