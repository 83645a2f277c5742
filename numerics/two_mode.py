"""Predictions of the two-mode map (stiff and soft stiffness, one heavy-ball optimizer).

Numbers from the functions generated from :mod:`grpodyn.theory.two_mode` (docs/theory.md section 1,
two modes): stability is the conjunction of the modes' conditions, the reward relaxes with the
soft mode's slowest pole, each mode has its own oscillation momentum.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from . import _generated as gen
from .stability import staleness_max as _one_mode_staleness_max

__all__ = ["TwoModePrediction", "two_mode_prediction", "first_unstable_refresh", "staleness_max"]


@dataclass(frozen=True)
class TwoModePrediction:
    """What the two-mode map predicts at one (lr, momentum).

    Attributes
    ----------
    stiffness_stiff, stiffness_soft : float
        k_s = lr h_s and k_r = lr h_r [1/step^2].
    stable : bool
        On-policy stability of both modes (Jury).
    relaxation_time : float or None
        Reward relaxation time [steps], -1 / (2 ln z_r); None when the soft mode is not monotone
        (oscillatory soft mode: the envelope decays as beta^(n/2), see ``reason``).
    oscillation_momentum_stiff, oscillation_momentum_soft : float or None
        Momentum above which each mode oscillates, (1 - sqrt(k))^2; None when k >= 1 (the mode
        is oscillatory or flips at every momentum).
    refresh_max : int or None
        Largest stable sample-and-hold refresh interval on 1..``refresh_limit`` (None: K = 1
        already unstable; ``refresh_limit``: none unstable up to it).
    reason : str
        Why a field is None, or an empty string.
    """

    stiffness_stiff: float
    stiffness_soft: float
    stable: bool
    relaxation_time: float | None
    oscillation_momentum_stiff: float | None
    oscillation_momentum_soft: float | None
    refresh_max: int | None
    reason: str = ""


def first_unstable_refresh(*, momentum: float, stiffness_stiff: float, stiffness_soft: float,
                           refresh_limit: int = 64) -> int | None:
    """Return the first K in 1..``refresh_limit`` at which sample-and-hold is unstable.

    Parameters
    ----------
    momentum : float
        Heavy-ball momentum, in [0, 1).
    stiffness_stiff, stiffness_soft : float
        k_s and k_r [1/step^2].
    refresh_limit : int
        Largest K tried.

    Returns
    -------
    int or None
        The first unstable K, or None when all K up to ``refresh_limit`` are stable.
    """
    for refresh in range(1, refresh_limit + 1):
        if not bool(gen.two_mode_refresh_stability_condition(momentum, stiffness_stiff,
                                                             stiffness_soft, refresh)):
            return refresh
    return None


def staleness_max(*, momentum: float, stiffness_stiff: float, stiffness_soft: float
                  ) -> int | None:
    """Return the largest stable fixed staleness d of the two-mode map (docs/theory.md section 5).

    With staleness d the force diag(k_s, k_r) u_(n-d) acts on each coordinate alone, so the
    map is block-diagonal for every d (the joint polynomial is the product of the modes' ones,
    checked symbolically for d = 1 in :mod:`grpodyn.theory.two_mode`): the threshold is the
    smaller of the two modes' one-mode thresholds, the stiff mode's whenever k_s >= k_r.

    Parameters
    ----------
    momentum : float
        Heavy-ball momentum, in [0, 1).
    stiffness_stiff, stiffness_soft : float
        k_s and k_r [1/step^2], positive.

    Returns
    -------
    int or None
        The largest stable d (0: only on-policy), None when on-policy is already unstable.
    """
    limits = [_one_mode_staleness_max(momentum=momentum, stiffness=k)
              for k in (stiffness_stiff, stiffness_soft)]
    return None if None in limits else min(limits)


def two_mode_prediction(*, lr: float, momentum: float, curvature_stiff: float,
                        curvature_soft: float, refresh_limit: int = 64) -> TwoModePrediction:
    """Predict stability, relaxation and oscillation of the two-mode map.

    Parameters
    ----------
    lr : float
        Learning rate (the effective step of heavy-ball SGD) [parameter/gradient].
    momentum : float
        Heavy-ball momentum in [0, 1).
    curvature_stiff, curvature_soft : float
        h_s and h_r, positive, h_s >= h_r [1/lr].
    refresh_limit : int
        Largest refresh interval examined.

    Returns
    -------
    TwoModePrediction
        The predicted quantities (docs/theory.md sections 1, 4, 5 applied to each mode).

    Raises
    ------
    ValueError
        When a curvature is not positive or the soft one exceeds the stiff one.
    """
    if not (curvature_stiff > 0 and curvature_soft > 0):
        raise ValueError(f"curvatures must be positive, got stiff {curvature_stiff!r}, "
                         f"soft {curvature_soft!r}")
    if curvature_soft > curvature_stiff:
        raise ValueError(f"soft curvature {curvature_soft} exceeds stiff curvature "
                         f"{curvature_stiff}")
    k_s, k_r = lr * curvature_stiff, lr * curvature_soft
    stable = bool(gen.two_mode_stability_condition(momentum, k_s, k_r))
    reasons = []
    if k_r < (1 - math.sqrt(momentum)) ** 2:
        tau: float | None = float(gen.two_mode_relaxation_time(momentum, k_r))
    else:
        tau = None
        reasons.append("soft mode oscillatory: the reward envelope decays as momentum^(n/2)")
    osc = [float(gen.oscillation_momentum(k)) if k < 1 else None for k in (k_s, k_r)]
    if osc[0] is None:
        reasons.append("stiff stiffness >= 1: oscillatory (or flipping) at every momentum")
    first = first_unstable_refresh(momentum=momentum, stiffness_stiff=k_s, stiffness_soft=k_r,
                                   refresh_limit=refresh_limit)
    refresh_max = refresh_limit if first is None else (first - 1 or None)
    return TwoModePrediction(k_s, k_r, stable, tau, osc[0], osc[1], refresh_max,
                             "; ".join(reasons))
