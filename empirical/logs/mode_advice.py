"""What the diagnosis's failure modes change in the learning-rate advice of :mod:`.advice`.

The lr advice reads the reward's relaxation; the diagnosis (docs/theory.md section 10) reads
what the reward's curve alone does not show. Two findings change the advice's basis or lever,
and every flagged mode is named:

- **the policy moved while the reward did not** (:func:`concentration_evidence`): the
  diagnosis flags policy concentration, or the reward stayed flat below its ceiling while the
  entropy fell to half its start or below. A softmax policy's entropy changes by
  -lr Cov(log pi, pi A) per step, in proportion to the lr, so the policy moved; a reward that
  stayed flat meanwhile is then no slow relaxation, and the bound a flat run gives, tau > N so
  k < (1 - beta) / N, does not hold: the steps concentrated the policy faster than the
  reward's signal moved it. The advice lowers the lr by the margin and names the concentration's
  remedy. A reward that fell beyond its noise keeps its own basis (the stability limit, which
  lowers it as well), and a reward pinned at one value keeps its own (no group has spread: the
  lr moves nothing).
- **advantage degeneracy**: most groups carry no gradient and the lever is G, not the lr
  (:mod:`.group_advice`), except after a fall, whose remedy comes first.
- :func:`mode_notes` names every flagged mode with what to try and gives the G to recommend;
  :func:`state_notes` explains a slow mode on a run the diagnosis reads as converged, and an
  overshoot on a run it reads as declining.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from grpodyn.empirical.diagnostics.diagnose import MIN_POINTS, Diagnosis, diagnose
from grpodyn.empirical.diagnostics.modes import entropy_fall
from grpodyn.empirical.diagnostics.series import is_success_rate, segments, window_mean
from grpodyn.empirical.diagnostics.verdict import CEILING, FLAG_SCORE, REMEDIES
from grpodyn.empirical.logs.group_advice import degeneracy_advice, unknown_group_note
from grpodyn.empirical.logs.loaders import Run

__all__ = ["run_diagnosis", "instability_evidence", "concentration_evidence", "mode_notes",
           "state_notes"]

_GERUND = {"raise": "raising", "keep": "keeping", "lower": "lowering"}


def run_diagnosis(run: Run) -> Diagnosis | None:
    """Return the run's diagnosis, which the advice reads; None below its fewest points."""
    return diagnose(run) if run.n_points >= MIN_POINTS else None


def instability_evidence(diagnosis: Diagnosis | None) -> dict[str, Any] | None:
    """Return the basis of a lowered lr where the diagnosis flags an instability without a fall.

    A reward that oscillates around its trend (complex AR(2) poles near the unit circle) or
    whose slow fluctuations swell beyond its noise is a map near its stability limit
    (docs/theory.md sections 5 and 10): its stiffness is bounded from below, and a raise would
    take it past the limit. The advice lowers the lr by the margin, as after a fall, so that it
    never points against the diagnosis's remedy. A fall keeps its own basis (the advice's trend
    reads it first).

    Parameters
    ----------
    diagnosis : Diagnosis or None
        The run's diagnosis (:func:`run_diagnosis`); None (too short) gives None.

    Returns
    -------
    dict or None
        The tau evidence of :mod:`.advice` with ``kind`` ``instability`` (no relaxation time:
        the stiffness is bounded from below, status ``bound``), or None.
    """
    if diagnosis is None or not diagnosis.modes["dynamical_instability"].flag:
        return None
    return {"kind": "instability", "value": None, "lower": None, "upper": None,
            "status": "bound",
            "method": f"the diagnosis flags dynamical instability "
                      f"({diagnosis.modes['dynamical_instability'].evidence}): the stiffness is "
                      "near its stability limit (docs/theory.md section 5)"}


def concentration_evidence(diagnosis: Diagnosis | None, run: Run, *, flat: bool
                           ) -> dict[str, Any] | None:
    """Return the basis of a lowered lr where the policy moved while the reward did not.

    Two cases, on runs long enough for a diagnosis: the diagnosis flags policy concentration
    (the groups confirm it), or the reward stayed flat (``flat``), below the ceiling of a
    success rate, while the entropy fell to half its start or below over a window as long as
    the run's last quarter (the threshold at which the diagnosis reads the entropy alone as
    pointing to a concentration). In the second case the groups may not confirm a concentration
    (the diagnosis then flags none), but a reward that did not move while the policy did is no
    slow relaxation either.

    Parameters
    ----------
    diagnosis : Diagnosis or None
        The run's diagnosis (:func:`run_diagnosis`); None (too short) gives None.
    run : Run
        The run (its ``entropy`` metric, where logged).
    flat : bool
        Whether the reward stayed flat over the run (the advice's trend).

    Returns
    -------
    dict or None
        The tau evidence of :mod:`.advice` with ``kind`` ``policy_concentration`` (no relaxation
        time: the lr is bounded from above, status ``bound``), or None.
    """
    if diagnosis is None:
        return None
    if diagnosis.modes["policy_concentration"].flag:
        seen = (f"the diagnosis flags policy concentration "
                f"({diagnosis.modes['policy_concentration'].evidence})")
    elif flat and not _at_ceiling(run) and (fall := _entropy_fall(run)) is not None \
            and fall <= 1 - FLAG_SCORE:
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


def _at_ceiling(run: Run) -> bool:
    """Whether a success rate ends at its ceiling, where a falling entropy is convergence."""
    late = segments(run.n_points)[1]
    return is_success_rate(run) and window_mean(run.reward, late) >= CEILING


def _entropy_fall(run: Run) -> float | None:
    """Return the entropy's lowest window mean over its early mean (None: not logged).

    The diagnosis's own reading (:func:`~grpodyn.empirical.diagnostics.modes.entropy_fall`).
    """
    entropy = run.metrics.get("entropy")
    if entropy is None or np.isfinite(entropy).sum() < 4:
        return None
    early, late, _ = segments(run.n_points)
    fall = entropy_fall(entropy, early, late)
    return None if fall is None else fall.ratio


def mode_notes(run: Run, diagnosis: Diagnosis | None, tau: dict[str, Any], direction: str,
               group_size: int | None) -> tuple[list[str], int | None]:
    """Return the notes on the modes the diagnosis flags, and the G to recommend.

    Each flagged mode is named with what to try: the lr does not cure it alone. After a fall
    (``tau`` of kind ``stability_limit``) the fall's remedy comes first: advantage degeneracy is
    named with the others, no G is advised, and an instability needs no note where it set the
    basis (a fall, or the flag itself: :func:`instability_evidence`) or where an overshoot did
    (the ringing it flags is the overshoot's); elsewhere (a pinned
    reward) its note says the reward's trend did. Otherwise degeneracy gets the G
    advice of :mod:`.group_advice`: the least G that gives half the groups a spread,
    recommended where it exceeds the run's known ``group_size`` (an unknown G stays unknown:
    the words give the bound). A concentration that set the basis without the diagnosis
    flagging it gets the concentration's remedy.
    """
    fell = tau["kind"] == "stability_limit"
    out = []
    for name, verdict in (diagnosis.modes.items() if diagnosis is not None else ()):
        if not verdict.flag or (name == "advantage_degeneracy" and not fell) \
                or (name == "dynamical_instability"
                     and tau["kind"] in ("stability_limit", "instability", "overshoot")):
            continue
        why = ("the reward's trend sets this direction" if name == "dynamical_instability"
               else f"{_GERUND[direction]} the lr does not cure it alone")
        out.append(f"the diagnosis flags {name} (grpodyn diagnose says why); {why}; "
                   f"try: {REMEDIES[name]}")
    if tau["kind"] == "policy_concentration" and diagnosis is not None \
            and not diagnosis.modes["policy_concentration"].flag:
        out.append("the entropy fell to half its start or below while the reward stayed flat; "
                   "the diagnosis does not flag a concentration (the groups do not confirm it), "
                   f"but the policy moved; try: {REMEDIES['policy_concentration']}")
    advice = None if fell or diagnosis is None else degeneracy_advice(run, diagnosis)
    if advice is None:
        return out + unknown_group_note(run, diagnosis, direction), group_size
    words, least = advice
    more = least is not None and group_size is not None and least > group_size
    return [*out, words], least if more else group_size


def state_notes(tau: dict[str, Any], diagnosis: Diagnosis | None) -> list[str]:
    """Say why the advice's reading of a run is no contradiction of the diagnosis's state.

    A slow mode on a run read as converged; an overshoot on a run read as declining.
    """
    state = None if diagnosis is None else diagnosis.state
    if tau["kind"] == "slow_mode" and state == "converged":
        return ["the diagnosis reads this run as converged: the line through its last quarter "
                "rises by less than twice its standard error; the slope of the last third, a "
                "longer window, is beyond its noise: a rise too slow for the last quarter to "
                "show, which the advice reads as a slow mode"]
    if tau["kind"] == "overshoot" and state == "declining":
        return ["diagnose calls this run declining (a fall from its peak beyond its noise); the "
                "advice reads that fall as a stable run's overshoot, since the end keeps more "
                "than half of the rise and no longer falls"]
    return []
