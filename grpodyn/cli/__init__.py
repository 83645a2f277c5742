"""The ``grpodyn`` command line.

Every command takes ``--json`` and then prints exactly one JSON object on stdout. Bad input gives
a one-line message on stderr naming the input and the problem, and exit code 2.

Each command is one module of this package with ``add_parser(commands)`` (its parser and
options), ``run(args)`` (the command, returning the JSON object) and, where it has one,
``print_human(result)`` (its terminal output); the options the commands share are defined once in
``grpodyn.cli.options``. Adding a command is one module and one line of ``COMMANDS``. A command
imports what it computes with inside ``run``, so that parsing and ``--help`` stay fast.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Callable, Sequence
from types import ModuleType
from typing import Any

from grpodyn.cli import (
    advise,
    bandit,
    compare,
    diagnose,
    export,
    fit,
    forecast,
    predict,
    report,
    runs,
    sweep,
    transfer,
)
from grpodyn.cli.options import Parser, UsageError, join_range_values, print_plain

__all__ = ["main", "build_parser", "UsageError", "EXIT_BAD_INPUT"]

EXIT_BAD_INPUT = 2

#: The report's printer and its line width, under the names they have always had here.
_print_report, _LINE = report.print_human, report.LINE

#: The commands, in the order ``grpodyn -h`` lists them; a module's name is its command's.
COMMANDS: tuple[ModuleType, ...] = (predict, fit, forecast, runs, bandit, advise, diagnose,
                                    export, report, compare, sweep, transfer)

#: The human-readable printer of each command that has its own (the others print key: value).
_PRINTERS: dict[str, Callable[[dict[str, Any]], None]] = {
    command.__name__.rpartition(".")[2]: command.print_human
    for command in COMMANDS if hasattr(command, "print_human")}


def build_parser() -> argparse.ArgumentParser:
    """Build the argument parser of every command."""
    from grpodyn import __version__

    parser = Parser(prog="grpodyn", description="Predictable GRPO: forecasts, stability limits "
                     "and diagnoses from a mean-field theory of training dynamics.",
                     epilog="grpodyn alone prints this usage (exit 0); grpodyn COMMAND -h "
                     "explains a command.")
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}",
                        help="print the version and exit")
    commands = parser.add_subparsers(dest="command", required=True, parser_class=Parser)
    for command in COMMANDS:
        command.add_parser(commands)
    return parser


def _print_human(result: dict[str, Any], command: str) -> None:
    _PRINTERS.get(command, print_plain)(result)


def _check_log_exists(log: str | None) -> None:
    """Refuse a log path that does not exist before the command imports its numerics.

    The loaders say the same (:func:`grpodyn.empirical.logs.formats.base.dispatch`), after the
    command's imports (scipy, about a second); a mistyped path is told at once. A path behind
    a directory this user cannot read is said to be so, not to be missing.
    """
    if isinstance(log, str) and not os.path.lexists(log):
        try:
            os.lstat(log)
        except PermissionError:
            raise UsageError(f"{log}: cannot be reached: a directory on its path is one this "
                             "user cannot read (permission denied)") from None
        except OSError:
            raise UsageError(f"{log}: no such file or directory") from None


def _logs_of(args: argparse.Namespace) -> list[str]:
    """Return every log path a command was given (--log, the positional logs, --sweep, --from).

    In order, so that a missing one is told before any is read.
    """
    logs = [getattr(args, "log", None)]
    for name in ("logs", "sweep"):
        logs += getattr(args, name, None) or []
    logs += [source[0] for source in getattr(args, "sources", None) or []]
    return [log for log in logs if isinstance(log, str)]


def _os_error_text(exc: OSError, scheduler: str | None) -> str:
    """Return the one line of an ``OSError`` that ended a command.

    An error about a file names the file; an error without one, while the command runs on a
    Dask scheduler, is the scheduler's (a connection refused or timed out) and names it.

    Parameters
    ----------
    exc : OSError
        The error.
    scheduler : str or None
        The ``--scheduler`` address of the command, if it has one.

    Returns
    -------
    str
        The message, without the ``grpodyn: error:`` prefix.
    """
    if exc.filename:
        return f"{exc.filename}: {exc.strerror or exc}"
    return f"--scheduler {scheduler}: {exc}" if scheduler else str(exc)


def _parse(parser: argparse.ArgumentParser, argv: list[str]) -> argparse.Namespace:
    """Parse ``argv``; logs given after an option (``compare A --run X B``) join the others.

    argparse takes a list of positional logs once, so a log after an option would be refused
    as an unrecognised argument; for the commands that take several logs it is one more log.
    """
    args, extra = parser.parse_known_args(argv)
    logs = getattr(args, "logs", None)
    if extra and isinstance(logs, list) and not any(item.startswith("-") for item in extra):
        logs.extend(extra)
    elif extra:
        parser.error(f"unrecognized arguments: {' '.join(extra)}")
    return args


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit code."""
    from grpodyn.empirical.logs.loaders import LogFormatError
    from grpodyn.ground import InputError

    argv = join_range_values(sys.argv[1:] if argv is None else list(argv))
    parser = build_parser()
    if not argv:  # the usage, as a request for it (exit 0), not as an error
        parser.print_help()
        return 0
    args = None
    try:
        args = _parse(parser, argv)
        for log in _logs_of(args):
            _check_log_exists(log)
        handler: Callable[[argparse.Namespace], dict[str, Any]] = args.handler
        result = handler(args)
    except SystemExit as exc:  # --help and --version print and exit 0
        return int(exc.code or 0)
    except (UsageError, InputError, LogFormatError) as exc:
        print(f"grpodyn: error: {exc}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except OSError as exc:  # a file that cannot be written, a Dask scheduler out of reach, ...
        print(f"grpodyn: error: {_os_error_text(exc, getattr(args, 'scheduler', None))}",
              file=sys.stderr)
        return EXIT_BAD_INPUT
    if args.json:
        json.dump(result, sys.stdout, allow_nan=False)
        sys.stdout.write("\n")
    else:
        _print_human(result, args.command)
    return 0
