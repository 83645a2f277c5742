"""The options every command shares, defined once.

The error of bad command-line input, the parser that raises it, the argument types
(finite numbers, integers, a reward range LO,HI that may start with a minus sign), the option
groups (``--json``, the lag, the log options with their hyperparameter overrides, the
analysis options, the executor), the loading of the run the log options name, and the plain
``key: value`` printer.
"""

from __future__ import annotations

import argparse
import math
import sys
import unicodedata
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

from grpodyn.ground.checks import BATCH_MAX, LR_MAX, MOMENTUM_MAX, REWARD_MAGNITUDE_MAX
from grpodyn.ground.checks import MAX_STEPS as MAX_STEPS  # the commands' cap, shared

if TYPE_CHECKING:
    from grpodyn.empirical.logs.loaders import Run


class UsageError(Exception):
    """Bad command-line input (exit code 2)."""


def refuse_repeats(paths: list[str], why: str) -> None:
    """Refuse a log given twice, by its own path or another one to the same file.

    ``why`` ends the message: what the repeated runs would do to the command's result.

    Raises
    ------
    UsageError
        At the first path that resolves to a file given before, naming both spellings.
    """
    seen: dict[Path, str] = {}
    for path in map(str, paths):
        where = Path(path).resolve()
        if where in seen:
            same = "" if seen[where] == path else f" (the same file as {seen[where]})"
            raise UsageError(f"{path}: given twice{same}; {why}")
        seen[where] = path


class Parser(argparse.ArgumentParser):
    """An argument parser whose errors are ``UsageError`` (exit code 2), not an exit."""

    def error(self, message: str) -> NoReturn:
        """Raise the parse error ``message`` as a ``UsageError``."""
        raise UsageError(message)


def finite_float(text: str) -> float:
    """Read a finite number (argument type).

    A number below the least normal double in magnitude (``1e-400``, ``1e-320``) is refused
    rather than read as 0 or with its digits lost.
    """
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if not math.isfinite(value):
        raise argparse.ArgumentTypeError(f"not a finite number: {text!r}")
    if value != 0 and abs(value) < sys.float_info.min or value == 0 and _names_nonzero(text):
        raise argparse.ArgumentTypeError(f"{text!r} is below {sys.float_info.min:.3g} in "
                                         "magnitude, where a double loses its digits")
    return value


def _names_nonzero(text: str) -> bool:
    """Whether the number ``text`` has a nonzero digit in its mantissa (``1e-400`` has)."""
    mantissa = text.strip().lower().split("e")[0]
    return any(unicodedata.digit(c, 0) for c in mantissa)  # any script's digits, as float()


def integer(text: str) -> int:
    """Read an integer (argument type)."""
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not an integer: {text!r}") from None


def reward_range(text: str) -> tuple[float, float]:
    """Read a reward range ``LO,HI`` with ``LO < HI`` (argument type).

    Its edges are bounded as the reward is (:data:`REWARD_MAGNITUDE_MAX`): the analyses square
    the range's width, which loses all precision or overflows for a range far wider than any
    reward.
    """
    parts = text.split(",")
    if len(parts) != 2:
        raise argparse.ArgumentTypeError(f"expected LO,HI, got {text!r}")
    lo, hi = (finite_float(part.strip()) for part in parts)
    if not lo < hi:
        raise argparse.ArgumentTypeError(f"need LO < HI, got {text!r}")
    if max(abs(lo), abs(hi)) > REWARD_MAGNITUDE_MAX:  # the analyses square the range's width
        raise argparse.ArgumentTypeError(
            f"{text!r} reaches beyond {REWARD_MAGNITUDE_MAX:g}, where the fits lose their "
            "precision (the width HI - LO may even overflow); give the range the reward can "
            "reach, or no range")
    return lo, hi



#: Options whose value is a range LO,HI that may start with a minus sign.
RANGE_OPTIONS = ("--reward-range",)


def _negative_number(token: str) -> bool:
    """Return True for a negative number argparse would take for an option (-1e3, -inf, -.5e2).

    argparse itself takes only plain ones (``-3``, ``-0.5``) as values.
    """
    if not token.startswith("-") or token.startswith("--"):
        return False
    try:
        float(token)
    except ValueError:
        return False
    return True


def join_range_values(argv: list[str]) -> list[str]:
    """Join ``--reward-range -20,20`` into ``--reward-range=-20,20``, and ``--x -1e3`` likewise.

    argparse reads a value that starts with ``-`` and is not a plain negative number as an
    option; a range's value, or a negative number in another spelling (exponent, ``-inf``), is
    joined to its option so that both spellings parse (a non-finite value is then refused by
    the option's own check, naming it).
    """
    out: list[str] = []
    i = 0
    while i < len(argv):
        value = argv[i + 1] if i + 1 < len(argv) else ""
        if argv[i].startswith("--") and "=" not in argv[i] and _negative_number(value):
            out.append(f"{argv[i]}={value}")
            i += 2
            continue
        if argv[i] in RANGE_OPTIONS and i + 1 < len(argv) and argv[i + 1].startswith("-") \
                and "," in argv[i + 1]:
            out.append(f"{argv[i]}={argv[i + 1]}")
            i += 2
            continue
        out.append(argv[i])
        i += 1
    return out


def add_reward_range(parser: argparse.ArgumentParser, *, where: str = "",
                     unknown: str = "") -> None:
    """Add ``--reward-range LO,HI``: the range the reward can reach.

    ``where`` (in which logs) and ``unknown`` (what an unknown range leaves) extend the help.
    """
    parser.add_argument("--reward-range", type=reward_range, metavar="LO,HI",
                        help=f"the range the reward can reach{where} (default: [0, 1] for an "
                             f"accuracy, pass rate or binary reward; else unknown{unknown})")


def add_analysis_options(parser: argparse.ArgumentParser, *, momentum_help: str) -> None:
    """--reward-range and --momentum: what a run's analysis may be told."""
    add_reward_range(parser)
    parser.add_argument("--momentum", type=momentum_beta, help=momentum_help)


def add_json(parser: argparse.ArgumentParser) -> None:
    """Add ``--json``: one JSON object on stdout and nothing else."""
    parser.add_argument("--json", action="store_true",
                        help="print one JSON object on stdout and nothing else (bad input: "
                             "nothing on stdout, one line on stderr, exit code 2)")


def add_lag(parser: argparse.ArgumentParser) -> None:
    """Add the lag: ``--refresh`` or ``--staleness``, at most one."""
    lag = parser.add_mutually_exclusive_group()
    lag.add_argument("--refresh", type=positive_integer,
                     help="refresh interval K >= 1 (sample-and-hold; default 1: on-policy)")
    lag.add_argument("--staleness", type=non_negative_integer,
                     help="fixed staleness d >= 0 in steps (default 0)")


def positive_float(text: str) -> float:
    """Read a finite number above zero (argument type)."""
    value = finite_float(text)
    if value <= 0:
        raise argparse.ArgumentTypeError(f"not a positive number: {text!r}")
    return value


def learning_rate(text: str) -> float:
    """Read a learning rate: above zero and at most ``LR_MAX`` (argument type)."""
    value = positive_float(text)
    if value > LR_MAX:
        raise argparse.ArgumentTypeError(f"a learning rate is at most {LR_MAX:g}, got {text!r}")
    return value


def positive_integer(text: str) -> int:
    """Read an integer of at least 1 (argument type)."""
    value = integer(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"not a positive integer: {text!r}")
    return value


def _integer_within(text: str, lowest: int, highest: int, what: str) -> int:
    """Read an integer in [``lowest``, ``highest``], refused as ``what`` (argument types)."""
    value = integer(text)
    if not lowest <= value <= highest:
        raise argparse.ArgumentTypeError(f"{what} must be an integer in [{lowest}, {highest}], "
                                         f"got {text!r}")
    return value


def group_size(text: str) -> int:
    """Read a group size G, an integer in [2, GROUP_SIZE_MAX] (argument type).

    One completion per prompt leaves no group to take an advantage against.
    """
    from grpodyn.ground.checks import GROUP_SIZE_MAX

    return _integer_within(text, 2, GROUP_SIZE_MAX, "group_size G")


def batch_size(text: str) -> int:
    """Read a batch B, prompts per optimizer step: an integer in [1, BATCH_MAX] (argument type)."""
    return _integer_within(text, 1, BATCH_MAX, "batch B")


def non_negative_integer(text: str) -> int:
    """Read an integer of at least 0 (argument type)."""
    value = integer(text)
    if value < 0:
        raise argparse.ArgumentTypeError(f"not an integer >= 0: {text!r}")
    return value


def open_fraction(text: str) -> float:
    """Read a number strictly between 0 and 1 (argument type: a train fraction, a band level)."""
    value = finite_float(text)
    if not 0 < value < 1:
        raise argparse.ArgumentTypeError(f"not strictly between 0 and 1: {text!r}")
    return value


def fraction(text: str) -> float:
    """Read a number in (0, 1] (argument type: the leading fraction of a log to use)."""
    value = finite_float(text)
    if not 0 < value <= 1:
        raise argparse.ArgumentTypeError(f"not in (0, 1]: {text!r}")
    return value


def momentum_beta(text: str) -> float:
    """Read a momentum beta in [0, MOMENTUM_MAX] (argument type; Adam's beta1 for Adam).

    Beyond :data:`~grpodyn.ground.checks.MOMENTUM_MAX` the stability formulas cannot resolve
    1 - beta; every analysis refuses it, so the option does at once.
    """
    value = finite_float(text)
    if not 0 <= value <= MOMENTUM_MAX:
        raise argparse.ArgumentTypeError(f"not in [0, {MOMENTUM_MAX}]: {text!r} (beyond it the "
                                         "stability formulas cannot resolve 1 - beta)")
    return value


#: Hyperparameter overrides of the log options: option -> (RunMeta field, type, help).
LOG_OVERRIDES = {
    "--lr": ("lr", learning_rate, "peak learning rate of the logged run (overrides the log)"),
    "--group-size": ("group_size", group_size,
                     "G, completions per prompt (overrides the log)"),
    "--batch": ("batch", batch_size, "B, prompts per optimizer step (overrides the log)"),
    "--momentum": ("momentum", momentum_beta,
                   "momentum, Adam's beta1 for Adam (overrides the log)"),
}


def add_reading_options(parser: argparse.ArgumentParser, *, every: str = "") -> None:
    """Add the loader's ``--reward-key`` and ``--logging-steps``.

    ``every``: words that say they hold for every log of the command (a sweep, a transfer).
    """
    parser.add_argument("--reward-key", help=f"the metric to read as the reward{every} "
                        "(default: the trainer's reward)")
    parser.add_argument("--logging-steps", type=positive_integer,
                        help=f"optimizer steps between logged points, for console logs that "
                        f"print no step and no progress counter{every}")


def add_sweep_log_options(parser: argparse.ArgumentParser) -> None:
    """Add the loader's options that apply to every log of a sweep or a transfer."""
    add_reading_options(parser, every=", in every log")
    parser.add_argument("--step-key", help="the field that holds the optimizer step, in every "
                        "log")


def add_log_options(parser: argparse.ArgumentParser) -> None:
    """Add the options of every command that reads a log.

    Which run, which reward and step keys, the logging interval, and hyperparameter overrides
    (those the command lacks).
    """
    present = set(parser._option_string_actions)
    parser.add_argument("--run", help="which run of a log that holds several "
                        "(grpodyn runs LOG lists them)")
    add_reading_options(parser)
    parser.add_argument("--step-key", help="the field that holds the optimizer step")
    parser.add_argument("--heldout-key", help="the metric to read as the held-out reward "
                        "(validation or verifier score; default: the trainer's eval reward)")
    for option, (_, kind, text) in LOG_OVERRIDES.items():
        if option not in present:
            parser.add_argument(option, type=kind, help=text)



def load_log(args: argparse.Namespace) -> Run:
    """Load the run named by the log options of ``args`` (see ``add_log_options``).

    The hyperparameter overrides are applied (source ``user``).
    """
    from grpodyn.empirical.logs.loaders import load_run

    run = load_run(args.log, run=args.run,
                   reward_key=args.reward_key, step_key=args.step_key,
                   logging_steps=args.logging_steps, heldout_key=args.heldout_key)
    check_step_key(run, args.step_key)
    return with_overrides(run, args)


def check_step_key(run: Run, step_key: str | None) -> None:
    """Refuse a ``--step-key`` that names the column read as the reward.

    The loader would put the reward on its own axis: every curve would be the reward against
    itself, fitted without a word of warning.

    Parameters
    ----------
    run : Run
        The loaded run; ``run.reward_key`` names the reward's column (columns joined by ``+``
        where the reward is their sum).
    step_key : str or None
        The ``--step-key`` the user gave.

    Raises
    ------
    UsageError
        When ``step_key`` is the reward's column, or one of the columns it sums.
    """
    if step_key is not None and step_key in {run.reward_key, *run.reward_key.split("+")}:
        raise UsageError(f"{run.source}: --step-key {step_key} is the column read as the reward "
                         f"({run.reward_key}); give the field that holds the optimizer step, or "
                         "another --reward-key")


@contextmanager
def naming_the_run(run: Run, *, failed: str | None = None) -> Iterator[None]:
    """Name the run, beside its log, in an input error about a run of a log of several.

    The analysis's errors begin "LOG: "; for ``--run NAME`` (or the run read by default) they
    begin "LOG [NAME]: ", as the command's own header does. An error about too few points
    also says where the loader merged records that shared a step
    (:func:`grpodyn.analysis.saying_merged_steps`). With ``failed``, an error that does not
    name the log (the numerics see arrays: the linear programme of the stacking weights
    failing) is said of it, after ``failed``, what the failure means for the command's result.
    """
    from grpodyn.analysis import saying_merged_steps
    from grpodyn.ground import InputError

    head = f"{run.source}: "
    try:
        with saying_merged_steps(run):
            yield
    except InputError as exc:
        text = str(exc)
        if failed is not None and not text.startswith(head):
            text = f"{head}{failed}: {text}"
        elif not run.run_name or not text.startswith(head):
            raise
        which = f" [{run.run_name}]" if run.run_name else ""
        raise InputError(f"{run.source}{which}: {text[len(head):]}") from None


def log_overrides(args: argparse.Namespace) -> dict[str, Any]:
    """Return the hyperparameters the log options of ``args`` give (None where not given)."""
    return {field: getattr(args, option[2:].replace("-", "_"), None)
            for option, (field, _, _) in LOG_OVERRIDES.items()}


def with_overrides(run: Run, args: argparse.Namespace) -> Run:
    """Apply the hyperparameter overrides of the log options of ``args`` to ``run``.

    A value the log gives that an option replaces is said in the run's warnings. Every log
    command passes its runs through here, so the reward's range is checked here too
    (:func:`~grpodyn.empirical.logs.run_settings.check_magnitudes`), and the loader's
    note on G and B is brought in line with a G or B the user gave
    (:func:`~grpodyn.empirical.logs.infer.group_batch_notes`).
    """
    from grpodyn.empirical.logs.infer import group_batch_notes
    from grpodyn.empirical.logs.run_settings import check_magnitudes

    check_magnitudes(run)
    given = log_overrides(args)
    replaced = [f"{field} {entry.value:g} ({entry.source}) replaced by {option} {given[field]:g}"
                for option, (field, _, _) in LOG_OVERRIDES.items()
                if given[field] is not None and (entry := getattr(run.meta, field)) is not None
                and entry.source != "user" and isinstance(entry.value, (int, float))
                and entry.value != given[field]]
    run.meta = run.meta.with_overrides(**given)
    run.warnings = group_batch_notes(run) + [f"the log's {words}" for words in replaced]
    return run


def add_run_command_options(parser: argparse.ArgumentParser, *, momentum_help: str,
                            handler: Callable[[argparse.Namespace], dict[str, Any]]) -> None:
    """Close the parser of a command that analyses logged runs.

    Adds the analysis options (``momentum_help`` describes ``--momentum``), the log options
    and ``--json``, in that order, and sets the command's ``handler``.
    """
    add_analysis_options(parser, momentum_help=momentum_help)
    add_log_options(parser)
    add_json(parser)
    parser.set_defaults(handler=handler)


def output_path(text: str) -> str:
    """Read the path ``--out`` names, refusing an empty one (argument type).

    An empty path is the current folder to :class:`~pathlib.Path`: a slip of the shell (an
    unset variable) would write the outputs among the user's own files.
    """
    if not text:
        raise argparse.ArgumentTypeError("an empty path; name the output")
    return text


def output_directory(value: str) -> Path:
    """Return the output directory that ``--out`` names (created later if needed).

    Raises ``UsageError`` when ``value`` is empty (see :func:`output_path`) or exists and is
    not a directory.
    """
    if not value:
        raise UsageError("--out: an empty path; name the output directory")
    out = Path(value)
    if out.exists() and not out.is_dir():
        raise UsageError(f"--out {value}: exists and is not a directory")
    return out


def add_executor(parser: argparse.ArgumentParser) -> None:
    """Add where the simulations run: ``--scheduler`` (Dask) or ``--serial``."""
    parser.add_argument("--scheduler", metavar="ADDRESS",
                        help="run the simulations on this Dask scheduler (tcp://host:8786; "
                             "needs the dask extra); default: a local process pool, all cores")
    parser.add_argument("--serial", action="store_true",
                        help="run the simulations in this process, one after another")


def executor_of(args: argparse.Namespace) -> str:
    """Return the executor of the commands that run many simulations (results independent)."""
    if args.scheduler is not None and args.serial:
        raise UsageError("give at most one of --scheduler and --serial")
    if args.scheduler is not None:
        if ":" not in args.scheduler:
            raise UsageError(f"--scheduler {args.scheduler}: not a scheduler address "
                             "(tcp://host:port)")
        try:
            import distributed  # noqa: F401
        except ImportError:
            raise UsageError("--scheduler needs Dask: pip install 'grpodyn[dask]'") from None
        return args.scheduler
    return "serial" if args.serial else "auto"


#: The analysis's notes on one curve model each, merged on the terminal into one line apiece.
_MODEL_NOTES = (("at the fit's bound (a result of the box, not of the data)",
                 r"^(\w+): (.+) at the fit's bound \(a result of the box, not of the data\)$"),
                ("singular information matrix, no standard errors",
                 r"^(\w+): singular information matrix; no standard errors()$"))


def merged_notes(warnings: list[str]) -> list[str]:
    """Return ``warnings`` with the per-model notes of each kind merged into one line.

    "power: exponent at the fit's bound (...)" and "inertial: zeta at the fit's bound (...)"
    become "at the fit's bound (...): power exponent; inertial zeta", in the first one's place.
    """
    import re

    out: list[str | int] = []
    merged: dict[int, list[str]] = {}
    for warning in warnings:
        for kind, (_, pattern) in enumerate(_MODEL_NOTES):
            found = re.match(pattern, warning)
            if found:
                if kind not in merged:
                    merged[kind] = []
                    out.append(kind)
                merged[kind].append(" ".join(filter(None, found.groups())))
                break
        else:
            out.append(warning)
    return [f"{_MODEL_NOTES[item][0]}: {'; '.join(merged[item])}" if isinstance(item, int)
            else item for item in out]


#: The width a printer wraps a long sentence to (a terminal's width with room to spare)
WIDTH = 100


def print_wrapped(text: str, *, first: str, rest: str) -> None:
    """Print ``text`` wrapped at :data:`WIDTH` columns after ``first``, continued after ``rest``.

    Words are never split (a long path stays whole on its line), nor words joined by a
    no-break space (printed as a space).
    """
    import textwrap

    print(textwrap.fill(text, WIDTH, initial_indent=first, subsequent_indent=rest,
                        break_long_words=False, break_on_hyphens=False).replace("\xa0", " "))


def print_plain(result: dict[str, Any]) -> None:
    """Print a result as ``key: value`` lines (a command without a printer of its own).

    A value of None (a quantity that does not exist here, e.g. the relaxation time of an
    unstable map) prints as ``none``.
    """
    for key, value in result.items():
        if isinstance(value, list) and value and all(isinstance(v, str) for v in value):
            print(f"{key}:")
            for line in value:
                print(f"  - {line}")
        elif isinstance(value, list) and len(value) > 8:
            shown = ", ".join(f"{v:.4g}" if isinstance(v, float) else str(v) for v in value[:4])
            print(f"{key}: [{shown}, ... {len(value)} values]")
        elif isinstance(value, float):
            print(f"{key}: {value:.6g}")
        elif value is None:
            print(f"{key}: none")
        elif isinstance(value, dict) and value:
            print(f"{key}: " + ", ".join(f"{k} {v:.6g}" if isinstance(v, float) else f"{k} {v}"
                                         for k, v in value.items()))
        else:
            print(f"{key}: {value}")
