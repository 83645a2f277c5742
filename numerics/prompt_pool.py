"""The Beta law of prompt success rates behind a window of logged steps (docs/theory.md section 7).

A step's zero-std share is the average of p^G + (1-p)^G over its prompts. With the prompts'
success rates p ~ Beta(m phi, (1-m) phi) (mean m, concentration phi), the expected share
(``prompt_pool_zero_std_share``) falls monotonically from 1 (phi -> 0: every prompt always right
or always wrong) to m^G + (1-m)^G (phi -> infinity: every prompt at the mean). The logged mean
reward gives m; the logged zero-std share then gives phi by inverting that monotone curve, and
its standard error gives an interval. ``reward_std`` (TRL 1.16: the std of all B G rewards) is
not used: its expectation (``prompt_pool_batch_variance``) depends on phi only through
(G-1)/((BG-1)(phi+1)), below the noise of one step.

:func:`drift_loss` is what the distribution is used for: the share of the GRPO drift that finite
groups lose, E_p[E U(G, p)] / E_p[sqrt(p (1-p))] (section 7: E U -> sqrt(p(1-p)) as G grows).
Needs numpy and scipy.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass

import numpy as np
from scipy.optimize import brentq
from scipy.special import betaln, gammaln

from grpodyn.ground import InputError, check_group_size, check_int

from .compiled import compiled

__all__ = ["PromptPool", "fit_prompt_pool", "fit_prompt_pool_extremes", "zero_std_share",
           "failed_group_share", "drift_loss", "entropy_ratio_bound", "read_group_extremes",
           "group_range_chance", "zero_std_share_lower_bound", "group_size_for_spread",
           "successes_pmf"]

_PHI_MIN, _PHI_MAX = 1e-3, 1e4
#: the largest G :func:`group_size_for_spread` searches: beyond it a group is no practical lever
_LARGEST_GROUP = 4096
_Z95 = 1.96
_CHI2_95 = 3.841  # one degree of freedom: the profile-likelihood 95% interval
#: relative tolerance when a logged extreme advantage is matched to a group's success count
#: (the console prints 6 significant digits; neighbouring counts differ by far more)
_ADV_MATCH = 2e-3
#: the largest G whose binomial coefficients are all finite floats (C(1030, 515) > 1.8e308)
EXACT_BINOMIAL_MAX = 1029


@dataclass(frozen=True)
class PromptPool:
    """Beta(m phi, (1-m) phi) law of the prompts' success rates in a window of steps.

    ``status``: ``"estimated"`` (phi with a 95% interval), ``"homogeneous"`` (the share is at or
    below what identical prompts give: only a lower bound on phi), ``"deterministic"`` (every
    group without spread: only an upper bound), ``"undetermined"`` (the mean is 0 or 1 and
    every phi gives the same share). ``low``/``high`` bound phi; ``phi`` is NaN unless
    estimated.
    """

    mean: float
    phi: float
    low: float
    high: float
    status: str
    group_size: int
    observed_share: float
    reason: str = ""

    @property
    def point_phi(self) -> float:
        """Return phi, or the bound that is known.

        inf for a homogeneous pool, the upper bound of a deterministic one.
        """
        if np.isfinite(self.phi):
            return self.phi
        return np.inf if self.status == "homogeneous" else max(self.high, _PHI_MIN)

    def share_at(self, mean: float, group_size: int | None = None) -> float:
        """Predict the zero-std share of this pool's concentration at another mean reward."""
        return zero_std_share(mean, self.point_phi, group_size or self.group_size)

    def failed_share_at(self, mean: float, group_size: int | None = None) -> float:
        """E[(1-p)^G], the share of all-wrong groups, at this concentration and ``mean``."""
        return failed_group_share(mean, self.point_phi, group_size or self.group_size)

    def to_dict(self) -> dict:
        """Return the fit as plain JSON types."""
        return {"mean": self.mean, "phi": self.phi, "phi_interval": [self.low, self.high],
                "status": self.status, "group_size": self.group_size,
                "observed_zero_std_share": self.observed_share, "reason": self.reason}


def zero_std_share(mean: float, phi: float, group_size: int) -> float:
    """E[p^G + (1-p)^G] for p ~ Beta(mean phi, (1-mean) phi); homogeneous limit for phi = inf."""
    mean = float(np.clip(mean, 1e-9, 1 - 1e-9))
    if not np.isfinite(phi):
        return mean**group_size + (1 - mean) ** group_size
    return float(compiled("prompt_pool_zero_std_share")(group_size, mean * phi,
                                                         (1 - mean) * phi))


def group_size_for_spread(success: float, *, share: float = 0.5) -> int | None:
    """Return the least G at which identical prompts leave at most ``share`` of groups flat.

    Parameters
    ----------
    success : float
        The prompts' success rate p, in (0, 1).
    share : float
        The share of groups without reward spread allowed, P_0(G, p) = p^G + (1 - p)^G.

    Returns
    -------
    int or None
        The least G in [2, 4096] with P_0(G, p) <= ``share``; None when p is 0 or 1 or no G in
        that range meets it. P_0 is convex in p, so prompts of mean p whose rates differ leave
        more groups without spread (Jensen): a lower bound for them (docs/theory.md section 7).
    """
    if not 0 < success < 1:
        return None
    groups = np.arange(2, _LARGEST_GROUP + 1)
    flat = compiled("degenerate_group_probability")(groups, success)
    enough = np.flatnonzero(flat <= share)
    return int(groups[enough[0]]) if enough.size else None


def failed_group_share(mean: float, phi: float, group_size: int) -> float:
    """E[(1-p)^G] for p ~ Beta(mean phi, (1-mean) phi); homogeneous limit for phi = inf."""
    mean = float(np.clip(mean, 1e-9, 1 - 1e-9))
    if not np.isfinite(phi):
        return (1 - mean) ** group_size
    return float(compiled("prompt_pool_failed_group_share")(group_size, mean * phi,
                                                             (1 - mean) * phi))


def entropy_ratio_bound(start: float, end: float) -> float:
    """Return the smallest answer-entropy ratio that a move of the mean reward explains.

    ``prompt_pool_entropy_ratio_bound`` (docs/theory.md section 7): for a Beta
    pool of prompts whose spread phi is kept while the mean success rate moves from ``start``
    to ``end``, E[h(p)] at ``end`` over E[h(p)] at ``start`` is at least
    min(h(end)/h(start), end (1-end) / (start (1-start))), h the binary entropy in nats.

    Parameters
    ----------
    start, end : float
        Mean success rates (dimensionless, clipped into (0, 1)).

    Returns
    -------
    float
        The ratio (dimensionless; above 1 when the mean moves toward 1/2).
    """
    start = float(np.clip(start, 1e-9, 1 - 1e-9))
    end = float(np.clip(end, 1e-9, 1 - 1e-9))
    return float(compiled("prompt_pool_entropy_ratio_bound")(start, end))


def _invert(mean: float, share: float, group_size: int) -> float:
    """Phi with zero_std_share(mean, phi) = share (share strictly inside the attainable range)."""
    return float(np.exp(brentq(lambda x: zero_std_share(mean, np.exp(x), group_size) - share,
                               np.log(_PHI_MIN), np.log(_PHI_MAX), xtol=1e-6)))


def fit_prompt_pool(reward: np.ndarray, zero_std: np.ndarray, *, group_size: int
                    ) -> PromptPool:
    """Estimate the Beta law of a window of steps from their mean reward and zero-std share.

    Parameters
    ----------
    reward, zero_std : numpy.ndarray
        Per-step mean reward (a success rate in [0, 1]) and share of zero-std groups; NaN
        entries are skipped.
    group_size : int
        G.

    Returns
    -------
    PromptPool
        phi with a 95% interval from the standard error of the window's mean share.
    """
    group_size = check_group_size(group_size)
    reward, zero_std = np.asarray(reward, float), np.asarray(zero_std, float)
    both = np.isfinite(reward) & np.isfinite(zero_std)
    if both.sum() < 2:
        raise InputError("fit_prompt_pool: needs at least 2 steps with both a reward and a "
                         "zero-std share")
    m, f = float(reward[both].mean()), float(zero_std[both].mean())
    se = float(zero_std[both].std(ddof=1) / np.sqrt(both.sum()))
    if not 0 <= m <= 1:
        raise InputError(f"fit_prompt_pool: mean reward {m:.3g} is not a success rate in [0, 1]")
    # the homogeneous end as far as the inversion resolves it: a share between the phi = inf
    # limit and its value at _PHI_MAX cannot be told from identical prompts (it made brentq
    # fail: both ends of the bracket on one side)
    floor = zero_std_share(m, _PHI_MAX, group_size)
    ceiling = zero_std_share(m, _PHI_MIN, group_size)

    def pool(phi: float, low: float, high: float, status: str, reason: str = "") -> PromptPool:
        return PromptPool(m, phi, low, high, status, group_size, f, reason)

    if m <= 1e-6 or m >= 1 - 1e-6 or ceiling - floor < 1e-6:
        return pool(np.nan, 0.0, np.inf, "undetermined",
                    f"mean reward {m:.3f}: every prompt distribution leaves all groups alike")

    def bound(share: float) -> float:
        """Phi at a share: the share falls from 1 (phi -> 0) to the floor (phi -> inf)."""
        if share <= floor:
            return np.inf
        if share >= ceiling:
            return _PHI_MIN
        return _invert(m, share, group_size)

    low = bound(min(f + _Z95 * se, 1.0))
    high = bound(max(f - _Z95 * se, 0.0))
    if f <= floor:
        return pool(np.nan, low, np.inf, "homogeneous",
                    f"zero-std share {f:.3f} at or below {floor:.3f}, what identical prompts at "
                    f"the mean {m:.3f} give")
    if f >= ceiling:
        return pool(np.nan, 0.0, max(high, _PHI_MIN), "deterministic",
                    f"zero-std share {f:.3f}: every prompt always right or always wrong")
    return pool(_invert(m, f, group_size), low, high, "estimated")


def successes_pmf(group_size: int, a: float, b: float) -> np.ndarray:
    """Return the Beta-binomial law of S = 0..G successes in a group over a Beta(a, b) pool.

    ``prompt_pool_successes_pmf`` (docs/theory.md section 7) in O(G) memory, where the generated
    finite sums broadcast one G-long sum over each of the G + 1 counts. Up to
    :data:`EXACT_BINOMIAL_MAX` it is the generated code's arithmetic to the last bit (exact
    binomial coefficients, each rising factorial a cumulative sum of logs); beyond, where
    C(G, G/2) exceeds the largest float, it is ``scipy.stats.betabinom`` (log space through
    ``betaln``), finite for any G.

    Parameters
    ----------
    group_size : int
        G >= 2.
    a, b : float
        The Beta law's shape parameters (positive).

    Returns
    -------
    numpy.ndarray
        q(S) for S = 0..G (dimensionless, G + 1 entries summing to 1).
    """
    group_size = check_group_size(group_size)
    counts = np.arange(group_size + 1)
    if group_size > EXACT_BINOMIAL_MAX:
        from scipy.stats import betabinom  # a third of a second to import: only when needed

        return betabinom.pmf(counts, group_size, a, b)
    offsets = np.arange(group_size)

    def log_rising(start: float) -> np.ndarray:
        """Return log of start (start + 1) ... (start + k - 1) for k = 0..G."""
        return np.concatenate([[0.0], np.cumsum(np.log(start + offsets))])

    log_pmf = (log_rising(a) + log_rising(b)[::-1]  # the rising factorials at S and G - S
               - np.sum(np.log(a + b + offsets)))
    return np.exp(log_pmf) * _binomial_row(group_size)


@functools.cache
def _binomial_row(group_size: int) -> np.ndarray:
    """Return C(G, S) for S = 0..G as floats, exact to the last bit (read-only, kept per G).

    A likelihood fit evaluates :func:`successes_pmf` about a hundred times at one G; the row of
    big-integer binomials depends on G alone.
    """
    row = np.array([float(math.comb(group_size, s)) for s in range(group_size + 1)])
    row.flags.writeable = False
    return row


def drift_loss(mean: float, phi: float, group_size: int) -> float:
    """Share of the expected GRPO drift lost to finite groups over a Beta pool.

    1 - E_p[E U(G, p)] / E_p[sqrt(p(1-p))]: E U from ``grpo_update_given_successes`` (TRL's
    eps = 1e-4) averaged over the Beta-binomial law of the successes, against the large-G
    drift sqrt(p (1-p)) (section 7). 0: groups lose nothing; 1: no group carries a gradient.
    phi = inf is the homogeneous pool.
    """
    group_size = check_group_size(group_size)
    mean = float(np.clip(mean, 1e-9, 1 - 1e-9))
    successes = np.arange(1, group_size)
    update = compiled("grpo_update_given_successes")(successes, group_size, 1e-4)
    if np.isfinite(phi):
        a, b = mean * phi, (1 - mean) * phi
        drift = float(np.sum(successes_pmf(group_size, a, b)[1:group_size] * update))
        large_g = float(np.exp(betaln(a + 0.5, b + 0.5) - betaln(a, b)))
    else:
        log_pmf = (gammaln(group_size + 1) - gammaln(successes + 1)
                   - gammaln(group_size - successes + 1) + successes * np.log(mean)
                   + (group_size - successes) * np.log1p(-mean))
        drift = float(np.sum(np.exp(log_pmf) * update))
        large_g = float(np.sqrt(mean * (1 - mean)))
    return float(np.clip(1 - drift / large_g, 0.0, 1.0)) if large_g > 0 else 1.0


def read_group_extremes(adv_max: np.ndarray, adv_min: np.ndarray, *, group_size: int,
                        eps: float = 1e-6) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Read each step's fewest and most successes among its groups with spread.

    verl logs ``critic/advantages/max`` and ``min`` over the response tokens of a step; with
    binary rewards and GRPO's group normalisation each is the advantage of one group
    (``grpo_top_advantage`` at the fewest successes S_lo among the groups with spread,
    ``grpo_bottom_advantage`` at the most, S_hi; docs/theory.md section 7), and both are 0 when no
    group has spread (a degenerate batch).

    Parameters
    ----------
    adv_max, adv_min : numpy.ndarray
        Per-step largest and smallest advantage (reward units over the group std).
    group_size : int
        G (completions per prompt).
    eps : float
        The epsilon added to the group std (verl: 1e-6; TRL: 1e-4).

    Returns
    -------
    s_lo, s_hi : numpy.ndarray
        Success counts (0 < S < G); S_lo = 1, S_hi = 0 on a degenerate step (the empty range);
        -1 where the step is not read (NaN, or a value no binary group of G gives).
    read : numpy.ndarray of bool
        Steps whose pair was read.
    """
    group_size = check_group_size(group_size)
    counts = np.arange(1, group_size)
    top = compiled("grpo_top_advantage")(counts, group_size, eps)
    bottom = compiled("grpo_bottom_advantage")(counts, group_size, eps)
    hi_arr, lo_arr = np.asarray(adv_max, float), np.asarray(adv_min, float)

    def match(values: np.ndarray, table: np.ndarray) -> np.ndarray:
        # the relative gap |v - t| / |t| over a table of one sign falls to v and rises past it,
        # so the nearest entry is one of the two that bracket v in sorted order: O(steps + G)
        # memory, where the full steps x G gap matrix grows without bound in G
        order = np.argsort(table)
        at = np.searchsorted(table[order], values)
        below = order[np.clip(at - 1, 0, table.size - 1)]
        above = order[np.clip(at, 0, table.size - 1)]

        def gap(index: np.ndarray) -> np.ndarray:
            return np.nan_to_num(np.abs(values - table[index]) / np.abs(table[index]), nan=np.inf)

        closer = (gap(below) < gap(above)) | ((gap(below) == gap(above)) & (below < above))
        nearest = np.where(closer, below, above)
        ok = np.isfinite(values) & (gap(nearest) <= _ADV_MATCH)
        return np.where(ok, counts[nearest], -1)

    degenerate = (np.abs(hi_arr) <= 1e-9) & (np.abs(lo_arr) <= 1e-9)
    s_lo, s_hi = match(hi_arr, top), match(lo_arr, bottom)
    read = degenerate | ((s_lo > 0) & (s_hi > 0) & (s_lo <= s_hi))
    s_lo = np.where(degenerate, 1, np.where(read, s_lo, -1))
    s_hi = np.where(degenerate, 0, np.where(read, s_hi, -1))
    return s_lo, s_hi, read


def group_range_chance(s_lo: np.ndarray, s_hi: np.ndarray, *, group_size: int, mean: float,
                       phi: float) -> np.ndarray:
    """Chance q_in that a group has no spread or between ``s_lo`` and ``s_hi`` successes.

    q(0) + q(G) + sum_{S = s_lo}^{s_hi} q(S), q the Beta-binomial law
    (``prompt_pool_successes_pmf``) of a Beta(mean phi, (1-mean) phi) pool; an empty range
    (s_lo > s_hi) leaves the zero-std share. docs/theory.md section 7.

    Parameters
    ----------
    s_lo, s_hi : numpy.ndarray
        Success counts (completions), broadcast together.
    group_size : int
        G.
    mean, phi : float
        The pool's mean success rate and concentration (dimensionless).

    Returns
    -------
    numpy.ndarray
        q_in (dimensionless), the shape of ``s_lo`` and ``s_hi`` broadcast.
    """
    pmf = successes_pmf(group_size, mean * phi, (1 - mean) * phi)
    cumulative = np.concatenate([[0.0], np.cumsum(pmf)])  # cumulative[k] = sum_{S<k} q(S)
    s_lo, s_hi = np.broadcast_arrays(np.asarray(s_lo, int), np.asarray(s_hi, int))
    inner = np.where(s_lo <= s_hi, cumulative[np.clip(s_hi + 1, 0, group_size + 1)]
                     - cumulative[np.clip(s_lo, 0, group_size + 1)], 0.0)
    return pmf[0] + pmf[group_size] + inner


def _extremes_log_likelihood(phi: float, mean: float, cells: tuple[np.ndarray, ...],
                             batch: int, group_size: int) -> float:
    """Log-likelihood of the observed (S_lo, S_hi) cells under a Beta(mean phi, ...) pool.

    ``cells``: the distinct (S_lo, S_hi) pairs read and how many steps showed each, so memory
    and time are O(G + cells) (a dense (G + 1) x (G + 1) table grows as G^2).

    F(i, j) = ``prompt_pool_batch_extremes_within``; P(S_lo = i, S_hi = j) = F(i, j)
    - F(i+1, j) - F(i, j-1) + F(i+1, j-1) (inclusion-exclusion), the empty range F(1, 0) for
    a degenerate batch.
    """
    g = group_size
    within = compiled("prompt_pool_batch_extremes_within")
    pmf = successes_pmf(g, mean * phi, (1 - mean) * phi)
    cumulative = np.concatenate([[0.0], np.cumsum(pmf)])  # cumulative[k] = sum_{S<k} q(S)

    def f(i: np.ndarray, j: np.ndarray) -> np.ndarray:
        # F on the counts 1..G (lo) and 0..G-1 (hi); any empty range (i > j) is the
        # degenerate batch, F(1, 0)
        lo, hi = np.clip(i, 1, g), np.clip(j, 0, g - 1)
        inner = np.where((i <= j) & (lo <= hi), cumulative[hi + 1] - cumulative[lo], 0.0)
        return within(batch, pmf[0] + pmf[g] + inner)

    i, j, count = cells
    prob = np.where((i == 1) & (j == 0), f(np.array(1), np.array(0)),
                    f(i, j) - f(i + 1, j) - f(i, j - 1) + f(i + 1, j - 1))
    return float(np.sum(count * np.log(np.clip(prob, 1e-300, None))))


def _profile_edge(grid: np.ndarray, ll: np.ndarray, best: int, side: int, mean: float,
                  table: tuple[np.ndarray, ...], batch: int, group_size: int) -> float:
    """Phi where the log-likelihood has fallen chi2_1(0.95)/2 below its top, on one side.

    0 (side -1) or inf (side +1) when it never falls that far inside the grid.
    """
    cut = ll[best] - _CHI2_95 / 2
    k = best
    while 0 <= k + side < grid.size and ll[k + side] >= cut:
        k += side
    if not 0 <= k + side < grid.size:
        return 0.0 if side < 0 else np.inf
    edge = brentq(lambda x: _extremes_log_likelihood(np.exp(x), mean, table, batch,
                                                     group_size) - cut,
                  *sorted((grid[k], grid[k + side])), xtol=1e-3)
    return float(np.exp(edge))


def fit_prompt_pool_extremes(reward: np.ndarray, adv_max: np.ndarray, adv_min: np.ndarray, *,
                             group_size: int, batch: int, eps: float = 1e-6
                             ) -> PromptPool | None:
    """Estimate the Beta law of a window of steps from verl's advantage extremes.

    The same law as :func:`fit_prompt_pool`, read where the log has no zero-std share (verl's
    default metrics): the mean reward gives m; each step's (fewest, most) successes among its
    groups with spread (:func:`read_group_extremes`), or a degenerate batch, are scored under
    ``prompt_pool_batch_extremes_within`` (B groups drawn independently from the pool), and
    phi is the maximum of that likelihood, with a profile-likelihood 95% interval. A pool whose
    prompts lock (phi -> 0) leaves most steps with few or no groups with spread.

    Parameters
    ----------
    reward, adv_max, adv_min : numpy.ndarray
        Per-step mean reward (a success rate), largest and smallest advantage.
    group_size, batch : int
        G and B (prompts per step).
    eps : float
        The epsilon of the group std (verl: 1e-6).

    Returns
    -------
    PromptPool or None
        None when fewer than half the steps (or fewer than 5) are read: the rewards are not
        binary, the advantages not GRPO's, or G is not the logged one. ``observed_share`` holds
        the share the fitted law predicts (the log has none), ``reason`` what was read.
    """
    group_size = check_group_size(group_size)
    batch = check_int("batch", batch, minimum=1)
    reward = np.asarray(reward, float)
    s_lo, s_hi, read = read_group_extremes(adv_max, adv_min, group_size=group_size, eps=eps)
    read &= np.isfinite(reward)
    if read.sum() < max(5, reward.size // 2):
        return None
    m = float(reward[read].mean())
    if not 0 <= m <= 1:
        raise InputError(f"fit_prompt_pool_extremes: mean reward {m:.3g} is not a success rate")
    pairs, count = np.unique(np.stack([s_lo[read], s_hi[read]]), axis=1, return_counts=True)
    table = (pairs[0], pairs[1], count.astype(float))  # (S_lo, S_hi) in row-major order
    degenerate = int(count[(pairs[0] == 1) & (pairs[1] == 0)].sum())
    words = (f"read from critic/advantages/max and min on {int(read.sum())} steps "
             f"({degenerate} degenerate batches) at G = {group_size}, B = {batch}; the share is "
             "the fitted law's prediction")
    if m <= 1e-6 or m >= 1 - 1e-6:
        return PromptPool(m, np.nan, 0.0, np.inf, "undetermined", group_size, np.nan,
                          f"mean reward {m:.3f}: every prompt distribution leaves all groups "
                          "alike; " + words)
    grid = np.linspace(np.log(_PHI_MIN), np.log(_PHI_MAX), 71)
    ll = np.array([_extremes_log_likelihood(np.exp(x), m, table, batch, group_size)
                   for x in grid])
    best = int(np.argmax(ll))
    low, high = (_profile_edge(grid, ll, best, side, m, table, batch, group_size)
                 for side in (-1, 1))
    if best == 0:
        return PromptPool(m, np.nan, 0.0, high, "deterministic", group_size,
                          zero_std_share(m, _PHI_MIN, group_size),
                          "most likely with every prompt always right or always wrong; " + words)
    if best == grid.size - 1:
        return PromptPool(m, np.nan, low, np.inf, "homogeneous", group_size,
                          zero_std_share(m, np.inf, group_size),
                          "most likely with identical prompts; " + words)
    from scipy.optimize import minimize_scalar

    fine = minimize_scalar(lambda x: -_extremes_log_likelihood(np.exp(x), m, table, batch,
                                                               group_size),
                           bounds=(grid[best - 1], grid[best + 1]), method="bounded",
                           options={"xatol": 1e-3})
    phi = float(np.exp(fine.x))
    return PromptPool(m, phi, low, high, "estimated", group_size,
                      zero_std_share(m, phi, group_size), words)


def zero_std_share_lower_bound(degenerate: int, steps: int, *, batch: int,
                               confidence: float = 0.95) -> float:
    """Lower bound on the zero-std share from the count of degenerate batches.

    With B groups drawn independently, a step whose every group lacks spread (verl:
    advantages max = min = 0) has probability z^B, z the step's expected zero-std share
    (``prompt_pool_batch_extremes_within`` at the empty range, whatever the prompts' law). The
    one-sided Clopper-Pearson lower limit of the share of such steps, to the power 1/B, bounds
    z from below on the steps of the window (on each of them if z is the same on all; else on
    the largest, since the mean of z^B is at most the largest z^B).

    Parameters
    ----------
    degenerate, steps : int
        Degenerate batches and steps read.
    batch : int
        B (prompts per step).
    confidence : float
        One-sided confidence of the bound.

    Returns
    -------
    float
        The bound (dimensionless, 0 when no batch was degenerate).
    """
    from scipy.stats import beta as beta_law

    steps = check_int("steps", steps, minimum=1)
    batch = check_int("batch", batch, minimum=1)
    if not 0 <= degenerate <= steps:
        raise InputError(f"degenerate: {degenerate} is not between 0 and steps = {steps}")
    if degenerate == 0:
        return 0.0
    floor = float(beta_law.ppf(1 - confidence, degenerate, steps - degenerate + 1))
    return floor ** (1.0 / batch)
