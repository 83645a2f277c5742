"""The two-arm bandit's fixed point and curvature scale, from the compiled theory.

F(x) = E[U](sigmoid(x)) - lam * g_KL(x) (derivations ``bandit_drift_*``, ``bandit_kl_gradient_*``)
vanishes at the fixed point x*; kappa = -F'(x*) from the analytic slopes. With importance-
corrected reuse the stiffness splits into a current and a stale part (derivation
``bandit_reuse_factor``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from scipy.optimize import brentq

from grpodyn.ground import InputError, check_finite, check_group_size, check_positive

from .compiled import compiled

__all__ = ["ESTIMATORS", "KL_ESTIMATORS", "BanditTheory", "bandit_theory"]

ESTIMATORS = ("grpo", "dr_grpo", "rloo")
KL_ESTIMATORS = ("forward", "k3")


@dataclass(frozen=True)
class BanditTheory:
    """Fixed point and curvature of the bandit's mean-field drift."""

    x_star: float
    p_star: float
    kappa: float
    kappa_current: float  # part of kappa that stays current under importance-corrected reuse
    kappa_stale: float  # part that is held at the sampling policy


def _drift_parts(estimator: str, group_size: int, eps: float
                 ) -> tuple[Callable[[float], float], Callable[[float], float]]:
    extra = (eps,) if estimator == "grpo" else ()
    drift = compiled(f"bandit_drift_{estimator}")
    slope = compiled(f"bandit_drift_slope_{estimator}")
    return (lambda x: float(drift(x, group_size, *extra)),
            lambda x: float(slope(x, group_size, *extra)))


def bandit_theory(*, estimator: str = "grpo", group_size: int, kl: float, x_ref: float = 0.0,
                  kl_estimator: str = "k3", eps: float = 1e-4) -> BanditTheory:
    """Return the fixed point x* and curvature kappa of the two-arm bandit (analytic slopes).

    Parameters
    ----------
    estimator : {"grpo", "dr_grpo", "rloo"}
    group_size : int
        G >= 2.
    kl : float
        KL coefficient lam > 0 (without it the drift has no interior fixed point).
    x_ref : float
        Logit gap of the reference policy.
    kl_estimator : {"k3", "forward"}
        TRL's k3 estimator (default, as in
        :class:`~grpodyn.empirical.bandit.simulation.BanditConfig`) or the exact KL(pi || pi_ref).
    eps : float
        Epsilon added to the group std (GRPO only).
    """
    if estimator not in ESTIMATORS:
        raise InputError(f"estimator must be one of {', '.join(ESTIMATORS)}, got {estimator!r}")
    if kl_estimator not in KL_ESTIMATORS:
        raise InputError(f"kl_estimator must be one of {', '.join(KL_ESTIMATORS)}, got "
                         f"{kl_estimator!r}")
    g = check_group_size(group_size)
    lam = float(check_positive("kl", kl, scalar=True))
    x_ref = float(check_finite("x_ref", x_ref, scalar=True))
    eps = float(check_positive("eps", eps, allow_zero=True, scalar=True))
    drift, slope = _drift_parts(estimator, g, eps)
    kl_grad = compiled(f"bandit_kl_gradient_{kl_estimator}")
    kl_slope = compiled(f"bandit_kl_slope_{kl_estimator}")

    def force(x: float) -> float:
        return drift(x) - lam * float(kl_grad(x, x_ref))

    upper = x_ref + 1.0
    while force(upper) > 0:
        upper = x_ref + 2 * (upper - x_ref)
        if upper - x_ref > 60:
            raise InputError(f"no fixed point below x = {upper}: the KL coefficient {lam} is "
                             "too small")
    x_star = brentq(force, x_ref, upper, xtol=1e-14, rtol=1e-14)
    kappa = -(slope(x_star) - lam * float(kl_slope(x_star, x_ref)))
    p = float(compiled("bandit_success_probability")(x_star))
    # reuse: F(x, x_old) = q(x)/q(x_old) D(x_old) - lam g_KL(x), q = p(1-p), q'/q = 1 - 2p
    log_q_slope = 1 - 2 * p
    d_star = drift(x_star)
    kappa_current = -(log_q_slope * d_star - lam * float(kl_slope(x_star, x_ref)))
    kappa_stale = -(slope(x_star) - log_q_slope * d_star)
    return BanditTheory(x_star, p, kappa, kappa_current, kappa_stale)
