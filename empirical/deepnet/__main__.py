"""Command line: ``python -m grpodyn.empirical.deepnet measure|predict|run|compare``."""

from __future__ import annotations

from .cli import main

main()
