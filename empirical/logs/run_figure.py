"""The figure of one analysed run (:class:`grpodyn.empirical.logs.run_analysis.RunAnalysis`).

Reward with the trusted fit, the forecast band after the training cut, the plateau when it is
determined, the flagged windows of the diagnosis shaded, and KL / entropy / completion-length
panels when logged. y-limits come from the data, so a bad fit cannot squash the run flat.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from grpodyn.ground import save_figure

if TYPE_CHECKING:
    from matplotlib.figure import Figure

    from .run_analysis import RunAnalysis

__all__ = ["analysis_figure"]

_PANELS = (("kl", "KL to the reference", "nats"), ("entropy", "policy entropy", "nats"),
           ("completion_length", "completion length", "tokens"))


def _ylimits(values: np.ndarray, bounds: tuple[float, float] | None) -> tuple[float, float]:
    """y-limits from the data (1st-99th percentile, padded): a bad fit cannot squash the run."""
    finite = values[np.isfinite(values)]
    lo, hi = np.percentile(finite, [1, 99]) if finite.size else (0.0, 1.0)
    pad = 0.15 * max(hi - lo, 1e-9)
    lo, hi = lo - pad, hi + pad
    if bounds is not None:
        lo, hi = max(lo, bounds[0] - 0.02 * (bounds[1] - bounds[0])), \
            min(hi, bounds[1] + 0.02 * (bounds[1] - bounds[0]))
    return float(lo), float(hi)


def analysis_figure(analysis: RunAnalysis, *, path: str | Path | None = None) -> Figure:
    """Draw the run's figure.

    Reward, trusted fit, point forecast and band, training cut, diagnosis windows, and KL /
    entropy / completion-length panels when logged.

    Parameters
    ----------
    analysis : RunAnalysis
        The analysed run (:func:`grpodyn.empirical.logs.run_analysis.analyse_run`).
    path : str or Path, optional
        Save the figure there (atomically) when given.

    Returns
    -------
    matplotlib.figure.Figure
        The figure.
    """
    import matplotlib

    if path is not None:
        matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    run = analysis.run
    panels = [(k, title, unit) for k, title, unit in _PANELS
              if k in run.metrics and np.isfinite(run.metrics[k]).sum() >= 2]
    fig, axes = plt.subplots(1 + len(panels), 1, figsize=(7, 3.6 + 1.6 * len(panels)),
                             sharex=True, squeeze=False,
                             gridspec_kw={"height_ratios": [2.5] + [1] * len(panels)})
    ax = axes[0, 0]
    ax.plot(run.steps, run.reward, ".", ms=3, alpha=0.5, color="C0", label="logged reward")
    trusted = analysis.trusted_model
    if trusted in analysis.fits:
        fit = analysis.fits[trusted]
        ax.plot(run.steps, fit.predict(run.steps - run.steps[0]), color="C1", lw=1.2,
                label=f"{trusted} fit (whole run, weight {analysis.weights.get(trusted, 0):.2f})")
    fc = analysis.forecast
    if fc is not None:
        cut = run.steps[fc.train_points - 1]
        ax.axvline(cut, color="grey", lw=0.8, ls=":", label=f"training cut (step {cut:g})")
        ax.plot(fc.steps, fc.point, color="C3", lw=1.2, label=f"forecast ({fc.model})")
        ax.fill_between(fc.steps, fc.lower, fc.upper, color="C3", alpha=0.2,
                        label=f"{fc.level:.0%} band")
    if analysis.plateau["status"] == "determined":
        ax.axhline(analysis.plateau["value"], color="C2", lw=0.8, ls="--",
                   label=f"plateau {analysis.plateau['value']:.3g}")
    if analysis.diagnosis is not None:
        for index, (mode, verdict) in enumerate(analysis.diagnosis.modes.items()):
            if verdict.flag and verdict.steps is not None:
                for panel in axes[:, 0]:
                    panel.axvspan(*verdict.steps, color=f"C{4 + index}", alpha=0.12,
                                  label=f"{mode} (flagged)" if panel is ax else None)
    ax.set_ylim(*_ylimits(run.reward, analysis.reward_range))
    ax.set_ylabel(f"{run.reward_key} (reward units)")
    ax.set_title(f"{Path(run.source).name[:70]}: reward"
                 + (" and forecast" if fc is not None else ""), fontsize=9)
    ax.legend(fontsize=7, loc="best")
    for panel, (key, title, unit) in zip(axes[1:, 0], panels, strict=True):
        values = run.metrics[key]
        finite = np.isfinite(values)
        panel.plot(run.steps[finite], values[finite], lw=0.8, color="C0")
        panel.set_ylim(*_ylimits(values, None))
        panel.set_ylabel(f"{key} ({unit})", fontsize=7)
        panel.set_title(title, fontsize=8)
    axes[-1, 0].set_xlabel("optimizer step")
    fig.tight_layout()
    if path is not None:
        save_figure(fig, path)
        plt.close(fig)
    return fig
