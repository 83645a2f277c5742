"""``grpodyn runs``: what a log holds (format, runs, metrics, hyperparameters)."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

from grpodyn.cli.options import add_json, check_step_key, positive_integer, print_wrapped

if TYPE_CHECKING:
    from grpodyn.empirical.logs.loaders import Run


def add_parser(commands: argparse._SubParsersAction) -> None:
    """Add the ``runs`` command and its options to ``commands``."""
    p = commands.add_parser("runs", help="what a log holds: format, runs, metrics, "
                            "hyperparameters",
                            description="List the runs of a training log (a file or a "
                            "checkpoint, run, W&B or TensorBoard directory): format, steps, "
                            "metrics found and hyperparameters with their source.")
    p.add_argument("log", help="the training log (file or directory)")
    p.add_argument("--reward-key", help="the metric to read as the reward")
    p.add_argument("--step-key", help="the field that holds the optimizer step")
    p.add_argument("--heldout-key", help="the metric to read as the held-out reward "
                   "(validation or verifier score; default: the trainer's eval reward)")
    p.add_argument("--logging-steps", type=positive_integer,
                   help="optimizer steps between logged points (console logs without steps)")
    add_json(p)
    p.set_defaults(handler=run)


def _run_summary(run: Run) -> dict[str, Any]:
    """Summarise one run for ``grpodyn runs``.

    A JSON contract: name, n_points, first_step, last_step, metrics, hyperparameters each with
    value and source.
    """
    return {"name": run.run_name or "", "n_points": run.n_points,
            "first_step": float(run.steps[0]), "last_step": float(run.steps[-1]),
            "reward_key": run.reward_key, "steps_reconstructed": run.steps_reconstructed,
            "metrics": {"reward": run.reward_key, **{name: run.metric_keys.get(name, name)
                                                    for name in run.metrics}},
            "hyperparameters": run.meta.to_dict(), "warnings": list(run.warnings)}


def run(args: argparse.Namespace) -> dict[str, Any]:
    """List the runs of the log of ``args``."""
    from grpodyn.empirical.logs.loaders import load_runs

    runs = load_runs(args.log, reward_key=args.reward_key, step_key=args.step_key,
                     logging_steps=args.logging_steps, heldout_key=args.heldout_key)
    for one in runs:
        check_step_key(one, args.step_key)
    return {"source": runs[0].source, "format": runs[0].format,
            "runs": [_run_summary(run) for run in runs]}


def print_human(result: dict[str, Any]) -> None:
    """Print each run: points, steps, metrics and hyperparameters."""
    runs = result["runs"]
    print(f"{result['source']}: {result['format']}, {len(runs)} run{'s' * (len(runs) != 1)}")
    for run in runs:
        name = run["name"] or "(one run)"
        print(f"  {name}: {run['n_points']} points, steps {run['first_step']:g}-"
              f"{run['last_step']:g}" + (" (reconstructed)" if run["steps_reconstructed"]
                                          else ""))
        print_wrapped(", ".join(f"{k}\xa0<-\xa0{v}" for k, v in run["metrics"].items()),
                      first="    metrics: ", rest="        ")
        itself = "file:" + result["source"].replace("\\", "/").rsplit("/", 1)[-1]
        for name, h in run["hyperparameters"].items():
            value = f"{h['value']:.4g}" if isinstance(h["value"], float) else h["value"]
            source = "file" if h["source"] == itself else h["source"]  # the log's own name
            print_wrapped(h["evidence"], first=f"    {name} = {value} [{source}] ",
                          rest="        ")
        for warning in run["warnings"]:
            print_wrapped(warning, first="    note: ", rest="        ")
