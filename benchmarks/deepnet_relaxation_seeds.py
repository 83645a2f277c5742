"""A route's committed relaxation predictions judged on disjoint seed triples and on nine seeds.

Run: ``python benchmarks/deepnet_relaxation_seeds.py [--route burnin|linear|long]`` (prints a
markdown table).

At 3 seeds x 300 steps the observed relaxation time moved 1.4-8x between 240 and 300 steps,
so a 25 % target may not be judgeable at that size (``studies/deepnet/README.md``). This script
joins a route's committed predictions (``predictions_relaxation_<route>.json``, made before any
run at those settings) with the same fixed observation rule (the study's
``relaxation.observe_relaxation`` and ``relaxation.join_relaxation``) on three disjoint triples of
seeds and on all nine. Nothing is refitted: the predictions and the rule are the committed ones;
only the observation is split. Reads ``studies/deepnet/data``; needs the repository's
``studies/`` folder.

- ``burnin`` (default): seeds 1000-1002 (the scored runs) and 1003-1008 (made later with
  ``python -m deepnet_study run-relaxation --route burnin --sizes 70k 330k --seeds 6
  --seed-offset 1003 --out DIR`` from ``studies/deepnet``, kept as
  ``moreseeds_relaxruns_burnin_<size>.json``).
- ``linear``: the nine scored seeds 1100-1108 of ``relaxruns_linear_<size>.json``, split into
  triples after the score (how far one triple would have read the setting).
- ``long``: the nine scored seeds 1200-1208 of ``relaxruns_long_<size>.json`` (600 steps),
  split likewise after the score.
- ``precise``: the nine scored seeds 1300-1308 of ``relaxruns_precise_70k.json``, likewise.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

STUDY = Path(__file__).resolve().parents[1] / "studies" / "deepnet"
DATA = STUDY / "data"
if not DATA.is_dir():
    sys.exit(f"error: {DATA}: the deep-network study's data are absent (a repository checkout "
             "holds them)")
sys.path.insert(0, str(STUDY))

from deepnet_study.relaxation import join_relaxation, observe_relaxation  # noqa: E402

ROUTES = {"burnin": (1000, ("relaxruns_burnin_{}.json", "moreseeds_relaxruns_burnin_{}.json")),
          "linear": (1100, ("relaxruns_linear_{}.json",)),
          "long": (1200, ("relaxruns_long_{}.json",)),
          "precise": (1300, ("relaxruns_precise_{}.json",))}


def groups(first: int) -> dict[str, range]:
    """Three disjoint seed triples from ``first`` and all nine seeds, by label."""
    triples = {f"{s}-{s + 2}": range(s, s + 3) for s in range(first, first + 9, 3)}
    return {**triples, "all nine": range(first, first + 9)}


def main(argv: list[str] | None = None) -> None:
    """Print, per model and setting, the prediction and the observation of each seed group."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--route", choices=list(ROUTES), default="burnin")
    route = parser.parse_args(argv).route
    first, names = ROUTES[route]
    chosen_groups = groups(first)
    made = json.loads((DATA / f"predictions_relaxation_{route}.json").read_text())
    print("| model | lr | quantity | predicted | " + " | ".join(
        f"observed, seeds {g} (within 25 %)" for g in chosen_groups) + " |")
    print("|---|---|---|---|" + "---|" * len(chosen_groups))
    for size in ("70k", "330k"):
        runs = []
        for name in names:
            path = DATA / name.format(size)
            if path.is_file():  # the precise route ran at 70k only
                runs += json.loads(path.read_text())["runs"]
        rows = {}
        for group, seeds in chosen_groups.items():
            chosen = [r for r in runs if r["seed"] in seeds]
            observed = observe_relaxation(size, chosen, f"relaxation_{route}")
            for row in join_relaxation(made, observed):
                key = (row["setting"]["lr"], row["quantity"])
                rows.setdefault(key, {"predicted": row["predicted"]})[group] = row
        for (lr, quantity), cells in sorted(rows.items()):
            shown = []
            for group in chosen_groups:
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
