"""Progress bars of the command line (tqdm), quiet under ``--json`` and off a terminal.

tqdm ships with the ``parallel`` extra; without it every bar is silently absent.
"""

from __future__ import annotations

import sys
from collections.abc import Iterable
from typing import Any

__all__ = ["progress_bar", "StageBar", "stage_bar"]


def _tqdm() -> Any:
    """Return tqdm's class, or None when it is not installed."""
    try:
        from tqdm import tqdm
    except ImportError:
        return None
    return tqdm


def _shown(enabled: bool) -> bool:
    return enabled and sys.stderr.isatty() and _tqdm() is not None


def progress_bar(iterable: Iterable[Any], *, total: int, description: str,
                 enabled: bool = True) -> Iterable[Any]:
    """Wrap ``iterable`` in a bar on stderr when ``enabled`` and stderr is a terminal.

    Parameters
    ----------
    iterable : iterable
        What to iterate over.
    total : int
        Its length.
    description : str
        The bar's label.
    enabled : bool
        False under ``--json``.

    Returns
    -------
    iterable
        The bar, or ``iterable`` itself when no bar is shown.
    """
    if not _shown(enabled):
        return iterable
    return _tqdm()(iterable, total=total, desc=description, file=sys.stderr, leave=False)


class StageBar:
    """A one-line bar that names the current stage of a long job and its elapsed time."""

    def __init__(self, description: str) -> None:
        self.description = description
        self.bar = _tqdm()(total=None, desc=description, file=sys.stderr,
                           bar_format="{desc} [{elapsed}]")

    def __call__(self, message: str) -> None:
        """Show ``message`` as the current stage."""
        self.bar.set_description_str(f"{self.description}: {message}")
        self.bar.update(1)

    def close(self) -> None:
        """Remove the bar."""
        self.bar.close()


def stage_bar(description: str, *, enabled: bool = True) -> StageBar | None:
    """Return a :class:`StageBar` when ``enabled`` and stderr is a terminal, else None."""
    return StageBar(description) if _shown(enabled) else None
