"""The advice on a run that overshot its plateau and settled: how far its stiffness is past k_s.

A stable map with momentum beta, started from rest, overshoots its plateau by a share OS of the
gain that grows with the stiffness k from critical damping, k_c = (1 - sqrt(beta))^2, where it is
0, toward the stability limit (docs/theory.md section 4;
:func:`~grpodyn.numerics.settling.first_overshoot`). A run read as ``overshot``
(:func:`~grpodyn.empirical.logs.trend.settled_overshoot`) measures OS from below (a running mean
flattens the peak), so its stiffness is at least k(OS)
(:func:`~grpodyn.numerics.settling.overshoot_stiffness`), and it held, so k < k_max. The fastest
into the 10% band for good, k_s (``numerics.settling``), overshoots within the band: a run whose
k(OS) lies above k_s settles sooner at a lower lr, down to x k_s / k(OS) or below (at most a
halving a step, as after a fall); a smaller overshoot cannot place k on either side of k_s, and
the lr is kept; an overshoot that no stable k gives is lowered by the margin. Every k from k_c to
the flip relaxes with the pole modulus sqrt(beta): a higher lr gains no speed there. The reading
leaves out a lag (K > 1 or staleness moves k_c a little) and the reward's own curvature near the
range's ends.
"""

from __future__ import annotations

from typing import Any

from grpodyn.empirical.logs.trend import Trend
from grpodyn.numerics.advise import BAND, settling_target
from grpodyn.numerics.settling import first_overshoot, overshoot_stiffness

__all__ = ["overshoot_evidence", "overshoot_ratios"]


def overshoot_evidence(trend: Trend, momentum: float) -> dict[str, Any]:
    """Return the tau evidence of an ``overshot`` run: kind ``overshoot``, with k's lower bound.

    Parameters
    ----------
    trend : Trend
        The run's reading, of kind ``overshot`` (its ``overshoot``, OS [fraction of the gain]).
    momentum : float
        beta in (0, 1) (the run's, or the advice's assumed one).

    Returns
    -------
    dict
        ``kind`` ``overshoot``, ``status`` ``bound``, ``overshoot`` (OS), ``stiffness_lower``
        (k(OS) [1/step^2], None where OS is 0 or no stable k reaches it),
        ``settling_stiffness`` (k_s) with its own overshoot ``settling_overshoot``,
        ``critical_stiffness`` (k_c), ``value``, ``lower`` and
        ``upper`` (None: no tau is read) and ``method``.
    """
    target = settling_target(momentum)
    share = trend.overshoot
    lowest = (overshoot_stiffness(momentum=momentum, overshoot=share)
              if momentum > 0 and share is not None and share > 0 else None)
    bound = (f"k >= k(OS) = {lowest:.3g} per step (the map's response from rest)"
             if lowest is not None else "k > k_c")
    return {"kind": "overshoot", "value": None, "lower": None, "upper": None,
            "status": "bound", "overshoot": share, "stiffness_lower": lowest,
            "settling_stiffness": target["stiffness"],
            "settling_overshoot": float(first_overshoot(momentum=momentum,
                                                        stiffness=target["stiffness"])),
            "critical_stiffness": target["critical_stiffness"],
            "method": f"the reward overshot its plateau by at least {share:.2g} of its gain "
                      "(a running mean flattens a peak) and settled without falling: complex "
                      f"poles below the stability limit, {bound}"}


def overshoot_ratios(tau: dict[str, Any], margin: float
                     ) -> tuple[str, float, list[float | None], str]:
    """Return direction, lr ratio, interval and reasoning for an ``overshoot`` evidence.

    Lower to x k_s / k(OS), at most a halving (x ``margin``), where k(OS) exceeds k_s; lower
    by the margin where no stable k reaches the overshoot; else keep.
    """
    lowest, k_s = tau["stiffness_lower"], tau["settling_stiffness"]
    common = ("every stiffness from k_c to the flip relaxes with the pole modulus sqrt(beta), "
              "so a higher lr gains no speed and narrows the stability margin")
    if lowest is None and tau["overshoot"] and tau["overshoot"] > tau["settling_overshoot"]:
        return ("lower", margin, [None, margin],
                f"an overshoot of at least {tau['overshoot']:.2g} of the gain is more than any "
                f"stable stiffness gives the map from rest at this beta: x{margin:g} (the "
                "margin, as after a fall)")
    if lowest is not None and lowest > k_s:
        full = k_s / lowest
        ratio = max(margin, full)
        step = (f"; one step is at most a halving (x{margin:g}, the margin, as after a fall): "
                "advise again after it" if ratio > full else "")
        return ("lower", ratio, [None, full],
                f"an overshoot of at least {tau['overshoot']:.2g} places the stiffness at or "
                f"above {lowest:.3g} per step, past the fastest settling into the "
                f"{BAND:.0%} band, k_s = {k_s:.3g} (an overshoot of "
                f"{tau['settling_overshoot']:.2g}): a lower lr settles sooner, down to "
                f"x k_s / k(OS) = x{full:.3g} or below (k >= k(OS)); {common}{step}")
    return ("keep", 1.0, [None, None],
            f"the overshoot (at least {tau['overshoot']:.2g} of the gain) does not place the "
            f"stiffness above the fastest settling k_s = {k_s:.3g} per step (an overshoot of "
            f"{tau['settling_overshoot']:.2g}; a running mean flattens a peak, so the run may "
            f"lie on either side of it): keep the lr; {common}")
