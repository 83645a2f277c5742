"""docs/theory.md section 7 for a pool of prompts: success rates spread by a Beta law.

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
from .derivation import Derivation, Step, whole_number
from .symbols import sym

SECTION = "7. Exact finite-G statistics for Bernoulli rewards: a Beta pool of prompts"

#: Largest G of the pool's products over j < G, evaluated term by term in every language: the
#: ground layer's ``GROUP_SIZE_MAX``, so that a call ends (a test holds the two equal).
POOL_GROUP_MAX = 65536
#: Domain of the pool's shares: a whole G up to :data:`POOL_GROUP_MAX`.
POOL_DOMAIN = sp.And(sym.G <= POOL_GROUP_MAX, whole_number(sym.G))


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
                       Step("Beta integrals E[p^G] + E[(1-p)^G]", gamma_form)),
                      domain=POOL_DOMAIN)


@derivation
def derive_prompt_pool_failed_group_share() -> Derivation:
    """Derive E[(1-p)^G] = B(a_p, b_p+G)/B(a_p, b_p), the share of all-wrong groups.

    The part of the zero-std share that a policy locked onto wrong answers raises.
    """
    gamma_form = _beta_moment(0, sym.G)
    return Derivation("prompt_pool_failed_group_share", _rising_ratio(sym.b_p),
                      (sym.G, sym.a_p, sym.b_p),
                      "Expected share of all-wrong groups over a Beta(a_p, b_p) pool.", SECTION,
                      (Step("Beta integral E[(1-p)^G]", gamma_form),),
                      domain=POOL_DOMAIN)


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


def _answer_entropy() -> sp.Expr:
    """E[h(p)], h(p) = -p ln p - (1-p) ln(1-p), for p ~ Beta(a_p, b_p), in nats.

    E[p^s] = B(a_p + s, b_p) / B(a_p, b_p); its derivative in s at s = 1 is E[p ln p]
    = m (psi(a_p + 1) - psi(a_p + b_p + 1)), m = a_p / (a_p + b_p), and the mirror term follows
    by exchanging a_p and b_p: E[h] = psi(a_p + b_p + 1) - m psi(a_p + 1) - (1 - m) psi(b_p + 1).
    The derivative route is checked against this form at one point (numerically: a symbolic
    simplification of the Beta derivative takes minutes).
    """
    a, b = sym.a_p, sym.b_p
    m = a / (a + b)
    closed = sp.digamma(a + b + 1) - m * sp.digamma(a + 1) - (1 - m) * sp.digamma(b + 1)
    s = sp.Symbol("s", positive=True)
    moment = sp.gamma(a + s) * sp.gamma(a + b) / (sp.gamma(a) * sp.gamma(a + b + s))
    at = {a: sp.Rational(7, 10), b: sp.Rational(19, 10)}
    p_log_p = sp.diff(moment, s).subs(s, 1)
    mirror = p_log_p.subs({a: b, b: a}, simultaneous=True)
    if abs(float((-(p_log_p + mirror) - closed).subs(at).evalf(20))) > 1e-12:
        raise AssertionError("E[h] differs from the derivative of the Beta moments")
    return closed


@derivation
def derive_prompt_pool_entropy_ratio_bound() -> Derivation:
    """Derive the smallest answer-entropy ratio a change of the mean reward explains.

    For a pool of prompts whose success rates keep their Beta spread phi = a_p + b_p while the
    mean moves from r_0 to r_1, the answer entropy moves by E_phi[h](r_1) / E_phi[h](r_0)
    (:func:`_answer_entropy`). As phi -> infinity that ratio is h(r_1)/h(r_0) (every prompt at
    the mean); as phi -> 0 it is r_1 (1 - r_1) / (r_0 (1 - r_0)) (the Beta density tends to
    phi m (1-m) / (p (1-p)) away from the ends, so E[h] -> phi m (1-m) int_0^1 h / (p (1-p)) dp
    = phi m (1-m) pi^2/3). Between the two the ratio is monotone in phi (checked on a grid in
    tests/test_prompt_pool.py), so the smaller limit is the largest fall of the entropy that a
    kept spread allows: an observed fall beyond it means the prompts locked (phi fell) beyond
    what the reward's change explains (policy concentration read without a zero-std share).
    """
    entropy = _answer_entropy()
    m = sym.a_p / (sym.a_p + sym.b_p)
    # the two limits, checked on the exact expression at a fixed mean m = 1/4 (cheap evalf)
    at = {sym.a_p: sp.Float(2.5e5, 30), sym.b_p: sp.Float(7.5e5, 30)}
    homogeneous = -(m * sp.log(m) + (1 - m) * sp.log(1 - m))
    if abs(float((entropy - homogeneous).subs(at).evalf(30))) > 1e-5:
        raise AssertionError("E[h] does not reach h(m) for a homogeneous pool")
    small = {sym.a_p: sp.Float(2.5e-8, 30), sym.b_p: sp.Float(7.5e-8, 30)}
    polarized = m * (1 - m) * sp.pi**2 / 3
    if abs(float((entropy / (sym.a_p + sym.b_p) / polarized).subs(small).evalf(30)) - 1) > 1e-5:
        raise AssertionError("E[h] / phi does not reach m (1-m) pi^2/3 for a polarized pool")

    def h(r: sp.Expr) -> sp.Expr:
        return -(r * sp.log(r) + (1 - r) * sp.log(1 - r))

    kept_homogeneous = h(sym.r1) / h(sym.r0)
    kept_polarized = sym.r1 * (1 - sym.r1) / (sym.r0 * (1 - sym.r0))
    # min(x, y) = (x + y - |x - y|) / 2: the generated numpy code needs no reduce
    smaller = (kept_homogeneous + kept_polarized - sp.Abs(kept_homogeneous - kept_polarized)) / 2
    return Derivation("prompt_pool_entropy_ratio_bound", smaller,
                      (sym.r0, sym.r1),
                      "Smallest ratio of the answer entropy at mean reward r_1 to that at r_0 "
                      "for a Beta pool whose spread phi is kept.", SECTION,
                      (Step("E[h(p)] over a Beta(a_p, b_p) pool", entropy),
                       Step("phi -> infinity: h(m)", homogeneous),
                       Step("phi -> 0: E[h] / phi", polarized)))


def _group_std(successes: sp.Expr) -> sp.Expr:
    """Unbiased std of a binary group with ``successes`` of G right (torch.std, verl and TRL)."""
    return sp.sqrt(successes * (sym.G - successes) / (sym.G * (sym.G - 1)))


@derivation
def derive_grpo_top_advantage() -> Derivation:
    """Derive the advantage of a right answer in a group with S of G right (verl's GRPO).

    verl (``core_algos.compute_grpo_outcome_advantage``) and TRL normalise by the unbiased group
    std plus eps: A = (1 - S/G) / (std + eps). For 0 < S < G it falls strictly with S (eps = 0:
    A^2 = (G-1)(G-S)/(G S)), so the largest advantage of a step (verl's
    ``critic/advantages/max``, over the response tokens, each carrying its response's A) is this
    value at the fewest successes among the groups with spread; 0 when no group has spread.
    """
    top = (1 - sym.S / sym.G) / (_group_std(sym.S) + sym.eps)
    squared = sp.simplify((top.subs(sym.eps, 0)) ** 2)
    if sp.simplify(squared - (sym.G - 1) * (sym.G - sym.S) / (sym.G * sym.S)) != 0:
        raise AssertionError("the top advantage is not sqrt((G-1)(G-S)/(G S)) at eps = 0")
    return Derivation("grpo_top_advantage", top, (sym.S, sym.G, sym.eps),
                      "Advantage of a right answer in a binary group with S of G right "
                      "(unbiased std plus eps, as verl and TRL).", SECTION,
                      (Step("A^2 at eps = 0", squared),))


@derivation
def derive_grpo_bottom_advantage() -> Derivation:
    """Derive the advantage of a wrong answer in a group with S of G right: -(S/G)/(std + eps).

    It falls (grows more negative) with S, so the smallest advantage of a step (verl's
    ``critic/advantages/min``) is this value at the most successes among the groups with
    spread (A^2 = (G-1) S / (G (G-S)) at eps = 0).
    """
    bottom = (0 - sym.S / sym.G) / (_group_std(sym.S) + sym.eps)
    squared = sp.simplify((bottom.subs(sym.eps, 0)) ** 2)
    if sp.simplify(squared - (sym.G - 1) * sym.S / (sym.G * (sym.G - sym.S))) != 0:
        raise AssertionError("the bottom advantage is not -sqrt((G-1)S/(G(G-S))) at eps = 0")
    return Derivation("grpo_bottom_advantage", bottom, (sym.S, sym.G, sym.eps),
                      "Advantage of a wrong answer in a binary group with S of G right "
                      "(unbiased std plus eps, as verl and TRL).", SECTION,
                      (Step("A^2 at eps = 0", squared),))


def _log_rising(first: sp.Expr, count: sp.Expr) -> sp.Expr:
    """Return the sum of log(first + j) for j < count: log Gamma(first + count) / Gamma(first)."""
    return sp.Sum(sp.log(first + sym.j), (sym.j, 0, count - 1))


@derivation
def derive_prompt_pool_successes_pmf() -> Derivation:
    """Derive P(S successes in a group) over a Beta(a_p, b_p) pool: the Beta-binomial law.

    E_p[C(G, S) p^S (1-p)^(G-S)] = C(G, S) B(a_p + S, b_p + G - S) / B(a_p, b_p) (Euler's
    integral), written with rising factorials as finite sums of logs for the generated code.
    """
    gamma_form = sp.binomial(sym.G, sym.S) * _beta_moment(sym.S, sym.G - sym.S)
    rising = sp.exp(_log_rising(sym.a_p, sym.S) + _log_rising(sym.b_p, sym.G - sym.S)
                    - _log_rising(sym.a_p + sym.b_p, sym.G))
    pmf = sp.binomial(sym.G, sym.S) * rising
    at = {sym.a_p: sp.Rational(7, 10), sym.b_p: sp.Rational(19, 10), sym.G: 5}
    for s in range(6):
        exact = sp.gammasimp(gamma_form.subs(at).subs(sym.S, s))
        sums = pmf.subs(at).subs(sym.S, s).doit()
        if abs(float((exact - sums).evalf(30))) > 1e-20:
            raise AssertionError(f"Beta-binomial rising form differs at S = {s}")
    return Derivation("prompt_pool_successes_pmf", pmf, (sym.S, sym.G, sym.a_p, sym.b_p),
                      "Probability of S successes in a group of G over a Beta(a_p, b_p) pool "
                      "(Beta-binomial).", SECTION,
                      (Step("Beta integral C(G, S) E[p^S (1-p)^(G-S)]", gamma_form),),
                      domain=get("binomial_pmf").domain)  # the same binomial coefficient


@derivation
def derive_prompt_pool_batch_extremes_within() -> Derivation:
    """Derive P(every group of a step is without spread or has S_lo <= S <= S_hi).

    The B groups of a step are independent draws of the pool (prompts sampled independently),
    so the probability is q_in^B, q_in = q(0) + q(G) + sum_{S = S_lo}^{S_hi} q(S) the chance of
    one group, q the Beta-binomial law (``prompt_pool_successes_pmf``; q_in is an argument, not
    that nested sum, so that every export can print the result). With the advantages' monotony
    (``grpo_top_advantage``, ``grpo_bottom_advantage``) this is P(advantages max <= top(S_lo)
    and min >= bottom(S_hi)), and the joint law of the step's (fewest, most) successes among
    the groups with spread, which verl's ``critic/advantages/{max,min}`` reveal, follows by
    inclusion-exclusion. An empty range (S_lo = S_hi + 1) is the degenerate batch, max = min = 0:
    probability (zero-std share)^B; the full range (1, G - 1) is certain.
    """
    q = get("prompt_pool_successes_pmf").expr
    within = (q.subs(sym.S, 0) + q.subs(sym.S, sym.G)
              + sp.Sum(q, (sym.S, sym.S_lo, sym.S_hi)))
    prob = sym.q_in**sym.B
    share = get("prompt_pool_zero_std_share").expr
    at = {sym.a_p: sp.Rational(3, 5), sym.b_p: sp.Rational(7, 5), sym.B: 3}
    for g in range(2, 5):
        empty = within.subs(at).subs({sym.G: g, sym.S_lo: 1, sym.S_hi: 0}).doit()
        full = within.subs(at).subs({sym.G: g, sym.S_lo: 1, sym.S_hi: g - 1}).doit()
        target = share.subs(at).subs(sym.G, g).doit()
        if abs(float((empty - target).evalf(30))) > 1e-20 or abs(float(full.evalf(30)) - 1) > 1e-20:
            raise AssertionError(f"batch extremes law: wrong limits at G = {g}")
    return Derivation("prompt_pool_batch_extremes_within", prob, (sym.B, sym.q_in),
                      "Probability that every group with spread of a step has between S_lo and "
                      "S_hi successes, from the chance q_in of one group.", SECTION,
                      (Step("q_in over a Beta(a_p, b_p) pool", within),
                       Step("the degenerate batch (S_lo = S_hi + 1)", share**sym.B)))


def _dealt_batch_moments() -> tuple[sp.Expr, sp.Expr]:
    """Return Var and disjoint Cov of batch means of B prompts dealt from N_p without replacement.

    Prompt i of the dataset has success rate p_i; S1 = sum p_i = N_p mu and S2 = sum p_i^2 =
    N_p (sigma_r^2 + mu^2). The indicator I_i of prompt i in a batch has P = B / N_p and
    E[I_i I_j] = B (B - 1) / (N_p (N_p - 1)) for i != j; for the indicator J_j of a second batch
    dealt from the same shuffle (disjoint), E[I_i J_i] = 0 and E[I_i J_j] = B^2 / (N_p (N_p - 1)).
    Var(sum p_i I_i) = S2 Var(I) + (S1^2 - S2) Cov(I_i, I_j), and the same for the pair.
    """
    n, b = sym.N_p, sym.B
    mu = sp.Symbol("mu_r", real=True)
    s1, s2 = n * mu, n * (sym.sigma_r2 + mu**2)
    p_in = b / n
    var_one = s2 * p_in * (1 - p_in) + (s1**2 - s2) * (b * (b - 1) / (n * (n - 1)) - p_in**2)
    cov_pair = s2 * (0 - p_in**2) + (s1**2 - s2) * (b**2 / (n * (n - 1)) - p_in**2)
    return sp.factor(sp.simplify(var_one / b**2)), sp.factor(sp.simplify(cov_pair / b**2))


@derivation
def derive_prompt_pool_step_change_variance() -> Derivation:
    """Derive half the variance of the step reward's change when an epoch deals the prompts.

    TRL, verl and OpenRLHF shuffle the dataset of N_p prompts each epoch and deal it in
    disjoint batches of B. Within an epoch two consecutive batch means have the variance
    sigma_r^2 (N_p - B) / (B (N_p - 1)) each (the finite-population correction) and the
    covariance -sigma_r^2 / (N_p - 1) (disjoint draws), so half the variance of their change is
    sigma_r^2 N_p / (B (N_p - 1)); across an epoch's end (one change in N_p / B) the batches
    are independent and it is the variance alone. The G answers add E_i[p_i (1 - p_i)] / (B G)
    whatever the prompts. With N_p -> infinity this is the fresh-draw value sigma_r^2 / B +
    w_r / (B G); batches drawn independently each step without replacement would give the
    variance alone, sigma_r^2 (N_p - B) / (B (N_p - 1)) (the first step).
    """
    var_one, cov_pair = _dealt_batch_moments()
    boundary = sym.B / sym.N_p  # share of the changes across an epoch's end
    between = sp.factor(sp.simplify(var_one - (1 - boundary) * cov_pair))
    half = between + sym.w_r / (sym.B * sym.G)
    if sp.simplify(sp.limit(half, sym.N_p, sp.oo)
                   - (sym.sigma_r2 / sym.B + sym.w_r / (sym.B * sym.G))) != 0:
        raise AssertionError("step-change variance: not the fresh-draw value at N_p -> oo")
    return Derivation("prompt_pool_step_change_variance", half,
                      (sym.B, sym.G, sym.N_p, sym.sigma_r2, sym.w_r),
                      "Half the variance of the change of the step reward (B prompts dealt by "
                      "epochs from N_p, G answers each).", SECTION,
                      (Step("variance of one batch mean (finite population)", var_one),
                       Step("covariance of two disjoint batch means", cov_pair),
                       Step("between-prompt part, a share B / N_p of changes across an epoch",
                            between)))


@derivation
def derive_prompt_pool_between_share() -> Derivation:
    """Derive the share kappa of the reward's variance between prompts from its step changes.

    With m (1 - m) = sigma_r^2 + w_r (the variance of one answer, split between prompts and
    within a group) and x_r = v B / (m (1 - m)), v from ``prompt_pool_step_change_variance``,
    x_r = c kappa + (1 - kappa) / G with c the between-prompt factor, so kappa = (x_r - 1/G) /
    (c - 1/G): 0 for a policy that explores every prompt, 1 for one deterministic on each.
    Fresh draws (c = 1) give (x_r - 1/G) / (1 - 1/G); where c = 1/G the change does not
    determine kappa.
    """
    kappa = sp.Symbol("kappa_r", real=True)
    spread = sp.Symbol("s_r", positive=True)  # m (1 - m)
    v = get("prompt_pool_step_change_variance").expr
    ratio = sp.simplify(v.subs({sym.sigma_r2: kappa * spread, sym.w_r: (1 - kappa) * spread})
                        * sym.B / spread)
    (share,) = sp.solve(sp.Eq(sym.x_r, ratio), kappa)
    factor = sp.factor(sp.simplify(ratio.subs(kappa, 1)))
    return Derivation("prompt_pool_between_share", sp.factor(share),
                      (sym.x_r, sym.G, sym.B, sym.N_p),
                      "Share of the reward's variance between prompts, from half the variance "
                      "of its step changes (prompts dealt by epochs).", SECTION,
                      (Step("x_r as a function of kappa", ratio),
                       Step("between-prompt factor c", factor)))
