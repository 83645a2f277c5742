"""Command line: ``python -m deepnet_study STEP`` (from ``studies/deepnet``)."""

from __future__ import annotations

from .cli import main

main()
