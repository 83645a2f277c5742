"""What a run whose groups carry no reward spread should change: the group size, not the lr.

A group of G answers whose rewards are all equal has zero advantage and no gradient
(docs/theory.md section 7). Where the diagnosis flags advantage degeneracy, most groups are in
that case, and a higher lr only scales the few that are not; the lever is G (or prompts nearer
the policy's level). For identical prompts at success rate p a group has no spread with
probability P_0(G, p) = p^G + (1 - p)^G (registry derivation ``degenerate_group_probability``);
P_0 is convex in p, so a spread of success rates across prompts leaves more groups without
spread at the same mean (Jensen), and the least G with P_0 <= 1/2 at the mean is a lower bound
on the G that gives half the groups a gradient. The prompts' Beta law that the diagnosis fits
from the zero-std share is not used: near the floor, at G = 2 or 3, it barely constrains the
spread of rates, and on the categorical simulator its G was unbounded where the identical-prompt
G restored learning (studies/advice/README.md). Where another mode is the diagnosis's primary one
(a policy concentrated onto its answers, an instability), the groups lost their spread through
it: the advice says so and names no G, since that mode's remedy comes first.
:func:`group_batch_effect` says what changing G or B does to the stiffness at a fixed lr (the
Adam B G law, sections 6 and 9).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from grpodyn.empirical.diagnostics.diagnose import Diagnosis
from grpodyn.empirical.diagnostics.modes import (
    late_without_spread,
    spread_bound_beyond_common,
    spread_need_words,
)
from grpodyn.empirical.diagnostics.series import is_success_rate, segments, window_mean
from grpodyn.empirical.logs.loaders import Run
from grpodyn.numerics.advise import bg_exponent_range
from grpodyn.numerics.prompt_pool import group_size_for_spread

__all__ = ["degeneracy_advice", "unknown_group_note", "group_batch_effect"]


def degeneracy_advice(run: Run, diagnosis: Diagnosis) -> tuple[str, int | None] | None:
    """Return the advice on G where the diagnosis flags advantage degeneracy, else None.

    Parameters
    ----------
    run : Run
        The run the diagnosis was made on.
    diagnosis : Diagnosis
        Its diagnosis (:func:`grpodyn.empirical.diagnostics.diagnose.diagnose`).

    Returns
    -------
    (str, int or None) or None
        Why the lr is not the lever, and, for a success-rate reward, the least G at which
        identical prompts at the late success rate give half the groups a spread (module
        docstring; None where the rate is 0 or 1). None when the mode is not flagged (nor
        judged, on a run too short for the modes).
    """
    verdict = diagnosis.modes.get("advantage_degeneracy")
    if verdict is None or not verdict.flag:
        return None
    _, late, _ = segments(run.n_points)
    frac = run.metrics.get("frac_reward_zero_std")
    logged = frac is not None and np.isfinite(frac[late]).any()
    evidence = (f"zero-std groups {window_mean(frac, late):.2f} of the batch late in the run"
                if logged else f"score {verdict.score:.2f}; grpodyn diagnose gives the evidence")
    primary = diagnosis.primary
    if primary not in (None, "advantage_degeneracy"):
        return (f"the diagnosis flags advantage degeneracy ({evidence}) beside its primary mode, "
                f"{primary.replace('_', ' ')}: the groups lost their spread through it, so its "
                "remedy comes first, not G", None)
    few = ("none did late in the run, so the lr moves nothing" if late_without_spread(run, late)
           else "a higher lr only scales the few that do")
    text = (f"the diagnosis flags advantage degeneracy ({evidence}): groups whose "
            f"answers all score the same carry no gradient, and {few}; more answers per prompt "
            "(G), or prompts nearer the policy's level, is the lever")
    need = None
    if is_success_rate(run):
        success = window_mean(run.reward, late)
        need = group_size_for_spread(success)
        g = diagnosis.group_size.get("value")
        now = f" (the run's G: {g})" if g else ""
        if need is not None:
            text += (f"; at the late success rate {success:.3g}, {spread_need_words(need)}{now}; "
                     "prompts that differ in difficulty need more")
    return text, need


def unknown_group_note(run: Run, diagnosis: Diagnosis | None, direction: str) -> list[str]:
    """Return the G below which a raise of the lr moves little, where G is unknown.

    A diagnosis without G and without the zero-std share cannot judge advantage degeneracy;
    near the floor or the ceiling of a success rate the bound of the module docstring still
    says which G would be degenerate.

    Parameters
    ----------
    run : Run
        The run advised.
    diagnosis : Diagnosis or None
        Its diagnosis (None: too short, no note).
    direction : str
        The advice's direction: the note is for a raise, the lever a degenerate run lacks.

    Returns
    -------
    list of str
        One note where G is unknown, degeneracy unjudged and the bound beyond
        :data:`~grpodyn.empirical.diagnostics.modes.COMMON_G`
        (:func:`~grpodyn.empirical.diagnostics.modes.spread_bound_beyond_common`); else none.
    """
    if diagnosis is None or direction != "raise" or diagnosis.group_size.get("value") \
            or diagnosis.modes["advantage_degeneracy"].judged:
        return []
    _, late, _ = segments(run.n_points)
    success = window_mean(run.reward, late)
    need = spread_bound_beyond_common(run, success)
    if need is None:
        return []
    return [f"G unknown: at the late success rate {success:.3g} {spread_need_words(need)}; if "
            "the run's G is smaller, most groups carry no gradient and a higher lr moves little: "
            "raise G first (give the group size, --group-size or group_size=, for the diagnosis "
            "to judge it)"]


def group_batch_effect(run: Run, optimizer: str | None, measured: dict[str, Any] | None
                       ) -> dict[str, Any]:
    """Say what changing G or B does at a fixed lr (docs/theory.md sections 6 and 9).

    Parameters
    ----------
    run : Run
        The advised run (its known G and B are returned with the effect).
    optimizer : str or None
        The run's optimizer: SGD's stiffness lr kappa does not depend on B G, Adam's does.
    measured : dict or None
        The B G exponent a sweep measured (``value``, ``stderr``), else None: the theory's range.

    Returns
    -------
    dict
        ``exponent`` (value or range, status, reason), ``effect`` (in words), ``group_size``
        and ``batch``.
    """
    lo, hi = bg_exponent_range()
    sgd = optimizer is not None and "sgd" in optimizer.lower()
    if measured is not None:
        e = measured["value"]
        exponent = dict(measured)
        effect = (f"doubling G or B at a fixed lr multiplies the stiffness by 2^{e:.2g} = "
                  f"{2 ** e:.2f} (tau by {2 ** -e:.2f}) and halves the reward's sampling "
                  "variance")
        if not lo - 2 * measured["stderr"] <= e <= hi + 2 * measured["stderr"]:
            effect += f"; outside the theory's range [{lo:g}, {hi:g}]: a finding, not the map"
    elif sgd:
        exponent = {"value": 0.0, "status": "theory",
                    "reason": "SGD: the stiffness lr kappa does not depend on B G"}
        effect = "the path does not depend on G or B; the noise variance falls as 1/(B G)"
    else:
        exponent = {"value": None, "range": [lo, hi], "status": "not_determined",
                    "reason": "one run cannot measure Adam's noise ratio rho_A: k ~ (B G)^e "
                    f"with e = rho_A / (2 (B G + rho_A)) between {lo:g} (signal-dominated) and "
                    f"{hi:g} (noise-dominated); a sweep over B G measures it"}
        effect = (f"doubling G or B at a fixed lr shortens tau by a factor between "
                  f"{2 ** -hi:.2f} and 1 (worth raising the lr by up to x{2 ** hi:.2f}) and "
                  "halves the reward's sampling variance; only the product B x G matters, not G "
                  "alone")
    return {"exponent": exponent, "effect": effect,
            "group_size": _known(run.meta.group_size), "batch": _known(run.meta.batch)}


def _known(entry: Any) -> Any:
    """Return a metadata entry's value, or None where it is unknown."""
    return None if entry is None else entry.value
