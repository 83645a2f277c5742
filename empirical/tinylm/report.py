"""The shipped tiny-model TRL runs as ``grpodyn report`` shows them: a figure and the checks.

:func:`tiny_runs_data` summarises the shipped runs (:mod:`grpodyn.empirical.tinylm.analysis`)
and draws their reward; the ``*_claim`` functions check the claims of the tiny LM runs and of
their curvature probe (:mod:`grpodyn.theory.claims.registry`; docs/theory.md sections 2, 3, 6, 9).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from grpodyn.empirical.tinylm.analysis import DATA_DIR, TinyRunsSummary, summarise_tiny_runs
from grpodyn.ground import save_figure
from grpodyn.theory.claims import Check, Claim

__all__ = ["tiny_runs_data", "probe_data", "fit_claim", "mean_path_claim", "plateau_claim",
           "relaxation_ratio_claim", "fluctuation_claim", "transfer_claim", "probe_claim"]


def tiny_runs_data(out: Path) -> tuple[TinyRunsSummary | None, list[tuple[str, str]]]:
    """Summarise the shipped tiny runs and draw their reward into ``out``.

    Parameters
    ----------
    out : Path
        The report's folder.

    Returns
    -------
    tuple
        The summary (None when no run is shipped) and the figures (file name, caption).
    """
    if not any(DATA_DIR.glob("tiny_G*.json")):
        return None, []
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from grpodyn.empirical.logs.loaders import load_run

    summary = summarise_tiny_runs()
    fig, ax = plt.subplots(figsize=(6, 4))
    for path in sorted(DATA_DIR.glob("tiny_G*.json")):
        run = load_run(path)
        window = summary.window
        n = run.n_points // window * window
        smooth = run.reward[:n].reshape(-1, window).mean(axis=1)
        color = "C0" if "_G4_" in path.name else "C1"
        style = "--" if "reuse" in path.name else "-"
        ax.plot(run.steps[:n].reshape(-1, window).mean(axis=1), smooth, style, color=color,
                alpha=0.8, label=path.stem)
    ax.set_xlabel("step")
    ax.set_ylabel(f"reward ({summary.window}-step means)")
    ax.set_title("tiny-model GRPO (TRL): G = 4 (blue) and G = 16 (orange)")
    ax.legend(fontsize=6)
    save_figure(fig, out / "tiny_runs.png")
    plt.close(fig)
    return summary, [("tiny_runs.png", "Reward of the shipped tiny-model TRL runs.")]


def probe_data() -> list[dict[str, Any]] | None:
    """Return the curvature probe's summary per group size (None when it is not shipped)."""
    from grpodyn.empirical.tinylm.curvature_probe import DEFAULT_OUT, summarise_probe

    return summarise_probe(DEFAULT_OUT) if DEFAULT_OUT.is_file() else None


def fit_claim(claim: Claim, data: TinyRunsSummary) -> list[Check]:
    """Check that the closed form explains the explainable variance of each run (section 2)."""
    share = claim.values["share"]
    return [claim.row(f"R^2 inertial {r['r2_inertial']:.3f} = "
                      f"{100 * r['r2_inertial'] / r['r2_ceiling']:.0f}% of the ceiling "
                      f"{r['r2_ceiling']:.3f}; exponential {r['r2_exponential']:.3f}",
                      r["r2_inertial"] >= share * r["r2_ceiling"], subject=name)
            for name, r in data.runs.items()]


def mean_path_claim(claim: Claim, data: TinyRunsSummary) -> list[Check]:
    """Compare the mean reward paths of G = 4 and G = 16 with their seed spread (section 9)."""
    return [claim.row(f"largest gap {data.mean_path_gap:.3f} vs 2 s.e. "
                      f"{data.mean_path_spread:.3f} ({data.window}-step windows)",
                      data.mean_path_gap <= data.mean_path_spread)]


def plateau_claim(claim: Claim, data: TinyRunsSummary) -> list[Check]:
    """Check that the plateau does not depend on G (a fixed point; sections 3, 7)."""
    (p4, s4), (p16, s16) = data.plateau[4], data.plateau[16]
    return [claim.row(f"{p4:.3f} +- {s4:.3f} vs {p16:.3f} +- {s16:.3f} (sd over seeds)",
                      abs(p4 - p16) <= 2 * np.sqrt((s4**2 + s16**2) / 3))]


def relaxation_ratio_claim(claim: Claim, data: TinyRunsSummary) -> list[Check]:
    """Check tau(G=4) / tau(G=16) against Adam's noise-shrunk step (section 9)."""
    v = claim.values
    return [claim.row(f"{data.relaxation_ratio:.2f} (tau {data.relaxation_time[4][0]:.0f} vs "
                      f"{data.relaxation_time[16][0]:.0f} steps)",
                      v["lower"] < data.relaxation_ratio < v["upper"])]


def fluctuation_claim(claim: Claim, data: TinyRunsSummary) -> list[Check]:
    """Check that the reward fluctuations shrink with G (section 6)."""
    return [claim.row(f"d ln Var / d ln G = {data.fluctuation_exponent:.2f}",
                      data.fluctuation_exponent < 0)]


def transfer_claim(claim: Claim, data: TinyRunsSummary) -> list[Check]:
    """Check the transfer to held-out task families, G = 4 against G = 16."""
    held_out = {f: ok for f, ok in data.transfer_within_spread.items() if f != "add"}
    agree = sum(held_out.values())
    return [claim.row(f"{agree} of {len(held_out)} held-out families within 2 s.e. (training "
                      f"family: G = 4 {data.transfer['add'][4][0]:.2f}, G = 16 "
                      f"{data.transfer['add'][16][0]:.2f})", agree == len(held_out))]


def probe_claim(claim: Claim, data: list[dict[str, Any]]) -> list[Check]:
    """Compare tau from the curvature probe with the fitted tau, per group size (section 3)."""
    rows = []
    for r in data:
        predicted = "none (drift does not fall with the reward)" if r["tau_probe"] is None \
            else f"{r['tau_probe']:.0f} steps"
        rows.append(claim.row(
            f"{predicted}; first-order drift x{r['overprediction']:.0f} the observed one; a "
            f"quarter of the expected Adam step gains x{r['quarter_step_linearity']:.2f} of "
            f"first order; a full step lowers the reward at {100 * r['full_step_loses']:.0f}% "
            f"of {r['checkpoints']} checkpoints",
            r["tau_probe"] is not None and abs(r["tau_probe"] - r["tau_fitted"])
            <= claim.values["stderrs"] * r["tau_fitted_se"],
            subject=f"{r['group_size']}",
            stated=f"{claim.stated}, {r['tau_fitted']:.0f} +- {r['tau_fitted_se']:.0f} steps"))
    return rows
