"""How well the learned prior's prior describes real runs: ``python benchmarks/prior_fit.py``.

The learned-prior forecaster (:mod:`numerics.learned_prior`) is the posterior predictive of a
prior over reward curves. A hierarchical prior would take the prior's hyperparameters from
many real runs instead of from the theory alone (empirical Bayes). This benchmark measures,
before any such prior is trained, whether the real runs ask for one: the log marginal
likelihood of the runs' summaries under the prior, approximated on binned summaries.

Summary of a run cut at F (0.2, 0.3, 0.5, 0.7), in the learned prior's own noise units (loc =
mean of the last 20 % of the training part, scale = its white noise; ``curve_features``):
the training part's move (loc minus the mean of its first 20 %), the move of the rest (its
mean minus loc) and the log of the recent spread (std of the last 20 %, in scale units: the
process noise's share). Moves are squashed as asinh(z / 3). Bins: per F, 6 x 6 x 3 cells cut
at the pooled real summaries' quantiles. A prior's density: the cell frequencies of 4000 of
its curves' summaries (seed 7, 0.5 pseudo-counts). Score: the mean log density of a source's
(run, F) summaries; higher is better; sources count equally in the pooled criterion.

Candidates: the theory's prior (``THEORY_SHARES``, the shipped weights'); the family shares
fitted by EM (the mixture of the families' own densities; pooled over the sources, and per
source); a log-normal hyperprior on the ratio of the mean path's range to the white noise
(``signal_to_noise``: mu 0.5-3.0, sd 0.5-1.5). Sources: every real run the project has seen
(the public logs, the tiny-model grids, the deep-network runs); this is design data, and no
prior chosen here has been trained or scored.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from forecast import (  # noqa: E402  (a sibling script)
    deepnet_relaxation_runs,
    deepnet_runs,
    load_source,
    tiny_grid2_runs,
    tiny_grid_runs,
)

from grpodyn.ground import InputError, write_atomic  # noqa: E402
from grpodyn.numerics.learned_prior import (  # noqa: E402
    FAMILIES,
    THEORY_SHARES,
    curve_features,
    sample_prior_curves,
)

FRACTIONS = (0.2, 0.3, 0.5, 0.7)
MOVE_BINS, SPREAD_BINS = 6, 3
CELLS = MOVE_BINS * MOVE_BINS * SPREAD_BINS
PRIOR_CURVES = 4000
SNR_GRID = [(mu, sd) for mu in (0.5, 1.0, 1.5, 2.0, 2.5, 3.0) for sd in (0.5, 1.0, 1.5)]


def summaries(reward: np.ndarray) -> list[tuple[float, float, float, float]]:
    """Return (F, training move, rest's move, log recent spread) of a run at each cut F."""
    out = []
    steps = np.arange(1.0, reward.size + 1)
    for fraction in FRACTIONS:
        n = int(fraction * reward.size)
        if n < 8 or reward.size - n < 3:
            continue
        head = reward[:n]
        try:
            _, loc, scale = curve_features(steps[:n], head, steps[n:n + 1], None)
        except InputError:
            continue
        z = (head - loc) / scale
        out.append((fraction, np.arcsinh((loc - head[:max(1, n // 5)].mean()) / scale / 3),
                    np.arcsinh((reward[n:].mean() - loc) / scale / 3),
                    np.log(max(float(z[int(0.8 * n):].std()), 1e-3))))
    return out


def real_sources(logs: Path) -> dict[str, np.ndarray]:
    """Return the summaries of every seen real run, by source."""
    relax = ("relaxruns", "relaxruns_slow", "relaxruns_burnin", "moreseeds_relaxruns_burnin",
             "relaxruns_linear", "relaxruns_long")
    runs = {"public logs": load_source("score", logs),
            "tiny-model grids": tiny_grid_runs() + tiny_grid2_runs(seeds=tuple(range(17))),
            "deep network": deepnet_runs() + deepnet_relaxation_runs(relax)}
    return {name: np.array([s for _, run in group
                            for s in summaries(np.asarray(run.reward, float))])
            for name, group in runs.items()}


class Binning:
    """Cells of the summaries: per F, quantile cuts of the pooled real summaries."""

    def __init__(self, pooled: np.ndarray) -> None:
        move_cuts = np.linspace(0, 1, MOVE_BINS + 1)[1:-1]
        self.cuts = (np.quantile(pooled[:, 1], move_cuts), np.quantile(pooled[:, 2], move_cuts),
                     np.quantile(pooled[:, 3], np.linspace(0, 1, SPREAD_BINS + 1)[1:-1]))

    def cell(self, rows: np.ndarray) -> np.ndarray:
        """Cell index of each summary row."""
        f = np.searchsorted(FRACTIONS, rows[:, 0])
        i, j, k = (np.searchsorted(c, rows[:, d + 1]) for d, c in enumerate(self.cuts))
        return ((f * MOVE_BINS + i) * MOVE_BINS + j) * SPREAD_BINS + k

    def density(self, rows: np.ndarray) -> np.ndarray:
        """Cell probabilities (normalised within each F, 0.5 pseudo-counts)."""
        counts = np.bincount(self.cell(rows), minlength=len(FRACTIONS) * CELLS) + 0.5
        counts = counts.reshape(len(FRACTIONS), CELLS)
        return (counts / counts.sum(axis=1, keepdims=True)).ravel()


def prior_summaries(**prior: object) -> np.ndarray:
    """Summaries of ``PRIOR_CURVES`` curves of the prior with the given hyperparameters."""
    curves = sample_prior_curves(np.random.default_rng(7), PRIOR_CURVES, **prior)
    return np.array([s for c in curves for s in summaries(c.reward)])


def flat_then(rows: np.ndarray) -> dict[float, dict[str, float]]:
    """Return, per F (0.3, 0.5), how far the rest moves after a quiet training part.

    Quiet: the training part moved less than 2 noise widths. Per F: the share of quiet parts,
    and the median and 90 % quantile of the rest's |move| (noise widths) after them.
    """
    out = {}
    for fraction in (0.3, 0.5):
        at = rows[rows[:, 0] == fraction]
        quiet = np.abs(3 * np.sinh(at[:, 1])) < 2
        move = np.abs(3 * np.sinh(at[quiet, 2]))
        out[fraction] = {"share": float(quiet.mean()), "q50": float(np.median(move)),
                         "q90": float(np.quantile(move, 0.9))}
    return out


def em_shares(components: np.ndarray, cells: list[np.ndarray], iterations: int = 500
              ) -> np.ndarray:
    """Family shares maximising the mean (over sources) log likelihood of their cells (EM)."""
    shares = np.array(THEORY_SHARES)
    for _ in range(iterations):
        update = np.zeros_like(shares)
        for c in cells:
            joint = shares[:, None] * components[:, c]
            update += (joint / joint.sum(axis=0)).mean(axis=1) / len(cells)
        shares = update
    return shares


def main() -> None:
    """Score every candidate prior on every source and print the table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--logs", type=Path,
                        default=Path(__file__).resolve().parents[2] / "shared" / "data"
                        / "real_logs", help="the public logs' folder")
    parser.add_argument("--json", type=Path, help="write every number here")
    args = parser.parse_args()
    if not args.logs.is_dir():
        parser.error(f"--logs: {args.logs} is not a folder of logs")
    if args.json is not None and not args.json.parent.is_dir():
        parser.error(f"--json: the folder {args.json.parent} does not exist")
    real = real_sources(args.logs)
    binning = Binning(np.vstack(list(real.values())))
    cells = {name: binning.cell(rows) for name, rows in real.items()}

    def score(density: np.ndarray) -> dict[str, float]:
        out = {name: float(np.mean(np.log(density[c]))) for name, c in cells.items()}
        out["pooled"] = float(np.mean(list(out.values())))
        return out

    theory = prior_summaries()
    table = {"theory prior": score(binning.density(theory))}
    components = np.array([binning.density(prior_summaries(shares=tuple(
        float(f == g) for g in FAMILIES))) for f in FAMILIES])
    shares = {"pooled": em_shares(components, list(cells.values()))}
    shares.update({name: em_shares(components, [c]) for name, c in cells.items()})
    table["family shares (EM, pooled)"] = score(shares["pooled"] @ components)
    snr = {f"mu {mu:g}, sd {sd:g}": score(binning.density(prior_summaries(
        signal_to_noise=(mu, sd)))) for mu, sd in SNR_GRID}
    best = max(snr, key=lambda k: snr[k]["pooled"])
    table[f"signal-to-noise hyperprior, best pooled ({best})"] = snr[best]
    names = list(real)
    print(f"{'log density per summary (higher is better)':58s}"
          + "".join(f"{n:>18s}" for n in [*names, "pooled"]))
    for label, row in table.items():
        print(f"{label:58s}" + "".join(f"{row[n]:18.3f}" for n in [*names, "pooled"]))
    for name in names:
        top = max(snr, key=lambda k: snr[k][name])
        print(f"best signal-to-noise hyperprior for {name}: {top} ({snr[top][name]:.3f})")
    for name, value in shares.items():
        print(f"EM family shares, {name}: "
              + ", ".join(f"{f} {v:.2f}" for f, v in zip(FAMILIES, value, strict=True)))
    print("summaries: " + ", ".join(f"{n} {len(r)}" for n, r in real.items()))
    quiet = {name: flat_then(rows) for name, rows in [*real.items(), ("theory prior", theory)]}
    for name, row in quiet.items():
        print(f"rest's move after a training part that moved < 2 noise widths, {name}: "
              + "; ".join(f"F {f:g}: share {v['share']:.2f}, |move| q50 {v['q50']:.2f} "
                          f"q90 {v['q90']:.2f}" for f, v in row.items()))
    if args.json:
        write_atomic(args.json, json.dumps({
            "table": table, "signal_to_noise": snr,
            "em_shares": {k: dict(zip(FAMILIES, v.tolist(), strict=True))
                          for k, v in shares.items()},
            "summaries": {n: len(r) for n, r in real.items()},
            "rest_after_quiet_training": quiet}, indent=1))


if __name__ == "__main__":
    main()
