"""``grpodyn advise``: a learning rate, with reasons.

With ``--kappa``, the lr for a target regime of the theory; with ``--log``, the lr a logged run
argues for.
"""

from __future__ import annotations

import argparse
from typing import Any

from grpodyn.cli.options import (
    UsageError,
    add_analysis_options,
    add_json,
    add_lag,
    add_log_options,
    finite_float,
    learning_rate,
    load_log,
    log_overrides,
    naming_the_run,
    positive_integer,
    print_plain,
    print_wrapped,
)
from grpodyn.cli.predict import check_lag_and_momentum
from grpodyn.ground import finite_json


def add_parser(commands: argparse._SubParsersAction) -> None:
    """Add the ``advise`` command and its options to ``commands``."""
    p = commands.add_parser("advise", help="learning rate for a target regime, with reasons",
                            description="With --kappa: the learning rate that makes the "
                            "mean-field map critically damped (fastest without oscillation) or "
                            "keeps a margin from the stability limit. With --log: the lr a run "
                            "argues for (raise, keep or lower, as a multiple of its own lr and "
                            "absolute when its lr is known), on a measured relaxation time or a "
                            "bound, with an interval, a status and warnings.")
    source = p.add_mutually_exclusive_group()
    source.add_argument("--kappa", type=finite_float, help="curvature scale kappa > 0")
    source.add_argument("--log", help="a training log to advise from")
    p.add_argument("--lr", type=learning_rate,
                   help="the log's peak learning rate, if not logged")
    add_analysis_options(p, momentum_help="momentum beta, Adam's beta1 for Adam (with --log: "
                          "default the log's; with --kappa: default 0.9, said so)")
    p.add_argument("--target", choices=["critical", "margin", "settling"],
                   help="with --kappa: critical: fastest without overshoot; settling: fastest "
                   "into the 10%% band for good (an overshoot within it; without --refresh or "
                   "--staleness); margin: a fraction of the stability limit (default: critical, "
                   "or margin where --margin is given; with a lag, the lagged map's critical "
                   "damping)")
    p.add_argument("--margin", type=finite_float,
                   help="fraction of the stability limit (default 0.5): with --kappa the target "
                   "margin's lr, and the cap of the critical and settling targets where a lag "
                   "lowers the limit; with --log: the multiple of the lr of a run that fell")
    p.add_argument("--steps", type=positive_integer, metavar="N",
                   help="with --log: the horizon: the least lr that reaches 90%% of the "
                   "attainable gain within N steps, however far from the run's (approach it "
                   "in raises of at most 1 / --margin, x2 by default). Without it the horizon "
                   "is the run's own length and the advice may also raise toward the fastest "
                   "settling the stability allows (headroom), by at most 1 / --margin, so the "
                   "two can differ at N = the length")
    p.add_argument("--sweep", action="append", metavar="LOG",
                   help="with --log: a run of the same model and task at another lr, G or B "
                   "(repeat; read with the same --reward-key, --step-key and --logging-steps; "
                   "a log of several runs gives each); the joint fit of grpodyn sweep of these "
                   "runs and the --log run measures the tau-lr exponent p and the B G exponent the "
                   "advice uses, and the lowest lr at which a run of it fell (above every lr "
                   "that held, at the run's optimizer, G, B, updates per batch and KL) caps "
                   "the advice at the margin of that lr")
    p.add_argument("--sweep-hparams", action="append", metavar="K=V,...",
                   help="hyperparameters of the --sweep runs: once for every run, or once per "
                   "run in their order (as grpodyn sweep --hparams)")
    add_lag(p)
    add_log_options(p)
    add_json(p)
    p.set_defaults(handler=run)


def _check_options(args: argparse.Namespace) -> None:
    """Refuse an option the chosen source (``--kappa`` or ``--log``) would leave unused.

    Also refuses what the stability analysis cannot take (:func:`check_lag_and_momentum`).
    """
    if (args.kappa is None) == (args.log is None):
        raise UsageError("give exactly one of --kappa and --log")
    check_lag_and_momentum(args)
    if args.sweep_hparams and not args.sweep:
        raise UsageError("--sweep-hparams needs --sweep: it gives the hyperparameters of the "
                         "--sweep runs")
    if args.log is None:
        log_only = {"--sweep": args.sweep, "--steps": args.steps, "--lr": args.lr,
                    "--reward-range": args.reward_range, "--run": args.run,
                    "--reward-key": args.reward_key, "--logging-steps": args.logging_steps,
                    "--step-key": args.step_key, "--group-size": args.group_size,
                    "--batch": args.batch}
        given = [flag for flag, value in log_only.items() if value]
        if given:
            raise UsageError(f"{', '.join(given)} need --log (with --kappa the advice is the "
                             "lr itself, from kappa)")
        return
    if args.refresh is not None or args.staleness is not None:
        raise UsageError("--refresh and --staleness need --kappa: with --log the run's own "
                         "history bounds the lr, whatever its lag")
    if args.target is not None:
        raise UsageError(f"--target {args.target} needs --kappa: with --log the goal is the "
                         "gain within --steps (default: the run's own length)")


def _sweep_fit(args: argparse.Namespace, run: Any) -> tuple[Any, list, list[str]]:
    """Fit the ``--sweep`` runs jointly with the ``--log`` run; return the fit, runs and notes.

    The runs returned are those too short for the fit (under ten points), read for their
    falls only.

    The ``--log`` run joins the fit once: by its own log, with the hyperparameters the log and
    the log options (``--lr``, ``--momentum``, ``--group-size``, ``--batch``) give, unless its
    file is among the ``--sweep`` logs (found by resolved path, as ``grpodyn sweep`` finds a
    log given twice), where it is read with them. A ``--sweep`` of the log's file alone is
    refused where the file holds no other run: one run measures no exponent across lr, G or B,
    yet would be reported as a sweep. The notes are those on the runs left out: too short
    for the fit (at loading), collapsed or with a reward that never moved (by the fit).
    """
    from pathlib import Path

    from grpodyn.cli.sweep import sweep_runs
    from grpodyn.cli.sweep_logs import FALL_POINTS, split_short
    from grpodyn.empirical.logs.sweep import fit_sweep
    from grpodyn.empirical.logs.sweep_runs import sweep_run_of

    runs, notes = sweep_runs(args.sweep, args.sweep_hparams, bars=not args.json,
                             reward_key=args.reward_key, step_key=args.step_key,
                             logging_steps=args.logging_steps,
                             reward_range=args.reward_range, option="--sweep-hparams",
                             min_points=FALL_POINTS)
    own = [path for path in args.sweep if Path(path).resolve() == Path(args.log).resolve()]
    if own:
        if own == args.sweep and len(runs) == 1 and not notes:  # the log's file, one run
            raise UsageError(f"--sweep {own[0]}: the same file as --log {args.log}, with no "
                             "other run; a sweep needs runs at another lr, G or B beside it")
        _own_sweep_hparams(args, run, args.sweep.index(own[0]))
    else:
        name = args.log if run.run_name is None else f"{args.log} [{run.run_name}]"
        given = log_overrides(args)
        runs.insert(0, sweep_run_of(
            run, args.log, {k: v for k, v in given.items() if v is not None}, name=name,
            reward_range=args.reward_range,
            option=f"--sweep-hparams, naming the log among the --sweep logs (--sweep "
                   f"{args.log}), or all but the optimizer with --lr, --momentum, --group-size "
                   "and --batch: the --log run joins the sweep fit"))
    runs, short, short_notes = split_short(runs)
    fit = fit_sweep(runs)
    left_out = [w for w in fit.warnings for r in fit.runs
                if r not in fit.fitted and w.startswith(f"{r.name}: ")]
    return fit, short, notes + short_notes + left_out


def _own_sweep_hparams(args: argparse.Namespace, run: Any, index: int) -> None:
    """Give the ``--log`` run the ``--sweep-hparams`` of its own file among the ``--sweep`` logs.

    The joint fit reads the file with them; the advice on the run reads them too (its lr, its
    momentum instead of an assumed 0.9, its optimizer, which the sweep's falls are compared
    at), unless the log options (``--lr``, ``--momentum``, ``--group-size``, ``--batch``) give
    them.
    """
    from grpodyn.empirical.logs.sweep import parse_hparams

    texts = args.sweep_hparams or []
    if not texts:
        return
    given = parse_hparams(texts[0] if len(texts) == 1 else texts[index], name="--sweep-hparams")
    options = log_overrides(args)
    run.meta = run.meta.with_overrides(**{
        key: given[key] for key in ("lr", "momentum", "group_size", "batch", "kl",
                                    "num_iterations", "optimizer")
        if key in given and options.get(key) is None})


def run(args: argparse.Namespace) -> dict[str, Any]:
    """Advise from the theory (``--kappa``) or from a log (``--log``)."""
    from grpodyn.numerics.advise import MARGIN, advise

    _check_options(args)
    margin = MARGIN if args.margin is None else args.margin
    if args.log is not None:
        from grpodyn.empirical.logs.advice import advise_log

        run = load_log(args)  # --momentum and --lr enter the run's metadata (source: user)
        sweep, short, notes = _sweep_fit(args, run) if args.sweep else (None, [], [])
        with naming_the_run(run):  # the run of a log of several; records merged on a step
            out = advise_log(run, steps=args.steps, reward_range=args.reward_range,
                             margin=margin, sweep=sweep, sweep_short=short).to_dict()
        if sweep is not None:
            out["warnings"] = notes + out["warnings"]
        return finite_json(out)
    notes = []
    momentum = args.momentum
    if momentum is None:
        momentum = 0.9
        notes.append("momentum not given: Adam's default beta1 = 0.9 assumed")
    target = args.target or ("critical" if args.margin is None else "margin")
    advice = advise(kappa=args.kappa, momentum=momentum, target=target,
                    margin=margin,
                    refresh=1 if args.refresh is None else args.refresh,
                    staleness=0 if args.staleness is None else args.staleness)
    out = advice.to_dict()
    out["reasoning"] = notes + out["reasoning"]
    return finite_json(out)


def print_human(result: dict[str, Any]) -> None:
    """Print the advice: direction, interval, basis and reasons."""
    if "recommendation" not in result:  # --kappa: the theory's advice
        print_plain(result)
        return
    rec, interval = result["recommendation"], result["interval"]
    absolute = "" if rec["lr"] is None else f" = lr {rec['lr']:.3g}"
    g_run = result["group_batch"]["group_size"]
    group = (f"; G {g_run} -> {rec['group_size']} (see the note)"
             if rec["group_size"] is not None and rec["group_size"] != g_run else "")
    print(f"{result['source']}{' [' + result['run'] + ']' if result['run'] else ''}: "
          f"{rec['direction']} the lr x{rec['lr_ratio']:.3g}{absolute} ({result['status']})"
          f"{group}")
    print_wrapped(_interval_words(rec, interval["lr_ratio"]), first="  interval: ",
                  rest="      ")
    print_wrapped(result["basis"]["text"], first="  basis: ", rest="      ")
    for line in result["reasoning"]:
        if line != result["basis"]["text"]:
            print_wrapped(line, first="  - ", rest="      ")
    print_wrapped(f"{result['group_batch']['effect']} "
                  f"({result['group_batch']['exponent']['status']})", first="  G and B: ",
                  rest="      ")
    for warning in result["warnings"]:
        print_wrapped(warning, first="  note: ", rest="      ")


def _interval_words(recommendation: dict[str, Any], ratios: list[float | None]) -> str:
    """Say the interval of the lr ratio as the quantity it bounds.

    An interval that leaves out the advice bounds another quantity, named before its numbers:
    for ``keep`` the least lr that reaches the goal, below x1 where the run is already faster
    than its goal; for a raise capped at one step's most, the raise the evidence asks.
    """
    shown = "[" + ", ".join("open" if v is None else f"x{v:.3g}" for v in ratios) + "]"
    ratio, (lo, hi) = recommendation["lr_ratio"], ratios
    if recommendation["direction"] == "keep" and hi is not None and hi < ratio:
        return (f"of the least lr that still reaches the goal, not of the advice: {shown} of "
                f"the run's lr; the advice x{ratio:.3g} is above it, so the run's lr reaches the "
                "goal already")
    if recommendation["direction"] == "raise" and lo is not None and lo > ratio:
        return (f"of the raise the evidence asks, not of the advice: {shown} of the run's lr; "
                f"the advice x{ratio:.3g} is one raise toward its lower end, the most one step "
                "takes, advised again after it")
    return f"{shown} of the run's lr"
