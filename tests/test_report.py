"""The main job: ``grpodyn report`` writes its figures and HTML."""

from __future__ import annotations

import html
import re
import shutil
import subprocess

import pytest

from grpodyn.cli import main


@pytest.fixture(scope="module")
def quick_report(tmp_path_factory):
    """The quick report, built once for the tests of this module."""
    out = tmp_path_factory.mktemp("report")
    from grpodyn.report import write_report

    return out, write_report(out, quick=True)


def test_report_writes_html_figures_and_summary(quick_report):
    out, summary = quick_report
    page = (out / "index.html").read_text()
    for figure in summary["figures"]:
        name = figure.rsplit("/", 1)[-1]
        assert f'src="{name}"' in page
        assert (out / name).stat().st_size > 10_000
    assert summary["checks_total"] >= 20
    assert any(c["claim"].startswith("bandit:") for c in summary["checks"])
    # theory and bandit checks all hold but the stated value's rounding of the d = 2 threshold; the
    # rows with tiny-LM runs report measurements of shipped runs (findings, both ways: the TRL
    # test beds miss 0.9 for two modes), so they are only required to be present
    failing = [c["claim"] for c in summary["checks"]
               if not c["agrees"]
               and not c["claim"].startswith(("tiny LM", "diagnosis on the tiny",
                                              "diagnosis on the whole", "deep net"))]
    # the bandit's concentration runs end at reward 1.00: convergence by the diagnosis's
    # definition (studies/tiny_grids/findings.md, section 4b), so the bandit bed misses 0.9 for
    # that label
    assert failing == ["staleness threshold k*, beta=0.9, d=2",
                       "diagnosis on the bandit test bed (25 labelled runs)"]
    assert any(c["claim"].startswith("tiny LM") for c in summary["checks"])
    # predicted-vs-observed rows of the deep network, met and not met
    # (studies/deepnet/findings.md, section 10)
    assert any(c["claim"].startswith("deep net") for c in summary["checks"])
    assert any(c["claim"].startswith("diagnosis on the bandit") and c["agrees"]
               for c in summary["checks"])
    # a --quick page says that it is a smoke test, first, where a reader looks
    assert summary["quick"] is True
    assert "a smoke test, not the figures" in page[:page.index("<table")]


CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")


@pytest.mark.skipif(CHROMIUM is None, reason="headless Chromium (Debian package) not installed")
def test_report_renders_in_headless_chromium(quick_report):
    """Chromium loads the page and decodes every figure (naturalWidth > 0)."""
    out, summary = quick_report
    probe = out / "render_probe.html"  # the page plus a script that records what loaded
    probe.write_text((out / "index.html").read_text().replace(
        "</body>", "<script>window.addEventListener('load', () => document.body.setAttribute("
        "'data-loaded', [...document.images].map(i => i.naturalWidth).join(',')));</script>"
        "</body>"))
    dom = subprocess.run([CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu",
                          "--virtual-time-budget=10000", "--dump-dom", probe.as_uri()],
                         capture_output=True, text=True, timeout=120, check=True).stdout
    widths = [int(w) for w in re.search(r'data-loaded="([0-9,]*)"', dom).group(1).split(",")]
    assert len(widths) == len(summary["figures"]) and all(w > 100 for w in widths)
    assert "Stated results against computed ones" in dom
    assert "The study: later routes to the same questions" in dom


def test_every_claim_has_a_check_and_every_row_comes_from_the_registry(quick_report):
    """The registry is the report: each claim resolves to a computing function, each row of
    the page is a registered claim's, and with the shipped data every claim yields a row."""
    from grpodyn.claims import resolve
    from grpodyn.theory.claims import SOURCES, claims

    registered = claims()
    assert len({c.key for c in registered}) == len(registered) >= 25
    for claim in registered:
        assert callable(resolve(claim)), claim.key
        assert claim.source in SOURCES and claim.section and claim.stated
    _, summary = quick_report
    keys = [row["key"] for row in summary["checks"]]
    assert set(keys) <= {c.key for c in registered}
    assert set(keys) == {c.key for c in registered}  # shipped data: every claim is checked


def test_stated_values_live_in_the_registry_only():
    """No stated value of the theory typed into the report or the checks: they read the claim."""
    from pathlib import Path

    import grpodyn

    root = Path(grpodyn.__file__).resolve().parents[1]
    for path in ("grpodyn/report.py", "numerics/claim_checks.py"):
        text = (root / path).read_text()
        for literal in ("0.0513", "0.0265", "0.91", "(0.0, 40, 41)"):
            assert literal not in text, (path, literal)


def test_the_theory_layer_registry_imports_neither_numpy_nor_sympy():
    import subprocess
    import sys

    code = ("import sys; from grpodyn.theory.claims import claims; assert len(claims()) > 20; "
            "assert 'numpy' not in sys.modules and 'sympy' not in sys.modules, "
            "sorted(m for m in sys.modules if m.split('.')[0] in ('numpy', 'sympy'))")
    subprocess.run([sys.executable, "-c", code], check=True)


def test_the_page_opens_with_what_disagrees_and_why(quick_report, capsys):
    """A summary block before the long table: per group of the ledger its headline and every
    disagreement with its one-line reason from the registry."""
    out, summary = quick_report
    page = (out / "index.html").read_text()
    assert page.index('<section id="summary">') < page.index("Stated results against")
    failing = [c for c in summary["checks"] if not c["agrees"]]
    assert [d["claim"] for d in summary["disagreements"]] == [c["claim"] for c in failing]
    assert sum(s["total"] for s in summary["sources"].values()) == summary["checks_total"]
    for d in summary["disagreements"]:
        # every known disagreement has its recorded reason; a new one shows up here
        assert d["reason"], f"no recorded reason for {d['claim']!r}: add it to the registry"
        assert html.escape(d["reason"], quote=True) in page
        assert d["group"] == summary["sources"][d["source"]]["group"]
    for group in summary["groups"].values():
        assert html.escape(group["headline"], quote=True) in page


def test_the_ledger_counts_one_claim_per_question_in_three_groups(quick_report):
    """Three groups, one claim per question: the deep network's later routes are study rows,
    kept and linked, never counted; a claim holds when all its ledger rows agree."""
    from grpodyn.theory.claims import GROUPS, claims

    _, summary = quick_report
    assert list(summary["groups"]) == list(GROUPS)
    assert summary["claims_total"] == len(claims())
    keys = [c["key"] for c in summary["checks"]]
    deepnet = [c for c in claims() if c.group == GROUPS[2]]
    assert sorted(k for k in keys if k.startswith("deepnet_")) == sorted(c.key for c in deepnet)
    assert all(c.study for c in deepnet)
    study = summary["study_checks"]
    assert len(study) > 50 and all(c["study"] and c["key"].startswith("deepnet_")
                                   for c in study)
    assert not any(c["study"] for c in summary["checks"])
    real = summary["groups"][GROUPS[2]]
    assert real["claims_total"] == len(deepnet) == real["total"]
    assert "lr limit with momentum 0.9" in real["holds"]
    assert "relaxation time" in real["fails"]
    assert real["studies"]
    for name, group in summary["groups"].items():
        assert group["headline"].startswith(f"{name}: {group['claims_agree']} of "
                                            f"{group['claims_total']}")
        assert group["claims_agree"] == len(group["holds"])
        assert group["claims_agree"] + len(group["fails"]) == group["claims_total"]
    assert summary["claims_agree"] == sum(g["claims_agree"] for g in summary["groups"].values())


def test_the_terminal_fits_one_screen(quick_report, capsys):
    """`grpodyn report` prints a line per group, a line per disagreement and the page: no
    reason paragraphs, about 40 lines at most."""
    from grpodyn.cli import _LINE, _print_report

    _, summary = quick_report
    _print_report({"html": summary["html"], "derivations": summary["derivations"],
                   "checks": "x of y agree", "claims": "a of b hold",
                   "sources": summary["sources"], "groups": summary["groups"],
                   "disagreements": summary["disagreements"]})
    printed = capsys.readouterr().out
    lines = printed.splitlines()
    assert len(lines) <= 40 and all(len(line) <= _LINE for line in lines)
    assert " ".join(printed.split()).count(": ") >= len(summary["disagreements"])
    for group in summary["groups"].values():  # wrapped, each from its own line
        assert " ".join(group["headline"].split()) in " ".join(printed.split())
        assert f"  {group['headline'][:40]}" in lines[1:] or any(
            line.startswith(f"  {group['headline'][:40]}") for line in lines)
    listed = [line for line in lines if line.startswith("  - ")]
    assert len(listed) == len(summary["disagreements"])
    assert not any(d["reason"][:60] in "\n".join(lines) for d in summary["disagreements"])
    assert lines[-1].endswith(summary["html"])


def test_report_refuses_a_file_as_output(tmp_path, capsys):
    target = tmp_path / "a_file"
    target.write_text("keep me")
    assert main(["report", "--out", str(target)]) == 2
    assert target.read_text() == "keep me"
    assert "--out" in capsys.readouterr().err


def test_lab_results_unchanged_by_the_speed_work(quick_report):
    """The quick report's bandit lab against its results before the speed work (commit d532ebf):
    same thresholds and lags, every number equal to round-off (the simulator's paths are
    bit-identical; the enumeration is vectorised, the stability searches exact)."""
    import json
    from pathlib import Path

    _, summary = quick_report
    before = json.loads((Path(__file__).parent / "data" /
                         "report_quick_bandit_before_issue18.json").read_text())
    from grpodyn.ground import finite_json

    now = finite_json(summary["bandit"])  # as `grpodyn report --json` prints it

    added = {"predicted_largest_stable"}  # a threshold's largest stable lag, a key added since

    def same(a, b, where):
        if isinstance(a, dict):
            assert set(b) <= set(a) and set(a) - set(b) <= added, where
            for key in b:
                same(a[key], b[key], f"{where}/{key}")
        elif isinstance(a, list):
            assert len(a) == len(b), where
            for i, (x, y) in enumerate(zip(a, b, strict=True)):
                same(x, y, f"{where}[{i}]")
        elif isinstance(a, float) and isinstance(b, float):
            assert a == pytest.approx(b, rel=1e-9, abs=1e-15, nan_ok=True), where
        else:
            assert a == b, where

    same(now, before, "bandit")
    for kind, results in before["thresholds"].items():
        assert [r["observed"] for r in results] == \
            [r["observed"] for r in now["thresholds"][kind]], kind
        assert all(r["predicted_largest_stable"] == r["predicted"] - 1
                   for r in now["thresholds"][kind] if r["predicted"] is not None), kind


def test_study_rows_are_never_counted_and_a_claim_holds_only_whole():
    """Seeded rows: a study row that agrees adds nothing; a claim with one failing row of two
    fails, and its group's headline names it with its count."""
    from grpodyn.claims import summarise
    from grpodyn.theory.claims import GROUPS, get_claim

    fit, lr = get_claim("tiny_fit"), get_claim("deepnet_lr_max_momentum")
    rows = [fit.row("ok", True, subject="a"), fit.row("low", False, subject="b"),
            lr.row("met", True), lr.row("later route", True, study=True),
            lr.row("later route", False, study=True)]
    summary = summarise(rows)
    assert (summary["checks_agree"], summary["checks_total"]) == (2, 3)
    assert (summary["claims_agree"], summary["claims_total"]) == (1, 2)
    small, real = summary["groups"][GROUPS[1]], summary["groups"][GROUPS[2]]
    assert small["fails"] == [f"{fit.question} (1 of 2)"] and not small["holds"]
    assert small["headline"] == (f"{GROUPS[1]}: 0 of 1 claims hold (1 of 2 checks); "
                                 f"not: {fit.question} (1 of 2)")
    assert real["headline"] == f"{GROUPS[2]}: 1 of 1 questions predicted; every one holds"
    assert [d["group"] for d in summary["disagreements"]] == [GROUPS[1]]
    assert summary["disagreements"][0]["reason"] == fit.reason


def test_the_terminal_says_a_quick_ledger_is_a_smoke_test(capsys):
    from grpodyn.cli.report import print_human

    result = {"derivations": 1, "claims": "1 of 1 hold", "checks": "1 of 1 agree",
              "groups": {}, "disagreements": [], "html": "index.html"}
    print_human({"quick": "a smoke test (shorter simulations), not the figures", **result})
    assert "--quick: a smoke test" in capsys.readouterr().out.splitlines()[1]
    print_human(result)
    assert "--quick" not in capsys.readouterr().out
