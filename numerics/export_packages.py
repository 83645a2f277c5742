"""Documentation and packaging of the exported C, Python and Julia code.

The functions themselves are rendered by :mod:`grpodyn.numerics.export`; this module writes what
makes each export a package ready to drop into another codebase: the documentation of every
function (summary, formula, arguments with meaning and unit, domain, theory section) in the
language's own convention (Doxygen comments in the C header, docstrings in Python and Julia), a
build or project file (a Makefile, a ``pyproject.toml``, a Julia ``Project.toml``) and a README.
"""

from __future__ import annotations

import uuid

import sympy as sp

from grpodyn.theory import Derivation
from grpodyn.theory.derivation import domain_conditions
from grpodyn.theory.symbols import TABLE

__all__ = ["c_doc_comment", "jsdoc_comment", "julia_docstring", "rust_doc_comment",
           "package_files", "formula_text", "domain_text", "is_condition", "section_number"]

#: Namespace of the Julia package's UUID (a UUID5 of its name: the same on every export).
_JULIA_NAMESPACE = uuid.UUID("6ba7b811-9dad-11d1-80b4-00c04fd430c8")  # RFC 4122 URL namespace


def section_number(d: Derivation) -> int:
    """Return the number of the theory section that ``d`` derives (``"5. Stability"`` -> 5)."""
    return int(d.section.split(".", 1)[0])


def formula_text(d: Derivation) -> str:
    """Return ``name(args) = expr`` in plain text (sympy's ``str``)."""
    return f"{d.name}({', '.join(d.arg_names)}) = {sp.sstr(d.expr)}"


def is_condition(d: Derivation) -> bool:
    """Return whether ``d`` is a condition (a boolean of relations), not a number.

    A bare symbol is also a sympy Boolean; it is a number here.
    """
    return isinstance(d.expr, sp.logic.boolalg.Boolean) and not d.expr.is_Symbol


def _argument_lines(d: Derivation) -> list[tuple[str, str]]:
    """(name, "meaning [unit]; assumptions") for every argument, in calling order."""
    rows = []
    for name in d.arg_names:
        row = TABLE[name]
        true = sorted(k for k, v in row.assumptions.items() if v)
        rows.append((name, f"{row.meaning} [{row.unit}]" + (f"; {', '.join(true)}"
                                                              if true else "")))
    return rows


def _where(d: Derivation) -> str:
    title = d.section.split(".", 1)[1].strip()
    return f"grpodyn docs/theory.md section {section_number(d)} ({title}), derivation {d.name}"


def domain_text(d: Derivation) -> str:
    """Return the domain of ``d`` as plain text, for messages.

    Parameters
    ----------
    d
        A derivation with a domain.

    Returns
    -------
    str
        Its conditions joined by "and" (sympy's str of each), the whole-number ones last, as
        "G is a whole number".
    """
    others, whole = domain_conditions(d.domain)
    return " and ".join([*(str(c) for c in others), *(f"{x} is a whole number" for x in whole)])


def c_doc_comment(d: Derivation) -> str:
    """Return the Doxygen comment of the C function of ``d``."""
    lines = [f"@brief {d.summary}", "", formula_text(d), "", _where(d), ""]
    lines += [f"@param {name} {text}" for name, text in _argument_lines(d)]
    lines.append("@return 1 where the condition holds, else 0" if is_condition(d)
                 else "@return the value of the formula")
    if d.domain is not None:
        lines += ["", f"Defined only where {domain_text(d)}: outside it the function sets "
                  "errno = EDOM and returns NaN."]
    body = "\n".join(f" * {line}".rstrip() for line in lines).replace("*/", "* /")
    return f"/**\n{body}\n */"


def jsdoc_comment(d: Derivation) -> str:
    """Return the JSDoc comment of the JavaScript function of ``d``."""
    lines = [d.summary, "", formula_text(d), "", _where(d), ""]
    lines += [f"@param {{number}} {name} {text}" for name, text in _argument_lines(d)]
    lines.append("@returns {boolean} whether the condition holds" if is_condition(d)
                 else "@returns {number} the value of the formula")
    if d.domain is not None:
        lines.append(f"@throws {{RangeError}} outside the domain {domain_text(d)}")
    body = "\n".join(f" * {line}".rstrip() for line in lines).replace("*/", "* /")
    return f"/**\n{body}\n */"


def rust_doc_comment(d: Derivation) -> str:
    """Return the doc comment of the Rust function of ``d`` (its formula in a text block)."""
    lines = [d.summary, "", "```text", formula_text(d), "```", "", _where(d) + ".", "",
             "# Arguments", ""]
    lines += [f"- `{name}`: {text}" for name, text in _argument_lines(d)]
    if d.domain is not None:
        refused = "false" if is_condition(d) else "NaN"
        lines += ["", f"Returns {refused} outside the domain {domain_text(d)} (Rust has no "
                  "refusal apart from the value)."]
    return "\n".join(f"/// {line}".rstrip() for line in lines)


def julia_docstring(d: Derivation) -> str:
    """Return the Julia docstring of the function of ``d`` (placed before its definition)."""
    params = ", ".join(f"{name}::Real" for name in d.arg_names)
    lines = [f"    {d.name}({params})", "", d.summary, "", f"    {formula_text(d)}", "",
             _where(d) + ".", "", "# Arguments"]
    lines += [f"- `{name}`: {text}" for name, text in _argument_lines(d)]
    if d.domain is not None:
        lines += ["", f"Throws a `DomainError` outside the domain {domain_text(d)}."]
    text = "\n".join(lines).replace("\\", "\\\\").replace("$", "\\$").replace('"""', '\\"""')
    return f'"""\n{text}\n"""'


def grpodyn_version() -> str:
    """Return the installed grpodyn's version (its package metadata), for the exports' notes."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("grpodyn")
    except PackageNotFoundError:  # a source tree on the path, not installed
        return "(not installed)"


def _listing(ds: list[Derivation], call: str) -> str:
    return "\n".join(f"- `{call.format(name=d.name, args=', '.join(d.arg_names))}`: {d.summary}"
                     for d in ds)


def _readme(title: str, functions: str, usage: str, notes: str, listing: str) -> str:
    """Return a package's README: title, what it holds, how to use it, notes, the functions."""
    return (f"# {title}\n\nThe derivations of the grpodyn theory as {functions}, generated "
            f"from its registry.\n\n{usage}\n\n{notes}\n\n## Functions\n\n{listing}\n")


def _c_files(ds: list[Derivation]) -> dict[str, str]:
    makefile = (
        "# Builds the static and the shared library of the exported grpodyn theory.\n"
        "CC ?= cc\nCFLAGS ?= -std=c99 -O2 -Wall -Wextra\n\n"
        "all: libgrpodyn_theory.a libgrpodyn_theory.so\n\n"
        "grpodyn_theory.o: grpodyn_theory.c grpodyn_theory.h\n"
        "\t$(CC) $(CFLAGS) -fPIC -c grpodyn_theory.c -o $@\n\n"
        "libgrpodyn_theory.a: grpodyn_theory.o\n\t$(AR) rcs $@ $^\n\n"
        "libgrpodyn_theory.so: grpodyn_theory.o\n\t$(CC) -shared $^ -o $@ -lm\n\n"
        "clean:\n\trm -f grpodyn_theory.o libgrpodyn_theory.a libgrpodyn_theory.so\n\n"
        ".PHONY: all clean\n")
    readme = _readme(
        "grpodyn theory for C", "C99 functions",
        "```sh\nmake            # libgrpodyn_theory.a and "
        "libgrpodyn_theory.so\ncc -std=c99 my_code.c -I. libgrpodyn_theory.a -lm   # static\n"
        "cc -std=c99 my_code.c -I. -L. -lgrpodyn_theory -lm -Wl,-rpath,\"$PWD\"   # shared\n"
        "```",
        "Include `grpodyn_theory.h`: every function is documented there (formula, arguments "
        "with units, domain). All arguments are `double`; a stability condition returns "
        "`int` (1 where it holds). Outside a function's domain it sets `errno = EDOM` and "
        "returns NaN.", _listing(ds, "grpodyn_{name}({args})"))
    return {"Makefile": makefile, "README.md": readme}


def _python_files(ds: list[Derivation]) -> dict[str, str]:
    pyproject = (
        "[build-system]\nrequires = [\"setuptools>=64\"]\n"
        "build-backend = \"setuptools.build_meta\"\n\n[project]\nname = \"grpodyn-theory\"\n"
        f"version = \"{grpodyn_version()}\"\n"
        "description = \"The grpodyn theory's derivations as numpy "
        "functions.\"\nrequires-python = \">=3.10\"\ndependencies = [\"numpy>=1.24\"]\n\n"
        "[tool.setuptools]\npy-modules = [\"grpodyn_theory\"]\n")
    readme = _readme(
        "grpodyn theory for Python", "numpy functions (numpy is the only dependency)",
        "```sh\npip install .        # or copy grpodyn_theory.py next to your code\n```\n\n"
        "```python\nimport grpodyn_theory as g\nhelp(g.critical_stiffness)\n```",
        "Every function takes numbers or arrays (broadcast) and has a docstring with its "
        "formula, arguments with units and domain; outside the domain it raises "
        "`ValueError`.", _listing(ds, "{name}({args})"))
    return {"pyproject.toml": pyproject, "README.md": readme}


def _julia_files(ds: list[Derivation]) -> dict[str, str]:
    package_id = uuid.uuid5(_JULIA_NAMESPACE, "GrpodynTheory")
    project = (f"name = \"GrpodynTheory\"\nuuid = \"{package_id}\"\n"
               f"version = \"{grpodyn_version()}\"\n")
    readme = _readme(
        "GrpodynTheory.jl", "Julia functions (Base only)",
        "```julia\nusing Pkg; Pkg.develop(path=\".\")\nusing GrpodynTheory\n"
        "?critical_stiffness\n```",
        "Every function takes `Real` arguments and has a docstring with its formula, "
        "arguments with units and domain; outside the domain it throws a `DomainError`.",
        _listing(ds, "{name}({args})"))
    return {"Project.toml": project, "README.md": readme}


def package_files(lang: str, ds: list[Derivation]) -> dict[str, str]:
    """Return file name -> contents of the packaging around the export to ``lang``.

    Parameters
    ----------
    lang
        ``c``, ``python`` or ``julia``.
    ds
        The exported derivations, in order.

    Returns
    -------
    dict of str to str
        The build or project file and the README of the package.
    """
    makers = {"c": _c_files, "python": _python_files, "julia": _julia_files}
    if lang not in makers:
        raise ValueError(f"no package for language {lang!r}; choose from {', '.join(makers)}")
    return makers[lang](ds)
