"""Score grpodyn's early warning on the third simulator's runs: lead before collapses, false alarms.

    python studies/diagnosis_third_sim/early_warning_score.py --seeds 400-429

The early warning (``diagnose(...).early_warning``, the Monitor's and the TRL callback's) was
designed on the project's other sources, not on this simulator. The runs of every seed are
simulated and labelled as in ``score.py``; the scoring is the diagnosis benchmark's
(``benchmarks/diagnosis.py``), so that the figures compare with its tables:

- a run *collapses* when its label is dynamical instability and its exact expected optimised
  reward ends (mean of the last quarter) below half of its best: on each prefix up to the step
  where the logged reward lost half of its drop (``half_loss_index``), the warning of the
  prefix is looked for; it "fires before" when one fired within the 10 steps before that step
  (its lead time: how many steps before);
- on every run whose label is not dynamical instability, the share of prefixes (up to 150 a
  run) whose early warning is set: false warnings;
- beside both, the benchmark's threshold rule (the 3-step mean 25% of its range below its
  running peak).

Writes ``results/early_warning_seeds_<seeds>.md`` and prints it.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from multiprocessing import Pool
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path[:0] = [str(HERE), str(ROOT / "benchmarks")]

import sim  # noqa: E402


def score_seed(seed: int) -> list[dict]:
    """Simulate and label the six runs of ``seed``; score the warning on each."""
    from diagnosis import false_alarms, lead_times

    from grpodyn.empirical.logs.loaders import load_run

    out = []
    with tempfile.TemporaryDirectory(prefix=f"third_sim_ew_{seed}_") as tmp:
        for name, family, variant, keyset, _, rows, args, state in sim.runs_of_seed(seed):
            label = sim.label_of(state)[0]
            run = load_run(sim.write_run(Path(tmp) / name, rows, args, keyset))
            exact = state["R_opt"]
            collapsed = exact[exact.size - exact.size // 4:].mean() < 0.5 * exact.max()
            record = {"name": name, "family": family, "variant": variant, "keyset": keyset,
                      "label": label}
            if label == "dynamical_instability" and collapsed:
                record["leads"] = lead_times(run)
            elif label != "dynamical_instability":
                record["alarms"] = false_alarms([run])
            out.append(record)
    return out


def render(records: list[dict], seeds: str, wall: float) -> str:
    """Return the report: one row per collapse, the false warnings by label."""
    collapses = [r for r in records if "leads" in r]
    lines = [f"# Third simulator: the early warning scored on seeds {seeds}", "",
             f"`python studies/diagnosis_third_sim/early_warning_score.py --seeds {seeds}` "
             f"({wall:.0f} s). Runs that collapse (label dynamical instability, the exact "
             "optimised reward ending below half its best):", "",
             "| run | key set | peak | half lost at | warning fires in the 10 steps before "
             "(lead) | first warning, count | rule fires before (lead) |",
             "|---|---|---|---|---|---|---|"]
    for r in collapses:
        v = r["leads"]
        m, q = v["model"], v["rule"]
        lines.append(f"| {r['name']} ({r['variant']}) | {r['keyset']} | {v['peak_step']:g} | "
                     f"{v['half_loss_step']:g} | {'yes' if m['fires_before'] else 'no'} "
                     f"({m['lead']}) | {m['first']}, {m['count']} | "
                     f"{'yes' if q['fires_before'] else 'no'} ({q['lead']}) |")
    fired = sum(r["leads"]["model"]["fires_before"] for r in collapses)
    rule = sum(r["leads"]["rule"]["fires_before"] for r in collapses)
    lines += ["", f"Fires before half the fall: {fired} of {len(collapses)} (threshold rule "
              f"{rule}).", "", "| label of the runs that do not collapse | runs | prefixes | "
              "false warnings | threshold rule |", "|---|---|---|---|---|"]
    quiet = [r for r in records if "alarms" in r]
    for label in [*sorted({r["label"] for r in quiet}), "all"]:
        group = [r for r in quiet if label in ("all", r["label"])]
        n = sum(r["alarms"]["prefixes"] for r in group)
        model = sum(r["alarms"]["model"] * r["alarms"]["prefixes"] for r in group)
        rules = sum(r["alarms"]["rule"] * r["alarms"]["prefixes"] for r in group)
        lines.append(f"| {label} | {len(group)} | {n} | {model / n:.1%} | {rules / n:.1%} |")
    skipped = [r for r in records if "leads" not in r and "alarms" not in r]
    lines += ["", f"Left out: {len(skipped)} runs labelled dynamical instability whose exact "
              "optimised reward did not end below half its best (no collapse to warn of, and "
              "not quiet)."]
    return "\n".join(lines) + "\n"


def main() -> None:
    """Score the given seeds with two workers; print and write the report."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seeds", default="400-429")
    parser.add_argument("--workers", type=int, default=2)
    args = parser.parse_args()
    start = time.perf_counter()
    records = []
    with Pool(args.workers) as pool:
        for recs in pool.imap(score_seed, sim.parse_seeds(args.seeds)):
            records.extend(recs)
            print(f"seed {recs[0]['name'][5:8]} done", flush=True)
    text = render(records, args.seeds, time.perf_counter() - start)
    from grpodyn.ground import write_atomic

    write_atomic(HERE / "results" / f"early_warning_seeds_{args.seeds}.md", text)
    print(text)


if __name__ == "__main__":
    main()
