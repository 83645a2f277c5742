"""The axes a ``plot`` method draws on: the caller's, or those of a new figure."""

from __future__ import annotations

from typing import Any

__all__ = ["axes_or_new"]


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
