"""``grpodyn fit``: reward-curve models fitted to a training log."""

from __future__ import annotations

import argparse
from typing import Any

from grpodyn.cli.options import (
    add_analysis_options,
    add_json,
    add_log_options,
    fraction,
    load_log,
    merged_notes,
    naming_the_run,
)


def add_parser(commands: argparse._SubParsersAction) -> None:
    """Add the ``fit`` command and its options to ``commands``."""
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
    add_analysis_options(p, momentum_help="optimiser momentum (Adam beta1): fixes mass and "
                          "damping of the inertial model (default: the log's)")
    p.add_argument("--train-fraction", type=fraction, default=1.0,
                   help="fit every model, the weights, the plateau and tau on this leading "
                        "fraction of the points only (`fitted_on` in the JSON says which "
                        "steps) and forecast the rest with the forecaster of `grpodyn "
                        "forecast`, scored on it (default 1)")
    add_log_options(p)
    add_json(p)
    p.set_defaults(handler=run)


def run(args: argparse.Namespace) -> dict[str, Any]:
    """Fit the curve models to the log of ``args``."""
    from grpodyn.analysis import fit_run

    run = load_log(args)
    with naming_the_run(run, failed="the fit could not be completed, so no model, weight or "
                        "plateau is reported"):
        return fit_run(run, model=args.model, momentum=args.momentum,
                       train_fraction=args.train_fraction, reward_range=args.reward_range)


def print_human(result: dict[str, Any]) -> None:
    """Print the fit: noise, each model's parameters, plateau and forecast."""
    from grpodyn.empirical.logs.fit_text import NOT_CURVES, shown_param, untrusted_note, weight_text

    which = f" [{result['run']}]" if result.get("run") else ""  # as forecast and diagnose say
    print(f"{result['source']}{which} ({result['format']}, {result['n_points']} points, "
          f"reward = {result['reward_key']})")
    for warning in merged_notes(result["warnings"]):
        print(f"  note: {warning}")
    noise = result["noise"]
    over = [name for name, entry in result["models"].items()
            if entry["r2"] > noise["r2_ceiling"]]
    print(f"noise sigma {noise['sigma']:.4g}: R^2 ceiling {noise['r2_ceiling']:.3f} (estimated "
          "from first differences)" + (f"; {', '.join(over)} pass{'es' if len(over) == 1 else ''}"
                                       " it: the ceiling is an estimate, and a curve above it "
                                       "may follow some of the noise" if over else ""))
    part = result.get("fitted_on") or {}
    stacked_over = ("the whole run" if part.get("points", 0) == part.get("of", 0) else
                    f"the training part (steps {part['first_step']:g}-{part['last_step']:g})")
    lowest_aic = min(result["models"], key=lambda name: result["models"][name]["aic"],
                     default=None)
    weights = result.get("weights") or {}
    if result.get("best") is None and weights:
        trusted = f"; {untrusted_note(result.get('weight_on'), over=stacked_over)}"
    elif result.get("best") in (None, lowest_aic):
        trusted = ""
    else:
        trusted = f"; the analysis trusts {result['best']} (stacking weights over {stacked_over})"
    unweighed = weights and any(name not in weights for name in result["models"])
    print(f"* = lowest AIC{trusted}" + ("; weight n/a: a model the stack does not weigh (it "
                                         "is fitted and compared, not forecast with)"
                                         if unweighed else ""))
    for name, entry in result["models"].items():
        params = ", ".join(shown_param(entry, k, v) for k, v in entry["params"].items()
                           if v is not None)
        mark = "*" if name == lowest_aic else " "
        weight = f"  weight {weight_text(weights, name)}" if weights else ""
        print(f"{mark} {name:15s} R^2 {entry['r2']:.3f}  AIC {entry['aic']:.1f}{weight}  "
              f"{params}")
    for name, weight in weights.items():
        if name not in result["models"] and weight >= 0.005:
            print(f"  {name:15s} weight {weight:.2f}  {NOT_CURVES.get(name, 'not a curve')} "
                  "(no curve)")
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


def _number(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.3f}"
