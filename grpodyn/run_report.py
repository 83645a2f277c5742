"""``grpodyn report LOG``: the analysis of one run (:func:`analyse_run`) as HTML, JSON, figures.

Writes ``index.html``, ``summary.json`` and ``reward_forecast.png`` (the reward with the trusted
fit, the forecast band after the training cut, the diagnosis windows shaded, and KL / entropy /
length panels when logged) to the output directory (atomically, never over the log itself). The
page carries :data:`grpodyn.report.REPORT_MARKER`, by which ``grpodyn report --out`` knows a
folder of an earlier report from a folder of files grpodyn did not write.

The report says what ``grpodyn diagnose`` says of the same log: a run too short for the modes
still gets its state and early warning, and a constant reward, which has no curve to fit, is
still diagnosed (with no fit, and the reason).
"""

from __future__ import annotations

import html
import math
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from grpodyn.empirical.logs.loaders import Run, load_run
from grpodyn.ground import dumps_json, finite_json, write_atomic
from grpodyn.ground.files import staged_folder
from grpodyn.report import REPORT_MARKER

if TYPE_CHECKING:
    from grpodyn.empirical.logs.run_analysis import RunAnalysis

__all__ = ["write_run_report", "run_summary", "analyse_for_report"]

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


def analyse_for_report(run: Run, *, momentum: float | None = None,
                       group_size: int | None = None,
                       reward_range: tuple[float, float] | None = None) -> RunAnalysis:
    """Analyse a run as its report shows it, with the diagnosis ``grpodyn diagnose`` makes.

    :func:`~grpodyn.empirical.logs.run_analysis.analyse_run` with the report's cut; a constant
    reward, which has no curve to fit, gets the diagnosis alone (the analysis then fits nothing
    and says why), so that the report and ``diagnose`` agree on every log both read.

    Parameters
    ----------
    run : Run
        The loaded run.
    momentum, group_size, reward_range : optional
        As :func:`~grpodyn.empirical.logs.run_analysis.analyse_run` takes them.

    Returns
    -------
    RunAnalysis
        The analysis, its ``diagnosis`` None only for a run too short for any diagnosis.
    """
    from grpodyn.empirical.diagnostics.diagnose import MIN_POINTS, diagnose
    from grpodyn.empirical.logs.run_analysis import analyse_run

    if run.n_points >= MIN_POINTS and np.ptp(run.reward) == 0:
        return _unfitted(run, f"the reward is constant ({run.reward[0]:g}): there is no curve "
                         "to fit", momentum=momentum, reward_range=reward_range,
                         diagnosis=diagnose(run, group_size=group_size))
    return analyse_run(run, momentum=momentum, group_size=group_size, reward_range=reward_range,
                       train_fraction=0.7 if run.n_points >= _FORECAST_POINTS else None,
                       fit_on_training_part=False)


def _unfitted(run: Run, reason: str, *, momentum: float | None,
              reward_range: tuple[float, float] | None, diagnosis: Any) -> RunAnalysis:
    """Return the analysis of a run with no curve to fit: the diagnosis, and why nothing else.

    The reward range and the momentum are read (and checked) as for a fitted run; the plateau,
    tau and the quantities that follow from them are not determined, for ``reason``.
    """
    from grpodyn.empirical.logs.run_analysis import (
        RunAnalysis,
        infer_reward_range,
        momentum_of,
        not_determined,
    )
    from grpodyn.numerics.fit import estimate_noise

    bounds, range_source = infer_reward_range(run, reward_range)
    beta, momentum_source = momentum_of(run, momentum)
    warnings = [*run.warnings, *([f"reward range {range_source}"] if bounds is None else []),
                *([f"momentum {momentum_source}"] if beta is None else [])]
    plateau = {**not_determined(reason), "lower": None, "upper": None}
    dynamics = {key: not_determined(reason)
                for key in ("tau", "stiffness", "regime", "stability_margin")}
    lr = run.meta.lr
    known = lr is not None and isinstance(lr.value, (int, float))
    return RunAnalysis(run=run, reward_range=bounds, range_source=range_source, momentum=beta,
                       momentum_source=momentum_source, lr=float(lr.value) if known else None,
                       lr_source=lr.source if known else f"not read: {reason}", fits={},
                       fit_errors={}, noise=estimate_noise(run.reward), weights={},
                       plateau=plateau, dynamics=dynamics, diagnosis=diagnosis, forecast=None,
                       level=0.9, warnings=warnings)


def _diagnosis_html(diagnosis: dict[str, Any] | None, reason: str | None) -> str:
    """Render the diagnosis as ``grpodyn diagnose`` prints it, or say why none is made.

    Headline, state with its evidence, early warning with its signals and remedy, every mode
    with its verdict and evidence, and the notes the state and the modes do not already say.
    """
    if diagnosis is None:
        return f"<h2>Diagnosis: not made</h2><p>{html.escape(reason or '')}</p>"
    parts = [f"<h2>Diagnosis: {html.escape(diagnosis['headline'])}</h2>",
             f"<p><b>State:</b> {html.escape(diagnosis['state'])}: "
             f"{html.escape(diagnosis['state_evidence'])}</p>"]
    warning = diagnosis.get("early_warning")
    if warning:
        signals = "".join(f"<li>{html.escape(name)}: {html.escape(words)}</li>"
                          for name, words in warning["evidence"].items())
        remedy = (f"<p><b>try:</b> {html.escape(warning['remedy'])}</p>"
                  if warning.get("remedy") else "")
        parts.append(f"<p><b>Early warning at step {warning['step']:g}</b> (a warning, not a "
                     f"verdict): {html.escape(', '.join(warning['signals']))}</p>"
                     f"<ul>{signals}</ul>{remedy}")
    rows = "\n".join(
        f"<tr><td>{name}</td><td>{_mark(v)}</td><td>"
        f"{'n/a' if v['score'] is None else format(v['score'], '.2f')}</td><td>"
        + html.escape("not judged: as the state says" if v["evidence"]
                      == diagnosis["state_evidence"] else v["evidence"])
        + (f"<br><b>try:</b> {html.escape(v['remedy'])}" if v.get("remedy") else "")
        + "</td></tr>" for name, v in diagnosis["modes"].items())
    parts.append("<table><tr><th>mode</th><th>verdict</th><th>score</th><th>evidence</th></tr>"
                 f"{rows}</table>")
    notes = [note for note in diagnosis["notes"] if note != diagnosis["state_evidence"]
             and not any(note.startswith(f"{name}: not judged (") for name in diagnosis["modes"])]
    if notes:
        parts.append("<ul>" + "".join(f"<li>{html.escape(n)}</li>" for n in notes) + "</ul>")
    return "\n".join(parts)


def _caption(analysis: RunAnalysis, summary: dict[str, Any], fit_reason: str | None) -> str:
    """Say what the figure shows: the fit or why none, the forecast or why none, the shading."""
    from grpodyn.empirical.logs.fit_text import untrusted_note
    from grpodyn.empirical.logs.run_figure import shaded_windows

    if fit_reason is not None:
        shown = f"no fitted curve and no forecast ({fit_reason})"
    else:
        trusted = ("the fit of the model the analysis trusts" if analysis.trusted_model else
                   f"no fitted curve ({untrusted_note(summary['weight_on'])})")
        forecast = ("the forecast after the training cut with its band" if analysis.forecast
                    else f"no forecast (the log's {analysis.run.n_points} points are fewer "
                    f"than the {_FORECAST_POINTS} a forecast from the first 70% needs here: the "
                    "run is fitted whole)")
        shown = f"{trusted}, {forecast}"
    return (f"Reward, {shown}"
            + (", flagged diagnosis windows shaded." if shaded_windows(analysis) else "."))


def write_run_report(log: str | Path | Run, out: Path, *, momentum: float | None = None,
                     group_size: int | None = None,
                     reward_range: tuple[float, float] | None = None,
                     progress: Callable[[str], None] | None = None) -> dict[str, Any]:
    """Report on one training run in ``out``; returns the summary (also summary.json).

    ``log`` is a log's path (loaded with the defaults of ``load_run``) or a loaded ``Run``
    (the CLI loads it with the user's ``--run``, ``--reward-key``, ... options). ``out`` is
    created only once the run is analysed, so a run the report refuses leaves no folder; its
    three files are written to a staging folder and replace the old ones together, so a
    report that fails part-way leaves the folder as it was. The
    summary adds to :func:`run_summary` ``fit_reason`` (why no curve is fitted, else None) and
    ``diagnosis_reason`` (why no diagnosis is made, else None).
    """
    from grpodyn.empirical.diagnostics.diagnose import MIN_POINTS
    from grpodyn.empirical.logs.run_figure import analysis_figure

    say = progress or (lambda message: None)
    if isinstance(log, Run):
        run = log
    else:
        say(f"loading {log}")
        run = load_run(log)
    say("fitting, forecasting and diagnosing")
    analysis = analyse_for_report(run, momentum=momentum, group_size=group_size,
                                  reward_range=reward_range)
    fit_reason = None if analysis.fits else analysis.plateau["reason"]
    summary = {**run_summary(analysis), "fit_reason": fit_reason, "diagnosis_reason": None
               if analysis.diagnosis is not None else f"{run.n_points} logged points: a "
               f"diagnosis needs at least {MIN_POINTS}"}
    if Path(run.source).resolve().parent == out.resolve():
        say("writing beside the log (the log itself is never touched)")
    figure = out / "reward_forecast.png"
    with staged_folder(out) as stage:  # the three files replace the old ones together, or none
        say("drawing the figure")
        analysis_figure(analysis, path=stage / figure.name)
        write_atomic(stage / "index.html", _page(run, analysis, summary, fit_reason, figure))
        result = {"html": str(out / "index.html"), **summary, "figures": [str(figure)]}
        write_atomic(stage / "summary.json", dumps_json(result, indent=2))
    return result


def _page(run: Run, analysis: Any, summary: dict[str, Any], fit_reason: str | None,
          figure: Path) -> str:
    """Return the report's HTML page (the figure beside it, named ``figure.name``)."""
    caption = _caption(analysis, summary, fit_reason)
    which = f" [{run.run_name}]" if run.run_name else ""
    ceiling = analysis.noise.r2_ceiling
    noise = (f"Noise ceiling of R^2: {ceiling:.3f}." if math.isfinite(ceiling) else
             f"Noise sigma {analysis.noise.sigma:.3g}: no noise ceiling of R^2.")
    no_fit = "" if fit_reason is None else f"<p>No curve is fitted: {html.escape(fit_reason)}.</p>"
    return f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<title>grpodyn: {html.escape(run.source + which)}</title>
<style>body{{font-family:sans-serif;max-width:1000px;margin:2em auto}}
table{{border-collapse:collapse}}td,th{{border:1px solid #ccc;padding:4px;font-size:13px}}
figure{{display:inline-block;margin:1em}}img{{max-width:640px}}</style></head><body>
{REPORT_MARKER}
<h1>grpodyn report: {html.escape(Path(run.source).name + which)}</h1>
<p>{run.n_points} points ({html.escape(run.format)}, reward = {html.escape(run.reward_key)}).
{noise}</p>
<h2>Plateau and dynamics</h2>
{no_fit}{analysis.html_section()}
{_diagnosis_html(summary["diagnosis"], summary["diagnosis_reason"])}
<h2>Figure</h2><figure><img src="{figure.name}" alt="{html.escape(caption)}">
<figcaption>{html.escape(caption)}</figcaption></figure>
</body></html>
"""
