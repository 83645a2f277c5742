"""What the diagnosis's failure modes change in the learning-rate advice of :mod:`.advice`.

The lr advice reads the reward's relaxation; the diagnosis (docs/theory.md section 10) reads
what the reward's curve alone does not show, and three of its findings change the advice:

- **policy concentration** (:func:`concentration_evidence`): the policy's entropy collapsed
  below the reward's ceiling, with the groups confirming it, or it halved while the reward
  stayed flat. The policy moved: a softmax
  policy's entropy changes by -lr Cov(log pi, pi A) per step, in proportion to the lr. A reward
  that stayed flat meanwhile is then no slow relaxation, and the bound a flat run gives, tau > N
  so k < (1 - beta) / N, does not hold; the steps concentrated the policy faster than the
  reward's signal moved it. The advice lowers the lr by the margin and names the mode's remedy
  first. A reward that fell beyond its noise keeps its own basis (the stability limit), which
  lowers it as well.
- **advantage degeneracy** (:func:`groups_without_spread`): most groups carry no gradient and
  the lever is G, not the lr (:mod:`.group_advice`).
- every flagged mode is named with what to try (:func:`flagged_modes`), and a slow mode on a
  run the diagnosis reads as converged is explained (:func:`converged_note`).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from grpodyn.empirical.diagnostics.diagnose import MIN_POINTS, Diagnosis, diagnose
from grpodyn.empirical.diagnostics.series import lowest_window, segments, window_mean
from grpodyn.empirical.diagnostics.verdict import FLAG_SCORE, REMEDIES
from grpodyn.empirical.logs.group_advice import degeneracy_advice
from grpodyn.empirical.logs.loaders import Run

__all__ = ["run_diagnosis", "concentration_evidence", "groups_without_spread", "flagged_modes",
           "converged_note"]

_GERUND = {"raise": "raising", "keep": "keeping", "lower": "lowering"}


def run_diagnosis(run: Run) -> Diagnosis | None:
    """Return the run's diagnosis, which the advice reads; None below its fewest points."""
    return diagnose(run) if run.n_points >= MIN_POINTS else None


def concentration_evidence(diagnosis: Diagnosis | None, run: Run, *, flat: bool
                           ) -> dict[str, Any] | None:
    """Return the basis of a lowered lr where the policy moved while the reward did not.

    Two cases: the diagnosis flags policy concentration (the groups confirm it), or the reward
    stayed flat (``flat``) while the entropy fell to half its start or below over a window as
    long as the run's last quarter (the diagnosis's own threshold for an entropy that alone
    points to a concentration; without the groups' confirmation the diagnosis abstains, but a
    reward that did not move then cannot be a slow relaxation either).

    Parameters
    ----------
    diagnosis : Diagnosis or None
        The run's diagnosis (:func:`run_diagnosis`).
    run : Run
        The run (its ``entropy`` metric, where logged).
    flat : bool
        Whether the reward stayed flat over the run (the advice's trend).

    Returns
    -------
    dict or None
        The tau evidence of :mod:`.advice` with ``kind`` ``policy_concentration`` (no relaxation
        time: the collapse bounds the lr from above, status ``bound``), or None.
    """
    verdict = None if diagnosis is None else diagnosis.modes.get("policy_concentration")
    if verdict is not None and verdict.flag:
        seen = f"the diagnosis flags policy concentration ({verdict.evidence})"
    elif flat and (fall := _entropy_fall(run)) is not None and fall <= 1 - FLAG_SCORE:
        seen = (f"the reward stayed flat while the entropy fell to x{fall:.2g} of its start "
                "at its lowest")
    else:
        return None
    return {"kind": "policy_concentration", "value": None, "lower": None, "upper": None,
            "status": "bound",
            "method": f"{seen}: the policy moved, its entropy falling in proportion to the lr, "
                      "while the reward did not follow; a flat reward is then no slow "
                      "relaxation, and the steps concentrated the policy faster than the "
                      "reward's signal moved it"}


def _entropy_fall(run: Run) -> float | None:
    """Return the entropy's lowest window mean over its early mean (None: not logged)."""
    entropy = run.metrics.get("entropy")
    if entropy is None or np.isfinite(entropy).sum() < 4:
        return None
    early, late, _ = segments(run.n_points)
    start = window_mean(entropy, early)
    if not (np.isfinite(start) and start > 0):
        return None
    low, _ = lowest_window(entropy, early.stop, late.stop - late.start)
    return max(low, 0.0) / start


def groups_without_spread(run: Run, diagnosis: Diagnosis | None, group_size: int | None
                          ) -> tuple[list[str], int | None]:
    """Return the advice on G where the diagnosis flags degeneracy, and the G to recommend.

    :mod:`.group_advice`: the lr is not the lever where most groups carry no gradient; the G
    recommended is the least that gives half the groups a spread where that exceeds the run's
    known ``group_size``, else the run's (an unknown G stays unknown: the words give the bound).
    """
    advice = None if diagnosis is None else degeneracy_advice(run, diagnosis)
    if advice is None:
        return [], group_size
    words, least = advice
    more = least is not None and group_size is not None and least > group_size
    return [words], least if more else group_size


def flagged_modes(diagnosis: Diagnosis | None, direction: str, *, g_advised: bool
                  ) -> list[str]:
    """Name the modes the diagnosis flags, with what to try: the lr does not cure them alone.

    Advantage degeneracy is left to :func:`groups_without_spread` where that advises on G
    (``g_advised``: every run but one whose reward fell, whose fall's remedy comes first).
    """
    out = []
    for name, verdict in (diagnosis.modes.items() if diagnosis is not None else ()):
        if name == "advantage_degeneracy" and g_advised:
            continue  # the G advice of groups_without_spread says it, with the G to try
        if verdict.flag and not (name == "dynamical_instability" and direction == "lower"):
            why = ("the reward's trend sets this direction" if name == "dynamical_instability"
                   else f"{_GERUND[direction]} the lr does not cure it alone")
            out.append(f"the diagnosis flags {name} (grpodyn diagnose says why); {why}; "
                       f"try: {REMEDIES[name]}")
    return out


def converged_note(tau: dict[str, Any], diagnosis: Diagnosis | None) -> list[str]:
    """Say why a slow mode on a run the diagnosis reads as converged is no contradiction."""
    if tau["kind"] != "slow_mode" or diagnosis is None or diagnosis.state != "converged":
        return []
    return ["the diagnosis reads this run as converged: the line through its last quarter "
            "rises by less than twice its standard error; the slope of the last third, a "
            "longer window, is beyond its noise: a rise too slow for the last quarter to show, "
            "which the advice reads as a slow mode"]
