"""Transfer benchmark: predict held-out settings of a sweep from the others (issue 15).

``python benchmarks/transfer.py [--grid DIR] [--out FILE]``

On the tiny TRL grid (``python -m grpodyn.empirical.tinylm.make_grid``), for each optimizer and
each hyperparameter setting in turn: the setting's runs (all seeds) are held out, the sweep is
fitted on the other settings of that optimizer, and :func:`grpodyn.empirical.logs.sweep.transfer`
predicts the held-out setting before its data are read. Scores per held-out setting, on the
held-out seed-mean curve:

- R^2 of the transferred mean, and R^2 of the setting's own fit (the same model fitted to the
  held-out runs alone); their ratio (target: median >= 0.7);
- whether the transferred mean has a smaller squared error than the seed-mean curve of the
  nearest source setting (nearest in log lr, log G, log B; where several are equally near, the
  share of them beaten; target: >= 75% of the settings);
- coverage of the 90% band over every held-out point of every seed (target: 0.80-0.95).

R^2 is also reported against the 15-step moving average of the seed-mean curve
(``r2_ratio_smoothed``), where per-step sampling noise that no mean path explains is reduced.
``beats_nearest_copy_by_seed_pair``: the copy test on the mean of each pair of held-out seeds
(a held-out score on two new seeds is one such pair; their spread is its small-sample spread).
Seeds 1 and 2 are scored by default: seed 0 served as design data while the method was made.
``--source-seeds`` adds runs of further seeds to the sources only (never scored): revision 2
was scored on new seeds 3-4 with ``--seeds 3 4 --source-seeds 0 1 2``, each held-out setting
of seeds 3-4 predicted from every run of the other settings (seeds 0-4), the nearest copy
being the mean of the nearest setting's source runs over the same seeds.

Revision 4 (frozen at 2927e22) adds the transfer-error term to the band (``band_calibration``
of each prediction: s, its status, the target's distance); ``coverage_rev3_band`` is the coverage
of revision 3's band (``cross_validate=False``) around the same mean, the control. Scored once on
new seeds 9-10 with ``--seeds 9 10 --source-seeds 0 1 2 3 4 5 6 7 8``.

Then the sweep fit on all runs of each optimizer: the tau-lr exponent (expected -1) and the
G / B G test against the derivation (Adam: k ~ (B G)^(rho_A / (2 (B G + rho_A))); SGD: none).
The public lr sweeps that load (ShibukiZero lr 1e-5 vs 4e-5; garg-aayush six lrs) are scored the
same way where they can be. Writes one JSON file with the commit of the method.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np

from grpodyn.empirical.logs.sweep import SweepRun, fit_sweep, load_sweep_run, transfer
from grpodyn.empirical.tinylm.make_grid import DESIGNS
from grpodyn.ground import InputError, write_atomic

GRID = DESIGNS["grid2"].out
PUBLIC = Path(__file__).resolve().parents[1] / ".." / "shared" / "data" / "real_logs"


def _r2(y: np.ndarray, model: np.ndarray) -> float:
    total = float(np.sum((y - y.mean()) ** 2))
    return float(1 - np.sum((y - model) ** 2) / total) if total > 0 else float("nan")


def _seed_mean(runs: list[SweepRun]) -> tuple[np.ndarray, np.ndarray]:
    """Steps logged by every run, and the mean reward over runs at those steps."""
    common = set(runs[0].steps.tolist())
    for run in runs[1:]:
        common &= set(run.steps.tolist())
    steps = np.array(sorted(common))
    mean = np.mean([np.interp(steps, r.steps, r.reward) for r in runs], axis=0)
    return steps, mean


def _distance(a: dict, b: dict) -> float:
    keys = ("lr", "group_size", "batch")
    return float(np.sqrt(sum(np.log(a[k] / b[k]) ** 2 for k in keys
                             if a.get(k) and b.get(k))))


def _smooth(y: np.ndarray, width: int = 15) -> np.ndarray:
    """Centred moving average (shorter windows at the ends)."""
    kernel = np.ones(width)
    return np.convolve(y, kernel, mode="same") / np.convolve(np.ones_like(y), kernel,
                                                              mode="same")


def score_held_out(runs: list[SweepRun], *, level: float = 0.9, finite_group: bool = True,
                   extra: tuple[SweepRun, ...] = (), model: dict | None = None) -> list[dict]:
    """Leave-one-setting-out transfer scores (see the module docstring).

    ``extra``: runs that join the sources of every held-out setting but are never scored.
    ``model``: further keywords of ``fit_sweep`` for the sources' fit (revision 3's
    ``noise_drag``, ``prompt_noise``, ``plateau``); the held-out setting's own fit is always the
    plain map (shared plateau, no drag), so that the R^2 ratio has one denominator.
    """
    settings: dict[tuple, list[SweepRun]] = {}
    for run in runs:
        settings.setdefault(run.setting, []).append(run)
    out = []
    for key, held in settings.items():
        sources = [r for r in [*runs, *extra]
                   if r.setting != key and r.hparams["optimizer"] == key[0]]
        if len({r.setting for r in sources}) < 2:
            continue
        target = {k: v for k, v in held[0].hparams.items() if k not in ("seed", "steps")}
        steps, mean = _seed_mean(held)
        n = int(max(r.steps[-1] for r in held))
        fit = fit_sweep(sources, finite_group=finite_group, **(model or {}))
        # one prediction per held-out run: its seed's r0 comes from the seed's source runs
        predictions = [transfer(sources, {**target, "seed": r.hparams["seed"]}
                                if "seed" in r.hparams else target, steps=n, level=level, fit=fit)
                       for r in held]
        predicted = predictions[0]
        pm = np.mean([np.asarray(p["mean"]) for p in predictions], axis=0)[steps.astype(int)]
        try:
            own = fit_sweep(held, finite_group=finite_group, noise_drag=False,
                            prompt_noise=False, plateau="shared")
            own_curve = np.mean([own.curve(r.hparams, n) for r in held],
                                axis=0)[steps.astype(int)]
        except InputError:  # every held-out run collapsed
            own_curve = np.full(steps.size, np.nan)
        # every source setting at the smallest distance: a tie is scored against each of them
        # (the share beaten), not broken by the order of a set
        distances = {key2: _distance(target, next(r.hparams for r in sources
                                                   if r.setting == key2))
                     for key2 in {r.setting for r in sources}}
        closest = min(distances.values())
        tied = sorted((k for k, v in distances.items() if np.isclose(v, closest)), key=str)
        copy_curves = []
        for key2 in tied:
            n_steps, n_mean = _seed_mean([r for r in sources if r.setting == key2])
            copy_curves.append(np.interp(steps, n_steps, n_mean))
        copies = [float(np.mean((mean - c) ** 2)) for c in copy_curves]
        mse_t = float(np.mean((mean - pm) ** 2))
        nearest = [r for r in sources if r.setting == tied[0]]
        inside = [_inside(r, p) for r, p in zip(held, predictions, strict=True)]
        # the control: revision 3's band (no transfer-error term) around the same mean
        inside_rev3 = [_inside(r, transfer(sources, {**target, "seed": r.hparams["seed"]}
                                           if "seed" in r.hparams else target, steps=n,
                                           level=level, fit=fit, cross_validate=False))
                       for r in held]
        r2_t, r2_o = _r2(mean, pm), _r2(mean, own_curve)
        smooth = _smooth(mean)
        r2_ts, r2_os = _r2(smooth, pm), _r2(smooth, own_curve)
        out.append({"setting": target, "seeds": len(held),
                    "nearest_source": next(r.hparams for r in nearest),
                    "r2_transfer": r2_t, "r2_own_fit": r2_o,
                    "r2_ratio": r2_t / r2_o if r2_o > 0 else None,
                    "collapsed_held_out": int(np.isnan(r2_o)),
                    "r2_ratio_smoothed": r2_ts / r2_os if r2_os > 0 else None,
                    "nearest_sources_tied": len(tied),
                    "mse_transfer": mse_t, "mse_nearest_copy": copies,
                    "beats_nearest_copy": float(np.mean([mse_t < c for c in copies])),
                    "coverage": float(np.mean(inside)),
                    "coverage_rev3_band": float(np.mean(inside_rev3)),
                    "warnings": predicted["warnings"],
                    "band_calibration": _calibration(predicted),
                    "beats_nearest_copy_by_seed_pair": _pair_scores(held, predictions, steps,
                                                                    copy_curves)})
    return out


def _inside(run: SweepRun, predicted: dict) -> float:
    """Share of a run's points inside a prediction's band."""
    at = run.steps.astype(int)
    return float(np.mean((run.reward >= np.asarray(predicted["lower"])[at])
                         & (run.reward <= np.asarray(predicted["upper"])[at])))


def _calibration(predicted: dict) -> dict:
    """Revision 4's band calibration of a prediction, without the held-out settings' detail."""
    cal = predicted.get("band_calibration", {})
    return {"s": cal.get("s"), "status": cal.get("status"), "distance": cal.get("distance"),
            "held_out_distances": [h.get("distance") for h in cal.get("held_out", [])]}


def _pair_scores(held: list[SweepRun], predictions: list[dict], steps: np.ndarray,
                 copy_curves: list[np.ndarray]) -> dict[str, float]:
    """The copy test on the mean of every pair of held-out seeds (the spread of a 2-seed score).

    The same test as ``beats_nearest_copy`` on the two-seed mean curve at the held-out runs'
    common steps (the share of tied copies beaten), keyed by "seed_a,seed_b".
    """
    out: dict[str, float] = {}
    rewards = [np.interp(steps, r.steps, r.reward) for r in held]
    curves = [np.asarray(p["mean"])[steps.astype(int)] for p in predictions]
    for i in range(len(held)):
        for j in range(i + 1, len(held)):
            pair = (rewards[i] + rewards[j]) / 2
            mse_t = np.mean((pair - (curves[i] + curves[j]) / 2) ** 2)
            key = ",".join(str(held[k].hparams.get("seed", k)) for k in (i, j))
            out[key] = float(np.mean([mse_t < np.mean((pair - c) ** 2) for c in copy_curves]))
    return out


def summary(scores: list[dict]) -> dict:
    ratios = [s["r2_ratio"] for s in scores if s["r2_ratio"] is not None]
    smoothed = [s.get("r2_ratio_smoothed") for s in scores
                if s.get("r2_ratio_smoothed") is not None]
    pairs = sorted({k for s in scores for k in s.get("beats_nearest_copy_by_seed_pair", {})})
    by_pair = {k: float(np.mean([s["beats_nearest_copy_by_seed_pair"][k] for s in scores
                                 if k in s.get("beats_nearest_copy_by_seed_pair", {})]))
               for k in pairs}
    return {"held_out_settings": len(scores),
            "beats_nearest_copy_by_seed_pair": by_pair,
            "median_r2_ratio": float(np.median(ratios)) if ratios else None,
            "median_r2_ratio_smoothed": float(np.median(smoothed)) if smoothed else None,
            "settings_with_positive_own_r2": len(ratios),
            "beats_nearest_copy_fraction": float(np.mean([s["beats_nearest_copy"]
                                                          for s in scores])) if scores else None,
            "coverage_90": float(np.mean([s["coverage"] for s in scores])) if scores else None,
            "coverage_90_rev3_band": float(np.mean([s["coverage_rev3_band"] for s in scores]))
            if scores and all("coverage_rev3_band" in s for s in scores) else None,
            "median_r2_transfer": float(np.median([s["r2_transfer"] for s in scores]))
            if scores else None,
            "median_r2_own_fit": float(np.median([s["r2_own_fit"] for s in scores]))
            if scores else None}


def _public(public: Path = PUBLIC) -> dict:
    """The public lr sweeps that load (from the folder ``public``), each run held out in turn."""
    from grpodyn.empirical.logs.loaders import load_run

    results: dict = {}
    shibuki = {4e-5: "ShibukiZero__assignment5-alignment__artifacts_experiments_main_ch7_grpo_"
                     "baselines_runs_reinforce_with_baseline_metrics.jsonl",
               1e-5: "ShibukiZero__assignment5-alignment__artifacts_experiments_main_ch7_grpo_"
                     "train_loop_runs_grpo_on_policy_lr1e-5_metrics.jsonl"}
    garg = "garg-aayush__building-from-scratch__grpo_results_lr_sweep_lr_sweep_data.csv"
    sweeps = {"ShibukiZero S4 (lr 1e-5 vs 4e-5; G 8, 32 prompts, AdamW)":
              [(public / name, None, lr, 8, 32) for lr, name in shibuki.items()],
              "garg-aayush lr sweep (eval reward, G 8; B unknown, taken as 1: one B G)":
              [(public / garg, f"lr_sweep_{tag}", float(tag), 8, 1)
               for tag in ("1e-6", "3e-6", "1e-5", "1.5e-5", "3e-5", "1e-4")]}
    for title, members in sweeps.items():
        runs = []
        try:
            for path, name, lr, g, b in members:
                run = load_run(path, run=name) if name else load_run(path)
                keep = np.isfinite(run.reward)
                runs.append(SweepRun(f"{path.name}:{name or ''}", run.steps[keep]
                                     - run.steps[keep][0], run.reward[keep],
                                     {"optimizer": "adam", "lr": lr, "momentum": 0.9,
                                      "group_size": g, "batch": b}))
        except (OSError, ValueError) as exc:
            results[title] = {"status": f"not loaded: {exc}"}
            continue
        runs = [r for r in runs if r.steps.size >= 10]
        entry: dict = {"runs": [r.name for r in runs]}
        if len(runs) >= 2:
            sweep = fit_sweep(runs).to_dict()
            entry["tau_lr_exponent"] = sweep["tau_lr_exponent"]
            entry["collapsed"] = [r["name"] for r in sweep["runs"] if r["collapsed"]]
            entry["stability"] = sweep["stability"]
            scores = []
            for held in runs:
                sources = [r for r in runs if r is not held]
                if not sources:
                    continue
                target = dict(held.hparams)
                n = int(held.steps[-1])
                predicted = transfer(sources, target, steps=n)
                rev3 = transfer(sources, target, steps=n, cross_validate=False)
                pm = np.asarray(predicted["mean"])[held.steps.astype(int)]
                own = fit_sweep([held]).curve(target, n)[held.steps.astype(int)]
                nearest = min(sources, key=lambda r: _distance(target, r.hparams))
                copy = np.interp(held.steps, nearest.steps, nearest.reward)
                lower = np.asarray(predicted["lower"])[held.steps.astype(int)]
                upper = np.asarray(predicted["upper"])[held.steps.astype(int)]
                r2_t, r2_o = _r2(held.reward, pm), _r2(held.reward, own)
                scores.append({"held_out": held.name, "lr": target["lr"], "r2_transfer": r2_t,
                               "r2_own_fit": r2_o,
                               "r2_ratio": r2_t / r2_o if r2_o > 0 else None,
                               "beats_nearest_copy": bool(np.mean((held.reward - pm) ** 2)
                                                          < np.mean((held.reward - copy) ** 2)),
                               "coverage": float(np.mean((held.reward >= lower)
                                                         & (held.reward <= upper))),
                               "coverage_rev3_band": _inside(held, rev3),
                               "band_calibration": _calibration(predicted)})
            entry["scores"] = scores
            entry["summary"] = summary(scores)
        results[title] = entry
    return results


#: revision 1: frozen before seeds 1-2 of grid2 were scored (``--frozen`` this to rerun it)
FROZEN_REVISION_1 = "c5fe77c3bf71e44119e2573e2c07843418fa2cfb"
#: revision 2 (plateau bounded to the reward range): frozen before new seeds 3-4 were scored
FROZEN_REVISION_2 = "367bc16d7cf36ae27b1326e616799d28d8c96772"
#: revision 3 (the sampling noise on the mean path: drag and split v_hat): frozen before new
#: seeds 5-6 were scored
FROZEN_REVISION_3 = "ec9ee07865336772c29dfca393ef248e034bf1b3"
#: revision 4 (the transfer-error term of the band, calibrated by leave-one-setting-out on the
#: sources): frozen before new seeds 9-10 were made
FROZEN = "2927e2294ae3d539650d9d5394e081e38b3a62d6"
METHOD_FILES = ("empirical/logs/sweep.py", "empirical/logs/sweep_runs.py",
                "empirical/logs/sweep_model.py", "empirical/logs/sweep_fit.py",
                "empirical/logs/sweep_transfer.py", "numerics/mean_field_map.py",
                "theory/optimizers.py")


def _git(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(["git", *args], capture_output=True, text=True, check=False)


def main(argv: list[str] | None = None) -> int:
    """Score the held-out settings of a grid and the public sweeps; write one JSON file."""
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--grid", type=Path, default=GRID)
    parser.add_argument("--out", type=Path, default=None,
                        help="default: benchmarks/transfer_<grid folder>.json")
    parser.add_argument("--min-seeds", type=int, default=2,
                        help="use only settings with at least this many seeds")
    parser.add_argument("--seeds", type=int, nargs="+", default=[1, 2],
                        help="seeds scored (seed 0 was design data while the method was made)")
    parser.add_argument("--source-seeds", type=int, nargs="*", default=[],
                        help="seeds whose runs join the sources only (never scored)")
    parser.add_argument("--frozen", default=FROZEN,
                        help="commit at which the method was frozen: the output says whether "
                             "the method files differ from it")
    parser.add_argument("--ablation", action="store_true",
                        help="also score the large-G map (finite_group=False, session 1's model)")
    parser.add_argument("--no-public", action="store_true", help="skip the public sweeps")
    parser.add_argument("--public-dir", type=Path, default=PUBLIC,
                        help="folder of the public logs (default: shared/data/real_logs beside "
                             "the checkout)")
    parser.add_argument("--public-only", action="store_true",
                        help="score the public sweeps only (no grid)")
    parser.add_argument("--optimizers", nargs="+", default=["adam", "sgd"],
                        help="score these optimizers only")
    parser.add_argument("--model", default=None,
                        help="fit_sweep keywords of the sources' fit as JSON, e.g. "
                             "'{\"noise_drag\": false}' (default: fit_sweep's own defaults)")
    args = parser.parse_args(argv)
    if args.no_public and args.public_only:
        parser.error("--no-public and --public-only exclude each other")
    model = json.loads(args.model) if args.model else {}
    out = args.out or Path("benchmarks") / f"transfer_{args.grid.name}.json"
    warnings.simplefilter("ignore", RuntimeWarning)
    paths = [] if args.public_only else sorted(args.grid.glob("*.json"))
    everything = [load_sweep_run(p) for p in paths]
    everything = [r for r in everything if r.hparams["optimizer"] in args.optimizers]
    runs = [r for r in everything if r.hparams.get("seed") in args.seeds]
    extra = [r for r in everything if r.hparams.get("seed") in args.source_seeds
             and r.hparams.get("seed") not in args.seeds]
    counts: dict[tuple, int] = {}
    for run in runs:
        counts[run.setting] = counts.get(run.setting, 0) + 1
    runs = [r for r in runs if counts[r.setting] >= args.min_seeds]
    commit = _git("rev-parse", "HEAD").stdout.strip()
    result: dict = {"method_commit": commit, "grid": str(args.grid), "n_runs": len(runs),
                    "seeds": args.seeds, "source_seeds": args.source_seeds,
                    "n_source_only_runs": len(extra), "model": model, "optimizers": {}}
    if args.frozen:
        changed = _git("diff", "--name-only", args.frozen, "--", *METHOD_FILES).stdout.split()
        result["frozen_commit"] = args.frozen
        result["method_changed_since_frozen"] = changed
    for optimizer in sorted({r.hparams["optimizer"] for r in runs}):
        members = [r for r in runs if r.hparams["optimizer"] == optimizer]
        more = tuple(r for r in extra if r.hparams["optimizer"] == optimizer)
        scores = score_held_out(members, extra=more, model=model)
        sweep = fit_sweep([*members, *more], **model).to_dict()  # every run of the optimizer
        result["optimizers"][optimizer] = {
            "summary": summary(scores), "held_out": scores,
            "settings": sorted({str(r.setting) for r in members}),
            "warnings_of_the_full_fit": sweep["warnings"],
            "constants": sweep["constants"], "tau_lr_exponent": sweep["tau_lr_exponent"],
            "bg_test": sweep["bg_test"], "stability": sweep["stability"],
            "collapsed": [r["name"] for r in sweep["runs"] if r["collapsed"]]}
        print(optimizer, json.dumps(result["optimizers"][optimizer]["summary"]), flush=True)
        if args.ablation:
            large_g = score_held_out(members, finite_group=False, extra=more, model=model)
            result["optimizers"][optimizer]["summary_large_g_map"] = summary(large_g)
            print(optimizer, "large-G map", json.dumps(summary(large_g)), flush=True)
    if args.public_dir.is_dir() and not args.no_public:
        result["public"] = _public(args.public_dir)
    write_atomic(out, json.dumps(result, indent=1, default=float))
    print(f"wrote {out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
