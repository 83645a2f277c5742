"""``grpodyn transfer``: a run not yet made, from runs with other hyperparameters."""

from __future__ import annotations

import argparse
from typing import Any

from grpodyn.cli.options import (
    MAX_STEPS,
    UsageError,
    add_json,
    add_reward_range,
    add_sweep_log_options,
    finite_float,
    integer,
)
from grpodyn.ground import finite_json


def add_parser(commands: argparse._SubParsersAction) -> None:
    """Add the ``transfer`` command and its options to ``commands``."""
    p = commands.add_parser("transfer", help="predict a run not yet made from one or more "
                            "runs with other hyperparameters",
                            description="Fit the --from runs jointly and predict the reward "
                            "path of the --to hyperparameters with a band: the fitted constants "
                            "and tau-lr and B G exponents sampled, the sources' seed spread, the "
                            "sampling noise and the map's transfer error. Steps are labelled as "
                            "the logs count them; a reward with a known range ([0, 1] inferred, "
                            "or --reward-range) keeps its mean inside.")
    p.add_argument("--from", dest="from_log", action=_FromAction, metavar="LOG",
                   help="a source run (repeat; each --hparams belongs to the --from before it; "
                   "a log of several runs gives each of them)")
    p.add_argument("--hparams", action=_SourceHparamsAction, metavar="K=V,...",
                   help="hyperparameters of the preceding --from LOG (override its metadata)")
    p.add_argument("--to", required=True, metavar="K=V,...",
                   help="hyperparameters of the run to predict (lr, group_size, batch, "
                   "momentum, schedule, warmup, optimizer, steps; kl and num_iterations at a "
                   "value the sources ran at, which the transfer does not carry; seed: "
                   "a source seed's r0, or, where the sources hold several seeds, another "
                   "seed's: their mean and spread); the others are the first source's")
    p.add_argument("--steps", type=integer, help="steps to predict, at most 100,000 (default: "
                   "the sources'); the same as --to steps=N, give one of them")
    p.add_argument("--level", type=finite_float, default=0.9, help="band level (0.9)")
    add_sweep_log_options(p)
    add_reward_range(p, where=", in every log", unknown=", and r0 and the plateau unbounded")
    add_json(p)
    p.set_defaults(handler=run)


class _FromAction(argparse.Action):
    """``--from LOG``: a new source; the ``--hparams`` after it belong to it."""

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace,
                 values: Any, option_string: str | None = None) -> None:
        """Start a new source."""
        sources = list(getattr(namespace, "sources", None) or [])
        sources.append([values, None])
        namespace.sources = sources


class _SourceHparamsAction(argparse.Action):
    """``--hparams K=V,...`` of the ``--from LOG`` before it."""

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace,
                 values: Any, option_string: str | None = None) -> None:
        """Attach the hyperparameters to the last source."""
        sources = getattr(namespace, "sources", None) or []
        if not sources:
            raise UsageError("--hparams must follow the --from LOG it belongs to")
        if sources[-1][1] is not None:
            raise UsageError(f"--hparams given twice for --from {sources[-1][0]}")
        sources[-1][1] = values


def run(args: argparse.Namespace) -> dict[str, Any]:
    """Predict the ``--to`` run from the ``--from`` runs, with a band."""
    from grpodyn.cli.sweep_logs import FALL_POINTS, load_sources, split_short
    from grpodyn.empirical.logs.sweep import parse_hparams, transfer

    if not getattr(args, "sources", None):
        raise UsageError("transfer needs at least one --from LOG")
    target = parse_hparams(args.to, name="--to")
    if not target:
        raise UsageError(f"--to {args.to!r}: no hyperparameters to predict; give key=value "
                         "pairs (e.g. --to lr=1e-4)")
    for option, steps in (("--steps ", args.steps), ("--to steps=", target.get("steps"))):
        if steps is not None and steps > MAX_STEPS:
            raise UsageError(f"{option}{steps:g}: at most {MAX_STEPS:,} steps to predict")
    if args.steps is not None and target.get("steps", args.steps) != args.steps:
        raise UsageError(f"--steps {args.steps} and --to steps={target['steps']} disagree: give "
                         "the steps to predict once")
    runs, notes = load_sources(args.sources, bars=not args.json, reward_key=args.reward_key,
                               step_key=args.step_key, logging_steps=args.logging_steps,
                               reward_range=args.reward_range,
                               option="--hparams after that log's --from", min_points=FALL_POINTS)
    runs, short, short_notes = split_short(runs)
    # N steps to predict are N points, labelled as the logs count them; the map's last index
    # is N - 1 (the first point is index 0)
    option = "--steps " if args.steps is not None else "--to steps="
    points = target.pop("steps", args.steps)
    if points is not None and points < 2:
        raise UsageError(f"{option}{points:g}: at least 2 steps to predict")
    last = None if points is None else int(points) - 1
    out = transfer(runs, target, steps=last, level=args.level, short_runs=short)
    out["warnings"] = notes + short_notes + out["warnings"]
    return finite_json(out)


def print_human(result: dict[str, Any]) -> None:
    """Print the notes, the band's calibration, the assumptions and ten points of the band.

    The points are every tenth of the path, its last step and the step where the mean peaks
    (its trough where it falls: an oscillatory map overshoots its plateau, said above the
    table).
    """
    for warning in result["warnings"]:
        print(f"note: {warning}")
    cal = result.get("band_calibration") or {}
    if cal.get("s") is not None:
        used = sum(h.get("status") == "used" for h in cal["held_out"])
        print(f"band: transfer error s = {cal['s']:.3g} (leave-one-setting-out over {used} "
              f"source settings), target at distance {cal['distance']:.2f} from the nearest")
    exponents = result.get("exponents") or {}
    lr_exp = exponents.get("tau_lr") or {}
    if lr_exp.get("value") is not None:
        print(f"tau-lr exponent {lr_exp['value']:.2f} +- {lr_exp['stderr']:.2f}: "
              f"{lr_exp['status']}")
    bg_exp = exponents.get("bg") or {}
    if bg_exp.get("status") and not any(w.endswith(bg_exp["status"].split(": ", 1)[-1])
                                        for w in result["warnings"]):  # said in a note
        value = f" {bg_exp['value']:.2f}" if bg_exp.get("value") is not None else ""
        print(f"Adam B G exponent{value}: {bg_exp['status']}")
    target = result.get("target") or {}
    if target:  # --to gives some settings, the first source the others: say which were used
        print("target: " + ", ".join(f"{k}={v:g}" if isinstance(v, float) else f"{k}={v}"
                                     for k, v in target.items()))
    for text in result.get("assumptions") or []:
        print(f"assumes: {_short(text)}")
    steps, mean = result["steps"], result["mean"]
    if not steps:
        print("no step to show: the band is empty")
        return
    rising = mean[-1] >= mean[0]  # a falling mean overshoots its plateau from above
    peak = (max if rising else min)(range(len(mean)), key=lambda i: mean[i])
    system = result.get("system") or {}
    if 0 < peak < len(mean) - 1 and system.get("regime") == "oscillatory":
        print(f"the mean overshoots: {mean[peak]:.3f} at step {steps[peak]:g}, then "
              f"{mean[-1]:.3f} at step {steps[-1]:g}: the map is oscillatory at this lr "
              f"(damping ratio zeta {system['zeta']:.2f} < 1), its momentum carries the reward "
              f"{'past' if rising else 'below'} the plateau and back")
    print(f"step  mean  [{100 * result['level']:.0f}% band]")
    shown = sorted({*range(0, len(steps), max(len(steps) // 10, 1)), len(steps) - 1, peak})
    for i in shown:  # every tenth step, the last one asked for and the mean's extreme
        print(f"{steps[i]:>5} {result['mean'][i]:.3f} [{result['lower'][i]:.3f}, "
              f"{result['upper'][i]:.3f}]")


def _short(text: str, width: int = 100) -> str:
    """Return an assumption as it is, or cut at a clause before ``width`` characters."""
    if len(text) <= width:
        return text
    cut = max(text.rfind(mark, 0, width - 3) for mark in ("; ", " (", ", "))
    return text[: cut if cut > 0 else width - 3].rstrip() + " ..."
