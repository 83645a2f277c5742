"""The types of the claim registry: a claim, its report row, the sources and groups.

Plain Python (no sympy, no numpy), imported by the registry that registers the claims
(:mod:`grpodyn.theory.claims.registry`) and re-exported by :mod:`grpodyn.theory.claims`; the
registry and the package read the one table of registered claims kept here.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

__all__ = ["Claim", "Check", "ClaimError", "SOURCES", "GROUPS", "SOURCE_GROUPS", "claim",
           "registered"]

#: What a claim's check needs, in the order the report renders them: nothing but the
#: compiled theory, the bandit lab's simulations, the shipped tiny-model runs, the curvature
#: probe of those runs, the labelled test beds of the diagnosis, the deep-network
#: demonstration's shipped comparison.
SOURCES = ("theory", "bandit lab", "tiny LM runs", "curvature probe", "test beds",
           "deep network")

#: The ledger's groups, in the order the report shows them.
GROUPS = ("where the reduction is exact", "real runs of small models",
          "the open question on a real network")

#: The group of each source: the theory and the bandit lab, where the reduction is exact; the
#: tiny TRL runs, their curvature probe and the labelled test beds of the diagnosis; the deep
#: network.
SOURCE_GROUPS = {"theory": GROUPS[0], "bandit lab": GROUPS[0], "tiny LM runs": GROUPS[1],
                 "curvature probe": GROUPS[1], "test beds": GROUPS[1],
                 "deep network": GROUPS[2]}


class ClaimError(ValueError):
    """A claim is malformed or registered twice."""


@dataclass(frozen=True)
class Check:
    """One row of the report: a claim's statement against the value computed here.

    Attributes
    ----------
    claim : str
        The statement (the template filled with its subject).
    stated : str
        The stated value or target.
    computed : str
        The value computed by the toolkit, in words and digits.
    agrees : bool
        Whether the computed value meets the claim within its tolerance.
    note : str
        A note shown with the row.
    key : str
        The registry key of the claim ("" for a row from outside the registry).
    reason : str
        Why it disagrees (the claim's reason, from the findings of its study), when it does.
    study : bool
        A row of a later route to the claim's question: kept in its study, not in the ledger.
    """

    claim: str
    stated: str
    computed: str
    agrees: bool
    note: str = ""
    key: str = ""
    reason: str = ""
    study: bool = False


@dataclass(frozen=True)
class Claim:
    """A checkable claim of the theory (docs/theory.md) or of the lab built on it.

    Attributes
    ----------
    key : str
        Unique identifier.
    section : str
        The docs/theory.md section it belongs to.
    source : str
        What its check needs (one of :data:`SOURCES`).
    statement : str
        The claim, one line; ``{subject}`` is filled by the check for data-dependent rows.
    stated : str
        The stated value or target, as the report shows it.
    tolerance : str
        How agreement is judged, in words.
    check : str
        The computing check, ``"module:function"``, called as ``function(claim, data)``.
    values : mapping
        The stated numbers and the parameters the check computes at (read by the check).
    note : str
        Shown with every row of the claim.
    reason : str
        One line: why the claim disagrees where it is known to (from the findings of its study).
    question : str
        The question the claim answers, a few words (the ledger's name of the claim).
    study : str
        The document that holds the claim's study and its later routes ("" when none).
    group : str
        One of :data:`GROUPS`; by default the source's (:data:`SOURCE_GROUPS`).
    """

    key: str
    section: str
    source: str
    statement: str
    stated: str
    tolerance: str
    check: str
    values: Mapping[str, Any] = field(default_factory=dict)
    note: str = ""
    reason: str = ""
    question: str = ""
    study: str = ""
    group: str = ""

    def __post_init__(self) -> None:
        """Check the key, source, group, question and check's name; freeze the values."""
        if not self.key.isidentifier():
            raise ClaimError(f"claim key {self.key!r} is not an identifier")
        if self.source not in SOURCES:
            raise ClaimError(f"{self.key}: source {self.source!r} is not one of {SOURCES}")
        if not self.group:
            object.__setattr__(self, "group", SOURCE_GROUPS[self.source])
        if self.group not in GROUPS:
            raise ClaimError(f"{self.key}: group {self.group!r} is not one of {GROUPS}")
        if not self.question or len(self.question) > 60:
            raise ClaimError(f"{self.key}: the question must be given, in at most 60 "
                             "characters")
        module, _, function = self.check.partition(":")
        if not (module and function.isidentifier()):
            raise ClaimError(f"{self.key}: check {self.check!r} is not 'module:function'")
        object.__setattr__(self, "values", MappingProxyType(dict(self.values)))

    def row(self, computed: str, agrees: bool, *, subject: str = "",
            stated: str | None = None, reason_for: str | None = None,
            note: str | None = None, study: bool = False) -> Check:
        """Return the report row of this claim.

        Parameters
        ----------
        computed : str
            The value computed here.
        agrees : bool
            Whether it meets the claim within the tolerance.
        subject : str
            Fills ``{subject}`` in the statement.
        stated : str, optional
            The stated value when it depends on data (default: the claim's).
        reason_for : str, optional
            Pick the reason from ``values["reasons"]`` by this subject (default: ``reason``).
        note : str, optional
            The row's note when it depends on data (default: the claim's).
        study : bool
            A row of a later route, kept in the study (no reason: the ledger row holds it).

        Returns
        -------
        Check
            The row, with the claim's reason when a ledger row disagrees.
        """
        return Check(claim=self.statement.format(subject=subject),
                     stated=self.stated if stated is None else stated, computed=computed,
                     agrees=bool(agrees), note=self.note if note is None else note, key=self.key,
                     reason="" if agrees or study else self.values.get("reasons", {}).get(
                         reason_for, self.reason), study=study)


#: The registered claims, by key, in registration order (the order of docs/theory.md).
_CLAIMS: dict[str, Claim] = {}


def claim(**fields: Any) -> Claim:
    """Register a claim (the fields of :class:`Claim`) and return it.

    Returns
    -------
    Claim
        The registered claim.

    Raises
    ------
    ClaimError
        When its key is registered already or a field is malformed.
    """
    made = Claim(**fields)
    if made.key in _CLAIMS:
        raise ClaimError(f"claim {made.key!r} is registered twice")
    _CLAIMS[made.key] = made
    return made


def registered() -> Mapping[str, Claim]:
    """Return a read-only view of the registered claims, by key, in registration order."""
    return MappingProxyType(_CLAIMS)
