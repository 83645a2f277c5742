"""The deep-network demonstration in ``grpodyn report``: predicted against observed, per model.

Reads the shipped ``empirical/data/deepnet/comparison.json`` (written by the deep-network
study's ``python -m deepnet_study compare``, ``studies/deepnet``) and ``predictions.json``;
imports neither torch nor TRL.
The claims these checks evaluate are registered in :mod:`grpodyn.theory.claims.registry`
(source ``"deep network"``); each prediction's target (within 20 % or one grid step for a
threshold, 25 % for a relaxation time) was fixed before the runs and is applied by
the study's ``studies/deepnet/deepnet_study/sweeps.py`` when the comparison is made.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from grpodyn.theory.claims import Check, Claim

__all__ = ["DATA", "DeepnetComparison", "comparison_data", "threshold_claim", "relaxation_claim"]

DATA = Path(__file__).resolve().parent.parent / "data" / "deepnet"


@dataclass(frozen=True)
class DeepnetComparison:
    """The shipped comparison rows and the commit that made each model's predictions."""

    rows: list[dict[str, Any]]
    commits: dict[str, str]
    two_mode_commits: dict[str, str] | None = None

    def note(self, model: str, row: dict[str, Any] | None = None) -> str:
        """Return the note of a row: where and when its prediction was made."""
        two_mode = row is not None and row["setting"].get("runs") == "two_mode"
        commits = (self.two_mode_commits or {}) if two_mode else self.commits
        commit = (row or {}).get("commit") or commits.get(model, "unknown")
        source = (row or {}).get("source") or ("two-mode map, " if two_mode else "")
        when = ("compared with runs made BEFORE it (a postdiction, not a test)"
                if row is not None and row.get("postdiction") else "before the runs")
        return (f"deep-network demonstration (issue 16): measured before training, {source}"
                f"predicted by code {commit[:10]} {when}; studies/deepnet/findings.md section 10")


def comparison_data(data: Path = DATA) -> DeepnetComparison | None:
    """Read the shipped comparison (None when it is not shipped).

    Parameters
    ----------
    data : Path
        Folder holding ``comparison.json`` and ``predictions.json``.

    Returns
    -------
    DeepnetComparison or None
        The rows and the commit of each model's predictions.
    """
    path = data / "comparison.json"
    if not path.is_file():
        return None
    predictions = json.loads((data / "predictions.json").read_text())
    rows = json.loads(path.read_text())["rows"]
    default = predictions.get("commit", "unknown")
    commits = {row["model"]: predictions.get("commit_by_model", {}).get(row["model"], default)
               for row in rows}
    two_mode = data / "predictions_two_mode.json"
    two_mode_commits = None
    if two_mode.is_file():
        new = json.loads(two_mode.read_text())
        two_mode_commits = {model: new.get("commit_by_model", {}).get(model, new["commit"])
                            for model in {i["model"] for i in new["items"]}}
    return DeepnetComparison(rows=rows, commits=commits, two_mode_commits=two_mode_commits)


def _fmt(value: Any) -> str:
    if value is None:
        return "none"
    return f"{value:.3g}" if isinstance(value, float) else str(value)


def threshold_claim(claim: Claim, data: DeepnetComparison) -> list[Check]:
    """Check each predicted stability threshold against the sweep (one row per prediction).

    Parameters
    ----------
    claim : Claim
        The registered claim (``quantities``: the threshold quantities it covers).
    data : DeepnetComparison
        The shipped comparison.

    Returns
    -------
    list of Check
        A row per (model, quantity, setting); undetermined targets count as not met.
    """
    rows = []
    for row in data.rows:
        if row["quantity"] not in claim.values["quantities"]:
            continue
        setting = ", ".join(f"{k} {v}" for k, v in row["setting"].items())
        stated = _fmt(row["predicted"]) + (f" ({row['predicted_status']})"
                                           if row.get("predicted_status") else "")
        computed = _fmt(row["observed"]) + (f" ({row['observed_status']})"
                                            if row.get("observed_status") else "")
        if row["within_target"] is None:
            computed += "; target undetermined"
        if row.get("postdiction"):
            computed += "; postdiction (runs made before the prediction)"
        if row.get("post_hoc"):
            computed += "; by a rule defined after the runs (post hoc, not a test)"
        rows.append(claim.row(f"observed {computed}",
                              bool(row["within_target"]) and not row.get("postdiction")
                              and not row.get("post_hoc"),
                              subject=f"{row['model']}: {row['quantity']} at {setting}",
                              stated=f"predicted {stated}", note=data.note(row["model"], row)))
    return rows


def relaxation_claim(claim: Claim, data: DeepnetComparison) -> list[Check]:
    """Count the (lr, momentum) settings whose relaxation time was predicted within target.

    Parameters
    ----------
    claim : Claim
        The registered claim (``settings``: how many settings must be within target).
    data : DeepnetComparison
        The shipped comparison.

    Returns
    -------
    list of Check
        A row per model and curvature estimate.
    """
    groups: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for row in data.rows:
        if row["quantity"].startswith("relaxation_time") and not row.get("postdiction"):
            source = {"two_mode": " (two-mode)", "relaxation": " (drift across r)",
                      "relaxation_slow": " (slow drift)",
                      "relaxation_burnin": " (drift after a burn-in)",
                      "relaxation_linear": " (linear drift after a burn-in)",
                      "relaxation_long": " (linear drift, 600-step runs)",
                      "relaxation_precise": " (linear drift, 600-step runs, 96 repeats)"}.get(
                          row["setting"].get("runs"), "")
            groups.setdefault((row["model"], row["quantity"] + source), []).append(row)
    rows = []
    for (model, quantity), group in sorted(groups.items()):
        judged = [r for r in group if r["within_target"] is not None]
        hits = sum(bool(r["within_target"]) for r in judged)
        rows.append(claim.row(f"{hits} of {len(judged)} comparable settings within target "
                              f"({len(group)} predicted)", hits >= claim.values["settings"],
                              subject=f"{model}: {quantity}", note=data.note(model, group[0])))
    return rows
