"""The documentation site holds what the code holds: every derivation, section, option and name.

The first tests read the sources of the site (docs/*.md and the extension in docs/_ext) and need
no build. The tests of the built site read docs/_build/html, which CI builds before the tests
(``python -m sphinx -W --keep-going -b html docs docs/_build/html`` in .ci/run, with
``GRPODYN_DOCS_BUILT=1``): there a missing build fails; elsewhere they skip with that command.
"""

from __future__ import annotations

import argparse
import importlib
import os
import re
import sys
from html import unescape
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
HTML = DOCS / "_build" / "html"
THEORY = DOCS / "theory.md"
BUILD = "python -m sphinx -W --keep-going -b html docs docs/_build/html"


@pytest.fixture(scope="module")
def pages():
    """The site's extension module (docs/_ext/grpodyn_pages.py)."""
    sys.path.insert(0, str(DOCS / "_ext"))
    try:
        yield importlib.import_module("grpodyn_pages")
    finally:
        sys.path.remove(str(DOCS / "_ext"))


def _headings() -> dict[int, str]:
    """Section number -> title of the theory page's numbered ``##`` headings."""
    found = re.findall(r"^## (\d+)\. (.+)$", THEORY.read_text(), flags=re.MULTILINE)
    return {int(n): title for n, title in found}


def _directives() -> list[str]:
    return re.findall(r"^```\{derivations\} (.+)$", THEORY.read_text(), flags=re.MULTILINE)


def test_theory_has_the_ten_numbered_sections():
    assert sorted(_headings()) == list(range(1, 11))
    numbers = [int(n) for n in re.findall(r"^## (\d+)\.", THEORY.read_text(), re.MULTILINE)]
    assert numbers == sorted(numbers)


def test_theory_page_and_registry_hold_the_same_derivations(reg):
    """One directive per section of the registry, none for a section the registry lacks, and
    each under the heading of its number."""
    directives = _directives()
    assert len(directives) == len(set(directives))
    assert set(directives) == {d.section for d in reg.values()}
    text = THEORY.read_text()
    for section in directives:
        number = int(section.split(".", 1)[0])
        at = text.index(f"```{{derivations}} {section}\n")
        heading = text.rfind("\n## ", 0, at)
        assert text[heading:].startswith(f"\n## {number}. "), section


def test_derivation_markdown_is_generated_from_the_registry(reg, pages):
    from grpodyn.theory import to_latex

    for name, d in reg.items():
        text = pages.derivation_markdown(d)
        assert f"(derivation-{name})=" in text
        assert d.latex() in text  # the LaTeX of the sympy expression, nothing typed
        for step in d.steps:
            assert to_latex(step.expr) in text, (name, step.description)
        for arg in d.arg_names:
            assert f"| `{arg}` |" in text, (name, arg)
        if d.domain is not None:
            assert d.domain_latex() in text
        assert f"grpodyn_{name}" in text and f"GrpodynTheory.{name}" in text
    text, names = pages.section_markdown("4. Critical damping and regimes")
    assert names == [n for n, d in reg.items() if d.section == "4. Critical damping and regimes"]
    assert text.count("(derivation-") == len(names)


def test_derivation_latex_has_no_bare_underscore_in_names(reg):
    """MathJax and LaTeX read ``\\mathrm{mean_field_map}`` as a double subscript: escaped."""
    for name, d in reg.items():
        assert not re.search(r"\\mathrm\{[^}]*(?<!\\)_", d.latex()), name


def test_markdown_escapes_plain_text(pages):
    assert pages._escape("r* = a_b | [x]") == r"r\* = a\_b \| \[x\]"


# the citation forms: "docs/theory.md section 5", "sections 3-5", "sections 1, 3 and 6", "§5"
_CITATION = re.compile(r"docs/theory\.md,? (?:sections?|§) ?(\d+(?:(?:-|–|, | and |, and )\d+)*)")
_OLD_CITATION = re.compile(r"THEORY\.md,? (?:sections?|§|s\.) ?\d")


def _sources() -> list[Path]:
    skip = {".venv", "_build", "generated", ".git", "build", "node_modules"}
    return [p for ext in ("*.py", "*.md", "*.ipynb") for p in ROOT.rglob(ext)
            if not skip & set(p.relative_to(ROOT).parts)]


def _cited(text: str) -> set[int]:
    numbers: set[int] = set()
    for group in _CITATION.findall(text):
        for part in re.split(r", and |, | and ", group):
            low, _, high = part.replace("–", "-").partition("-")
            numbers.update(range(int(low), int(high or low) + 1))
    return numbers


def test_citation_parser_reads_every_form():
    assert _cited("docs/theory.md section 5, docs/theory.md sections 1-3") == {1, 2, 3, 5}
    assert _cited("(docs/theory.md sections 1, 4 and 7)") == {1, 4, 7}
    assert _cited("docs/theory.md §9") == {9}


def test_every_cited_theory_section_exists():
    sections = set(_headings())
    for path in _sources():
        missing = _cited(path.read_text(errors="replace")) - sections
        assert not missing, f"{path.relative_to(ROOT)} cites missing sections {sorted(missing)}"


def test_no_citation_names_the_old_theory_document():
    old = [str(p.relative_to(ROOT)) for p in _sources()
           if _OLD_CITATION.search(p.read_text(errors="replace"))]
    assert not old, f"cite docs/theory.md instead of THEORY.md in {old[:10]}"


def test_cli_reference_is_generated_from_the_parser():
    text = (DOCS / "reference" / "cli.md").read_text()
    assert ":module: grpodyn.cli" in text and ":func: build_parser" in text
    assert ":nosubcommands:" not in text and ":path:" not in text


def _options() -> dict[str, list[str]]:
    """Command -> every option string of its parser (positional arguments by their dest)."""
    from grpodyn.cli import build_parser

    parser = build_parser()
    commands = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    found = {"": [s for a in parser._actions for s in a.option_strings
                  if not isinstance(a, argparse._HelpAction)]}
    for name, sub in commands.choices.items():
        found[name] = [s for a in sub._actions for s in (a.option_strings or [a.dest])
                       if not isinstance(a, argparse._HelpAction)]
    return found


def _studies_pages(pages) -> list[str]:
    return [f"generated/studies/{p.parent.name}/README.html" for p in pages.studies()]


def test_studies_page_lists_what_is_there(pages, tmp_path):
    # a relative link out of a study folder is not copied with it: it becomes a path in code
    (tmp_path / "fig.png").write_bytes(b"png")
    text = "![f](fig.png) [here](fig.png) [code](../../grpodyn/cli.py) [w](https://x.org)"
    out = pages._unlink_outside(text, tmp_path)
    assert out == "![f](fig.png) [here](fig.png) code (`../../grpodyn/cli.py`) [w](https://x.org)"


@pytest.fixture(scope="module")
def html():
    """The built site; CI builds it first and sets GRPODYN_DOCS_BUILT=1."""
    if not (HTML / "index.html").exists():
        if os.environ.get("GRPODYN_DOCS_BUILT"):
            pytest.fail(f"GRPODYN_DOCS_BUILT is set but {HTML} holds no site")
        pytest.skip(f"the site is not built: run `{BUILD}`")
    return HTML


def _page(html: Path, name: str) -> str:
    return (html / name).read_text(encoding="utf-8")


def _text(html: Path, name: str) -> str:
    """The page's text as a reader sees it: tags (syntax highlighting) removed, unescaped."""
    return unescape(re.sub(r"<[^>]+>", "", _page(html, name)))


def test_built_theory_page_has_every_derivation(html, reg):
    page = _page(html, "theory.html")
    ids = set(re.findall(r'id="derivation-([a-z0-9-]+)"', page))
    assert ids == {name.replace("_", "-") for name in reg}
    for number, title in _headings().items():
        assert f"{number}. {title.split('$')[0].strip()}" in page


def test_built_cli_reference_has_every_command_and_option(html):
    page = _text(html, "reference/cli.html")
    for command, options in _options().items():
        assert not command or f"grpodyn {command}" in page, command
        for option in options:
            assert option in page, (command, option)


def test_built_api_reference_has_the_public_api(html):
    import grpodyn

    page = _page(html, "reference/api.html")
    for name in grpodyn.__all__:
        assert re.search(rf'id="grpodyn\.[a-z_.]+\.{name}"', page), name


def test_built_exports_page_has_every_function_in_every_language(html, reg):
    from grpodyn.numerics.export import signature

    ids = set(re.findall(r'id="export-([a-z0-9-]+)"', _page(html, "reference/exports.html")))
    assert ids == {n.replace("_", "-") for n in reg}
    page = _text(html, "reference/exports.html")
    for d in (reg["critical_stiffness"], reg["trajectory"]):
        for lang in ("c", "python", "julia", "javascript", "rust"):
            assert signature(d, lang) in page, (d.name, lang)


def test_built_site_has_every_notebook_executed(html):
    for notebook in sorted((ROOT / "notebooks").glob("*.ipynb")):
        page = _page(html, f"generated/notebooks/{notebook.stem}.html")
        assert 'class="cell_output' in page, notebook.name
        assert "Traceback" not in page, notebook.name


def test_built_guide_shows_real_command_outputs(html):
    page = _text(html, "guide.html")
    for command in ("runs", "fit", "forecast", "diagnose", "advise", "transfer", "export"):
        assert f"$ grpodyn {command} " in page, command
    assert "noise sigma" in page and "step  mean" in page  # outputs, not just the commands


def test_built_studies_page(html, pages):
    page = _text(html, "studies.html")
    for target in _studies_pages(pages):
        assert (html / target).exists(), target
    if not pages.studies():
        assert "studies/<name>/README.md" in page


def test_copy_sources_follows_the_notebooks_and_studies(pages, tmp_path, monkeypatch):
    """The build's copies under docs/generated follow the repository: added, changed, removed."""
    monkeypatch.setattr(pages, "ROOT", tmp_path)
    monkeypatch.setattr(pages, "GENERATED", tmp_path / "generated")
    (tmp_path / "notebooks").mkdir()
    (tmp_path / "notebooks" / "a.ipynb").write_text("{}")
    study = tmp_path / "studies" / "deep"
    study.mkdir(parents=True)
    (study / "README.md").write_text("# Deep\n![f](f.png) [code](../../x.py)\n")
    (study / "f.png").write_bytes(b"png")
    pages.copy_sources(None)
    copied = tmp_path / "generated" / "studies" / "deep"
    assert (copied / "f.png").read_bytes() == b"png"
    assert (copied / "README.md").read_text() == "# Deep\n![f](f.png) code (`../../x.py`)\n"
    assert (tmp_path / "generated" / "notebooks" / "a.ipynb").read_text() == "{}"
    (tmp_path / "notebooks" / "a.ipynb").unlink()
    (study / "README.md").unlink()
    pages.copy_sources(None)
    assert not copied.exists()
    assert not list((tmp_path / "generated" / "notebooks").glob("*.ipynb"))
