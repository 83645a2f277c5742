"""``grpodyn report``: the reproduction of the theory's claims on the embedded default.

The page assembler. The claims and their stated values come from the registry
(:mod:`grpodyn.theory.claims`), their checks from the layers that compute them (resolved by
:mod:`grpodyn.claims`); the bandit lab runs in :mod:`grpodyn.empirical.bandit.report`, the
shipped tiny runs in :mod:`grpodyn.empirical.tinylm.report`, the test beds in
:mod:`grpodyn.empirical.diagnostics.testbed_report`, the HTML in :mod:`grpodyn.html`. Writes
figures (PNG),
one self-contained HTML page that opens with what was reproduced and what disagrees and why,
and ``summary.json``.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from grpodyn.ground import dumps_json, save_figure, write_atomic
from grpodyn.ground.files import staged_folder
from grpodyn.theory.claims import Check

__all__ = ["Check", "write_report", "REPORT_MARKER"]

#: The mark of a page grpodyn report wrote (both modes): a folder whose index.html carries it is
#: an earlier report, whose files a new report may replace (``grpodyn report --out``).
REPORT_MARKER = "<!-- written by grpodyn report: re-running it replaces this folder's report -->"
#: What a ``--quick`` page says first: shorter simulations, so a smoke test, not the figures.
QUICK_TITLE = " (--quick: a smoke test, not the figures)"
QUICK_INTRO = ("Written with --quick: the bandit lab ran fewer and shorter simulations, so its "
               "numbers and the claims that rest on them are a smoke test of the pipeline, not "
               "the reproduction; run grpodyn report without --quick for the figures. ")


def _figures(out: Path) -> list[tuple[str, str]]:
    """Draw the theory's figures (regimes, refresh threshold, trajectories) into ``out``."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from grpodyn.numerics import stability
    from grpodyn.numerics.compiled import compiled
    from grpodyn.numerics.explorer import regime_map_axes
    from grpodyn.numerics.trajectory import trajectory

    figures = []
    fig, ax = plt.subplots(figsize=(7, 5.6))
    regime_map_axes(ax)
    fig.tight_layout()
    figures.append(("regimes.png", "Regimes of the on-policy map, shaded and named: the exact "
                    "critical damping curve (1 - sqrt beta)^2 and its continuum estimate, the "
                    "flip boundary and the Jury limit 2(1 + beta) beyond which the map diverges."))
    save_figure(fig, out / figures[-1][0])
    plt.close(fig)

    fig, ax = plt.subplots(figsize=(6, 4))
    ks = np.geomspace(0.005, 0.5, 40)
    for b in (0.0, 0.5, 0.9):
        exact = [stability.first_unstable_refresh(momentum=b, stiffness=k) for k in ks]
        line, = ax.plot(ks, exact, "o", ms=3, label=f"exact, beta={b}")
        ax.plot(ks, compiled("refresh_threshold_continuum")(b, ks), "-", color=line.get_color(),
                label=f"continuum 1+2c/k, beta={b}")
        ax.plot(ks, compiled("refresh_threshold_reference")(b, ks), ":", color=line.get_color(),
                label=f"reference bound c/k, beta={b}")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("stiffness k = lr kappa [1/step^2]")
    ax.set_ylabel("first unstable refresh interval K* [steps]")
    ax.legend(fontsize=6, ncol=2)
    figures.append(("refresh_threshold.png", "Refresh-interval threshold: exact Jury condition "
                    "of the monodromy matrix against the continuum estimate and the reference "
                    "paper's bound."))
    save_figure(fig, out / figures[-1][0])
    plt.close(fig)

    fig, ax = plt.subplots(figsize=(6, 4))
    t = np.linspace(0, 120, 400)
    for zeta, name in ((0.3, "oscillatory"), (1.0, "critical"), (3.0, "overdamped")):
        ax.plot(t, 0.8 - trajectory(t, e0=0.6, zeta=zeta, omega0=0.1),
                label=f"{name}: damping ratio zeta = {zeta}")
    ax.plot(t, 0.8 - 0.6 * np.exp(-t / 60.0), "k:", label="single exponential, tau = 60 steps")
    ax.axhline(0.8, color="#999", lw=0.8, ls="--", label="plateau r* = 0.8")
    ax.set_xlabel("step")
    ax.set_ylabel("expected reward")
    ax.legend(fontsize=8)
    ax.set_title("Closed-form reward curves (v0 = 0: slow start)")
    figures.append(("trajectories.png", "Closed-form trajectories in three regimes; the momentum "
                    "buffer starts at zero, so every curve starts flat."))
    save_figure(fig, out / figures[-1][0])
    plt.close(fig)
    return figures


def write_report(out: Path, *, progress: Callable[[str], None] | None = None,
                 quick: bool = False, executor: Any = "auto", bars: bool = False
                 ) -> dict[str, Any]:
    """Build the report in ``out`` (created if needed) and return its summary.

    The files are written into a staging folder inside ``out`` and replace ``out``'s only once
    all are written (:func:`grpodyn.ground.files.staged_folder`): a report that fails, or a
    file of ``out`` that cannot be replaced (a folder named summary.json), leaves the earlier
    report as it was.

    Parameters
    ----------
    out : Path
        The output folder.
    progress : callable, optional
        Receives one line per stage.
    quick : bool
        Run the bandit lab with fewer seeds and lags (for tests), not for figures.
    executor : object
        Runs the lab's simulations (:func:`grpodyn.numerics.executor.run_tasks`: a local
        process pool by default, ``"serial"``, or a Dask scheduler address or client); the
        results do not depend on it.
    bars : bool
        Show progress bars of the lab and the test beds (on a terminal only).

    Returns
    -------
    dict
        Paths, the ledger rows of every claim (``checks``), the study rows of the later routes
        to a question (``study_checks``), ``checks_agree`` / ``checks_total``,
        ``claims_agree`` / ``claims_total`` (one claim per question), ``sources`` and
        ``groups`` (agreement per source and per group of the ledger, each group with its
        one-line headline), ``disagreements`` (each with its group and reason), and the raw
        numbers of the lab, the tiny runs and the test beds.
    """
    say = progress or (lambda message: None)
    with staged_folder(out) as stage:
        return _write_report(out, stage, say=say, quick=quick, executor=executor, bars=bars)


def _write_report(out: Path, stage: Path, *, say: Callable[[str], None], quick: bool,
                  executor: Any, bars: bool) -> dict[str, Any]:
    """Write the report's files into ``stage``; the summary names them in ``out``.

    The arguments are those of :func:`write_report`; ``stage`` is the staging folder whose
    files replace ``out``'s once this returns.
    """
    from grpodyn import html
    from grpodyn.claims import evaluate, summarise
    from grpodyn.empirical.bandit.report import finish_bandit_lab, start_bandit_lab
    from grpodyn.empirical.deepnet.section import comparison_data
    from grpodyn.empirical.diagnostics.testbed_report import (
        confusion_figure,
        diagnose_tiny_runs,
        score_testbeds,
    )
    from grpodyn.empirical.tinylm.report import probe_data, tiny_runs_data
    from grpodyn.progress import progress_bar
    from grpodyn.theory import build_info, registry, to_latex

    say("deriving the theory registry")
    start = time.perf_counter()
    derivations = registry()
    derive_seconds = time.perf_counter() - start
    # the lab's simulations run in the pool (or on Dask) while this process does the rest
    lab_state = start_bandit_lab(quick=quick, executor=executor,
                                 bar=None if bars else False, say=say)
    say("checking the stated results")
    checks = evaluate("theory")
    say("drawing figures")
    figures = _figures(stage)
    say("tiny-model runs: fits and group sizes")
    tiny, tiny_figures = tiny_runs_data(stage)
    tiny_checks = [] if tiny is None else evaluate("tiny LM runs", tiny)
    probe = probe_data()
    tiny_checks += [] if tiny is None or probe is None else evaluate("curvature probe", probe)
    say("diagnostics: the labelled test beds")
    beds = score_testbeds(progress=lambda items: progress_bar(
        items, total=len(items), description="test beds", enabled=bars))
    if not any(name.startswith("tiny LM") for name in beds):
        say("diagnostics: the tiny-LM test beds are study data (studies/tiny_grids/data), "
            "absent here: the bandit bed alone is scored")
    diag_checks = evaluate("test beds", beds)
    diag_figures = confusion_figure(stage, beds)
    diag_rows = diagnose_tiny_runs()
    say("bandit lab: waiting for the simulations")
    lab, bandit_figures, bandit_raw = finish_bandit_lab(stage, lab_state)
    checks += evaluate("bandit lab", lab) + tiny_checks + diag_checks
    deepnet = comparison_data()  # the deep network, predicted before its runs
    checks += [] if deepnet is None else evaluate("deep network", deepnet)
    study = [c for c in checks if c.study]  # later routes to a question: the study's rows
    checks = [c for c in checks if not c.study]
    figures += bandit_figures + tiny_figures + diag_figures
    summary_rows = summarise(checks)
    info = build_info()
    page = html.page(
        title="grpodyn: the mean-field theory of GRPO, reproduced" + (QUICK_TITLE if quick else ""),
        intro=(QUICK_INTRO if quick else "") +
              f"{len(derivations)} derivations ({info.source if info else 'derived'} in "
              f"{derive_seconds:.2f} s). One claim per question, each with the prediction "
              f"fixed before it was checked: {summary_rows['claims_agree']} of "
              f"{summary_rows['claims_total']} hold.",
        sections=[REPORT_MARKER, html.summary_block(summary_rows, checks=checks),
                  html.checks_table(checks),
                  html.study_table(study), html.figures_block(figures),
                  html.diagnosis_table(diag_rows),
                  html.derivations_table(derivations.values(), to_latex)])
    write_atomic(stage / "index.html", page)
    summary = {"out": str(out), "html": str(out / "index.html"), "quick": quick,
               "figures": [str(out / name) for name, _ in figures],
               "derivations": len(derivations), "derivation_seconds": derive_seconds,
               "checks": [c.__dict__ for c in checks],
               "study_checks": [c.__dict__ for c in study],
               **summary_rows,
               "bandit": bandit_raw, "tiny_runs": {} if tiny is None else tiny.to_dict(),
               "diagnostics": {name: {k: v for k, v in bed["scored"].items() if k != "cases"}
                               for name, bed in beds.items()}}
    write_atomic(stage / "summary.json", dumps_json(summary, indent=2))
    return summary
