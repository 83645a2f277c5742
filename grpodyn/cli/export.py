"""``grpodyn export``: the theory as code in another language."""

from __future__ import annotations

import argparse
from typing import Any

from grpodyn.cli.options import add_json, output_directory


def add_parser(commands: argparse._SubParsersAction) -> None:
    """Add the ``export`` command and its options to ``commands``."""
    p = commands.add_parser("export", help="export the theory as code in another language",
                            description="Write every derivation as functions in another "
                            "language (same names, same argument order).")
    p.add_argument("--lang", required=True,
                   choices=["c", "python", "latex", "javascript", "julia", "rust"],
                   help="the language to write")
    p.add_argument("--out", required=True, help="output directory (created if needed)")
    add_json(p)
    p.set_defaults(handler=run)


def run(args: argparse.Namespace) -> dict[str, Any]:
    """Write the derivations in ``--lang`` under ``--out``."""
    from grpodyn.numerics.export import export

    files = export(args.lang, output_directory(args.out))
    return {"lang": args.lang, "files": [str(f) for f in files]}
