"""Advice from every log, and advice against the public learning-rate sweeps.

Prints two tables:

1. every run of every log in the folder: whether it loads, whether it gets advice, with its
   direction, ratio, basis and status (the target: advice on at least 95% of the runs that
   load, each with its basis);
2. every run of the public lr sweeps (garg-aayush's six learning rates; ShibukiZero's S4 pair
   1e-5 / 4e-5) and the corpus's collapsed runs (ShibukiZero S1 e8/e16, S2 no-clip): the advice
   from that run alone, the sweep's outcome, and whether they agree, beside a threshold-rule
   baseline (x2 if the reward rose less than two standard errors, x0.5 if it fell by more).

The sweep's outcome is read from the sweep, not from the advice: a run collapsed when the mean of
its last third is below half of its best third's; "raise" is the outcome where a higher lr of the
same sweep ended higher (last-third mean) without collapsing; "lower" where the run collapsed;
"not above" where no higher lr did better (then any advice that stays below the lowest
collapsing lr agrees). Advice at or beyond a collapsing lr never agrees. ``late`` is the mean
reward of each run's last third: where it rises with lr among runs that all saturated, the
sweep's plateau depends on lr, which the mean-field map (r* independent of lr) does not carry.

Usage: ``python benchmarks/advice.py [--logs FOLDER]`` (default /work/shared/data/real_logs).
"""

from __future__ import annotations

import argparse
import math
import re
import sys
from pathlib import Path

import numpy as np

from grpodyn.empirical.logs.advice import advise_log, run_trend
from grpodyn.empirical.logs.loaders import LogFormatError, Run, load_runs
from grpodyn.ground import InputError

LOGS = Path("/work/shared/data/real_logs")
GARG = "garg-aayush__building-from-scratch__grpo_results_lr_sweep_lr_sweep_data.csv"
SHIBUKI = "ShibukiZero__assignment5-alignment__artifacts_experiments_main_ch7_"
S4 = {1e-5: SHIBUKI + "grpo_train_loop_runs_grpo_on_policy_lr1e-5_metrics.jsonl",
      4e-5: SHIBUKI + "grpo_baselines_runs_reinforce_with_baseline_metrics.jsonl"}
COLLAPSED = {"S1 e8": SHIBUKI + "grpo_off_policy_sweep_runs_broad_e8_tb256_metrics.jsonl",
             "S1 e16": SHIBUKI + "grpo_off_policy_sweep_runs_broad_e16_tb256_metrics.jsonl",
             "S2 no-clip": SHIBUKI + "grpo_off_policy_clip_ablation_runs_GRPO-No-Clip_"
                                     "(e2_tb256)_metrics.jsonl"}


def threshold_rule(run: Run) -> tuple[str, float]:
    """The naive baseline: x2 if the reward rose less than 2 standard errors, x0.5 if it fell."""
    trend = run_trend(run.steps, run.reward)
    if trend.change < -2 * trend.change_stderr:
        return "lower", 0.5
    if trend.change < 2 * trend.change_stderr:
        return "raise", 2.0
    return "keep", 1.0


def every_log(folder: Path) -> None:
    """Table 1: advice for every run of every log in ``folder``."""
    loaded = advised = with_basis = 0
    print(f"{'log':44s} {'run':16s} advice        basis                  status")
    for path in sorted(folder.iterdir()):
        if path.suffix == ".md" or path.name.startswith("."):
            continue
        try:
            runs = load_runs(path)
        except (LogFormatError, InputError) as exc:
            print(f"{path.name[:44]:44s} {'':16s} does not load: {str(exc)[:60]}")
            continue
        for run in runs:
            loaded += 1
            try:
                advice = advise_log(run)
            except InputError as exc:
                print(f"{path.name[:44]:44s} {str(run.run_name or '')[:16]:16s} no advice: {exc}")
                continue
            advised += 1
            with_basis += advice.status != "not_determined"
            rec = advice.recommendation
            print(f"{path.name[:44]:44s} {str(run.run_name or '')[:16]:16s} "
                  f"{rec['direction']:5s} x{rec['lr_ratio']:<6.3g} {advice.basis['kind']:22s} "
                  f"{advice.status}")
    print(f"\nruns that load: {loaded}; with advice: {advised} ({100 * advised / loaded:.0f}%); "
          f"with a measured or bounded basis: {with_basis} ({100 * with_basis / loaded:.0f}%)")


def _late(run: Run) -> float:
    return float(np.mean(np.array_split(run.reward, 3)[2]))


def _collapsed(run: Run) -> bool:
    return _late(run) < 0.5 * max(float(np.mean(part)) for part in np.array_split(run.reward, 3))


def _outcomes(sweep: dict[float, Run]) -> dict[float, str]:
    """The sweep's outcome for each lr (see the module)."""
    out = {}
    for lr, run in sweep.items():
        if _collapsed(run):
            out[lr] = "lower"
            continue
        better = [x for x, other in sweep.items()
                  if x > lr and not _collapsed(other) and _late(other) > _late(run)]
        out[lr] = "raise" if better else "not above"
    return out


def _agrees(direction: str, new_lr: float, outcome: str, collapse_lr: float) -> bool:
    if new_lr >= collapse_lr:
        return False
    if outcome == "lower":
        return direction == "lower"
    if outcome == "raise":
        return direction == "raise"
    return True


def sweep_rows(name: str, sweep: dict[float, Run]) -> list[tuple[bool, bool, bool]]:
    """Print one sweep's rows; return (advice agrees, baseline agrees, advice safe) per run."""
    outcomes = _outcomes(sweep)
    collapse_lr = min([lr for lr, o in outcomes.items() if o == "lower"], default=math.inf)
    rows = []
    for lr, run in sorted(sweep.items()):
        advice = advise_log(run)
        rec = advice.recommendation
        new = lr * rec["lr_ratio"]
        base_dir, base_ratio = threshold_rule(run)
        ok = _agrees(rec["direction"], new, outcomes[lr], collapse_lr)
        base_ok = _agrees(base_dir, lr * base_ratio, outcomes[lr], collapse_lr)
        rows.append((ok, base_ok, new < collapse_lr))
        print(f"{name:12s} {lr:8.2g} {_late(run):5.3f} {rec['direction']:5s} "
              f"x{rec['lr_ratio']:<6.3g} "
              f"{advice.basis['kind']:22s} {outcomes[lr]:9s} {'yes' if ok else 'NO':4s} "
              f"| {base_dir:5s} x{base_ratio:<4g} {'yes' if base_ok else 'NO'}")
    return rows


def sweeps(folder: Path) -> None:
    """Table 2: advice from single runs against the sweeps' outcomes."""
    print(f"\n{'sweep':12s} {'lr':>8s} {'late':>5s} advice        basis                  "
          "outcome   agree | threshold rule")
    rows = []
    if (folder / GARG).exists():
        garg = {float(re.sub(r"^lr_sweep_", "", run.run_name)): run
                for run in load_runs(folder / GARG)}
        rows += sweep_rows("garg-aayush", garg)
    if all((folder / f).exists() for f in S4.values()):
        rows += sweep_rows("Shibuki S4", {lr: load_runs(folder / f)[0] for lr, f in S4.items()})
    for name, file in COLLAPSED.items():
        if (folder / file).exists():  # a collapsed run alone: its outcome is "lower"
            run = load_runs(folder / file)[0]
            rows += sweep_rows(name, {4e-5: run})
    agree = sum(r[0] for r in rows)
    base = sum(r[1] for r in rows)
    safe = sum(r[2] for r in rows)
    print(f"\nadvice agrees with the sweep on {agree} of {len(rows)} runs; the threshold rule on "
          f"{base} of {len(rows)}; advice below every collapsing lr on {safe} of {len(rows)}")


def main() -> int:
    """Print both tables."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--logs", type=Path, default=LOGS, help="folder of real logs")
    args = parser.parse_args()
    if not args.logs.is_dir():
        print(f"advice benchmark: {args.logs}: no such folder (the public real-log corpus); "
              "give --logs FOLDER", file=sys.stderr)
        return 2
    every_log(args.logs)
    sweeps(args.logs)
    return 0


if __name__ == "__main__":
    sys.exit(main())
