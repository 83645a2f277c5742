"""grpodyn.theory: the mean-field theory of GRPO, derived with sympy.

Every result is a :class:`Derivation` in one registry; :func:`registry` builds them all (cached on
disk) and :func:`get` returns one by name::

    >>> from grpodyn.theory import get
    >>> get("critical_stiffness").expr
    (beta - 1)**2/(2*(beta + 1))

Importing this package is cheap: sympy and the derivation modules load on first use of any name
below, so ``grpodyn.theory.sourcehash`` can be read by the numeric layer without sympy.
"""

from __future__ import annotations

import importlib
from typing import Any

#: Derivation modules, in the order of docs/theory.md; importing one registers its derivations.
DERIVATION_MODULES = ("mean_field", "oscillator", "overdamped", "regimes", "stability",
                      "fluctuations", "finite_group", "prompt_pool", "bandit", "optimizers",
                      "curves", "jacobians", "two_mode", "relay")

_EXPORTS = {
    "Derivation": "derivation", "DerivationError": "derivation", "Step": "derivation",
    "to_latex": "derivation", "build_info": "build", "get": "build", "names": "build",
    "registry": "build", "TABLE": "symbols", "declared": "symbols", "sym": "symbols",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    if name not in _EXPORTS:
        raise AttributeError(f"module 'grpodyn.theory' has no attribute {name!r}")
    for module in DERIVATION_MODULES:
        importlib.import_module(f"{__name__}.{module}")
    return getattr(importlib.import_module(f"{__name__}.{_EXPORTS[name]}"), name)


def __dir__() -> list[str]:
    """Return the public names (loaded on first use) and the module's own dunders."""
    return sorted({*_EXPORTS, "DERIVATION_MODULES",
                   *(n for n in globals() if n.startswith("__"))})
