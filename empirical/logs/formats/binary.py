"""A ``.bin`` file: refused, since ``training_args.bin`` holds hyperparameters, not a log."""

from __future__ import annotations

from pathlib import Path

from grpodyn.empirical.logs.common import LogFormatError
from grpodyn.empirical.logs.formats.base import Options, Source, log_suffix

__all__ = ["parse", "sniff"]


def sniff(path: Path) -> bool:
    """Return whether ``path`` is a file ending in ``.bin``."""
    return path.is_file() and log_suffix(path) == ".bin"


def parse(path: Path, options: Options) -> Source:
    """Refuse the file, naming what to give instead.

    Raises
    ------
    LogFormatError
        Always.
    """
    raise LogFormatError(f"{path}: a binary file, not a log (a .bin file such as TRL's "
                         "training_args.bin holds pickled settings: give the log beside it)")
