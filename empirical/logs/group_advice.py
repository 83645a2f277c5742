"""What a run whose groups carry no reward spread should change: the group size, not the lr.

A group of G answers whose rewards are all equal has zero advantage and no gradient
(docs/theory.md section 7). Where the diagnosis flags advantage degeneracy, most groups are in
that case, and a higher lr only scales the few that are not; the lever is G (or prompts nearer
the policy's level). For identical prompts at success rate p a group has no spread with
probability P_0(G, p) = p^G + (1 - p)^G (registry derivation ``degenerate_group_probability``);
P_0 is convex in p, so a spread of success rates across prompts leaves more groups without
spread at the same mean (Jensen). Where the diagnosis fitted the prompts' late Beta law, the
least G with E[P_0] <= 1/2 under it is advised (derivation ``prompt_pool_zero_std_share``);
otherwise the least G with P_0 <= 1/2 at the mean, a lower bound.
"""

from __future__ import annotations

import math

import numpy as np

from grpodyn.empirical.diagnostics.diagnose import Diagnosis
from grpodyn.empirical.diagnostics.series import is_success_rate, segments, window_mean
from grpodyn.empirical.logs.loaders import Run
from grpodyn.numerics.compiled import compiled

__all__ = ["group_size_for_spread", "degeneracy_advice"]

#: the largest G searched: beyond it a group is no longer a practical lever
_LARGEST_G = 4096


def group_size_for_spread(success: float, *, phi: float = math.inf, share: float = 0.5
                          ) -> int | None:
    """Return the least G at which at most ``share`` of the groups have no reward spread.

    Parameters
    ----------
    success : float
        The prompts' mean success rate p, in (0, 1).
    phi : float
        Concentration of their Beta law, p_i ~ Beta(p phi, (1 - p) phi) (docs/theory.md
        section 7); infinite (the default) for identical prompts, P_0 = p^G + (1 - p)^G.
    share : float
        The share of groups without spread allowed, E[p_i^G + (1 - p_i)^G].

    Returns
    -------
    int or None
        The least G in [2, 4096] meeting ``share``; None when p is 0 or 1 or no G in that
        range does (prompts the policy never or always solves: G is not the lever).
    """
    if not 0 < success < 1:
        return None
    groups = np.arange(2, _LARGEST_G + 1)
    if math.isfinite(phi):
        flat = compiled("prompt_pool_zero_std_share")(groups, success * phi,
                                                       (1 - success) * phi)
    else:
        flat = compiled("degenerate_group_probability")(groups, success)
    enough = np.flatnonzero(flat <= share)
    return int(groups[enough[0]]) if enough.size else None


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
        Why the lr is not the lever, and, for a success-rate reward, the least G that gives
        half the groups a spread at the late success rate (module docstring; None where the
        rate is 0 or 1).
    """
    verdict = diagnosis.modes.get("advantage_degeneracy")
    if verdict is None or not verdict.flag:
        return None
    evidence = verdict.evidence.split(";")[0]
    text = (f"the diagnosis flags advantage degeneracy ({evidence}): groups whose "
            "answers all score the same carry no gradient, and a higher lr only scales the "
            "few that do; more answers per prompt (G), or prompts nearer the policy's level, "
            "is the lever")
    need = None
    if is_success_rate(run):
        _, late, _ = segments(run.n_points)
        success = window_mean(run.reward, late)
        pool = diagnosis.prompt_pool.get("late") or {}
        phi = pool.get("phi")
        if pool.get("status") == "estimated" and phi is not None and math.isfinite(phi):
            need = group_size_for_spread(success, phi=phi)
            law = f"under the prompts' late Beta law (phi {phi:.3g})"
        else:
            need = group_size_for_spread(success)
            law = "for identical prompts (a spread of rates across prompts needs more)"
        g = diagnosis.group_size.get("value")
        now = f"; the run's G: {g}" if g else ""
        text += (f"; at the late success rate {success:.3g}, {law}, " +
                 (f"G >= {need} gives half the groups a spread{now}" if need is not None else
                  f"no G up to {_LARGEST_G} gives half the groups a spread: most prompts are "
                  "never (or always) solved, and prompts nearer the policy's level are the "
                  "lever"))
    return text, need
