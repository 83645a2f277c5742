"""The stratified forecast matrix printed by ``python benchmarks/forecast.py``.

Sources: ``public`` (the public GRPO logs that load, ``../shared/data/real_logs``), ``tiny_grids``
(the shipped tiny-model TRL runs of ``studies/tiny_grids/data/tiny_grid`` and ``tiny_grid2``),
``bandit`` (simulated softmax-bandit runs of the diagnosis test bed, seeds 0-3 of every
class, 400 steps), ``deepnet`` (the deep-network relaxation runs,
``studies/deepnet/data/*relaxruns*.json``) and ``bandit_fresh`` (seeds 100-103 of the same
test bed). The trend-aware forecaster (``adaptive``) was designed on ``public``, ``tiny_grids``
and ``bandit``; ``deepnet`` and ``bandit_fresh`` are its held-out sources (scored once, after
the freeze recorded in ``FROZEN``). Its revision 2 (regimes quiet / saturating / climbing,
locally weighted conformal bands) was designed on ``public``, ``bandit`` (seeds 0-3) and
``categorical`` seeds 0-39, then frozen before categorical seeds 1000-1039 and bandit seeds
500-503 were scored once. ``categorical`` (``--seeds A-B``, default 0-19) draws runs
from the categorical simulator of ``studies/diagnosis/categorical_sim.py`` (independent of every
forecaster's design), in turn per seed: two of its healthy family at slow lrs (log-uniform in
0.02-0.3, every prompt in every batch, so that many runs still climb at the cut), one of its
reward-hacking family (the optimised reward keeps rising) and one of its length-collapse family
(rises, then may collapse), each 300-600 steps. ``--seeds`` also replaces the seeds of
``bandit``. The calibrated prior (``calibrated_prior``, the learned prior's median with a band
split-conformal on its own rolling-origin errors inside the training part) was designed on
``public``, ``bandit`` seeds 0-3 and 500-503 and ``categorical`` seeds 0-39 and 1000-1039, then
frozen (``FROZEN``) before categorical seeds 2000-2039 and bandit seeds 600-603 were scored once.
The adaptive forecaster's revision 3 (a quiet run at its recent level unless a member beats
it at the rolling origins; a climb that stalls in its last 20% is quiet) was designed on
``public``, ``deepnet``, ``bandit`` seeds 0-3, 500-503 and 600-603 and ``categorical`` seeds
0-39, 1000-1039 and 2000-2039, then frozen (``FROZEN``) before categorical seeds 3000-3039 and
bandit seeds 700-703 were scored once; it did not beat revision 2 there, and the module is
revision 2 again (``studies/forecast/README.md``).

``third_sim`` (``--seeds A-B``, default 0-11) draws one run per seed from the third simulator
of ``studies/diagnosis_third_sim`` (its six families in turn), built without reading any
forecaster, written as a TRL log with every metric and read back.

Forecasters: every one registered in :mod:`numerics.forecasters`: ``adaptive``
(:func:`numerics.forecast_adaptive.adaptive_forecast`), ``ensemble``
(:func:`numerics.forecast.forecast_curve`, the default of ``grpodyn forecast``),
``learned_prior``, ``calibrated_prior`` and the baselines and oracle of ``forecast_baselines``.
Each forecast is cut at F = 0.3 and 0.5; see ``forecast_baselines`` for the scores and the strata.
``--quick`` keeps every fourth run of each source; a JSON of every number goes to ``--json``.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from forecast import (  # noqa: E402  (sibling scripts)
    ROOT,
    deepnet_relaxation_runs,
    score_runs,
    tiny_grid2_runs,
    tiny_grid_runs,
)
from forecast_baselines import (  # noqa: E402
    LEVEL,
    baseline_scores,
    print_matrix,
    scores,
    stratum,
    summarise,
)

from grpodyn.empirical.logs.loaders import Run  # noqa: E402
from grpodyn.empirical.logs.meta import Hyperparameter, RunMeta
from grpodyn.empirical.logs.run_analysis import infer_reward_range, learning_rate_of, momentum_of
from grpodyn.ground import InputError
from grpodyn.ground.files import write_atomic
from grpodyn.numerics.fit import estimate_noise
from grpodyn.numerics.forecasters import FORECASTERS as REGISTRY
from grpodyn.numerics.forecasters import get_forecaster

MATRIX_SOURCES = ("public", "tiny_grids", "bandit", "deepnet", "bandit_fresh", "categorical",
                  "third_sim")
DEFAULT_SOURCES = ("public", "tiny_grids", "bandit", "deepnet")
#: Every registered forecaster (:data:`grpodyn.numerics.forecasters.FORECASTERS`), by name.
FORECASTERS = tuple(sorted(REGISTRY))
FRACTIONS = (0.3, 0.5)
RELAX_PREFIXES = ("relaxruns", "relaxruns_slow", "relaxruns_burnin",
                  "moreseeds_relaxruns_burnin", "relaxruns_linear", "relaxruns_long",
                  "relaxruns_precise")
#: Commits at which each forecaster was frozen, before its held-out sources were scored.
FROZEN = {"adaptive": "b4695cb", "adaptive revision 2": "45ab841", "calibrated prior": "8c91130",
          "adaptive revision 3": "d7df217", "ensemble: the prior's point and band": "569263e"}


def _bandit(seeds: range) -> list[tuple[str, Run]]:
    from grpodyn.empirical.diagnostics.testbed import LABELS, _bandit_case

    return [(case.name, case.run) for case in
            (_bandit_case(label, seed, 400) for label in LABELS for seed in seeds)]


#: The categorical simulator's families, in turn per seed (``categorical_runs``).
CATEGORICAL_FAMILIES = ("healthy", "healthy", "reward_hacking", "length_collapse")


def categorical_runs(seeds: range) -> list[tuple[str, Run]]:
    """Return one categorical-simulator run per seed (families ``CATEGORICAL_FAMILIES`` in turn).

    The simulator's own settings of the family at ``seed``; 300-600 steps; the healthy family at
    an lr drawn log-uniformly in [0.02, 0.3] with every prompt in every batch (48), so that the
    reward climbs slowly above the sampling noise. The heavy ball's momentum is logged.
    """
    from dataclasses import replace

    sys.path.insert(0, str(ROOT / "studies" / "diagnosis"))
    from categorical_sim import settings, simulate

    out = []
    for seed in seeds:
        family = CATEGORICAL_FAMILIES[seed % len(CATEGORICAL_FAMILIES)]
        rng = np.random.default_rng([seed, 77])
        config = replace(settings(family, seed), steps=int(rng.integers(300, 601)))
        if family == "healthy":
            config = replace(config, batch=48,
                             lr=float(np.exp(rng.uniform(np.log(0.02), np.log(0.3)))))
        log, _ = simulate(config, seed=seed)
        reward = np.array([entry["reward"] for entry in log if "reward" in entry])
        meta = RunMeta(momentum=Hyperparameter(config.momentum, "logged", "simulator setting"))
        out.append((f"categorical_{family}_s{seed}",
                    Run(f"categorical:{seed}", "categorical", np.arange(1.0, reward.size + 1),
                        reward, {}, meta=meta)))
    return out


def third_sim_runs(seeds: range) -> list[tuple[str, Run]]:
    """Return one run of the third simulator per seed (its six families in turn).

    ``studies/diagnosis_third_sim/sim.py``: a softmax policy shared by all prompts, Adam, an
    answer and a length per completion; built without reading any forecaster. Each run is
    written as TRL writes it, with every metric, and read back by the loaders (150-400 points).
    """
    import tempfile

    sys.path.insert(0, str(ROOT / "studies" / "diagnosis_third_sim"))
    import sim

    from grpodyn.empirical.logs.loaders import load_run

    out = []
    with tempfile.TemporaryDirectory() as folder:
        for seed in seeds:
            index = seed % len(sim.FAMILIES)
            family = sim.FAMILIES[index]
            config = sim.make_config(family, np.random.default_rng([seed, index, 1]))
            rows, args, _ = sim.simulate(config, [seed, index, 2])
            path = sim.write_run(Path(folder) / f"s{seed}", rows, args, "all")
            out.append((f"third_sim_{family}_s{seed}", load_run(path)))
    return out


def load_matrix_source(source: str, logs: Path, seeds: range | None = None
                       ) -> list[tuple[str, Run]]:
    """Return the runs of ``source`` (one of ``MATRIX_SOURCES``).

    ``seeds``: the seeds of ``categorical`` (default 0-19), ``bandit`` (default 0-3) and
    ``third_sim`` (default 0-11).
    """
    if source == "categorical":
        return categorical_runs(range(20) if seeds is None else seeds)
    if source == "third_sim":
        return third_sim_runs(range(12) if seeds is None else seeds)
    if source == "public":
        if not logs.is_dir():
            raise InputError(f"{logs}: no public logs folder (give --logs)")
        runs, skipped = score_runs(logs)
        print(f"public logs skipped (do not load): {len(skipped)}", file=sys.stderr)
        return runs
    if source == "tiny_grids":
        return tiny_grid_runs() + tiny_grid2_runs(
            seeds=tuple(range(100)), folder=ROOT / "studies" / "tiny_grids" / "data" / "tiny_grid2")
    if source == "bandit":
        return _bandit(range(4) if seeds is None else seeds)
    if source == "bandit_fresh":
        return _bandit(range(100, 104))
    return deepnet_relaxation_runs(RELAX_PREFIXES)


def _forecaster_band(method: str, run: Run, n_train: int, bounds: tuple[float, float] | None
                     ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    t, y, future = run.steps, run.reward, run.steps[n_train:]
    beta, _ = momentum_of(run, None)
    lr = learning_rate_of(run)
    fc = get_forecaster(method).forecast(t, y, n_train=n_train, future_steps=future, level=LEVEL,
                                         bounds=bounds, momentum=beta,
                                         learning_rate=None if lr is None else (t, lr))
    return fc.point, fc.lower, fc.upper


def scored_cut(run: Run, fraction: float) -> tuple[int, float] | None:
    """Return (training points, noise sigma) of ``run`` cut at ``fraction``; None where the
    cut leaves fewer than 8 training points, fewer than 3 to score, a constant training part
    or no noise to scale the errors by."""
    n_train = int(np.floor(fraction * run.n_points))
    if n_train < 8 or run.n_points - n_train < 3 or np.ptp(run.reward[:n_train]) == 0:
        return None
    sigma = estimate_noise(run.reward).sigma
    return (n_train, sigma) if sigma > 0 else None


def evaluate_cut(run: Run, fraction: float, forecasters: tuple[str, ...]) -> dict | None:
    """Score every forecaster and baseline on ``run`` cut at ``fraction`` (None: too short)."""
    cut = scored_cut(run, fraction)
    if cut is None:
        return None
    n_train, sigma = cut
    held = run.reward[n_train:]
    bounds, _ = infer_reward_range(run)
    out: dict = {"stratum": stratum(run.reward[:n_train], held, sigma)}
    for method in forecasters:
        try:
            out[method] = scores(held, _forecaster_band(method, run, n_train, bounds), sigma)
        except InputError:
            out[method] = None
    out.update(baseline_scores(run.steps, run.reward, n_train, sigma))
    return out


def _seed_range(text: str) -> range:
    """Parse ``A-B`` (inclusive) or ``A`` into a range of seeds."""
    try:
        lo, _, hi = text.partition("-")
        first, last = int(lo), int(hi or lo)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not A-B (two integers)") from None
    if last < first or first < 0:
        raise argparse.ArgumentTypeError(f"{text!r}: need 0 <= A <= B")
    return range(first, last + 1)


def matrix_main(argv: list[str]) -> None:
    """Parse the options, score every source asked for and print its matrix."""
    parser = argparse.ArgumentParser(description="the stratified forecast matrix")
    parser.add_argument("--logs", default=str(ROOT.parent / "shared" / "data" / "real_logs"),
                        help="the public logs' folder")
    parser.add_argument("--only", default=",".join(DEFAULT_SOURCES),
                        help=f"comma-separated sources, of {', '.join(MATRIX_SOURCES)}")
    parser.add_argument("--forecasters", default=",".join(FORECASTERS),
                        help=f"comma-separated grpodyn forecasters, of {', '.join(FORECASTERS)}")
    parser.add_argument("--quick", action="store_true", help="every fourth run of each source")
    parser.add_argument("--seeds", type=_seed_range,
                        help="A-B: the seeds of categorical (default 0-19), bandit (0-3) and "
                             "third_sim (0-11)")
    parser.add_argument("--json", help="write every number to this JSON file")
    args = parser.parse_args(argv)
    forecasters = tuple(f for f in args.forecasters.split(",") if f)
    for name in forecasters:
        if name not in FORECASTERS:
            parser.error(f"--forecasters: unknown forecaster {name!r}")
    everything = {}
    for source in args.only.split(","):
        if source not in MATRIX_SOURCES:
            parser.error(f"--only: unknown source {source!r} (known: "
                         f"{', '.join(MATRIX_SOURCES)})")
        try:
            runs = load_matrix_source(source, Path(args.logs), args.seeds)
        except InputError as exc:
            print(f"{source}: {exc}", file=sys.stderr)
            continue
        if args.quick:
            runs = runs[::4]
        results, per_run, start = [], {}, time.time()
        for name, run in runs:
            for fraction in FRACTIONS:
                result = evaluate_cut(run, fraction, forecasters)
                if result is not None:
                    results.append(result)
                    per_run[f"{name}@{fraction}"] = result
        print(f"[{source}] {len(runs)} runs, {len(results)} forecasts, "
              f"{time.time() - start:.0f} s", file=sys.stderr)
        table = summarise(results)
        label = source if args.seeds is None or source not in ("categorical", "bandit",
                                                               "third_sim") else (
            f"{source} seeds {args.seeds.start}-{args.seeds.stop - 1}")
        print_matrix(f"{label}: {len(runs)} runs, cut at F = "
                     f"{' and '.join(map(str, FRACTIONS))}", table)
        everything[label] = {"summary": table, "per_run": per_run}
    if args.json:
        write_atomic(Path(args.json), json.dumps(everything, indent=1, default=float))
