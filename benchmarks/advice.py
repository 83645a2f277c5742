"""Advice from every log, and advice against the public learning-rate sweeps.

Prints two tables:

1. every run of every log in the folder: whether it loads, whether it gets advice, with its
   direction, ratio, basis and status (the target: advice on at least 95% of the runs that
   load, each with its basis);
2. every run of the public lr sweeps (garg-aayush's six learning rates; ShibukiZero's S4 pair
   1e-5 / 4e-5) and the corpus's collapsed runs (ShibukiZero S1 e8/e16, S2 no-clip): the advice
   from that run alone, the sweep's outcome, and whether they agree, beside a threshold-rule
   baseline (x2 if the reward rose less than two standard errors, x0.5 if it fell by more).
   The slow-mode rule (a run still rising beyond its noise over its last third) was designed on
   the garg-aayush sweep alone and is scored on the other rows unchanged: the table gives the
   design and the scored figures apart. The other controlled sets of the corpus (S1 epochs and
   train batch, S2 clip, S3 loss, S7 KL, S8 seeds) do not vary the lr: only their collapses are
   scored. Columns: ``end t`` is the last third's slope over its standard error (beyond
   ``numerics.advise.late_relaxation``'s critical t the run is still rising at its end: a plateau
   not reached is visible in that run), ``tau`` the relaxation time the whole run gives (its
   bound where the data bound it, ``>`` or ``<``), ``slow`` the slow mode's when it sets the advice,
   ``goal`` the goal tau.

The sweep's outcome is read from the sweep, not from the advice: a run collapsed when the mean of
its last third is below half of its best third's; "raise" is the outcome where a higher lr of the
same sweep ended higher (last-third mean) without collapsing; "lower" where the run collapsed;
"not above" where no higher lr did better (then any advice that stays below the lowest
collapsing lr agrees). Advice at or beyond a collapsing lr never agrees. ``late`` is the mean
reward of each run's last third: where it rises with lr among runs that all saturated, the
sweep's plateau depends on lr, which the mean-field map (r* independent of lr) does not carry.

With ``--bandit-seed N`` a third table scores the same advice on an lr sweep simulated with the
softmax-bandit lab at that seed (heavy-ball SGD, momentum 0.9, no KL, four prompts, G = 16,
150 steps, lr 0.01 to 1): each run is written as a TRL trainer_state.json and read back by the
loaders, so the advice sees what it sees on a real log. A seed never run before gives data made
after the advice's rules were fixed.

Usage: ``python benchmarks/advice.py [--logs FOLDER] [--bandit-seed N]`` (default
/work/shared/data/real_logs).
"""

from __future__ import annotations

import argparse
import math
import re
import sys
from pathlib import Path

import numpy as np

from grpodyn.empirical.logs.advice import LogAdvice, advise_log, run_trend
from grpodyn.empirical.logs.loaders import LogFormatError, Run, load_runs
from grpodyn.ground import InputError
from grpodyn.numerics.advise import late_relaxation

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


def _taus(advice: LogAdvice) -> tuple[str, str]:
    """The whole run's tau and the slow mode's, as printed (see the module)."""
    tau, slow = advice.basis["tau"], "-"
    if tau["kind"] == "slow_mode":
        tau, slow = tau["whole_run"], f"{tau['value']:.3g}"
    if tau["value"] is not None:
        return f"{tau['value']:.3g}", slow
    if tau["lower"]:
        return f">{tau['lower']:.3g}", slow
    return (f"<{tau['upper']:.3g}" if tau["upper"] else "-"), slow


def _end_t(run: Run) -> tuple[str, bool]:
    """The last third's t as printed, and whether the run still rises at its end."""
    late = late_relaxation(run.steps, run.reward)
    if late is None:
        return "-", False
    return f"{late['t']:.1f}" + ("*" if late["rising"] else ""), late["rising"]


Row = tuple[bool, bool, bool, bool, bool]


def sweep_rows(name: str, sweep: dict[float, Run]) -> list[Row]:
    """Print one sweep's rows; return the flags of each run.

    The flags: advice agrees, baseline agrees, advice below every collapsing lr, the outcome is
    raise, the run still rises at its end.
    """
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
        end_t, rising = _end_t(run)
        rows.append((ok, base_ok, new < collapse_lr, outcomes[lr] == "raise", rising))
        whole, slow = _taus(advice)
        print(f"{name:12s} {lr:8.2g} {_late(run):5.3f} {end_t:>6s} {whole:>6s} {slow:>6s} "
              f"{advice.basis['goal_tau']:5.3g} {rec['direction']:5s} x{rec['lr_ratio']:<6.3g} "
              f"{advice.basis['kind']:22s} {outcomes[lr]:9s} {'yes' if ok else 'NO':4s} "
              f"| {base_dir:5s} x{base_ratio:<4g} {'yes' if base_ok else 'NO'}")
    return rows


def _score(label: str, rows: list[Row]) -> None:
    print(f"{label}: advice agrees on {sum(r[0] for r in rows)} of {len(rows)}, the threshold "
          f"rule on {sum(r[1] for r in rows)} of {len(rows)}; advice below every collapsing lr "
          f"on {sum(r[2] for r in rows)} of {len(rows)}")


def sweeps(folder: Path) -> None:
    """Table 2: advice from single runs against the sweeps' outcomes."""
    print(f"\n{'sweep':12s} {'lr':>8s} {'late':>5s} {'end t':>6s} {'tau':>6s} {'slow':>6s} "
          f"{'goal':>5s} advice        basis                  outcome   agree | threshold rule")
    design, scored = [], []
    if (folder / GARG).exists():
        garg = {float(re.sub(r"^lr_sweep_", "", run.run_name)): run
                for run in load_runs(folder / GARG)}
        design += sweep_rows("garg-aayush", garg)
    if all((folder / f).exists() for f in S4.values()):
        scored += sweep_rows("Shibuki S4", {lr: load_runs(folder / f)[0] for lr, f in S4.items()})
    for name, file in COLLAPSED.items():
        if (folder / file).exists():  # a collapsed run alone: its outcome is "lower"
            run = load_runs(folder / file)[0]
            scored += sweep_rows(name, {4e-5: run})
    print("(* in end t: still rising beyond its noise at its end)\n")
    _score("design (garg-aayush sweep)", design)
    _score("scored (ShibukiZero S4 and the collapsed runs, no change after the design)", scored)
    _score("all", design + scored)
    raise_rows = [r for r in design + scored if r[3]]
    print(f"where a higher lr did better, the run alone still rises at its end (the plateau not "
          f"reached is visible in it) on {sum(r[4] for r in raise_rows)} of {len(raise_rows)}; "
          "elsewhere its end is flat within its noise (or too short to tell), and a plateau that "
          "rises with the lr is not visible in one run")


#: The simulated sweep: learning rates of heavy-ball SGD on the two-arm bandit without KL.
BANDIT_LRS = (0.01, 0.03, 0.1, 0.3, 1.0)


def bandit_sweep(seed: int) -> None:
    """Table 3: advice from single runs of a simulated lr sweep against its outcome."""
    import tempfile
    from dataclasses import replace

    from grpodyn.empirical.bandit.lab import DEFAULT_CONFIG
    from grpodyn.empirical.bandit.simulation import simulate_bandit

    config = replace(DEFAULT_CONFIG, kl=0.0, momentum=0.9)
    sweep = {}
    with tempfile.TemporaryDirectory() as folder:
        for lr in BANDIT_LRS:
            path = Path(folder) / f"bandit_lr{lr:g}_trainer_state.json"
            simulate_bandit(replace(config, lr=lr), steps=150, seeds=1,
                            seed=seed).write_trainer_state(path)
            sweep[lr] = load_runs(path)[0]
    print(f"\n{'sweep':12s} {'lr':>8s} {'late':>5s} {'end t':>6s} {'tau':>6s} {'slow':>6s} "
          f"{'goal':>5s} advice        basis                  outcome   agree | threshold rule")
    rows = sweep_rows(f"bandit {seed}", sweep)
    print("(* in end t: still rising beyond its noise at its end)\n")
    _score(f"simulated (bandit seed {seed}, made after the rules were fixed)", rows)


def main() -> int:
    """Print both tables."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--logs", type=Path, default=LOGS, help="folder of real logs")
    parser.add_argument("--bandit-seed", type=int, help="also score a simulated lr sweep of "
                        "the bandit lab at this seed")
    args = parser.parse_args()
    if not args.logs.is_dir():
        print(f"advice benchmark: {args.logs}: no such folder (the public real-log corpus); "
              "give --logs FOLDER", file=sys.stderr)
        return 2
    every_log(args.logs)
    sweeps(args.logs)
    if args.bandit_seed is not None:
        bandit_sweep(args.bandit_seed)
    return 0


if __name__ == "__main__":
    sys.exit(main())
