"""What the shipped tiny-model GRPO runs say: fits, G-invariance, fluctuations, transfer.

Reads the trainer_state.json files of ``empirical/data/tiny_runs`` (made by
:mod:`grpodyn.empirical.tinylm.make_runs`); needs numpy and scipy only.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np

from grpodyn.empirical.logs.loaders import load_run
from grpodyn.numerics.fit import estimate_noise, fit_curve

__all__ = ["TinyRunsSummary", "summarise_tiny_runs", "DATA_DIR"]

DATA_DIR = Path(__file__).resolve().parents[1] / "data" / "tiny_runs"


@dataclass(frozen=True)
class TinyRunsSummary:
    """Per-run fits and the cross-G comparisons of the tiny-model runs."""

    runs: dict[str, dict]  # name -> {r2 per model, r2_ceiling, r0, r_star, tau}
    window: int
    mean_path_gap: float  # largest |mean(G=4) - mean(G=16)| over windows
    mean_path_spread: float  # 2 standard errors of that difference, same window
    fluctuation_variance: dict[int, float]  # per G: step-to-step variance, Var(diff r)/2
    fluctuation_exponent: float  # d ln Var / d ln G between G = 4 and 16
    seed_spread_variance: dict[int, float]  # per G: variance of the seeds' windowed paths
    transfer: dict[str, dict[int, tuple[float, float]]]  # family -> G -> (mean, sd over seeds)
    transfer_within_spread: dict[str, bool]
    plateau: dict[int, tuple[float, float]]  # G -> (mean, sd) of the fitted r*
    relaxation_time: dict[int, tuple[float, float]]  # G -> (mean, sd) of the fitted tau

    @property
    def relaxation_ratio(self) -> float:
        """tau(G = 4) / tau(G = 16): 1 if G leaves the step alone, 2 if noise fills Adam's v."""
        return self.relaxation_time[4][0] / self.relaxation_time[16][0]

    def to_dict(self) -> dict:
        """Return the summary as plain JSON types (transfer keys as strings)."""
        out = {k: (v if k != "transfer" else {f: {str(g): list(ms) for g, ms in d.items()}
                                              for f, d in v.items()})
               for k, v in asdict(self).items()}
        out["relaxation_ratio"] = self.relaxation_ratio
        return out


def summarise_tiny_runs(folder: str | Path = DATA_DIR, *, window: int = 50) -> TinyRunsSummary:
    """Fit every run and compare the group sizes."""
    folder = Path(folder)
    runs, by_group, transfer, fitted = {}, {}, {}, {}
    for path in sorted(folder.glob("tiny_G*.json")):
        run = load_run(path)
        meta = json.loads(path.read_text())
        noise = estimate_noise(run.reward)
        entry = {"r2_ceiling": noise.r2_ceiling, "n_points": run.n_points}
        for model in ("inertial", "exponential"):
            fit = fit_curve(model, run.steps, run.reward)
            entry[f"r2_{model}"] = fit.r2
            if model == "exponential":
                entry.update({k: fit.params[k] for k in ("r0", "r_star", "tau")})
        runs[path.stem] = entry
        settings = meta["grpodyn_settings"]
        if settings["num_iterations"] == 1:
            g = int(settings["group_size"])
            by_group.setdefault(g, []).append(run.reward)
            fitted.setdefault(g, []).append((entry["r_star"], entry["tau"]))
            for family, score in meta["transfer"].items():
                transfer.setdefault(family, {}).setdefault(g, []).append(score)
    groups = sorted(by_group)
    if groups != [4, 16]:
        raise ValueError(f"{folder}: expected runs at G = 4 and 16, found {groups}")
    length = min(len(r) for rs in by_group.values() for r in rs)
    windows = length // window

    def windowed(rs: list) -> np.ndarray:  # (seeds, windows)
        return np.array([np.asarray(r[: windows * window]).reshape(windows, window).mean(axis=1)
                         for r in rs])

    w4, w16 = windowed(by_group[4]), windowed(by_group[16])
    gap = np.abs(w4.mean(axis=0) - w16.mean(axis=0))
    se = np.sqrt(w4.var(axis=0, ddof=1) / len(w4) + w16.var(axis=0, ddof=1) / len(w16))
    worst = int(np.argmax(gap / se))
    # fast fluctuations: the white part of each run (first differences), averaged over seeds;
    # slow ones: how far the seeds' windowed paths spread
    variance = {g: float(np.mean([estimate_noise(r).sigma ** 2 for r in rs]))
                for g, rs in by_group.items()}
    exponent = float(np.log(variance[16] / variance[4]) / np.log(4.0))
    seed_spread = {4: float(w4.var(axis=0, ddof=1).mean()), 16: float(w16.var(axis=0,
                                                                              ddof=1).mean())}
    summary_transfer, within = {}, {}
    for family, per_g in transfer.items():
        summary_transfer[family] = {g: (float(np.mean(v)), float(np.std(v, ddof=1)))
                                    for g, v in per_g.items()}
        (m4, s4), (m16, s16) = summary_transfer[family][4], summary_transfer[family][16]
        within[family] = bool(abs(m4 - m16) <= 2 * np.sqrt(s4**2 / len(transfer[family][4])
                                                          + s16**2 / len(transfer[family][16]))
                              + 1e-12)
    def mean_sd(values: list[float]) -> tuple[float, float]:
        return float(np.mean(values)), float(np.std(values, ddof=1))

    plateau = {g: mean_sd([r for r, _ in v]) for g, v in fitted.items()}
    tau = {g: mean_sd([t for _, t in v]) for g, v in fitted.items()}
    return TinyRunsSummary(runs, window, float(gap[worst]), float(2 * se[worst]), variance,
                           exponent, seed_spread, summary_transfer, within, plateau, tau)
