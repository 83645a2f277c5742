"""Write outputs atomically.

A reader never sees a half-written file, and a failed write clobbers nothing.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

__all__ = ["write_atomic", "save_figure"]


def _naming(path: Path, exc: OSError) -> OSError:
    """Return ``exc`` as an error about ``path``, the file the caller named.

    The temporary file's name is an implementation detail: an error that names it (a folder
    without write permission, a full disk) is said of the output the user asked for.
    """
    if exc.errno is None:
        return exc
    return type(exc)(exc.errno, exc.strerror, str(path))


@contextmanager
def _replacing(path: Path, suffix: str) -> Iterator[str]:
    """Yield a temporary file beside ``path`` that replaces it (mode 644) once the block ends.

    If the block raises, the temporary file is removed and ``path`` is left as it was. An
    ``OSError`` about the temporary file is raised as one about ``path`` (:func:`_naming`).
    """
    try:
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}-", suffix=suffix)
    except OSError as exc:
        raise _naming(path, exc) from exc
    os.close(fd)
    try:
        yield tmp
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException as exc:
        Path(tmp).unlink(missing_ok=True)
        if isinstance(exc, OSError) and exc.filename == tmp:
            raise _naming(path, exc) from exc
        raise


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
    with _replacing(path, ".tmp") as tmp, open(tmp, "w", encoding="utf-8") as fh:
        fh.write(text)
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
    with _replacing(path, path.suffix) as tmp:
        fig.savefig(tmp, dpi=110, bbox_inches="tight", format=path.suffix.lstrip(".") or None)
    return path
