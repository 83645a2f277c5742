"""``grpodyn report``: the reproduction of the theory's claims, or the report of one run."""

from __future__ import annotations

import argparse
import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

from grpodyn.cli.options import (
    UsageError,
    add_analysis_options,
    add_executor,
    add_json,
    add_log_options,
    executor_of,
    group_size,
    load_log,
    naming_the_run,
    output_directory,
    output_path,
    print_plain,
)
from grpodyn.ground import finite_json


def add_parser(commands: argparse._SubParsersAction) -> None:
    """Add the ``report`` command and its options to ``commands``."""
    p = commands.add_parser("report", help="[LOG] reproduce the theory's claims (figures and "
                            "HTML), or, given an optional LOG, report on that run",
                            usage="grpodyn report [LOG] [options]",
                            description="Without LOG: reproduce the claims of the theory on the "
                            "embedded default and write figures and an HTML report. With an "
                            "optional training LOG: the fit, forecast, regime, margins and "
                            "diagnosis of that run.")
    p.add_argument("log", nargs="?", metavar="LOG", help="optional training log: report on "
                   "that run instead of the embedded default")
    p.add_argument("--out", default="grpodyn-report", type=output_path,
                   help="output directory (default: grpodyn-report); its index.html, "
                   "summary.json and figures are replaced only where they are an earlier "
                   "grpodyn report's (its index.html carries grpodyn's marker, its summary.json "
                   "is a report's): a folder that "
                   "holds such a file of another origin is refused")
    add_analysis_options(p, momentum_help="momentum (Adam's beta1) of the logged run, for its "
                          "regime and margins (default: the log's, else not determined)")
    p.add_argument("--group-size", type=group_size, help="G of the logged run, for the diagnosis")
    add_log_options(p)
    p.add_argument("--quick", action="store_true",
                   help="fewer seeds and lags in the bandit lab: a smoke test, not the figures")
    add_executor(p)
    add_json(p)
    p.set_defaults(handler=run)


def run(args: argparse.Namespace) -> dict[str, Any]:
    """Write the report of ``args`` (with a progress bar of its stages)."""
    from grpodyn.progress import stage_bar

    refuse_other_mode(args)
    out = output_directory(args.out)
    created = _first_missing(out)

    stages = stage_bar("report", enabled=not args.json)
    try:
        return _report(args, out, stages)
    except BaseException:
        if created is not None:  # a refused or broken report leaves no folder it made
            shutil.rmtree(created, ignore_errors=True)
        raise
    finally:
        if stages is not None:
            stages.close()


def _first_missing(out: Path) -> Path | None:
    """Return the outermost folder of ``out`` that does not exist yet (None: ``out`` exists).

    The report creates it and the folders below it; a report that fails removes it again, so
    that a refused run leaves no empty folder behind.
    """
    missing = None
    for folder in (out.absolute(), *out.absolute().parents):
        if folder.exists():
            return missing
        missing = folder
    return missing


def _report(args: argparse.Namespace, out: Any, progress: Callable[[str], None] | None
            ) -> dict[str, Any]:
    """Write the report of a LOG, or the reproduction (see ``run``)."""
    from grpodyn.ground.files import check_targets
    from grpodyn.report import write_report

    if args.log is not None:
        from grpodyn.run_report import write_run_report

        written = [out / name for name in RUN_REPORT_FILES]
        if Path(args.log).resolve() in {path.resolve() for path in written}:
            raise UsageError(f"--out {args.out}: the report would write over the log "
                             f"{args.log}; refusing to overwrite it")
        refuse_foreign_files(args.out, out, RUN_REPORT_FILES)
        check_targets(written)  # a folder named summary.json: refused before any file is written

        run = load_log(args)
        with naming_the_run(run, failed="the report could not be completed, so none of its "
                            "files is written"):
            summary = write_run_report(run, out, momentum=args.momentum,
                                       group_size=args.group_size,
                                       reward_range=args.reward_range, progress=progress)
        if args.json:
            return finite_json(summary)
        diagnosis = summary["diagnosis"]
        dynamics = summary["dynamics"]
        # which run of a log that holds several, as fit, diagnose and advise say it
        which = {} if not run.run_name else {"log": f"{run.source} [{run.run_name}]"}
        picked = [w for w in run.warnings[:1] if " runs in this log (" in w]
        if which and picked:
            which["note"] = picked[0]
        return {**which, "html": summary["html"],
                "plateau": dynamics["plateau"] if dynamics["plateau"] is not None
                else f"{dynamics['plateau_status']}: {summary['plateau']['reason']}",
                **{name: _with_reason(dynamics, name)
                   for name in ("tau", "regime", "stability_margin")},
                **_diagnosis_lines(diagnosis, summary["diagnosis_reason"])}
    refuse_foreign_files(args.out, out, ("index.html", "summary.json",
                                         *(path.name for path in out.glob("*.png"))))
    check_targets([out / "index.html", out / "summary.json"])  # before minutes of simulations
    summary = write_report(out, progress=progress, quick=args.quick,
                           executor=executor_of(args), bars=not args.json)
    if args.json:
        return finite_json(summary)
    return {**({"quick": "a smoke test (shorter simulations), not the figures"}
               if args.quick else {}),
            "html": summary["html"], "derivations": summary["derivations"],
            "checks": f"{summary['checks_agree']} of {summary['checks_total']} agree",
            "claims": f"{summary['claims_agree']} of {summary['claims_total']} hold",
            "sources": summary["sources"], "groups": summary["groups"],
            "disagreements": summary["disagreements"]}


#: The options of each mode of the report, as ``(option, attribute)``: the report of one LOG,
#: and the reproduction of the theory's claims (no LOG).
LOG_OPTIONS = tuple((option, option[2:].replace("-", "_")) for option in (
    "--run", "--reward-key", "--step-key", "--logging-steps", "--reward-range", "--momentum",
    "--group-size", "--lr", "--batch"))
REPRODUCTION_OPTIONS = (("--quick", "quick"), ("--scheduler", "scheduler"),
                        ("--serial", "serial"))


def refuse_other_mode(args: argparse.Namespace) -> None:
    """Refuse the options of the mode ``args`` is not in, which the report would ignore.

    The report of one LOG takes the log options, the analysis options and G; the reproduction
    (no LOG) takes --quick and the executor. An option of the other mode would change nothing,
    and the user would read a report made without it.
    """
    if args.log is None:
        given = [option for option, name in LOG_OPTIONS if getattr(args, name) is not None]
        if given:
            raise UsageError(f"{', '.join(given)}: option{'s' * (len(given) > 1)} of the report "
                             "of one LOG (grpodyn report LOG ...); without LOG the report "
                             "reproduces the theory's claims and takes none of them")
        return
    given = [option for option, name in REPRODUCTION_OPTIONS if getattr(args, name) not in
             (None, False)]
    if given:
        raise UsageError(f"{', '.join(given)}: option{'s' * (len(given) > 1)} of the "
                         "reproduction of the theory's claims (grpodyn report without LOG); the "
                         f"report of the LOG {args.log} runs no simulations and takes none of them")


def refuse_foreign_files(value: str, out: Path, names: tuple[str, ...]) -> None:
    """Refuse an output folder where the report would replace files grpodyn did not write.

    A folder whose ``index.html`` carries :data:`grpodyn.report.REPORT_MARKER` is an earlier
    report: running the report again replaces its files. In any other folder, ``names`` (the
    files the report writes) must not exist yet; ``value`` is ``--out`` as the user gave it.
    """
    from grpodyn.report import REPORT_MARKER

    index = out / "index.html"
    try:
        ours = index.is_file() and REPORT_MARKER in index.read_text(encoding="utf-8",
                                                                     errors="replace")
    except OSError:
        ours = False
    taken = [name for name in names if (out / name).exists()]
    if taken and not ours:
        raise UsageError(f"--out {value}: already holds {', '.join(sorted(taken))}, not "
                         "a grpodyn report's (no index.html with grpodyn's marker there); "
                         "refusing to replace a file grpodyn did not write: choose a new or "
                         "empty folder")
    summary = out / "summary.json"
    if summary.name in taken and summary.is_file() and not _report_summary(summary):
        raise UsageError(f"--out {value}: {summary} is not a grpodyn report's summary "
                         "(no \"html\" entry naming an index.html); refusing to replace a file "
                         "grpodyn did not write: move it, or choose a new or empty folder")


def _report_summary(path: Path) -> bool:
    """Whether ``path`` reads as a summary.json of grpodyn report (its "html" entry)."""
    try:
        summary = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    return isinstance(summary, dict) and str(summary.get("html", "")).endswith("index.html")


def _diagnosis_lines(diagnosis: dict[str, Any] | None, reason: str | None) -> dict[str, str]:
    """Return the run report's diagnosis lines: headline, state, early warning, as diagnose.

    With no diagnosis, the one line says why none is made.
    """
    if diagnosis is None:
        return {"diagnosis": f"not made: {reason}"}
    lines = {"diagnosis": diagnosis["headline"],
             "state": f"{diagnosis['state']}: {diagnosis['state_evidence']}"}
    warning = diagnosis.get("early_warning")
    if warning:
        lines["early_warning"] = (f"at step {warning['step']:g} (a warning, not a verdict): "
                                  f"{', '.join(warning['signals'])}")
    return lines


def _with_reason(dynamics: dict[str, Any], name: str) -> Any:
    """Return a dynamics entry of the run report: its value, or its status and its reason."""
    if dynamics.get(name) is not None:
        return dynamics[name]
    entry = (dynamics.get("details") or {}).get(name) or {}
    status = entry.get("status") or dynamics.get(f"{name}_status") or "not_determined"
    return f"{status}: {entry['reason']}" if entry.get("reason") else status


def print_human(result: dict[str, Any]) -> None:
    """Print the ledger on one screen, every line at most ``LINE`` characters.

    A headline per group (wrapped), a line per disagreement, the page that says why.
    """
    if "disagreements" not in result:  # the report of one LOG
        print_plain(result)
        return
    import textwrap

    print(f"grpodyn report: {result['derivations']} derivations; claims: {result['claims']} "
          f"(checks: {result['checks']})")
    if "quick" in result:
        print(f"  --quick: {result['quick']}")
    for group in result["groups"].values():  # wrapped, never inside "d = 2" or "6 of 7"
        headline = group["headline"].replace(" = ", "\xa0=\xa0").replace(" of ", "\xa0of\xa0")
        print(textwrap.fill(headline, LINE, initial_indent="  ",
                            subsequent_indent="      ").replace("\xa0", " "))
    print(f"what disagrees ({len(result['disagreements'])}), one line each:")
    for d in result["disagreements"]:
        stated = f"stated {d['stated']}; computed " if len(d["stated"]) <= STATED else ""
        line = f"  - {d['claim']}: {stated}{d['computed']}"
        print(line if len(line) <= LINE else line[:LINE - 3] + "...")
    print(f"why, with every check and the study's rows: {result['html']}")


#: The files the report of one LOG writes into --out (grpodyn.run_report).
RUN_REPORT_FILES = ("index.html", "summary.json", "reward_forecast.png")

#: The width of one printed line of the report's disagreements, and the longest stated value
#: printed in it (a longer one, a sentence, is on the page).
LINE, STATED = 100, 24
