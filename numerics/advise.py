"""Hyperparameters for a target regime.

The learning rate that makes the mean-field map settle soonest into the 10% band, or critically
damped, or that keeps a chosen margin from the stability limit (docs/theory.md sections 3-5).

The stiffness is k = lr * kappa (heavy-ball SGD, or Adam with kappa measured on Adam's own clock,
as a fit of a log gives it). For momentum beta the exact discrete boundaries are

- critical damping (fastest without overshoot): k_c(beta) = (1 - sqrt(beta))^2, a double pole
  at z = sqrt(beta), relaxation time -1 / ln sqrt(beta) steps (one step for beta = 0); with a
  refresh interval K or staleness d, the lagged map's own double real pole, at a lower k
  (:func:`lagged_critical_stiffness`);
- fastest into the band (90% of the gain, for good): k_s(beta), the least stiffness whose
  response from rest settles into |x| <= 0.1 soonest (numerics.settling, from the exact map;
  an overshoot within the band, 2.8 k_c at beta = 0.9, damping ratio 0.59 as beta -> 1);
- stability: k_max = 2 (1 + beta) on-policy, lower with a refresh interval K or staleness d.

With a lag, the advice's regime and relaxation time are those of the lagged map, as ``grpodyn
predict`` gives them at the advised lr.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field
from functools import cache

import numpy as np
from scipy.optimize import brentq

from grpodyn.ground import InputError, check_int, check_momentum, check_positive

from .compiled import compiled
from .mean_field_map import MeanFieldMap
from .settling import settling_stiffness
from .stability import (
    first_unstable_refresh,
    refresh_stable,
    regime,
    staleness_max,
    staleness_stiffness_max,
)

__all__ = ["Advice", "advise", "TARGETS", "goal_relaxation", "lr_ratio_for_relaxation",
           "critical_relaxation_steps", "bg_exponent_range", "late_relaxation",
           "thirds_relaxation", "stiffness_of_relaxation", "critical_headroom", "headroom_raise",
           "settling_target", "settling_headroom", "lagged_critical_stiffness", "MARGIN"]

TARGETS = ("critical", "margin", "settling")
#: Default fraction of the stability limit: the margin target, the others' cap under a lag.
MARGIN = 0.5

#: Half-width of the band the speed target settles into: 90% of the attainable gain, for good.
BAND = 0.1
#: Least relative distance below the lagged map's double pole at which ``critical`` advises
#: (:func:`_below_double_pole`).
_BELOW_DOUBLE_POLE = 1e-8


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
        Regime of the exact discrete map there, with the run's lag.
    relaxation_steps : float
        -1 / ln|z| of the dominant pole of the map with the run's lag [steps] (``grpodyn
        predict``'s ``decay_time`` at the advised lr).
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


def lagged_critical_stiffness(momentum: float, *, refresh: int = 1, staleness: int = 0) -> float:
    """Critical damping of the lagged map: the largest k whose dominant pole stays real positive.

    Below it the slowest mode of the map with a refresh interval K or staleness d decays without
    changing sign, as the on-policy map's does below (1 - sqrt(beta))^2; at it two real poles
    merge into a double pole, and beyond it they leave the real axis as an oscillating pair
    (docs/theory.md sections 4 and 5). The lag lowers the boundary, so the on-policy k_c
    overshoots with a lag.

    Staleness d: the characteristic polynomial z^(d-1) (z - 1) (z - beta) + k has a double root
    where k = z^(d-1) (1 - z) (z - beta) is largest on (beta, 1), at the root of
    (d + 1) z^2 - d (1 + beta) z + (d - 1) beta = 0 in that interval. Refresh K: the eigenvalues
    of the cycle's monodromy M are real where (M11 - M22)^2 + 4 M12 M21 >= 0, a form free of
    the cancellation of trace^2 - 4 det; it is positive at k = 0 and negative where the trace
    (linear in k) vanishes, and crosses zero once in between, found by Brent's bracketed root
    finder on M from the product of the K steps (the closed-form entries lose digits to
    1 - beta near beta = 1). Without momentum M has the single eigenvalue 1 - K k, which turns
    negative (a flip) where the trace vanishes, at k = 1 / K.

    Parameters
    ----------
    momentum : float
        beta in [0, 1).
    refresh, staleness : int
        Refresh interval K or fixed staleness d (one of them; neither gives the on-policy k_c).

    Returns
    -------
    float
        The stiffness of the double real pole [1/step^2].
    """
    beta = float(check_momentum(momentum, scalar=True))
    if staleness > 0:
        d = float(staleness)
        z = (d * (1 + beta) + math.sqrt(d * d * (1 - beta) ** 2 + 4 * beta)) / (2 * (d + 1))
        return z ** (d - 1) * (1 - z) * (z - beta)
    if refresh == 1:
        return float(compiled("critical_stiffness_discrete")(beta))

    def discriminant(k: float) -> float:
        step = np.array([[1 + beta, -beta, -k], [1.0, 0.0, 0.0], [0.0, 0.0, 1.0]])
        (a, b), (c, e) = (np.linalg.matrix_power(step, refresh)
                          @ np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 0.0]]))[:2]
        return float((a - e) ** 2 + 4 * b * c)

    trace = compiled("monodromy_trace")
    t0, t1 = float(trace(beta, 0.0, refresh)), float(trace(beta, 1.0, refresh))
    flip = t0 / (t0 - t1)
    if not discriminant(flip) < 0:
        return flip
    return float(brentq(discriminant, 0.0, flip, xtol=1e-300, rtol=1e-14))


def _below_double_pole(beta: float, boundary: float, refresh: int, staleness: int) -> float:
    """Return a stiffness just below a double pole at which the map's regime reads overdamped.

    Rounding in the poles may split the double pole into a complex pair, which
    :func:`~grpodyn.numerics.stability.regime` (and ``grpodyn predict``) reads as oscillatory;
    the shortfall from the boundary grows from 1e-8 by fours until the poles read real, so the
    regime the advice quotes is the one ``grpodyn predict`` gives at its lr.
    """
    shortfall = _BELOW_DOUBLE_POLE
    while shortfall < 0.5 and regime(momentum=beta, stiffness=boundary * (1 - shortfall),
                                     refresh=refresh, staleness=staleness) != "overdamped":
        shortfall *= 4
    return boundary * (1 - shortfall)


def _target_stiffness(beta: float, target: str, refresh: int, staleness: int,
                      lag: str) -> tuple[float, list[str]]:
    """Stiffness of the ``critical`` or ``settling`` target with the run's lag, and why."""
    k_c = float(compiled("critical_stiffness_discrete")(beta))
    if target == "critical" and (refresh > 1 or staleness > 0):
        k = _below_double_pole(beta, lagged_critical_stiffness(
            beta, refresh=refresh, staleness=staleness), refresh, staleness)
        return k, [f"critical damping of the lagged map ({lag}): k = {k:.4g}, where its two "
                   f"slowest real poles merge (the on-policy k_c = (1 - sqrt(beta))^2 = "
                   f"{k_c:.4g} is past it with this lag), the fastest relaxation without overshoot"]
    if target == "critical":
        return k_c, [f"critical damping of the discrete map: k_c = (1 - sqrt(beta))^2 = "
                     f"{k_c:.4g}, the fastest relaxation without overshoot"]
    if refresh > 1 or staleness > 0:
        raise InputError(f"target settling is the on-policy map's fastest settling into the "
                         f"{BAND:.0%} band, and its overshoot leaves the band with a lag "
                         f"({lag}): give the target critical or margin")
    settle = settling_target(beta)
    return settle["stiffness"], [
        f"fastest into the {BAND:.0%} band for good: k_s = {settle['stiffness']:.4g} "
        f"(x{settle['stiffness'] / k_c:.3g} k_c; {settle['steps']} steps from rest, "
        f"{settle['critical_steps']} at critical damping, the fastest without overshoot)"]


def advise(*, kappa: float, momentum: float, target: str = "critical", margin: float = MARGIN,
           refresh: int = 1, staleness: int = 0) -> Advice:
    """Recommend the learning rate for a target regime (docs/theory.md sections 3-5).

    Parameters
    ----------
    kappa : float
        Curvature scale (stiffness per unit learning rate) [1/step^2 per lr].
    momentum : float
        beta in [0, 1) (Adam's beta1 for Adam).
    target : {"critical", "margin", "settling"}
        ``critical``: the fastest relaxation without overshoot (critical damping; with a lag,
        the lagged map's, :func:`lagged_critical_stiffness`, just below its double pole);
        ``settling``: the fastest into the 10% band for good (:func:`settling_target`, an
        overshoot within the band; on-policy only); each capped at ``margin`` of the stability
        limit when the lag makes that limit lower. ``margin``: the learning rate at the
        fraction ``margin`` of the stability limit.
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
        On an invalid input, naming it; for ``settling`` with a lag (the on-policy k_s
        overshoots past the band there).
    """
    kappa = float(check_positive("kappa", kappa, scalar=True))
    beta = float(check_momentum(momentum, scalar=True))
    if target not in TARGETS:
        raise InputError(f"target must be one of {', '.join(TARGETS)}, got {target!r}")
    margin = float(check_positive("margin", margin, scalar=True))
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
    if target in ("critical", "settling"):
        k, why = _target_stiffness(beta, target, refresh, staleness, lag)
        reasoning += why
        if k > margin * limit:
            k = margin * limit
            reasoning.append(f"the target is beyond {margin:.0%} of the stability limit with "
                             f"this lag: capped at k = {k:.4g}")
    else:
        k = margin * limit
        reasoning.append(f"{margin:.0%} of the stability limit: k = {k:.4g}")
    lr = k / kappa
    if not np.finfo(float).tiny <= lr < math.inf:  # beyond a double's normal range, either way
        big = lr > 1
        raise InputError(f"kappa {kappa:g} is too {'small' if big else 'large'}: the advised lr "
                         f"k / kappa = {k:.4g} / {kappa:g} " + ("overflows a float" if big else
                         "is below the least normal float, where its digits are lost"))
    system = MeanFieldMap(lr=lr, kappa=kappa, optimizer="sgd", momentum=beta, refresh=refresh,
                          staleness=staleness)
    chosen, radius = system.regime, system.spectral_radius
    tau = 1.0 if radius == 0 else (math.inf if radius >= 1 else -1.0 / math.log(radius))
    poles = ("mean-field map, on-policy poles" if lag == "on-policy"
             else f"the lagged map's slowest pole, {lag}")
    reasoning.append(f"lr = k / kappa = {lr:.4g}; regime {chosen}; relaxation time "
                     f"{tau:.3g} steps ({poles})")
    first_bad = first_unstable_refresh(momentum=beta, stiffness=k)
    k_refresh_max = None if first_bad is None else first_bad - 1
    d_max = staleness_max(momentum=beta, stiffness=k)
    reasoning.append(f"at this lr: largest stable refresh interval K = {k_refresh_max}, "
                     f"largest stable staleness d = {d_max}")
    return Advice(lr=lr, momentum=beta, stiffness=k, regime=chosen,
                  relaxation_steps=tau, stiffness_limit=limit, refresh_max=k_refresh_max,
                  staleness_max=d_max, reasoning=reasoning)


def critical_relaxation_steps(momentum: float) -> float:
    """Relaxation time at critical damping, the fastest monotone relaxation (theory section 4).

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
    beta = float(check_momentum(momentum, scalar=True))
    return _relaxation_steps(beta, float(compiled("critical_stiffness_discrete")(beta)))


@cache
def settling_target(momentum: float, band: float = BAND) -> dict:
    """Return the map's fastest settling into the band (``numerics.settling``, cached).

    Parameters
    ----------
    momentum : float
        beta in [0, 1).
    band : float
        Half-width of the band in (0, 1) (0.1: 90% of the gain, for good).

    Returns
    -------
    dict
        ``stiffness`` k_s [1/step^2], ``steps`` its settling step, ``critical_stiffness`` and
        ``critical_steps`` (critical damping's), ``band``.
    """
    return settling_stiffness(momentum=float(check_momentum(momentum, scalar=True)), band=band)


def goal_relaxation(*, steps: float, momentum: float, fraction: float = 0.9
                    ) -> tuple[float, bool]:
    """Relaxation time that reaches ``fraction`` of the attainable gain within ``steps``.

    Overdamped law (docs/theory.md section 3): the gain after n steps is 1 - exp(-n / tau), so
    tau_goal = steps / -ln(1 - fraction) (steps / ln 10 for 90%), floored at the map's fastest
    settling into the band 1 - fraction, T_s / -ln(1 - fraction) (:func:`settling_target`): no
    stiffness reaches that fraction of the gain for good in fewer than T_s steps.

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
        tau_goal [steps], and whether the fastest settling set it.
    """
    steps = float(check_positive("steps", steps, scalar=True))
    if not 0 < fraction < 1:
        raise InputError(f"fraction must lie in (0, 1), got {fraction}")
    fastest = settling_target(momentum, round(1.0 - fraction, 12))["steps"]
    return max(steps, fastest) / -math.log(1.0 - fraction), fastest > steps


def stiffness_of_relaxation(*, tau: float, momentum: float) -> float | None:
    """Stiffness whose dominant on-policy pole relaxes in ``tau`` steps (docs/theory.md section 4).

    The dominant root z = exp(-1 / tau) of z^2 - (1 + beta - k) z + beta gives
    k = 1 + beta - z - beta / z (derivation ``pole_stiffness``). Only tau at or beyond the
    critical-damping time (:func:`critical_relaxation_steps`) is a dominant pole: every k of the
    map relaxes at least that slowly.

    Parameters
    ----------
    tau : float
        Relaxation time [steps] (> 0; inf gives 0).
    momentum : float
        beta in [0, 1).

    Returns
    -------
    float or None
        k [1/step^2], at most the critical stiffness (1 - sqrt(beta))^2; None when tau is
        shorter than the critical-damping time (no overdamped k has it).
    """
    beta = float(check_momentum(momentum, scalar=True))
    if tau == math.inf:
        return 0.0
    tau = float(check_positive("tau", tau, scalar=True))
    if tau < critical_relaxation_steps(beta) * (1 - 1e-12):
        return None
    return min(max(float(compiled("pole_stiffness")(beta, tau)), 0.0),
               float(compiled("critical_stiffness_discrete")(beta)))


def critical_headroom(*, tau: float, momentum: float, exponent: float = -1.0) -> float | None:
    """Multiple of the run's lr that brings a mode relaxing in ``tau`` steps to critical damping.

    The fastest monotone relaxation of the map is critical damping, k_c = (1 - sqrt(beta))^2
    (docs/theory.md section 4); beyond it the dominant pole's modulus stays sqrt(beta) up to
    (1 + sqrt(beta))^2, so a higher lr no longer shortens the relaxation, it makes it oscillate.
    With k = :func:`stiffness_of_relaxation` and k ~ lr^-p (tau ~ lr^p, overdamped tau ~ 1 / k),
    the ratio is (k_c / k)^(-1 / p); with the map's p = -1, k_c / k exactly. Given a lower
    bound on tau, it is the largest raise that keeps every mode consistent with the bound no
    faster than critical damping.

    Parameters
    ----------
    tau : float
        Relaxation time of the run's slow mode, or a lower bound on it [steps].
    momentum : float
        beta in [0, 1).
    exponent : float
        p = d ln tau / d ln lr (< 0).

    Returns
    -------
    float or None
        The ratio (>= 1; inf for tau = inf); None when tau does not exceed the critical-damping
        time (the bound leaves no headroom to tell).
    """
    if not exponent < 0:
        raise InputError(f"exponent: tau must fall as lr rises (p < 0), got {exponent}")
    k = stiffness_of_relaxation(tau=tau, momentum=momentum)
    if k is None:
        return None
    if k == 0:
        return math.inf
    k_c = float(compiled("critical_stiffness_discrete")(float(momentum)))
    return float((k_c / k) ** (-1.0 / exponent))


def settling_headroom(*, tau: float, momentum: float, exponent: float = -1.0,
                      band: float = BAND) -> float | None:
    """Multiple of the run's lr that brings a mode relaxing in ``tau`` steps to k_s.

    k_s (:func:`settling_target`) settles into the band soonest: critical damping is the
    fastest without overshoot, an overshoot within the band gets there sooner (x2.8 k_c and 26
    steps instead of 74 at beta = 0.9 for the 10% band). As :func:`critical_headroom`, with
    k_s for k_c: (k_s / k)^(-1 / p), k = :func:`stiffness_of_relaxation`.

    Parameters
    ----------
    tau : float
        Relaxation time of the run's slow mode, or a lower bound on it [steps].
    momentum : float
        beta in [0, 1).
    exponent : float
        p = d ln tau / d ln lr (< 0).
    band : float
        Half-width of the band in (0, 1).

    Returns
    -------
    float or None
        The ratio (inf for tau = inf); None when tau does not exceed the critical-damping time
        (every k from k_c to the flip relaxes that fast: the pole cannot place the run).
    """
    critical = critical_headroom(tau=tau, momentum=momentum, exponent=exponent)
    if critical is None or math.isinf(critical):
        return critical
    k_s = settling_target(float(momentum), band)
    return float(critical * (k_s["stiffness"] / k_s["critical_stiffness"])
                 ** (-1.0 / exponent))


def headroom_raise(*, tau_lower: float, tau_upper: float | None, momentum: float,
                   exponent: float = -1.0, margin: float = MARGIN) -> dict | None:
    """Return the raise toward the fastest settling that a lower bound on a run's tau allows.

    tau >= tau_lower bounds the slow mode's stiffness from above, k <= k(tau_lower)
    (:func:`stiffness_of_relaxation`), so k_s, the fastest into the 10% band for good (critical
    damping is the fastest without overshoot), is :func:`settling_headroom` away. The stiffest
    direction, which sets the stability limit (docs/theory.md section 5), is not bounded by the
    slow mode, so one raise is at most 1 / margin: the inverse of the step down after a fall
    (x margin), which brings a raise that fails back to the run's lr.

    Parameters
    ----------
    tau_lower, tau_upper : float
        The run's relaxation time interval [steps] (``tau_upper`` None: unbounded).
    momentum : float
        beta in [0, 1).
    exponent : float
        p = d ln tau / d ln lr (< 0).
    margin : float
        The stability margin target in (0, 1).

    Returns
    -------
    dict or None
        ``ratio`` (the raise), ``settling`` (the ratio to k_s), ``critical`` (the ratio to
        critical damping), ``upper`` (the ratio to k_s at ``tau_upper``, None: unbounded),
        ``stiffness`` (k(tau_lower) [1/step^2]), ``target`` (k_s [1/step^2]) and ``capped``
        (the 1 / margin cap set the raise); None when tau_lower does not exceed the
        critical-damping time (the run may be critically damped or beyond already).
    """
    head = settling_headroom(tau=tau_lower, momentum=momentum, exponent=exponent)
    if head is None:
        return None
    upper = (None if tau_upper is None
             else settling_headroom(tau=tau_upper, momentum=momentum, exponent=exponent))
    return {"ratio": min(head, 1.0 / margin), "settling": head,
            "critical": critical_headroom(tau=tau_lower, momentum=momentum, exponent=exponent),
            "upper": None if upper is None or math.isinf(upper) else upper,
            "stiffness": stiffness_of_relaxation(tau=tau_lower, momentum=momentum),
            "target": settling_target(float(momentum))["stiffness"],
            "capped": head > 1.0 / margin}


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
    goal = float(check_positive("goal", goal, scalar=True))
    if not exponent < 0:
        raise InputError(f"exponent: tau must fall as lr rises (p < 0), got {exponent}")
    if tau <= 0:
        return 0.0
    if math.isinf(tau):
        return math.inf
    return float((goal / tau) ** (1.0 / exponent))


def bg_exponent_range() -> tuple[float, float]:
    """Range of d ln k / d ln (B G) for Adam, signal- to noise-dominated (docs/theory.md section 9).

    Evaluated from the derivation ``adam_stiffness_bg_exponent`` = rho_A / (2 (B G + rho_A))
    at rho_A -> 0 and rho_A >> B G.

    Returns
    -------
    (float, float)
        (0, 1/2): the stiffness grows at most like sqrt(B G) at a fixed lr.
    """
    exponent = compiled("adam_stiffness_bg_exponent")
    return float(exponent(0.0, 1.0, 1.0)), float(round(exponent(1e15, 1.0, 1.0), 6))


def late_relaxation(steps: np.ndarray, reward: np.ndarray, *, ceiling: float | None = None,
                    level: float = 0.975, draws: int = 4000, seed: int = 0) -> dict | None:
    """Whether a run still rises at its end, and the relaxation time its slowest mode implies.

    The overdamped curve is a sum of relaxing modes, r(t) = r* - sum_i A_i exp(-t / tau_i)
    (docs/theory.md section 3); with all A_i > 0 its slope s(t) is log-convex, so it decays no
    faster
    after the run than it did between the middle and the last third:
    s(t) >= s(N) exp(-(t - N) / tau_late), tau_late = D / ln(s_2 / s_3), D the spacing of the
    thirds' centres and s_2, s_3 their least-squares slopes (read as the slopes at the centres:
    exact for a straight line, to the order of a third's width otherwise). The gain to come is
    R >= s(N) tau_late with s(N) >= s_3 exp(-(N - t_3) / tau_late), at most ``ceiling`` - r(N).
    With the gain so far g = r(N) - r(0) (r(N) from the last third's line, r(0) the first
    point), the fraction of the attainable gain reached within the run's span T is at most
    g / (g + R): the single-exponential time that leaves that fraction,
    tau_eq = T / ln((g + R) / R), bounds the run's effective relaxation time from below. A fast
    first mode (what the thirds' curvature measures) plus a continuing drift gives tau_eq far
    beyond the curvature's tau.

    Parameters
    ----------
    steps, reward : numpy.ndarray
        Increasing steps and the reward at them (non-finite points are dropped).
    ceiling : float, optional
        The highest reward the range allows (caps R).
    level : float
        One-sided level of "still rising beyond its noise" (the last third's slope over its
        standard error, Student's t from the residuals of the last two thirds).
    draws, seed : int
        Monte-Carlo draws of the two slopes (seeded) for the quantiles.

    Returns
    -------
    dict or None
        ``rising`` (the last third's slope is positive beyond its noise), ``slope`` and
        ``slope_stderr`` [reward/step], ``t`` and ``critical``, ``gain`` [reward], ``remaining``
        and ``tau`` at the 2.5%, 50% and 97.5% quantiles [reward, steps] (inf: no decay seen),
        ``span`` [steps], ``room`` (the ceiling minus the end, inf without one) [reward]; None
        with fewer than 9 points (three per third).
    """
    steps, reward = np.asarray(steps, float), np.asarray(reward, float)
    keep = np.isfinite(steps) & np.isfinite(reward)
    steps, reward = steps[keep], reward[keep]
    parts = np.array_split(np.arange(reward.size), 3)
    if reward.size < 9:
        return None
    fits = [np.polyfit(steps[p], reward[p], 1) for p in parts[1:]]
    residual = np.concatenate([reward[p] - np.polyval(f, steps[p])
                               for p, f in zip(parts[1:], fits, strict=True)])
    dof = parts[1].size + parts[2].size - 4
    noise = math.sqrt(float(residual @ residual) / dof)
    stderr = [noise / math.sqrt(float(np.sum((steps[p] - steps[p].mean()) ** 2)))
              for p in parts[1:]]
    centre = [float(steps[p].mean()) for p in parts[1:]]
    end, span = float(steps[-1]), float(steps[-1] - steps[0])
    finish = float(np.polyval(fits[1], end))
    gain = finish - float(reward[0])
    rng = np.random.default_rng(seed)
    s2 = fits[0][0] + stderr[0] * rng.standard_t(dof, draws)
    s3 = fits[1][0] + stderr[1] * rng.standard_t(dof, draws)
    spacing = centre[1] - centre[0]
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        tau_late = np.where(s3 >= s2, np.inf, spacing / np.log(s2 / s3))
        remaining = np.where(np.isinf(tau_late), np.inf,
                             s3 * tau_late * np.exp(-(end - centre[1]) / tau_late))
    remaining = np.where(s3 <= 0, 0.0, remaining)
    if ceiling is not None:
        remaining = np.minimum(remaining, max(ceiling - finish, 0.0))
    quantiles = np.quantile(remaining, [0.025, 0.5, 0.975], method="inverted_cdf")

    def tau_of(value: float) -> float:
        if value <= 0 or gain <= 0:
            return 0.0
        if math.isinf(value):
            return math.inf
        ratio = (gain + value) / value  # 1.0 when the gain is below value's round-off
        return math.inf if ratio <= 1.0 else span / math.log(ratio)

    from scipy.stats import t as student_t  # a third of a second to import: only when needed

    critical = float(student_t.ppf(level, dof))
    slope = float(fits[1][0])
    if stderr[1] > 0:
        t_value = slope / stderr[1]
    else:  # the last two thirds lie on their lines exactly: the slope is exact up to rounding
        t_value = math.inf if slope * span > 1e-9 * max(1.0, abs(finish)) else 0.0
    return {"rising": t_value > critical and gain > 0, "slope": slope,
            "slope_stderr": stderr[1], "t": t_value, "critical": critical, "gain": gain,
            "remaining": [float(q) for q in quantiles],
            "tau": [tau_of(float(q)) for q in quantiles], "span": span,
            "room": math.inf if ceiling is None else max(ceiling - finish, 0.0)}


def thirds_relaxation(means: tuple[float, float, float], stderr: tuple[float, float, float],
                      centres: tuple[float, float, float], *, draws: int = 4000,
                      seed: int = 0) -> tuple[float, float, float]:
    """Relaxation time from the curvature of a run's thirds, with a 95% interval.

    For r(t) = r* - A exp(-t / tau) the ratio of successive gains of equally spaced thirds is
    q = (m3 - m2) / (m2 - m1) = exp(-d / tau), d the spacing: tau = -d / ln q, monotone in q
    (q <= 0: tau -> 0, q >= 1: tau -> inf). The means are drawn from their standard errors
    (seeded), and the quantiles of q map to those of tau.

    Parameters
    ----------
    means, stderr : (float, float, float)
        The thirds' mean rewards and their standard errors [reward].
    centres : (float, float, float)
        The thirds' mean steps [steps].
    draws, seed : int
        Monte-Carlo draws of the means (seeded).

    Returns
    -------
    (float, float, float)
        tau at the 2.5%, 50% and 97.5% quantiles of q [steps]; 0 or inf where unbounded.
    """
    rng = np.random.default_rng(seed)
    m = np.asarray(means)[:, None] + (np.asarray(stderr)[:, None]
                                      * rng.standard_normal((3, draws)))
    with np.errstate(divide="ignore", invalid="ignore"):
        q = (m[2] - m[1]) / (m[1] - m[0])
    q = q[np.isfinite(q)]
    spacing = 0.5 * (centres[2] - centres[0])

    def tau_of(value: float) -> float:
        if value <= 0:
            return 0.0
        return math.inf if value >= 1 else -spacing / math.log(value)

    if q.size == 0 or spacing <= 0:
        return 0.0, math.nan, math.inf
    lo, mid, hi = np.quantile(q, [0.025, 0.5, 0.975])
    return tau_of(lo), tau_of(mid), tau_of(hi)
