"""The canonical record of one derived result.

Every method of the theory layer ends in a :class:`Derivation`: a name (the name of the compiled
function, of the exported C symbol ``grpodyn_<name>`` and of the LaTeX label), the expression, an
explicit ordered argument tuple, a one-line summary, the docs/theory.md section, and the steps that
produced it. Creating one checks that every free symbol of the expression is an argument and that
every argument is declared in the symbol table, so a derivation cannot silently depend on an
undeclared quantity.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import sympy as sp

from .cache import canonical
from .symbols import TABLE, latex_names

__all__ = ["Step", "Derivation", "DerivationError", "to_latex", "whole_number", "whole_argument",
           "domain_conditions"]


class DerivationError(ValueError):
    """A derivation is malformed: undeclared or missing symbols, a bad name."""


def to_latex(expr: sp.Basic) -> str:
    """LaTeX of ``expr`` with the symbol table's LaTeX names."""
    return sp.latex(expr, symbol_names=latex_names())


def whole_number(symbol: sp.Symbol) -> sp.Basic:
    """Return the domain condition that ``symbol`` is a whole number: x - floor(x) = 0.

    A symbol declared integer already satisfies it, so it is written unevaluated: the compiled and
    exported functions take any double, and refuse a count, a group size or a lag that is not
    whole (``binomial(2.5, 1)`` would be truncated in one language and interpolated in another).
    Infinity and NaN fail it (inf - inf is NaN).

    Parameters
    ----------
    symbol
        A declared argument (``sym.G``, ``sym.h`` ...).

    Returns
    -------
    sympy.Eq
        The unevaluated condition, for a :class:`Derivation`'s ``domain``.
    """
    return sp.Eq(symbol - sp.floor(symbol, evaluate=False), 0, evaluate=False)


def whole_argument(condition: sp.Basic) -> sp.Symbol | None:
    """Return the symbol that ``condition`` requires to be whole, or None.

    Parameters
    ----------
    condition
        One condition of a domain.

    Returns
    -------
    sympy.Symbol or None
        x where ``condition`` is :func:`whole_number` of x, else None.
    """
    if isinstance(condition, sp.Eq) and condition.rhs == 0:
        floors = condition.lhs.atoms(sp.floor)
        if len(floors) == 1:
            (symbol,) = next(iter(floors)).args
            if condition.lhs == symbol - sp.floor(symbol, evaluate=False):
                return symbol
    return None


def domain_conditions(domain: sp.Basic) -> tuple[list[sp.Basic], list[sp.Symbol]]:
    """Split a domain into its conditions and the symbols it requires to be whole.

    Parameters
    ----------
    domain
        A derivation's domain: one condition or an ``And`` of several.

    Returns
    -------
    tuple of (list, list)
        The conditions that are not :func:`whole_number`, in order, and the symbols of those
        that are.
    """
    conditions = domain.args if isinstance(domain, sp.And) else (domain,)
    whole = [whole_argument(c) for c in conditions]
    return ([c for c, w in zip(conditions, whole, strict=True) if w is None],
            [w for w in whole if w is not None])


@dataclass(frozen=True)
class Step:
    """One step of a derivation: what was done, and the expression it produced."""

    description: str
    expr: sp.Basic


@dataclass(frozen=True)
class Derivation:
    """A derived result of the theory.

    Parameters
    ----------
    name
        Identifier of the result, used verbatim by the compiled and exported functions.
    expr
        The result as a sympy expression (or a boolean of relations, for stability conditions).
    args
        Ordered argument symbols of the compiled function; never ``free_symbols`` order.
    summary
        One line saying what the result is.
    section
        The docs/theory.md section it derives.
    steps
        The intermediate results, in order, for the notebooks.
    domain
        Where the expression, evaluated in real arithmetic, is the result (a sympy condition on
        the arguments), or None when it is valid wherever the arguments are. The generated and
        exported functions refuse arguments outside it instead of returning NaN.
    numeric_form
        An expression equal to ``expr`` that loses fewer digits in double precision (``log1p``
        and ``expm1`` of small quantities, a root rationalised against cancellation), or None.
        The generated and exported functions evaluate it; the LaTeX and the docstrings show
        ``expr``. ``tests/test_numeric_forms.py`` holds the two equal.
    """

    name: str
    expr: sp.Basic
    args: tuple[sp.Symbol, ...]
    summary: str
    section: str
    steps: tuple[Step, ...] = field(default=(), compare=False)
    domain: sp.Basic | None = None
    numeric_form: sp.Basic | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "expr", canonical(self.expr))
        if self.numeric_form is not None:
            object.__setattr__(self, "numeric_form", canonical(self.numeric_form))
        object.__setattr__(self, "steps",
                           tuple(Step(s.description, canonical(s.expr)) for s in self.steps))
        if not self.name.isidentifier():
            raise DerivationError(f"derivation name {self.name!r} is not a valid identifier")
        names = [s.name for s in self.args]
        if len(set(names)) != len(names):
            raise DerivationError(f"{self.name}: repeated argument in {names}")
        for s in self.args:
            row = TABLE.get(s.name)
            if row is None or row.symbol != s:
                raise DerivationError(
                    f"{self.name}: argument {s!r} (assumptions {s.assumptions0}) is not the symbol "
                    "declared in grpodyn.theory.symbols"
                )
        missing = self.expr.free_symbols - set(self.args)
        if missing:
            raise DerivationError(
                f"{self.name}: free symbols {sorted(map(str, missing))} are not in args {names}"
            )
        if self.numeric_form is not None and self.numeric_form.free_symbols - set(self.args):
            raise DerivationError(f"{self.name}: the numeric form uses symbols that are not "
                                  "arguments")
        if self.domain is not None and self.domain.free_symbols - set(self.args):
            raise DerivationError(f"{self.name}: the domain uses symbols that are not arguments")
        if isinstance(self.domain, sp.logic.boolalg.BooleanAtom):
            raise DerivationError(f"{self.name}: the domain {self.domain} is vacuous under the "
                                  "symbols' assumptions")

    def __repr__(self) -> str:
        """One line: the name, the arguments, the section and the summary (not the steps)."""
        summary = self.summary if len(self.summary) <= 80 else self.summary[:77] + "..."
        return (f"Derivation({self.name}({', '.join(self.arg_names)}), section {self.section}: "
                f"{summary})")

    @property
    def arg_names(self) -> tuple[str, ...]:
        """Names of the arguments, in the calling order of the compiled function."""
        return tuple(s.name for s in self.args)

    @property
    def evaluated(self) -> sp.Basic:
        """The expression code evaluates: ``numeric_form`` where there is one, else ``expr``."""
        return self.expr if self.numeric_form is None else self.numeric_form

    def latex(self) -> str:
        r"""LaTeX of ``name = expr`` (the name's underscores escaped: ``\_`` in ``\mathrm``)."""
        name = self.name.replace("_", r"\_")
        return rf"\mathrm{{{name}}}\left({', '.join(to_latex(a) for a in self.args)}\right)" \
            rf" = {to_latex(self.expr)}"

    def domain_latex(self) -> str:
        r"""LaTeX of the domain, its conditions joined by commas ("" when there is none).

        A whole-number condition (:func:`whole_number`) reads ``G \in \mathbb{Z}`` (amssymb).
        """
        if self.domain is None:
            return ""
        others, whole = domain_conditions(self.domain)
        return r",\ ".join([*(to_latex(c) for c in others),
                             *(rf"{to_latex(x)} \in \mathbb{{Z}}" for x in whole)])

    def _repr_latex_(self) -> str:
        return f"$\\displaystyle {self.latex()}$"

    def subs(self, **values: object) -> sp.Basic:
        """Return the expression with named arguments substituted (``d.subs(beta=0)``)."""
        by_name = {s.name: s for s in self.args}
        unknown = set(values) - set(by_name)
        if unknown:
            raise DerivationError(f"{self.name}: no argument named {sorted(unknown)}")
        for key, value in values.items():
            if not isinstance(value, (int, float, sp.Basic)):
                raise DerivationError(f"{self.name}: value of {key} must be a number or a sympy "
                                      f"expression, got {type(value).__name__}")
        return self.expr.subs({by_name[k]: v for k, v in values.items()})
