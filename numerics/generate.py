"""Regenerate ``numerics/_generated.py`` from the theory registry.

Run ``python -m grpodyn.numerics.generate`` after changing the theory.
"""

from __future__ import annotations

from pathlib import Path

from grpodyn.ground import write_atomic

from .codegen import render_module

TARGET = Path(__file__).resolve().parent / "_generated.py"


def write_generated(path: Path = TARGET) -> Path:
    """Write the generated module atomically and return its path."""
    return write_atomic(path, render_module())


if __name__ == "__main__":
    print(write_generated())
