"""docs/theory.md section 8: the two-arm softmax bandit, where the mean-field reduction is exact.

Arms with reward 1 and 0, logit gap x, p = sigmoid(x): the state is one scalar. The score of a
completion is d log pi / dx = r - p, so the x-gradient of a group is exactly the projected update
U of section 7 and the drift of x is E[U](p) for each estimator. A KL penalty lam toward x_ref
subtracts lam times its gradient: the exact KL(pi || pi_ref) gives p(1-p)(x - x_ref); TRL's k3
estimator, exp(ref - logp) - (ref - logp) - 1 on samples of pi, has the gradient of
KL(pi_ref || pi), p - p_ref. The curvature scale is kappa = -dF/dx at the fixed point F = 0
(solved numerically by ``grpodyn.numerics.bandit``).

Reusing samples drawn at x_old with the importance ratio pi/pi_old (PPO, without clipping):
the expected gradient is p(1-p) / (p_old (1-p_old)) times the drift at x_old, so part of the
force is current and part is stale.
"""

from __future__ import annotations

import sympy as sp

from .build import derivation, get
from .derivation import Derivation, Step
from .symbols import sym

SECTION = "8. The softmax bandit"


def _sigmoid(x: sp.Expr) -> sp.Expr:
    return 1 / (1 + sp.exp(-x))


@derivation
def derive_bandit_success_probability() -> Derivation:
    """Derive p = sigmoid(x) = exp(x) / (exp(x) + exp(0))."""
    softmax = sp.exp(sym.x) / (sp.exp(sym.x) + 1)
    return Derivation("bandit_success_probability", sp.simplify(softmax), (sym.x,),
                      "Probability of the rewarded arm, p = sigmoid(x).", SECTION,
                      (Step("softmax over logits (x, 0)", softmax),))


def _score_check() -> sp.Expr:
    """Return d log pi(arm) / dx for the rewarded arm: 1 - p (and -p for the other)."""
    p = get("bandit_success_probability").expr
    return sp.simplify(sp.diff(sp.log(p), sym.x) - (1 - p))


def _policy_drift(estimator: str) -> Derivation:
    if _score_check() != 0:
        raise AssertionError("score of the rewarded arm is not 1 - p")
    p = get("bandit_success_probability").expr
    mean = get(f"{estimator}_update_mean")
    args = (sym.x, sym.G, sym.eps) if estimator == "grpo" else (sym.x, sym.G)
    drift = mean.expr.subs(sym.p, p)
    return Derivation(f"bandit_drift_{estimator}", drift, args,
                      f"Drift of the logit gap per unit step, {estimator} estimator (no KL).",
                      SECTION, (Step("d log pi / dx = r - p, so the x-gradient is U", p),),
                      domain=mean.domain)


def _drift_slope(estimator: str) -> Derivation:
    drift = get(f"bandit_drift_{estimator}")
    expr = drift.expr
    if isinstance(expr, sp.Sum):  # differentiate under the finite sum
        expr = sp.Sum(sp.diff(expr.function, sym.x), *expr.limits)
    else:
        expr = sp.simplify(sp.diff(expr, sym.x))
    return Derivation(f"bandit_drift_slope_{estimator}", expr, drift.args,
                      f"dF/dx of the {estimator} drift (analytic; kappa = -slope at x*).",
                      SECTION, domain=drift.domain)


@derivation
def derive_bandit_drift_grpo() -> Derivation:
    """E[U](sigmoid(x)) for GRPO (finite binomial sum)."""
    return _policy_drift("grpo")


@derivation
def derive_bandit_drift_dr_grpo() -> Derivation:
    """E[U] for Dr. GRPO: p (1-p) (G-1)/G."""
    return _policy_drift("dr_grpo")


@derivation
def derive_bandit_drift_rloo() -> Derivation:
    """E[U] for RLOO: p (1-p)."""
    return _policy_drift("rloo")


@derivation
def derive_bandit_drift_slope_grpo() -> Derivation:
    """dF/dx for GRPO."""
    return _drift_slope("grpo")


@derivation
def derive_bandit_drift_slope_dr_grpo() -> Derivation:
    """dF/dx for Dr. GRPO."""
    return _drift_slope("dr_grpo")


@derivation
def derive_bandit_drift_slope_rloo() -> Derivation:
    """dF/dx for RLOO."""
    return _drift_slope("rloo")


@derivation
def derive_bandit_kl_gradient_forward() -> Derivation:
    """d/dx KL(pi_x || pi_ref) = p (1-p) (x - x_ref)."""
    p = get("bandit_success_probability").expr
    p_ref = p.subs(sym.x, sym.x_ref)
    kl = p * sp.log(p / p_ref) + (1 - p) * sp.log((1 - p) / (1 - p_ref))
    gradient = sp.simplify(sp.diff(kl, sym.x))
    closed = p * (1 - p) * (sym.x - sym.x_ref)
    if sp.simplify(sp.expand_log(gradient - closed, force=True)) != 0:
        raise AssertionError("forward KL gradient is not p(1-p)(x - x_ref)")
    return Derivation("bandit_kl_gradient_forward", closed, (sym.x, sym.x_ref),
                      "Gradient of the exact KL(pi || pi_ref) in the logit gap.", SECTION,
                      (Step("KL(pi_x || pi_ref) of two Bernoulli policies", kl),
                       Step("d/dx", gradient)))


@derivation
def derive_bandit_kl_gradient_k3() -> Derivation:
    """Derive the expected gradient of TRL's k3 estimator: -E_ref[d log pi / dx] = p - p_ref."""
    p = get("bandit_success_probability").expr
    p_ref = p.subs(sym.x, sym.x_ref)
    log_ratio = {1: sp.log(p_ref) - sp.log(p), 0: sp.log(1 - p_ref) - sp.log(1 - p)}
    k3 = {arm: sp.exp(v) - v - 1 for arm, v in log_ratio.items()}
    # samples of pi, the estimator differentiated through log pi only
    expected = p * sp.diff(k3[1], sym.x) + (1 - p) * sp.diff(k3[0], sym.x)
    gradient = sp.simplify(expected)
    return Derivation("bandit_kl_gradient_k3", sp.simplify(gradient), (sym.x, sym.x_ref),
                      "Expected gradient of TRL's k3 KL estimator: that of KL(pi_ref || pi).",
                      SECTION, (Step("k3 per arm", sp.Tuple(k3[1], k3[0])),
                                Step("expected gradient over samples of pi", expected)))


def _kl_slope(kind: str) -> Derivation:
    gradient = get(f"bandit_kl_gradient_{kind}")
    return Derivation(f"bandit_kl_slope_{kind}", sp.simplify(sp.diff(gradient.expr, sym.x)),
                      gradient.args, f"d/dx of the {kind} KL gradient (its stiffness).", SECTION)


@derivation
def derive_bandit_kl_slope_forward() -> Derivation:
    """d/dx of p(1-p)(x - x_ref)."""
    return _kl_slope("forward")


@derivation
def derive_bandit_kl_slope_k3() -> Derivation:
    """d/dx of p - p_ref."""
    return _kl_slope("k3")


@derivation
def derive_bandit_reuse_factor() -> Derivation:
    """Importance-corrected reuse: E[gradient] = p(1-p)/(p_old(1-p_old)) E[U](p_old)."""
    p = get("bandit_success_probability").expr
    p_old = p.subs(sym.x, sym.x_old)
    s_succ, advantage = sp.symbols("S_s A_s")  # successes and their advantage at x_old
    weight_success, weight_failure = p / p_old, (1 - p) / (1 - p_old)
    # failures carry advantage -S A_s / (G - S): the advantages sum to zero
    gradient = (s_succ * weight_success * advantage * (1 - p)
                + (sym.G - s_succ) * weight_failure * (-s_succ * advantage / (sym.G - s_succ))
                * (0 - p)) / sym.G
    on_policy = s_succ * advantage / sym.G  # U at x_old for the same groups
    factor = sp.simplify(gradient / on_policy)
    return Derivation("bandit_reuse_factor", factor, (sym.x, sym.x_old),
                      "Ratio of the importance-corrected gradient to the drift at x_old.",
                      SECTION, (Step("group gradient with ratios pi / pi_old", gradient),))
