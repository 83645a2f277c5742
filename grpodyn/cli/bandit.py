"""``grpodyn bandit``: the softmax-bandit lab, theory against simulation."""

from __future__ import annotations

import argparse
from typing import Any

from grpodyn.cli.options import (
    MAX_STEPS,
    UsageError,
    add_executor,
    add_json,
    executor_of,
    finite_float,
    integer,
    non_negative_integer,
    print_plain,
    print_wrapped,
)
from grpodyn.ground import finite_json

BANDIT_EXPERIMENTS = ("stiffness", "transition", "refresh", "staleness", "reuse", "group",
                      "trajectory")
#: The KL coefficients every experiment of the lab holds (measured on its default settings).
#: Above 10 the reuse experiment's simulation diverges (from 20 on; the transition's predicted
#: momentum leaves [0, 1) from 200; near 1e300 the update's variance overflows); below 0.1 the
#: stiffness falls and the threshold experiments' lags grow with it (staleness: 16 s at 0.1,
#: 107 s at 0.01; at 1e-4 the refresh sweep runs out of memory) while the policy saturates.
KL_RANGE = (0.1, 10.0)
#: The threshold experiments: the lag each sweeps (the config's field) and its symbol.
LAGS = {"refresh": ("refresh", "K"), "staleness": ("staleness", "d"),
        "reuse": ("num_iterations", "mu")}
#: The settings a printed config always shows; the others only where they differ from the
#: simulator's defaults.
SHOWN = ("lr", "momentum", "group_size", "prompts", "estimator", "kl", "kl_estimator")
#: The momenta of the lag-threshold sweeps when ``--momenta`` is not given.
MOMENTA = (0.0, 0.5, 0.9)


def add_parser(commands: argparse._SubParsersAction) -> None:
    """Add the ``bandit`` command and its options to ``commands``."""
    p = commands.add_parser("bandit", help="the softmax-bandit lab: theory against simulation",
                            description="Run the softmax-bandit experiments (stiffness three "
                            "ways, transition, lag thresholds, group size, trajectory) or write "
                            "a simulated run as a TRL trainer_state.json.")
    p.add_argument("--experiment", choices=[*BANDIT_EXPERIMENTS, "all"],
                   help="which experiment to run (default: all; not with --write-log)")
    p.add_argument("--estimator", choices=["grpo", "dr_grpo", "rloo"],
                   help="advantage estimator of the simulated trainer (default: grpo)")
    p.add_argument("--kl", type=finite_float,
                   help="KL coefficient lam (TRL's beta; default: each experiment's own, 0.5, "
                   "and 1.3 for the group experiment)")
    p.add_argument("--kl-estimator", choices=["k3", "forward"],
                   help="estimator of the KL penalty (default: k3, sampled as in TRL; forward, "
                   "the exact KL, for the group experiment)")
    p.add_argument("--momenta", type=finite_float, nargs="+",
                   help="momenta of the lag-threshold sweeps (default: 0 0.5 0.9; not with "
                   "--write-log)")
    p.add_argument("--momentum", type=finite_float,
                   help="momentum of a run written with --write-log (default 0)")
    p.add_argument("--write-log", help="write one simulated run to this trainer_state.json "
                   "instead of running the experiments")
    p.add_argument("--steps", type=integer, help="steps of --write-log (default 300)")
    p.add_argument("--seed", type=non_negative_integer, default=0,
                   help="random seed >= 0 (default 0)")
    add_executor(p)
    add_json(p)
    p.set_defaults(handler=run)


def _check_numbers(args: argparse.Namespace) -> None:
    """Refuse a numeric option outside what the simulation holds, or a bad ``--write-log``.

    The executor options are checked in both modes, as the experiments check them
    (:func:`~grpodyn.cli.options.executor_of`): ``--scheduler`` with ``--serial`` is refused
    with ``--write-log`` too.
    """
    from grpodyn.ground import check_momentum

    if args.write_log is not None and not args.write_log.strip():
        raise UsageError("--write-log: an empty path; give the trainer_state.json to write")
    executor_of(args)  # --scheduler with --serial, or a scheduler that is no address
    if args.write_log is not None and args.experiment is not None:
        raise UsageError(f"--experiment {args.experiment} with --write-log: --write-log writes "
                         "one simulated run and runs no experiment; give one of the two")
    low, high = KL_RANGE
    if args.kl is not None and not (low <= args.kl <= high
                                    or (args.kl == 0 and args.write_log is not None)):
        raise UsageError(f"--kl {args.kl:g}: must lie in [{low:g}, {high:g}], where every "
                         "experiment runs in seconds without diverging (0 too with --write-log: "
                         "a run without the penalty)")
    if args.steps is not None and not 1 <= args.steps <= MAX_STEPS:
        raise UsageError(f"--steps {args.steps}: must lie in [1, {MAX_STEPS:,}]")
    if args.momentum is not None:
        check_momentum(args.momentum, "--momentum")
    for beta in args.momenta or ():
        check_momentum(beta, "--momenta: momentum")
    twice = sorted({b for b in args.momenta or () if args.momenta.count(b) > 1})
    if twice:
        raise UsageError(f"--momenta: {', '.join(f'{b:g}' for b in twice)} given twice: each "
                         "momentum is one row of the lag sweeps")
    if args.write_log is not None:
        _check_write_log(args)


def _check_write_log(args: argparse.Namespace) -> None:
    """Refuse a ``--write-log`` the loaders would not read back, or options it leaves unused.

    The run is written as JSON (a TRL trainer_state.json), which the loaders read from a file
    ending in ``.json`` only; the one simulation runs in this process, so a Dask scheduler
    would go unused.
    """
    from pathlib import Path

    folder = Path(args.write_log).parent
    if not folder.is_dir():
        what = "is not a folder" if folder.exists() else "does not exist"
        raise UsageError(f"--write-log {args.write_log}: {folder} {what}; give a path in an "
                         "existing folder")
    if Path(args.write_log).suffix.lower() != ".json":
        raise UsageError(f"--write-log {args.write_log}: not a .json file; the run is written "
                         "as a TRL trainer_state.json, which grpodyn reads back from a file "
                         "ending in .json (e.g. trainer_state.json)")
    if args.scheduler is not None:
        raise UsageError(f"--scheduler {args.scheduler} with --write-log: --write-log runs one "
                         "simulation in this process and uses no scheduler; leave --scheduler "
                         "out")
    if args.momenta is not None:
        raise UsageError("--momenta with --write-log: --momenta sets the experiments' lag "
                         "sweeps; the run --write-log writes takes one --momentum")


def run(args: argparse.Namespace) -> dict[str, Any]:
    """Run the chosen experiments, or write one simulated run (``--write-log``).

    The experiments' JSON holds ``configs``, the config each experiment ran (the settings it
    sweeps left out: they are in its result), and one entry per experiment.
    """
    from dataclasses import asdict, replace
    from functools import partial
    from pathlib import Path

    from grpodyn.empirical.bandit import lab
    from grpodyn.empirical.bandit.simulation import simulate_bandit
    from grpodyn.numerics.executor import run_tasks

    _check_numbers(args)
    overrides = {k: v for k, v in {"estimator": args.estimator, "kl": args.kl,
                                   "kl_estimator": args.kl_estimator}.items() if v is not None}
    config = replace(lab.DEFAULT_CONFIG, **overrides)
    if args.write_log is not None:
        target = Path(args.write_log)
        if target.exists() or target.is_symlink():  # a dangling link or a loop too
            raise UsageError(f"--write-log {args.write_log}: exists; refusing to overwrite it")
        steps = 300 if args.steps is None else args.steps
        momentum = 0.0 if args.momentum is None else args.momentum
        run = simulate_bandit(replace(config, momentum=momentum), steps=steps, seeds=1,
                              seed=args.seed)
        try:  # refused too where a file appears at the target while the run is simulated
            run.write_trainer_state(target, replace=False)
        except FileExistsError:
            raise UsageError(f"--write-log {args.write_log}: exists; refusing to overwrite "
                             "it") from None
        return {"log": str(target), "steps": steps, "config": run.config.__dict__}
    given = [name for name, value in (("--steps", args.steps), ("--momentum", args.momentum))
             if value is not None]
    if given:
        raise UsageError(f"{' and '.join(given)} need{'s' * (len(given) == 1)} --write-log "
                         "(the experiments set their own"
                         + ("; --momenta sets the lag sweeps')" if args.momentum is not None
                            else ")"))
    chosen = (BANDIT_EXPERIMENTS if args.experiment in (None, "all")
              else (args.experiment,))
    # the config each experiment runs; the settings it sweeps are left out of what is shown
    configs = {"stiffness": (config, ()), "transition": (config, ("momentum",)),
               "group": (replace(lab.GROUP_CONFIG, **overrides), ("group_size",)),
               "trajectory": (replace(config, momentum=lab.TRAJECTORY_MOMENTUM), ()),
               **{name: (replace(lab.THRESHOLD_CONFIG, **overrides), ("momentum", field))
                  for name, (field, _) in LAGS.items()}}
    singles = {
        "stiffness": partial(lab.measure_stiffness, configs["stiffness"][0], seed=args.seed),
        "transition": partial(lab.transition_experiment, configs["transition"][0]),
        "group": partial(lab.group_size_experiment, configs["group"][0], seed=args.seed),
        "trajectory": partial(lab.trajectory_experiment, configs["trajectory"][0],
                              momentum=lab.TRAJECTORY_MOMENTUM, seed=args.seed),
    }
    # every experiment, and every lag of a threshold sweep, is one seeded task: one pool (or
    # Dask) run for all of them, results independent of the executor
    momenta = MOMENTA if args.momenta is None else args.momenta
    plans = {name: [lab.plan_threshold_experiment(LAGS[name][0], configs[name][0], momentum=b,
                                                  seed=args.seed) for b in momenta]
             for name in chosen if name in LAGS}
    tasks = [singles[name] for name in chosen if name in singles]
    tasks += [task for name in plans for plan in plans[name] for task in plan.tasks]
    results = iter(run_tasks(tasks, executor=executor_of(args),
                             progress=False if args.json else None, description="bandit"))
    done = {name: next(results) for name in chosen if name in singles}
    for name, name_plans in plans.items():
        done[name] = lab.finish_threshold_experiments(
            name_plans, [next(results) for plan in name_plans for _ in plan.tasks])
    out: dict[str, Any] = {"configs": {
        name: {k: v for k, v in asdict(configs[name][0]).items() if k not in configs[name][1]}
        for name in chosen}}
    for name in chosen:
        out[name] = _named(done[name], configs[name][0].lr)
    return finite_json(out)


def _named(result: Any, lr: float) -> dict[str, Any] | list[dict[str, Any]]:
    """Return an experiment's result as JSON, with kappa and the stiffness k = lr kappa named.

    The stiffness experiment measures kappa (its ``analytic``, ``finite_difference`` and
    ``relaxation`` keys): ``kappa`` repeats the analytic value and ``stiffness`` is lr kappa. The
    transition and the thresholds report the stiffness k: ``kappa`` is k / lr.
    """
    if isinstance(result, list):
        return [_named(r, lr) for r in result]
    out = result.to_dict()
    if "analytic" in out:
        out.update(kappa=out["analytic"], stiffness=lr * out["analytic"])
    elif "stiffness" in out:
        out["kappa"] = out["stiffness"] / lr
    return out


def _config_text(config: dict[str, Any], swept: str) -> str:
    """Return a config as one line: the settings of :data:`SHOWN` and those off the defaults."""
    from dataclasses import asdict

    from grpodyn.empirical.bandit.simulation import BanditConfig

    defaults = asdict(BanditConfig())
    shown = [f"{k} {v:g}" if isinstance(v, float) else f"{k} {v}" for k, v in config.items()
             if k in SHOWN or v != defaults[k]]
    return f"config: {', '.join(shown)}" + (f"; {swept} swept" if swept else "")


def _number(value: float | None, digits: int = 4) -> str:
    """Return a number to ``digits`` significant digits, or ``none`` (infinite or undefined)."""
    return "none" if value is None else f"{value:.{digits}g}"


def _percent(value: float | None) -> str:
    """Return a fraction as a percentage, or ``none`` (undefined)."""
    return "none" if value is None else f"{100 * value:.2g}%"


def _print_thresholds(name: str, rows: list[dict[str, Any]], config: dict[str, Any]) -> None:
    """Print a threshold experiment: its config, then one row per momentum."""
    field, symbol = LAGS[name]
    what = {"refresh": "refresh interval K", "staleness": "staleness d",
            "reuse": "reuse mu (num_iterations, importance-corrected)"}[name]
    limit = "" if name == "reuse" else f"; grpodyn predict's {field}_max"
    print_wrapped(f"first unstable {what}, predicted (exact; continuum limit) and simulated, "
                  f"and the largest stable {symbol} (one less{limit})", first=f"{name}: ",
                  rest="  ")
    print_wrapped(_config_text(config, f"momentum and {field}"), first="  ", rest="    ")
    if rows:
        print(f"  stiffness k {rows[0]['stiffness']:.6g} (lr {config['lr']:g} x kappa "
              f"{rows[0]['kappa']:.6g})")
    print(f"  {'':8}  {'first unstable ' + symbol:<31}  {'largest stable ' + symbol}")
    print(f"  {'momentum':>8}  {'predicted':>9} {'continuum':>10} {'observed':>9}  "
          f"{'predicted':>9}         lags tried")
    for r in rows:
        print(f"  {r['momentum']:>8g}  {_number(r['predicted']):>9} "
              f"{_number(r['continuum']):>10} {_number(r['observed']):>9}  "
              f"{_number(r['predicted_largest_stable']):>9}         "
              f"{' '.join(str(lag) for lag in r['lags'])}")


def _print_group(g: dict[str, Any], config: dict[str, Any]) -> None:
    """Print the group-size experiment: its config, then one row per group size."""
    print("group: mean path against the group size G, and the stationary variance of x")
    print_wrapped(_config_text(config, "group_size"), first="  ", rest="    ")
    print(f"  {'G':>4} {'p*':>7} {'path deviation':>14} {'(2 s.e.)':>9}  "
          f"{'variance observed':>17} {'predicted':>10} {'1/G law':>10}")
    for row in zip(g["group_sizes"], g["p_star"], g["mean_path_max_deviation"],
                   g["mean_path_seed_spread"], g["variance_observed"], g["variance_predicted"],
                   g["variance_one_over_g"], strict=True):
        size, p_star, deviation, spread, observed, predicted, law = row
        print(f"  {size:>4} {p_star:>7.4f} {deviation:>14.4g} {spread:>9.2g}  "
              f"{observed:>17.4g} {predicted:>10.4g} {law:>10.4g}")


def print_human(result: dict[str, Any]) -> None:
    """Print each experiment as a few short lines: its config, then what it measured."""
    if "configs" not in result:  # --write-log
        print_plain(result)
        return
    for name, config in result["configs"].items():
        r = result[name]
        if name in LAGS:
            _print_thresholds(name, r, config)
            continue
        if name == "group":
            _print_group(r, config)
            continue
        swept = "momentum" if name == "transition" else ""
        if name == "stiffness":
            print("stiffness: kappa (the curvature scale) three ways, and the stiffness "
                  "k = lr x kappa")
        elif name == "transition":
            print("transition: momentum of the overdamped -> oscillatory transition")
        else:
            print("trajectory: closed-form reward path against the simulated mean after a kick")
        print_wrapped(_config_text(config, swept), first="  ", rest="    ")
        if name == "stiffness":
            print(f"  kappa {r['kappa']:.6g} (analytic); finite difference "
                  f"{r['finite_difference']:.6g}, relaxation {r['relaxation']:.6g} +- "
                  f"{r['relaxation_stderr']:.2g}; spread {100 * r['max_relative_spread']:.2f}%")
            print(f"  stiffness k {r['stiffness']:.6g} (lr {config['lr']:g} x kappa) at x* "
                  f"{r['x_star']:.6g}")
        elif name == "transition":
            print(f"  stiffness k {r['stiffness']:.6g} (lr {config['lr']:g} x kappa "
                  f"{r['kappa']:.6g})")
            print(f"  momentum: predicted {r['predicted_momentum']:.4f} (exact), continuum "
                  f"{r['continuum_momentum']:.4f}, observed {_number(r['observed_momentum'])} "
                  f"(relative error {_percent(r['relative_error'])})")
            print(f"  swept {len(r['momenta'])} momenta from {r['momenta'][0]:.4g} to "
                  f"{r['momenta'][-1]:.4g}; the observed one is the first with an overshoot")
        else:
            print(f"  R^2 over {r['steps']} steps: inertial {r['r2_inertial']:.4f}, "
                  f"exponential {r['r2_exponential']:.4f}")
