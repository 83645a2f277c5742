"""Transfer benchmark: predict held-out settings of every sweep from the others.

``python benchmarks/transfer.py [--only design|grid|public|third_sim ...] [--out FILE]``

Scores the leave-one-setting-out transfer on every sweep there is (:mod:`transfer_sweeps`
says which and how): the design sweep (the tiny grid ``tiny_grid``, seeds 0-1), the own sweep
``tiny_grid2`` at the seeds of ``--seeds`` (15-16 by default, scored with the method frozen at
:data:`FROZEN_UNCONDITIONED`; seeds 11-12, 13-14 and 17-18 scored once with the method frozen at
:data:`FROZEN_CONDITIONED`; seeds 19-20 once with the method frozen at :data:`FROZEN`) and the
public controlled sweeps (S4 lr pair, garg-aayush lr sweep, S1
off-policy sweep read as lr and B G); with ``--only third_sim``, sweeps of the third simulator
(``studies/diagnosis_third_sim``, built without reading the transfer) at
``--third-sim-seeds``: its healthy settings with the lr halved and doubled, two other G and
the other B, one at a time. Prints one matrix row per sweep and optimizer and one per
held-out setting, with the naive baselines beside the transfer (copy the sources' mean path,
``>src``; copy the nearest source, ``>near``; the same with a fallback counted as lost,
``>nr_fb``; the transfer without its prompt shift against the nearest copy's moving average,
``>n_smo``), and writes every score to one JSON file
(default ``studies/transfer/results/transfer.json``) with the commit of the method.

Targets: median R^2 of the transfer >= 0.7 of the setting's own fit; beats copying
the sources in >= 80% of the held-out settings; 90% band coverage 0.80-0.95; no mean outside
the reward range.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import warnings
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from transfer_sweeps import (  # noqa: E402
    PUBLIC,
    _pair_scores,  # noqa: F401  (the seed-pair copy test, read by its test through this script)
    public_sweeps,
    score_held_out,
    summary,
    third_sim_sweep,
)

from grpodyn.empirical.logs.sweep import SweepRun, load_sweep_run  # noqa: E402, F401
from grpodyn.empirical.tinylm.make_grid import DESIGNS  # noqa: E402
from grpodyn.ground import write_atomic  # noqa: E402

RESULTS = Path(__file__).resolve().parents[1] / "studies" / "transfer" / "results"
#: the method frozen before the fresh tiny_grid2 seeds 19-20 were scored: the exponents the
#: sources measure compared with the law, the nearest source where they contradict it
FROZEN = "e4c63b6037ddd147a21967b78222f7c9f98cec7a"
#: the method frozen before the fresh tiny_grid2 seeds (11-14, 17-18) were scored: the transfer
#: conditioned on the prompts its seed and batch share with source runs
FROZEN_CONDITIONED = "a5e04ec46a2f74cc05fcd362aad9c62d9bdd1ab2"
#: the method frozen before tiny_grid2 seeds 15-16 and the public sweeps were scored
FROZEN_UNCONDITIONED = "d4055e2a0b02b2371031149de68ca775c77878ef"
METHOD_FILES = ("empirical/logs/sweep.py", "empirical/logs/sweep_runs.py",
                "empirical/logs/sweep_model.py", "empirical/logs/sweep_fit.py",
                "empirical/logs/sweep_band.py", "empirical/logs/sweep_transfer.py",
                "empirical/logs/sweep_shared.py", "empirical/logs/sweep_exponents.py",
                "numerics/mean_field_map.py", "theory/optimizers.py")
_PARTS = ("design", "grid", "public", "third_sim")


def _git(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(["git", *args], capture_output=True, text=True, check=False)


def _grid_runs(folder: Path, seeds: list[int]) -> dict[str, list]:
    """The runs of a tiny grid with the given seeds, by optimizer."""
    runs = [load_sweep_run(p) for p in sorted(folder.glob("*.json"))]
    out: dict[str, list] = {}
    for run in runs:
        if run.hparams.get("seed") in seeds:
            out.setdefault(run.hparams["optimizer"], []).append(run)
    return out


def _row(label: str, s: dict) -> str:
    def f(v: float | None, fmt: str = ".2f") -> str:
        return "-" if v is None else format(v, fmt)
    return (f"{label[:58]:58s} {s['held_out_settings']:3d} {f(s.get('median_r2_ratio')):>6s} "
            f"{f(s.get('beats_copy_sources_fraction')):>6s} "
            f"{f(s.get('beats_nearest_copy_fraction')):>6s} "
            f"{f(s.get('beats_nearest_copy_fraction_fallback_as_loss')):>6s} "
            f"{f(s.get('beats_smoothed_copy_unconditioned_fraction')):>6s} "
            f"{f(s.get('coverage_90')):>5s} "
            f"{s.get('means_outside_range', 0):4d} {f(s.get('median_mse_transfer'), '.4f'):>7s} "
            f"{f(s.get('median_mse_copy_sources'), '.4f'):>7s} "
            f"{f(s.get('median_mse_copy_nearest'), '.4f'):>7s}")


HEADER = (f"{'sweep / optimizer':58s} {'n':>3s} {'R2rat':>6s} {'>src':>6s} {'>near':>6s} "
          f"{'>nr_fb':>6s} {'>n_smo':>6s} "
          f"{'cov90':>5s} {'out':>4s} {'mse_tr':>7s} {'mse_src':>7s} {'mse_nr':>7s}")


def _print_settings(scores: list[dict]) -> None:
    for s in scores:
        hp = s["setting"]
        label = f"  [{s['kind']}] lr {hp['lr']:.3g} G {hp.get('group_size')} B {hp.get('batch')}"
        print(f"{label:40s} R2 {s['r2_transfer']:6.2f} own {s['r2_own_fit']:5.2f} "
              f"copy-src {s['r2_copy_sources']:6.2f} copy-near {s['r2_copy_nearest']:6.2f} "
              f"cov {s['coverage']:.2f} width {s['band_width_median']:.2f}", flush=True)


def main(argv: list[str] | None = None) -> int:
    """Score every sweep's held-out settings; print the matrix and write one JSON file."""
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--only", nargs="+", choices=_PARTS, default=list(_PARTS[:3]))
    parser.add_argument("--third-sim-seeds", type=int, nargs="+", default=[0],
                        help="seeds of the third simulator's sweeps (--only third_sim)")
    parser.add_argument("--design-seeds", type=int, nargs="+", default=[0, 1])
    parser.add_argument("--seeds", type=int, nargs="+", default=[15, 16],
                        help="seeds of the own sweep scored (--grid-dir's; held out from "
                        "the design)")
    parser.add_argument("--grid-dir", type=Path, default=DESIGNS["grid2"].out,
                        help="the folder of the own sweep's runs (default tiny_grid2; "
                        "tiny_grid2b and tiny_grid2c hold its design at seeds 21-28 and 29-36)")
    parser.add_argument("--public-dir", type=Path, default=PUBLIC)
    parser.add_argument("--draws", type=int, default=200)
    parser.add_argument("--optimizers", nargs="+", default=["adam", "sgd"],
                        help="the tiny grids' optimizers scored (the public sweeps are Adam)")
    parser.add_argument("--out", type=Path, default=None,
                        help="default: studies/transfer/results/transfer.json")
    args = parser.parse_args(argv)
    warnings.simplefilter("ignore", RuntimeWarning)
    out = args.out or RESULTS / "transfer.json"
    result: dict = {"method_commit": _git("rev-parse", "HEAD").stdout.strip(),
                    "frozen_commit": FROZEN or None, "draws": args.draws,
                    "only": args.only, "design_seeds": args.design_seeds, "seeds": args.seeds,
                    "third_sim_seeds": args.third_sim_seeds if "third_sim" in args.only else [],
                    "sweeps": {}}
    if FROZEN:
        result["method_changed_since_frozen"] = _git("diff", "--name-only", FROZEN, "--",
                                                     *METHOD_FILES).stdout.split()
    sweeps: dict[str, dict[str, list] | str] = {}
    scored: set[str] = set()  # the parts asked for with a sweep to score
    if "design" in args.only:
        for opt, runs in _grid_runs(DESIGNS["grid1"].out, args.design_seeds).items():
            if opt not in args.optimizers:
                continue
            sweeps[f"design tiny_grid seeds {args.design_seeds} / {opt}"] = {opt: runs}
            scored.add("design")
    if "grid" in args.only:
        for opt, runs in _grid_runs(args.grid_dir, args.seeds).items():
            if opt not in args.optimizers:
                continue
            sweeps[f"held-out {args.grid_dir.name} seeds {args.seeds} / {opt}"] = {opt: runs}
            scored.add("grid")
    if "public" in args.only:
        if not args.public_dir.is_dir():
            print(f"public logs: {args.public_dir} not found; public sweeps skipped",
                  file=sys.stderr)
        else:
            for title, runs in public_sweeps(args.public_dir).items():
                sweeps[title] = runs if isinstance(runs, str) else {"adam": runs}
                if not isinstance(runs, str):
                    scored.add("public")
    if "third_sim" in args.only:
        for seed in args.third_sim_seeds:
            sweeps[f"third simulator seed {seed} (lr, G, B one at a time) / adam"] = {
                "adam": third_sim_sweep(seed)}
            scored.add("third_sim")
    unscored = [part for part in args.only if part not in scored]
    if len(unscored) == len(args.only) or (unscored and args.out is None):
        # the default file holds every part asked for: a partial result would replace it
        where = (f" (the public logs are read from --public-dir, default {PUBLIC})"
                 if "public" in unscored else "")
        rest = "" if len(unscored) == len(args.only) else "; give --out FILE for the other parts"
        print(f"transfer benchmark: no sweep to score in {', '.join(unscored)}{where}; {out} "
              f"left unchanged{rest}", file=sys.stderr)
        return 2
    print(HEADER, flush=True)
    pooled: list[dict] = []
    for title, members in sweeps.items():
        if isinstance(members, str):
            print(f"{title}: {members}", flush=True)
            result["sweeps"][title] = {"status": members}
            continue
        for runs in members.values():
            scores = score_held_out(runs, draws=args.draws)
            if not title.startswith("design"):
                pooled.extend(scores)
            result["sweeps"][title] = {"summary": summary(scores), "held_out": scores,
                                       "runs": [r.name for r in runs]}
            print(_row(title, summary(scores)), flush=True)
            _print_settings(scores)
    result["held_out_pooled"] = summary(pooled)
    print(_row("held-out sweeps pooled", summary(pooled)), flush=True)
    kinds = sorted({s["kind"] for s in pooled})
    result["held_out_by_kind"] = {k: summary([s for s in pooled if s["kind"] == k])
                                  for k in kinds}
    for k in kinds:
        print(_row(f"  held-out, changed {k}", result["held_out_by_kind"][k]), flush=True)
    write_atomic(out, json.dumps(result, indent=1, default=float))
    print(f"wrote {out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
