"""The deep-network demonstration in ``grpodyn report``: predicted against observed, per model.

Reads the shipped ``empirical/data/deepnet/comparison.json`` (written by the deep-network
study's ``python -m deepnet_study compare``, ``studies/deepnet``) and ``predictions.json``;
imports neither torch nor TRL.
The claims these checks evaluate are registered in :mod:`grpodyn.theory.claims.registry`
(source ``"deep network"``), one per question: its verdict stands on the route fixed before the
runs, the other routes to it are returned as study rows. Each prediction's target (within 20 %
or one grid step for a threshold, 25 % for a relaxation time) was fixed before the runs and is
applied by the study's ``studies/deepnet/deepnet_study/sweeps.py`` when the comparison is made.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from grpodyn.theory.claims import Check, Claim

__all__ = ["DATA", "DeepnetComparison", "comparison_data", "question_claim", "relaxation_claim"]

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
        return (f"deep-network demonstration: measured before training, {source}"
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
    if isinstance(value, bool):
        return str(value)
    return f"{value:.3g}" if isinstance(value, float) else str(value)


def _short(row: dict[str, Any], which: str) -> str:
    """Return a row's predicted or observed value, or its status when it has none."""
    value = row[which]
    return _fmt(value) if value is not None else str(row.get(f"{which}_status") or "none")


_ROUTE_NAMES = {"two_mode": "two-mode map", "relaxation": "drift across r",
                "relaxation_slow": "slow drift", "relaxation_burnin": "drift after a burn-in",
                "relaxation_linear": "linear drift after a burn-in",
                "relaxation_long": "linear drift, 600-step runs",
                "relaxation_precise": "linear drift, 600-step runs, 96 repeats",
                "tracked": "delayed relay"}


def _question_rows(claim: Claim, data: DeepnetComparison
                   ) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Split the rows of the claim's question into its route's rows and the study's rows.

    A row belongs to the question when its quantity is one of ``values["quantities"]`` and its
    setting holds ``values["setting"]``; to the route when, besides, its quantity is one of
    ``values["route"]``, its ``runs`` is ``values["runs"]`` (None: the first sweeps) and it is
    neither a postdiction nor judged by a rule made after the runs.
    """
    v = claim.values
    route, study = [], []
    for row in data.rows:
        setting = row["setting"]
        if row["quantity"] not in v["quantities"] or any(
                setting.get(k) != value for k, value in v.get("setting", {}).items()):
            continue
        on_route = (row["quantity"] in v["route"] and setting.get("runs") == v.get("runs")
                    and not row.get("postdiction") and not row.get("post_hoc"))
        (route if on_route else study).append(row)
    return route, study


def _threshold_row(claim: Claim, data: DeepnetComparison, row: dict[str, Any]) -> Check:
    """Return the study row of one predicted threshold against the sweep."""
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
    if row["within_target"] and (row.get("postdiction") or row.get("post_hoc")):
        computed += "; within target, not counted as met"
    return claim.row(f"observed {computed}", bool(row["within_target"])
                     and not row.get("postdiction") and not row.get("post_hoc"),
                     subject=f": {row['model']} {row['quantity']} at {setting}",
                     stated=f"predicted {stated}", note=data.note(row["model"], row), study=True)


def question_claim(claim: Claim, data: DeepnetComparison) -> list[Check]:
    """Judge one threshold question on its pre-registered route; later routes as study rows.

    Parameters
    ----------
    claim : Claim
        The registered question: ``quantities`` and ``setting`` select its rows, ``route`` and
        ``runs`` the route the verdict stands on (fixed before the runs).
    data : DeepnetComparison
        The shipped comparison.

    Returns
    -------
    list of Check
        One ledger row (met when every size's prediction meets its target: within 20 % or one
        grid step; an undetermined target counts as not met), then a study row per other
        prediction of the question. Nothing when the comparison holds no row of it.
    """
    route, study = _question_rows(claim, data)
    if not route and not study:
        return []
    verdicts = [f"{r['model']} {_short(r, 'predicted')} vs {_short(r, 'observed')} "
                f"{'met' if r['within_target'] else 'not met'}" for r in route]
    if len(route) > 3:  # a row per setting: count them per model
        models = dict.fromkeys(r["model"] for r in route)
        verdicts = [f"{m}: {sum(bool(r['within_target']) for r in route if r['model'] == m)} "
                    f"of {sum(r['model'] == m for r in route)} met" for m in models]
    later = [_threshold_row(claim, data, r) for r in study]
    computed = "; ".join(verdicts) or "the route was not run"
    if later:
        computed += f" (later routes: {sum(c.agrees for c in later)} of {len(later)} met)"
    head = claim.row(computed, bool(route) and all(r["within_target"] for r in route),
                     note=data.note(route[0]["model"], route[0]) if route else "")
    return [head, *later]


def relaxation_claim(claim: Claim, data: DeepnetComparison) -> list[Check]:
    """Judge the relaxation-time question on its pre-registered route; later routes as study.

    Parameters
    ----------
    claim : Claim
        The registered question (``settings``: how many settings of one model and curvature
        must be within 25 %; ``quantities``, ``route`` and ``runs`` as for
        :func:`question_claim`).
    data : DeepnetComparison
        The shipped comparison.

    Returns
    -------
    list of Check
        One ledger row (met when one model and curvature of the route reach ``settings``),
        then a study row per later route, model and quantity (its settings within target).
    """
    route, study = _question_rows(claim, data)
    groups: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for row in study:
        if not row.get("postdiction"):
            runs = row["setting"].get("runs")
            name = row["quantity"] + (f" ({_ROUTE_NAMES.get(runs, runs)})" if runs else "")
            groups.setdefault((row["model"], name), []).append(row)
    if not route and not groups:
        return []
    later = []
    for (model, name), rows in sorted(groups.items()):
        judged = [r for r in rows if r["within_target"] is not None]
        hits = sum(bool(r["within_target"]) for r in judged)
        later.append(claim.row(f"{hits} of {len(judged)} comparable settings within target "
                               f"({len(rows)} predicted)", hits >= claim.values["settings"],
                               subject=f": {model} {name}", note=data.note(model, rows[0]),
                               study=True))
    parts, best = [], 0
    for quantity in claim.values["route"]:
        rows = [r for r in route if r["quantity"] == quantity]
        judged = [r for r in rows if r["within_target"] is not None]
        for model in {r["model"] for r in judged}:
            best = max(best, sum(bool(r["within_target"]) for r in judged if r["model"] == model))
        parts.append(f"{quantity}: {sum(bool(r['within_target']) for r in judged)} of "
                     f"{len(judged)} judged within target ({len(rows)} predicted)" if judged
                     else f"{quantity}: undetermined at all {len(rows)} settings")
    settings = [r for rows in groups.values() for r in rows
                if r["quantity"] == claim.values["route"][0] and r["within_target"] is not None]
    computed = "; ".join(parts) or "the route was not run"
    if settings:
        computed += (f" (later routes: {sum(bool(r['within_target']) for r in settings)} of "
                     f"{len(settings)} judged settings within target)")
    return [claim.row(computed, best >= claim.values["settings"]), *later]
