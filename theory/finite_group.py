"""docs/theory.md section 7: exact finite-G statistics for Bernoulli rewards.

For one prompt with success probability p and a group of G completions, the number of successes
S is Binomial(G, p). The projected update of a group is U = (1/G) sum_i A_i (r_i - p): the
component of the policy-gradient step along the reward direction (exact for the two-arm bandit,
where d log pi / dx = r - p). The advantages sum to zero for every estimator here, so p drops out
and U is a function of S alone:

- GRPO: A_i = (r_i - mean) / (std + eps), std unbiased (torch.std, as TRL computes it);
- Dr. GRPO: A_i = r_i - mean;
- RLOO: A_i = r_i - (sum of the other rewards) / (G - 1).

A group with S = 0 or S = G has zero advantage (advantage degeneracy), with probability
p^G + (1-p)^G. Means and variances are exact finite sums over the binomial; their 1/G expansions
show which part is G-invariant and which is the residual G-dependence.
"""

from __future__ import annotations

from functools import cache

import sympy as sp

from .build import derivation, get
from .derivation import Derivation, Step, whole_number
from .symbols import sym

SECTION = "7. Exact finite-G statistics for Bernoulli rewards"

_SUCCESS_SHARE = sp.Symbol("mu", positive=True)  # S / G, the group mean reward

#: Largest group size of the exact binomial formulas: C(G, G/2) is below the largest double up
#: to G = 1029 (numpy's math.comb and the exports' product loop); the code refuses larger G.
MAX_GROUP = 1024
#: Domain of every derivation with a binomial coefficient C(G, S) or a sum up to G: a whole G
#: whose coefficients fit a double.
BINOMIAL_DOMAIN = sp.And(sym.G <= MAX_GROUP, whole_number(sym.G))
#: 0 < p < 1, written unevaluated: p is declared positive, but the exported code takes any double.
OPEN_PROBABILITY = sp.And(sp.Gt(sym.p, 0, evaluate=False), sym.p < 1)


@derivation
def derive_binomial_pmf() -> Derivation:
    """P(S | G, p) = C(G, S) p^S (1-p)^(G-S)."""
    pmf = sp.binomial(sym.G, sym.S) * sym.p**sym.S * (1 - sym.p) ** (sym.G - sym.S)
    return Derivation("binomial_pmf", pmf, (sym.S, sym.G, sym.p),
                      "Probability of S successes in a group of G.", SECTION,
                      domain=sp.And(BINOMIAL_DOMAIN, whole_number(sym.S)))


@derivation
def derive_degenerate_group_probability() -> Derivation:
    """p^G + (1-p)^G: all completions of a group agree, so every advantage is zero."""
    pmf = get("binomial_pmf")
    prob = sp.simplify(pmf.subs(S=0) + pmf.subs(S=sym.G))
    return Derivation("degenerate_group_probability", prob, (sym.G, sym.p),
                      "Probability of a zero-advantage group (advantage degeneracy).", SECTION,
                      (Step("P(S = 0) + P(S = G)", pmf.subs(S=0) + pmf.subs(S=sym.G)),))


def _projected_update(advantage_success: sp.Expr, advantage_failure: sp.Expr) -> tuple:
    """U = (1/G) sum_i A_i (r_i - p) for S successes (reward 1) and G - S failures (reward 0)."""
    total = (sym.S * advantage_success * (1 - sym.p)
             + (sym.G - sym.S) * advantage_failure * (0 - sym.p)) / sym.G
    update = sp.simplify(total)
    if update.has(sym.p):
        raise AssertionError("advantages do not sum to zero: the update depends on p")
    return update, (Step("U = (1/G) sum_i A_i (r_i - p)", total),
                    Step("the advantages sum to zero, p drops out", update))


@cache
def _group_moments() -> tuple[sp.Expr, sp.Expr]:
    mean = sym.S / sym.G
    sq_dev = sym.S * (1 - mean) ** 2 + (sym.G - sym.S) * mean**2
    std = sp.sqrt(sp.factor(sq_dev) / (sym.G - 1))
    return mean, std


@derivation
def derive_grpo_update_given_successes() -> Derivation:
    """GRPO's U(S) with the unbiased std and eps, as TRL computes it."""
    mean, std = _group_moments()
    update, steps = _projected_update((1 - mean) / (std + sym.eps), (0 - mean) / (std + sym.eps))
    return Derivation("grpo_update_given_successes", update, (sym.S, sym.G, sym.eps),
                      "GRPO projected update of a group with S successes.", SECTION,
                      (Step("unbiased group std", std), *steps))


@derivation
def derive_dr_grpo_update_given_successes() -> Derivation:
    """Dr. GRPO's U(S) = mu (1 - mu)."""
    mean, _ = _group_moments()
    update, steps = _projected_update(1 - mean, 0 - mean)
    return Derivation("dr_grpo_update_given_successes", sp.factor(update), (sym.S, sym.G),
                      "Dr. GRPO projected update of a group with S successes.", SECTION, steps)


@derivation
def derive_rloo_update_given_successes() -> Derivation:
    """RLOO's U(S) with the leave-one-out baseline."""
    baseline_success = (sym.S - 1) / (sym.G - 1)
    baseline_failure = sym.S / (sym.G - 1)
    update, steps = _projected_update(1 - baseline_success, 0 - baseline_failure)
    return Derivation("rloo_update_given_successes", sp.factor(update), (sym.S, sym.G),
                      "RLOO projected update of a group with S successes.", SECTION, steps)


def _binomial_sum(term: sp.Expr, lower: sp.Expr, upper: sp.Expr) -> sp.Sum:
    return sp.Sum(get("binomial_pmf").expr * term, (sym.S, lower, upper))


@derivation
def derive_grpo_update_mean() -> Derivation:
    """E[U] for GRPO, exact: degenerate groups (S = 0, G) contribute zero."""
    update = get("grpo_update_given_successes").expr
    mean = _binomial_sum(update, 1, sym.G - 1)
    return Derivation("grpo_update_mean", mean, (sym.G, sym.p, sym.eps),
                      "Exact mean GRPO projected update: a finite sum over the binomial.",
                      SECTION, domain=BINOMIAL_DOMAIN)


@derivation
def derive_grpo_update_variance() -> Derivation:
    """Var[U] for GRPO, exact."""
    update = get("grpo_update_given_successes").expr
    second = _binomial_sum(update**2, 1, sym.G - 1)
    variance = second - get("grpo_update_mean").expr ** 2
    return Derivation("grpo_update_variance", variance, (sym.G, sym.p, sym.eps),
                      "Exact variance of the GRPO projected update (finite sums).", SECTION,
                      (Step("E[U^2]", second),), domain=BINOMIAL_DOMAIN)


@cache
def _raw_moments(order: int) -> list[sp.Expr]:
    """E[S^j], j = 0..order, from the binomial MGF (1 - p + p e^u)^G."""
    u = sp.Symbol("u")
    mgf = (1 - sym.p + sym.p * sp.exp(u)) ** sym.G
    return [sp.factor(sp.diff(mgf, u, j).subs(u, 0)) for j in range(order + 1)]


def _expectation_of_polynomial(poly_in_s: sp.Expr) -> sp.Expr:
    poly = sp.Poly(sp.expand(poly_in_s), sym.S)
    moments = _raw_moments(poly.degree())
    return sp.factor(sum(coeff * moments[deg] for (deg,), coeff in poly.terms()))


def _closed_form_statistics(name: str, label: str) -> tuple[Derivation, Derivation]:
    update = get(f"{name}_update_given_successes").expr
    mean = _expectation_of_polynomial(update)
    variance = sp.factor(_expectation_of_polynomial(update**2) - mean**2)
    steps = (Step("raw binomial moments E[S^j] from the MGF", sp.Tuple(*_raw_moments(4))),)
    return (Derivation(f"{name}_update_mean", mean, (sym.G, sym.p),
                       f"Exact mean {label} projected update (closed form).", SECTION, steps),
            Derivation(f"{name}_update_variance", variance, (sym.G, sym.p),
                       f"Exact variance of the {label} projected update (closed form).", SECTION,
                       steps))


@derivation
def derive_dr_grpo_update_mean() -> Derivation:
    """E[U] = p (1-p) (G-1)/G for Dr. GRPO."""
    return _closed_form_statistics("dr_grpo", "Dr. GRPO")[0]


@derivation
def derive_dr_grpo_update_variance() -> Derivation:
    """Var[U] for Dr. GRPO, polynomial in p and 1/G."""
    return _closed_form_statistics("dr_grpo", "Dr. GRPO")[1]


@derivation
def derive_rloo_update_mean() -> Derivation:
    """E[U] = p (1-p) for RLOO: unbiased."""
    return _closed_form_statistics("rloo", "RLOO")[0]


@derivation
def derive_rloo_update_variance() -> Derivation:
    """Var[U] for RLOO."""
    return _closed_form_statistics("rloo", "RLOO")[1]


@cache
def _grpo_expansion() -> tuple[sp.Expr, sp.Expr, tuple[Step, ...]]:
    """E[U] to O(1/G) and Var[U] to O(1/G^2) for GRPO with eps = 0, about mu = p."""
    x = sp.Symbol("x", positive=True)  # 1/G
    u = sp.Symbol("u")
    update = get("grpo_update_given_successes").expr.subs(sym.eps, 0)
    in_share = sp.simplify(update.subs(sym.S, _SUCCESS_SHARE * sym.G))
    prefactor = sp.sqrt((sym.G - 1) / sym.G)
    shape = sp.sqrt(_SUCCESS_SHARE * (1 - _SUCCESS_SHARE))
    # both sides are positive for 0 < mu < 1 and G >= 2, so equal squares mean equal values
    if sp.simplify(in_share**2 - (prefactor * shape) ** 2) != 0:
        raise AssertionError("GRPO update is not sqrt((G-1)/G) sqrt(mu (1-mu))")
    # central moments of mu = S/G from its centred MGF
    mgf = sp.exp(-u * sym.p) * (1 - sym.p + sym.p * sp.exp(u / sym.G)) ** sym.G
    central = [sp.simplify(sp.diff(mgf, u, j).subs(u, 0)) for j in range(5)]
    delta = sp.Symbol("delta")
    taylor = sp.series(shape.subs(_SUCCESS_SHARE, sym.p + delta), delta, 0, 5).removeO()
    mean_shape = sum(taylor.coeff(delta, j) * central[j] for j in range(5))
    mean_shape = sp.series(mean_shape.subs(sym.G, 1 / x), x, 0, 3).removeO()
    second_shape = sym.p * (1 - sym.p) * (1 - x)  # E[mu (1 - mu)], exact
    pre = prefactor.subs(sym.G, 1 / x)
    mean = sp.series(pre * mean_shape, x, 0, 2).removeO()
    variance = sp.series(pre**2 * (second_shape - mean_shape**2), x, 0, 3).removeO()
    to_g = {x: 1 / sym.G}
    steps = (Step("U = sqrt((G-1)/G) sqrt(mu (1 - mu)), mu = S/G", in_share),
             Step("central moments of mu to fourth order", sp.Tuple(*central)),
             Step("Taylor expansion of sqrt(mu (1 - mu)) about p", taylor))
    return (sp.collect(sp.simplify(mean.subs(to_g)), sym.G),
            sp.collect(sp.simplify(variance.subs(to_g)), sym.G), steps)


@derivation
def derive_grpo_update_mean_expansion() -> Derivation:
    """E[U] = sqrt(p(1-p)) + O(1/G): the leading order is G-invariant."""
    mean, _, steps = _grpo_expansion()
    return Derivation("grpo_update_mean_expansion", mean, (sym.G, sym.p),
                      "GRPO mean update to O(1/G) (eps = 0, degenerate groups neglected).",
                      SECTION, steps, domain=OPEN_PROBABILITY)


@derivation
def derive_grpo_update_variance_expansion() -> Derivation:
    """Var[U] = (1-2p)^2/(4G) + O(1/G^2): vanishes to first order at p = 1/2."""
    _, variance, steps = _grpo_expansion()
    return Derivation("grpo_update_variance_expansion", variance, (sym.G, sym.p),
                      "GRPO update variance to O(1/G^2) (eps = 0).", SECTION, steps,
                      domain=OPEN_PROBABILITY)
