"""Hyperparameters for a target regime.

The learning rate that makes the mean-field map critically damped, or that keeps a chosen margin
from the stability limit (THEORY.md sections 3-5).

The stiffness is k = lr * kappa (heavy-ball SGD, or Adam with kappa measured on Adam's own clock,
as a fit of a log gives it). For momentum beta the exact discrete boundaries are

- critical damping (fastest without oscillation): k_c(beta) = (1 - sqrt(beta))^2, a double pole
  at z = sqrt(beta), relaxation time -1 / ln sqrt(beta) steps (one step for beta = 0);
- stability: k_max = 2 (1 + beta) on-policy, lower with a refresh interval K or staleness d.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field

import numpy as np

from grpodyn.ground import InputError, check_int, check_momentum, check_positive

from .compiled import compiled
from .stability import (
    first_unstable_refresh,
    refresh_stable,
    regime,
    staleness_max,
    staleness_stiffness_max,
)

__all__ = ["Advice", "advise", "TARGETS", "goal_relaxation", "lr_ratio_for_relaxation",
           "critical_relaxation_steps", "bg_exponent_range"]

TARGETS = ("critical", "margin")


@dataclass(frozen=True)
class Advice:
    """Recommended learning rate and what it implies, with the reasoning in words.

    Attributes
    ----------
    lr : float
        The recommended learning rate (JSON also under its older key ``learning_rate``).
    momentum : float
        Momentum beta it was computed for.
    stiffness : float
        Stiffness k = lr * kappa [1/step^2] at that learning rate.
    regime : str
        Regime of the exact discrete map there.
    relaxation_steps : float
        -1 / ln|z| of the dominant on-policy pole [steps].
    stiffness_limit : float
        Largest stable stiffness with the run's lag.
    refresh_max, staleness_max : int or None
        Largest stable refresh interval K and staleness d at that learning rate.
    reasoning : list of str
        The steps of the recommendation, in words.
    """

    lr: float
    momentum: float
    stiffness: float
    regime: str
    relaxation_steps: float
    stiffness_limit: float
    refresh_max: int | None
    staleness_max: int | None
    reasoning: list[str] = field(default_factory=list)

    def to_dict(self) -> dict:
        """Return the advice as a plain dict (the JSON of ``grpodyn advise``).

        Returns
        -------
        dict
            The fields, with ``learning_rate`` beside ``lr`` (the README's key, kept stable).
        """
        out = asdict(self)
        return {"lr": out["lr"], "learning_rate": out["lr"], **out}


def _refresh_stiffness_max(beta: float, refresh: int) -> float:
    """Largest stable stiffness with refresh interval K (bisection on the exact conditions)."""
    lo, hi = 0.0, float(compiled("stiffness_max")(beta))
    if refresh_stable(beta, hi * (1 - 1e-12), refresh):
        return hi
    for _ in range(100):
        mid = 0.5 * (lo + hi)
        if mid > 0 and refresh_stable(beta, mid, refresh):
            lo = mid
        else:
            hi = mid
    return lo


def _relaxation_steps(beta: float, k: float) -> float:
    """-1 / ln|z| for the dominant pole of z^2 - (1 + beta - k) z + beta."""
    radius = float(np.max(np.abs(np.roots([1.0, -(1.0 + beta - k), beta]))))
    return 1.0 if radius == 0 else (math.inf if radius >= 1 else -1.0 / math.log(radius))


def advise(*, kappa: float, momentum: float, target: str = "critical", margin: float = 0.5,
           refresh: int = 1, staleness: int = 0) -> Advice:
    """Recommend the learning rate for a target regime (THEORY.md sections 3-5).

    Parameters
    ----------
    kappa : float
        Curvature scale (stiffness per unit learning rate) [1/step^2 per lr].
    momentum : float
        beta in [0, 1) (Adam's beta1 for Adam).
    target : {"critical", "margin"}
        ``critical``: the fastest relaxation without oscillation (critical damping), capped at
        ``margin`` of the stability limit when the lag makes that limit lower; ``margin``: the
        learning rate at the fraction ``margin`` of the stability limit.
    margin : float
        Fraction of the stability limit in (0, 1).
    refresh, staleness : int
        Refresh interval K or fixed staleness d of the run (one of them).

    Returns
    -------
    Advice
        The learning rate, what it implies and why.

    Raises
    ------
    InputError
        On an invalid input, naming it.
    """
    kappa = float(check_positive("kappa", kappa))
    beta = float(check_momentum(momentum))
    if target not in TARGETS:
        raise InputError(f"target must be one of {', '.join(TARGETS)}, got {target!r}")
    margin = float(check_positive("margin", margin))
    if not margin < 1:
        raise InputError(f"margin must lie in (0, 1), got {margin}")
    refresh = check_int("refresh", refresh, minimum=1)
    staleness = check_int("staleness", staleness, minimum=0)
    if refresh > 1 and staleness > 0:
        raise InputError("give either refresh or staleness, not both")
    if refresh > 1:
        limit, lag = _refresh_stiffness_max(beta, refresh), f"refresh interval K = {refresh}"
    elif staleness > 0:
        limit, lag = staleness_stiffness_max(beta, staleness), f"staleness d = {staleness}"
    else:
        limit, lag = float(compiled("stiffness_max")(beta)), "on-policy"
    reasoning = [f"stability limit ({lag}, beta = {beta:g}): k < {limit:.4g}, "
                 f"i.e. lr < {limit / kappa:.4g}"]
    if target == "critical":
        k_critical = float(compiled("critical_stiffness_discrete")(beta))
        reasoning.append(f"critical damping of the discrete map: k_c = (1 - sqrt(beta))^2 = "
                         f"{k_critical:.4g}, the fastest relaxation without oscillation")
        k = k_critical
        if k > margin * limit:
            k = margin * limit
            reasoning.append(f"k_c is beyond {margin:.0%} of the stability limit with this lag: "
                             f"capped at k = {k:.4g}")
    else:
        k = margin * limit
        reasoning.append(f"{margin:.0%} of the stability limit: k = {k:.4g}")
    lr = k / kappa
    chosen = regime(momentum=beta, stiffness=k, refresh=refresh, staleness=staleness)
    tau = _relaxation_steps(beta, k)
    reasoning.append(f"lr = k / kappa = {lr:.4g}; regime {chosen}; relaxation time "
                     f"{tau:.3g} steps (mean-field map, on-policy poles)")
    first_bad = first_unstable_refresh(momentum=beta, stiffness=k)
    k_refresh_max = None if first_bad is None else first_bad - 1
    d_max = staleness_max(momentum=beta, stiffness=k)
    reasoning.append(f"at this lr: largest stable refresh interval K = {k_refresh_max}, "
                     f"largest stable staleness d = {d_max}")
    return Advice(lr=lr, momentum=beta, stiffness=k, regime=chosen,
                  relaxation_steps=tau, stiffness_limit=limit, refresh_max=k_refresh_max,
                  staleness_max=d_max, reasoning=reasoning)


def critical_relaxation_steps(momentum: float) -> float:
    """Relaxation time at critical damping, the fastest monotone relaxation (THEORY.md sec. 4).

    Parameters
    ----------
    momentum : float
        beta in [0, 1) (Adam's beta1 for Adam).

    Returns
    -------
    float
        -1 / ln sqrt(beta) [steps] (the double pole z = sqrt(beta)); 1 for beta = 0. A shorter
        relaxation time needs k beyond (1 - sqrt(beta))^2: the map oscillates.
    """
    beta = float(check_momentum(momentum))
    return _relaxation_steps(beta, float(compiled("critical_stiffness_discrete")(beta)))


def goal_relaxation(*, steps: float, momentum: float, fraction: float = 0.9
                    ) -> tuple[float, bool]:
    """Relaxation time that reaches ``fraction`` of the attainable gain within ``steps``.

    Overdamped law (THEORY.md section 3): the gain after n steps is 1 - exp(-n / tau), so
    tau_goal = steps / -ln(1 - fraction) (steps / ln 10 for 90%), floored at the critical-damping
    time (:func:`critical_relaxation_steps`): a shorter one is not monotone.

    Parameters
    ----------
    steps : float
        The horizon [steps] (> 0).
    momentum : float
        beta in [0, 1).
    fraction : float
        Fraction of the gain in (0, 1).

    Returns
    -------
    (float, bool)
        tau_goal [steps], and whether the critical-damping floor set it.
    """
    steps = float(check_positive("steps", steps))
    if not 0 < fraction < 1:
        raise InputError(f"fraction must lie in (0, 1), got {fraction}")
    wanted = steps / -math.log(1.0 - fraction)
    floor = critical_relaxation_steps(momentum)
    return (floor, True) if floor > wanted else (wanted, False)


def lr_ratio_for_relaxation(*, tau: float, goal: float, exponent: float = -1.0) -> float:
    """Multiple of the run's lr that moves its relaxation time from ``tau`` to ``goal``.

    tau ~ lr^p (p = -1 for the map: derivations ``relaxation_time`` and
    ``adam_tau_lr_exponent``), so lr_new / lr = (goal / tau)^(1 / p).

    Parameters
    ----------
    tau : float
        Relaxation time of the run [steps]; 0 and inf are allowed (limits).
    goal : float
        Wanted relaxation time [steps] (> 0).
    exponent : float
        p = d ln tau / d ln lr (< 0).

    Returns
    -------
    float
        The ratio (0 for tau = 0, inf for tau = inf).
    """
    goal = float(check_positive("goal", goal))
    if not exponent < 0:
        raise InputError(f"exponent: tau must fall as lr rises (p < 0), got {exponent}")
    if tau <= 0:
        return 0.0
    if math.isinf(tau):
        return math.inf
    return float((goal / tau) ** (1.0 / exponent))


def bg_exponent_range() -> tuple[float, float]:
    """Range of d ln k / d ln (B G) for Adam, signal- to noise-dominated (THEORY.md sec. 9).

    Evaluated from the derivation ``adam_stiffness_bg_exponent`` = rho_A / (2 (B G + rho_A))
    at rho_A -> 0 and rho_A >> B G.

    Returns
    -------
    (float, float)
        (0, 1/2): the stiffness grows at most like sqrt(B G) at a fixed lr.
    """
    exponent = compiled("adam_stiffness_bg_exponent")
    return float(exponent(0.0, 1.0, 1.0)), float(round(exponent(1e15, 1.0, 1.0), 6))
