"""The HTML of the reproduction page: its opening summary, tables and figures.

Pure rendering: every function takes numbers and rows already computed and returns HTML text
(escaped). :func:`page` assembles the page ``grpodyn report`` writes.
"""

from __future__ import annotations

import html
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from grpodyn.claims import by_reason
from grpodyn.theory.claims import Check

__all__ = ["summary_block", "checks_table", "figures_block", "diagnosis_table",
           "derivations_table", "page", "NO_REASON"]

#: Said of a disagreement the registry records no reason for.
NO_REASON = "no recorded reason: a new disagreement, to be explained"

_STYLE = """body{font-family:sans-serif;max-width:1100px;margin:2em auto}
table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:4px;font-size:13px}
figure{display:inline-block;margin:1em}img{max-width:520px}
#summary{background:#f6f8fa;border:1px solid #d0d7de;padding:0.5em 1.5em;margin-bottom:2em}
#summary li{margin:0.3em 0}"""


def summary_block(summary: Mapping[str, Any]) -> str:
    """Render what was reproduced and each disagreement with its one-line reason.

    Parameters
    ----------
    summary : mapping
        :func:`grpodyn.claims.summarise`'s result.
    """
    sources = summary["sources"]
    lines = "".join(
        f"<li><b>{html.escape(name)}</b> (THEORY.md section{'s' * (len(s['sections']) > 1)} "
        f"{html.escape(', '.join(s['sections']))}): {s['agree']} of {s['total']} agree</li>"
        for name, s in sources.items())
    wrong = "".join(
        "<li>" + "<br>".join(f"<b>{html.escape(d['claim'])}</b>: stated "
                             f"{html.escape(d['stated'])}, computed {html.escape(d['computed'])}."
                             for d in rows)
        + f"<br><i>Why:</i> {html.escape(reason or NO_REASON)}</li>"
        for reason, rows in by_reason(summary["disagreements"]))
    return (f'<section id="summary"><h2>In short</h2><p>{summary["checks_agree"]} of '
            f"{summary['checks_total']} checked claims agree.</p>"
            f"<h3>What was reproduced</h3><ul>{lines}</ul>"
            f"<h3>What disagrees, and why ({len(summary['disagreements'])})</h3>"
            f"<ul>{wrong or '<li>nothing</li>'}</ul></section>")


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
