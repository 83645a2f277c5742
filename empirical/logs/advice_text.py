"""The basis of the learning-rate advice in words (:mod:`.advice`).

Bounds on the relaxation time tau and on the stiffness k = (1 - beta) / tau
(docs/theory.md section 3) said as a reader needs them: an infinite lower bound on tau is a
rise that shows no deceleration, and the stiffness it bounds is too small to show, not
"k <= 0"; a factor no finite raise reaches is said so, not "xinf". A slow mode's tau is said as
what it is: a median, the reward range's cap (where the median sits when the gain to come fills
the room left), or a lower bound (a median that shows no decay). A number that rests on an
assumed momentum says so (:func:`assumed_beta`).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from grpodyn.empirical.logs.loaders import Run
from grpodyn.empirical.logs.trend import Trend

__all__ = ["basis_text", "tau_at_least", "stiffness_at_most", "factor_words", "assumed_beta",
           "slow_tau_words", "slow_mode_words", "interval_entry", "caveats",
           "goal_warnings"]


def basis_text(tau: dict[str, Any], momentum: float, momentum_source: str = "logged") -> str:
    """Say the basis of the advice in words.

    Parameters
    ----------
    tau : dict
        The tau evidence of :func:`.advice.advise_log` (``kind``, ``value``, ``lower``,
        ``upper`` [steps], ``method``; a slow mode's ``estimate``).
    momentum : float
        beta, which turns tau into the stiffness k = (1 - beta) / tau [per step].
    momentum_source : str
        Whence beta (``assumed``: the stiffness says it rests on an assumed beta).

    Returns
    -------
    str
        One sentence: the kind of basis, its numbers and what they bound.
    """
    c, beta = 1.0 - momentum, assumed_beta(momentum, momentum_source)
    if tau["kind"] == "measured_tau":
        return (f"measured: tau = {tau['value']:.3g} steps [{tau['lower']:.3g}, "
                f"{tau['upper']:.3g}] ({tau['method']}), so k = (1 - beta) / tau = "
                f"{c / tau['value']:.3g} per step{beta}")
    if tau["kind"] == "not_determined":
        return f"not determined: {tau['method']}"
    if tau["kind"] == "policy_concentration":
        return f"bound from above on the lr: {tau['method']}"
    if tau["kind"] == "instability":
        return f"bound from below: {tau['method']}"
    if tau["kind"] == "overshoot":
        return (f"bound from below: {tau['method']}{beta}; k_c = (1 - sqrt(beta))^2 = "
                f"{tau['critical_stiffness']:.3g}, k_s = {tau['settling_stiffness']:.3g} per "
                "step")
    if tau["kind"] == "stability_limit":
        return ("bound from below: the run fell beyond its noise, so its stiffness reached the "
                "stability limit of its lag (docs/theory.md section 5): k >= k_max")
    if tau["kind"] == "slow_mode":
        value = tau["value"] or tau["lower"]
        upper = "open" if tau["upper"] is None else f"{tau['upper']:.3g}"
        return (f"slow mode: {tau['method']}: {slow_tau_words(tau)} [{tau['lower'] or 0:.3g}, "
                f"{upper}], so {stiffness_at_most(c / value, '(1 - beta) / tau = ')}{beta}")
    if tau["kind"] == "stiffness_lower_bound":
        return (f"bound from below: {tau['method']}: tau <= {tau['upper']:.3g} steps, so "
                f"k >= (1 - beta) / tau = {c / tau['upper']:.3g} per step{beta}")
    return (f"bound from above: {tau['method']}: {tau_at_least(tau['lower'])}, so "
            f"{stiffness_at_most(c / tau['lower'], '(1 - beta) / tau = ')}{beta}")


def assumed_beta(momentum: float, source: str) -> str:
    """Say, after a number that rests on beta, that beta was assumed ("" where it was not)."""
    return f" (at beta = {momentum:g}, assumed)" if source == "assumed" else ""


def slow_tau_words(tau: dict[str, Any]) -> str:
    """Say a slow mode's tau as what it is: a median, the range's cap, or a lower bound.

    Parameters
    ----------
    tau : dict
        The slow mode's evidence (``value``, ``lower`` [steps], ``estimate``: ``median``,
        ``range_cap`` or ``lower_quantile``).

    Returns
    -------
    str
        ``tau = V steps``, ``tau = V steps (the reward range's cap)``, or ``tau >= L steps``
        where the median shows no decay (``value`` None).
    """
    if tau["value"] is None:
        return tau_at_least(tau["lower"])
    cap = " (the reward range's cap)" if tau["estimate"] == "range_cap" else ""
    return f"tau = {tau['value']:.3g} steps{cap}"


def slow_mode_words(late: dict[str, Any], estimate: str, whole: dict[str, Any]
                    ) -> tuple[str, str]:
    """Say how the slow mode's tau was read, and the warning of its two timescales.

    Parameters
    ----------
    late : dict
        :func:`~grpodyn.numerics.advise.late_relaxation` of the run.
    estimate : str
        What the slow mode's tau is: ``median``; ``range_cap``, where the median gain to come
        fills the room left in the reward range, so the median and the 97.5% quantile both sit
        at the longest tau the range allows (a cap, not a central estimate); or
        ``lower_quantile``, where the median shows no decay and only the 2.5% quantile bounds
        tau (from below).
    whole : dict
        The whole run's tau evidence (``kind``, ``value``, ``lower``, ``upper`` [steps]).

    Returns
    -------
    (str, str)
        The method (the basis's words) and the warning.
    """
    to_come = (f"at least {late['remaining'][1]:.3g}" if late["remaining"][1] < late["room"]
               else "an unbounded amount (no ceiling: the reward range is not known)"
               if math.isinf(late["room"])
               else f"all the room left in the reward range, {late['room']:.3g},")
    read, follows = {
        "median": ("central estimate; 2.5-97.5% quantiles",
                   "the central estimate, not a 95% bound"),
        "range_cap": ("capped by the reward range: the median and the 97.5% quantile of the gain "
                      "to come fill the room left, so both sit at the longest tau the range "
                      "allows, a cap, not a central estimate; the 2.5% quantile below it",
                      "the range's cap, where the median sits, not a 95% bound"),
        "lower_quantile": ("a lower bound: the median shows no decay of the slope, so only the "
                           "2.5% quantile bounds tau, from below",
                           "that lower bound, the 2.5% quantile"),
    }[estimate]
    noise_free = not late["slope_stderr"] > 1e-12 * abs(late["slope"])
    method = (f"the last third still rises ({late['slope']:.3g} per step, without noise)"
              if noise_free else
              f"the last third still rises beyond its noise ({late['slope']:.3g} +- "
              f"{late['slope_stderr']:.2g} per step, t = {late['t']:.1f} > {late['critical']:.2g})")
    method += (f"; the slope's decay between the last two thirds leaves {to_come} of gain to "
               f"come after {late['gain']:.3g} gained: the slow mode's relaxation time ({read})")
    told = {"measured_tau": "= {value:.3g}", "stiffness_upper_bound": ">= {lower:.3g}",
            "stiffness_lower_bound": "<= {upper:.3g}"}.get(whole["kind"], "no bound on tau")
    warning = (f"two timescales: the reward still rises at the end though the whole run gives "
               f"tau {told.format(**whole)} steps: a slow mode, or a plateau rising with the lr "
               "(the map's plateau does not depend on it), which one run cannot tell apart; the "
               f"raise follows {follows}")
    return method, warning


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


def interval_entry(ratios: list[float | None], lr: float | None, direction: str, ratio: float
                   ) -> dict[str, Any]:
    """Return the interval of the advice with what it means (a keep's may lie below x1).

    Parameters
    ----------
    ratios : [float or None, float or None]
        The interval in multiples of the run's lr (None: not bounded by the run).
    lr : float or None
        The run's lr (None: unknown, so no absolute interval).
    direction : str
        raise, keep or lower.
    ratio : float
        The advice's multiple of the run's lr.

    Returns
    -------
    dict
        ``lr_ratio``, ``lr`` and ``meaning``: which quantity the interval bounds, since a
        keep's interval bounds the least lr that reaches the goal, which may lie below the run's
        lr, and a raise capped at one step's most lies below the interval it moves toward.
    """
    def scale(r: float | None) -> float | None:
        return None if r is None or lr is None else r * lr

    below = direction == "keep" and ratios[1] is not None and ratios[1] < ratio
    step = direction == "raise" and ratios[0] is not None and ratios[0] > ratio
    return {"lr_ratio": ratios, "lr": [scale(ratios[0]), scale(ratios[1])],
            "meaning": "where the least lr that still reaches the goal lies, in multiples of "
            "the run's lr (None: not bounded by this run); the run's lr is above it and "
            "reaches the goal already" if below else "multiples of the run's lr the evidence "
            "asks (None: not bounded by this run); the advice is one raise toward its lower "
            "end, the most one step takes" if step else "multiples of the run's lr the "
            "evidence allows (None: not bounded by this run); lower end of a raise = the "
            "least the bound demands"}


def caveats(direction: str, trend: Trend, run: Run, steps: float | None, *,
             headroom: bool, bounded: bool = True,
             plateau: dict[str, Any] | None = None) -> list[str]:
    """Return the warnings that go with a direction (a headroom raise has its own).

    Parameters
    ----------
    direction : str
        raise, keep or lower.
    trend : Trend
        The reward's trend over the run (:func:`~.trend.run_trend`).
    run : Run
        The run (whether its steps are reconstructed).
    steps : float or None
        The user's horizon [steps], if any.
    headroom : bool
        Whether the headroom set the raise (its warning is its own).
    bounded : bool
        False where the basis bounds nothing: a keep then rests on no plateau.
    plateau : dict, optional
        The curve fit's plateau (``RunAnalysis.plateau``), where the run was fitted.

    Returns
    -------
    list of str
        The warnings.
    """
    out = []
    if direction == "raise" and not headroom:
        out.append("the slow mode bounds the raise from below only: stiff directions can "
                   "limit the lr sooner; raise in steps and watch for a fall")
    if direction == "keep" and trend.kind == "rising" and bounded:
        out.append("keep rests on the mean-field map's plateau, which does not depend on the "
                   "lr; a plateau that rises with the lr (seen on public lr sweeps) leaves the "
                   "end of one run flat within its noise: a short run at a higher lr tests it")
    if direction == "raise" and trend.kind == "flat":
        out.append(_flat_caveat(run, plateau))
    if trend.kind == "overshot":
        out.append("an overshoot is read from the reward's shape: a partial fall that stopped "
                   "(the reward itself, a shifted task) also keeps more than half of a rise; "
                   "diagnose's modes say whether anything else moved")
    if direction == "lower" and trend.kind == "fell":
        out.append("a fall can also come from the lag (refresh interval K or staleness d lower "
                   "the limit, section 5: fewer epochs per rollout is the other remedy) or from "
                   "the reward itself (hacking, a shifted task)")
    if run.steps_reconstructed and steps is not None:
        out.append("the log's steps are reconstructed (the order of its points): --steps is "
                   "read on that clock")
    return out


def _flat_caveat(run: Run, plateau: dict[str, Any] | None) -> str:
    """Return the caveat of a raise read off a flat run, naming the fit's plateau where it holds.

    A flat run is either slow or already at its plateau. Where the curve fit determines a
    plateau and the run's last quarter averages inside its interval, the fit reads the second
    case, and the caveat says so with the plateau's numbers (the same as ``grpodyn fit``'s), so
    that the advice does not silently contradict the fit.
    """
    general = "a run already at its plateau also stays flat; then a higher lr gains nothing"
    if plateau is None or plateau.get("status") != "determined":
        return general
    end = float(np.mean(run.reward[-max(run.n_points // 4, 1):]))
    if not plateau["lower"] <= end <= plateau["upper"]:
        return general
    return (f"the curve fit places a plateau at {plateau['value']:.4g} [{plateau['lower']:.4g}, "
            f"{plateau['upper']:.4g}] ({plateau['reason']}; grpodyn fit) and the run's last "
            f"quarter averages {end:.4g}, inside it: if the run sits at its plateau, a higher lr "
            "gains nothing (the raise reads the flat run as slow)")


def goal_warnings(horizon: float, goal: float, momentum: float, momentum_source: str, *,
                  headroom: bool, floored: bool) -> list[str]:
    """Return the warnings of a headroom raise and of a horizon below the fastest settling.

    Parameters
    ----------
    horizon, goal : float
        The horizon and the goal tau [steps].
    momentum : float
        beta, which sets the fastest settling T_s.
    momentum_source : str
        Whence beta (``assumed``: said beside T_s).
    headroom, floored : bool
        Whether the headroom set the raise, and whether T_s / ln 10 floored the goal.

    Returns
    -------
    list of str
        The warnings.
    """
    out = []
    if headroom:
        out.append("headroom: the raise takes the slow mode the reward shows toward the "
                   "fastest settling into the 10% band (an overshoot within the band); the "
                   "stability limit is set by the stiffest direction and the "
                   "lag (refresh K, staleness d), which one run does not bound, and the "
                   "plateau may move with the lr (the map's does not, public lr sweeps' "
                   "does): raise in steps and watch for a fall")
    if floored:
        assumed = ", assumed" if momentum_source == "assumed" else ""
        out.append(f"the horizon {horizon:g} steps is shorter than the map's fastest "
                   f"settling into the 10% band ({goal * math.log(10):.3g} steps at "
                   f"beta = {momentum:g}{assumed}): no lr reaches 90% of the gain for good "
                   "within it; the goal is that fastest settling")
    return out
