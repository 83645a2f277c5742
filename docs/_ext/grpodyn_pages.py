"""Sphinx extension of the grpodyn site: pages rendered at build time from the code itself.

Directives (in the MyST pages):

- ``derivations SECTION``: every derivation of the registry whose section is SECTION, with its
  LaTeX generated from the sympy expression, its arguments and their assumptions, its domain, its
  steps and its exported names (:func:`derivation_markdown`).
- ``exported-functions``: every exported function with its formula and its signature in each
  language, taken from the exporter itself (:func:`export_markdown`).
- ``grpodyn-cli ARGS``: runs ``grpodyn ARGS`` from the repository root and shows the command with
  its output; an exit code other than ``:exit:`` (default 0) fails the build.
- ``grpodyn-api``: autodoc entries for the public API, ``grpodyn.__all__``.
- ``studies``: the studies' reports (``studies/*/README.md``) in a table of contents, or their
  paths while none is there.

At ``builder-inited`` the folders the guide's commands write into are removed
(:data:`EXAMPLE_OUTPUTS`), and the notebooks (``notebooks/*.ipynb``) and the studies are copied
under ``docs/generated/`` (only when changed), where MyST-NB executes and renders them. At
``env-check-consistency`` a derivation that no page rendered is a warning, so a build with ``-W``
fails until every derivation of the registry is on the theory page. The pages rendered from the
code are read again on every build (``env-get-outdated``), so an incremental build shows the code
as it is.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

from docutils import nodes
from docutils.parsers.rst import directives
from docutils.statemachine import StringList
from sphinx.application import Sphinx
from sphinx.util import logging
from sphinx.util.docutils import SphinxDirective

DOCS = Path(__file__).resolve().parents[1]
ROOT = DOCS.parent
GENERATED = DOCS / "generated"
LANGUAGES = {"c": "C", "python": "Python", "julia": "Julia", "javascript": "JavaScript",
             "rust": "Rust"}
_LOG = logging.getLogger(__name__)
_MARKDOWN_SPECIAL = re.compile(r"([\\`*_{}\[\]<>()#+!|$~])")


def _escape(text: str) -> str:
    """Escape Markdown's special characters in plain text (CommonMark backslash escapes)."""
    return _MARKDOWN_SPECIAL.sub(r"\\\1", text)


def _math(latex: str, indent: str = "") -> list[str]:
    return [f"{indent}```{{math}}", *(f"{indent}{line}" for line in latex.splitlines()),
            f"{indent}```", ""]


def _registry() -> dict[str, Any]:
    from grpodyn.theory import registry

    return registry()


def derivation_markdown(d: Any) -> str:
    """Return the MyST Markdown of one derivation: formula, arguments, domain, steps, exports.

    Every formula is ``grpodyn.theory.to_latex`` of the sympy expression; nothing is typed.
    """
    from grpodyn.theory import TABLE, to_latex

    lines = [f"(derivation-{d.name})=", f"```{{rubric}} {d.name}", "```", "",
             _escape(d.summary), ""]
    lines += _math(d.latex())
    lines += ["| argument | symbol | meaning | unit | assumptions |", "|---|---|---|---|---|"]
    for name in d.arg_names:
        row = TABLE[name]
        true = ", ".join(sorted(k for k, v in row.assumptions.items() if v)) or "none"
        lines.append(f"| `{name}` | ${row.latex}$ | {_escape(row.meaning)} | "
                     f"{_escape(row.unit)} | {true} |")
    lines.append("")
    if d.domain is not None:
        lines += ["Domain (the compiled and exported functions refuse arguments outside it):", ""]
        lines += _math(d.domain_latex())
    if d.steps:
        lines += ["Steps:", ""]
        for i, step in enumerate(d.steps, start=1):
            lines += [f"{i}. {_escape(step.description)}", ""]
            lines += _math(to_latex(step.expr), indent="   ")
    lines += [f"Exported as `compiled(\"{d.name}\")` (numpy), `grpodyn_{d.name}` (C), "
              f"`grpodyn_theory.{d.name}` (Python), `GrpodynTheory.{d.name}` (Julia): "
              f"{{ref}}`signatures <export-{d.name}>`.", ""]
    return "\n".join(lines)


def section_markdown(section: str) -> tuple[str, list[str]]:
    """Return the Markdown of every derivation of ``section`` and their names, in order."""
    ds = [d for d in _registry().values() if d.section == section]
    return "\n".join(derivation_markdown(d) for d in ds), [d.name for d in ds]


def export_markdown(d: Any) -> str:
    """Return the MyST Markdown of one exported function: formula and signature per language."""
    from grpodyn.numerics.export import signature

    lines = [f"(export-{d.name})=", f"```{{rubric}} {d.name}", "```", "",
             f"{_escape(d.summary)} ({{ref}}`derivation <derivation-{d.name}>`)", ""]
    lines += _math(d.latex())
    lines += [f"- {label}: `{signature(d, lang)}`" for lang, label in LANGUAGES.items()]
    return "\n".join(lines + [""])


def _parse(directive: SphinxDirective, text: str) -> list[nodes.Node]:
    container = nodes.container()
    source = directive.get_source_info()[0]
    directive.state.nested_parse(StringList(text.splitlines(), source=source),
                                 directive.content_offset, container)
    return container.children


class DerivationsDirective(SphinxDirective):
    """``derivations SECTION``: the registry's derivations of one section."""

    required_arguments = 1
    final_argument_whitespace = True

    def run(self) -> list[nodes.Node]:
        """Render the derivations of the section given as argument."""
        section = self.arguments[0].strip()
        text, names = section_markdown(section)
        if not names:
            raise self.error(f"no derivation of the registry has the section {section!r}")
        rendered = self.env.__dict__.setdefault("grpodyn_derivations", {})
        rendered.setdefault(self.env.docname, set()).update(names)
        return _parse(self, text)


class ExportedFunctionsDirective(SphinxDirective):
    """``exported-functions``: every exported function, formula and signatures."""

    def run(self) -> list[nodes.Node]:
        """Render every derivation as its exported functions."""
        return _parse(self, "\n".join(export_markdown(d) for d in _registry().values()))


class CliDirective(SphinxDirective):
    """``grpodyn-cli ARGS``: the command and its output, run while the site builds."""

    required_arguments = 1
    final_argument_whitespace = True
    option_spec = {"exit": directives.nonnegative_int}

    def run(self) -> list[nodes.Node]:
        """Run the command from the repository root; fail on an unexpected exit code."""
        argv = shlex.split(self.arguments[0])
        done = subprocess.run([sys.executable, "-P", "-m", "grpodyn", *argv], cwd=ROOT,
                              capture_output=True, text=True, timeout=300,
                              env={**os.environ, "COLUMNS": "100"}, check=False)
        want = self.options.get("exit", 0)
        if done.returncode != want:
            raise self.error(f"grpodyn {self.arguments[0]}: exit {done.returncode}, expected "
                             f"{want}: {done.stderr.strip()[-500:]}")
        output = (done.stdout + done.stderr).rstrip()
        text = f"$ grpodyn {self.arguments[0]}\n{output}"
        return [nodes.literal_block(text, text, language="console")]


class ApiDirective(SphinxDirective):
    """``grpodyn-api``: autodoc entries for every name of ``grpodyn.__all__``."""

    def run(self) -> list[nodes.Node]:
        """Emit one autodoc directive per public name, by its defining module."""
        import importlib
        import inspect

        import grpodyn

        lines = ["```{eval-rst}"]  # autodoc writes reStructuredText: parse it as such
        for name in grpodyn.__all__:
            obj = getattr(grpodyn, name)
            kind = "autoclass" if inspect.isclass(obj) else "autofunction"
            module = importlib.import_module(grpodyn._EXPORTS[name]).__name__
            lines += [f".. {kind}:: {module}.{name}", ""]
        return _parse(self, "\n".join([*lines, "```", ""]))


def studies() -> list[Path]:
    """Return the studies' reports present in the repository (``studies/*/README.md``)."""
    return sorted((ROOT / "studies").glob("*/README.md"))


class StudiesDirective(SphinxDirective):
    """``studies``: a table of contents of the studies' reports, or their expected paths."""

    def run(self) -> list[nodes.Node]:
        """List the copied studies, or say where they will be."""
        found = studies()
        if found:
            entries = "\n".join(f"generated/studies/{p.parent.name}/README" for p in found)
            return _parse(self, f"```{{toctree}}\n:maxdepth: 1\n\n{entries}\n```\n")
        text = ("No study report is in the repository yet: each study's readable report will "
                "be `studies/<name>/README.md` (the deep network, the forecast benchmark), "
                "rendered here as soon as it is there.")
        return _parse(self, text)


def _copy_if_changed(source: Path, target: Path) -> None:
    if target.exists() and target.read_bytes() == source.read_bytes():
        return
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(source, target)


def _unlink_outside(text: str, folder: Path) -> str:
    """Turn relative links whose target is not copied with the study into code spans."""
    def keep(match: re.Match[str]) -> str:
        label, target = match.group(1), match.group(2)
        if re.match(r"[a-z]+:", target) or target.startswith("#"):
            return match.group(0)
        path = (folder / target.split("#", 1)[0]).resolve()
        inside = path.is_file() and folder.resolve() in path.parents
        return match.group(0) if inside else f"{label} (`{target}`)"
    return re.sub(r"(?<!!)\[([^\]]+)\]\(([^)\s]+)\)", keep, text)


def copy_sources(app: Sphinx) -> None:
    """Copy the notebooks and the studies under ``docs/generated`` (only what changed)."""
    notebooks = sorted((ROOT / "notebooks").glob("*.ipynb"))
    for path in notebooks:
        _copy_if_changed(path, GENERATED / "notebooks" / path.name)
    for stale in (GENERATED / "notebooks").glob("*.ipynb"):
        if stale.name not in {p.name for p in notebooks}:
            stale.unlink()
    present = {p.parent.name for p in studies()}
    for stale in (GENERATED / "studies").glob("*"):
        if stale.name not in present:
            shutil.rmtree(stale)
    for readme in studies():
        folder = readme.parent
        target = GENERATED / "studies" / folder.name
        for figure in [*folder.glob("*.png"), *folder.glob("*.svg")]:
            _copy_if_changed(figure, target / figure.name)
        text = _unlink_outside(readme.read_text(encoding="utf-8"), folder)
        target.mkdir(parents=True, exist_ok=True)
        if not (target / "README.md").exists() or (target / "README.md").read_text() != text:
            (target / "README.md").write_text(text, encoding="utf-8")


def _purge(app: Sphinx, env: Any, docname: str) -> None:
    env.__dict__.get("grpodyn_derivations", {}).pop(docname, None)


def _merge(app: Sphinx, env: Any, docnames: set[str], other: Any) -> None:
    mine = env.__dict__.setdefault("grpodyn_derivations", {})
    mine.update(other.__dict__.get("grpodyn_derivations", {}))


def check_every_derivation(app: Sphinx, env: Any) -> None:
    """Warn about every derivation of the registry that no page rendered."""
    rendered = set().union(*env.__dict__.get("grpodyn_derivations", {}).values())
    missing = [name for name in _registry() if name not in rendered]
    for name in missing:
        _LOG.warning("derivation %s (section %r) is on no theory page", name,
                     _registry()[name].section)


#: Pages rendered from the code (registry, parsers, exporter, command outputs, studies): read
#: again on every build, since Sphinx sees only their unchanged Markdown sources.
FROM_CODE = ("theory", "guide", "studies", "reference/cli", "reference/api", "reference/exports")


def _always_outdated(app: Sphinx, env: Any, added: set[str], changed: set[str],
                     removed: set[str]) -> list[str]:
    return [name for name in FROM_CODE if name in env.found_docs]


#: Folders the guide's commands write into: the site owns them, and a build starts them afresh,
#: so that an export after a change of the theory is not refused for replacing the last one.
EXAMPLE_OUTPUTS = (DOCS / "_build" / "guide-export",)


def clear_example_outputs(app: Sphinx) -> None:
    """Remove what the guide's commands wrote at the last build (:data:`EXAMPLE_OUTPUTS`)."""
    for folder in EXAMPLE_OUTPUTS:
        shutil.rmtree(folder, ignore_errors=True)


def setup(app: Sphinx) -> dict[str, Any]:
    """Register the directives and the build hooks."""
    app.add_directive("derivations", DerivationsDirective)
    app.add_directive("exported-functions", ExportedFunctionsDirective)
    app.add_directive("grpodyn-cli", CliDirective)
    app.add_directive("grpodyn-api", ApiDirective)
    app.add_directive("studies", StudiesDirective)
    app.connect("builder-inited", copy_sources)
    app.connect("builder-inited", clear_example_outputs)
    app.connect("env-get-outdated", _always_outdated)
    app.connect("env-purge-doc", _purge)
    app.connect("env-merge-info", _merge)
    app.connect("env-check-consistency", check_every_derivation)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True,
            "env_version": 1}
