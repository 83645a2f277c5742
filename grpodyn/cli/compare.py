"""``grpodyn compare``: several runs in one table and one figure."""

from __future__ import annotations

import argparse
from typing import Any

from grpodyn.cli.options import (
    UsageError,
    add_run_command_options,
    check_step_key,
    load_log,
    output_path,
    refuse_repeats,
    with_overrides,
)
from grpodyn.ground import finite_json


def add_parser(commands: argparse._SubParsersAction) -> None:
    """Add the ``compare`` command and its options to ``commands``."""
    p = commands.add_parser("compare", help="several runs in one table and one figure, on the "
                            "step or the learning-rate clock",
                            description="Analyse several runs (seeds, a sweep, the runs of one "
                            "file: every run of each LOG unless --run names one) and show them "
                            "side by side: steps, final reward, plateau and tau with their "
                            "statuses, the diagnosis's state; --out draws them on one clock. "
                            "Hyperparameter options apply to every run.")
    p.add_argument("logs", nargs="+", metavar="LOG", help="training logs (files or run "
                   "directories)")
    p.add_argument("--clock", choices=["step", "lr"], default="step",
                   help="align on the log's step or on the learning-rate clock (sum of lr "
                   "over the steps; default: step)")
    p.add_argument("--out", metavar="FIG", type=output_path, help="write the figure here "
                   "(PNG, PDF or SVG by the suffix; written atomically, replacing a file there)")
    add_run_command_options(p, momentum_help="momentum (Adam's beta1) of every run (default: "
                            "each log's)", handler=run)


def _check_lr_clock(log: str, runs: list[Any]) -> None:
    """Refuse ``--clock lr`` for a run of ``log`` whose learning rate is not known."""
    from grpodyn.empirical.logs.compare import lr_clock_known

    for run in runs:
        if not lr_clock_known(run):
            name = log if run.run_name is None else f"{log} [{run.run_name}]"
            raise UsageError(f"{name}: no learning rate in the log for --clock lr; give --lr "
                             "(the run's peak lr) or use --clock step")


def run(args: argparse.Namespace) -> dict[str, Any]:
    """Analyse the runs of the logs of ``args`` side by side."""
    from pathlib import Path

    from grpodyn.empirical.logs.compare import compare_runs
    from grpodyn.empirical.logs.loaders import load_runs
    from grpodyn.progress import progress_bar

    if args.out is not None:
        out = Path(args.out)
        if out.is_dir() or not out.parent.is_dir():
            raise UsageError(f"--out {args.out}: not a file in an existing folder")
        if any(out.resolve() == Path(log).resolve() for log in args.logs):
            raise UsageError(f"--out {args.out}: is one of the logs; refusing to overwrite it")
        if out.suffix.lower() not in (".png", ".pdf", ".svg"):
            raise UsageError(f"--out {args.out}: the figure's format comes from its suffix: "
                             f".png, .pdf or .svg")
    # the same runs twice would read as two runs that agree
    refuse_repeats(args.logs, "each log is compared once")
    runs = []
    for log in progress_bar(args.logs, total=len(args.logs), description="loading",
                            enabled=not args.json):
        if args.run is not None:  # one named run of each log
            args.log = log
            loaded = [load_log(args)]
        else:
            loaded = load_runs(log, reward_key=args.reward_key, step_key=args.step_key,
                               logging_steps=args.logging_steps, heldout_key=args.heldout_key)
            for run in loaded:
                check_step_key(run, args.step_key)
            loaded = [with_overrides(run, args) for run in loaded]
        if args.clock == "lr":
            _check_lr_clock(log, loaded)
        runs += loaded
    comparison = compare_runs(
        runs, clock=args.clock, momentum=args.momentum, reward_range=args.reward_range,
        progress=lambda pairs: progress_bar(pairs, total=len(runs), description="analysing",
                                            enabled=not args.json))
    result = comparison.to_dict()
    if args.out is not None:
        comparison.plot(path=args.out)  # drawn without pyplot: nothing to close
        result["figure"] = str(args.out)
    if not args.json:
        result["table"] = comparison.to_text()
    return finite_json(result)


def print_human(result: dict[str, Any]) -> None:
    """Print the table (and where the figure is)."""
    from grpodyn.empirical.logs.common import counted

    print(f"{counted(len(result['runs']), 'run')} on the {result['clock']} clock")
    print(result["table"])
    if "figure" in result:
        print(f"figure: {result['figure']}")
