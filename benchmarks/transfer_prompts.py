"""Why copying the nearest setting is hard to beat on the tiny grid: the runs share their prompts.

``python benchmarks/transfer_prompts.py [--seeds 0 1 ...] [--out FILE]``

Reads the second tiny grid (``studies/tiny_grids/data/tiny_grid2``) at the given seeds (default:
those a transfer was designed or scored on, 0-10 and 15-16) and measures, per optimizer:

- the correlation of the per-step deviations from a run's smoothed path (moving average, 15
  steps) between the centre setting (mid lr, G 8, B 8) and each other setting, at the same
  seed and at another seed: runs of one seed and one B draw the same prompts at every step;
- the between-prompt share c_B of the per-step variance, measured from those shared deviations
  (:func:`grpodyn.empirical.logs.sweep_band.shared_prompt_part`), and what it implies for the
  share of degenerate groups (every completion right or wrong): with prompt pass rates
  p ~ Beta of mean r and intra-class correlation c_B (a + b = 1/c_B - 1),
  E[p^G + (1 - p)^G] = (B(a + G, b) + B(a, b + G)) / B(a, b), against the homogeneous
  r^G + (1 - r)^G of the map's finite-G factor (docs/theory.md section 7) and the logged
  ``frac_reward_zero_std``;
- the G and B effects on the reward over the last third of the run, each setting minus the
  centre at the same seed (mean and standard error over seeds).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from types import SimpleNamespace

import numpy as np
from scipy.special import betaln

from grpodyn.empirical.logs.sweep import load_sweep_run
from grpodyn.empirical.logs.sweep_band import deviation, shared_prompt_part
from grpodyn.ground import write_atomic

ROOT = Path(__file__).resolve().parents[1]
GRID = ROOT / "studies" / "tiny_grids" / "data" / "tiny_grid2"
SEEN = (0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 15, 16)


def _logged(path: Path) -> tuple[np.ndarray, np.ndarray]:
    rows = [e for e in json.loads(path.read_text())["log_history"] if "reward" in e]
    return (np.array([e["reward"] for e in rows]),
            np.array([e.get("frac_reward_zero_std", np.nan) for e in rows]))


def _smooth(y: np.ndarray) -> np.ndarray:
    return y - deviation(y, 15)


def _setting_files(optimizer: str, seeds: tuple[int, ...]) -> dict[tuple, dict[int, Path]]:
    out: dict[tuple, dict[int, Path]] = {}
    for path in sorted(GRID.glob(f"{optimizer}_lr*_G*_B*_seed*.json")):
        lr, g, b, seed = path.stem.split("_")[1:]
        if int(seed.removeprefix("seed")) in seeds:
            key = (float(lr.removeprefix("lr")), int(g[1:]), int(b[1:]))
            out.setdefault(key, {})[int(seed.removeprefix("seed"))] = path
    return out


def measure(optimizer: str, seeds: tuple[int, ...]) -> dict:
    """The three measurements of the module docstring for one optimizer."""
    files = _setting_files(optimizer, seeds)
    lrs = sorted({k[0] for k in files})
    centre = (lrs[len(lrs) // 2], 8, 8)
    runs = [load_sweep_run(p) for f in files.values() for p in f.values()]
    part = shared_prompt_part(SimpleNamespace(fitted=runs, calibrations={}))
    rho = part["value"]
    out: dict = {"centre": list(centre), "shared_prompt_part": part, "settings": []}
    for key, by_seed in sorted(files.items()):
        common = sorted(set(by_seed) & set(files[centre]))
        same, other, effect, zero = [], [], [], {"logged": [], "homogeneous": [], "beta": []}
        for i, seed in enumerate(common):
            r, z = _logged(by_seed[seed])
            rc, _ = _logged(files[centre][seed])
            ro, _ = _logged(files[centre][common[(i + 1) % len(common)]])
            same.append(np.corrcoef(deviation(r, 15), deviation(rc, 15))[0, 1])
            other.append(np.corrcoef(deviation(r, 15), deviation(ro, 15))[0, 1])
            third = r.size // 3
            effect.append(float(np.mean(r[-third:]) - np.mean(rc[-third:])))
            m, g = np.clip(_smooth(r), 0.01, 0.99), key[1]
            a, b = m * (1 / rho - 1), (1 - m) * (1 / rho - 1)
            zero["logged"].append(float(np.nanmean(z)))
            zero["homogeneous"].append(float(np.mean(m**g + (1 - m) ** g)))
            zero["beta"].append(float(np.mean(np.exp(betaln(a + g, b) - betaln(a, b))
                                              + np.exp(betaln(a, b + g) - betaln(a, b)))))
        row = {"lr": key[0], "group_size": key[1], "batch": key[2], "seeds": len(common),
               "deviation_correlation_same_seed": float(np.mean(same)),
               "deviation_correlation_other_seed": float(np.mean(other)),
               "zero_std_share": {k: float(np.mean(v)) for k, v in zero.items()}}
        if key != centre:
            row["last_third_minus_centre"] = {
                "mean": float(np.mean(effect)),
                "stderr": float(np.std(effect, ddof=1) / np.sqrt(len(effect)))}
        out["settings"].append(row)
    return out


def main(argv: list[str] | None = None) -> int:
    """Print the measurements of both optimizers and write them to one JSON file."""
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seeds", type=int, nargs="+", default=list(SEEN))
    parser.add_argument("--out", type=Path,
                        default=ROOT / "studies" / "transfer" / "results" / "prompts_design.json")
    args = parser.parse_args(argv)
    if not GRID.is_dir():
        print(f"tiny grid: {GRID} not found", file=sys.stderr)
        return 2
    result = {"seeds": args.seeds}
    for optimizer in ("adam", "sgd"):
        res = measure(optimizer, tuple(args.seeds))
        result[optimizer] = res
        part = res["shared_prompt_part"]
        print(f"{optimizer}: c_B {part['value']:.3f} +- {part['stderr']:.3f} ({part['pairs']} "
              "pairs of runs with one seed and one B)")
        print(f"  {'lr':>8s} {'G':>3s} {'B':>3s} {'corr same':>9s} {'other':>6s} "
              f"{'zero-std logged':>15s} {'homog.':>6s} {'Beta':>6s} {'last third - centre':>20s}")
        for row in res["settings"]:
            eff = row.get("last_third_minus_centre")
            z = row["zero_std_share"]
            print(f"  {row['lr']:8.2g} {row['group_size']:3d} {row['batch']:3d} "
                  f"{row['deviation_correlation_same_seed']:9.2f} "
                  f"{row['deviation_correlation_other_seed']:6.2f} {z['logged']:15.3f} "
                  f"{z['homogeneous']:6.3f} {z['beta']:6.3f} "
                  + (f"{eff['mean']:+12.3f} +- {eff['stderr']:.3f}" if eff else f"{'centre':>20s}"))
    write_atomic(args.out, json.dumps(result, indent=1))
    print(f"wrote {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
