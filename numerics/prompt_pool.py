"""The Beta law of prompt success rates behind a window of logged steps (THEORY.md section 7).

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

from dataclasses import dataclass

import numpy as np
from scipy.optimize import brentq
from scipy.special import betaln, gammaln

from grpodyn.ground import InputError, check_int

from .compiled import compiled

__all__ = ["PromptPool", "fit_prompt_pool", "zero_std_share", "failed_group_share",
           "drift_loss", "entropy_ratio_bound"]

_PHI_MIN, _PHI_MAX = 1e-3, 1e4
_Z95 = 1.96


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


def failed_group_share(mean: float, phi: float, group_size: int) -> float:
    """E[(1-p)^G] for p ~ Beta(mean phi, (1-mean) phi); homogeneous limit for phi = inf."""
    mean = float(np.clip(mean, 1e-9, 1 - 1e-9))
    if not np.isfinite(phi):
        return (1 - mean) ** group_size
    return float(compiled("prompt_pool_failed_group_share")(group_size, mean * phi,
                                                             (1 - mean) * phi))


def entropy_ratio_bound(start: float, end: float) -> float:
    """Return the smallest answer-entropy ratio that a move of the mean reward explains.

    ``prompt_pool_entropy_ratio_bound`` (THEORY.md section 7, issue 17 revision 9): for a Beta
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
    group_size = check_int("group_size", group_size, minimum=2)
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


def _beta_binomial(successes: np.ndarray, group_size: int, a: float, b: float) -> np.ndarray:
    log_choose = (gammaln(group_size + 1) - gammaln(successes + 1)
                  - gammaln(group_size - successes + 1))
    return np.exp(log_choose + betaln(successes + a, group_size - successes + b) - betaln(a, b))


def drift_loss(mean: float, phi: float, group_size: int) -> float:
    """Share of the expected GRPO drift lost to finite groups over a Beta pool.

    1 - E_p[E U(G, p)] / E_p[sqrt(p(1-p))]: E U from ``grpo_update_given_successes`` (TRL's
    eps = 1e-4) averaged over the Beta-binomial law of the successes, against the large-G
    drift sqrt(p (1-p)) (section 7). 0: groups lose nothing; 1: no group carries a gradient.
    phi = inf is the homogeneous pool.
    """
    group_size = check_int("group_size", group_size, minimum=2)
    mean = float(np.clip(mean, 1e-9, 1 - 1e-9))
    successes = np.arange(1, group_size)
    update = compiled("grpo_update_given_successes")(successes, group_size, 1e-4)
    if np.isfinite(phi):
        a, b = mean * phi, (1 - mean) * phi
        drift = float(np.sum(_beta_binomial(successes, group_size, a, b) * update))
        large_g = float(np.exp(betaln(a + 0.5, b + 0.5) - betaln(a, b)))
    else:
        log_pmf = (gammaln(group_size + 1) - gammaln(successes + 1)
                   - gammaln(group_size - successes + 1) + successes * np.log(mean)
                   + (group_size - successes) * np.log1p(-mean))
        drift = float(np.sum(np.exp(log_pmf) * update))
        large_g = float(np.sqrt(mean * (1 - mean)))
    return float(np.clip(1 - drift / large_g, 0.0, 1.0)) if large_g > 0 else 1.0
