"""Policy concentration from the reward's sampling noise: the share of it between prompts.

docs/theory.md sections 6-7 and 10. A step's logged reward is the mean of B prompts times G
Bernoulli answers. With success rate p_i on prompt i and m the mean over prompts, the
variance of one answer splits as m(1 - m) = Var_i(p_i) + E_i[p_i(1 - p_i)]: between prompts
and within a group. The mean of B groups of G then fluctuates from step to step by

    v = Var_i(p_i) / B + E_i[p_i(1 - p_i)] / (B G)

(prompts drawn afresh each step). A policy that explores every prompt (p_i = m) sits at the
binomial prediction m(1 - m)/(B G); a policy that concentrated (p_i in {0, 1}: deterministic
answers on every prompt, the temperature gone) sits at m(1 - m)/B, G times higher. The
concentration index

    kappa = (x - 1/G) / (1 - 1/G),   x = v B / (m (1 - m)),

is the share of the reward's variance between prompts: 0 for a policy that explores, 1 for
one that is deterministic on every prompt; it needs neither the entropy nor the zero-std
share. v is read from the step-to-step differences of the reward (var(diff) / 2), which a
slow trend does not inflate; sampling noise is white, so the differences' lag-1
autocorrelation is -1/2, and a reward whose differences are correlated beyond that (an
oscillation, a drift) moves by its dynamics, not by sampling: then no reading is given.

Without G (and with B), kappa is bounded: it rises with G, so G = 2 gives its lower bound
2x - 1 and G -> infinity its upper bound x. Without B nothing about the sampling noise can be
said. Drawing the prompts from a small pool without replacement lowers the between-prompt
term (by (N - B)/(N - 1)), so kappa reads low there: a conservative error. Needs numpy.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from grpodyn.empirical.diagnostics.series import is_success_rate
from grpodyn.empirical.diagnostics.verdict import G_BOUND
from grpodyn.empirical.logs.loaders import Run

__all__ = ["Fluctuation", "sampling_share"]

#: fewest finite rewards in the segment for a variance of the differences
_MIN_POINTS = 20
#: standard errors of the differences' lag-1 autocorrelation above -1/2 read as dynamics
_WHITE_Z = 3.0


@dataclass(frozen=True)
class Fluctuation:
    """The reward's step-to-step fluctuation against the sampling predictions.

    Attributes
    ----------
    status : str
        ``"measured"`` (B and G known), ``"bounded"`` (B known, G not: ``low``/``high``
        bound kappa), ``"dynamics"`` (correlated fluctuations: no sampling reading) or
        ``"unknown"`` (no B, or too few points, or rewards that are not a success rate).
    kappa : float
        Share of the reward's variance between prompts (nan unless measured).
    low, high : float
        Bounds of kappa (equal to it when measured; nan when unknown).
    ratio : float
        v over the binomial prediction m(1 - m)/(B G) (nan without B and G).
    level : float
        Mean reward m over the segment.
    words : str
        The reading in words.
    """

    status: str
    kappa: float
    low: float
    high: float
    ratio: float
    level: float
    words: str


def _unknown(words: str, level: float = float("nan")) -> Fluctuation:
    nan = float("nan")
    return Fluctuation("unknown", nan, nan, nan, nan, level, words)


def sampling_share(run: Run, part: slice, group_size: int | None) -> Fluctuation:
    """Read the concentration index kappa from the reward's fluctuations over ``part``.

    Parameters
    ----------
    run : Run
        A loaded log; B is ``run.meta.batch`` (prompts per step).
    part : slice
        The steps read (the late segment of the run).
    group_size : int or None
        G; None bounds kappa between G = 2 and G -> infinity.

    Returns
    -------
    Fluctuation
        kappa = (v B / (m(1 - m)) - 1/G) / (1 - 1/G) with v = var(diff(reward)) / 2
        (module docstring; docs/theory.md sections 6-7), or its bounds, or the reason none.
    """
    if not is_success_rate(run):
        return _unknown("rewards outside [0, 1]: no Bernoulli sampling prediction")
    r = run.reward[part]
    r = r[np.isfinite(r)]
    if r.size < _MIN_POINTS:
        return _unknown(f"{r.size} finite rewards late in the run: too few for their variance")
    m = float(r.mean())
    spread = m * (1 - m)
    batch = run.meta.batch.value if run.meta.batch is not None else None
    if not (isinstance(batch, int) and batch >= 1):
        return _unknown("the batch B (prompts per step) is not in the log: the reward's "
                        "sampling noise has no prediction", m)
    if spread <= 0:
        return _unknown(f"reward {m:.2f}: no sampling noise at all", m)
    d = np.diff(r)
    v = float(np.var(d, ddof=1) / 2)
    lag1 = float(np.corrcoef(d[:-1], d[1:])[0, 1]) if np.std(d) > 0 else -0.5
    if lag1 > -0.5 + _WHITE_Z / np.sqrt(d.size):
        return Fluctuation("dynamics", *(float("nan"),) * 4, m,
                           f"the reward's step-to-step changes are correlated (lag-1 "
                           f"autocorrelation {lag1:.2f}, sampling noise gives -0.50): it moves "
                           "by its dynamics, the sampling noise cannot be read")
    x = v * batch / spread
    if group_size is not None:
        kappa = (x - 1 / group_size) / (1 - 1 / group_size)
        ratio = x * group_size
        return Fluctuation("measured", kappa, kappa, kappa, ratio, m,
                           f"the reward fluctuates x{ratio:.2f} the binomial prediction "
                           f"m(1-m)/(BG) at m = {m:.2f}, B = {batch}, G = {group_size}: "
                           f"{kappa:.0%} of its variance is between prompts (0% for a policy "
                           "that explores every prompt, 100% for one deterministic on each)")
    low = (x - 1 / G_BOUND) / (1 - 1 / G_BOUND)
    return Fluctuation("bounded", float("nan"), low, x, float("nan"), m,
                       f"G unknown: the reward's fluctuation at m = {m:.2f}, B = {batch} puts "
                       f"the share of its variance between prompts between {max(low, 0):.0%} "
                       f"(G = {G_BOUND}) and {x:.0%} (G -> infinity)")
