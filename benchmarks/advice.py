"""Advice from every log, and advice against the public learning-rate sweeps.

Prints two tables (and one more for each kind of simulated or tiny-model sweep asked for):

1. every run of every log in the folder: whether it loads, whether it gets advice, with its
   direction, ratio, basis and status (the target: advice on at least 95% of the runs that
   load, each with its basis);
2. every run of the public lr sweeps (garg-aayush's six learning rates; ShibukiZero's S4 pair
   1e-5 / 4e-5) and the corpus's collapsed runs (ShibukiZero S1 e8/e16, S2 no-clip): the advice
   from that run alone, the sweep's outcome, and whether they agree, beside a threshold-rule
   baseline (x2 if the reward rose less than two standard errors, x0.5 if it fell by more).
   The other controlled sets of the corpus (S1 epochs and train batch, S2 clip, S3 loss, S7
   KL, S8 seeds) do not vary the lr: only their collapses are scored. Columns: ``end t`` is the
   last third's slope over its standard error (beyond
   ``numerics.advise.late_relaxation``'s critical t the run is still rising at its end: a plateau
   not reached is visible in that run), ``tau`` the relaxation time the whole run gives (its
   bound where the data bound it, ``>`` or ``<``), ``slow`` the slow mode's when it sets the advice,
   ``goal`` the goal tau.

The sweep's outcome is read from the sweep, not from the advice: a run collapsed when the mean of
its last third is below half of its best third's, of its start's (its first twentieth) or of its
sweep's start (the lowest lr's: a run that falls in its first steps and stays down); "raise"
is the outcome where a higher lr of the same sweep ended higher (last-third mean) without
collapsing; "lower" where the run collapsed;
"not above" where no higher lr did better (then any advice that stays below the lowest
collapsing lr agrees). Advice at or beyond a collapsing lr never agrees. ``late`` is the mean
reward of each run's last third: where it rises with lr among runs that all saturated, the
sweep's plateau depends on lr, which the mean-field map (r* independent of lr) does not carry.

A second outcome, in the target's words ("raise where a higher lr learned faster without
collapse"), is printed beside the first (``faster``): each run's reward is smoothed by a trailing
running mean over a sixth of its points; the run's gain is the smoothed best minus the smoothed
start, and its level is the start plus 90% of that gain. "raise" where some higher lr of the sweep,
not collapsing, brings its own smoothed reward to that level in fewer steps (counted from each
run's first logged step) than the run itself; for a run whose gain is within two standard errors
of a difference of two smoothed points (noise from first differences), "raise" where some higher
lr, not collapsing, gained beyond that; "lower" and "not above" as before. The threshold rule is
scored against both outcomes.

With ``--bandit-seed N`` a third table scores the same advice on an lr sweep simulated with the
softmax-bandit lab at that seed (heavy-ball SGD, momentum 0.9, no KL, four prompts, G = 16,
150 steps, lr 0.01 to 1): each run is written as a TRL trainer_state.json and read back by the
loaders, so the advice sees what it sees on a real log.

With ``--categorical-seed N`` a fourth table does the same with the categorical simulator of
studies/diagnosis (a categorical policy per prompt, heavy ball, a KL pull): its ``healthy``
settings at seed N, run at lr 0.01 to 30 (its own lr is 0.3-0.8; lr times the KL weight stays
below the KL pull's limit 2 (1 + beta), so no run diverges, while the policy-gradient part makes
the highest lrs oscillate), each written as a TRL trainer_state.json (without the momentum, as
TRL logs it) and read back by the loaders. A run is unstable, its outcome "lower", where it
collapsed as above or where the simulator's own rule (``label_of`` of its limit-cycle family,
on its exact state) finds its success oscillating.

With ``--third-sim-seed N`` a fifth table does the same with the third simulator of
studies/diagnosis_third_sim (a softmax policy shared by all prompts, with a hidden layer, Adam,
an answer and a length per completion), built without reading the advice: its ``healthy``
settings at seed N, run at Adam lrs 0.0025 to 0.64 (its healthy family draws 0.01-0.04, its
high-lr family 0.2-1.0), written with every metric and read back. A run is unstable where the
simulator's own label rule on its exact state names a dynamical instability.

With ``--tiny-grids`` a last table scores the advice on the lr sweeps within the tiny-model grids
(real TRL GRPO runs of a tiny Llama on single-digit addition, ``studies/tiny_grids``): each set
of runs that share the grid, optimizer, G, B and seed (the same warmed-up weights) is a sweep;
grid2's runs and grid2_high's (its lrs extended upward into the collapse) join into one sweep of
five lrs per seed (grid2b and grid2c likewise, at later seeds). The rules that lower the lr where
the policy concentrated were designed on grid2 and grid2b; which grid scored which rule is in
each table's label (``TINY_ROLES``); the other rules saw none of these runs.

Which data the rules saw: the slow-mode rule was designed on the garg-aayush sweep alone and
scored on the ShibukiZero runs; the headroom rule (raise toward critical damping,
empirical/logs/advice.py) was designed on all the public runs of table 2 and the bandit sweep at
seed 90001; its target, the fastest settling into the 10% band (numerics.settling, also the
floor of the goal), on the public runs, bandit seeds 90001-90007 and categorical seeds
1001-1006; the categorical grid was set from the simulator's outcomes (not the advice) at
seeds 1 and 2. Other seeds score the advice as it stands; each table says which.

Usage: ``python benchmarks/advice.py [--logs FOLDER] [--bandit-seed N ...]
[--categorical-seed N ...]`` (default ../shared/data/real_logs beside the checkout).
"""

from __future__ import annotations

import argparse
import json
import math
import re
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np

from grpodyn.empirical.logs.advice import LogAdvice, advise_log, run_trend
from grpodyn.empirical.logs.loaders import LogFormatError, Run, load_runs
from grpodyn.ground import InputError
from grpodyn.numerics.advise import late_relaxation

LOGS = Path(__file__).resolve().parents[2] / "shared" / "data" / "real_logs"  # beside the checkout
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
    loaded = advised = with_basis = pinned = 0
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
            pinned += advice.basis["trend"] == "pinned"
            rec = advice.recommendation
            print(f"{path.name[:44]:44s} {str(run.run_name or '')[:16]:16s} "
                  f"{rec['direction']:5s} x{rec['lr_ratio']:<6.3g} {advice.basis['kind']:22s} "
                  f"{advice.status}")
    print(f"\nruns that load: {loaded}; with advice: {advised} ({100 * advised / loaded:.0f}%); "
          f"with a measured or bounded basis: {with_basis} ({100 * with_basis / loaded:.0f}%); "
          f"with a reward pinned at one value, where no lr changes anything (basis "
          f"not_determined, said): {pinned}")


def _late(run: Run) -> float:
    return float(np.mean(np.array_split(run.reward, 3)[2]))


def _start(run: Run) -> float:
    """The mean of the run's first twentieth (at least three points)."""
    return float(np.mean(run.reward[:max(3, run.reward.size // 20)]))


def _collapsed(run: Run, sweep_start: float) -> bool:
    """Whether the last third's mean is below half of the best of the thirds' and the starts'.

    The starts: the run's own and its sweep's (``sweep_start``, the lowest lr's, the one that
    moves least at first), which hold a run that falls within its first steps and stays down.
    """
    levels = [_start(run), sweep_start, *(float(np.mean(part))
                                          for part in np.array_split(run.reward, 3))]
    return _late(run) < 0.5 * max(levels)


def _outcomes(sweep: dict[float, Run], better: Callable[[Run, list[Run]], bool],
              unstable: frozenset[float] = frozenset()) -> dict[float, str]:
    """The sweep's outcome for each lr (see the module): "lower" where the run collapsed (or its
    lr is in ``unstable``), "raise" where ``better(run, higher)`` holds for the higher lrs that
    did not, "not above" otherwise."""
    start = _start(sweep[min(sweep)])
    out = {}
    for lr, run in sweep.items():
        if _collapsed(run, start) or lr in unstable:
            out[lr] = "lower"
            continue
        higher = [other for x, other in sweep.items()
                  if x > lr and not _collapsed(other, start) and x not in unstable]
        out[lr] = "raise" if better(run, higher) else "not above"
    return out


def _ended_higher(run: Run, higher: list[Run]) -> bool:
    """Outcome "ended higher": a higher lr's last third has the higher mean."""
    return any(_late(other) > _late(run) for other in higher)


def _smoothed(run: Run) -> tuple[np.ndarray, np.ndarray, float]:
    """Trailing running mean over a sixth of the points, its steps from the run's first, and the
    standard error of a difference of two such means (noise from first differences)."""
    width = max(1, run.reward.size // 6)
    smooth = np.convolve(run.reward, np.ones(width) / width, mode="valid")
    steps = run.steps[width - 1:] - run.steps[0]
    sigma = float(np.std(np.diff(run.reward)) / math.sqrt(2))
    return smooth, steps, sigma * math.sqrt(2 / width)


def _time_to(run: Run, level: float) -> float:
    """Steps from the run's first until its smoothed reward first reaches ``level`` (inf: never)."""
    smooth, steps, _ = _smoothed(run)
    hit = np.flatnonzero(smooth >= level)
    return float(steps[hit[0]]) if hit.size else math.inf


def _gained(run: Run) -> bool:
    """Whether the smoothed reward's best exceeds its start by two standard errors."""
    smooth, _, noise = _smoothed(run)
    return bool(smooth.max() - smooth[0] > 2 * noise)


def _learned_faster(run: Run, higher: list[Run]) -> bool:
    """Outcome "learned faster", the target's words (see the module)."""
    if not _gained(run):  # no gain beyond its noise: no level of its own; a higher lr that gained
        return any(_gained(other) for other in higher)
    smooth = _smoothed(run)[0]
    level = smooth[0] + 0.9 * float(smooth.max() - smooth[0])
    own = _time_to(run, level)
    return any(_time_to(other, level) < own for other in higher)


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
    if tau["kind"] == "slow_mode":  # its value, or its lower bound where only that is known
        slow = f"{tau['value']:.3g}" if tau["value"] is not None else f">{tau['lower']:.3g}"
        tau = tau["whole_run"]
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


class Row(NamedTuple):
    """One run of a sweep as scored: agreement under each outcome, and two facts about it."""

    advice: bool  # the advice agrees with the outcome "ended higher"
    rule: bool  # the threshold rule agrees with it
    advice_faster: bool  # the advice agrees with the outcome "learned faster"
    rule_faster: bool
    below_collapse: bool  # the advice stays below every collapsing lr
    raise_outcome: bool  # the outcome "ended higher" is raise
    rising: bool  # the run still rises at its end
    unconfirmed: bool  # the advice raises where no higher lr ended higher (both outcomes)
    collapse_in_sweep: bool  # the sweep has a collapsing lr (else the check below is vacuous)


HEADER = (f"{'sweep':12s} {'lr':>8s} {'late':>5s} {'end t':>6s} {'tau':>6s} {'slow':>6s} "
          f"{'goal':>5s} advice        basis                  higher    agr faster    agr "
          "| threshold rule  agr agr")


def sweep_fit_of(sweep: dict[float, Run], paths: dict[float, Path], overrides: dict[str, Any]
                 ) -> tuple[Any, list[Any]] | None:
    """The joint fit of a sweep's runs as ``grpodyn advise --sweep`` builds it, and the runs too
    short for it (under ten points, read for their falls), or None (said).

    ``overrides`` gives what the logs do not say (``--sweep-hparams``).
    """
    from grpodyn.empirical.logs.sweep import fit_sweep
    from grpodyn.empirical.logs.sweep_runs import FEWEST_POINTS, sweep_run_of

    try:
        runs = [sweep_run_of(run, paths[lr], overrides, name=f"lr {lr:g}")
                for lr, run in sorted(sweep.items()) if run.n_points >= 3]
        return (fit_sweep([r for r in runs if r.reward.size >= FEWEST_POINTS]),
                [r for r in runs if r.reward.size < FEWEST_POINTS])
    except InputError as exc:
        print(f"  no sweep fit, the advice from each run alone: {exc}")
        return None


def sweep_rows(name: str, sweep: dict[float, Run], unstable: frozenset[float] = frozenset(),
               fit: tuple[Any, list[Any]] | None = None) -> list[Row]:
    """Print one sweep's rows (both outcomes); return the flags of each run.

    With ``fit`` (:func:`sweep_fit_of`) each run is advised as ``grpodyn advise --sweep`` would
    advise it, the sweep's exponents and falls beside the run.
    """
    fitted, short = fit if fit is not None else (None, [])
    outcomes = _outcomes(sweep, _ended_higher, unstable)
    faster = _outcomes(sweep, _learned_faster, unstable)
    collapse_lr = min([lr for lr, o in outcomes.items() if o == "lower"], default=math.inf)
    rows = []
    for lr, run in sorted(sweep.items()):
        advice = advise_log(run, sweep=fitted, sweep_short=short)
        rec = advice.recommendation
        new = lr * rec["lr_ratio"]
        base_dir, base_ratio = threshold_rule(run)
        row = Row(_agrees(rec["direction"], new, outcomes[lr], collapse_lr),
                  _agrees(base_dir, lr * base_ratio, outcomes[lr], collapse_lr),
                  _agrees(rec["direction"], new, faster[lr], collapse_lr),
                  _agrees(base_dir, lr * base_ratio, faster[lr], collapse_lr),
                  new < collapse_lr, outcomes[lr] == "raise", _end_t(run)[1],
                  rec["direction"] == "raise" and outcomes[lr] == faster[lr] == "not above",
                  math.isfinite(collapse_lr))
        rows.append(row)
        whole, slow = _taus(advice)
        yes = {True: "yes", False: "NO"}
        print(f"{name:12s} {lr:8.2g} {_late(run):5.3f} {_end_t(run)[0]:>6s} {whole:>6s} "
              f"{slow:>6s} {advice.basis['goal_tau']:5.3g} {rec['direction']:5s} "
              f"x{rec['lr_ratio']:<6.3g} {advice.basis['kind']:22s} {outcomes[lr]:9s} "
              f"{yes[row.advice]:3s} {faster[lr]:9s} {yes[row.advice_faster]:3s} "
              f"| {base_dir:5s} x{base_ratio:<4g}    {yes[row.rule]:3s} {yes[row.rule_faster]}")
    return rows


def _score(label: str, rows: list[Row]) -> None:
    n, raised = len(rows), [r for r in rows if r.raise_outcome]
    print(f"{label}:\n  ended higher:  advice agrees on {sum(r.advice for r in rows)} of {n}, "
          f"the threshold rule on {sum(r.rule for r in rows)} of {n}\n"
          f"  learned faster: advice agrees on {sum(r.advice_faster for r in rows)} of {n}, "
          f"the threshold rule on {sum(r.rule_faster for r in rows)} of {n}\n"
          f"  advice below every collapsing lr on {sum(r.below_collapse for r in rows)} of {n}"
          + ("" if any(r.collapse_in_sweep for r in rows) else " (no lr collapses here)")
          + f"\n  advice raises where no higher lr did better under either outcome (agreement "
          f"that the sweep cannot confirm): {sum(r.unconfirmed for r in rows)} of {n}\n"
          f"  where a higher lr ended higher without collapse, the advice raises on "
          f"{sum(r.advice for r in raised)} of {len(raised)}")


def sweeps(folder: Path) -> None:
    """Table 2: advice from single runs against the sweeps' outcomes."""
    print("\n" + HEADER)
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
    _score("garg-aayush sweep (designed on: the slow-mode and the headroom rules)", design)
    _score("ShibukiZero S4 and the collapsed runs (scored the slow-mode rule; seen while the "
           "headroom rule was designed)", scored)
    _score("all public runs", design + scored)
    raise_rows = [r for r in design + scored if r.raise_outcome]
    print(f"where a higher lr did better, the run alone still rises at its end (the plateau not "
          f"reached is visible in it) on {sum(r.rising for r in raise_rows)} of {len(raise_rows)}; "
          "elsewhere its end is flat within its noise (or too short to tell), and a plateau that "
          "rises with the lr is not visible in one run")


#: The simulated sweep: learning rates of heavy-ball SGD on the two-arm bandit without KL.
BANDIT_LRS = (0.01, 0.03, 0.1, 0.3, 1.0)


#: Seeds of the simulated sweeps that the advice's rules were designed on; others score them.
DESIGN_SEEDS = {"bandit": set(range(90001, 90008)), "categorical": {1, 2, *range(1001, 1007)}}


def _seed_label(kind: str, seed: int) -> str:
    return (f"{kind} seed {seed}, " + ("seen while the rules or the grid were designed"
                                       if seed in DESIGN_SEEDS[kind] else "scored"))


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
    print("\n" + HEADER)
    rows = sweep_rows(f"bandit {seed}", sweep)
    print("(* in end t: still rising beyond its noise at its end)\n")
    _score(f"simulated ({_seed_label('bandit', seed)})", rows)


#: The categorical simulator's lr sweep: slow, its healthy family's own lr (0.3-0.8), and past
#: the point where its reward oscillates.
CATEGORICAL_LRS = (0.01, 0.03, 0.1, 0.3, 1.0, 3.0, 10.0, 30.0)
CATEGORICAL = Path(__file__).resolve().parents[1] / "studies" / "diagnosis"


def categorical_sweep(seed: int) -> None:
    """Table 4: advice from single runs of the categorical simulator's lr sweep."""
    import tempfile
    from dataclasses import replace

    sys.path.insert(0, str(CATEGORICAL))
    from categorical_sim import label_of, settings, simulate, write_run

    config = settings("healthy", seed)
    sweep, unstable = {}, set()
    with tempfile.TemporaryDirectory() as folder:
        for lr in CATEGORICAL_LRS:
            run_config = replace(config, lr=lr)
            log, truth = simulate(run_config, seed=seed)
            if not np.all(np.isfinite(truth)) \
                    or label_of("limit_cycle", truth) == "dynamical_instability":
                unstable.add(lr)  # diverged, or the simulator's own rule: it oscillates
            path = write_run(Path(folder) / f"lr{lr:g}", log, config=run_config, keys="full",
                             with_g=True, label="healthy", seed=seed)
            sweep[lr] = load_runs(path)[0]
    print(f"\ncategorical simulator, healthy family at seed {seed} (momentum "
          f"{config.momentum:g}, kl {config.kl:.3g}, G {config.group_size}); oscillating "
          f"(unstable): lr {sorted(unstable) or 'none'}\n" + HEADER)
    rows = sweep_rows(f"categ. {seed}", sweep, frozenset(unstable))
    print("(* in end t: still rising beyond its noise at its end)\n")
    _score(f"simulated ({_seed_label('categorical', seed)})", rows)


#: The third simulator's lr sweep (Adam steps): below its healthy family's range (0.01-0.04),
#: through it, and into its high-lr family's (0.2-1.0), where the policy collapses.
THIRD_SIM_LRS = (0.0025, 0.005, 0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64)
THIRD_SIM = Path(__file__).resolve().parents[1] / "studies" / "diagnosis_third_sim"


def third_sim_sweep(seed: int, with_sweep: bool = False) -> None:
    """Table 5: advice from single runs of the third simulator's lr sweep.

    The healthy family's settings at ``seed`` (a shared softmax policy with a hidden layer,
    Adam, two decisions per completion; ``studies/diagnosis_third_sim``), run at every lr of
    :data:`THIRD_SIM_LRS`, each written as TRL writes it with every metric and read back. A run
    is unstable where the simulator's own label rule, on its exact state, names a dynamical
    instability (its noise-free objective fell 0.15 below its best, or one step moved the
    policy by a nat).
    """
    import tempfile

    sys.path.insert(0, str(THIRD_SIM))
    import sim

    config = sim.make_config("healthy", np.random.default_rng([seed, 0, 1]))
    sweep, unstable, paths = {}, set(), {}
    with tempfile.TemporaryDirectory() as folder:
        for lr in THIRD_SIM_LRS:
            rows, args, state = sim.simulate({**config, "lr": lr}, [seed, 0, 2])
            if sim.label_of(state)[0] == "dynamical_instability":
                unstable.add(args["learning_rate"])
            path = sim.write_run(Path(folder) / f"lr{lr:g}", rows, args, "all")
            sweep[args["learning_rate"]] = load_runs(path)[0]
            paths[args["learning_rate"]] = path
        fit = sweep_fit_of(sweep, paths, {"group_size": config["G"], "batch": config["B"]}) \
            if with_sweep else None
    print(f"\nthird simulator, healthy family at seed {seed} (Adam, G {config['G']}, B "
          f"{config['B']}, beta {config['beta']:g}, {config['mu']} update(s) per batch, "
          f"{config['reward']} reward); logged lrs are Adam's x {sim.LR_SCALE:g}; unstable by "
          f"the simulator's rule: lr {', '.join(f'{lr:.2g}' for lr in sorted(unstable)) or 'none'}"
          "\n" + HEADER)
    rows = sweep_rows(f"third {seed}", sweep, frozenset(unstable))
    print("(* in end t: still rising beyond its noise at its end)\n")
    _score(f"simulated (third simulator seed {seed}, never designed on)", rows)
    if fit is not None:
        print("\nthe same runs, each advised with the sweep given (grpodyn advise --sweep)\n"
              + HEADER)
        rows = sweep_rows(f"third {seed}", sweep, frozenset(unstable), fit)
        _score(f"with the sweep given (third simulator seed {seed})", rows)


#: The tiny-model TRL grids (studies/tiny_grids): real GRPO runs.
TINY_GRIDS = Path(__file__).resolve().parents[1] / "studies" / "tiny_grids" / "data"
#: What each grid was to the advice's rules (the concentration rules of mode_advice.py).
TINY_ROLES = {"tiny_grid2": "seeds 0-20, seen while the concentration rules were designed",
              "tiny_grid2b": "seeds 21-28, scored the flagged-concentration rule (frozen at "
                             "48c5c15) once, then seen while the entropy rule was designed",
              "tiny_grid2c": "seeds 29-36, scored both rules (frozen at 3522265) once",
              "tiny_grid2d": "seeds 37-40, scored the rules after their review (b5f2990) once",
              "tiny_grid2e": "seeds 41-48, made after the rules were last scored (acdca2d), "
                             "scored them once more",
              "tiny_climb": "seeds 49-56, three lrs over x4 below the collapse at B 32, made "
                            "after the rules were last scored (acdca2d), scored them once",
              "tiny_climb_b": "seeds 57-64, the climb design again, made after those scores, "
                              "scored the rules once more",
              "tiny_climb_c": "seeds 65-68, the climb design a third time, made before the "
                              "plateau's runs-on test (ae7f501) and scored after it, once",
              "tiny_climb_d": "seeds 69-72, the climb design a fourth time, made after the "
                              "runs-on test and the late-fall state (9746f6a), scored once",
              "tiny_grid2f": "seeds 69-72, grid2 and grid2_high again, made after the runs-on "
                             "test and the late-fall state (9746f6a), scored once"}


def tiny_setting(path: Path) -> tuple[str, float, int, int, int] | None:
    """(optimizer, lr, G, B, seed) of a tiny-model run, from the ``grpodyn_hparams`` record
    that make_grid writes into it; None for a file without one (not a grid run)."""
    try:
        hp = json.loads(path.read_text())["grpodyn_hparams"]
        return (str(hp["optimizer"]), float(hp["lr"]), int(hp["group_size"]), int(hp["batch"]),
                int(hp["seed"]))
    except (OSError, ValueError, KeyError, TypeError):
        return None


def tiny_grid_sweeps(folder: Path, with_sweep: bool = False) -> None:
    """The last table: advice from single tiny-model TRL runs against their grid's lr sweep.

    Every set of runs of one grid that share the optimizer, G, B and seed and differ in the lr
    is one sweep (tiny_grid: Adam at lr 3e-4 to 1.2e-3 and SGD at 5e-3 to 2e-2, G 4, B 8,
    three seeds; tiny_grid2: Adam at 1e-4 to 4e-4 and SGD at 1.5e-3 to 6e-3, G 8, B 8, 21
    seeds each, joined by tiny_grid2_high's runs of the same seed, Adam at 1.2e-3 and 3.6e-3
    and SGD at 0.02 and 0.06, the same warmed-up weights: five lrs over a factor 36 that
    reach the collapse; tiny_grid2b to tiny_grid2f with their ``_high`` folders likewise at
    seeds 21-48 and 69-72; tiny_climb: Adam at 5e-5 to 2e-4 and SGD at 7.5e-4 to 3e-3, G 8,
    B 32, seeds 49-56, and tiny_climb_b to tiny_climb_d likewise at seeds 57-72, runs that
    still climb at their end). Each run's setting is read from the
    ``grpodyn_hparams`` record it carries (:func:`tiny_setting`), not from its file name.
    """
    groups: dict[tuple[str, str, int, int, int], dict[float, Path]] = {}
    for grid in sorted(p for p in folder.iterdir() if p.is_dir() and p.name != "tiny_testbed"):
        for path in sorted(grid.glob("*.json")):
            setting = tiny_setting(path)
            if setting is not None:
                opt, lr, g, b, seed = setting
                groups.setdefault((grid.name.removesuffix("_high"), opt, g, b, seed), {})[lr] = path
    rows: dict[str, list[Row]] = {}
    print("\n" + HEADER)
    for (grid, opt, g, b, seed), paths in sorted(groups.items()):
        if len(paths) < 2:
            continue
        sweep = {lr: load_runs(path)[0] for lr, path in paths.items()}
        rows.setdefault(f"{grid} {opt} G{g} B{b}", []).extend(
            sweep_rows(f"{grid[5:]} {opt[0]} s{seed}", sweep))
        if with_sweep:
            rows.setdefault(f"{grid} {opt} G{g} B{b} with the sweep given", []).extend(
                sweep_rows(f"{grid[5:]} {opt[0]} s{seed} +", sweep, fit=sweep_fit_of(
                    sweep, paths, {})))
    print("(* in end t: still rising beyond its noise at its end)\n")
    for label, group in rows.items():
        role = TINY_ROLES.get(label.split()[0], "not seen by the advice's rules")
        _score(f"{label} (real TRL runs of a tiny Llama; {role})", group)
    _score("every tiny-model sweep", [r for label, group in rows.items()
                                      if not label.endswith("given") for r in group])
    if with_sweep:
        _score("every tiny-model sweep, with the sweep given", [
            r for label, group in rows.items() if label.endswith("given") for r in group])


def main() -> int:
    """Print the tables."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--logs", type=Path, default=LOGS, help="folder of real logs")
    parser.add_argument("--bandit-seed", type=int, nargs="*", default=[], help="also score "
                        "a simulated lr sweep of the bandit lab at each seed")
    parser.add_argument("--categorical-seed", type=int, nargs="*", default=[], help="also "
                        "score an lr sweep of the categorical simulator (studies/diagnosis) "
                        "at each seed")
    parser.add_argument("--third-sim-seed", type=int, nargs="*", default=[], help="also "
                        "score an lr sweep of the third simulator (studies/diagnosis_third_sim) "
                        "at each seed")
    parser.add_argument("--tiny-grids", type=Path, nargs="?", const=TINY_GRIDS, default=None,
                        metavar="DIR", help="also score the lr sweeps within the tiny-model "
                        "TRL grids: the grid folders in DIR (default studies/tiny_grids/data)")
    parser.add_argument("--with-sweep", action="store_true", help="score the third simulator's "
                        "and the tiny grids' sweeps also with each sweep given to the advice "
                        "(grpodyn advise --sweep: its exponents and the lr at which it fell)")
    args = parser.parse_args()
    if not args.logs.is_dir():
        print(f"advice benchmark: {args.logs}: no such folder (the public real-log corpus); "
              "give --logs FOLDER", file=sys.stderr)
        return 2
    if args.tiny_grids is not None and not args.tiny_grids.is_dir():
        print(f"advice benchmark: --tiny-grids {args.tiny_grids}: no such folder",
              file=sys.stderr)
        return 2
    every_log(args.logs)
    sweeps(args.logs)
    for seed in args.bandit_seed:
        bandit_sweep(seed)
    for seed in args.categorical_seed:
        categorical_sweep(seed)
    for seed in args.third_sim_seed:
        third_sim_sweep(seed, args.with_sweep)
    if args.tiny_grids is not None:
        tiny_grid_sweeps(args.tiny_grids, args.with_sweep)
    return 0


if __name__ == "__main__":
    sys.exit(main())
