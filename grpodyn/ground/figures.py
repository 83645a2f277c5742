"""The figures ``plot`` methods draw: on the caller's axes, or on a new figure.

A figure drawn only to be saved is made without pyplot (:func:`new_figure`), so that saving one
neither switches the caller's matplotlib backend nor opens a window.
"""

from __future__ import annotations

from typing import Any

__all__ = ["axes_or_new", "new_figure"]


def axes_or_new(ax: Any = None, *, figsize: tuple[float, float] = (6, 3.5)) -> Any:
    """Return ``ax``, or the axes of a new matplotlib figure when ``ax`` is None.

    matplotlib is imported only when a figure is made, so that a module with a ``plot``
    method does not import it.

    Parameters
    ----------
    ax : matplotlib.axes.Axes, optional
        The caller's axes.
    figsize : tuple of float
        Width and height of a new figure, in inches.

    Returns
    -------
    matplotlib.axes.Axes
        ``ax``, or the axes of the new figure.
    """
    if ax is not None:
        return ax
    import matplotlib.pyplot as plt

    _, new = plt.subplots(figsize=figsize)
    return new


def new_figure(*, saving: bool, figsize: tuple[float, float], **grid: Any) -> tuple[Any, Any]:
    """Return a new matplotlib figure and its axes, made without pyplot when it is only saved.

    pyplot draws with the caller's backend (a notebook shows the figure); a figure that is only
    written to a file is a bare :class:`matplotlib.figure.Figure`, which ``savefig`` renders
    without a backend, so the caller's backend stays as it was.

    Parameters
    ----------
    saving : bool
        True when the figure is drawn to be saved and closed (no pyplot).
    figsize : tuple of float
        Width and height, in inches.
    **grid
        The keywords of :meth:`matplotlib.figure.Figure.subplots` (nrows, sharex, ...).

    Returns
    -------
    tuple
        The figure and its axes (as ``subplots`` returns them).
    """
    if saving:
        from matplotlib.figure import Figure

        fig = Figure(figsize=figsize)
        return fig, fig.subplots(**grid)
    import matplotlib.pyplot as plt

    return plt.subplots(figsize=figsize, **grid)
