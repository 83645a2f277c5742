"""Score the diagnosis and the early warning on every labelled source, with threshold rules.

Prints, each table with its threshold-rule baseline:

1. per-label precision / recall on the test beds the diagnosis was designed on (prompt-pool
   design seeds, bandit, tiny TRL runs) and on the categorical simulator of
   ``studies/diagnosis`` (fresh seeds, scored once after the diagnosis was frozen);
2. the documented outcomes of the public logs (``../shared/data/real_logs`` beside the checkout);
3. the early warning: on the runs that collapse (public and simulated), the step at which the
   reward had lost half of its drop, the warnings before it and the lead time; on the runs that
   do not collapse, the share of prefixes with a (false) warning;
4. with ``--tiny-grids [DIR]``, the real TRL runs of the tiny-model grids (every ``tiny_*``
   folder of DIR, default ``studies/tiny_grids/data``; a folder holding some of them scores
   those alone):
   the modes flagged on the runs at stable lrs (no failure induced) and the false warnings on
   their prefixes, each beside the threshold rules, and the calls on the runs at the lrs above.

Run ``python benchmarks/diagnosis.py [--public DIR] [--seeds FIRST STOP | FIRST-LAST]
[--tiny-grids [DIR]] [--json]``.
Seeds 100-105 (the default) were the first scored ones; 200-211 are the design seeds of the
concentration reading from the reward's sampling noise; 300-305 its fresh seeds, then design
seeds (with 200-211) of the degeneracy's reward-level margin; 400-411 the fresh seeds after it;
500-511 the fresh seeds of the early warning's length-alone exception (designed on all before);
600-611 the fresh seeds of concentration without the entropy read from the zero-std share and
the first steps' degeneracy (designed on all before); 700-711 the fresh seeds of the sampling
fraction read from the epoch (designed on all before); 800-811 the fresh seeds of the length
cap's precursors, the truncated share and the length's approach to a known cap (designed on
all before but 700-711).
Each categorical table is scored twice: under ``label_of`` (the frozen labels) and under
``label_sustained`` (the limit cycles labelled from the simulator's dynamics).
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # studies/ is a folder of the repository, not of the package

from grpodyn.empirical.diagnostics import testbed  # noqa: E402
from grpodyn.empirical.diagnostics.diagnose import (  # noqa: E402
    MODE_POINTS,
    MODES,
    diagnose,
    threshold_rules,
)
from grpodyn.empirical.diagnostics.early_warning import (  # noqa: E402
    early_warning,
    prefix,
    reviews,
)
from grpodyn.empirical.diagnostics.public_outcomes import (  # noqa: E402
    OUTCOMES,
    score_public_logs,
)
from grpodyn.empirical.diagnostics.source_matrix import precision_recall_cell  # noqa: E402
from grpodyn.empirical.logs.loaders import Run, load_run  # noqa: E402
from studies.diagnosis.categorical_sim import (  # noqa: E402
    FAMILIES,
    label_of,
    label_sustained,
    settings,
    simulate,
    write_run,
)

PUBLIC = ROOT.parent / "shared" / "data" / "real_logs"  # the public logs beside the checkout
#: seeds of the categorical simulator never seen before the diagnosis was first frozen
FRESH_SEEDS = range(100, 106)
#: seeds the diagnosis was designed on: 200-211 for the concentration-without-entropy reading
#: (module fluctuation), then 300-305 (scored once after it) with them for the degeneracy's
#: reward-level margin and the limit cycles' labels (label_sustained)
DESIGN_SEEDS = (range(200, 212), range(300, 306))
_KEYS = ("full", "no_spread", "no_entropy", "reward_only")
_PREFIXES = 150  # prefixes evaluated per run, at most
_STANDING = 30  # of those, prefixes diagnosed for the warning diagnose --until shows


def categorical_runs(seeds: range, folder: Path) -> tuple[list[testbed.LabelledRun], dict,
                                                           list[testbed.LabelledRun]]:
    """Simulate, write and load one run per family and seed; the exact success beside each.

    Returns the runs under :func:`label_of`'s labels, the family and exact state of each by
    name, and the same runs under :func:`label_sustained`'s labels (limit cycles read from the
    dynamics).
    """
    cases, truths, sustained = [], {}, []
    for family in FAMILIES:
        for seed in seeds:
            config = settings(family, seed)
            sim_seed = 10_000 * FAMILIES.index(family) + seed
            log, truth = simulate(config, seed=sim_seed)
            label = label_of(family, truth)
            keys = _KEYS[seed % len(_KEYS)]
            name = f"cat_{family}_{seed}_{keys}{'_G' if seed % 2 else ''}"
            path = write_run(folder / name, log, config=config, keys=keys,
                             with_g=bool(seed % 2), label=label, seed=seed)
            run = load_run(path)
            cases.append(testbed.LabelledRun(label, name, run))
            sustained.append(testbed.LabelledRun(
                label_sustained(family, truth, config=config, seed=sim_seed), name, run))
            truths[name] = (family, truth)
    return cases, truths, sustained


def label_table(scored: dict) -> list[str]:
    """Markdown rows: per source, the diagnosis and the threshold rules, precision / recall."""
    lines = ["| source | method | " + " | ".join(testbed.MATRIX_CLASSES) + " | runs |",
             "|" + "---|" * (len(testbed.MATRIX_CLASSES) + 3)]
    for name, result in scored.items():
        runs = len(result["cases"])
        for method, words in (("model", "diagnosis"), ("threshold_rules", "threshold rules")):
            cells = " | ".join(precision_recall_cell(result[method]["per_class"][c])
                               for c in testbed.MATRIX_CLASSES)
            lines.append(f"| {name} | {words} | {cells} | {runs} |")
    return lines


def outcome_rule(run: Run) -> str:
    """Threshold rule for the coarse outcome: collapse if the reward fell below half its peak.

    Smoothed over 5 points: ``declines`` when the late level (last quarter) lost more than half
    of the rise from the start (first tenth) to the peak; ``flat`` when the late level is within
    half a standard deviation of the raw reward from the start; ``learns`` otherwise.
    """
    r = run.reward[np.isfinite(run.reward)]
    level = np.convolve(r, np.ones(5) / 5, mode="valid") if r.size >= 5 else r
    start = float(level[: max(1, level.size // 10)].mean())
    late = float(level[-max(1, level.size // 4):].mean())
    peak = float(level.max())
    if peak - start > 0 and peak - late > 0.5 * (peak - start):
        return "declines"
    return "flat" if abs(late - start) < 0.5 * float(np.std(r)) else "learns"


def public_table(folder: Path) -> tuple[list[str], dict]:
    """Agreement with the documented outcomes: the diagnosis and the threshold rule."""
    result = score_public_logs(folder)
    agree_rule = scored_rule = 0
    lines = ["| file | documented | label source | diagnosis | rule |", "|---|---|---|---|---|"]
    for row, item in zip(result["rows"], OUTCOMES, strict=True):
        rule = "-"
        if row.get("called"):
            options = {"logging_steps": item.logging_steps} if item.logging_steps else {}
            rule = outcome_rule(load_run(folder / item.file, **options))
            scored_rule += 1
            agree_rule += rule == item.outcome
        called = (f"{row['called']} ({row['primary']}, {row['state']})" if row.get("called")
                  else f"not read: {row.get('error', '')}")
        lines.append(f"| {item.file[-70:]} | {item.outcome} | {row['label_source'][:30]} | "
                     f"{called} | {rule} |")
    split = result["by_label_source"]
    lines.insert(0, f"Diagnosis agrees on {result['agreement']:.0%} of {result['scored']} logs "
                 f"({split['documented']['agree']} of {split['documented']['scored']} labelled "
                 f"by hand, {split['heuristic']['agree']} of {split['heuristic']['scored']} by the "
                 f"automatic curve shape); the threshold rule on {agree_rule} of {scored_rule}.\n")
    result["rule_agreement"] = agree_rule / scored_rule if scored_rule else float("nan")
    return lines, result


def rule_warning(run: Run) -> bool:
    """Threshold-rule warning: the 3-step mean reward 25% of its range below its running peak."""
    r = run.reward[np.isfinite(run.reward)]
    if r.size < 10:
        return False
    level = np.convolve(r, np.ones(3) / 3, mode="valid")
    span = float(level.max() - level.min())
    return bool(span > 0 and level.max() - level[-1] > 0.25 * span
                and level[-1] < 0.75 * level.max() + 0.25 * level.min())


def _prefix_ends(run: Run, per_run: int = _PREFIXES) -> list[int]:
    ends = list(range(9, run.n_points))
    step = max(1, len(ends) // per_run)
    return ends[::step]


def half_loss_index(r: np.ndarray) -> tuple[int, int]:
    """Return the index of the peak and the step after which the reward stays below half its drop.

    The peak: the best 10-step mean before the last quarter (a level, not one noisy point);
    the final level: the mean of the last quarter; the half-loss index: one after the last
    point whose centred 5-step mean is above halfway between them (the fall it never came back
    from).
    """
    n = r.size
    level = np.convolve(r, np.ones(10) / 10, mode="valid")[: max(1, n - n // 4 - 9)]
    peak = int(np.argmax(level)) + 5
    final = float(r[n - n // 4:].mean())
    half = (float(level.max()) + final) / 2
    centred = np.convolve(r, np.ones(5) / 5, mode="same")
    above = np.flatnonzero(centred[:n - 2] > half)
    return peak, min(n - 1, int(above[-1]) + 1) if above.size else peak


def lead_times(run: Run) -> dict:
    """Warnings of the model and the rule on every prefix before the reward lost half its drop."""
    peak, half = half_loss_index(run.reward)
    model, rule = [], []
    for end in range(9, half):
        cut = prefix(run, run.steps[end])
        if early_warning(cut) is not None:
            model.append(float(run.steps[end]))
        if rule_warning(cut):
            rule.append(float(run.steps[end]))
    window = 10  # the shortest trend window: a warning this close to the fall is about it
    near = float(run.steps[max(0, half - window)])

    def summary(steps: list[float]) -> dict:
        last = [s for s in steps if s >= near]
        return {"first": steps[0] if steps else None, "count": len(steps),
                "fires_before": bool(last),
                "lead": float(run.steps[half]) - last[0] if last else None}

    return {"peak_step": float(run.steps[peak]), "half_loss_step": float(run.steps[half]),
            "model": summary(model), "rule": summary(rule)}


def _reviewed(cut: Run) -> bool:
    """Whether the diagnosis of ``cut`` carries a verdict that sets a standing warning aside.

    ``diagnose(cut).early_warning`` without its replay of the prefixes: a warning fired at an
    earlier prefix and none at the last steps stands unless this holds (``reviews``).
    """
    d = diagnose(cut, warning=False)
    return reviews(d.primary is not None, d.state, cut if cut.n_points >= MODE_POINTS else None)


def false_alarms(runs: list[Run], per_run: int = _PREFIXES) -> dict:
    """False warnings over runs that do not collapse: per prefix, per run; model and rule.

    ``model``: the share of prefixes at whose last steps a warning fires (``early_warning``),
    over the prefixes of :func:`_prefix_ends` (``per_run`` at most). ``standing``: the share
    at which ``grpodyn diagnose LOG --until STEP`` shows one (the standing warning, one that
    fired at an earlier step included, as the Monitor holds it): what a user reading the
    prefix sees; it needs a diagnosis at each prefix, so it is read at :data:`_STANDING`
    evenly spaced prefixes of those, ``standing_prefixes`` in all. ``runs_model`` and
    ``runs_rule``: the share of runs with a warning at one prefix or more (every prefix read:
    a prefix where one fires shows it).
    """
    model = standing = rule = total = read = runs_model = runs_rule = 0
    for run in runs:
        ends = _prefix_ends(run, per_run)
        spaced = set(ends[::max(1, len(ends) // _STANDING)])
        ends, fired, rule_run = set(ends), False, False
        for end in range(9, run.n_points):
            cut = prefix(run, run.steps[end])
            found = early_warning(cut) is not None
            fired |= found
            if end in spaced:
                standing += found or (fired and not _reviewed(cut))
                read += 1
            if end in ends:
                by_rule = rule_warning(cut)
                model += found
                rule += by_rule
                total += 1
                rule_run |= by_rule
        runs_model += fired
        runs_rule += rule_run

    def share(count: int, of: int) -> float:
        return count / of if of else float("nan")

    return {"prefixes": total, "model": share(model, total), "standing": share(standing, read),
            "standing_prefixes": read, "rule": share(rule, total), "runs": len(runs),
            "runs_model": share(runs_model, len(runs)), "runs_rule": share(runs_rule, len(runs))}


def warning_tables(public: Path | None, sim: list[testbed.LabelledRun], truths: dict) -> tuple:
    """Lead times on the collapsing runs, false alarms on the others."""
    collapsing, quiet = {}, {}
    if public is not None:
        for item in OUTCOMES:
            path = public / item.file
            if not path.exists():
                continue
            options = {"logging_steps": item.logging_steps} if item.logging_steps else {}
            run = load_run(path, **options)
            if item.outcome == "declines" and not item.source.startswith("MANIFEST.md caveats"):
                continue  # collapses documented by hand only: the curve-shape labels are weak
            (collapsing if item.outcome == "declines" else quiet)[f"public {item.file[-60:]}"] = run
    for case in sim:
        family, truth = truths[case.name]
        n = truth.shape[0]
        collapsed = truth[n - n // 4:, 0].mean() < 0.5 * truth[:, 0].max()
        if family == "length_collapse" and collapsed:
            collapsing[f"sim {case.name}"] = case.run
        elif case.label != "dynamical_instability":
            quiet[f"sim {case.name}"] = case.run
    leads = {name: lead_times(run) for name, run in collapsing.items()}
    public_quiet = [r for n, r in quiet.items() if n.startswith("public")]
    sim_quiet = [r for n, r in quiet.items() if n.startswith("sim")]
    alarms = {"public runs that do not collapse": false_alarms(public_quiet),
              "simulated runs that do not collapse": false_alarms(sim_quiet)}
    lines = ["| run | peak | half lost at | model: fires in the 10 steps before (lead) | "
             "model: first warning, count | rule: fires before (lead) |",
             "|---|---|---|---|---|---|"]
    for name, v in leads.items():
        m, r = v["model"], v["rule"]
        lines.append(f"| {name} | {v['peak_step']:g} | {v['half_loss_step']:g} | "
                     f"{'yes' if m['fires_before'] else 'no'} ({m['lead']}) | {m['first']}, "
                     f"{m['count']} | {'yes' if r['fires_before'] else 'no'} ({r['lead']}) |")
    lines += ["", "| runs that do not collapse | prefixes | model: fires at the prefix | "
              "model: shown by diagnose --until (prefixes read) | rule: false warnings | runs "
              "| model: runs warned | rule: runs warned |", "|---|---|---|---|---|---|---|---|"]
    for name, v in alarms.items():
        lines.append(f"| {name} | {v['prefixes']} | {v['model']:.1%} | {v['standing']:.1%} "
                     f"({v['standing_prefixes']}) | "
                     f"{v['rule']:.1%} | {v['runs']} | {v['runs_model']:.0%} | "
                     f"{v['runs_rule']:.0%} |")
    return lines, {"lead_times": leads, "false_alarms": alarms}


#: The tiny-model TRL grids (studies/tiny_grids): real GRPO runs at stable lrs, and the lrs
#: above them (the folders ending in ``_high``) where the policy collapses.
TINY_GRIDS = ROOT / "studies" / "tiny_grids" / "data"
_TINY_PREFIXES = 20  # prefixes per run for the false-warning share


def tiny_grid_table(folder: Path) -> tuple[list[str], dict]:
    """The diagnosis and the warning on the tiny-model grids' runs, with the threshold rules.

    Runs of the grids' stable lrs (every ``tiny_*`` grid folder but the ``_high`` ones: no
    failure was induced, though G = 2 leaves most groups without spread): how many get each
    mode flagged, by the diagnosis and by the threshold rules of monitoring tools, and the
    share of their prefixes with a (false) early warning, beside the threshold-rule warning.
    Runs of the lrs above them (the ``_high`` folders): the diagnosis's primary call and state.
    """
    grids = sorted(p for p in folder.glob("tiny_*") if p.is_dir() and p.name != "tiny_testbed")
    stable = [p for grid in grids if not grid.name.endswith("_high")
              for p in sorted(grid.glob("*.json"))]
    above = [p for grid in grids if grid.name.endswith("_high")
             for p in sorted(grid.glob("*.json"))]
    flags = {mode: [0, 0] for mode in MODES}
    runs = [load_run(path) for path in stable]
    for run in runs:
        diagnosis, rules = diagnose(run), threshold_rules(run)
        for mode in MODES:
            flags[mode][0] += diagnosis.modes[mode].flag
            flags[mode][1] += rules[mode]
    alarms = false_alarms(runs, per_run=_TINY_PREFIXES)
    prefixes = alarms["prefixes"]
    calls: dict[str, int] = {}
    for path in above:
        diagnosis = diagnose(load_run(path))
        key = f"{diagnosis.primary or 'no mode'} ({diagnosis.state})"
        calls[key] = calls.get(key, 0) + 1
    n = len(stable)
    if not n or not prefixes:
        return [f"no tiny-model runs at stable lrs under {folder}"], {"stable_runs": 0}
    lines = [f"Runs at the grids' stable lrs ({n}, no failure induced): runs with the mode "
             "flagged, diagnosis / threshold rules", "", "| mode | diagnosis | rules |",
             "|---|---|---|"]
    lines += [f"| {mode} | {d} of {n} | {r} of {n} |" for mode, (d, r) in flags.items()]
    lines += ["", f"Early warning on {prefixes} of their prefixes: fires at {alarms['model']:.1%}, "
              f"shown by diagnose --until at {alarms['standing']:.1%} (of "
              f"{alarms['standing_prefixes']} read); runs warned "
              f"{alarms['runs_model']:.0%} (threshold rule: {alarms['rule']:.1%} of the "
              f"prefixes, {alarms['runs_rule']:.0%} of the runs)", "",
              f"Runs at the lrs above them ({len(above)}), the diagnosis's primary call (state):",
              ""] + [f"- {key}: {count}" for key, count in sorted(calls.items())]
    return lines, {"stable_runs": n, "flags": flags, "prefixes": prefixes,
                   "false_warnings": alarms["model"], "standing_false_warnings":
                   alarms["standing"], "rule_false_warnings": alarms["rule"],
                   "runs_warned": alarms["runs_model"], "above": calls}


def _seed_range(words: list[str]) -> range | None:
    """Read ``FIRST STOP`` or ``FIRST-LAST`` (inclusive) as a range of seeds; None if neither."""
    try:
        if len(words) == 1 and "-" in words[0]:
            first, last = (int(w) for w in words[0].split("-", 1))
            stop = last + 1
        elif len(words) == 2:
            first, stop = int(words[0]), int(words[1])
        else:
            return None
    except ValueError:
        return None
    return range(first, stop) if 0 <= first < stop else None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--public", default=str(PUBLIC), help="folder of the public logs")
    parser.add_argument("--seeds", nargs="+", metavar="SEEDS",
                        default=[str(FRESH_SEEDS.start), str(FRESH_SEEDS.stop)],
                        help="seeds of the categorical simulator: FIRST STOP, or FIRST-LAST "
                             "(inclusive); default: the first scored ones, 100 106")
    parser.add_argument("--tiny-grids", nargs="?", const=TINY_GRIDS, type=Path, metavar="DIR",
                        help="also score the tiny-model TRL grids: every tiny_* grid folder "
                        "in DIR but the labelled tiny_testbed (default studies/tiny_grids/data)")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    public = Path(args.public)
    if not public.is_dir():
        print(f"--public {public}: not a folder; the public tables are left out",
              file=sys.stderr)
        public = None
    seeds = _seed_range(args.seeds)
    if seeds is None:
        print(f"--seeds: {' '.join(args.seeds)} is not a range of seeds (FIRST STOP or "
              "FIRST-LAST)", file=sys.stderr)
        return 2
    first, stop = seeds.start, seeds.stop
    role = ("design" if any(d.start <= first and stop <= d.stop for d in DESIGN_SEEDS)
            else "scored once")
    with tempfile.TemporaryDirectory() as scratch:
        sim, truths, sim_sustained = categorical_runs(range(first, stop), Path(scratch))
    design = testbed.POOL_DESIGN_SEEDS
    sources = {f"pool design seeds {design.start}-{design.stop - 1} "
               "(design)": testbed.pool_testbed(seeds=design),
               "bandit seeds 0-4 (design)": testbed.bandit_testbed(seeds=5),
               "tiny TRL seeds 0-49 (design)": testbed.tiny_testbed(),
               f"categorical simulator seeds {first}-{stop - 1} ({role})": sim,
               f"categorical simulator seeds {first}-{stop - 1} ({role}), limit cycles "
               "labelled from the dynamics": sim_sustained}
    scored = testbed.evaluate_sources(sources)
    out = {"labels": {k: {m: v[m]["per_class"] for m in ("model", "threshold_rules")}
                      for k, v in scored.items()}}
    fresh = scored[f"categorical simulator seeds {first}-{stop - 1} ({role})"]
    out["categorical_cases"] = fresh["cases"]
    relabelled = {c.name: c.label for c in sim_sustained}
    out["categorical_labels_sustained"] = relabelled
    text = ["## Labels: precision / recall", ""] + label_table(scored)
    text += ["", "Categorical simulator, every miss (label: called by the diagnosis; rules; the "
             "label of label_sustained where it differs):", ""]
    text += [f"- {c['name']}: {c['label']} -> {c['model']} (rules: {c['rules']})"
             + (f" [label_sustained: {relabelled[c['name']]}]"
                if relabelled[c["name"]] != c["label"] else "")
             for c in fresh["cases"]
             if c["label"] != c["model"] or relabelled[c["name"]] != c["model"]]
    if public is not None:
        lines, result = public_table(public)
        out["public_outcomes"] = {k: result[k] for k in ("agreement", "rule_agreement",
                                                         "by_label_source", "rows")}
        text += ["", "## Public logs: documented outcomes", ""] + lines
    lines, warnings = warning_tables(public, sim, truths)
    out["early_warning"] = warnings
    text += ["", "## Early warning", ""] + lines
    if args.tiny_grids:
        lines, out["tiny_grids"] = tiny_grid_table(args.tiny_grids)
        text += ["", "## Tiny-model TRL grids (real GRPO runs)", ""] + lines
    print(json.dumps(out, default=float) if args.json else "\n".join(text))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
