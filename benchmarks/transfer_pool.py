"""Pool held-out transfer scores of several seed splits, with the copy test's binomial interval.

``python benchmarks/transfer_pool.py FILE... [--out FILE]``

Each FILE is a score written by ``benchmarks/transfer.py`` (one held-out split, e.g. seeds 5-6 or
seeds 7-8, or the sweeps it scored, by title). For each optimizer (or sweep) the held-out
settings of every file are pooled, and all of them together (``all``): the median R^2
ratio (transfer / own fit) and the mean 90%-band coverage over all of them, and the share of
settings whose transferred curve beats the nearest source's curve (a tie of several equally near
sources counts as the share of them beaten) with its 95% Wilson score interval, so that a
percentage from 7 settings is read with its small-sample spread. Per file the same, and the
spread of the copy test over every pair of held-out seeds where the file has it
(``beats_nearest_copy_by_seed_pair``); and everything pooled by the hyperparameter the nearest
source changes (``pooled_by_kind``: lr, G, B).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np
from scipy.stats import norm

from grpodyn.ground import write_atomic


def wilson_interval(successes: float, trials: int, *, level: float = 0.95) -> tuple[float, float]:
    """Return the Wilson score interval of a binomial share (successes may be fractional).

    Parameters
    ----------
    successes : float
        Number of successes (a tie scored as a share counts fractionally).
    trials : int
        Number of trials, at least 1.
    level : float
        Two-sided confidence level.

    Returns
    -------
    tuple of float
        Lower and upper end of the interval, in [0, 1].
    """
    z = float(norm.ppf(0.5 + level / 2))
    share = successes / trials
    centre = (share + z**2 / (2 * trials)) / (1 + z**2 / trials)
    half = z / (1 + z**2 / trials) * np.sqrt(share * (1 - share) / trials
                                             + z**2 / (4 * trials**2))
    return float(max(centre - half, 0.0)), float(min(centre + half, 1.0))


def pooled(held_out: list[dict]) -> dict:
    """Pool per-setting scores: median R^2 ratio, coverage, copy test with its interval."""
    ratios = [s["r2_ratio"] for s in held_out if s["r2_ratio"] is not None]
    beaten = float(sum(s["beats_nearest_copy"] for s in held_out))
    low, high = wilson_interval(beaten, len(held_out))
    return {"held_out_settings": len(held_out),
            "median_r2_ratio": float(np.median(ratios)) if ratios else None,
            "coverage_90": float(np.mean([s["coverage"] for s in held_out])),
            # the scores also carry the band without the transfer-error term around the same
            # mean (a control; the score files' key says rev3)
            "coverage_90_rev3_band": float(np.mean([s["coverage_rev3_band"] for s in held_out]))
            if all("coverage_rev3_band" in s for s in held_out) else None,
            "beats_nearest_copy": beaten,
            "beats_nearest_copy_fraction": beaten / len(held_out),
            "beats_nearest_copy_wilson_95": [low, high],
            # the scores of every sweep also carry the copy-the-sources baseline and the range
            **({"beats_copy_sources_fraction": float(np.mean([s["beats_copy_sources"]
                                                              for s in held_out])),
                "means_outside_range": int(sum(s["mean_outside_range"] for s in held_out))}
               if all("beats_copy_sources" in s for s in held_out) else {}),
            # the conditioned method's scores: a fallback counted as lost, and the mean without
            # its prompt shift against the smoothed nearest copy (transfer_sweeps' docstring)
            **({"fallback_settings": int(sum(s["fallback"] for s in held_out)),
                "beats_nearest_copy_fraction_fallback_as_loss": float(np.mean(
                    [0.0 if s["fallback"] else s["beats_nearest_copy"] for s in held_out])),
                "beats_smoothed_copy_unconditioned_fraction": float(np.mean(
                    [s["beats_smoothed_copy_unconditioned"] for s in held_out])),
                "median_r2_ratio_unconditioned": float(np.median(
                    [s["r2_ratio_unconditioned"] for s in held_out
                     if s["r2_ratio_unconditioned"] is not None])),
                "median_r2_transfer": float(np.median([s["r2_transfer"] for s in held_out])),
                "median_r2_own_fit": float(np.nanmedian([s["r2_own_fit"] for s in held_out]))}
               if all("r2_ratio_unconditioned" in s for s in held_out) else {})}


def main(argv: list[str] | None = None) -> int:
    """Pool the score files given on the command line; print and write one JSON object."""
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("files", type=Path, nargs="+")
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args(argv)
    scores: dict[str, list[dict]] = {}
    result: dict = {"files": {}, "pooled": {}}
    for path in args.files:
        try:
            data = json.loads(path.read_text())
        except (OSError, ValueError) as exc:
            print(f"error: {path}: not a score file of benchmarks/transfer.py ({exc})",
                  file=sys.stderr)
            return 2
        # a score file holds "optimizers" (one grid) or "sweeps" (every sweep, by title)
        optimizers = (data.get("optimizers") or {k: v for k, v in data.get("sweeps", {}).items()
                                                 if "held_out" in v}) \
            if isinstance(data, dict) else None
        if not optimizers or not all(isinstance(e, dict) and "held_out" in e
                                     for e in optimizers.values()):
            print(f"error: {path}: no held-out scores (not a score file of "
                  "benchmarks/transfer.py)", file=sys.stderr)
            return 2
        for optimizer, entry in optimizers.items():
            scores.setdefault(optimizer, []).extend(entry["held_out"])
            by_pair = entry.get("summary", {}).get("beats_nearest_copy_by_seed_pair", {})
            if not entry["held_out"]:
                continue
            own = {**pooled(entry["held_out"]), "seeds": data.get("seeds"),
                   "method_changed_since_frozen": data.get("method_changed_since_frozen")}
            if len(by_pair) > 1:
                values = np.array(list(by_pair.values()))
                own["seed_pairs"] = {"pairs": len(values), "min": float(values.min()),
                                     "median": float(np.median(values)),
                                     "max": float(values.max()),
                                     "share_at_least_0.75": float(np.mean(values >= 0.75))}
            result["files"].setdefault(str(path), {})[optimizer] = own
    for optimizer, held_out in scores.items():
        result["pooled"][optimizer] = pooled(held_out)
    every = [s for held in scores.values() for s in held]
    if len(scores) > 1:
        result["pooled"]["all"] = pooled(every)
    if all("kind" in s for s in every):  # which hyperparameter the nearest source changes
        result["pooled_by_kind"] = {k: pooled([s for s in every if s["kind"] == k])
                                    for k in sorted({s["kind"] for s in every})}
    text = json.dumps(result, indent=1)
    if args.out:
        write_atomic(args.out, text)
    print(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
