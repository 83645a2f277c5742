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


def add_parser(commands: argparse._SubParsersAction) -> None:
    """Add the ``bandit`` command and its options to ``commands``."""
    p = commands.add_parser("bandit", help="the softmax-bandit lab: theory against simulation",
                            description="Run the softmax-bandit experiments (stiffness three "
                            "ways, transition, lag thresholds, group size, trajectory) or write "
                            "a simulated run as a TRL trainer_state.json.")
    p.add_argument("--experiment", default="all", choices=[*BANDIT_EXPERIMENTS, "all"],
                   help="which experiment to run (default: all)")
    p.add_argument("--estimator", choices=["grpo", "dr_grpo", "rloo"],
                   help="advantage estimator of the simulated trainer (default: grpo)")
    p.add_argument("--kl", type=finite_float,
                   help="KL coefficient lam (TRL's beta; default: each experiment's own, 0.5, "
                   "and 1.3 for the group experiment)")
    p.add_argument("--kl-estimator", choices=["k3", "forward"],
                   help="estimator of the KL penalty (default: k3, sampled as in TRL; forward, "
                   "the exact KL, for the group experiment)")
    p.add_argument("--momenta", type=finite_float, nargs="+", default=[0.0, 0.5, 0.9],
                   help="momenta of the lag-threshold sweeps (default: 0 0.5 0.9)")
    p.add_argument("--momentum", type=finite_float,
                   help="momentum of a run written with --write-log (default 0)")
    p.add_argument("--write-log", help="write one simulated run to this trainer_state.json")
    p.add_argument("--steps", type=integer, help="steps of --write-log (default 300)")
    p.add_argument("--seed", type=non_negative_integer, default=0,
                   help="random seed >= 0 (default 0)")
    add_executor(p)
    add_json(p)
    p.set_defaults(handler=run)


def _check_numbers(args: argparse.Namespace) -> None:
    """Refuse a numeric option outside what the simulation holds, or an empty ``--write-log``."""
    from grpodyn.ground import check_momentum

    if args.write_log is not None and not args.write_log.strip():
        raise UsageError("--write-log: an empty path; give the trainer_state.json to write")
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
    for beta in args.momenta:
        check_momentum(beta, "--momenta: momentum")


def run(args: argparse.Namespace) -> dict[str, Any]:
    """Run the chosen experiments, or write one simulated run (``--write-log``)."""
    from dataclasses import replace
    from functools import partial
    from pathlib import Path

    from grpodyn.empirical.bandit import lab
    from grpodyn.empirical.bandit.simulation import simulate_bandit
    from grpodyn.numerics.executor import run_tasks

    _check_numbers(args)
    overrides = {k: v for k, v in {"estimator": args.estimator, "kl": args.kl,
                                   "kl_estimator": args.kl_estimator}.items() if v is not None}
    config = replace(lab.DEFAULT_CONFIG, **overrides)
    thresholds = replace(lab.THRESHOLD_CONFIG, **overrides)
    if args.write_log is not None:
        target = Path(args.write_log)
        if target.exists():
            raise UsageError(f"--write-log {args.write_log}: exists; refusing to overwrite it")
        steps = 300 if args.steps is None else args.steps
        momentum = 0.0 if args.momentum is None else args.momentum
        run = simulate_bandit(replace(config, momentum=momentum), steps=steps, seeds=1,
                              seed=args.seed)
        run.write_trainer_state(target)
        return {"log": str(target), "steps": steps, "config": run.config.__dict__}
    if args.steps is not None or args.momentum is not None:
        raise UsageError("--steps and --momentum need --write-log (the experiments set their "
                         "own; --momenta sets the lag sweeps')")
    chosen = BANDIT_EXPERIMENTS if args.experiment == "all" else (args.experiment,)
    executor = executor_of(args)
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
