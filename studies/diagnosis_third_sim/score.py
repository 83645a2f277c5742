"""Score grpodyn's diagnosis (and the threshold rules) on the third simulator's labelled runs.

    python studies/diagnosis_third_sim/score.py --seeds 100-129

Generates the six runs of every seed (one per family) as TRL logs in a temporary folder, labels
each from the simulator's exact state (``sim.label_of``, fixed before any run was diagnosed),
diagnoses each with ``diagnose(load_run(path))`` and ``threshold_rules``, and prints and writes
``results/scored_seeds_<seeds>.md`` (and ``.json``, every run's record).

The call of the diagnosis: its ``primary`` mode if any; else a flagged mode if any (first in the
label order); else "healthy" if the state is ``learning`` or ``converged``; else "not_learning" if
the state is ``not_learning``; else ``other:<state>`` (a miss for every label).
The call of the threshold rules: the flagged mode (the first in the label order when several
are flagged, noted in the record); "healthy" when none is flagged (they never call
not_learning).
"""
from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from functools import partial
from multiprocessing import Pool
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from grpodyn.empirical.diagnostics.diagnose import Diagnosis

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import sim  # noqa: E402

MODES = ("dynamical_instability", "reward_hacking", "advantage_degeneracy",
         "policy_concentration")
LABELS = ("healthy", "not_learning", "reward_hacking", "advantage_degeneracy",
          "policy_concentration", "dynamical_instability")
SHORT = {"healthy": "healthy", "not_learning": "not learning", "reward_hacking": "hacking",
         "advantage_degeneracy": "degeneracy", "policy_concentration": "concentration",
         "dynamical_instability": "instability"}


def diagnosis_call(d: Diagnosis) -> str:
    """Map a diagnosis to one label-like call, so that it can be scored against the label."""
    flagged = [m for m in MODES if m in d.modes and d.modes[m].flag is True]
    if d.primary:
        return d.primary
    if flagged:
        return flagged[0]
    if d.state in ("learning", "converged"):
        return "healthy"
    if d.state == "not_learning":
        return "not_learning"
    return f"other:{d.state}"


def rules_call(flags: dict[str, bool]) -> tuple[str, list[str]]:
    """Map the threshold rules' flags to one call (the first flagged) and all flagged modes."""
    on = [m for m in MODES if flags.get(m)]
    return (on[0] if on else "healthy"), on


def score_seed(seed: int, eval_on_start: bool = False) -> list[dict]:
    """Simulate, label and diagnose the six runs of ``seed``; return one record per run.

    ``eval_on_start``: every log also holds an evaluation before training (TRL's option of
    that name), the runs otherwise the same.
    """
    from grpodyn.empirical.diagnostics.diagnose import diagnose, threshold_rules
    from grpodyn.empirical.logs.loaders import load_run

    out = []
    with tempfile.TemporaryDirectory(prefix=f"third_sim_{seed}_") as tmp:
        for name, fam, var, keyset, cfg, rows, args, state in sim.runs_of_seed(
                seed, eval_on_start=eval_on_start):
            label, why = sim.label_of(state)
            folder = Path(tmp) / name
            path = sim.write_run(folder, rows, args, keyset)
            t0 = time.perf_counter()
            run = load_run(path)
            d = diagnose(run)
            flags = threshold_rules(run)
            dt = time.perf_counter() - t0
            rcall, ron = rules_call(flags)
            drop = float((sim.np.maximum.accumulate(state["R_opt"]) - state["R_opt"]).max())
            out.append({
                "name": name, "seed": seed, "family": fam, "variant": var, "keyset": keyset,
                "label": label, "why": why, "steps": len(rows),
                "G": cfg["G"], "B": cfg["B"], "beta": cfg["beta"], "mu": cfg["mu"],
                "reward": cfg["reward"], "T": cfg["T"],
                "instab_drop": drop, "instab_jump": float(state["move"].max()),
                "primary": d.primary, "state": d.state, "healthy_attr": bool(d.healthy),
                "flags": {m: d.modes[m].flag for m in d.modes},
                "call": diagnosis_call(d), "rules": flags, "rules_call": rcall,
                "rules_on": ron, "diagnose_s": dt,
            })
    return out


def prf(records: list[dict], key: str) -> list[tuple[str, int, int, int, str, str]]:
    """Count the runs, calls and hits per label for the call ``key``; precision and recall."""
    rows = []
    for lab in LABELS:
        tp = sum(r["label"] == lab and r[key] == lab for r in records)
        called = sum(r[key] == lab for r in records)
        true = sum(r["label"] == lab for r in records)
        p = f"{tp / called:.2f}" if called else "-"
        rc = f"{tp / true:.2f}" if true else "-"
        rows.append((lab, true, called, tp, p, rc))
    return rows


def confusion(records: list[dict], key: str) -> list[str]:
    """Return the confusion matrix of label against the call ``key`` as Markdown table lines."""
    cols = list(LABELS) + sorted({r[key] for r in records} - set(LABELS))
    head = "| label \\ call | " + " | ".join(SHORT.get(c, c) for c in cols) + " |"
    lines = [head, "|" + "---|" * (len(cols) + 1)]
    for lab in LABELS:
        cells = [sum(r["label"] == lab and r[key] == c for r in records) for c in cols]
        lines.append(f"| {SHORT[lab]} | " + " | ".join(str(c) if c else "." for c in cells) + " |")
    return lines


def render(records: list[dict], seeds_text: str, wall: float) -> str:
    """Return the Markdown report of the scored runs (tables and every miss)."""
    n = len(records)
    acc_d = sum(r["call"] == r["label"] for r in records) / n
    acc_r = sum(r["rules_call"] == r["label"] for r in records) / n
    d = {lab: row for lab, *row in [(x[0], x) for x in prf(records, "call")]}
    t = {lab: row for lab, *row in [(x[0], x) for x in prf(records, "rules_call")]}
    L = [f"# Third simulator: diagnosis scored on seeds {seeds_text}", "",
         f"{n} runs (6 per seed, one per family); labels from the simulator's exact state "
         "(`sim.label_of`); calls mapped as in `score.py`. "
         f"Scoring wall time {wall:.0f} s.", "",
         "## Precision / recall per label", "",
         "| label | runs | diagnosis P / R (calls) | threshold rules P / R (calls) |",
         "|---|---|---|---|"]
    for lab in LABELS:
        _, true, called, tp, p, rc = d[lab][0]
        _, _, tcalled, ttp, tp_, trc = t[lab][0]
        L.append(f"| {SHORT[lab]} | {true} | {p} / {rc} ({called}) | {tp_} / {trc} ({tcalled}) |")
    L += ["", f"Accuracy: diagnosis {acc_d:.2f}, threshold rules {acc_r:.2f}.", "",
          "## Confusion matrix, diagnosis (rows: label; columns: call)", ""]
    L += confusion(records, "call")
    L += ["", "## Confusion matrix, threshold rules", ""]
    L += confusion(records, "rules_call")
    L += ["", "## Family -> label (the simulator's own consistency)", ""]
    fams = list(sim.FAMILIES)
    L += ["| family \\ label | " + " | ".join(SHORT[x] for x in LABELS) + " |",
          "|" + "---|" * (len(LABELS) + 1)]
    for f in fams:
        cells = [sum(r["family"] == f and r["label"] == lab for r in records) for lab in LABELS]
        L.append(f"| {f} | " + " | ".join(str(c) if c else "." for c in cells) + " |")
    L += ["", "## Diagnosis accuracy per logged key set", "",
          "| key set | runs | correct |", "|---|---|---|"]
    for ks in sim.KEYSETS:
        sub = [r for r in records if r["keyset"] == ks]
        L.append(f"| {ks} | {len(sub)} | {sum(r['call'] == r['label'] for r in sub)} |")
    inst = [r for r in records if r["label"] == "dynamical_instability"]
    if inst:
        by_drop = [r for r in inst if r["instab_drop"] >= sim.INSTAB_DROP]
        jump_only = [r for r in inst if r["instab_drop"] < sim.INSTAB_DROP]
        L += ["", "## Instability labels by criterion", "",
              f"- objective drop >= {sim.INSTAB_DROP}: {len(by_drop)} runs, diagnosis called "
              f"{sum(r['call'] == r['label'] for r in by_drop)} of them instability",
              f"- one-step move >= {sim.INSTAB_JUMP} nat only (drop below {sim.INSTAB_DROP}): "
              f"{len(jump_only)} runs, diagnosis called "
              f"{sum(r['call'] == r['label'] for r in jump_only)} of them instability"]
    mism = [r for r in records if r["healthy_attr"] != (r["call"] == "healthy")]
    L += ["", f"Runs where `Diagnosis.healthy` disagrees with the 'healthy' call mapping: "
          f"{len(mism)}" + (" (" + ", ".join(f"{r['name']}: healthy={r['healthy_attr']}, "
                                              f"call {r['call']}" for r in mism) + ")"
                            if mism else "") + "."]
    L += ["", "## Every miss of the diagnosis", "",
          "| run | family / variant | key set | label (why) | call | primary / state / flags |",
          "|---|---|---|---|---|---|"]
    for r in records:
        if r["call"] != r["label"]:
            fl = ",".join(SHORT.get(m, m) for m, v in r["flags"].items() if v) or "none"
            L.append(f"| {r['name']} | {r['family']} / {r['variant']} | {r['keyset']} | "
                     f"{r['label']} ({r['why']}) | {r['call']} | {r['primary']} / {r['state']}"
                     f" / {fl} |")
    L += ["", "## Every miss of the threshold rules", "",
          "| run | key set | label | rules call (all flagged) |", "|---|---|---|---|"]
    for r in records:
        if r["rules_call"] != r["label"]:
            L.append(f"| {r['name']} | {r['keyset']} | {r['label']} | {r['rules_call']} "
                     f"({','.join(SHORT[m] for m in r['rules_on']) or 'none'}) |")
    return "\n".join(L) + "\n"


def main() -> None:
    """Score the given seeds with a pool of workers; print and write the report."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seeds", default="100-129")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--eval-on-start", action="store_true",
                    help="add TRL's evaluation before training to every log (the results file "
                         "name ends in _eval_on_start)")
    a = ap.parse_args()
    seeds = sim.parse_seeds(a.seeds)
    t0 = time.perf_counter()
    records = []
    with Pool(a.workers) as pool:
        for recs in pool.imap(partial(score_seed, eval_on_start=a.eval_on_start), seeds):
            records.extend(recs)
            for r in recs:
                mark = "ok " if r["call"] == r["label"] else "MISS"
                print(f"{mark} {r['name']} {r['keyset']:12s} label {r['label']:22s} "
                      f"call {r['call']:22s} rules {r['rules_call']}", flush=True)
    wall = time.perf_counter() - t0
    text = render(records, a.seeds, wall)
    print(text)
    res = HERE / "results"
    res.mkdir(exist_ok=True)
    stem = f"scored_seeds_{a.seeds}" + ("_eval_on_start" if a.eval_on_start else "")
    (res / f"{stem}.md").write_text(text)
    (res / f"{stem}.json").write_text(json.dumps(records, indent=1, default=str))
    print(f"total wall time {wall:.1f} s")


if __name__ == "__main__":
    main()
