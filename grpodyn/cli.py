"""The ``grpodyn`` command line.

Every command takes ``--json`` and then prints exactly one JSON object on stdout. Bad input gives
a one-line message on stderr naming the input and the problem, and exit code 2.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, NoReturn

from grpodyn.ground import finite_json

if TYPE_CHECKING:
    from grpodyn.empirical.logs.loaders import Run

__all__ = ["main", "build_parser", "UsageError"]

EXIT_BAD_INPUT = 2


class UsageError(Exception):
    """Bad command-line input (exit code 2)."""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        raise UsageError(message)


def _finite_float(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if not math.isfinite(value):
        raise argparse.ArgumentTypeError(f"not a finite number: {text!r}")
    return value


def _integer(text: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not an integer: {text!r}") from None


def _reward_range(text: str) -> tuple[float, float]:
    parts = text.split(",")
    if len(parts) != 2:
        raise argparse.ArgumentTypeError(f"expected LO,HI, got {text!r}")
    lo, hi = (_finite_float(part.strip()) for part in parts)
    if not lo < hi:
        raise argparse.ArgumentTypeError(f"need LO < HI, got {text!r}")
    return lo, hi


def _add_analysis_options(parser: argparse.ArgumentParser, *, momentum_help: str) -> None:
    """--reward-range and --momentum: what a run's analysis may be told."""
    parser.add_argument("--reward-range", type=_reward_range, metavar="LO,HI",
                        help="the range the reward can reach (default: [0, 1] for an "
                             "accuracy, pass rate or binary reward; else unknown)")
    parser.add_argument("--momentum", type=_finite_float, help=momentum_help)


def _add_json(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--json", action="store_true",
                        help="print one JSON object on stdout and nothing else")


def _add_lag(parser: argparse.ArgumentParser) -> None:
    lag = parser.add_mutually_exclusive_group()
    lag.add_argument("--refresh", type=_integer, help="refresh interval K (sample-and-hold)")
    lag.add_argument("--staleness", type=_integer, help="fixed staleness d in steps")


def _positive_float(text: str) -> float:
    value = _finite_float(text)
    if value <= 0:
        raise argparse.ArgumentTypeError(f"not a positive number: {text!r}")
    return value


def _positive_integer(text: str) -> int:
    value = _integer(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"not a positive integer: {text!r}")
    return value


#: Hyperparameter overrides of the log options: option -> (RunMeta field, type, help).
_LOG_OVERRIDES = {
    "--lr": ("lr", _positive_float, "peak learning rate of the logged run (overrides the log)"),
    "--group-size": ("group_size", _positive_integer,
                     "G, completions per prompt (overrides the log)"),
    "--batch": ("batch", _positive_integer, "B, prompts per optimizer step (overrides the log)"),
    "--momentum": ("momentum", _finite_float,
                   "momentum, Adam's beta1 for Adam (overrides the log)"),
}


def _add_log_options(parser: argparse.ArgumentParser) -> None:
    """Add the options of every command that reads a log.

    Which run, which reward and step keys, the logging interval, and hyperparameter overrides
    (those the command lacks).
    """
    present = set(parser._option_string_actions)
    parser.add_argument("--run", help="which run of a log that holds several "
                        "(grpodyn runs LOG lists them)")
    parser.add_argument("--reward-key", help="the metric to read as the reward (default: the "
                        "trainer's reward)")
    parser.add_argument("--step-key", help="the field that holds the optimizer step")
    parser.add_argument("--logging-steps", type=_positive_integer,
                        help="optimizer steps between logged points, for console logs that "
                        "print no step and no progress counter")
    for option, (_, kind, text) in _LOG_OVERRIDES.items():
        if option not in present:
            parser.add_argument(option, type=kind, help=text)


def _load_log(args: argparse.Namespace) -> Run:
    """Load the run named by the log options of ``args`` (see ``_add_log_options``).

    The hyperparameter overrides are applied (source ``user``).
    """
    from grpodyn.empirical.logs.loaders import load_run

    run = load_run(args.log, run=args.run,
                   reward_key=args.reward_key, step_key=args.step_key,
                   logging_steps=args.logging_steps)
    return _with_overrides(run, args)


def _with_overrides(run: Run, args: argparse.Namespace) -> Run:
    """Apply the hyperparameter overrides of the log options of ``args`` to ``run``."""
    overrides = {field: getattr(args, option[2:].replace("-", "_"), None)
                 for option, (field, _, _) in _LOG_OVERRIDES.items()}
    run.meta = run.meta.with_overrides(**overrides)
    return run


def _cmd_predict(args: argparse.Namespace) -> dict[str, Any]:
    from grpodyn.numerics.predict import predict

    return predict(lr=args.lr, momentum=args.momentum, kappa=args.kappa,
                   refresh=1 if args.refresh is None else args.refresh,
                   staleness=0 if args.staleness is None else args.staleness,
                   group_size=args.group_size, noise=args.noise, r0=args.r0,
                   r_star=args.r_star, steps=args.steps).to_dict()


def _cmd_fit(args: argparse.Namespace) -> dict[str, Any]:
    from grpodyn.analysis import fit_run

    if not 0 < args.train_fraction <= 1:
        raise UsageError(f"--train-fraction must lie in (0, 1], got {args.train_fraction}")
    run = _load_log(args)
    return fit_run(run, model=args.model, momentum=args.momentum,
                   train_fraction=args.train_fraction, reward_range=args.reward_range)


def _cmd_forecast(args: argparse.Namespace) -> dict[str, Any]:
    from grpodyn.empirical.logs.run_analysis import analyse_run

    if args.train_fraction is None and args.until is None and args.horizon is None:
        raise UsageError("give --train-fraction, --until or --horizon")
    run = _load_log(args)
    until = args.until
    if args.train_fraction is None and until is None:
        until = float(run.steps[-1])
    analysis = analyse_run(run, momentum=args.momentum, reward_range=args.reward_range,
                           train_fraction=args.train_fraction, until=until,
                           horizon=args.horizon, level=args.level, diagnose_run=False,
                           forecaster=args.forecaster)
    out = {"source": run.source, "reward_key": run.reward_key, **analysis.forecast_dict()}
    out["reward_range"] = (None if analysis.reward_range is None
                           else list(analysis.reward_range))
    out["momentum"] = analysis.momentum
    out["warnings"] = list(dict.fromkeys(out["warnings"] + analysis.warnings))
    return finite_json(out)


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


def _cmd_runs(args: argparse.Namespace) -> dict[str, Any]:
    from grpodyn.empirical.logs.loaders import load_runs

    runs = load_runs(args.log, reward_key=args.reward_key, step_key=args.step_key,
                     logging_steps=args.logging_steps)
    return {"source": runs[0].source, "format": runs[0].format,
            "runs": [_run_summary(run) for run in runs]}


def _cmd_advise(args: argparse.Namespace) -> dict[str, Any]:
    from grpodyn.ground import InputError
    from grpodyn.numerics.advise import advise

    if (args.kappa is None) == (args.log is None):
        raise UsageError("give exactly one of --kappa and --log")
    measured = None
    kappa, momentum = args.kappa, args.momentum
    notes = []
    if args.log is not None:
        from grpodyn.empirical.logs.run_analysis import analyse_run

        run = _load_log(args)  # --momentum and --lr enter the run's metadata (source: user)
        assumed = run.meta.momentum is None
        if assumed:
            notes.append("momentum not in the log: Adam's default beta1 = 0.9 assumed; give "
                         "--momentum if the run used another")
        analysis = analyse_run(run, momentum=0.9 if assumed else None,
                               reward_range=args.reward_range, diagnose_run=False)
        momentum = analysis.momentum
        lr = analysis.lr
        if lr is None or not lr > 0:
            raise InputError(f"{args.log}: no learning rate in the log; give --lr")
        tau = analysis.dynamics["tau"]
        if tau["status"] not in ("determined", "singular"):
            raise InputError(f"{args.log}: tau is {tau['status']} ({tau['reason']}): kappa "
                             "cannot be measured from this log; give --kappa")
        stiffness = analysis.dynamics["stiffness"]["value"]
        kappa = stiffness / lr
        measured = {"kappa": kappa, "stiffness": stiffness, "tau": tau["value"],
                    "tau_stderr": tau.get("stderr"), "tau_status": tau["status"], "lr": lr,
                    "lr_source": analysis.lr_source, "run": run.run_name,
                    "warnings": list(run.warnings),
                    "lr_evidence": None if run.meta.lr is None else run.meta.lr.evidence,
                    "momentum": momentum,
                    "momentum_source": "assumed" if assumed else analysis.momentum_source,
                    "model": analysis.dynamics.get("model"),
                    "r_star": analysis.plateau.get("value"),
                    "plateau": analysis.plateau}
    elif momentum is None:
        momentum = 0.9
        notes.append("momentum not given: Adam's default beta1 = 0.9 assumed")
    advice = advise(kappa=kappa, momentum=momentum, target=args.target,
                    margin=args.margin, refresh=args.refresh or 1, staleness=args.staleness or 0)
    out = advice.to_dict()
    out["reasoning"] = notes + out["reasoning"]
    if measured is not None:
        out["measured"] = measured
        out["reasoning"].insert(0, f"from the log ({measured['model']} fit): tau = "
                                f"{measured['tau']:.4g} steps at the peak lr "
                                f"{measured['lr']:.4g} ({measured['lr_source']}), momentum "
                                f"{momentum:g} ({measured['momentum_source']}), so k = "
                                f"(1 - beta) / tau = {measured['stiffness']:.4g} and kappa = "
                                f"{kappa:.4g}")
        out["reasoning"][:0] = [w for w in measured["warnings"] if "runs in this log" in w]
        out["reasoning"].append(
            "caveat: a fitted tau measures the slow mode; stiff directions can limit the "
            "learning rate far below this (on grpodyn's tiny TRL runs Adam at lr 1e-3 already "
            "overshoots along its mean step, and lr 1e-2 diverges): raise lr in steps")
    return finite_json(out)


def _cmd_diagnose(args: argparse.Namespace) -> dict[str, Any]:
    from grpodyn.empirical.diagnostics.diagnose import diagnose

    run = _load_log(args)
    # diagnose reads G from run.meta (the user's --group-size, else the log's) with its source
    result = diagnose(run).to_dict()
    result["warnings"] = run.warnings
    result["hyperparameters"] = run.meta.to_dict()
    return finite_json(result)


def _cmd_export(args: argparse.Namespace) -> dict[str, Any]:
    from pathlib import Path

    from grpodyn.numerics.export import export

    out = Path(args.out)
    if out.exists() and not out.is_dir():
        raise UsageError(f"--out {args.out}: exists and is not a directory")
    files = export(args.lang, out)
    return {"lang": args.lang, "files": [str(f) for f in files]}


BANDIT_EXPERIMENTS = ("stiffness", "transition", "refresh", "staleness", "reuse", "group",
                      "trajectory")


def _cmd_bandit(args: argparse.Namespace) -> dict[str, Any]:
    from dataclasses import replace
    from functools import partial
    from pathlib import Path

    from grpodyn.empirical.bandit import lab
    from grpodyn.empirical.bandit.simulation import simulate_bandit
    from grpodyn.numerics.executor import run_tasks

    overrides = {k: v for k, v in {"estimator": args.estimator, "kl": args.kl,
                                   "kl_estimator": args.kl_estimator}.items() if v is not None}
    config = replace(lab.DEFAULT_CONFIG, **overrides)
    thresholds = replace(lab.THRESHOLD_CONFIG, **overrides)
    if args.write_log:
        target = Path(args.write_log)
        if target.exists():
            raise UsageError(f"--write-log {args.write_log}: exists; refusing to overwrite it")
        run = simulate_bandit(replace(config, momentum=args.momentum), steps=args.steps,
                              seeds=1, seed=args.seed)
        run.write_trainer_state(target)
        return {"log": str(target), "steps": args.steps, "config": run.config.__dict__}
    chosen = BANDIT_EXPERIMENTS if args.experiment == "all" else (args.experiment,)
    executor = _executor(args)
    kinds = {"refresh": "refresh", "staleness": "staleness", "reuse": "num_iterations"}
    singles = {
        "stiffness": partial(lab.measure_stiffness, config, seed=args.seed),
        "transition": partial(lab.transition_experiment, config),
        "group": partial(lab.group_size_experiment, seed=args.seed),
        "trajectory": partial(lab.trajectory_experiment, config, seed=args.seed),
    }
    # every experiment, and every lag of a threshold sweep, is one seeded task: one pool (or
    # Dask) run for all of them, results independent of the executor
    plans = {name: [lab.plan_threshold_experiment(kinds[name], thresholds, momentum=b,
                                                  seed=args.seed) for b in args.momenta]
             for name in chosen if name in kinds}
    tasks = [singles[name] for name in chosen if name in singles]
    tasks += [task for name in plans for plan in plans[name] for task in plan.tasks]
    results = iter(run_tasks(tasks, executor=executor, progress=False if args.json else None,
                             description="bandit"))
    done = {name: next(results) for name in chosen if name in singles}
    for name, name_plans in plans.items():
        done[name] = lab.finish_threshold_experiments(
            name_plans, [next(results) for plan in name_plans for _ in plan.tasks])
    out: dict[str, Any] = {"config": config.__dict__}
    for name in chosen:
        result = done[name]
        out[name] = ([r.to_dict() for r in result] if isinstance(result, list)
                     else result.to_dict())
    return finite_json(out)


def _add_executor(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--scheduler", metavar="ADDRESS",
                        help="run the simulations on this Dask scheduler (tcp://host:8786; "
                             "needs the dask extra); default: a local process pool, all cores")
    parser.add_argument("--serial", action="store_true",
                        help="run the simulations in this process, one after another")


def _executor(args: argparse.Namespace) -> str:
    """Return the executor of the commands that run many simulations (results independent)."""
    if args.scheduler is not None and args.serial:
        raise UsageError("give at most one of --scheduler and --serial")
    if args.scheduler is not None:
        if ":" not in args.scheduler:
            raise UsageError(f"--scheduler {args.scheduler}: not a scheduler address "
                             "(tcp://host:port)")
        try:
            import distributed  # noqa: F401
        except ImportError:
            raise UsageError("--scheduler needs Dask: pip install 'grpodyn[dask]'") from None
        return args.scheduler
    return "serial" if args.serial else "auto"


def _cmd_report(args: argparse.Namespace) -> dict[str, Any]:
    from pathlib import Path

    out = Path(args.out)
    if out.exists() and not out.is_dir():
        raise UsageError(f"--out {args.out}: exists and is not a directory")
    from grpodyn.progress import stage_bar

    stages = stage_bar("report", enabled=not args.json)
    try:
        return _report(args, out, stages)
    finally:
        if stages is not None:
            stages.close()


def _report(args: argparse.Namespace, out: Any, progress: Callable[[str], None] | None
            ) -> dict[str, Any]:
    """Write the report of a LOG, or the reproduction (see ``_cmd_report``)."""
    from grpodyn.report import write_report

    if args.log is not None:
        from grpodyn.run_report import write_run_report

        summary = write_run_report(_load_log(args), out, momentum=args.momentum,
                                   group_size=args.group_size, reward_range=args.reward_range,
                                   progress=progress)
        if args.json:
            return finite_json(summary)
        diagnosis = summary["diagnosis"]
        dynamics = summary["dynamics"]
        return {"html": summary["html"],
                "plateau": dynamics["plateau"] if dynamics["plateau"] is not None
                else f"{dynamics['plateau_status']}: {summary['plateau']['reason']}",
                "tau": dynamics["tau"] if dynamics["tau"] is not None
                else dynamics["tau_status"],
                "regime": dynamics["regime"] or "not determined",
                "stability_margin": dynamics["stability_margin"],
                "diagnosis": None if diagnosis is None else (diagnosis["primary"] or "healthy")}
    summary = write_report(out, progress=progress, quick=args.quick,
                           executor=_executor(args), bars=not args.json)
    if args.json:
        return finite_json(summary)
    return {"html": summary["html"], "derivations": summary["derivations"],
            "checks": f"{summary['checks_agree']} of {summary['checks_total']} agree",
            "sources": summary["sources"], "disagreements": summary["disagreements"]}


def _cmd_compare(args: argparse.Namespace) -> dict[str, Any]:
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
    runs = []
    for log in progress_bar(args.logs, total=len(args.logs), description="loading",
                            enabled=not args.json):
        if args.run is not None:  # one named run of each log
            args.log = log
            runs.append(_load_log(args))
            continue
        runs += [_with_overrides(run, args)
                 for run in load_runs(log, reward_key=args.reward_key, step_key=args.step_key,
                                      logging_steps=args.logging_steps)]
    comparison = compare_runs(
        runs, clock=args.clock, momentum=args.momentum, reward_range=args.reward_range,
        progress=lambda pairs: progress_bar(pairs, total=len(runs), description="analysing",
                                            enabled=not args.json))
    result = comparison.to_dict()
    if args.out is not None:
        import matplotlib.pyplot as plt

        plt.close(comparison.plot(path=args.out))
        result["figure"] = str(args.out)
    if not args.json:
        result["table"] = comparison.to_text()
    return finite_json(result)


def _sweep_runs(logs: list[str], hparams: list[str] | None, *, bars: bool) -> list:
    from grpodyn.empirical.logs.sweep import load_sweep_run, parse_hparams
    from grpodyn.progress import progress_bar

    hparams = hparams or []
    if len(hparams) not in (0, 1, len(logs)):
        raise UsageError(f"--hparams given {len(hparams)} times for {len(logs)} logs: give it "
                         "once (for every log) or once per log, in the logs' order")
    texts = hparams * len(logs) if len(hparams) == 1 else hparams or [""] * len(logs)
    pairs = list(zip(logs, texts, strict=True))
    return [load_sweep_run(log, parse_hparams(text))
            for log, text in progress_bar(pairs, total=len(pairs), description="loading runs",
                                          enabled=bars)]


def _cmd_sweep(args: argparse.Namespace) -> dict[str, Any]:
    from grpodyn.empirical.logs.sweep import fit_sweep
    from grpodyn.progress import stage_bar

    runs = _sweep_runs(args.logs, args.hparams, bars=not args.json)
    stages = stage_bar("sweep", enabled=not args.json)
    if stages is not None:
        stages(f"fitting {len(runs)} runs jointly")
    try:
        return finite_json(fit_sweep(runs).to_dict())
    finally:
        if stages is not None:
            stages.close()


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


def _cmd_transfer(args: argparse.Namespace) -> dict[str, Any]:
    from grpodyn.empirical.logs.sweep import load_sweep_run, parse_hparams, transfer

    if not getattr(args, "sources", None):
        raise UsageError("transfer needs at least one --from LOG")
    from grpodyn.progress import progress_bar

    runs = [load_sweep_run(path, parse_hparams(text or ""))
            for path, text in progress_bar(args.sources, total=len(args.sources),
                                           description="loading runs", enabled=not args.json)]
    target = parse_hparams(args.to, name="--to")
    return finite_json(transfer(runs, target, steps=args.steps, level=args.level))


def build_parser() -> argparse.ArgumentParser:
    """Build the argument parser of every command."""
    from grpodyn import __version__

    parser = _Parser(prog="grpodyn", description="Predictable GRPO: forecasts, stability limits "
                     "and diagnoses from a mean-field theory of training dynamics.",
                     epilog="grpodyn alone prints this usage (exit 0); grpodyn COMMAND -h "
                     "explains a command.")
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}",
                        help="print the version and exit")
    commands = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)

    p = commands.add_parser("predict", help="constants, regime and stability limits of a run",
                            description="Predict the dynamics of a run from its hyperparameters "
                            "(heavy-ball SGD: stiffness k = lr * kappa).")
    p.add_argument("--lr", type=_finite_float, required=True, help="learning rate eta")
    p.add_argument("--momentum", type=_finite_float, required=True, help="momentum beta in [0,1)")
    p.add_argument("--kappa", type=_finite_float, required=True, help="curvature scale kappa > 0")
    _add_lag(p)
    p.add_argument("--group-size", type=_integer, help="group size G (degenerate-group odds)")
    p.add_argument("--noise", type=_finite_float, help="per-step noise variance s^2")
    p.add_argument("--r0", type=_finite_float, help="initial expected reward")
    p.add_argument("--r-star", type=_finite_float, help="plateau (fixed point) of the reward")
    p.add_argument("--steps", type=_integer, help="number of steps of the predicted trajectory")
    _add_json(p)
    p.set_defaults(handler=_cmd_predict)

    p = commands.add_parser("fit", help="fit reward-curve models to a training log",
                            description="Fit the inertial closed form, the empirical "
                            "exponential law and baselines to the reward of a training log "
                            "of any supported trainer (TRL, verl, OpenRLHF, W&B, TensorBoard, "
                            "custom JSON/JSONL/CSV; a file or a run directory: grpodyn runs "
                            "LOG lists what it holds).")
    p.add_argument("log", help="the training log")
    p.add_argument("--model", default="all",
                   choices=["inertial", "exponential", "sigmoid", "exponential_lr", "power",
                            "all"], help="the curve model to fit (default: all of them)")
    _add_analysis_options(p, momentum_help="optimiser momentum (Adam beta1): fixes mass and "
                          "damping of the inertial model (default: the log's)")
    p.add_argument("--train-fraction", type=_finite_float, default=1.0,
                   help="fit on this leading fraction and forecast the rest with the "
                        "forecaster of `grpodyn forecast` (default 1)")
    _add_log_options(p)
    _add_json(p)
    p.set_defaults(handler=_cmd_fit)

    p = commands.add_parser("forecast", help="forecast the rest of a run, with a band",
                            description="Fit on the steps up to a cut and forecast the steps "
                            "after it (or up to --horizon): a stacked ensemble of curve models "
                            "(flat, linear, exponential, power, inertial, lr clock) with the "
                            "correlated-plus-white noise model of THEORY.md section 6.")
    p.add_argument("log", help="the training log")
    cut = p.add_mutually_exclusive_group()
    cut.add_argument("--train-fraction", type=_finite_float,
                     help="train on this leading fraction of the points")
    cut.add_argument("--until", type=_finite_float, help="train on the steps up to this one")
    p.add_argument("--horizon", type=_finite_float, help="forecast up to this step")
    p.add_argument("--level", type=_finite_float, default=0.9,
                   help="central probability of the band (default 0.9)")
    p.add_argument("--forecaster", choices=("ensemble", "learned_prior", "adaptive"),
                   default="ensemble",
                   help="ensemble: the stacked curve models (default); learned_prior: a "
                        "network trained on curves drawn from the theory's prior (LC-PFN "
                        "style; bands up to level 0.95); adaptive: level, trend and "
                        "relaxation members weighted by their rolling-origin errors inside "
                        "the training part, a conformal band, a change point widens it")
    _add_analysis_options(p, momentum_help="optimiser momentum (Adam beta1): enables the "
                          "inertial model (default: the log's)")
    _add_log_options(p)
    _add_json(p)
    p.set_defaults(handler=_cmd_forecast)

    p = commands.add_parser("runs", help="what a log holds: format, runs, metrics, "
                            "hyperparameters",
                            description="List the runs of a training log (a file or a "
                            "checkpoint, run, W&B or TensorBoard directory): format, steps, "
                            "metrics found and hyperparameters with their source.")
    p.add_argument("log", help="the training log (file or directory)")
    p.add_argument("--reward-key", help="the metric to read as the reward")
    p.add_argument("--step-key", help="the field that holds the optimizer step")
    p.add_argument("--logging-steps", type=_positive_integer,
                   help="optimizer steps between logged points (console logs without steps)")
    _add_json(p)
    p.set_defaults(handler=_cmd_runs)

    p = commands.add_parser("bandit", help="the softmax-bandit lab: theory against simulation",
                            description="Run the softmax-bandit experiments (stiffness three "
                            "ways, transition, lag thresholds, group size, trajectory) or write "
                            "a simulated run as a TRL trainer_state.json.")
    p.add_argument("--experiment", default="all", choices=[*BANDIT_EXPERIMENTS, "all"],
                   help="which experiment to run (default: all)")
    p.add_argument("--estimator", choices=["grpo", "dr_grpo", "rloo"],
                   help="advantage estimator of the simulated trainer (default: the lab's)")
    p.add_argument("--kl", type=_finite_float, help="KL coefficient lam (TRL's beta)")
    p.add_argument("--kl-estimator", choices=["k3", "forward"],
                   help="estimator of the KL penalty (default: the lab's)")
    p.add_argument("--momenta", type=_finite_float, nargs="+", default=[0.0, 0.5, 0.9],
                   help="momenta of the lag-threshold sweeps")
    p.add_argument("--momentum", type=_finite_float, default=0.0,
                   help="momentum of a run written with --write-log")
    p.add_argument("--write-log", help="write one simulated run to this trainer_state.json")
    p.add_argument("--steps", type=_integer, default=300, help="steps of --write-log")
    p.add_argument("--seed", type=_integer, default=0, help="random seed (default 0)")
    _add_executor(p)
    _add_json(p)
    p.set_defaults(handler=_cmd_bandit)

    p = commands.add_parser("advise", help="learning rate for a target regime, with reasons",
                            description="The learning rate that makes the mean-field map "
                            "critically damped (fastest without oscillation) or keeps a margin "
                            "from the stability limit, for a measured curvature or a log.")
    source = p.add_mutually_exclusive_group()
    source.add_argument("--kappa", type=_finite_float, help="curvature scale kappa > 0")
    source.add_argument("--log", help="a training log to measure kappa from (fitted tau)")
    p.add_argument("--lr", type=_finite_float,
                   help="the log's peak learning rate, if not logged")
    _add_analysis_options(p, momentum_help="momentum beta, Adam's beta1 for Adam (with --log: "
                          "default the log's; with --kappa: default 0.9, said so)")
    p.add_argument("--target", choices=["critical", "margin"], default="critical",
                   help="critical: fastest without oscillation; margin: a fraction of the "
                   "stability limit (default: critical)")
    p.add_argument("--margin", type=_finite_float, default=0.5,
                   help="fraction of the stability limit (default 0.5)")
    _add_lag(p)
    _add_log_options(p)
    _add_json(p)
    p.set_defaults(handler=_cmd_advise)

    p = commands.add_parser("diagnose", help="which failure mode a run shows, with evidence",
                            description="Score reward hacking, advantage degeneracy, policy "
                            "concentration and dynamical instability from a training log "
                            "(THEORY.md section 10); modes the log cannot judge are named.")
    p.add_argument("log", help="the training log")
    p.add_argument("--group-size", type=_integer,
                   help="G, when the log and its config do not say")
    _add_log_options(p)
    _add_json(p)
    p.set_defaults(handler=_cmd_diagnose)

    p = commands.add_parser("export", help="export the theory as code in another language",
                            description="Write every derivation as functions in another "
                            "language (same names, same argument order).")
    p.add_argument("--lang", required=True,
                   choices=["c", "python", "latex", "javascript", "julia", "rust"],
                   help="the language to write")
    p.add_argument("--out", required=True, help="output directory (created if needed)")
    _add_json(p)
    p.set_defaults(handler=_cmd_export)

    p = commands.add_parser("report", help="[LOG] reproduce the theory's claims (figures and "
                            "HTML), or, given an optional LOG, report on that run",
                            usage="grpodyn report [LOG] [options]",
                            description="Without LOG: reproduce the claims of the theory on the "
                            "embedded default and write figures and an HTML report. With an "
                            "optional training LOG: the fit, forecast, regime, margins and "
                            "diagnosis of that run.")
    p.add_argument("log", nargs="?", metavar="LOG", help="optional training log: report on "
                   "that run instead of the embedded default")
    p.add_argument("--out", default="grpodyn-report", help="output directory "
                   "(default: grpodyn-report)")
    _add_analysis_options(p, momentum_help="momentum (Adam's beta1) of the logged run, for its "
                          "regime and margins (default: the log's, else not determined)")
    p.add_argument("--group-size", type=_integer, help="G of the logged run, for the diagnosis")
    _add_log_options(p)
    p.add_argument("--quick", action="store_true",
                   help="fewer seeds and lags in the bandit lab: a smoke test, not the figures")
    _add_executor(p)
    _add_json(p)
    p.set_defaults(handler=_cmd_report)

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
                   help="align on the optimizer step or on the learning-rate clock (sum of lr "
                   "over the steps; default: step)")
    p.add_argument("--out", metavar="FIG", help="write the figure here (PNG, PDF or SVG by "
                   "the suffix; written atomically)")
    _add_analysis_options(p, momentum_help="momentum (Adam's beta1) of every run (default: "
                          "each log's)")
    _add_log_options(p)
    _add_json(p)
    p.set_defaults(handler=_cmd_compare)

    p = commands.add_parser("sweep", help="fit a sweep of runs jointly: shared constants, "
                            "tau-lr exponent, G vs B G test, collapses",
                            description="Fit runs of one model and task, each with its own "
                            "hyperparameters, with shared constants (kappa, r0, r*, Adam's "
                            "noise ratio). Hyperparameters come from each log's metadata; "
                            "--hparams k=v,... overrides them (keys: lr, group_size, batch, "
                            "momentum, kl, num_iterations, schedule, warmup, optimizer, seed; "
                            "runs of one seed share r0).")
    p.add_argument("logs", nargs="+", metavar="LOG", help="training logs of the sweep")
    p.add_argument("--hparams", action="append", metavar="K=V,...",
                   help="hyperparameters: once for every log, or once per log in their order")
    _add_json(p)
    p.set_defaults(handler=_cmd_sweep)

    p = commands.add_parser("transfer", help="predict a run not yet made from one or more "
                            "runs with other hyperparameters",
                            description="Fit the --from runs jointly and predict the reward "
                            "path of the --to hyperparameters with a band.")
    p.add_argument("--from", dest="from_log", action=_FromAction, metavar="LOG",
                   help="a source run (repeat; each --hparams belongs to the --from before it)")
    p.add_argument("--hparams", action=_SourceHparamsAction, metavar="K=V,...",
                   help="hyperparameters of the preceding --from LOG (override its metadata)")
    p.add_argument("--to", required=True, metavar="K=V,...",
                   help="hyperparameters of the run to predict (lr, group_size, batch, "
                   "momentum, kl, num_iterations, schedule, warmup, optimizer, steps, seed: "
                   "a source seed's r0); the others are the first source's")
    p.add_argument("--steps", type=_integer, help="steps to predict (default: the sources')")
    p.add_argument("--level", type=_finite_float, default=0.9, help="band level (0.9)")
    _add_json(p)
    p.set_defaults(handler=_cmd_transfer)
    return parser


def _print_human(result: dict[str, Any], command: str) -> None:
    printer = _PRINTERS.get(command)
    if printer is not None:
        printer(result)
        return
    for key, value in result.items():
        if isinstance(value, list) and value and all(isinstance(v, str) for v in value):
            print(f"{key}:")
            for line in value:
                print(f"  - {line}")
        elif isinstance(value, list) and len(value) > 8:
            shown = ", ".join(f"{v:.4g}" if isinstance(v, float) else str(v) for v in value[:4])
            print(f"{key}: [{shown}, ... {len(value)} values]")
        elif isinstance(value, float):
            print(f"{key}: {value:.6g}")
        else:
            print(f"{key}: {value}")


def _print_sweep(result: dict[str, Any]) -> None:
    print(f"sweep of {result['n_runs']} runs ({result['n_fitted']} fitted)")
    for warning in result["warnings"]:
        print(f"  note: {warning}")
    for name, c in result["constants"].items():
        err = f" +- {c['stderr']:.3g}" if c.get("stderr") is not None else ""
        print(f"  {name:12s} {c['value']:.4g}{err}  ({c.get('status', '')})")
    for optimizer, e in result["tau_lr_exponent"].items():
        if e.get("value") is None:
            print(f"  tau-lr exponent ({optimizer}): {e['status']}")
        else:
            print(f"  tau-lr exponent ({optimizer}): {e['value']:.3g} +- {e['stderr']:.2g} "
                  "(expected -1)")
    for optimizer, e in result["bg_test"].items():
        if "bg_exponent" in e:
            print(f"  {optimizer}: k ~ (B G)^{e['bg_exponent']['value']:.2g} "
                  f"(+- {e['bg_exponent']['stderr']:.2g}, derivation "
                  f"{e['predicted_bg_exponent']:.2g}), G at fixed B G: "
                  f"{e['g_exponent_at_fixed_bg']['value']:.2g} "
                  f"+- {e['g_exponent_at_fixed_bg']['stderr']:.2g} (derivation 0)")
    for run in result["runs"]:
        r2 = run.get("r2")
        mark = "collapsed" if run["collapsed"] else (f"R^2 {r2:.3f}" if r2 is not None else "")
        print(f"  {run['name']}: {mark}")
    for entry in result["stability"]:
        print(f"  stability: {entry['name']}: {entry['limit']} limit; {entry['explanation']}")


def _print_transfer(result: dict[str, Any]) -> None:
    for warning in result["warnings"]:
        print(f"note: {warning}")
    cal = result.get("band_calibration") or {}
    if cal.get("s") is not None:
        used = sum(h.get("status") == "used" for h in cal["held_out"])
        print(f"band: transfer error s = {cal['s']:.3g} (leave-one-setting-out over {used} "
              f"source settings), target at distance {cal['distance']:.2f} from the nearest")
    print(f"step  mean  [{100 * result['level']:.0f}% band]")
    steps = result["steps"]
    for i in range(0, len(steps), max(len(steps) // 10, 1)):
        print(f"{steps[i]:5d} {result['mean'][i]:.3f} [{result['lower'][i]:.3f}, "
              f"{result['upper'][i]:.3f}]")


def _print_fit(result: dict[str, Any]) -> None:
    print(f"{result['source']} ({result['format']}, {result['n_points']} points, "
          f"reward = {result['reward_key']})")
    for warning in result["warnings"]:
        print(f"  note: {warning}")
    noise = result["noise"]
    print(f"noise sigma {noise['sigma']:.4g}: R^2 ceiling {noise['r2_ceiling']:.3f}")
    for name, entry in result["models"].items():
        params = ", ".join(_shown_param(entry, k, v) for k, v in entry["params"].items()
                           if v is not None)
        mark = "*" if name == result["best"] else " "
        singular = "  [singular: no standard errors]" if entry.get("singular") else ""
        print(f"{mark} {name:15s} R^2 {entry['r2']:.3f}  AIC {entry['aic']:.1f}  {params}"
              f"{singular}")
    if result.get("plateau"):
        p = result["plateau"]
        value = (f"{p['value']:.4g} [{p['lower']:.4g}, {p['upper']:.4g}]"
                 if p["status"] == "determined" else p["status"])
        print(f"plateau: {value} ({p.get('reason', '')})")
    if result.get("forecast"):
        f = result["forecast"]
        print(f"forecast ({f['model']}, {f['n_train']} -> {f['n_holdout']} points): holdout "
              f"R^2 {_number(f['r2_holdout'])}, MAE {f['mae_holdout']:.4g}, "
              f"{100 * f['coverage']:.0f}% inside the {100 * f['level']:.0f}% band")


def _shown_param(entry: dict[str, Any], name: str, value: float) -> str:
    """Format one fitted parameter for the terminal.

    A parameter at a bound, or r* of a fit whose shape sits at a bound, is said so instead of
    printed with a meaningless error.
    """
    at_bounds = set(entry.get("at_bounds", ()))
    if name == "r_star" and at_bounds - {"r_star"}:
        return "r_star=not determined"
    text = f"{name}={value:.4g}"
    if name in at_bounds:
        return text + " (at bound)"
    err = entry["stderr"][name]
    return text + (f"+-{err:.2g}" if err is not None else "")


def _number(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.3f}"


def _print_forecast(result: dict[str, Any]) -> None:
    print(f"{result['source']}: forecast of {result['reward_key']} from "
          f"{result['train_points']} points (to step {result['cut_step']:g})")
    for warning in result["warnings"]:
        print(f"  note: {warning}")
    weights = ", ".join(f"{k} {v:.2f}" for k, v in result["weights"].items() if v > 0)
    print(f"model: {result['model']} ({result['weighting']}: {weights})")
    p = result["plateau"]
    if p["status"] == "determined":
        print(f"plateau: {p['value']:.4g} [{p['lower']:.4g}, {p['upper']:.4g}]")
    else:
        print(f"plateau: {p['status']}: {p['reason']}")
    steps = result["steps"]
    picks = sorted({0, len(steps) // 2, len(steps) - 1})
    for i in picks:
        print(f"  step {steps[i]:g}: {result['point'][i]:.4g} [{result['lower'][i]:.4g}, "
              f"{result['upper'][i]:.4g}] ({100 * result['level']:.0f}% band)")
    if "mae" in result:
        print(f"held out: MAE {result['mae']:.4g}, {100 * result['coverage']:.0f}% inside the "
              f"band")
def _print_runs(result: dict[str, Any]) -> None:
    runs = result["runs"]
    print(f"{result['source']}: {result['format']}, {len(runs)} run{'s' * (len(runs) != 1)}")
    for run in runs:
        name = run["name"] or "(one run)"
        print(f"  {name}: {run['n_points']} points, steps {run['first_step']:g}-"
              f"{run['last_step']:g}" + (" (reconstructed)" if run["steps_reconstructed"]
                                          else ""))
        print("    metrics: " + ", ".join(f"{k} <- {v}" for k, v in run["metrics"].items()))
        for name, h in run["hyperparameters"].items():
            print(f"    {name} = {h['value']} [{h['source']}] {h['evidence']}")
        for warning in run["warnings"]:
            print(f"    note: {warning}")


def _print_diagnosis(result: dict[str, Any]) -> None:
    print(f"{result['source']}: {result['primary'] or 'healthy (no mode flagged)'}")
    if result.get("state"):
        print(f"  state: {result['state']}: {result.get('state_evidence', '')}")
    for warning in result["warnings"]:
        print(f"  note: {warning}")
    for name, verdict in result["modes"].items():
        mark = "!" if verdict["flag"] else ("?" if not verdict["judged"] else " ")
        score = f"{verdict['score']:.2f}" if verdict["judged"] else " -- "
        print(f"{mark} {name:22s} {score}  {verdict['evidence']}")


def _print_compare(result: dict[str, Any]) -> None:
    print(f"{len(result['runs'])} runs on the {result['clock']} clock")
    print(result["table"])
    if "figure" in result:
        print(f"figure: {result['figure']}")


def _print_report(result: dict[str, Any]) -> None:
    if "disagreements" not in result:  # the report of one LOG
        _print_human(result, "")
        return
    from grpodyn.claims import by_reason  # here: the other commands need neither registry
    from grpodyn.html import NO_REASON
    print(f"{result['html']}: {result['derivations']} derivations; claims: "
          f"{result['checks']}")
    for name, s in result["sources"].items():
        print(f"  {name} (THEORY.md {', '.join(s['sections'])}): {s['agree']} of "
              f"{s['total']} agree")
    print(f"what disagrees, and why ({len(result['disagreements'])}):")
    for reason, rows in by_reason(result["disagreements"]):
        for d in rows:
            print(f"  - {d['claim']}: stated {d['stated']}; computed {d['computed'][:90]}"
                  + ("..." if len(d["computed"]) > 90 else ""))
        print(f"    why: {reason or NO_REASON}")


#: The human-readable printer of each command that has its own (the others print key: value).
_PRINTERS: dict[str, Callable[[dict[str, Any]], None]] = {
    "sweep": _print_sweep, "transfer": _print_transfer, "runs": _print_runs,
    "fit": _print_fit, "forecast": _print_forecast, "diagnose": _print_diagnosis,
    "compare": _print_compare, "report": _print_report,
}


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit code."""
    from grpodyn.empirical.logs.loaders import LogFormatError
    from grpodyn.ground import InputError

    argv = sys.argv[1:] if argv is None else list(argv)
    parser = build_parser()
    if not argv:  # the usage, as a request for it (exit 0), not as an error
        parser.print_help()
        return 0
    args = None
    try:
        args = parser.parse_args(argv)
        handler: Callable[[argparse.Namespace], dict[str, Any]] = args.handler
        result = handler(args)
    except SystemExit as exc:  # --help and --version print and exit 0
        return int(exc.code or 0)
    except (UsageError, InputError, LogFormatError) as exc:
        print(f"grpodyn: error: {exc}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except OSError as exc:  # a file that cannot be written, a Dask scheduler out of reach, ...
        scheduler = getattr(args, "scheduler", None)
        where = f"--scheduler {scheduler}: " if scheduler else ""
        print(f"grpodyn: error: {where}{exc}", file=sys.stderr)
        return EXIT_BAD_INPUT
    if args.json:
        json.dump(result, sys.stdout, allow_nan=False)
        sys.stdout.write("\n")
    else:
        _print_human(result, args.command)
    return 0


def console_main() -> NoReturn:
    """Entry point of the ``grpodyn`` console script."""
    try:
        code = main()
        sys.stdout.flush()
    except BrokenPipeError:  # the reader (``| head``) closed the pipe: stop quietly
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        code = 0
    sys.exit(code)
