"""The labelled test beds as ``grpodyn report`` scores them: scores, a figure and the checks.

:func:`score_testbeds` scores the diagnosis and the threshold rules on each test bed
(:mod:`grpodyn.empirical.diagnostics.testbed`), :func:`confusion_figure` draws their
confusion matrices, :func:`diagnose_tiny_runs` diagnoses the shipped tiny runs;
:func:`scores_claim` and :func:`healthy_claim` check the claims of the test beds
(docs/theory.md section 10).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import numpy as np

from grpodyn.empirical.data_paths import StudyDataMissing
from grpodyn.empirical.diagnostics.testbed import (
    HELDOUT_SEEDS,
    LABELS,
    TUNING_SEEDS,
    bandit_testbed,
    evaluate,
    tiny_testbed,
)
from grpodyn.ground import save_figure
from grpodyn.theory.claims import Check, Claim

__all__ = ["score_testbeds", "confusion_figure", "diagnose_tiny_runs", "scores_claim",
           "healthy_claim"]


def score_testbeds(*, progress: Callable[[Iterable[Any]], Iterable[Any]] | None = None
                   ) -> dict[str, dict[str, Any]]:
    """Build the test beds and score the diagnosis and the threshold rules on each.

    Parameters
    ----------
    progress : callable, optional
        Wraps the iteration over the test beds (a progress bar).

    Returns
    -------
    dict
        Test bed name -> ``{"runs": number of labelled runs, "scored": evaluate's result}``.
    """
    beds = {"bandit": bandit_testbed(seeds=5)}
    try:  # the tiny-LM bed is study data: absent from an installed wheel
        tiny = tiny_testbed(seeds=TUNING_SEEDS)
        heldout = tiny_testbed(seeds=HELDOUT_SEEDS)
    except StudyDataMissing:
        tiny = heldout = []
    if tiny:
        beds["tiny LM (TRL), design seeds"] = tiny
        beds["whole (bandit + tiny LM design seeds)"] = beds["bandit"] + tiny
    if heldout:  # fresh seeds, made while the diagnosis was frozen
        beds[f"tiny LM (TRL), held-out seeds {HELDOUT_SEEDS.start}-{HELDOUT_SEEDS.stop - 1}"] = \
            heldout
    items, calls = list(beds.items()), {}  # the whole bed's runs are diagnosed once
    return {name: {"runs": len(cases), "scored": evaluate(cases, calls=calls)}
            for name, cases in (progress(items) if progress else items)}


def confusion_figure(out: Path, beds: dict[str, dict[str, Any]]) -> list[tuple[str, str]]:
    """Draw the confusion matrices of the diagnosis and the rules on every bed into ``out``."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(len(beds), 2, figsize=(10, 4.2 * len(beds)), squeeze=False)
    for row, (name, bed) in enumerate(beds.items()):
        scored = bed["scored"]
        for col, (method, key) in enumerate((("diagnosis", "model"),
                                             ("threshold rules", "threshold_rules"))):
            columns = [c for c in scored[key]["confusion"][LABELS[0]]
                       if c in LABELS or any(scored[key]["confusion"][t][c] for t in LABELS)]
            matrix = np.array([[scored[key]["confusion"][t][p] for p in columns]
                               for t in LABELS])
            ax = axes[row, col]
            ax.imshow(matrix, cmap="Blues")
            for i in range(len(LABELS)):
                for j in range(len(columns)):
                    ax.text(j, i, str(matrix[i, j]), ha="center", va="center", fontsize=8)
            ax.set_xticks(range(len(columns)), [c.replace("_", "\n") for c in columns],
                          fontsize=6)
            ax.set_yticks(range(len(LABELS)), [c.replace("_", "\n") for c in LABELS],
                          fontsize=6)
            ax.set_xlabel("called")
            ax.set_ylabel("induced")
            ax.set_title(f"{name}: {method}", fontsize=9)
    fig.tight_layout()
    save_figure(fig, out / "diagnostics_confusion.png")
    plt.close(fig)
    return [("diagnostics_confusion.png", "Confusion matrices of the diagnosis and of "
             "threshold rules on the labelled test beds.")]


def diagnose_tiny_runs() -> list[tuple[str, str, str]]:
    """Diagnose each shipped tiny run: (run, primary mode or "healthy", its evidence)."""
    from grpodyn.empirical.diagnostics.diagnose import diagnose
    from grpodyn.empirical.logs.loaders import load_run
    from grpodyn.empirical.tinylm.analysis import DATA_DIR

    rows = []
    for path in sorted(DATA_DIR.glob("tiny_G*.json")):
        diagnosis = diagnose(load_run(path))
        evidence = diagnosis.modes[diagnosis.primary].evidence if diagnosis.primary else ""
        rows.append((path.stem, diagnosis.primary or "healthy", evidence))
    return rows


def scores_claim(claim: Claim, data: dict[str, dict[str, Any]]) -> list[Check]:
    """Check precision and recall of the diagnosis for every mode on each bed (section 10)."""
    rows = []
    for name, bed in data.items():
        per = bed["scored"]["model"]["per_mode"]
        rules = bed["scored"]["threshold_rules"]["per_mode"]
        # a label without runs (nan) counts as a failure: the test bed is incomplete
        worst = min(float(np.nan_to_num(min(v["precision"], v["recall"]), nan=0.0))
                    for v in per.values())
        words = "; ".join(f"{label} P {per[label]['precision']:.2f} R {per[label]['recall']:.2f}"
                          f" (rules R {rules[label]['recall']:.2f})" for label in LABELS)
        rows.append(claim.row(words, worst >= claim.values["score"],
                              subject=f"{name} test bed ({bed['runs']} labelled runs)",
                              reason_for=name))
    return rows


def healthy_claim(claim: Claim, data: dict[str, dict[str, Any]]) -> list[Check]:
    """Check that no healthy run of any bed is flagged unstable (section 10)."""
    return [claim.row(f"{bed['scored']['model']['healthy_flagged_unstable']} flagged",
                      bed["scored"]["model"]["healthy_flagged_unstable"] == 0, subject=name)
            for name, bed in data.items()]
