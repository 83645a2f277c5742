"""The headline of a diagnosis: one line that agrees with the state and the primary mode.

A run is called healthy only when no mode is flagged or undecided and its state is
``learning`` or ``converged``; a run that is ``not_learning`` or ``declining`` is never healthy,
and the headline names the state (with the step of the peak for a decline; a plateau that
the noise cannot tell from a continuing rise as such). Needs nothing beyond the standard
library.
"""

from __future__ import annotations

from collections.abc import Mapping

from grpodyn.empirical.diagnostics.verdict import ModeVerdict

__all__ = ["HEALTHY_STATES", "is_healthy", "state_words", "headline"]

HEALTHY_STATES = ("learning", "converged")


def is_healthy(primary: str | None, state: str, modes: Mapping[str, ModeVerdict]) -> bool:
    """Return True when no mode is flagged or undecided and the reward learns or converged."""
    return (primary is None and state in HEALTHY_STATES
            and not any(v.undecided for v in modes.values()))


def state_words(state: str, peak_step: float | None, resolved: bool = True,
                from_start: bool = False) -> str:
    """Name a state in words: "declining since its peak near step 120", "not learning".

    An unresolved ``converged`` (its noise cannot tell a plateau from a rise at the run's own
    pace) is named with both readings, so that the headline claims no plateau the log lacks; a
    decline from the first steps (``from_start``) names no peak, since it had none.
    """
    if state == "converged" and not resolved:
        return "converged or still rising, the noise cannot tell which"
    if state == "declining" and from_start:
        return "declining from its start" + ("" if peak_step is None else
                                             f" at step {peak_step:g}")
    if state == "declining":
        return ("declining since its peak near step " f"{peak_step:g}" if peak_step is not None
                else "declining")
    # too_short: the reward's trend is not read; a mode may still be judged and flagged
    return {"not_learning": "not learning",
            "too_short": "too short to read its trend"}.get(state, state)


def headline(primary: str | None, state: str, peak_step: float | None,
             modes: Mapping[str, ModeVerdict], resolved: bool = True,
             from_start: bool = False) -> str:
    """Write the one-line verdict of a diagnosis.

    Parameters
    ----------
    primary : str or None
        The primary flagged mode.
    state : str
        The state of the run (``state.STATES``).
    peak_step : float or None
        The step of the peak of a declining run.
    modes : mapping
        The verdict of every mode (undecided ones are named).
    resolved : bool, optional
        False for a ``converged`` state whose noise cannot tell a plateau from a continuing
        rise (``state.State.resolved``).
    from_start : bool, optional
        True for a decline from the first steps (``state.State.from_start``): no peak named.

    Returns
    -------
    str
        ``"healthy: learning"``, ``"not learning (no mode flagged)"``, ``"declining since its
        peak near step 120 (cause unknown)"``, ``"dynamical_instability (declining since ...)"``,
        ``"healthy: converged or still rising, the noise cannot tell which"``.
    """
    words = state_words(state, peak_step, resolved, from_start)
    undecided = [f"{name} (the log " + ("points to it but cannot confirm it)" if v.judged else
                                        "can neither confirm nor rule it out)")
                 for name, v in modes.items() if v.undecided]
    if primary is not None:
        return f"{primary} ({words})"
    if is_healthy(primary, state, modes):
        return f"healthy: {words}"
    if undecided:
        return f"{words}; undecided: {', '.join(undecided)}"
    if state == "declining":
        return f"{words} (cause unknown: no mode flagged)"
    return f"{words} (no mode flagged)"
