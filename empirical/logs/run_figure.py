"""The figure of one analysed run (:class:`grpodyn.empirical.logs.run_analysis.RunAnalysis`).

Reward with the trusted fit, the forecast band after the training cut, the plateau when it is
determined, the flagged windows of the diagnosis shaded, and KL / entropy / completion-length
panels when logged, each titled by the log's own name of the metric it plots. y-limits come
from the data (and take in a drawn plateau), so a bad fit cannot squash the run flat. The
x-axis is the log's own step, which need not count optimizer steps.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from grpodyn.ground import save_figure
from grpodyn.ground.figures import new_figure

if TYPE_CHECKING:
    from matplotlib.figure import Figure

    from .run_analysis import RunAnalysis

__all__ = ["analysis_figure", "shaded_windows", "step_label"]

#: The panels below the reward: canonical metric, what it is in words, unit. A panel is titled
#: by the log's own name of the metric (an ``approx_kl`` between the old and the new policy is
#: not a KL to the reference).
_PANELS = (("kl", "KL", "nats"), ("entropy", "entropy", "nats"),
           ("completion_length", "completion length", "tokens"))


def step_label(run: Any) -> str:
    """Name the x-axis of a run's figure: the log's own step, or its point order.

    A log's step may count optimizer steps, rollouts or logging calls (a ``grpo_step`` of
    several optimizer steps each), so the axis says the step is the log's, not which it is.
    """
    if run.steps_reconstructed:
        return "logged point (the log has no step)"
    return "step, as the log counts it"


def shaded_windows(analysis: RunAnalysis) -> list[tuple[str, tuple[float, float]]]:
    """Return the diagnosis's flagged windows the figure shades, as (mode, (first, last step)).

    A flagged mode without a window of steps is not shaded; without a diagnosis nothing is.
    """
    if analysis.diagnosis is None:
        return []
    return [(mode, tuple(verdict.steps)) for mode, verdict in analysis.diagnosis.modes.items()
            if verdict.flag and verdict.steps is not None]


def _ylimits(values: np.ndarray, bounds: tuple[float, float] | None,
             plateau: float | None = None) -> tuple[float, float]:
    """y-limits from the data (1st-99th percentile, padded): a bad fit cannot squash the run.

    A ``plateau`` drawn beside the data is taken in, so the line its legend names is inside
    the axes.
    """
    finite = values[np.isfinite(values)]
    lo, hi = np.percentile(finite, [1, 99]) if finite.size else (0.0, 1.0)
    pad = 0.15 * max(hi - lo, 1e-9)
    lo, hi = lo - pad, hi + pad
    if bounds is not None:
        lo, hi = max(lo, bounds[0] - 0.02 * (bounds[1] - bounds[0])), \
            min(hi, bounds[1] + 0.02 * (bounds[1] - bounds[0]))
    if plateau is not None:
        lo, hi = min(lo, plateau - 0.5 * pad), max(hi, plateau + 0.5 * pad)
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
        Save the figure there (atomically) when given; such a figure is made without pyplot,
        so the caller's matplotlib backend stays as it was.

    Returns
    -------
    matplotlib.figure.Figure
        The figure.
    """
    run = analysis.run
    panels = [(k, words, unit) for k, words, unit in _PANELS
              if k in run.metrics and np.isfinite(run.metrics[k]).sum() >= 2]
    fig, axes = new_figure(saving=path is not None, figsize=(7, 3.6 + 1.6 * len(panels)),
                           nrows=1 + len(panels), ncols=1, sharex=True, squeeze=False,
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
    plateau = (analysis.plateau["value"] if analysis.plateau["status"] == "determined"
               else None)
    if plateau is not None:
        ax.axhline(plateau, color="C2", lw=0.8, ls="--", label=f"plateau {plateau:.3g}")
    modes = list(analysis.diagnosis.modes) if analysis.diagnosis is not None else []
    for mode, window in shaded_windows(analysis):
        for panel in axes[:, 0]:
            panel.axvspan(*window, color=f"C{4 + modes.index(mode)}", alpha=0.12,
                          label=f"{mode} (flagged)" if panel is ax else None)
    ax.set_ylim(*_ylimits(run.reward, analysis.reward_range, plateau))
    ax.set_ylabel(f"{run.reward_key} (reward units)")
    which = f" [{run.run_name}]" if run.run_name else ""
    ax.set_title(f"{Path(run.source).name[:70]}{which}: reward"
                 + (" and forecast" if fc is not None else ""), fontsize=9)
    ax.legend(fontsize=7, loc="best")
    for panel, (key, words, unit) in zip(axes[1:, 0], panels, strict=True):
        values = run.metrics[key]
        finite = np.isfinite(values)
        panel.plot(run.steps[finite], values[finite], lw=0.8, color="C0")
        panel.set_ylim(*_ylimits(values, None))
        panel.set_ylabel(f"{key} ({unit})", fontsize=7)
        panel.set_title(f"{words}: {run.metric_keys.get(key, key)}", fontsize=8)
    axes[-1, 0].set_xlabel(step_label(run))
    fig.tight_layout()
    if path is not None:
        save_figure(fig, path, inputs=[run.source])
    return fig
