"""``grpodyn sweep``: runs of one model and task fitted jointly."""

from __future__ import annotations

import argparse
from typing import Any

from grpodyn.cli.options import UsageError, add_json, add_reward_range, add_sweep_log_options
from grpodyn.ground import finite_json


def add_parser(commands: argparse._SubParsersAction) -> None:
    """Add the ``sweep`` command and its options to ``commands``."""
    p = commands.add_parser("sweep", help="fit a sweep of runs jointly: shared constants, "
                            "tau-lr exponent, G vs B G test, collapses and falls",
                            description="Fit runs of one model and task, each with its own "
                            "hyperparameters, with shared constants (kappa, r0, the plateau, "
                            "Adam's noise ratio). Hyperparameters come from each log's metadata, "
                            "config and the trainer its format names (TRL, verl, OpenRLHF: "
                            "AdamW, beta1 0.9); --hparams k=v,... overrides them (keys: lr, "
                            "group_size, batch, momentum, kl, num_iterations, schedule, warmup, "
                            "optimizer, seed; runs of one seed share r0). Runs of 3-9 points "
                            "are left out of the fit and read for a fall: the lowest lr that "
                            "fell above every lr that held bounds the stability limit.")
    p.add_argument("logs", nargs="+", metavar="LOG", help="training logs of the sweep (every "
                   "run of a log that holds several)")
    p.add_argument("--hparams", action="append", metavar="K=V,...",
                   help="hyperparameters: once for every log, or once per log in their order")
    add_sweep_log_options(p)
    add_reward_range(p, where=", in every log", unknown=", and r0 and the plateau unbounded")
    add_json(p)
    p.set_defaults(handler=run)


def sweep_runs(logs: list[str], hparams: list[str] | None, *, bars: bool,
               reward_key: str | None = None, step_key: str | None = None,
               logging_steps: int | None = None, reward_range: tuple[float, float] | None = None,
               option: str = "--hparams", min_points: int | None = None
               ) -> tuple[list, list[str]]:
    """Load the runs of a sweep, each with its hyperparameters (once, or once per log).

    A log of several runs (a sweep's long CSV) gives each of them, with that log's
    hyperparameters; those too short for the fit are left out, said in the notes returned
    beside the runs. ``reward_range`` is the declared range of every run's reward (None:
    inferred). ``hparams`` are the texts of the command's ``option`` (``--hparams``, or
    ``grpodyn advise --sweep-hparams``), the option the errors name. ``min_points``: the
    fewest reward points a run of a log of several needs (default the joint fit's).
    """
    from grpodyn.cli.sweep_logs import load_sources

    hparams = hparams or []
    if len(hparams) not in (0, 1, len(logs)):
        raise UsageError(f"{option} given {len(hparams)} times for {len(logs)} "
                         f"log{'s' * (len(logs) != 1)}: give it "
                         "once (for every log) or once per log, in the logs' order")
    texts = hparams * len(logs) if len(hparams) == 1 else hparams or [""] * len(logs)
    return load_sources(list(zip(logs, texts, strict=True)), bars=bars, reward_key=reward_key,
                        step_key=step_key, logging_steps=logging_steps,
                        reward_range=reward_range, option=option, min_points=min_points)


def run(args: argparse.Namespace) -> dict[str, Any]:
    """Fit the runs of the sweep jointly."""
    from grpodyn.cli.sweep_logs import FALL_POINTS, split_short
    from grpodyn.empirical.logs.sweep import fit_sweep
    from grpodyn.empirical.logs.sweep_advice import sweep_falls
    from grpodyn.progress import stage_bar

    runs, notes = sweep_runs(args.logs, args.hparams, bars=not args.json,
                             reward_key=args.reward_key, step_key=args.step_key,
                             logging_steps=args.logging_steps, reward_range=args.reward_range,
                             min_points=FALL_POINTS)
    runs, short, short_notes = split_short(runs)
    stages = stage_bar("sweep", enabled=not args.json)
    if stages is not None:
        stages(f"fitting {len(runs)} runs jointly")
    try:
        fit = fit_sweep(runs)
        out = fit.to_dict()
        out["warnings"] = notes + short_notes + out["warnings"]
        out["falls"] = sweep_falls([*fit.runs, *short], floor=fit.layout.floor)
        out["n_short"] = len(short)  # read for falls only, beside the n_runs of the joint fit
        return finite_json(out)
    finally:
        if stages is not None:
            stages.close()


def print_human(result: dict[str, Any]) -> None:
    """Print the shared constants, the exponents and each run's fit."""
    short = result.get("n_short", 0)
    total = result["n_runs"] + short
    print(f"sweep of {total} run{'s' * (total != 1)} ({result['n_fitted']} fitted"
          + (f", {short} too short for the joint fit, read for falls only)" if short else ")"))
    for warning in result["warnings"]:
        print(f"  note: {warning}")
    for name, c in result["constants"].items():
        err = f" +- {c['stderr']:.3g}" if c.get("stderr") is not None else ""
        shown = name.replace("r_star", "plateau", 1)  # the vocabulary's word on the terminal
        print(f"  {shown:12s} {c['value']:.4g}{err}  ({c.get('status', '')})")
    for optimizer, e in result["tau_lr_exponent"].items():
        if e.get("value") is None:
            print(f"  tau-lr exponent ({optimizer}): {e['status']}")
        else:
            print(f"  tau-lr exponent ({optimizer}): {e['value']:.3g} +- {e['stderr']:.2g} "
                  f"(expected -1{_off_law(e['value'], e['stderr'], e.get('heterogeneity'))})")
    for optimizer, e in result["bg_test"].items():
        if "bg_exponent" in e:
            g_exp = e["g_exponent_at_fixed_bg"]
            g_text = (f"{g_exp['value']:.2g} +- {g_exp['stderr']:.2g} (derivation 0)"
                      if g_exp["value"] is not None else g_exp["status"])
            print(f"  {optimizer}: k ~ (B G)^{e['bg_exponent']['value']:.2g} "
                  f"(+- {e['bg_exponent']['stderr']:.2g}, derivation "
                  f"{e['predicted_bg_exponent']:.2g}), G at fixed B G: {g_text}")
    for run in result["runs"]:
        mark = ("collapsed" if run["collapsed"] else "constant reward, not fitted"
                if run["constant"] else f"R^2 {run['r2']:.3f}")
        print(f"  {run['name']}: {mark} (reward: {run['reward_key']})")
    for entry in result["stability"]:
        print(f"  stability: {entry['name']}: {entry['limit']} limit; {entry['explanation']}")
    for entry in result.get("falls", []):
        settings = "".join(f", {key} {value:g}" for key, value in entry["settings"].items())
        print(f"  fall ({entry['optimizer']}{settings}): {entry['reason']}")


def _off_law(value: float, stderr: float, heterogeneity: dict[str, Any] | None = None) -> str:
    """Say how far a measured tau-lr exponent lies from the law's -1, as transfer reads it.

    Beyond 2 of its own standard errors, the words say so, give the distance in the sd that
    ``grpodyn transfer`` tests (the error and the design sweeps' spread around the law
    together, :data:`~grpodyn.empirical.logs.sweep_exponents.TAU_LR_PRIOR_SD`) and what the
    transfer does with it (:func:`~grpodyn.empirical.logs.sweep_exponents.law_reading`), so
    that the two commands' verdicts on one exponent read as one.
    """
    from grpodyn.empirical.logs.sweep_exponents import (
        LAW_Z,
        TAU_LR_PRIOR_SD,
        UNRESOLVED_SE,
        law_reading,
        law_z,
    )

    off = (value + 1) / stderr if stderr > 0 else 0.0
    if abs(off) <= 2:
        return ""
    z = law_z(value, stderr)
    sd = (value + 1) / z  # the sd law_z divides by (value is off -1 here: z is not 0)
    verdict = {
        "unresolved": f"an error of {UNRESOLVED_SE:g} or more resolves nothing: grpodyn "
                      "transfer uses the law's -1",
        "heterogeneous": "the groups of learning rates disagree: grpodyn transfer falls back to "
                         "the nearest source",
        "agrees": f"within the {LAW_Z:g} sd in which grpodyn transfer reads it as the law",
        "falls": f"beyond the {LAW_Z:g} sd of the law, but tau falls with lr as the law says: "
                 "grpodyn transfer uses the measured exponent",
        "contradicts": f"beyond the {LAW_Z:g} sd of the law, and tau does not fall with lr: "
                       "grpodyn transfer falls back to the nearest source",
    }[law_reading(value, stderr, heterogeneity)]
    return (f"; {abs(off):.1f} se off it, {abs(z):.1f} sd of {sd:.2g} with the design sweeps' "
            f"spread {TAU_LR_PRIOR_SD:g} around the law: {verdict}")
