"""The claims of the reproduction, resolved and evaluated: registry -> report rows.

The theory layer registers each claim with the NAME of its check
(:mod:`grpodyn.theory.claims`); this module, which may import every layer, resolves the name to
the function of the numeric or empirical layer that computes it, runs it on the data of the
claim's source and summarises the rows: how many agree, per source and per group of the ledger
(:data:`grpodyn.theory.claims.GROUPS`), each disagreement with its reason. The ledger counts one
claim per question: a claim holds when every one of its ledger rows agrees; study rows (the
later routes to a question, ``Check.study``) are kept apart and never counted.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Sequence
from typing import Any

from grpodyn.theory.claims import GROUPS, SOURCES, Check, Claim, claims, get_claim

__all__ = ["resolve", "evaluate", "summarise", "by_reason", "group_headline"]

#: How many claims a headline names as holding before it says "the rest" instead.
_NAMED = 4


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
    """Count agreement per source and per group and list each disagreement with its reason.

    Study rows (``Check.study``) are left out: they belong to the study, not the ledger.

    Returns
    -------
    dict
        ``checks_agree`` and ``checks_total``: the ledger rows that agree, of all;
        ``claims_agree`` and ``claims_total``: the claims (one per question) that hold;
        ``sources``: source -> ``{"agree", "total", "sections", "group"}``;
        ``groups``: group -> ``{"agree", "total", "claims_agree", "claims_total", "sources",
        "holds", "fails", "headline"}`` (``holds`` and ``fails``: the questions, with the
        study link of each failing one in ``studies``);
        ``disagreements``: one dict per disagreeing row (claim, key, source, group, question,
        stated, computed, reason; the reason "" when none is recorded).
    """
    ledger = [row for row in checks if not row.study]
    sources: dict[str, dict[str, Any]] = {}
    verdicts: dict[str, list[bool]] = {}
    disagreements = []
    for row in ledger:
        claim = get_claim(row.key) if row.key else None
        source = claim.source if claim else "other"
        group = claim.group if claim else "other"
        entry = sources.setdefault(source, {"agree": 0, "total": 0, "sections": [],
                                            "group": group})
        entry["agree"] += row.agrees
        entry["total"] += 1
        if claim is not None:
            verdicts.setdefault(claim.key, []).append(row.agrees)
            for section in claim.section.split(", "):
                if section not in entry["sections"]:
                    entry["sections"].append(section)
        if not row.agrees:
            disagreements.append({"claim": row.claim, "key": row.key, "source": source,
                                  "group": group, "question": claim.question if claim else "",
                                  "stated": row.stated, "computed": row.computed,
                                  "reason": row.reason})
    for entry in sources.values():
        entry["sections"].sort(key=lambda s: int(s) if s.isdigit() else 99)
    groups = _groups(sources, verdicts)
    return {"checks_agree": sum(row.agrees for row in ledger), "checks_total": len(ledger),
            "claims_agree": sum(g["claims_agree"] for g in groups.values()),
            "claims_total": sum(g["claims_total"] for g in groups.values()),
            "sources": sources, "groups": groups, "disagreements": disagreements}


def _groups(sources: dict[str, dict[str, Any]], verdicts: dict[str, list[bool]]
            ) -> dict[str, dict[str, Any]]:
    """Sum the sources into the ledger's groups, the claims into holds and fails."""
    groups: dict[str, dict[str, Any]] = {}
    for name in GROUPS:
        members = [s for s, entry in sources.items() if entry["group"] == name]
        if not members:
            continue
        keyed = [get_claim(key) for key in verdicts if get_claim(key).group == name]
        holds = [c.question for c in keyed if all(verdicts[c.key])]
        fails = [c for c in keyed if not all(verdicts[c.key])]
        entry = {"agree": sum(sources[s]["agree"] for s in members),
                 "total": sum(sources[s]["total"] for s in members), "sources": members,
                 "claims_agree": len(holds), "claims_total": len(keyed), "holds": holds,
                 "fails": [c.question + (f" ({sum(verdicts[c.key])} of {len(verdicts[c.key])})"
                                         if len(verdicts[c.key]) > 1 else "") for c in fails],
                 "studies": sorted({c.study for c in fails if c.study})}
        entry["headline"] = group_headline(name, entry)
        groups[name] = entry
    return groups


def group_headline(name: str, group: dict[str, Any]) -> str:
    """Say in one line what holds in a group of the ledger and what does not.

    Parameters
    ----------
    name : str
        The group (one of :data:`grpodyn.theory.claims.GROUPS`).
    group : dict
        Its entry of :func:`summarise`'s ``groups`` (without ``headline``).

    Returns
    -------
    str
        ``"<name>: a of n claims hold (r of m checks); holds: ...; not: ..."``; the holding
        claims are named when there are at most four, else counted after the failing ones.
    """
    unit = "questions predicted" if name == GROUPS[2] else "claims hold"
    line = f"{name}: {group['claims_agree']} of {group['claims_total']} {unit}"
    if group["total"] != group["claims_total"]:
        line += f" ({group['agree']} of {group['total']} checks)"
    if not group["fails"]:
        return line + "; every one holds"
    if group["holds"] and len(group["holds"]) <= _NAMED:
        line += f"; holds: {', '.join(group['holds'])}"
    line += f"; not: {', '.join(group['fails'])}"
    if len(group["holds"]) > _NAMED:
        line += f"; the other {len(group['holds'])} hold"
    return line


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
