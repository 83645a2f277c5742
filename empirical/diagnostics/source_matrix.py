"""The source-by-source evaluation matrix of the diagnosis (studies/tiny_grids/findings.md, 4b).

Sources: (a) the tiny TRL test bed (``studies/tiny_grids/data/tiny_testbed``; seen while the
diagnosis was designed, so only a design score); (b) the prompt-pool simulator
(:mod:`grpodyn.empirical.diagnostics.prompt_pool_sim`): design seeds :data:`POOL_DESIGN_SEEDS`,
and fresh seeds made after the diagnosis was frozen; (c) the public logs labelled from their
documented outcomes (:mod:`grpodyn.empirical.diagnostics.public_outcomes`); and the bandit test
bed. Every table has the threshold-rule baseline on the same runs.

Run ``python -m grpodyn.empirical.diagnostics.source_matrix --fresh-seeds 110 130
--variant-seeds 30 40 --public DIR [--json]`` (seeds never scored before; 90-110 and 20-30 are
spent; pool runs labelled by
:func:`~grpodyn.empirical.diagnostics.testbed.outcome_label`).
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from dataclasses import replace

from grpodyn.empirical.diagnostics.testbed import (
    MATRIX_CLASSES,
    POOL_DESIGN_SEEDS,
    LabelledRun,
    bandit_testbed,
    evaluate_sources,
    pool_testbed,
    tiny_testbed,
)

__all__ = ["source_matrix", "markdown", "precision_recall_cell"]


def source_matrix(*, fresh_seeds: range, public: str | None = None, tiny: bool = True,
                  variant_seeds: range | None = None) -> dict:
    """Score every source by :func:`~grpodyn.empirical.diagnostics.testbed.evaluate_sources`.

    Parameters
    ----------
    fresh_seeds : range
        Pool-simulator seeds held out from the design of the diagnosis under test.
    public : str, optional
        Folder of the public logs (``shared/data/real_logs``).
    tiny : bool
        Score the tiny TRL test bed.
    variant_seeds : range, optional
        Seeds of the variant pool bed
        (:func:`~grpodyn.empirical.diagnostics.prompt_pool_sim.variant_settings`), scored twice:
        as TRL ``trainer_state.json`` and as verl's console (no zero-std share).

    Returns
    -------
    dict
        ``sources`` (per source: the diagnosis and the threshold rules) and ``public_logs``.
    """
    sources = {f"pool design seeds {POOL_DESIGN_SEEDS.start}-{POOL_DESIGN_SEEDS.stop - 1}":
               pool_testbed(seeds=POOL_DESIGN_SEEDS),
               f"pool fresh seeds {fresh_seeds.start}-{fresh_seeds.stop - 1}":
               pool_testbed(seeds=fresh_seeds),
               "bandit seeds 0-4 (locked runs relabelled converged)": _bandit_relabelled()}
    if variant_seeds is not None:
        seeds = f"{variant_seeds.start}-{variant_seeds.stop - 1}"
        for fmt, words in (("trl", "TRL trainer_state"), ("verl", "verl console")):
            sources[f"pool variant seeds {seeds} ({words})"] = pool_testbed(
                seeds=variant_seeds, variant=True, log_format=fmt)
    if tiny:
        sources["tiny TRL seeds 0-49 (seen while the diagnosis was designed)"] = tiny_testbed()
    out = {"sources": evaluate_sources(sources)}
    if public is not None:
        from grpodyn.empirical.diagnostics.public_outcomes import score_public_logs

        out["public_logs"] = score_public_logs(public)
    return out


def _bandit_relabelled() -> list[LabelledRun]:
    """Label the bandit test bed's ``policy_concentration`` runs ``healthy`` (converged).

    They end at reward 1.00, locked onto the rewarded arm: under the diagnosis's definition an
    entropy collapse at the ceiling is convergence. The bandit cannot make a concentration
    below the ceiling: with one rewarded arm, the GRPO direction of a group on the rewarded
    arm's logit is the sum of its successes' advantages, >= 0 (the advantages of a group sum
    to 0), and a wrong arm's is the sum of its own, <= 0, so every update moves toward the
    rewarded arm and a policy can lock onto it alone (tests/test_diagnostics.py checks this on
    the simulator).
    """
    return [replace(c, label="healthy", name=c.name.replace("policy_concentration",
                                                             "converged_lock"))
            if c.label == "policy_concentration" else c for c in bandit_testbed(seeds=5)]


def precision_recall_cell(scores: dict) -> str:
    """Write one class's scores as a table cell ``precision / recall``.

    ``-`` stands for a precision that is not defined (nothing called) and for a recall without
    a run of the class.
    """
    p, r = scores["precision"], scores["recall"]
    if not scores["n"]:
        return "-" if math.isnan(p) else f"{p:.2f} / -"
    return f"{'-' if math.isnan(p) else f'{p:.2f}'} / {r:.2f}"


def markdown(result: dict) -> str:
    """Write the matrix as a markdown table (precision / recall; ``-`` where absent).

    The last column is the share of runs on which the diagnosis abstained (a mode the log
    points to but cannot confirm): each counts as a miss in its class.
    """
    head = ("| source | method | " + " | ".join(MATRIX_CLASSES)
            + " | no-failure runs flagged | abstained (a miss) |")
    lines = [head, "|" + "---|" * (len(MATRIX_CLASSES) + 4)]
    for name, scored in result["sources"].items():
        for method in ("model", "threshold_rules"):
            m = scored[method]
            cells = " | ".join(precision_recall_cell(m["per_class"][c]) for c in MATRIX_CLASSES)
            lines.append(f"| {name} | {'diagnosis' if method == 'model' else 'threshold rules'}"
                         f" | {cells} | {m['healthy_flagged']:.0%} | {m['abstained']:.0%} |")
    public = result.get("public_logs")
    if public:
        split = public["by_label_source"]
        classes = ", ".join(f"{name} {precision_recall_cell(v)}"
                            for name, v in public["per_class"].items())
        lines += ["", f"Public logs: agreement {public['agreement']:.0%} with the documented "
                  f"outcome on {public['scored']} logs: {split['documented']['agree']} of "
                  f"{split['documented']['scored']} labelled by hand (MANIFEST caveats), "
                  f"{split['heuristic']['agree']} of {split['heuristic']['scored']} labelled by "
                  f"the automatic curve shape. Precision / recall: {classes}.", "",
                  "| file | documented | label source | called (primary, state) |",
                  "|---|---|---|---|"]
        for row in public["rows"]:
            called = (f"{row['called']} ({row['primary']}, {row['state']})"
                      if row.get("called") else f"not read: {row.get('error', '')}")
            lines.append(f"| {row['file']} | {row['documented']} ({row['note']}) | "
                         f"{row['label_source']} | {called} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--fresh-seeds", nargs=2, type=int, default=(10, 30),
                        metavar=("FIRST", "STOP"))
    parser.add_argument("--public", help="folder of the public logs (shared/data/real_logs)")
    parser.add_argument("--variant-seeds", nargs=2, type=int, metavar=("FIRST", "STOP"),
                        help="seeds of the variant pool bed (TRL and verl formats)")
    parser.add_argument("--no-tiny", action="store_true", help="skip the tiny TRL test bed")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    first, stop = args.fresh_seeds
    if not 0 <= first < stop or first < POOL_DESIGN_SEEDS.stop:
        print(f"--fresh-seeds: {first} {stop} must be a range after the design seeds "
              f"(from {POOL_DESIGN_SEEDS.stop})", file=sys.stderr)
        return 2
    variant = None
    if args.variant_seeds is not None:
        v_first, v_stop = args.variant_seeds
        if not 0 <= v_first < v_stop:
            print(f"--variant-seeds: {v_first} {v_stop} is not a range of seeds",
                  file=sys.stderr)
            return 2
        variant = range(v_first, v_stop)
    result = source_matrix(fresh_seeds=range(first, stop), public=args.public,
                           tiny=not args.no_tiny, variant_seeds=variant)
    print(json.dumps(result) if args.json else markdown(result))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
