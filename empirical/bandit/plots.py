"""Figures of the bandit lab, one per experiment (matplotlib; each returns the Figure)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from grpodyn.empirical.bandit.lab import (
    GroupSizeResult,
    SpectrumResult,
    StiffnessEstimate,
    ThresholdResult,
    TransitionResult,
)

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

__all__ = ["plot_stiffness", "plot_transition", "plot_thresholds", "plot_group_size",
           "plot_spectrum"]


def _figure(width: float = 6.0, height: float = 4.0) -> tuple[Figure, Axes]:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt.subplots(figsize=(width, height))


def plot_stiffness(estimate: StiffnessEstimate) -> Figure:
    """Three measurements of kappa."""
    fig, ax = _figure(5, 3.5)
    values = [estimate.analytic, estimate.finite_difference, estimate.relaxation]
    labels = ["analytic (sympy)", "finite differences\n(enumerated drift)",
              "relaxation\n(simulated kicks)"]
    ax.bar(labels, values, yerr=[0, 0, 2 * estimate.relaxation_stderr],
           color=["C0", "C1", "C2"])
    ax.set_ylabel("curvature scale kappa")
    ax.set_ylim(0.9 * min(values), 1.05 * max(values))
    ax.set_title(f"kappa three ways: spread {100 * estimate.max_relative_spread:.2f}%")
    return fig


def plot_transition(result: TransitionResult) -> Figure:
    """Overshoot after a kick against the momentum, with the predicted boundaries."""
    from grpodyn.numerics.explorer import REGIME_COLOURS

    fig, ax = _figure()
    low, high = min(result.momenta), max(result.momenta)
    ax.axvspan(low, result.predicted_momentum, color=REGIME_COLOURS["overdamped"], lw=0)
    ax.axvspan(result.predicted_momentum, high, color=REGIME_COLOURS["oscillatory"], lw=0)
    for x, name in (((low + result.predicted_momentum) / 2, "overdamped"),
                    ((result.predicted_momentum + high) / 2, "oscillatory")):
        ax.text(x, 0.92, name, transform=ax.get_xaxis_transform(), ha="center",
                weight="bold", color="#333")
    ax.plot(result.momenta, result.overshoot, "o-", ms=3, label="overshoot / kick (simulator)")
    ax.axvline(result.predicted_momentum, color="k", label="exact discrete (1 - sqrt k)^2")
    ax.axvline(result.continuum_momentum, color="k", ls="--", label="continuum zeta = 1")
    ax.set_xlim(low, high)
    ax.set_xlabel("momentum beta (dimensionless)")
    ax.set_ylabel("largest overshoot / kick")
    ax.set_yscale("symlog", linthresh=1e-6)
    ax.legend(fontsize=8)
    ax.set_title(f"overdamped -> oscillatory at k = {result.stiffness:.4f}")
    return fig


def plot_thresholds(results: list[ThresholdResult]) -> Figure:
    """Excursion ratio against the lag for each momentum; predicted thresholds as lines."""
    fig, ax = _figure()
    for i, r in enumerate(results):
        color = f"C{i}"
        ax.plot(r.lags, r.excursion, "o-", color=color, ms=4,
                label=f"{r.kind}, beta = {r.momentum}")
        if np.isfinite(r.predicted):
            ax.axvline(r.predicted, color=color, ls="--")
    ax.axhline(1.0, color="k", lw=0.8)
    ax.set_yscale("log")
    ax.set_xscale("log")
    bottom, top = ax.get_ylim()
    if top > 1.0:  # where a kick grows: the unstable side of the line
        ax.axhspan(1.0, top, color="#fcbba1", alpha=0.4, lw=0, zorder=0)
        ax.set_ylim(bottom, top)
    ax.text(0.02, 1.0, " kick grows: unstable", transform=ax.get_yaxis_transform(),
            va="bottom", weight="bold", color="#333", fontsize=8)
    from matplotlib.ticker import NullFormatter, ScalarFormatter

    ax.xaxis.set_major_formatter(ScalarFormatter())
    ax.xaxis.set_minor_formatter(NullFormatter())
    ax.set_xlabel("lag (steps)")
    ax.set_ylabel("late excursion / kick (median over seeds)")
    ax.set_title("lag thresholds: predicted (dashed) and simulated")
    ax.legend(fontsize=7)
    return fig


def plot_group_size(result: GroupSizeResult) -> Figure:
    """Stationary variance against G: simulated, exact finite-G, and 1/G."""
    fig, ax = _figure()
    g = np.array(result.group_sizes)
    ax.loglog(g, result.variance_observed, "o", label="simulated")
    ax.loglog(g, result.variance_predicted, "-", label="exact finite G (AR(2), Var[U](p*))")
    ax.loglog(g, result.variance_one_over_g, ":", label="1/G from the smallest G")
    ax.set_xlabel("group size G")
    ax.set_ylabel("stationary variance of x")
    ax.legend(fontsize=8)
    ax.set_title("fluctuations against G (p* ~ 1/2: faster than 1/G)")
    return fig


def plot_spectrum(results: list[SpectrumResult]) -> Figure:
    """Seed-averaged periodogram against the AR(2) spectral density."""
    fig, ax = _figure()
    for i, r in enumerate(results):
        ax.loglog(r.frequencies, r.observed, color=f"C{i}", alpha=0.5, lw=0.8)
        ax.loglog(r.frequencies, r.predicted, color=f"C{i}", lw=1.5,
                  label=f"beta = {r.momentum}: predicted" + (
                      f", peak {r.peak_predicted:.3f}" if r.peak_predicted else ", no peak"))
    ax.set_xlabel("angular frequency (rad/step)")
    ax.set_ylabel("power spectral density of x")
    ax.legend(fontsize=8)
    ax.set_title("resonance peak in the oscillatory regime")
    return fig
