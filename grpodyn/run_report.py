"""``grpodyn report LOG``: the analysis of one run (:func:`analyse_run`) as HTML, JSON, figures.

Writes ``index.html``, ``summary.json`` and ``reward_forecast.png`` (the reward with the trusted
fit, the forecast band after the training cut, the diagnosis windows shaded, and KL / entropy /
length panels when logged) to the output directory (atomically, never over the log itself). The
page carries :data:`grpodyn.report.REPORT_MARKER`, by which ``grpodyn report --out`` knows a
folder of an earlier report from a folder of files grpodyn did not write.
"""

from __future__ import annotations

import html
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from grpodyn.empirical.logs.loaders import Run, load_run
from grpodyn.ground import dumps_json, finite_json, write_atomic
from grpodyn.report import REPORT_MARKER

if TYPE_CHECKING:
    from grpodyn.empirical.logs.run_analysis import RunAnalysis

__all__ = ["write_run_report", "run_summary"]

#: The fewest points of a log whose report forecasts its last 30% from its first 70%.
_FORECAST_POINTS = 30


def _mark(verdict: dict[str, Any]) -> str:
    """Return a mode's mark in the report's table, as the terminal marks it (! ? or none)."""
    if verdict["flag"]:
        return "FLAGGED"
    if not verdict["judged"]:
        return "not judged"
    return "undecided" if verdict.get("undecided") else "-"


def run_summary(analysis: RunAnalysis) -> dict[str, Any]:
    """Return the JSON summary of an analysed run.

    ``analysis.to_dict()`` plus, for scripts written against earlier versions, ``fit`` and a
    flat ``dynamics`` (a number, or None with its ``*_status``, for plateau, tau, regime and
    margins).
    """
    full = analysis.to_dict()
    details = full["dynamics"]

    def value(key: str) -> Any:
        entry = details.get(key) or {}
        return entry.get("value") if entry.get("status") == "determined" else None

    tau = details.get("tau") or {}
    plateau = full["plateau"]
    full["fit"] = {k: full[k] for k in ("models", "best", "noise", "warnings", "forecast")}
    full["dynamics"] = {
        "momentum": analysis.momentum, "momentum_source": analysis.momentum_source,
        "plateau": plateau["value"] if plateau["status"] == "determined" else None,
        "plateau_status": plateau["status"], "plateau_lower": plateau.get("lower"),
        "plateau_upper": plateau.get("upper"),
        "tau": value("tau"), "tau_status": tau.get("status"), "tau_stderr": tau.get("stderr"),
        "steps_to_plateau": tau.get("steps_to_plateau"),
        "stiffness": value("stiffness"), "regime": value("regime"),
        "stability_margin": value("stability_margin"), "refresh_max": value("refresh_max"),
        "staleness_max": value("staleness_max"), "details": details}
    return finite_json(full)


def write_run_report(log: str | Path | Run, out: Path, *, momentum: float | None = None,
                     group_size: int | None = None,
                     reward_range: tuple[float, float] | None = None,
                     progress: Callable[[str], None] | None = None) -> dict[str, Any]:
    """Report on one training run in ``out``; returns the summary (also summary.json).

    ``log`` is a log's path (loaded with the defaults of ``load_run``) or a loaded ``Run``
    (the CLI loads it with the user's ``--run``, ``--reward-key``, ... options).
    """
    from grpodyn.empirical.logs.fit_text import untrusted_note
    from grpodyn.empirical.logs.run_analysis import analyse_run
    from grpodyn.empirical.logs.run_figure import analysis_figure

    say = progress or (lambda message: None)
    if isinstance(log, Run):
        run = log
    else:
        say(f"loading {log}")
        run = load_run(log)
    out.mkdir(parents=True, exist_ok=True)
    if Path(run.source).resolve().parent == out.resolve():
        say("writing beside the log (the log itself is never touched)")
    say("fitting, forecasting and diagnosing")
    analysis = analyse_run(run, momentum=momentum, group_size=group_size,
                           reward_range=reward_range,
                           train_fraction=0.7 if run.n_points >= _FORECAST_POINTS else None)
    summary = run_summary(analysis)
    say("drawing the figure")
    figure = out / "reward_forecast.png"
    analysis_figure(analysis, path=figure)
    diagnosis = summary["diagnosis"]
    diag_rows = "" if diagnosis is None else "\n".join(
        f"<tr><td>{name}</td><td>{_mark(v)}</td><td>"
        f"{'n/a' if v['score'] is None else format(v['score'], '.2f')}</td><td>"
        f"{html.escape(v['evidence'])}"
        + (f"<br><b>try:</b> {html.escape(v['remedy'])}" if v.get("remedy") else "")
        + "</td></tr>"
        for name, v in diagnosis["modes"].items())
    primary = "n/a" if diagnosis is None else diagnosis["headline"]
    trusted = ("the fit of the model the analysis trusts" if analysis.trusted_model else
               f"no fitted curve ({untrusted_note(summary['weight_on'])})")
    forecast = ("the forecast after the training cut with its band" if analysis.forecast else
                f"no forecast (the log's {run.n_points} points are fewer than the "
                f"{_FORECAST_POINTS} a forecast from the first 70% needs here: the run is fitted "
                "whole)")
    caption = f"Reward, {trusted}, {forecast}, flagged diagnosis windows shaded."
    page = f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>grpodyn: {html.escape(run.source)}</title>
<style>body{{font-family:sans-serif;max-width:1000px;margin:2em auto}}
table{{border-collapse:collapse}}td,th{{border:1px solid #ccc;padding:4px;font-size:13px}}
figure{{display:inline-block;margin:1em}}img{{max-width:640px}}</style></head><body>
{REPORT_MARKER}
<h1>grpodyn report: {html.escape(Path(run.source).name)}</h1>
<p>{run.n_points} points ({html.escape(run.format)}, reward = {html.escape(run.reward_key)}).
Noise ceiling of R^2: {analysis.noise.r2_ceiling:.3f}.</p>
<h2>Plateau and dynamics</h2>
{analysis.html_section()}
<h2>Diagnosis: {html.escape(primary)}</h2>
<table><tr><th>mode</th><th>verdict</th><th>score</th><th>evidence</th></tr>{diag_rows}</table>
<h2>Figure</h2><figure><img src="{figure.name}" alt="{html.escape(caption)}">
<figcaption>{html.escape(caption)}</figcaption></figure>
</body></html>
"""
    write_atomic(out / "index.html", page)
    result = {"html": str(out / "index.html"), **summary, "figures": [str(figure)]}
    write_atomic(out / "summary.json", dumps_json(result, indent=2))
    return result
