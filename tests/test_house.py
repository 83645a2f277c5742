"""House rules of the repository: no import cycle, a small wheel, text without history, cited
files that exist, rooms of a readable size, a short README.

Each check lists every offender in its failure message.
"""

from __future__ import annotations

import ast
import re
import subprocess
import sys
import zipfile
from collections.abc import Iterator
from pathlib import Path

import pytest
import tomllib

ROOT = Path(__file__).resolve().parents[1]
#: folders of the project's own text (code, docs, studies); build outputs and caches excluded
TEXT_FOLDERS = ("grpodyn", "theory", "numerics", "empirical", "tests", "benchmarks", "docs",
                "studies", "notebooks")
TEXT_SUFFIXES = {".py", ".md", ".toml", ".txt", ".cfg", ".ipynb", ".rst", ".yaml", ".yml"}
SKIP_PARTS = {"__pycache__", ".venv", "build", "dist", ".pytest_cache", ".ruff_cache",
              ".hypothesis", "grpodyn.egg-info", "_build", "generated"}  # the last two: the site
#: generated, not hand-written
GENERATED = {ROOT / "numerics" / "_generated.py"}
MAX_MODULE_LINES, MAX_FUNCTION_LINES, MAX_README_LINES = 600, 120, 300
MAX_PACKAGE_DATA_BYTES, MAX_WHEEL_BYTES = 5_000_000, 8_000_000
#: the word this test looks for, spelled so that this file does not contain it
HISTORY_WORD = "ses" + "sion"


def _pyproject() -> dict:
    return tomllib.loads((ROOT / "pyproject.toml").read_text())


def _walk(folder: Path) -> Iterator[Path]:
    for path in sorted(folder.rglob("*")):
        if path.is_file() and not SKIP_PARTS.intersection(path.relative_to(ROOT).parts):
            yield path


def _package_modules() -> dict[str, Path]:
    """Every module of the installed package, by import name (the package-dir mapping)."""
    mapping = _pyproject()["tool"]["setuptools"]["package-dir"]
    modules: dict[str, Path] = {}
    for package, folder in mapping.items():
        for path in _walk(ROOT / folder):
            if path.suffix != ".py":
                continue
            parts = list(path.relative_to(ROOT / folder).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts = parts[:-1]
            name = ".".join([package, *parts])
            # a deeper mapping (grpodyn.theory -> theory/) wins over grpodyn/ itself
            modules.setdefault(name, path)
    return modules


def _resolve(name: str, modules: dict[str, Path]) -> str | None:
    """The longest known module that ``name`` starts with (``a.b.c`` -> ``a.b`` if no ``a.b.c``)."""
    while name:
        if name in modules:
            return name
        name = name.rpartition(".")[0]
    return None


def _type_checking_lines(tree: ast.AST) -> set[int]:
    lines: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            for child in node.body:
                lines.update(range(child.lineno, (child.end_lineno or child.lineno) + 1))
    return lines


def import_graph() -> dict[str, set[str]]:
    """The package's import graph from the source (AST), deferred imports included.

    An edge a -> b: module a imports module b (``from p import m`` counts as an import of the
    submodule ``p.m`` when it is one, else of ``p``). Imports under ``if TYPE_CHECKING`` are left
    out: they do not run.
    """
    modules = _package_modules()
    graph: dict[str, set[str]] = {name: set() for name in modules}
    for name, path in modules.items():
        tree = ast.parse(path.read_text(), filename=str(path))
        skip = _type_checking_lines(tree)
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        for node in ast.walk(tree):
            if getattr(node, "lineno", None) in skip:
                continue
            targets: list[str] = []
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    base = package.split(".")
                    base = base[:len(base) - node.level + 1]
                    module = ".".join([*base, node.module] if node.module else base)
                else:
                    module = node.module or ""
                targets = [f"{module}.{alias.name}" if f"{module}.{alias.name}" in modules
                           else module for alias in node.names]
            for target in targets:
                found = _resolve(target, modules) if target.startswith("grpodyn") else None
                if found is not None and found != name:
                    graph[name].add(found)
    return graph


def import_cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan), sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    sys.setrecursionlimit(max(sys.getrecursionlimit(), 10_000))

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in graph.get(node, ()):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return sorted(found)


def test_the_cycle_finder_finds_a_cycle_and_no_false_one():
    assert import_cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert import_cycles({"a": {"b"}, "b": set(), "c": {"a", "b"}}) == []


def test_the_import_graph_sees_relative_and_deferred_imports():
    graph = import_graph()
    # a relative import at the top: measure.py imports .grpo
    assert "grpodyn.empirical.deepnet.grpo" in graph["grpodyn.empirical.deepnet.measure"]
    # an import inside a function: the report reads the deep-network section when it runs
    assert "grpodyn.empirical.deepnet.section" in graph["grpodyn.report"]


def test_no_import_cycle_in_the_deep_network_instrument():
    cycles = [c for c in import_cycles(import_graph())
              if any(m.startswith("grpodyn.empirical.deepnet") for m in c)]
    assert not cycles, f"import cycles through the deep-network instrument: {cycles}"


def test_no_import_cycle_among_the_package_modules():
    cycles = import_cycles(import_graph())
    assert not cycles, "import cycles (strongly connected modules):\n" + "\n".join(
        " <-> ".join(c) for c in cycles)


def _package_data() -> list[Path]:
    """The files the package-data globs of pyproject.toml put into the wheel."""
    setuptools = _pyproject()["tool"]["setuptools"]
    mapping = setuptools["package-dir"]
    files = []
    for package, patterns in setuptools.get("package-data", {}).items():
        head = max((p for p in mapping if package == p or package.startswith(p + ".")), key=len)
        folder = ROOT / mapping[head] / Path(*package[len(head):].strip(".").split(".") or [""])
        for pattern in patterns:
            files += [p for p in folder.glob(pattern) if p.is_file()]
    return sorted(set(files))


def test_package_data_stays_small():
    """The installed data: the main job's embedded data and the forecaster's weights, < 5 MB."""
    files = _package_data()
    assert files, "no package data found: the globs or this test are wrong"
    size = sum(p.stat().st_size for p in files)
    largest = sorted(files, key=lambda p: -p.stat().st_size)[:5]
    assert size < MAX_PACKAGE_DATA_BYTES, (
        f"package data {size / 1e6:.2f} MB >= {MAX_PACKAGE_DATA_BYTES / 1e6:.0f} MB; largest: "
        + ", ".join(f"{p.relative_to(ROOT)} {p.stat().st_size / 1e6:.2f} MB" for p in largest))


@pytest.mark.slow
def test_the_wheel_is_under_8_mb(tmp_path):
    """Build the wheel as a release does (``python -m build``, isolated) and measure it."""
    pytest.importorskip("build")
    done = subprocess.run([sys.executable, "-m", "build", "--wheel", "--outdir", str(tmp_path),
                           str(ROOT)], capture_output=True, text=True, cwd=tmp_path)
    assert done.returncode == 0, done.stdout[-1000:] + done.stderr[-2000:]
    (wheel,) = tmp_path.glob("grpodyn-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    assert not [n for n in names if n.startswith("studies/") or "/studies/" in n]
    assert wheel.stat().st_size < MAX_WHEEL_BYTES, f"wheel {wheel.stat().st_size / 1e6:.2f} MB"


def _text_files(folders: tuple[str, ...] = TEXT_FOLDERS) -> Iterator[Path]:
    for name in folders:
        yield from (p for p in _walk(ROOT / name) if p.suffix in TEXT_SUFFIXES)
    if folders == TEXT_FOLDERS:
        yield from (p for p in ROOT.glob("*") if p.is_file() and p.suffix in TEXT_SUFFIXES)


#: a code term, not history: pytest's fixture scope
_CODE_TERMS = re.compile(rf"""scope\s*=\s*["']{HISTORY_WORD}["']""")
#: folders of the installed package's own code (studies and benchmarks record protocols and
#: freezes, tests name what they pin: left out)
PACKAGE_FOLDERS = ("grpodyn", "theory", "numerics", "empirical")
#: a numbered change or ticket ("revision 3", "rev3", an issue and its number): when a thing
#: came, not what it is
NUMBERED_HISTORY = re.compile(r"\b(?:revision\s+\d|rev\d|issue\s+\d)", re.IGNORECASE)
#: an issue named by its number: the text names the thing instead (the study, the target, the
#: change); checked in every text of the project, studies, benchmarks, tests, docs and README
ISSUE_NUMBER = re.compile(r"\bissues?\s+#?\d", re.IGNORECASE)
#: narration of how the work was done: the word above, the workers and their clock (a
#: counted or numbered helper, a lead who reruns but not a lead time, a clock time zone, a
#: named day; the examples below). A helper function alone is a code term, not matched.
NARRATION = re.compile(
    rf"\b{HISTORY_WORD}s?\b"
    r"|\bhelpers?\s+\d"
    r"|\b(?:other|one|two|three|four|five|six|seven|eight|nine|\d+)\s+(?:other\s+)?helpers?\b"
    r"|\bhelpers'"
    r"|\bthe\s+lead(?:'s)?\b(?![\s-]*times?\b)"
    r"|(?-i:\bUTC\b)"
    r"|\bthat\s+day\b",
    re.IGNORECASE)


def history_offenders(folders: tuple[str, ...] = TEXT_FOLDERS, *,
                      pattern: re.Pattern | None = None, suffixes: set[str] | None = None
                      ) -> list[str]:
    """Lines of the project's text that narrate how the work went, as ``path:line``.

    ``pattern`` replaces the default word; ``suffixes`` keeps only files with those suffixes.
    """
    word = pattern or NARRATION
    found = []
    for path in _text_files(folders):
        if suffixes is not None and path.suffix not in suffixes:
            continue
        for number, line in enumerate(path.read_text(errors="replace").splitlines(), 1):
            if word.search(_CODE_TERMS.sub("", line)):
                found.append(f"{path.relative_to(ROOT)}:{number}")
    return found


def test_no_history_in_the_studies_and_the_deep_network_instrument():
    found = history_offenders(("studies", "empirical/deepnet"))
    assert not found, f"{len(found)} lines: " + ", ".join(found)


def test_no_history_in_the_project_text():
    found = history_offenders()
    assert not found, f"{len(found)} lines: " + ", ".join(found)


def test_no_revision_or_issue_numbers_in_the_package():
    """The package's Python text names what a thing is, not the revision or issue it came in."""
    found = history_offenders(PACKAGE_FOLDERS, pattern=NUMBERED_HISTORY, suffixes={".py"})
    assert not found, f"{len(found)} lines: " + ", ".join(found)


def test_no_issue_numbers_in_the_project_text():
    """Studies, benchmarks, tests, docs and the README name a thing, not the issue it came in."""
    found = history_offenders(pattern=ISSUE_NUMBER)
    assert not found, f"{len(found)} lines: " + ", ".join(found)


#: an issue and its number, spelled so that this file does not contain it
_ISSUE = "iss" + "ue"


@pytest.mark.parametrize(("line", "numbered"), [
    ("the band is revision 3's", True), (f"Revision 4 ({_ISSUE} 15) adds", True),
    ("see rev3", True), ("the issue's definition", False), ("a revised design", False),
    ("tissue 15", False)])
def test_the_numbered_history_pattern(line, numbered):
    assert bool(NUMBERED_HISTORY.search(line)) is numbered


@pytest.mark.parametrize(("line", "numbered"), [
    (f"# Transfer scores ({_ISSUE} 32)", True), (f"made for {_ISSUE}s 14 and 16", True),
    (f"see {_ISSUE} #7", True), ("the issue's design logs", False), ("tissue 15", False),
    ("revision 5, frozen", False)])
def test_the_issue_number_pattern(line, numbered):
    assert bool(ISSUE_NUMBER.search(line)) is numbered


#: the narrated words, spelled so that this file does not contain them
_HELPER, _LEAD, _CLOCK = "hel" + "per", "the le" + "ad", "U" + "TC"


@pytest.mark.parametrize(("line", "narrated"), [
    (f"Those are {_HELPER} 14's files.", True), (f"(five other {_HELPER}s running)", True),
    (f"shared with four other {_HELPER}s' jobs", True), (f"one {_HELPER} training models", True),
    (f"{_LEAD} reruns the benchmark on a quiet one", True), (f"{_LEAD}'s quiet run", True),
    (f"at 13:48-13:54 {_CLOCK}", True), ("ranges over the runs of th" + "at day", True),
    (f"These {_HELPER}s form those products", False), (f"def _{_HELPER}(x):", False),
    (f"{_LEAD} time table", False), (f"{_LEAD}-time table", False),
    ("datetime.timezone.utc", False), ("a shared 2-core machine, load 5-9", False)])
def test_the_narration_pattern(line, narrated):
    assert bool(NARRATION.search(line)) is narrated


#: a file path in a docstring: a folder part and an extension, or a bare Markdown document
_CITED = re.compile(r"(?<![\w./<{-])((?:[\w.-]+/)+[\w.-]+\.(?:py|md|json|toml|npz|ipynb|png)"
                    r"|[A-Z][A-Z_]+\.md)(?![\w/])")


def _docstrings(path: Path) -> Iterator[str]:
    tree = ast.parse(path.read_text(), filename=str(path))
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            text = ast.get_docstring(node, clean=False)
            if text:
                yield text


def _exists(cited: str, path: Path) -> bool:
    if "/" not in cited:  # a bare document name: anywhere in the repository
        return any(ROOT.rglob(cited))
    candidates = [ROOT / cited, path.parent / cited]
    # a path inside a layer, written from the package root (``empirical/data/...``)
    candidates += [ROOT / cited.split("grpodyn/", 1)[-1]]
    return any(c.exists() for c in candidates)


def cited_file_offenders(folders: tuple[str, ...] = TEXT_FOLDERS) -> list[str]:
    """Files cited in docstrings that the repository does not hold, as ``path: cited``."""
    found = []
    for folder in folders:
        for path in (p for p in _walk(ROOT / folder) if p.suffix == ".py"):
            for text in _docstrings(path):
                for cited in sorted(set(_CITED.findall(text))):
                    if cited.startswith(("../", "/", "~")) or "shared/" in cited:
                        continue  # outside the repository by design (the shared data)
                    if not _exists(cited, path):
                        found.append(f"{path.relative_to(ROOT)}: {cited}")
    return found


def test_the_cited_file_finder_sees_a_missing_file(tmp_path):
    assert _CITED.findall("reads ``studies/deepnet/data/x.json`` and docs/theory.md section 3") == [
        "studies/deepnet/data/x.json", "docs/theory.md"]
    assert not _CITED.findall("writes ``drift_<size>.json`` and relaxruns{suffix}_{size}.json")


def test_files_cited_by_the_studies_and_the_deep_network_instrument_exist():
    found = cited_file_offenders(("studies", "empirical/deepnet"))
    assert not found, f"{len(found)} citations: " + "; ".join(found)


def test_every_file_cited_by_a_docstring_exists():
    found = cited_file_offenders()
    assert not found, f"{len(found)} citations: " + "; ".join(found)


def _hand_written_lines(path: Path) -> int:
    return sum(1 for line in path.read_text().splitlines() if line.strip())


def size_offenders() -> list[str]:
    """Modules over 600 hand-written (non-blank) lines and functions over 120 lines."""
    found = []
    for path in sorted(_package_modules().values()):
        if path in GENERATED:
            continue
        lines = _hand_written_lines(path)
        if lines > MAX_MODULE_LINES:
            found.append(f"{path.relative_to(ROOT)} ({lines} lines)")
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                length = (node.end_lineno or node.lineno) - node.lineno + 1
                if length > MAX_FUNCTION_LINES:
                    found.append(f"{path.relative_to(ROOT)}:{node.name} ({length} lines)")
    return found


def test_the_deep_network_instrument_is_of_a_readable_size():
    found = [f for f in size_offenders() if f.startswith("empirical/deepnet")]
    assert not found, "; ".join(found)


def test_no_module_over_600_lines_and_no_function_over_120():
    found = size_offenders()
    assert not found, f"{len(found)} offenders: " + "; ".join(found)


def test_the_readme_is_a_front_door():
    lines = len((ROOT / "README.md").read_text().splitlines())
    assert lines < MAX_README_LINES, f"README.md has {lines} lines (at most {MAX_README_LINES})"
