"""The deep-network demonstration in ``grpodyn report``: predicted against observed, per model.

Reads the shipped ``empirical/data/deepnet/comparison.json`` (written by ``python -m
grpodyn.empirical.deepnet compare``) and ``predictions.json``; imports neither torch nor TRL.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

__all__ = ["DATA", "deepnet_checks"]

DATA = Path(__file__).resolve().parent.parent / "data" / "deepnet"


def _fmt(value: Any) -> str:
    if value is None:
        return "none"
    return f"{value:.3g}" if isinstance(value, float) else str(value)


def deepnet_checks(data: Path = DATA) -> list[dict[str, Any]]:
    """Rows for the report's claims table: claim, stated, computed, agrees, note.

    Thresholds (lr_max, refresh_max, staleness_max, oscillation momentum) one row each; the
    relaxation times one row per model and curvature (how many settings within 25 %).
    """
    path = data / "comparison.json"
    if not path.is_file():
        return []
    rows = json.loads(path.read_text())["rows"]
    predictions = json.loads((data / "predictions.json").read_text())
    commits = predictions.get("commit_by_model", {})

    def note_for(model: str) -> str:
        commit = commits.get(model, predictions.get("commit", "unknown"))
        return (f"deep-network demonstration (issue 16): measured before training, predicted "
                f"by code {commit[:10]} before the runs; docs/findings.md section 9")

    checks = []
    taus: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for row in rows:
        if row["quantity"].startswith("relaxation_time"):
            taus.setdefault((row["model"], row["quantity"]), []).append(row)
            continue
        setting = ", ".join(f"{k} {v}" for k, v in row["setting"].items())
        stated = _fmt(row["predicted"]) + (f" ({row['predicted_status']})"
                                           if row.get("predicted_status") else "")
        computed = _fmt(row["observed"]) + (f" ({row['observed_status']})"
                                            if row.get("observed_status") else "")
        if row["within_target"] is None:
            computed += "; target undetermined"
        checks.append({"claim": f"deep net {row['model']}: {row['quantity']} at {setting}",
                       "stated": f"predicted {stated}", "computed": f"observed {computed}",
                       "agrees": bool(row["within_target"]), "note": note_for(row["model"])})
    for (model, quantity), group in sorted(taus.items()):
        judged = [r for r in group if r["within_target"] is not None]
        hits = sum(bool(r["within_target"]) for r in judged)
        checks.append({"claim": f"deep net {model}: {quantity} within 25 % at >= 2 settings",
                       "stated": f"{len(group)} (lr, momentum) settings predicted",
                       "computed": f"{hits} of {len(judged)} comparable settings within 25 %",
                       "agrees": hits >= 2, "note": note_for(model)})
    return checks
