"""The theory registry as numpy functions.

``compiled(name)`` returns the vectorised numpy function of a derivation, arguments in the
derivation's order. It comes from the generated module (no sympy import) when that module was
generated from the current theory sources, and is compiled lazily from the registry otherwise,
with a warning, so a changed theory is never silently ignored.
"""

from __future__ import annotations

import difflib
import math
import warnings
from collections.abc import Callable
from functools import cache
from typing import Any

import numpy

from grpodyn.ground import InputError
from grpodyn.theory.sourcehash import theory_source_hash

from . import _generated

__all__ = ["compiled", "signature", "symbol_info", "registered_names", "generated_is_fresh",
           "compile_derivation", "UnknownDerivation"]


class UnknownDerivation(InputError, KeyError):
    """No derivation has the name asked for; the message names the close ones and the known ones.

    An :class:`~grpodyn.ground.InputError` (the API's error for a bad input) and a ``KeyError``
    (a failed look-up by name), so that callers catching either one see it.
    """

    def __str__(self) -> str:
        """Return the message as given (a ``KeyError`` would quote it)."""
        return str(self.args[0]) if self.args else ""


@cache
def generated_is_fresh() -> bool:
    """Tell whether ``_generated.py`` was generated from the current theory sources."""
    return _generated.THEORY_HASH == theory_source_hash()


def compile_derivation(derivation: Any) -> Callable[..., Any]:
    """Compile one :class:`~grpodyn.theory.Derivation` in memory (imports sympy)."""
    from .codegen import FINITE_SUM_SOURCE, render_function

    namespace: dict[str, Any] = {"numpy": numpy, "math": math}
    source = FINITE_SUM_SOURCE + "\n\n\n" + render_function(derivation)
    exec(compile(source, f"<grpodyn compiled {derivation.name}>", "exec"), namespace)  # noqa: S102
    return namespace[derivation.name]


@cache
def compiled(name: str) -> Callable[..., Any]:
    """Return the numpy function of the derivation ``name``.

    Parameters
    ----------
    name : str
        The derivation's name (:func:`registered_names`).

    Returns
    -------
    callable
        The vectorised numpy function, arguments in the derivation's order (:func:`signature`).

    Raises
    ------
    UnknownDerivation
        If no derivation has that name (an ``InputError`` and a ``KeyError``); the message
        suggests a close name where one exists and lists the known ones.
    """
    known = registered_names()
    if name not in known:
        close = difflib.get_close_matches(str(name), known, n=1)
        hint = f" (did you mean {close[0]!r}?)" if close else ""
        raise UnknownDerivation(f"no compiled function {name!r}{hint}; known: "
                                f"{', '.join(sorted(known))}")
    if generated_is_fresh():
        return getattr(_generated, name)
    warnings.warn("grpodyn: the theory changed since numerics/_generated.py was generated; "
                  "compiling with sympy (run python -m grpodyn.numerics.generate)", stacklevel=2)
    from grpodyn.theory import get

    return compile_derivation(get(name))


def signature(name: str) -> tuple[str, ...]:
    """Argument names of ``compiled(name)``, in order."""
    if generated_is_fresh():
        return _generated.SIGNATURES[name]
    from grpodyn.theory import get

    return get(name).arg_names


def symbol_info(name: str) -> tuple[str, str, tuple[str, ...]]:
    """Return (unit, LaTeX name, assumptions that hold) of the argument symbol ``name``.

    Read from the generated module's ``SYMBOLS`` table (no sympy), or from the theory's symbol
    table when the generated module is stale.

    Raises
    ------
    KeyError
        If no derivation has an argument of that name.
    """
    if generated_is_fresh():
        if name not in _generated.SYMBOLS:
            raise KeyError(f"no derivation has an argument named {name!r}")
        return _generated.SYMBOLS[name]
    from grpodyn.theory.symbols import info

    row = info(name)
    return row.unit, row.latex, tuple(sorted(k for k, v in row.assumptions.items() if v))


def registered_names() -> frozenset[str]:
    """Names of every derivation ``compiled`` can return."""
    if generated_is_fresh():
        return frozenset(_generated.SIGNATURES)
    from grpodyn.theory import names

    return frozenset(names())
