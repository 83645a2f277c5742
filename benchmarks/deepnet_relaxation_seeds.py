"""The burn-in route's committed predictions judged on nine seeds instead of three.

Run: ``python benchmarks/deepnet_relaxation_seeds.py`` (prints a markdown table).

Issue 16, findings 10g: at 3 seeds x 300 steps the observed relaxation time moved 1.4-8x between
240 and 300 steps, so a 25 % target may not be judgeable at that size. This script joins the
burn-in route's committed predictions (``predictions_relaxation_burnin.json``, made before any
run at those settings) with the same fixed observation rule (:func:`.relaxation.observe_relaxation`,
:func:`.relaxation.join_relaxation`) on three disjoint triples of seeds (1000-1002, the scored
runs; 1003-1005 and 1006-1008, made later with ``python -m grpodyn.empirical.deepnet
run-relaxation --route burnin --sizes 70k 330k --seeds 6 --seed-offset 1003 --out DIR``, shipped
as ``moreseeds_relaxruns_burnin_<size>.json``) and on all nine. Nothing is refitted: the
predictions and the rule are the committed ones; only the observation gets more seeds.
"""

from __future__ import annotations

import json
from pathlib import Path

from grpodyn.empirical.deepnet.relaxation import join_relaxation, observe_relaxation

DATA = Path(__file__).resolve().parents[1] / "empirical" / "data" / "deepnet"
GROUPS = {"1000-1002": range(1000, 1003), "1003-1005": range(1003, 1006),
          "1006-1008": range(1006, 1009), "all nine": range(1000, 1009)}


def main() -> None:
    """Print, per model and setting, the prediction and the observation of each seed group."""
    made = json.loads((DATA / "predictions_relaxation_burnin.json").read_text())
    print("| model | lr | quantity | predicted | " + " | ".join(
        f"observed, seeds {g} (within 25 %)" for g in GROUPS) + " |")
    print("|---|---|---|---|" + "---|" * len(GROUPS))
    for size in ("70k", "330k"):
        runs = []
        for name in (f"relaxruns_burnin_{size}.json", f"moreseeds_relaxruns_burnin_{size}.json"):
            runs += json.loads((DATA / name).read_text())["runs"]
        rows = {}
        for group, seeds in GROUPS.items():
            chosen = [r for r in runs if r["seed"] in seeds]
            observed = observe_relaxation(size, chosen, "relaxation_burnin")
            for row in join_relaxation(made, observed):
                key = (row["setting"]["lr"], row["quantity"])
                rows.setdefault(key, {"predicted": row["predicted"]})[group] = row
        for (lr, quantity), cells in sorted(rows.items()):
            shown = []
            for group in GROUPS:
                row = cells.get(group)
                if row is None:
                    shown.append("-")
                    continue
                value = row["observed"]
                text = (f"{value:.0f} ({row['observed_se']:.0f})" if value is not None
                        else str(row["observed_status"]))
                shown.append(f"{text} ({row['within_target']})")
            predicted = cells["predicted"]
            print(f"| {size} | {lr} | {quantity} | "
                  f"{'undetermined' if predicted is None else round(predicted)} | "
                  + " | ".join(shown) + " |")


if __name__ == "__main__":
    main()
