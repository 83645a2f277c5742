"""The Jury stability test for real polynomials, written out symbolically.

All roots of ``P(z) = a_n z^n + ... + a_0`` (``a_n > 0``) lie strictly inside the unit circle if and
only if every margin returned by :func:`jury_margins` is positive (E. I. Jury, *Theory and
Application of the z-Transform Method*, 1964, table 3.3). sympy 1.14 has no such helper, so it is
derived here from the Jury table recursion.
"""

from __future__ import annotations

from collections.abc import Sequence

import sympy as sp

__all__ = ["jury_margins", "jury_condition"]


def jury_margins(coeffs: Sequence[sp.Expr]) -> list[sp.Expr]:
    """Expressions that are all positive exactly when the polynomial is Schur stable.

    Parameters
    ----------
    coeffs
        Coefficients from the highest power down, ``[a_n, ..., a_0]``, with ``a_n > 0``.

    Returns
    -------
    list of sympy expressions
        ``P(1)``, ``(-1)^n P(-1)``, ``a_n - |a_0|``, then ``|b_0| - |b_{n-1}|`` for every further
        row of the Jury table, down to the row of three elements.
    """
    a = [sp.sympify(c, strict=True) for c in coeffs]  # numbers and expressions, never strings
    n = len(a) - 1
    if n < 1:
        raise ValueError("jury_margins: the polynomial must have degree >= 1")
    low_first = a[::-1]  # a_0, a_1, ..., a_n
    p_at_one = sum(low_first)
    p_at_minus_one = sum(c * (-1) ** i for i, c in enumerate(low_first))
    margins = [sp.expand(p_at_one), sp.expand((-1) ** n * p_at_minus_one),
               a[0] - sp.Abs(low_first[0])]
    row = low_first
    while len(row) > 3:
        last = len(row) - 1
        row = [sp.expand(row[0] * row[j] - row[last] * row[last - j]) for j in range(last)]
        margins.append(sp.Abs(row[0]) - sp.Abs(row[-1]))
    return margins


def jury_condition(coeffs: Sequence[sp.Expr]) -> sp.Boolean:
    """Return the conjunction ``margin > 0`` over :func:`jury_margins`."""
    return sp.And(*[sp.StrictGreaterThan(m, 0) for m in jury_margins(coeffs)])
