"""The HTML of the reproduction page: its opening summary, tables and figures.

Pure rendering: every function takes numbers and rows already computed and returns HTML text
(escaped). :func:`page` assembles the page ``grpodyn report`` writes.
"""

from __future__ import annotations

import html
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from grpodyn.claims import by_reason
from grpodyn.theory.claims import Check, get_claim

__all__ = ["summary_block", "checks_table", "study_table", "figures_block", "diagnosis_table",
           "derivations_table", "page", "NO_REASON"]

#: Said of a disagreement the registry records no reason for.
NO_REASON = "no recorded reason: a new disagreement, to be explained"

_STYLE = """body{font-family:sans-serif;max-width:1100px;margin:2em auto}
table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:4px;font-size:13px}
figure{display:inline-block;margin:1em}img{max-width:520px}
#summary{background:#f6f8fa;border:1px solid #d0d7de;padding:0.5em 1.5em;margin-bottom:2em}
#summary li{margin:0.3em 0}
#summary .headline{font-weight:bold}"""


def summary_block(summary: Mapping[str, Any], *, checks: Sequence[Check] = ()) -> str:
    """Render the ledger: per group its headline, its sources and each disagreement's reason.

    Parameters
    ----------
    summary : mapping
        :func:`grpodyn.claims.summarise`'s result.
    checks : sequence of Check
        The ledger rows: a group that names its holding claims (at most four) shows their
        evidence too.
    """
    parts = []
    for name, group in summary["groups"].items():
        named = group["holds"] if group["fails"] and len(group["holds"]) <= 4 else []
        held = "".join(f"<li><b>{html.escape(c.claim)}</b>: predicted {html.escape(c.stated)}; "
                       f"observed {html.escape(c.computed)}.</li>"
                       for c in checks if c.agrees and c.key
                       and get_claim(c.key).question in named)
        held = f"<h4>What holds</h4><ul>{held}</ul>" if held else ""
        sources = "".join(
            f"<li><b>{html.escape(source)}</b> (docs/theory.md section"
            f"{'s' * (len(s['sections']) > 1)} {html.escape(', '.join(s['sections']))}): "
            f"{s['agree']} of {s['total']} checks agree</li>"
            for source, s in summary["sources"].items() if source in group["sources"])
        rows = [d for d in summary["disagreements"] if d["group"] == name]
        wrong = "".join(
            "<li>" + "<br>".join(f"<b>{html.escape(d['claim'])}</b>: stated "
                                 f"{html.escape(d['stated'])}, computed "
                                 f"{html.escape(d['computed'])}." for d in same)
            + f"<br><i>Why:</i> {html.escape(reason or NO_REASON)}</li>"
            for reason, same in by_reason(rows))
        study = "".join('<p>The later routes to these questions are the <a href="#study">'
                        f"study's rows</a> below (<code>{html.escape(path)}</code>).</p>"
                        for path in group["studies"])
        parts.append(f'<h3 id="{_anchor(name)}">{html.escape(name)}</h3>'
                     f'<p class="headline">{html.escape(group["headline"])}</p>'
                     f"<ul>{sources}</ul>{held}"
                     f"<h4>What disagrees, and why ({len(rows)})</h4>"
                     f"<ul>{wrong or '<li>nothing</li>'}</ul>{study}")
    return (f'<section id="summary"><h2>In short</h2><p>{summary["claims_agree"]} of '
            f"{summary['claims_total']} claims hold, one claim per question "
            f"({summary['checks_agree']} of {summary['checks_total']} checks agree).</p>"
            + "".join(parts) + "</section>")


def _anchor(name: str) -> str:
    """Return an HTML id for a group's name."""
    return "-".join(name.split())


def study_table(checks: Sequence[Check]) -> str:
    """Render the study's rows: later routes to a question, linked from its claim."""
    if not checks:
        return ""
    rows = "\n".join(
        f"<tr><td>{html.escape(c.claim)}</td><td>{html.escape(c.stated)}</td>"
        f"<td>{html.escape(c.computed)}</td><td>{'yes' if c.agrees else 'no'}</td>"
        f"<td>{html.escape(c.note)}</td></tr>" for c in checks)
    return ('<h2 id="study">The study: later routes to the same questions</h2>\n<p>Each '
            "question above is judged on the route fixed before its runs; these rows are the "
            "routes tried after it, kept for the record and never counted.</p>\n<table><tr>"
            "<th>route</th><th>predicted</th><th>observed</th><th>met as a test</th>"
            f"<th>note</th></tr>\n{rows}</table>")


def checks_table(checks: Iterable[Check]) -> str:
    """Render the rows of every claim: stated, computed, agreement and note."""
    rows = "\n".join(
        f"<tr><td>{html.escape(c.claim)}</td><td>{html.escape(c.stated)}</td>"
        f"<td>{html.escape(c.computed)}</td><td>{'yes' if c.agrees else 'NO'}</td>"
        f"<td>{html.escape(c.note)}</td></tr>" for c in checks)
    return ("<h2>Stated results against computed ones</h2>\n<table><tr><th>claim</th>"
            "<th>stated</th><th>computed</th><th>agrees</th><th>note</th></tr>\n"
            f"{rows}</table>")


def figures_block(figures: Sequence[tuple[str, str]]) -> str:
    """Render the figures (file name, caption) with their captions."""
    images = "\n".join(f'<figure><img src="{html.escape(name)}" alt="{html.escape(caption)}">'
                       f"<figcaption>{html.escape(caption)}</figcaption></figure>"
                       for name, caption in figures)
    return f"<h2>Figures</h2>\n{images}"


def diagnosis_table(rows: Sequence[tuple[str, str, str]]) -> str:
    """Render the diagnoses of the shipped tiny runs: (run, primary mode, evidence)."""
    if not rows:
        return ""
    body = "".join(f"<tr><td>{html.escape(run)}</td><td>{html.escape(primary)}</td>"
                   f"<td>{html.escape(evidence)}</td></tr>" for run, primary, evidence in rows)
    return ("<h2>Diagnosis of the shipped tiny-model runs</h2><table><tr><th>run</th>"
            f"<th>primary mode</th><th>evidence</th></tr>{body}</table>")


def derivations_table(derivations: Iterable[Any], latex: Any) -> str:
    """Render the derivations: name, section, summary and LaTeX (first 400 characters)."""
    rows = "\n".join(
        f"<tr><td><code>{html.escape(d.name)}</code></td><td>{html.escape(d.section)}</td>"
        f"<td>{html.escape(d.summary)}</td><td><code>{html.escape(latex(d.expr)[:400])}"
        f"</code></td></tr>" for d in derivations)
    return ("<h2>Derivations</h2>\n<table><tr><th>name</th><th>section</th><th>summary</th>"
            f"<th>LaTeX</th></tr>\n{rows}</table>")


def page(*, title: str, intro: str, sections: Sequence[str]) -> str:
    """Assemble a self-contained page from its already rendered sections."""
    body = "\n".join(sections)
    return f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>grpodyn report</title>
<style>{_STYLE}</style></head><body>
<h1>{html.escape(title)}</h1>
<p>{html.escape(intro)}</p>
{body}
</body></html>
"""
