"""Write outputs atomically.

A reader never sees a half-written file, and a failed write clobbers nothing.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Any

__all__ = ["write_atomic", "save_figure"]


def write_atomic(path: str | Path, text: str) -> Path:
    """Write ``text`` to ``path`` through a temporary file in the same folder (mode 644).

    Parameters
    ----------
    path : str or Path
        The output file; its folder must exist. An existing file is replaced only once the
        new text is complete.
    text : str
        The content, written as UTF-8.

    Returns
    -------
    Path
        ``path`` as a :class:`~pathlib.Path`.
    """
    path = Path(path)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}-", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path


def save_figure(fig: Any, path: str | Path) -> Path:
    """Save a matplotlib figure to ``path`` through a temporary file in the same folder.

    The format comes from the suffix (110 dpi, tight bounding box); an existing file is
    replaced only once the new figure is complete (mode 644).

    Parameters
    ----------
    fig : matplotlib.figure.Figure
        The figure (anything with ``savefig``; matplotlib is not imported here).
    path : str or Path
        The output file; its folder must exist.

    Returns
    -------
    Path
        ``path`` as a :class:`~pathlib.Path`.
    """
    path = Path(path)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}-", suffix=path.suffix)
    os.close(fd)
    try:
        fig.savefig(tmp, dpi=110, bbox_inches="tight", format=path.suffix.lstrip(".") or None)
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path
