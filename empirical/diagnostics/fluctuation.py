"""Policy concentration from the reward's sampling noise: the share of it between prompts.

docs/theory.md sections 6-7 and 10. A step's logged reward is the mean of B prompts times G
Bernoulli answers. With success rate p_i on prompt i and m the mean over prompts, the
variance of one answer splits as m(1 - m) = Var_i(p_i) + E_i[p_i(1 - p_i)]: between prompts
and within a group. The mean of B groups of G then fluctuates from step to step by

    v = Var_i(p_i) / B + E_i[p_i(1 - p_i)] / (B G)

(prompts drawn afresh each step). A policy that explores every prompt (p_i = m) sits at the
binomial prediction m(1 - m)/(B G); a policy that concentrated (p_i in {0, 1}: deterministic
answers on every prompt, the temperature gone) sits at m(1 - m)/B, G times higher. The
concentration index (the between-prompt share rho_b of docs/theory.md section 7)

    rho_b = (x - 1/G) / (1 - 1/G),   x = v B / (m (1 - m)),

is the share of the reward's variance between prompts: 0 for a policy that explores, 1 for
one that is deterministic on every prompt; it needs neither the entropy nor the zero-std
share. v is read from the step-to-step differences of the reward (var(diff) / 2), which a
slow trend does not inflate; sampling noise is white, so the differences' lag-1
autocorrelation is -1/2, and a reward whose differences are correlated beyond that (an
oscillation, a drift) moves by its dynamics, not by sampling: then no reading is given.

Without G (and with B), rho_b is bounded: it rises with G, so G = 2 gives its lower bound
2x - 1 and G -> infinity its upper bound x. Without B nothing about the sampling noise can be
said.

A small dataset. Trainers (TRL, verl, OpenRLHF) shuffle the dataset of N_p prompts each epoch
and deal it in disjoint batches of B. A batch mean's between-prompt variance is then
Var_i(p_i)/B times the finite-population correction (N_p - B)/(N_p - 1), but two consecutive
batches of one epoch are disjoint, their covariance -Var_i(p_i)/(N_p - 1) raises the variance
of the change, and half of it is Var_i(p_i)/B times N_p/(N_p - 1); across an epoch's end (a
share f = B/N_p of the changes) the batches are independent. On average the between-prompt
term is multiplied by c = (N_p - f B)/(N_p - 1), and

    rho_b = (x - 1/G) / (c - 1/G)

(``prompt_pool_step_change_variance`` and ``prompt_pool_between_share`` of the theory
registry, docs/theory.md section 7). The log tells f: TRL's ``epoch`` (passes over the
dataset, fractional) advances by B/N_p a step, verl's ``training/epoch`` (the epoch's index)
every N_p/B steps (:func:`sampling_fraction`). Several optimizer steps per batch
(``num_iterations``) slow the epoch, so f reads low and c near 1: the correction is then too
small, a conservative error. Without the epoch the prompts are read as drawn afresh (c = 1):
the reading of a run on a small dataset is then slightly low. Batches drawn independently
each step without replacement (not what the trainers do) would give c = (N_p - B)/(N_p - 1),
lower still. Needs numpy.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from grpodyn.empirical.diagnostics.series import amount, is_success_rate
from grpodyn.empirical.diagnostics.verdict import G_BOUND
from grpodyn.empirical.logs.loaders import Run
from grpodyn.numerics.compiled import compiled

__all__ = ["Fluctuation", "sampling_fraction", "sampling_share"]

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
        bound rho_b), ``"dynamics"`` (correlated fluctuations: no sampling reading) or
        ``"unknown"`` (no B, or too few points, or rewards that are not a success rate).
    kappa : float
        The between-prompt share rho_b: the share of the reward's variance between prompts
        (docs/theory.md section 7; nan unless measured).
    low, high : float
        Bounds of rho_b (equal to it when measured; nan when unknown).
    ratio : float
        v over the binomial prediction m(1 - m)/(B G) (nan without B and G).
    level : float
        Mean reward m over the segment.
    words : str
        The reading in words.
    fraction : float
        The sampling fraction f = B/N_p read from the log's epoch (nan when not read: the
        prompts are then taken as drawn afresh each step).
    """

    status: str
    kappa: float
    low: float
    high: float
    ratio: float
    level: float
    words: str
    fraction: float = float("nan")


def _unknown(words: str, level: float = float("nan")) -> Fluctuation:
    nan = float("nan")
    return Fluctuation("unknown", nan, nan, nan, nan, level, words)


def sampling_fraction(run: Run) -> tuple[float, str]:
    """Return the sampling fraction f = B/N_p (prompts a step over the dataset's) from the epoch.

    TRL logs ``epoch`` as passes over the dataset (fractional: B/N_p a step), verl
    ``training/epoch`` as the epoch's index (whole numbers, changing every N_p/B steps); both
    are read the same way, as the epochs gained per step between the first and the last point
    where the epoch changed (module docstring).

    Parameters
    ----------
    run : Run
        A loaded log; ``run.metrics["epoch"]`` where the log has the epoch.

    Returns
    -------
    tuple of (float, str)
        f (prompts per step / prompts in the dataset; nan when the log does not determine
        it) and, when nan, the reason.
    """
    epoch = run.metrics.get("epoch")
    if epoch is None:
        return float("nan"), "the epoch is not in the log"
    ok = np.isfinite(epoch)
    e, s = epoch[ok], run.steps[ok]
    if e.size < 2 or np.any(np.diff(e) < 0):
        return float("nan"), "the logged epoch does not increase with the step"
    moved = np.flatnonzero(np.diff(e) > 0) + 1  # points where the epoch changed
    if moved.size < 2:
        return float("nan"), "the epoch changed fewer than twice: its rate is not determined"
    fraction = float((e[moved[-1]] - e[moved[0]]) / (s[moved[-1]] - s[moved[0]]))
    if not 0 < fraction <= 1:
        return float("nan"), (f"the epoch advances {fraction:.3g} a step: not passes over the "
                              "prompts dealt in batches")
    return fraction, ""


def _between_factor(fraction: float, batch: int) -> tuple[float, str]:
    """Return c, the factor of the between-prompt term, and the words saying where it comes from.

    c = (N_p - f B)/(N_p - 1) with N_p = B/f (module docstring); 1 without f.
    """
    if not np.isfinite(fraction):
        return 1.0, ""
    pool = batch / fraction
    if pool <= 1:
        return 1.0, ""
    factor = (pool - fraction * batch) / (pool - 1)
    return factor, (f"; the epoch advances {fraction:.3g} a step: B = {batch} prompts dealt by "
                    f"epochs from a dataset of {pool:.0f}, the between-prompt term x{factor:.2f}")


def sampling_share(run: Run, part: slice, group_size: int | None) -> Fluctuation:
    """Read the concentration index rho_b from the reward's fluctuations over ``part``.

    Parameters
    ----------
    run : Run
        A loaded log; B is ``run.meta.batch`` (prompts per step), the sampling fraction
        B/N_p comes from its epoch (:func:`sampling_fraction`).
    part : slice
        The steps read (the late segment of the run).
    group_size : int or None
        G; None bounds rho_b between G = 2 and G -> infinity.

    Returns
    -------
    Fluctuation
        rho_b = (v B / (m(1 - m)) - 1/G) / (c - 1/G) with v = var(diff(reward)) / 2 and c the
        between-prompt factor of a dataset dealt by epochs (module docstring; docs/theory.md
        sections 6-7), or its bounds, or the reason none.
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
        return _unknown(f"reward {amount(m, 2)}: no sampling noise at all", m)
    d = np.diff(r)
    v = float(np.var(d, ddof=1) / 2)
    lag1 = float(np.corrcoef(d[:-1], d[1:])[0, 1]) if np.std(d) > 0 else -0.5
    if lag1 > -0.5 + _WHITE_Z / np.sqrt(d.size):
        return Fluctuation("dynamics", *(float("nan"),) * 4, m,
                           f"the reward's step-to-step changes are correlated (lag-1 "
                           f"autocorrelation {lag1:.2f}, sampling noise gives -0.50): it moves "
                           "by its dynamics, the sampling noise cannot be read")
    fraction, why = sampling_fraction(run)
    factor, dealt = _between_factor(fraction, batch)
    if not dealt:
        dealt = (f"; {why}: the prompts are read as drawn afresh each step (dealt from a small "
                 "dataset, the between-prompt share reads low)")
    x = v * batch / spread
    # x's standard error: the mean square of n white-noise differences (lag-1 autocorrelation
    # -1/2) has relative variance 2 (1 + 2 (1/2)^2) / n = 3 / n; without the epoch c = 1, kept
    resolution = x * np.sqrt(3 / d.size) if np.isfinite(fraction) else 0.0
    if group_size is not None:
        return _measured(x, m, batch, group_size, factor, resolution, dealt, fraction)
    return _bounded(x, m, batch, factor, resolution, dealt, fraction)


def _measured(x: float, m: float, batch: int, group_size: int, factor: float,
              resolution: float, dealt: str, fraction: float) -> Fluctuation:
    """Return the reading at a known G: rho_b = (x - 1/G)/(c - 1/G), unless c ~ 1/G.

    Within x's standard error of c = 1/G the between-prompt and within-group terms weigh
    alike and x does not determine rho_b (docs/theory.md section 7).
    """
    if abs(factor - 1 / group_size) <= resolution:
        return Fluctuation("unknown", *(float("nan"),) * 4, m,
                           f"between-prompt factor {factor:.2f} within the reading's resolution "
                           f"of 1/G = {1 / group_size:.2f}: the two terms weigh alike, the "
                           f"fluctuation does not tell them apart{dealt}", fraction)
    if np.isfinite(fraction):
        kappa = float(compiled("prompt_pool_between_share")(x, group_size, batch,
                                                             batch / fraction))
    else:  # prompts drawn afresh: the limit N_p -> infinity, c = 1
        kappa = (x - 1 / group_size) / (1 - 1 / group_size)
    ratio = x * group_size
    return Fluctuation("measured", kappa, kappa, kappa, ratio, m,
                       f"the reward fluctuates x{ratio:.2f} the binomial prediction "
                       f"m(1-m)/(BG) at m = {amount(m, 2)}, B = {batch}, G = {group_size}{dealt}: "
                       f"{kappa:.0%} of its variance is between prompts (0% for a policy that "
                       "explores every prompt, 100% for one deterministic on each)", fraction)


def _bounded(x: float, m: float, batch: int, factor: float, resolution: float, dealt: str,
             fraction: float) -> Fluctuation:
    """Return rho_b's bounds without G: G = 2 and G -> infinity, unless c is near 1/2 or below.

    rho_b(G) = (x - 1/G)/(c - 1/G) is monotone in 1/G while c > 1/2; at c <= 1/2 its
    denominator vanishes at some G >= 2 and no bound holds.
    """
    if factor - 1 / G_BOUND <= resolution:
        return Fluctuation("unknown", *(float("nan"),) * 4, m,
                           f"G unknown and the between-prompt factor {factor:.2f} not above "
                           f"1/{G_BOUND} by the reading's resolution: at some G the two terms "
                           f"weigh alike{dealt}", fraction)
    low = (x - 1 / G_BOUND) / (factor - 1 / G_BOUND)
    high = x / factor
    return Fluctuation("bounded", float("nan"), low, high, float("nan"), m,
                       f"G unknown: the reward's fluctuation at m = {amount(m, 2)}, B = "
                       f"{batch}{dealt} puts the share of its variance between prompts between "
                       f"{max(low, 0):.0%} (G = {G_BOUND}) and {high:.0%} (G -> infinity)",
                       fraction)
