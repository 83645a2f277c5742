"""``grpodyn diagnose``: which failure mode a run shows, with evidence."""

from __future__ import annotations

import argparse
from typing import Any

from grpodyn.cli.options import (
    UsageError,
    add_json,
    add_log_options,
    finite_float,
    group_size,
    load_log,
    naming_the_run,
    print_wrapped,
)
from grpodyn.ground import finite_json


def add_parser(commands: argparse._SubParsersAction) -> None:
    """Add the ``diagnose`` command and its options to ``commands``."""
    p = commands.add_parser("diagnose", help="which failure mode a run shows, with evidence",
                            description="Score reward hacking, advantage degeneracy, policy "
                            "concentration and dynamical instability from a training log "
                            "(docs/theory.md section 10); modes the log cannot judge are named.")
    p.add_argument("log", help="the training log")
    p.add_argument("--group-size", type=group_size,
                   help="G, when the log and its config do not say")
    p.add_argument("--until", type=finite_float, metavar="STEP",
                   help="diagnose only the steps up to STEP (inclusive), as a monitor would "
                   "have then: the early warning is the one a Monitor holds at STEP when it "
                   "diagnoses at that step (diagnose_every=1 at every step); one that fired "
                   "stands until a diagnosis with a verdict. From 10 to 19 points the "
                   "command still reads the prefix (too short for the modes), where a "
                   "Monitor has not diagnosed yet; below 10 it refuses. The run's settings "
                   "(lr, G, B, the length cap) are those of the whole log, as a run has them "
                   "from its start, even where they are inferred from the metrics")
    add_log_options(p)
    add_json(p)
    p.set_defaults(handler=run)


def run(args: argparse.Namespace) -> dict[str, Any]:
    """Diagnose the log of ``args`` (up to ``--until``)."""
    from grpodyn.empirical.diagnostics.diagnose import MIN_POINTS, diagnose
    from grpodyn.empirical.diagnostics.early_warning import prefix

    run = load_log(args)
    if args.until is not None and args.until > run.steps[-1]:
        raise UsageError(f"{run.source}: --until {args.until:g} is beyond the log's last step "
                         f"{run.steps[-1]:g}; leave --until out to diagnose the whole log")
    if args.until is not None:
        run = prefix(run, args.until)  # causal: only what was logged up to that step
        if run.n_points < MIN_POINTS:
            raise UsageError(f"{run.source}: --until {args.until:g} leaves {run.n_points} "
                             f"logged points (steps {run.steps[0]:g}-{run.steps[-1]:g}); a "
                             f"diagnosis needs at least {MIN_POINTS}")
    # diagnose reads G from run.meta (the user's --group-size, else the log's) with its source
    with naming_the_run(run):
        result = diagnose(run).to_dict()
    result["run"] = run.run_name  # which run of a log that holds several (None: the only one)
    result["until"] = None if args.until is None else float(run.steps[-1])
    result["warnings"] = run.warnings
    result["hyperparameters"] = run.meta.to_dict()
    return finite_json(result)


def print_human(result: dict[str, Any]) -> None:
    """Print the diagnosis: headline, state, early warning, modes.

    A mode's mark: ``!`` flagged, ``?`` not judged or undecided.
    """
    until = f" (steps up to {result['until']:g})" if result.get("until") is not None else ""
    which = f" [{result['run']}]" if result.get("run") else ""
    print(f"{result['source']}{which}{until}: {result['headline']}")
    print_wrapped(result["state_evidence"], first=f"  state: {result['state']}: ",
                  rest="      ")
    warning = result.get("early_warning")
    if warning:
        print(f"  early warning at step {warning['step']:g} (a warning, not a verdict): "
              f"{', '.join(warning['signals'])}")
        for signal, words in warning["evidence"].items():
            print_wrapped(words, first=f"    {signal}: ", rest="      ")
        if warning.get("remedy"):
            print_wrapped(warning["remedy"], first="    try: ", rest="      ")
    for warning in result["warnings"]:
        print_wrapped(warning, first="  note: ", rest="      ")
    for name, verdict in result["modes"].items():
        mark = "!" if verdict["flag"] else ("?" if not verdict["judged"] or verdict.get(
            "undecided") else " ")
        score = f"{verdict['score']:.2f}" if verdict["judged"] else " -- "
        evidence = ("not judged: as the state says" if verdict["evidence"]
                    == result["state_evidence"] else verdict["evidence"])  # said once
        print_wrapped(evidence, first=f"{mark} {name:22s} {score}  ", rest="      ")
        if verdict.get("remedy"):
            print_wrapped(verdict["remedy"], first="    try: ", rest="      ")
    for note in result["notes"]:  # the state's and the modes' lines say what they say
        if note != result["state_evidence"] and not any(
                note.startswith(f"{name}: not judged (") for name in result["modes"]):
            print_wrapped(note, first="  note: ", rest="      ")
