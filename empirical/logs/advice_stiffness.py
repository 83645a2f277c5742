"""The stiffness an advice reads from its tau evidence, over the run and at its lr's peak.

k = (1 - beta) / tau (docs/theory.md section 3) is the stiffness a relaxation time measures.
Under a logged schedule (a warm-up, a decay) the stability limit (section 5) binds where the lr
peaks. Where tau was read on the lr clock (the ``exponential_lr`` law: tau at the mean lr) the
stiffness there is k / share, share the mean lr over its peak
(:func:`~grpodyn.empirical.logs.run_settings.logged_schedule`), and kappa = k / lr is read there
too; a tau read on steps weighs the lr where the reward moved, and :func:`step_clock_warnings`
says so. :func:`on_momentum` names the numbers of an advice that rest on beta.
"""

from __future__ import annotations

from typing import Any

from grpodyn.empirical.logs.advice_text import assumed_beta
from grpodyn.empirical.logs.run_settings import LoggedSchedule

__all__ = ["stiffness_entry", "on_momentum", "schedule_words", "step_clock_warnings",
           "STEP_CLOCK_SHARE"]

#: Below this share of its peak a schedule is said to bend a tau read on the step clock.
STEP_CLOCK_SHARE = 0.9


def schedule_words(lr_share: float) -> str:
    """Say what a schedule that averaged ``lr_share`` of its peak does to the stiffness."""
    return (f"the logged lr averaged {lr_share:.2f} of its peak, so the stiffness at the peak, "
            f"where the stability limit binds, is the run's / {lr_share:.2f}")


def stiffness_entry(tau: dict[str, Any], momentum: float, lr: float | None,
                    momentum_source: str, lr_share: float | None = None) -> dict[str, Any]:
    """Return k = (1 - beta) / tau with its bound, k at the lr's peak, and kappa there.

    Parameters
    ----------
    tau : dict
        The advice's tau evidence (its ``kind``, ``value``, ``lower``, ``upper`` [steps]).
    momentum : float
        beta, Adam's beta1.
    lr : float or None
        The run's peak lr (for kappa = k_peak / lr [per unit lr]).
    momentum_source : str
        Whence beta: an entry with a number rests on it and says where beta was assumed.
    lr_share : float, optional
        The mean lr over its peak; None: a constant lr (the peak is the run's own).

    Returns
    -------
    dict
        ``value``, ``status``, ``lower``, ``upper`` [per step], ``reason``; ``at_peak``
        (``value``, ``lower``, ``upper``, ``lr_share``) under a schedule; ``kappa`` where tau
        is measured and the lr known.
    """
    c = 1.0 - momentum
    if tau["kind"] == "stability_limit":
        return {"value": None, "status": "bound", "bound": "lower",
                "reason": "the run crossed its stability limit: k >= k_max (section 5)"}
    if tau["kind"] == "instability":
        return {"value": None, "status": "bound", "bound": "lower",
                "reason": "the diagnosis flags dynamical instability: the stiffness is near its "
                          "stability limit (section 5), which the run does not locate"}
    if tau["kind"] == "overshoot":
        lowest = tau["stiffness_lower"]
        critical = tau["critical_stiffness"]
        return {"value": None, "status": "bound", "bound": "lower",
                "lower": critical if lowest is None else lowest, "upper": None,
                "momentum_source": momentum_source,
                "reason": "the reward overshot and settled (section 4): "
                          + (f"k >= k(OS) = {lowest:.3g} per step, the stiffness whose response "
                             "from rest overshoots by the measured share"
                             if lowest is not None else
                             f"complex poles, so k > k_c = (1 - sqrt(beta))^2 = {critical:.3g} "
                             "per step")
                          + assumed_beta(momentum, momentum_source)
                          + ", below the stability limit it did not reach (section 5)"}
    if tau["kind"] == "policy_concentration":
        return {"value": None, "status": "not_determined",
                "reason": "the policy moved while its reward did not: the run bounds the lr from "
                          "above (too large for the signal), not the stiffness"}
    if tau["kind"] == "not_determined":
        return {"value": None, "status": "not_determined", "reason": tau["method"]}
    reason = (f"k = (1 - beta) / tau with tau "
              f"{'measured' if tau['kind'] == 'measured_tau' else 'bounded'}"
              + assumed_beta(momentum, momentum_source)
              + ("; give momentum= (--momentum) if the run used another"
                 if momentum_source == "assumed" else "")
              + ("" if lr_share is None else "; " + schedule_words(lr_share)))
    measured = tau["kind"] == "measured_tau"
    out = {"value": c / tau["value"] if measured else None,
           "status": "determined" if measured else "bound",
           "lower": None if tau["upper"] is None else c / tau["upper"],
           "upper": None if not tau["lower"] else c / tau["lower"],
           **({"unit": "per step"} if measured else {}),
           "reason": reason, "momentum_source": momentum_source}
    share = 1.0 if lr_share is None else lr_share
    if lr_share is not None:
        out["at_peak"] = {key: None if out[key] is None else out[key] / share
                          for key in ("value", "lower", "upper")} | {"lr_share": lr_share}
    if measured and lr is not None:
        out["kappa"] = out["value"] / share / lr
    return out


def step_clock_warnings(tau: dict[str, Any], stiffness: dict[str, Any],
                        schedule: LoggedSchedule | None) -> list[str]:
    """Warn where tau, read on the step clock, bounds a stiffness under a varying lr.

    A decay slows the reward as saturation would, and a warm-up speeds it: the curvature of the
    thirds and the exponential fit on steps read both into tau, and the stiffness they give is
    the one at the lr where the reward moved, at most the peak's. The ``exponential_lr`` law,
    on the lr clock, reads both apart.
    """
    if schedule is None or schedule.share >= STEP_CLOCK_SHARE or tau["kind"] == "overshoot" \
            or tau.get("model") == "exponential_lr" \
            or (stiffness.get("lower") is None and stiffness.get("upper") is None):
        return []
    return [f"the logged lr varies (it averaged {schedule.share:.2f} of its peak) and tau is "
            "read on the step clock: a decay's slowing reads as saturation there, a warm-up's "
            "speeding hides it, and the stiffness and the headroom are the ones at the lr where "
            "the reward moved; at the lr's peak the stiffness is at least this and the headroom "
            "at most this; only a fit on the lr clock (exponential_lr) reads them apart"]


def on_momentum(tau: dict[str, Any], stiffness: dict[str, Any], *, floored: bool,
                ratio: bool) -> list[str]:
    """Name the numbers of the advice that rest on beta (``basis.momentum.bears_on``).

    ``stiffness`` (basis and measured) and ``kappa`` wherever given; ``tau`` where the inertial
    model's fit measured it (its tau is (1 - beta) / k); ``goal_tau`` where the fastest
    settling, a function of beta, floors it; ``lr_ratio`` (recommendation and interval) where
    that floor or the headroom (k_s and k_c, functions of beta) set it (``ratio``).
    """
    numbered = any(stiffness.get(key) is not None for key in ("value", "lower", "upper"))
    return [name for name, rests in (("stiffness", numbered), ("kappa", "kappa" in stiffness),
                                     ("tau", tau.get("model") == "inertial"),
                                     ("goal_tau", floored), ("lr_ratio", ratio)) if rests]
