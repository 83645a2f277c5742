"""``grpodyn export``: the theory as code in another language."""

from __future__ import annotations

import argparse
from typing import Any

from grpodyn.cli.options import UsageError, add_json, output_directory, output_path


def add_parser(commands: argparse._SubParsersAction) -> None:
    """Add the ``export`` command and its options to ``commands``."""
    p = commands.add_parser("export", help="export the theory as code in another language",
                            description="Write every derivation as functions in another "
                            "language (same names, same argument order), as LaTeX, or as "
                            "JSON data (arguments with units, formula, domain).")
    p.add_argument("--lang", required=True,
                   choices=["c", "python", "latex", "javascript", "julia", "rust", "json"],
                   help="the language to write")
    p.add_argument("--out", required=True, type=output_path,
                   help="output directory (created if needed); a file there that the export "
                   "would change is replaced only with --force")
    p.add_argument("--force", action="store_true",
                   help="replace files in --out that differ from the export (a README.md, a "
                   "pyproject.toml of your own)")
    add_json(p)
    p.set_defaults(handler=run)


def run(args: argparse.Namespace) -> dict[str, Any]:
    """Write the derivations in ``--lang`` under ``--out``, replacing no file without --force."""
    from grpodyn.numerics.export import render, replaced_files, write_files

    out = output_directory(args.out)
    files = render(args.lang)
    replaced = replaced_files(out, files)
    if replaced and not args.force:
        raise UsageError(f"--out {args.out}: the export would replace files there that hold "
                         f"other text: {', '.join(replaced)}; pass --force to replace them, or "
                         "choose another folder")
    return {"lang": args.lang, "files": [str(f) for f in write_files(files, out)]}
