"""Write outputs atomically.

A reader never sees a half-written file, and a failed write clobbers nothing. An output made of
several files is written all or nothing: :func:`write_all_atomic` for texts,
:func:`staged_folder` for files written by others (figures), both after :func:`check_targets`.
"""

from __future__ import annotations

import contextlib
import errno
import os
import shutil
import tempfile
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from .checks import InputError

__all__ = ["write_atomic", "write_new", "save_figure", "write_all_atomic", "staged_folder",
           "check_targets"]


def _naming(path: Path, exc: OSError) -> OSError:
    """Return ``exc`` as an error about ``path``, the file the caller named.

    The temporary file's name is an implementation detail: an error that names it (a folder
    without write permission, a full disk) is said of the output the user asked for.
    """
    if exc.errno is None:
        return exc
    return type(exc)(exc.errno, exc.strerror, str(path))


def _temporary_beside(path: Path, suffix: str) -> tuple[int, str]:
    """Create a hidden temporary file in ``path``'s folder: (descriptor, name).

    An ``OSError`` (a folder without write permission, a full disk) is raised as one about
    ``path`` (:func:`_naming`).
    """
    try:
        return tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}-", suffix=suffix)
    except OSError as exc:
        raise _naming(path, exc) from exc


@contextmanager
def _replacing(path: Path, suffix: str) -> Iterator[str]:
    """Yield a temporary file beside ``path`` that replaces it (mode 644) once the block ends.

    If the block raises, the temporary file is removed and ``path`` is left as it was. An
    ``OSError`` about the temporary file is raised as one about ``path`` (:func:`_naming`).
    """
    fd, tmp = _temporary_beside(path, suffix)
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


def write_new(path: str | Path, text: str) -> Path:
    """Write ``text`` to a new file ``path``, never replacing a file.

    The complete text is linked into place (``os.link`` fails where ``path`` exists): a file
    that appears at ``path`` while the text is written, even a moment before the last step, is
    kept and the write refused, and a reader never sees a partial file. Where the folder's file
    system has no hard links, ``path`` is first created empty and exclusively, then replaced by
    the complete text: a reader may see it empty meanwhile, and a failure removes it.

    Raises
    ------
    FileExistsError
        Where ``path`` exists (a dangling symbolic link included).
    """
    path = Path(path)
    fd, tmp = _temporary_beside(path, ".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
        os.chmod(tmp, 0o644)
        try:
            os.link(tmp, path)
        except FileExistsError:
            raise FileExistsError(errno.EEXIST, "exists", str(path)) from None
        except OSError as exc:
            if exc.errno not in _NO_LINKS:
                raise _naming(path, exc) from exc
            _claim_then_replace(tmp, path)
    finally:
        Path(tmp).unlink(missing_ok=True)
    return path


#: ``os.link``'s errors on a file system without hard links (FAT, some FUSE and SMB mounts).
_NO_LINKS = frozenset({errno.EPERM, errno.ENOTSUP, errno.EXDEV, errno.EMLINK, errno.ENOSYS,
                       errno.EINVAL})


def _claim_then_replace(tmp: str, path: Path) -> None:
    """Create ``path`` exclusively, then replace it by ``tmp``; remove the claim on failure."""
    claim = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
    try:
        ours = os.fstat(claim).st_ino
    finally:
        os.close(claim)
    try:
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            if os.lstat(path).st_ino == ours:  # still the empty claim, not another's file
                os.unlink(path)
        raise


def save_figure(fig: Any, path: str | Path, *, inputs: Iterable[str | Path] = ()) -> Path:
    """Save a matplotlib figure to ``path`` through a temporary file in the same folder.

    The format comes from the suffix (110 dpi, tight bounding box); an existing file is
    replaced only once the new figure is complete (mode 644).

    Parameters
    ----------
    fig : matplotlib.figure.Figure
        The figure (anything with ``savefig``; matplotlib is not imported here).
    path : str or Path
        The output file; its folder must exist; its suffix names a format the figure's canvas
        writes (``.png``, ``.pdf``, ``.svg``, ...).
    inputs : iterable of str or Path
        Files the figure was drawn from (the logs), which ``path`` must not be.

    Returns
    -------
    Path
        ``path`` as a :class:`~pathlib.Path`.

    Raises
    ------
    InputError
        When ``path`` has no suffix or one no format answers to, or is one of ``inputs``.
    """
    path = Path(path)
    formats = getattr(getattr(fig, "canvas", None), "get_supported_filetypes", dict)()
    if formats and path.suffix.lower().lstrip(".") not in formats:
        raise InputError(f"{path}: the figure's format comes from its suffix, one of "
                         f"{', '.join('.' + f for f in sorted(formats))}")
    if any(path.resolve() == Path(other).resolve() for other in inputs):
        raise InputError(f"{path}: is a log the figure was drawn from; refusing to overwrite it")
    with _replacing(path, path.suffix) as tmp:
        fig.savefig(tmp, dpi=110, bbox_inches="tight", format=path.suffix.lstrip(".") or None)
    return path


def _error(code: int, path: Path, strerror: str | None = None) -> OSError:
    """Return the ``OSError`` of ``code`` about ``path`` (its subclass, e.g. IsADirectoryError)."""
    return OSError(code, strerror or os.strerror(code), str(path))


def check_targets(paths: Iterable[str | Path]) -> None:
    """Refuse, before any is written, an output file that could not replace what is there.

    Each path must be a regular file or not exist yet; its nearest existing folder must be a
    folder this process may write in (the missing ones below it are created).

    Parameters
    ----------
    paths : iterable of str or Path
        The output files.

    Raises
    ------
    OSError
        Naming the first path that fails: ``IsADirectoryError`` for a folder where a file would
        go, ``NotADirectoryError`` for a file where a folder would go, ``PermissionError`` for
        a folder that cannot be written, and an ``OSError`` for a pipe, device or socket.
    """
    for path in map(Path, paths):
        if path.is_dir():
            raise _error(errno.EISDIR, path)
        if path.exists() and not path.is_file():
            raise _error(errno.EEXIST, path, "exists and is not a regular file (a pipe, a "
                         "device or a socket)")
        folder = path.parent
        while not folder.exists() and folder != folder.parent:
            folder = folder.parent
        if not folder.is_dir():
            raise _error(errno.ENOTDIR, folder)
        if not os.access(folder, os.W_OK | os.X_OK):
            raise _error(errno.EACCES, path)


def _make_folders(folder: Path, made: list[Path]) -> None:
    """Create ``folder`` and its missing parents, appending each one made to ``made``."""
    missing = []
    while not folder.exists():
        missing.append(folder)
        folder = folder.parent
    for one in reversed(missing):
        one.mkdir()
        made.append(one)


def write_all_atomic(texts: Mapping[Path, str]) -> list[Path]:
    """Write several files all or nothing, each through a temporary file in its folder.

    Every target is checked first (:func:`check_targets`), then every text is written to a
    temporary file, and only then are the temporary files renamed onto the targets: a failure
    before the renames leaves every target, and every folder, as it was.

    Parameters
    ----------
    texts : mapping of Path to str
        Output file -> its content (UTF-8); missing folders are created.

    Returns
    -------
    list of Path
        The paths written, in the order of ``texts``.
    """
    check_targets(texts)
    made: list[Path] = []
    staged: dict[Path, str] = {}
    path = None
    try:
        for path, text in texts.items():
            _make_folders(path.parent, made)
            fd, tmp = _temporary_beside(path, ".tmp")
            staged[path] = tmp
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                fh.write(text)
            os.chmod(tmp, 0o644)
        for path, tmp in staged.items():
            os.replace(tmp, path)
    except BaseException as exc:
        for tmp in staged.values():
            Path(tmp).unlink(missing_ok=True)
        for folder in reversed(made):
            shutil.rmtree(folder, ignore_errors=True)
        if isinstance(exc, OSError) and exc.filename is None and path is not None:
            # a full disk says nothing of the file it stopped: name it
            raise type(exc)(exc.errno, exc.strerror, str(path)) from exc
        raise
    return list(texts)


@contextmanager
def staged_folder(out: Path) -> Iterator[Path]:
    """Yield a hidden folder inside ``out`` whose files replace ``out``'s once the block ends.

    The block writes its outputs into the yielded folder; when it ends, every file there is
    checked against its place in ``out`` (:func:`check_targets`) and only then moved there. If
    the block or the check fails, ``out`` keeps the files it had and the staging folder is
    removed.

    Parameters
    ----------
    out : Path
        The output folder (created if needed).

    Yields
    ------
    Path
        The staging folder, on the same file system as ``out``.
    """
    out.mkdir(parents=True, exist_ok=True)
    try:
        stage = Path(tempfile.mkdtemp(dir=out, prefix=".staging-"))
    except OSError as exc:
        raise _naming(out, exc) from exc
    try:
        yield stage
        moves = {path: out / path.relative_to(stage)
                 for path in sorted(stage.rglob("*")) if path.is_file()}
        check_targets(moves.values())
        for path, target in moves.items():
            target.parent.mkdir(parents=True, exist_ok=True)
            os.replace(path, target)
    finally:
        shutil.rmtree(stage, ignore_errors=True)
