"""The registry of claims: what the theory states, and how ``grpodyn report`` checks each.

A package of its own, outside the derivation modules: the source hash of the generated numerics
covers ``theory/*.py`` only, so a stated value or a reason can change without invalidating them.

A :class:`Claim` holds its docs/theory.md section, the statement, the value the theory states (or
the
experiment's target) states, the stated numbers the check compares against, the tolerance in
words, and the NAME of the check that computes it (``"module:function"``): this layer is plain
Python (no sympy, no numpy) and imports nothing of the numeric or empirical layers; the report
resolves each name (:func:`grpodyn.claims.resolve`). A claim known to disagree carries its
one-line ``reason`` (from the findings of its study), shown when the check finds the disagreement.

The ledger counts one claim per question. Each claim belongs to one of :data:`GROUPS` (by its
source, :data:`SOURCE_GROUPS`): where the mean-field reduction is exact, real runs of small
models, the open question on a real network. A question answered by several routes (the deep
network's relaxation time: seven of them) is one claim, judged on the route fixed before the
runs; its check returns the other routes' rows as study rows (``Check.study``), kept in the
study the claim links to (``Claim.study``) and never counted in the ledger.

The stated values live here and nowhere else: a check reads them from ``claim.values``. A claim
whose rows depend on data (a row per simulated momentum, per shipped run, per test bed) has a
``statement`` template with ``{subject}``, filled by its check.
"""

from __future__ import annotations

from . import registry  # noqa: F401  (importing it registers the claims)
from .types import GROUPS, SOURCE_GROUPS, SOURCES, Check, Claim, ClaimError, claim, registered

__all__ = ["Claim", "Check", "ClaimError", "SOURCES", "GROUPS", "SOURCE_GROUPS", "claim",
           "claims", "get_claim"]


def claims(source: str | None = None) -> tuple[Claim, ...]:
    """Return the registered claims in the order of docs/theory.md (of ``source`` only if given)."""
    return tuple(c for c in registered().values() if source is None or c.source == source)


def get_claim(key: str) -> Claim:
    """Return the claim registered under ``key``."""
    found = registered()
    if key not in found:
        raise KeyError(f"no claim named {key!r}")
    return found[key]
