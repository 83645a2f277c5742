"""``grpodyn predict``: constants, regime and stability limits of a run from its settings."""

from __future__ import annotations

import argparse
from typing import Any

from grpodyn.cli.options import (
    MAX_STEPS,
    UsageError,
    add_json,
    add_lag,
    finite_float,
    integer,
    positive_integer,
    print_plain,
)
from grpodyn.ground import finite_json
from grpodyn.ground.checks import REWARD_MAGNITUDE_MAX


def add_parser(commands: argparse._SubParsersAction) -> None:
    """Add the ``predict`` command and its options to ``commands``."""
    p = commands.add_parser("predict", help="constants, regime and stability limits of a run",
                            description="Predict the dynamics of a run from its hyperparameters "
                            "(heavy-ball SGD: stiffness k = lr * kappa).")
    p.add_argument("--lr", type=finite_float, required=True, help="learning rate eta")
    p.add_argument("--momentum", type=finite_float, required=True,
                   help="momentum beta in [0, 0.999]")
    p.add_argument("--kappa", type=finite_float, required=True, help="curvature scale kappa > 0")
    add_lag(p)
    p.add_argument("--group-size", type=integer,
                   help="group size G: adds the degenerate-group odds at --r0 and --plateau "
                   "(default: not computed)")
    p.add_argument("--noise", type=finite_float, help="per-step noise variance s^2: adds the "
                   "stationary variance and the noise temperature (none, with a note, on an "
                   "unstable map; default: not computed)")
    p.add_argument("--r0", type=finite_float, help="initial expected reward (with --plateau and "
                   "--steps: the predicted trajectory; with --group-size: the odds)")
    p.add_argument("--plateau", "--r-star", dest="plateau", type=finite_float,
                   help="plateau (fixed point) of the reward (--r-star: the same, its older "
                   "name)")
    p.add_argument("--steps", type=positive_integer, help="steps N of the predicted "
                   "trajectory after the start: the path at steps 0..N (with --r0 and "
                   "--plateau; default: no trajectory)")
    add_json(p)
    p.set_defaults(handler=run)


def check_lag_and_momentum(args: argparse.Namespace) -> None:
    """Refuse a ``--momentum``, ``--refresh`` or ``--staleness`` the stability analysis can't take.

    The caps (:data:`~grpodyn.numerics.stability.REFRESH_MAX`,
    :data:`~grpodyn.numerics.stability.STALENESS_MAX`, the latter with the message of the
    Python API, :func:`~grpodyn.numerics.stability.check_staleness`) keep the analysis to
    seconds; the momentum bound (:data:`~grpodyn.ground.checks.MOMENTUM_MAX`) is where its
    formulas still resolve 1 - beta.
    """
    from grpodyn.ground import check_momentum
    from grpodyn.numerics.stability import REFRESH_MAX, check_staleness

    if args.momentum is not None:
        check_momentum(args.momentum, "--momentum")
    if args.refresh is not None and args.refresh > REFRESH_MAX:
        raise UsageError(f"--refresh {args.refresh}: at most {REFRESH_MAX:,} (a policy held "
                         "longer is beyond what the stability analysis resolves)")
    if args.staleness is not None:
        check_staleness(args.staleness, "--staleness")


def run(args: argparse.Namespace) -> dict[str, Any]:
    """Predict the dynamics of the run ``args`` describes (as strict JSON types)."""
    from grpodyn.numerics.predict import predict

    check_lag_and_momentum(args)
    if args.steps is not None and args.steps > MAX_STEPS:
        raise UsageError(f"--steps {args.steps}: at most {MAX_STEPS:,} steps to predict")
    for option, level in (("--r0", args.r0), ("--plateau", args.plateau)):
        if level is not None and abs(level) > REWARD_MAGNITUDE_MAX:
            raise UsageError(f"{option} {level:g}: beyond {REWARD_MAGNITUDE_MAX:g}, the largest "
                             "reward the analyses take")
    return finite_json(predict(lr=args.lr, momentum=args.momentum, kappa=args.kappa,
                               refresh=1 if args.refresh is None else args.refresh,
                               staleness=0 if args.staleness is None else args.staleness,
                               group_size=args.group_size, noise=args.noise, r0=args.r0,
                               plateau=args.plateau, steps=args.steps).to_dict())


def print_human(result: dict[str, Any]) -> None:
    """Print the constants as ``key: value`` lines, and what tau is where it is not the decay.

    ``stiffness_max`` is labelled on-policy and, with a refresh interval or a staleness, the
    limit at that lag follows it, so that the on-policy limit is not read as the run's.
    A lag limit without a value says why on its line: beyond the search cap (a small
    stiffness), or none (an unstable map). ``tau`` is the overdamped c / k; past critical
    damping the poles' radius stays sqrt(beta) whatever k, so the envelope decays in
    ``decay_time`` (the slowest pole), which stops falling with k while c / k keeps falling.
    The path prints at 6 significant digits (``--json`` keeps every digit); a path of an
    unstable map is said to grow without bound, however few steps it shows. The
    ``notes`` (why a quantity asked for has no value) print last, one ``note:`` line each.
    """
    shown = dict(result)
    notes = shown.pop("notes", [])
    lag = shown.pop("lag")
    shown["stiffness_max"] = f"{result['stiffness_max']:.6g} (on-policy)"
    if lag == "on-policy":
        del shown["stiffness_max_lag"]
    else:
        shown["stiffness_max_lag"] = f"{result['stiffness_max_lag']:.6g} ({lag})"
    for name in ("refresh_max", "staleness_max"):
        status, reason = shown.pop(f"{name}_status", None), shown.pop(f"{name}_reason", None)
        if reason is not None:
            shown[name] = f"{'beyond the cap' if status == 'beyond_cap' else 'none'} ({reason})"
    if "trajectory" in shown:  # the path at 6 significant digits, as the constants print
        shown["trajectory"] = "[" + ", ".join(f"{v:.6g}" for v in shown["trajectory"]) + "]"
    print_plain(shown)
    decay = result.get("decay_time")
    if result.get("regime") not in (None, "overdamped", "unstable") and decay is not None:
        print(f"note: tau = c / k is the overdamped reading; in the {result['regime']} regime "
              + (f"the deviation's envelope decays in decay_time = {decay:.4g} steps (the "
                 "exact map's slowest pole)" if decay > 0 else
                 "the deviation vanishes after one step (every pole at 0: decay_time = 0)"))
    if result.get("trajectory_diverged"):
        print(f"note: the trajectory grows without bound ({len(result['trajectory']) - 1} "
              "steps shown)")
    for note in notes:
        print(f"note: {note}")
