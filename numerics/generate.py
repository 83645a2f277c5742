"""Regenerate ``numerics/_generated.py`` from the theory registry.

Run ``python -m grpodyn.numerics.generate`` after changing the theory.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from .codegen import render_module

TARGET = Path(__file__).resolve().parent / "_generated.py"


def write_generated(path: Path = TARGET) -> Path:
    """Write the generated module atomically and return its path."""
    source = render_module()
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".generated-", suffix=".tmp")
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        fh.write(source)
    os.replace(tmp, path)
    return path


if __name__ == "__main__":
    print(write_generated())
