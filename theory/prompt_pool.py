"""Section 7 of THEORY.md for a pool of prompts: success rates spread by a Beta law.

A step samples B prompts; prompt i has its own success rate p_i and gets G completions. The
logged zero-std share is then the average of p_i^G + (1-p_i)^G over the prompts of the step, not
that expression at the mean reward. With p ~ Beta(a_p, b_p) (mean m = a_p / (a_p + b_p),
concentration phi = a_p + b_p; phi -> 0 puts every prompt at 0 or 1, phi -> infinity makes the
pool homogeneous) the expectations are Beta integrals:

- E[p^G] = B(a_p + G, b_p) / B(a_p, b_p) = prod_{j<G} (a_p + j) / (a_p + b_p + j), so the
  expected zero-std share is that product plus its mirror in b_p;
- the expected within-group spread E[p (1 - p)] (the unbiased variance of a group's rewards has
  exactly this mean);
- the expected unbiased variance of all B G rewards of a step: what TRL (1.16) logs, squared, as
  ``reward_std`` (``nanstd`` over the whole batch; earlier versions logged the mean of the
  per-group stds). The pool adds a between-prompt term that the batch variance barely sees, so
  the zero-std share, not ``reward_std``, is what measures phi.
"""

from __future__ import annotations

import sympy as sp

from .build import derivation, get
from .derivation import Derivation, Step
from .symbols import sym

SECTION = "7. Exact finite-G statistics for Bernoulli rewards: a Beta pool of prompts"


def _beta_moment(power_p: sp.Expr, power_q: sp.Expr) -> sp.Expr:
    """E[p^power_p (1-p)^power_q] for p ~ Beta(a_p, b_p).

    The density is p^(a_p-1) (1-p)^(b_p-1) / B(a_p, b_p); multiplying by the monomial shifts
    the exponents, and int_0^1 p^(x-1) (1-p)^(y-1) dp = B(x, y) (Euler's integral) gives
    B(a_p + power_p, b_p + power_q) / B(a_p, b_p), written with Gamma functions.
    """
    ratio = sp.beta(sym.a_p + power_p, sym.b_p + power_q) / sp.beta(sym.a_p, sym.b_p)
    return sp.gammasimp(sp.expand_func(ratio))


@derivation
def derive_prompt_pool_mean_reward() -> Derivation:
    """E[p] = a_p / (a_p + b_p): the expected reward of a step."""
    mean = sp.factor(_beta_moment(1, 0))
    return Derivation("prompt_pool_mean_reward", mean, (sym.a_p, sym.b_p),
                      "Expected batch reward of a Beta(a_p, b_p) pool of prompts.", SECTION)


def _rising_ratio(first: sp.Expr) -> sp.Expr:
    """prod_{j<G} (first + j) / (a_p + b_p + j), written as exp of a finite sum of logs."""
    terms = sp.log(first + sym.j) - sp.log(sym.a_p + sym.b_p + sym.j)
    return sp.exp(sp.Sum(terms, (sym.j, 0, sym.G - 1)))


@derivation
def derive_prompt_pool_zero_std_share() -> Derivation:
    """E[p^G + (1-p)^G] = B(a_p+G, b_p)/B(a_p, b_p) + B(a_p, b_p+G)/B(a_p, b_p)."""
    high = _beta_moment(sym.G, 0)
    low = _beta_moment(0, sym.G)
    gamma_form = high + low
    # Gamma(x + G) / Gamma(x) is the rising factorial prod_{j<G} (x + j) for integer G
    for g in range(1, 5):
        rising = (sp.rf(sym.a_p, g) + sp.rf(sym.b_p, g)) / sp.rf(sym.a_p + sym.b_p, g)
        if sp.simplify(sp.gammasimp(gamma_form.subs(sym.G, g)) - rising) != 0:
            raise AssertionError(f"Beta moments are not rising factorials at G = {g}")
    share = _rising_ratio(sym.a_p) + _rising_ratio(sym.b_p)
    pmf_check = get("degenerate_group_probability").expr  # what is averaged over the pool
    return Derivation("prompt_pool_zero_std_share", share, (sym.G, sym.a_p, sym.b_p),
                      "Expected share of zero-std groups over a Beta(a_p, b_p) pool of "
                      "prompts.", SECTION,
                      (Step("averaged over the pool", pmf_check),
                       Step("Beta integrals E[p^G] + E[(1-p)^G]", gamma_form)))


@derivation
def derive_prompt_pool_failed_group_share() -> Derivation:
    """Derive E[(1-p)^G] = B(a_p, b_p+G)/B(a_p, b_p), the share of all-wrong groups.

    The part of the zero-std share that a policy locked onto wrong answers raises.
    """
    gamma_form = _beta_moment(0, sym.G)
    return Derivation("prompt_pool_failed_group_share", _rising_ratio(sym.b_p),
                      (sym.G, sym.a_p, sym.b_p),
                      "Expected share of all-wrong groups over a Beta(a_p, b_p) pool.", SECTION,
                      (Step("Beta integral E[(1-p)^G]", gamma_form),))


@derivation
def derive_prompt_pool_within_group_variance() -> Derivation:
    """E[p (1-p)] = a_p b_p / ((a_p + b_p) (a_p + b_p + 1))."""
    spread = sp.factor(_beta_moment(1, 1))
    return Derivation("prompt_pool_within_group_variance", spread, (sym.a_p, sym.b_p),
                      "Expected unbiased within-group reward variance over a Beta pool "
                      "(E[p (1-p)]).", SECTION)


@derivation
def derive_prompt_pool_batch_variance() -> Derivation:
    """Derive the expected unbiased variance of a step's B G rewards (TRL's reward_std^2).

    With N = B G rewards, E[sum (r - rbar)^2] = N Var(r) - N Var(rbar); the G rewards of a prompt
    share its p, so Var(rbar) = (N m (1-m) + N (G-1) Var(p)) / N^2.
    """
    mean = get("prompt_pool_mean_reward").expr
    var_p = sp.factor(_beta_moment(2, 0) - mean**2)
    total = sym.B * sym.G
    per_reward = mean * (1 - mean)
    var_mean = (total * per_reward + total * (sym.G - 1) * var_p) / total**2
    expected = sp.factor(sp.simplify((total * per_reward - total * var_mean) / (total - 1)))
    return Derivation("prompt_pool_batch_variance", expected,
                      (sym.B, sym.G, sym.a_p, sym.b_p),
                      "Expected unbiased variance of all rewards of a step (B prompts, G "
                      "completions each) over a Beta pool.", SECTION,
                      (Step("Var(p) of the pool", var_p),
                       Step("Var of the batch mean", var_mean)))
