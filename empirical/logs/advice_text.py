"""The basis of the learning-rate advice in words (:mod:`.advice`).

Bounds on the relaxation time tau and on the stiffness k = (1 - beta) / tau
(docs/theory.md section 3) said as a reader needs them: an infinite lower bound on tau is a
rise that shows no deceleration, and the stiffness it bounds is too small to show, not
"k <= 0"; a factor no finite raise reaches is said so, not "xinf".
"""

from __future__ import annotations

import math
from typing import Any

__all__ = ["basis_text", "tau_at_least", "stiffness_at_most", "factor_words"]


def basis_text(tau: dict[str, Any], momentum: float) -> str:
    """Say the basis of the advice in words.

    Parameters
    ----------
    tau : dict
        The tau evidence of :func:`.advice.advise_log` (``kind``, ``value``, ``lower``,
        ``upper`` [steps], ``method``).
    momentum : float
        beta, which turns tau into the stiffness k = (1 - beta) / tau [per step].

    Returns
    -------
    str
        One sentence: the kind of basis, its numbers and what they bound.
    """
    c = 1.0 - momentum
    if tau["kind"] == "measured_tau":
        return (f"measured: tau = {tau['value']:.3g} steps [{tau['lower']:.3g}, "
                f"{tau['upper']:.3g}] ({tau['method']}), so k = (1 - beta) / tau = "
                f"{c / tau['value']:.3g} per step")
    if tau["kind"] == "not_determined":
        return f"not determined: {tau['method']}"
    if tau["kind"] == "policy_concentration":
        return f"bound from above on the lr: {tau['method']}"
    if tau["kind"] == "stability_limit":
        return ("bound from below: the run fell beyond its noise, so its stiffness reached the "
                "stability limit of its lag (docs/theory.md section 5): k >= k_max")
    if tau["kind"] == "slow_mode":
        value = tau["value"] or tau["lower"] or math.inf
        upper = "open" if tau["upper"] is None else f"{tau['upper']:.3g}"
        return (f"slow mode: {tau['method']}: tau = {value:.3g} steps [{tau['lower'] or 0:.3g}, "
                f"{upper}], so {stiffness_at_most(c / value, '(1 - beta) / tau = ')}")
    if tau["kind"] == "stiffness_lower_bound":
        return (f"bound from below: {tau['method']}: tau <= {tau['upper']:.3g} steps, so "
                f"k >= (1 - beta) / tau = {c / tau['upper']:.3g} per step")
    return (f"bound from above: {tau['method']}: {tau_at_least(tau['lower'])}, so "
            f"{stiffness_at_most(c / tau['lower'], '(1 - beta) / tau = ')}")


def tau_at_least(lower: float) -> str:
    """Say ``tau >= lower steps``; an infinite bound is a rise that shows no deceleration."""
    if math.isfinite(lower):
        return f"tau >= {lower:.3g} steps"
    return ("no finite tau fits (the rise shows no deceleration at 95%: straight or "
            "accelerating)")


def stiffness_at_most(k: float, formula: str = "") -> str:
    """Say ``k <= [formula =] k``; a bound of zero is a stiffness too small for the run to show."""
    if k > 0:
        return f"k <= {formula}{k:.3g}" + (" per step" if formula else "")
    return "k too small to show within the run (no pull toward a plateau seen)"


def factor_words(ratio: float) -> str:
    """Say ``x ratio``, or that no finite factor is enough."""
    return f"x{ratio:.3g}" if math.isfinite(ratio) else "beyond any finite factor of"
