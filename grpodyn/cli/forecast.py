"""``grpodyn forecast``: the rest of a run, with a band."""

from __future__ import annotations

import argparse
from typing import Any

from grpodyn.cli.options import (
    UsageError,
    add_run_command_options,
    finite_float,
    fraction,
    load_log,
    merged_notes,
    naming_the_run,
    open_fraction,
)
from grpodyn.ground import finite_json
from grpodyn.numerics.forecasters import FORECASTERS


def add_parser(commands: argparse._SubParsersAction) -> None:
    """Add the ``forecast`` command and its options to ``commands``."""
    p = commands.add_parser("forecast", help="forecast the rest of a run, with a band",
                            description="Fit on the steps up to a cut and forecast the steps "
                            "after it (or up to --horizon): a stacked ensemble of curve models "
                            "(flat, linear, exponential, power, inertial, lr clock) with the "
                            "correlated-plus-white noise model of docs/theory.md section 6, "
                            "which give the plateau; the point and band are the calibrated "
                            "learned prior's; "
                            "where the run still moves at the cut, its band also holds the "
                            "trend-aware forecaster's (averaged where the run decelerates; "
                            "where it does not, the union with it and with the calibrated "
                            "learned prior's). The plateau is fitted on the training part, as "
                            "grpodyn fit --train-fraction fits it. In the JSON, `forecaster` "
                            "is the forecaster asked for (--forecaster) and `model` the one "
                            "that supplied the point and band (the ensemble's calibrated prior, "
                            "or its curve models' average where the prior gives none). Above "
                            "the prior's widest band, 0.95, the band is the union of that band "
                            "and the curve models' at --level.")
    p.add_argument("log", help="the training log")
    cut = p.add_mutually_exclusive_group()
    cut.add_argument("--train-fraction", type=fraction,
                     help="train on this leading fraction of the points and score the rest "
                     "(default: no cut, the whole log; then --horizon, or the log's planned "
                     "length, says where to forecast)")
    cut.add_argument("--until", type=finite_float, help="train on the steps up to this one and "
                     "score the rest (default: no cut)")
    p.add_argument("--horizon", type=finite_float, help="forecast up to this step (default, "
                   "without a cut: the steps the run was set to take, where the log records "
                   "them: TRL's max_steps, or the total of a console's progress counter n/N)")
    p.add_argument("--level", type=open_fraction, default=0.9,
                   help="central probability of the band (default 0.9; a higher one never "
                   "narrows it)")
    p.add_argument("--forecaster", choices=tuple(FORECASTERS),
                   default="ensemble",
                   help="ensemble: the calibrated learned prior's point and band with the "
                        "stacked curve models' plateau (default); learned_prior: a "
                        "network trained on curves drawn from the theory's prior (LC-PFN "
                        "style; bands up to level 0.95); adaptive: level, trend and "
                        "relaxation members weighted by their rolling-origin errors inside "
                        "the training part, a conformal band, a change point widens it; "
                        "calibrated_prior: the learned prior's median with a band conformal on "
                        "its own rolling-origin errors")
    add_run_command_options(p, momentum_help="optimiser momentum (Adam beta1): enables the "
                            "inertial model (default: the log's)", handler=run)


def run(args: argparse.Namespace) -> dict[str, Any]:
    """Forecast the log of ``args`` after its cut.

    Returns
    -------
    dict
        The JSON object: ``forecaster`` (the one asked for), ``model`` (the one that supplied
        the point and band: for the default ensemble the calibrated prior, or its curve models'
        ``average`` where the prior gives none), ``plateau`` (the training part's one plateau,
        as ``grpodyn fit`` with the same cut gives it), the path, the band and the scores.
    """
    from grpodyn.empirical.logs.run_analysis import analyse_run, check_horizon

    if args.train_fraction == 1:
        raise UsageError("--train-fraction 1 leaves no points to score; leave it out to forecast "
                         "past the log's end (--horizon STEP)")
    run = load_log(args)
    horizon, planned = args.horizon, run.meta.value("planned_steps")
    if args.train_fraction is None and args.until is None and horizon is None:
        # the rest of the run is up to the steps it was set to take, where the log records them;
        # reached where the next step at the log's own spacing would lie beyond it
        spacing = float(run.steps[-1] - run.steps[-2]) if run.n_points > 1 else 1.0
        if planned is None or planned < run.steps[-1] + spacing:
            raise UsageError(
                f"{args.log}: say where to forecast: --horizon STEP (past the log's end), or "
                "--train-fraction F / --until STEP (fit the start, forecast and score the "
                "rest); " + ("the log records no planned length (TRL max_steps, or the "
                             "total N of a console's progress counter n/N)" if planned is None
                             else f"its planned length, step {planned:g}, is reached (its "
                             f"last logged step {run.steps[-1]:g}, logged every "
                             f"{spacing:g})"))
        horizon = float(planned)
    if horizon is not None:  # refused before the analysis, which fits first
        check_horizon(run, horizon, what=f"--horizon {horizon:.15g}" if args.horizon is not None
                      else f"the log's planned length, step {horizon:.15g},")
    until = args.until
    if args.train_fraction is None and until is None:
        until = float(run.steps[-1])
    with naming_the_run(run):
        analysis = analyse_run(run, momentum=args.momentum, reward_range=args.reward_range,
                               train_fraction=args.train_fraction, until=until,
                               horizon=horizon, level=args.level, diagnose_run=False,
                               forecaster=args.forecaster, fit_on_training_part=True)
    out = {"source": run.source, "run": run.run_name, "reward_key": run.reward_key,
           **analysis.forecast_dict()}
    out["reward_range"] = (None if analysis.reward_range is None
                           else list(analysis.reward_range))
    out["momentum"] = analysis.momentum
    out["warnings"] = list(dict.fromkeys(out["warnings"] + analysis.warnings))
    seen = analysis.run.reward[: analysis.forecast.train_points]
    step = None if analysis.reward_range is not None else analysis.forecast.leaves_span(seen)
    if step is not None:  # after the early warning's note, which stays first
        out["warnings"].insert(int(out["early_warning"] is not None), (
            f"from step {step:g} the forecast leaves the training part's span "
            f"[{seen.min():.4g}, {seen.max():.4g}] by more than its width (band "
            f"[{out['lower'][-1]:.4g}, {out['upper'][-1]:.4g}] at step {out['steps'][-1]:g}): "
            "with the reward range unknown nothing bounds the forecast's extrapolation "
            "there; declare --reward-range"))
    if horizon is not None and args.horizon is None:
        last = out["steps"][-1] if out["steps"] else horizon
        upto = "" if last == horizon else f"the last step at the log's cadence up to {horizon:g}, "
        out["warnings"].append(f"forecast to step {last:g}, {upto}the steps the run was set to "
                               "take (planned_steps); --horizon sets another")
    disagree = _point_off_plateau(out)
    if disagree is not None:
        out["warnings"].append(disagree)
    return finite_json(out)


def _point_off_plateau(out: dict[str, Any]) -> str | None:
    """Say where the last forecast point leaves the determined plateau's interval, else None.

    The point and the band come from ``model`` (for the ensemble, the calibrated prior), the
    plateau from the stacked curve models: two readings of where the run ends, said when they
    disagree rather than left to look like one contradicting itself.
    """
    plateau, points = out["plateau"], out["point"]
    if plateau["status"] != "determined" or not points or points[-1] is None:
        return None
    last, lo, hi = points[-1], plateau["lower"], plateau["upper"]
    if lo <= last <= hi:
        return None
    band = (out["lower"][-1], out["upper"][-1])
    holds = all(v is not None for v in band) and band[0] <= plateau["value"] <= band[1]
    return (f"the point at step {out['steps'][-1]:g} ({last:.4g}, from {out['model']}) lies "
            f"{'above' if last > hi else 'below'} the plateau's interval [{lo:.4g}, {hi:.4g}] "
            "(from the stacked curve models): the two disagree on where the run ends"
            + ("; the band holds the plateau" if holds else ", and the band does not hold the "
               "plateau"))


def _shown(value: float | None, scale: float) -> str:
    """Say a forecast value to 4 figures; below ``scale`` (round-off) as 0, None as unbounded."""
    if value is None:
        return "unbounded"
    return f"{0.0 if abs(value) < scale else value:.4g}"


def print_human(result: dict[str, Any]) -> None:
    """Print the forecast: plateau and three points of the band."""
    which = f" [{result['run']}]" if result.get("run") else ""
    print(f"{result['source']}{which}: forecast of {result['reward_key']} from "
          f"{result['train_points']} points (to step {result['cut_step']:g})")
    for warning in merged_notes(result["warnings"]):
        print(f"  note: {warning}")
    weights, point = (", ".join(f"{k} {v:.2f}" for k, v in result[key].items() if v > 0)
                      for key in ("weights", "point_weights"))
    if point and point != weights:  # the point has weights of its own (the ensemble: the prior)
        print(f"model: {result['model']} (the point: {point}; the members' "
              f"{result['weighting']}: {weights})")
    else:
        print(f"model: {result['model']} ({result['weighting']}: {weights})")
    if result.get("forecaster") not in (None, result["model"]):
        print(f"  (forecaster asked for: {result['forecaster']}; the model above supplied the "
              "point)")
    p = result["plateau"]
    if p["status"] == "determined":
        print(f"plateau: {p['value']:.4g} [{p['lower']:.4g}, {p['upper']:.4g}]")
    else:
        print(f"plateau: {p['status']}: {p['reason']}")
    steps = result["steps"]
    picks = sorted({0, len(steps) // 2, len(steps) - 1})
    # round-off of a fit that reaches a range's edge (2e-14 for 0) is printed as the edge
    scale = 1e-9 * max([abs(v) for key in ("point", "lower", "upper")
                        for v in result[key] if v is not None] + [1e-300])
    for i in picks:
        point, lower, upper = (_shown(result[key][i], scale) for key in ("point", "lower", "upper"))
        print(f"  step {steps[i]:g}: {point} [{lower}, {upper}] "
              f"({100 * result['level']:.0f}% band)")
    if "mae" in result:
        print(f"held out: MAE {result['mae']:.4g}, {100 * result['coverage']:.0f}% inside the "
              f"band")
