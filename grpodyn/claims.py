"""The claims of the reproduction, resolved and evaluated: registry -> report rows.

The theory layer registers each claim with the NAME of its check
(:mod:`grpodyn.theory.claims`); this module, which may import every layer, resolves the name to
the function of the numeric or empirical layer that computes it, runs it on the data of the
claim's source and summarises the rows: how many agree, per source, and each disagreement with
its reason.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Sequence
from typing import Any

from grpodyn.theory.claims import SOURCES, Check, Claim, claims, get_claim

__all__ = ["resolve", "evaluate", "summarise", "by_reason"]


def resolve(claim: Claim) -> Callable[[Claim, Any], list[Check]]:
    """Return the function named by ``claim.check`` (``"module:function"``).

    Raises
    ------
    LookupError
        When the module or the function does not exist.
    """
    module, _, function = claim.check.partition(":")
    try:
        return getattr(importlib.import_module(module), function)
    except (ImportError, AttributeError) as exc:
        raise LookupError(f"claim {claim.key}: its check {claim.check} does not exist "
                          f"({exc})") from exc


def evaluate(source: str, data: Any = None) -> list[Check]:
    """Check every claim of ``source`` on ``data`` (None for the theory's own claims).

    Parameters
    ----------
    source : str
        One of :data:`grpodyn.theory.claims.SOURCES`.
    data : object
        What the source's checks read: the bandit lab's results, the tiny runs' summary, the
        probe's summary, the scored test beds.

    Returns
    -------
    list of Check
        The rows, in registry order.
    """
    if source not in SOURCES:
        raise ValueError(f"unknown claim source {source!r}; known: {', '.join(SOURCES)}")
    return [row for claim in claims(source) for row in resolve(claim)(claim, data)]


def summarise(checks: Sequence[Check]) -> dict[str, Any]:
    """Count agreement per source and list each disagreement with its reason.

    Returns
    -------
    dict
        ``checks_agree`` and ``checks_total``: the rows that agree, of all rows;
        ``sources``: source -> ``{"agree", "total", "sections"}`` (THEORY.md sections);
        ``disagreements``: one dict per disagreeing row (claim, key, source, stated,
        computed, reason; the reason "" when none is recorded).
    """
    sources: dict[str, dict[str, Any]] = {}
    disagreements = []
    for row in checks:
        source = get_claim(row.key).source if row.key else "other"
        entry = sources.setdefault(source, {"agree": 0, "total": 0, "sections": []})
        entry["agree"] += row.agrees
        entry["total"] += 1
        if row.key:
            for section in get_claim(row.key).section.split(", "):
                if section not in entry["sections"]:
                    entry["sections"].append(section)
        if not row.agrees:
            disagreements.append({"claim": row.claim, "key": row.key, "source": source,
                                  "stated": row.stated, "computed": row.computed,
                                  "reason": row.reason})
    for entry in sources.values():
        entry["sections"].sort(key=lambda s: int(s) if s.isdigit() else 99)
    return {"checks_agree": sum(row.agrees for row in checks), "checks_total": len(checks),
            "sources": sources, "disagreements": disagreements}


def by_reason(disagreements: Sequence[dict[str, Any]]) -> list[tuple[str, list[dict[str, Any]]]]:
    """Group disagreements that share a claim and its reason, in order of first appearance.

    A claim that yields a row per setting (the deep network's thresholds) disagrees for one
    reason many times: the page and the terminal say the reason once, under its rows.

    Parameters
    ----------
    disagreements : sequence of dict
        :func:`summarise`'s ``disagreements``.

    Returns
    -------
    list of (str, list of dict)
        The reason ("" when none is recorded) and the rows it explains.
    """
    groups: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for d in disagreements:
        groups.setdefault((d["key"], d["reason"]), []).append(d)
    return [(reason, rows) for (_, reason), rows in groups.items()]
