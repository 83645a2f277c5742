"""The regime explorer: a run's reward path, its poles in the unit disk and the regime map.

One set of hyperparameters (lr, momentum, kappa, a refresh interval K or a staleness d) gives a
mean-field map (:class:`grpodyn.numerics.mean_field_map.MeanFieldMap`, stiffness k = lr kappa);
:func:`explorer_figure` draws its three panels, the same ones the notebook
``notebooks/08_regime_explorer.ipynb`` redraws under its sliders:

- the mean reward path r_n = r* + e_n of the exact discrete map (docs/theory.md section 4);
- the poles z of the characteristic polynomial in the unit disk (stable inside; per step, or
  per refresh cycle to the power 1/K; section 5);
- the regime map in (momentum, stiffness), regimes shaded and named, its thresholds marked: the
  critical damping curve k = (1 - sqrt beta)^2 (exact) and (1 - beta)^2 / (2 (1 + beta))
  (continuum), the flip boundary (1 + sqrt beta)^2, the Jury limit 2 (1 + beta), and the lag's
  threshold (refresh K or staleness d; section 5), with the current point.

:func:`regime_map_axes` draws the map alone (the report's figure); :func:`write_gallery` writes
the three panels for a few points, one per regime, as PNG files (``python -m
grpodyn.numerics.explorer OUT``).
"""

from __future__ import annotations

import functools
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from . import stability
from .compiled import compiled
from .mean_field_map import MeanFieldMap

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

__all__ = ["ExplorerState", "explorer_state", "regime_map_axes", "poles_axes",
           "trajectory_axes", "explorer_figure", "write_gallery", "GALLERY", "REGIME_COLOURS"]

#: The shade of each regime on the map (the critical regime is a line, not an area).
REGIME_COLOURS = {"overdamped": "#c7e9c0", "oscillatory": "#c6dbef", "flip": "#fdd0a2",
                  "unstable": "#fcbba1"}

#: Points of the gallery: a name and the keyword arguments of :func:`explorer_figure`.
GALLERY: tuple[tuple[str, dict[str, Any]], ...] = (
    ("overdamped", {"lr": 0.002, "momentum": 0.5, "kappa": 1.0}),
    ("oscillatory", {"lr": 0.02, "momentum": 0.9, "kappa": 1.0}),
    ("flip", {"lr": 1.9, "momentum": 0.1, "kappa": 1.0}),
    ("unstable_refresh", {"lr": 0.05, "momentum": 0.9, "kappa": 1.0, "refresh": 8}),
    ("unstable_staleness", {"lr": 0.06, "momentum": 0.9, "kappa": 1.0, "staleness": 2}),
)

_MOMENTUM = np.linspace(0.0, 0.99, 199)
_STIFFNESS = np.geomspace(1e-4, 8.0, 240)


@dataclass(frozen=True)
class ExplorerState:
    """What the explorer shows for one point: the map's regime, poles and limits.

    Attributes
    ----------
    lr, momentum, kappa : float
        The hyperparameters and the curvature.
    refresh, staleness : int
        Refresh interval K and staleness d [steps].
    stiffness : float
        k = lr kappa [1/step^2].
    regime : str
        One of :data:`grpodyn.numerics.stability.REGIMES`.
    poles : tuple of complex
        Roots of the characteristic polynomial, per step.
    spectral_radius : float
        Largest pole modulus (stable below 1).
    stiffness_max, lr_max : float
        The largest stable stiffness with this lag, and the lr that reaches it.
    """

    lr: float
    momentum: float
    kappa: float
    refresh: int
    staleness: int
    stiffness: float
    regime: str
    poles: tuple[complex, ...]
    spectral_radius: float
    stiffness_max: float
    lr_max: float

    def to_dict(self) -> dict[str, Any]:
        """Return the state as plain numbers (poles as [real, imaginary] pairs)."""
        return {"lr": self.lr, "momentum": self.momentum, "kappa": self.kappa,
                "refresh": self.refresh, "staleness": self.staleness,
                "stiffness": self.stiffness, "regime": self.regime,
                "poles": [[z.real, z.imag] for z in self.poles],
                "spectral_radius": self.spectral_radius, "stiffness_max": self.stiffness_max,
                "lr_max": self.lr_max}


def _map(lr: float, momentum: float, kappa: float, refresh: int, staleness: int
         ) -> MeanFieldMap:
    return MeanFieldMap(lr=lr, kappa=kappa, momentum=momentum, refresh=refresh,
                        staleness=staleness)


def explorer_state(*, lr: float, momentum: float, kappa: float, refresh: int = 1,
                   staleness: int = 0) -> ExplorerState:
    """Return the regime, poles and limits of the map at one point (docs/theory.md sections 4-5).

    Parameters
    ----------
    lr : float
        Learning rate (the step of heavy-ball SGD), > 0.
    momentum : float
        Momentum beta in [0, 1).
    kappa : float
        Curvature kappa [1/reward], > 0; the stiffness is k = lr kappa.
    refresh, staleness : int
        Refresh interval K >= 1 or staleness d >= 0; not both.

    Returns
    -------
    ExplorerState
        The point's regime, poles, spectral radius and stability limits.
    """
    system = _map(lr, momentum, kappa, refresh, staleness)
    poles = tuple(complex(z) for z in system.poles())
    return ExplorerState(lr=float(lr), momentum=float(momentum), kappa=float(kappa),
                         refresh=int(refresh), staleness=int(staleness),
                         stiffness=float(system.stiffness), regime=system.regime, poles=poles,
                         spectral_radius=float(max(abs(z) for z in poles)),
                         stiffness_max=system.stiffness_max, lr_max=system.lr_max)


@functools.lru_cache(maxsize=16)
def _lag_unstable(refresh: int, staleness: int) -> np.ndarray:
    """Grid cells (momentum x stiffness) stable on-policy but not with the lag."""
    beta, k = np.meshgrid(_MOMENTUM, _STIFFNESS, indexing="ij")
    if refresh > 1:
        stable = np.asarray(stability.refresh_stable(beta, k, refresh), dtype=bool)
    else:
        limits = np.array([stability.staleness_stiffness_max(b, staleness)
                           for b in _MOMENTUM[::6]])
        stable = k < np.interp(beta, _MOMENTUM[::6], limits)
    return ~stable & (k < compiled("stiffness_max")(beta))


def regime_map_axes(ax: Axes, *, refresh: int = 1, staleness: int = 0,
                    point: tuple[float, float] | None = None) -> Axes:
    """Draw the regime map: regimes shaded and named, thresholds marked, the point.

    Parameters
    ----------
    ax : matplotlib.axes.Axes
        Where to draw.
    refresh, staleness : int
        A lag whose stability threshold is marked (the cells it destabilises hatched).
    point : (float, float), optional
        The current (momentum, stiffness) to mark.

    Returns
    -------
    matplotlib.axes.Axes
        ``ax``, drawn.
    """
    from matplotlib.colors import ListedColormap

    codes = stability.regime_map(_MOMENTUM[:, None], _STIFFNESS[None, :])
    names = [n for n in stability.REGIMES if n in REGIME_COLOURS]
    index = np.vectorize(lambda c: names.index(stability.REGIMES[c])
                         if stability.REGIMES[c] in names else names.index("oscillatory"))(codes)
    ax.pcolormesh(_MOMENTUM, _STIFFNESS, index.T, shading="nearest",
                  cmap=ListedColormap([REGIME_COLOURS[n] for n in names]), vmin=-0.5,
                  vmax=len(names) - 0.5, rasterized=True)
    log_k = np.log10(_STIFFNESS)
    for i, name in enumerate(names):
        cells = np.argwhere(index == i)
        if len(cells):
            b, k = cells.mean(axis=0)
            ax.text(_MOMENTUM[int(b)], 10 ** np.interp(k, np.arange(log_k.size), log_k),
                    name, ha="center", va="center", fontsize=9, weight="bold", color="#333")
    beta = _MOMENTUM
    ax.plot(beta, compiled("critical_stiffness_discrete")(beta), "k-", lw=1.4,
            label="critical damping (exact): $(1-\\sqrt{\\beta})^2$")
    ax.plot(beta, compiled("critical_stiffness")(beta), "k--", lw=1,
            label="critical damping (continuum)")
    ax.plot(beta, compiled("flip_stiffness")(beta), color="#b35806", lw=1.2,
            label="flip: $(1+\\sqrt{\\beta})^2$")
    ax.plot(beta, compiled("stiffness_max")(beta), color="#b2182b", lw=1.8,
            label="Jury limit $2(1+\\beta)$")
    if refresh > 1 or staleness > 0:
        lag = f"refresh K = {refresh}" if refresh > 1 else f"staleness d = {staleness}"
        ax.contourf(_MOMENTUM, _STIFFNESS, _lag_unstable(refresh, staleness).T.astype(float),
                    levels=[0.5, 1.5], hatches=["//"], colors="none")
        ax.contour(_MOMENTUM, _STIFFNESS, _lag_unstable(refresh, staleness).T.astype(float),
                   levels=[0.5], colors="#6a3d9a", linewidths=1.5)
        ax.plot([], [], color="#6a3d9a", lw=1.5, label=f"threshold with {lag} (hatched: "
                "unstable)")
    if point is not None:  # a point beyond the map is drawn at its edge, and said so
        beta_run, k_run = point
        shown = float(np.clip(k_run, _STIFFNESS[0], _STIFFNESS[-1]))
        across = float(np.clip(beta_run, _MOMENTUM[0], _MOMENTUM[-1]))
        edge = "" if shown == k_run else "top" if k_run > shown else "bottom"
        edge = edge or ("" if across == beta_run else "right" if beta_run > across else "left")
        marker = {"": "*", "top": "^", "bottom": "v", "right": ">", "left": "<"}[edge]
        ax.plot(across, shown, marker=marker, ms=14, color="gold", mec="k", ls="none",
                label=f"this run: beta {beta_run:.3g}, k {k_run:.3g}"
                      + (f" (off the map: marked at its {edge})" if edge else ""))
    ax.set_yscale("log")
    ax.set_xlim(_MOMENTUM[0], _MOMENTUM[-1])
    ax.set_ylim(_STIFFNESS[0], _STIFFNESS[-1])
    ax.set_xlabel("momentum beta (dimensionless)")
    ax.set_ylabel("stiffness k = lr kappa [1/step^2]")
    ax.set_title("Regimes of the map")
    ax.legend(fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.16), ncol=2)
    return ax


def poles_axes(ax: Axes, state: ExplorerState) -> Axes:
    """Draw the map's poles in the unit disk (stable when every pole lies inside)."""
    t = np.linspace(0, 2 * np.pi, 400)
    ax.fill(np.cos(t), np.sin(t), color="#f0f0f0")
    ax.plot(np.cos(t), np.sin(t), "k-", lw=1)
    ax.axhline(0, color="#999", lw=0.5)
    ax.axvline(0, color="#999", lw=0.5)
    z = np.array(state.poles)
    colour = REGIME_COLOURS.get(state.regime, "#c6dbef")
    ax.plot(z.real, z.imag, "x", ms=10, mew=2.5, color="k")
    ax.plot(z.real, z.imag, "x", ms=8, mew=1.5, color=colour)
    limit = max(1.15, 1.1 * state.spectral_radius)
    ax.set_xlim(-limit, limit)
    ax.set_ylim(-limit, limit)
    ax.set_aspect("equal")
    ax.set_xlabel("Re z")
    ax.set_ylabel("Im z")
    per = f", per step of a K = {state.refresh} cycle" if state.refresh > 1 else ""
    ax.set_title(f"Poles: radius {state.spectral_radius:.3f}{per}")
    return ax


def trajectory_axes(ax: Axes, state: ExplorerState, *, steps: int = 200, r0: float = 0.2,
                    plateau: float = 0.8) -> Axes:
    """Draw the mean reward path r_n = r* + e_n of the exact map, from r0 towards r*."""
    system = _map(state.lr, state.momentum, state.kappa, state.refresh, state.staleness)
    with np.errstate(over="ignore", invalid="ignore"):
        e = system.displacement(steps, e0=r0 - plateau)[0]
    reward = plateau + e
    ax.axhline(plateau, color="#999", ls=":", lw=1, label=f"plateau r* = {plateau}")
    ax.plot(np.arange(steps + 1), reward, color="#08519c", lw=1.5,
            label=f"mean reward ({state.regime})")
    span = plateau - r0
    low, high = min(r0, plateau) - 0.6 * abs(span), max(r0, plateau) + 0.6 * abs(span)
    if not np.all(np.isfinite(reward)) or np.max(np.abs(e)) > 3 * abs(span):
        ax.text(0.5, 0.9, "diverges", transform=ax.transAxes, ha="center", color="#b2182b",
                weight="bold")
    ax.set_ylim(low, high)
    ax.set_xlabel("step")
    ax.set_ylabel("expected reward")
    ax.set_title(f"Reward path: k = {state.stiffness:.3g}, lr_max = {state.lr_max:.3g}")
    ax.legend(fontsize=7, loc="lower right")
    return ax


def explorer_figure(*, lr: float, momentum: float, kappa: float, refresh: int = 1,
                    staleness: int = 0, steps: int = 200, r0: float = 0.2,
                    plateau: float = 0.8) -> Figure:
    """Draw the explorer's three panels for one point: path, poles, regime map.

    Parameters
    ----------
    lr, momentum, kappa : float
        Learning rate, momentum beta in [0, 1), curvature kappa (k = lr kappa).
    refresh, staleness : int
        Refresh interval K or staleness d (not both).
    steps : int
        Steps of the reward path.
    r0, plateau : float
        Initial reward and plateau r* of the path.

    Returns
    -------
    matplotlib.figure.Figure
        The figure (its state in ``fig.explorer_state``).
    """
    import matplotlib.pyplot as plt

    state = explorer_state(lr=lr, momentum=momentum, kappa=kappa, refresh=refresh,
                           staleness=staleness)
    fig, axes = plt.subplots(1, 3, figsize=(15, 5.6), gridspec_kw={"width_ratios": [1.2, 1, 1.3]})
    trajectory_axes(axes[0], state, steps=steps, r0=r0, plateau=plateau)
    poles_axes(axes[1], state)
    regime_map_axes(axes[2], refresh=refresh, staleness=staleness,
                    point=(state.momentum, state.stiffness))
    lag = (f", refresh K = {refresh}" if refresh > 1 else "") + \
        (f", staleness d = {staleness}" if staleness else "")
    fig.suptitle(f"lr {lr:.3g}, momentum {momentum:.2f}, kappa {kappa:.3g}{lag}: "
                 f"{state.regime}")
    fig.tight_layout()
    fig.explorer_state = state  # type: ignore[attr-defined]
    return fig


def write_gallery(folder: Path, *,
                  points: Sequence[tuple[str, dict[str, Any]]] = GALLERY) -> list[Path]:
    """Write the explorer's panels for each point as ``explorer_<name>.png`` in ``folder``.

    Returns
    -------
    list of Path
        The files written (atomically).
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from grpodyn.ground import save_figure

    folder.mkdir(parents=True, exist_ok=True)
    written = []
    for name, params in points:
        fig = explorer_figure(**params)
        written.append(folder / f"explorer_{name}.png")
        save_figure(fig, written[-1])
        plt.close(fig)
    return written


if __name__ == "__main__":
    for path in write_gallery(Path(sys.argv[1] if len(sys.argv) > 1 else "explorer_gallery")):
        print(path)
