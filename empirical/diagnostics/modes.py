"""Detectors of two failure modes: advantage degeneracy and policy concentration.

docs/theory.md sections 7 and 10: degeneracy is the drift factor 1 - p^G - (1-p)^G going to 0
before the reward reaches its plateau (the share of zero-std groups, or its prediction from
the reward level and G, read through the Beta law of the prompts' success rates of
:mod:`grpodyn.numerics.prompt_pool`); concentration is p(1-p) and the entropy going to 0, told
from learning by the spread the prompts keep; without the entropy, by the zero-std share or
the reward's sampling noise, never where the groups had no spread from the first steps.
Needs numpy.
"""

from __future__ import annotations

from functools import lru_cache
from typing import NamedTuple

import numpy as np

from grpodyn.empirical.diagnostics.fluctuation import Fluctuation, sampling_share
from grpodyn.empirical.diagnostics.series import (
    amount,
    change_words,
    is_success_rate,
    lowest_window,
    smooth,
    window_mean,
    z_quantile,
)
from grpodyn.empirical.diagnostics.state import ALPHA
from grpodyn.empirical.diagnostics.verdict import (
    CEILING,
    FLAG_SCORE,
    G_BOUND,
    ModeVerdict,
    unjudged,
)
from grpodyn.empirical.logs.aliases import ALIASES
from grpodyn.empirical.logs.loaders import Run
from grpodyn.numerics.compiled import compiled
from grpodyn.numerics.prompt_pool import (
    PromptPool,
    drift_loss,
    entropy_ratio_bound,
    fit_prompt_pool,
    fit_prompt_pool_extremes,
    group_size_for_spread,
)

__all__ = ["degeneracy", "concentration", "prompt_pool_at", "late_without_spread",
           "spread_bound_beyond_common", "spread_need_words", "COMMON_G", "EntropyFall",
           "entropy_fall"]


def _phi_words(phi: float) -> str:
    """Return the Beta law's concentration phi in words (unbounded: every prompt at one rate)."""
    return f"{phi:.3g}" if np.isfinite(phi) else "unbounded: every prompt at one success rate"

#: standard errors of a reward level within which the drift lost is read at its least
#: degenerate value: the diagnosis's false-alarm rate per test, one-sided
_MARGIN_Z = z_quantile(ALPHA)
#: TRL's default group size (``GRPOConfig.num_generations``): where G is unknown, a bound on
#: the G that keeps half the groups spread is said only when it exceeds this (most runs meet a
#: smaller one)
COMMON_G = 8


def _fit_pool(run: Run, part: slice, group_size: int) -> PromptPool | None:
    """Fit the Beta law of the prompts over the steps of ``part`` (None without the metrics)."""
    frac = run.metrics.get("frac_reward_zero_std")
    if frac is None or not is_success_rate(run):
        return None
    both = np.isfinite(frac[part]) & np.isfinite(run.reward[part])
    if both.sum() < 2:
        return None
    return _pool_of(np.asarray(run.reward[part], float).tobytes(),
                    np.asarray(frac[part], float).tobytes(), group_size)


@lru_cache(maxsize=16)
def _pool_of(reward: bytes, frac: bytes, group_size: int) -> PromptPool:
    """Return :func:`fit_prompt_pool` of the float64 windows ``reward`` and ``frac`` (bytes).

    One diagnosis reads the same window's law up to four times (the pools it reports, the
    degeneracy, the concentration); each fit inverts the finite-G share by root finding. A
    few entries hold one diagnosis's windows (a long run's windows are large: a Monitor
    diagnosing it again and again keeps no more than these).
    """
    return fit_prompt_pool(np.frombuffer(reward), np.frombuffer(frac), group_size=group_size)


def _fit_pool_extremes(run: Run, part: slice, group_size: int | None) -> PromptPool | None:
    """Fit the Beta law from verl's advantage extremes over ``part`` (no zero-std share logged).

    Needs G (declared, read or given: the extremes are decoded at the true G, never at a
    bound), B, rewards that are a success rate, and ``critic/advantages/{max,min}``; None
    otherwise, or when too few steps decode as binary GRPO groups.
    """
    hi, lo = run.metrics.get("advantage_max"), run.metrics.get("advantage_min")
    batch = run.meta.batch.value if run.meta.batch is not None else None
    if (hi is None or lo is None or group_size is None or not isinstance(batch, int)
            or batch < 1 or not is_success_rate(run)):
        return None
    return fit_prompt_pool_extremes(run.reward[part], hi[part], lo[part],
                                    group_size=group_size, batch=batch)


def prompt_pool_at(run: Run, part: slice, group_size: int | None) -> PromptPool | None:
    """Fit the Beta law over ``part``: from the zero-std share, else the advantage extremes."""
    return (_fit_pool(run, part, group_size or G_BOUND)
            or _fit_pool_extremes(run, part, group_size))


def _toward_half(level: float | np.ndarray, margin: float) -> float | np.ndarray:
    """Move a success level towards 1/2 by ``margin``, not past it.

    The drift lost to groups of G is least at p = 1/2 and grows towards 0 and 1 (docs/theory.md
    section 7), so the level within ``margin`` of the measured one that loses the least drift
    is the one nearest 1/2.
    """
    return np.where(level < 0.5, np.minimum(level + margin, 0.5),
                    np.maximum(level - margin, 0.5))


def _drift_lost_over_run(run: Run, phi: float, group_size: int, noise: float) -> float:
    """Share of the drift that groups of G lost over the whole run (docs/theory.md section 7).

    The drift lost at each level the reward passed through (the means of disjoint windows of
    max(10, n/10) points below the ceiling, under a Beta pool of concentration ``phi``),
    weighted by the large-G drift sqrt(r (1 - r)) that level could carry: a run that spent its
    first steps near the floor with a small G lost most of its learning signal there, even if
    it escaped later. Each level is read at the least degenerate value within
    ``z_quantile(ALPHA)`` standard errors of its window mean (``noise`` per point).
    """
    window = max(10, run.n_points // 10)
    levels = smooth(run.reward, window, mode="valid")[::window]
    levels = levels[np.isfinite(levels) & (levels > 0) & (levels < CEILING)]
    if not levels.size:
        return 0.0
    weights = np.sqrt(levels * (1 - levels))
    kept = _toward_half(levels, _MARGIN_Z * noise / np.sqrt(window))
    lost = np.array([drift_loss(m, phi, group_size) for m in kept])
    return float(np.sum(weights * lost) / np.sum(weights))


def degeneracy(run: Run, late: slice, group_size: int | None, noise: float) -> ModeVerdict:
    """Score advantage degeneracy: the drift lost to groups without reward spread.

    From the logged zero-std share (else its prediction from the reward and G), read through
    the prompts' Beta law when G and a success rate allow; 0 at the ceiling. The drift lost
    is read at the reward level least degenerate within ``z_quantile(ALPHA)`` standard errors
    of the measured one (``noise``: the reward's point-to-point noise): a level the noise
    cannot tell from one that keeps half the drift does not flag the mode.
    """
    frac = run.metrics.get("frac_reward_zero_std")
    r_late = window_mean(run.reward, late)
    logged = frac is not None and np.isfinite(frac[late]).any()
    pinned = not logged and group_size is None and late_without_spread(run, late)
    if not logged and not pinned:
        if group_size is None:
            return unjudged("no frac_reward_zero_std in the log and no group size G to "
                             "predict it from the reward level" + _spread_bound(run, r_late))
        if not is_success_rate(run):
            return unjudged("no frac_reward_zero_std in the log, and rewards outside [0, 1] "
                             "are no success rate to predict it from")
    if pinned:  # a mean of 0 (or 1) over a group's rewards in [0, 1]: every reward equal
        frac = np.where(np.isin(run.reward, (0.0, 1.0)), 1.0, np.nan)
    elif not logged:
        frac = compiled("degenerate_group_probability")(group_size, np.clip(run.reward, 0, 1))
    f_late = window_mean(frac, late)
    idx = np.arange(run.n_points)[late]
    slope = np.polyfit(run.steps[idx], run.reward[idx], 1)[0] if idx.size > 2 else 0.0
    gain = slope * (run.steps[idx[-1]] - run.steps[idx[0]]) if idx.size > 2 else 0.0
    short_of_ceiling = r_late < CEILING or not is_success_rate(run)
    steps = (float(run.steps[idx[0]]), float(run.steps[idx[-1]]))
    source = ("logged" if logged else f"every late mean reward is logged as {r_late:g}: no "
              "group had a spread, whatever G" if pinned else
              f"predicted from the reward at G = {group_size}")
    words = f"zero-std groups {f_late:.2f} of the batch late in the run ({source})"
    if group_size is not None and is_success_rate(run):
        # the drift factor, averaged over the prompts: the share of the large-G drift
        # sqrt(p(1-p)) that groups of G lose, under the Beta law the late steps show
        pool = _fit_pool(run, late, group_size) if logged else None
        phi = pool.point_phi if pool is not None else np.inf
        se = noise / np.sqrt(max(int(np.isfinite(run.reward[late]).sum()), 1))
        margin = _MARGIN_Z * se
        lost = drift_loss(float(_toward_half(r_late, margin)), phi, group_size) \
            if 0 < r_late < 1 else 1.0
        over_run = _drift_lost_over_run(run, phi, group_size, noise)
        score = max(lost, over_run)
        level = amount(r_late, 2)
        law = (f"prompt pool Beta with mean {level}, phi {_phi_words(phi)} ({pool.status})"
               if pool is not None else f"identical prompts at the reward {level}")
        words += (f"; {law}: groups of G = {group_size} lose {lost:.0%} of the "
                  f"drift a large group would carry late, {over_run:.0%} over the run (each "
                  f"level read at its least degenerate value within {_MARGIN_Z:.2f} s.e.: "
                  f"{amount(r_late)} late, s.e. {amount(se)})")
    else:
        # without G, or without a success rate to set the Beta law, the share of groups
        # without spread is the drift factor itself
        score = float(f_late)
        why = ("" if pinned else " (G unknown; with G the share of the drift lost to the group "
               "size would be scored instead)" if group_size is None else
               " (rewards outside [0, 1]: no success rate to set the prompts' Beta law)")
        words += f": only {1 - f_late:.0%} of the groups carry a gradient{why}"
    # with the noise of a fitted line's change over the segment, as the state says it
    late_se = noise * np.sqrt(12.0 / max(idx.size, 1))
    words += (f"; reward {amount(r_late, 2)}, {change_words(gain)} over the last quarter (noise "
              f"{amount(late_se)})")
    if not short_of_ceiling:
        score = 0.0
        words += " (at the ceiling: nothing left to learn, not a failure)"
    need = group_size_for_spread(r_late) if score >= FLAG_SCORE and is_success_rate(run) \
        else None
    if need is not None:  # what the remedy's "raise G" means here (a lower bound)
        words += (f"; at the late success rate {r_late:.3g} {spread_need_words(need)}, "
                  "prompts that differ need more")
    return ModeVerdict(score >= FLAG_SCORE, float(score), words, True, steps)


def late_without_spread(run: Run, late: slice) -> bool:
    """Return whether every late mean of a reward in [0, 1] is exactly 0, or every one is 1.

    Such a mean holds only where every reward of the batch is 0 (or 1): no group has a spread,
    whatever G (P_0(G, 0) = P_0(G, 1) = 1). Not where the log's ``reward_std`` shows a spread
    late in the run: the metric read as the reward is then not the reward the groups are
    normalised on (``--reward-key`` picked one of its parts).
    """
    r = run.reward[late]
    r = r[np.isfinite(r)]
    if not (r.size and is_success_rate(run) and (np.all(r == 0) or np.all(r == 1))):
        return False
    spread = run.metrics.get("reward_std")
    return spread is None or not np.any(spread[late][np.isfinite(spread[late])] > 0)


def spread_need_words(need: int) -> str:
    """Say the least G (``group_size_for_spread``) at which identical prompts keep half a spread.

    The one wording of that bound, which the diagnosis's degeneracy and the advice on G share.
    """
    return f"identical prompts need G >= {need} for half the groups to carry a spread"


def spread_bound_beyond_common(run: Run, r_late: float) -> int | None:
    """Return the least G that keeps half the groups spread at ``r_late``, if beyond COMMON_G.

    Identical prompts at the late success rate need that G for half their groups to carry a
    spread (:func:`grpodyn.numerics.prompt_pool.group_size_for_spread`; prompts that differ need
    more). Near 1/2 the bound is 2 or 3, which any run meets; only near the floor or the
    ceiling of a success rate does it exceed :data:`COMMON_G` and say something of a run
    whose G is unknown. None elsewhere, and where the reward is no success rate.
    """
    need = group_size_for_spread(r_late) if is_success_rate(run) else None
    return need if need is not None and need > COMMON_G else None


def _spread_bound(run: Run, r_late: float) -> str:
    """Say the G below which most groups lack a spread, where G is unknown and it says much.

    Empty unless :func:`spread_bound_beyond_common` gives a bound.
    """
    need = spread_bound_beyond_common(run, r_late)
    if need is None:
        return ""
    return (f"; at the late success rate {r_late:.3g} {spread_need_words(need)}: a run with "
            f"G < {need} has most groups without one (give the group size, --group-size or "
            "group_size=, to judge it)")


class EntropyFall(NamedTuple):
    """The entropy at its lowest against its start (:func:`entropy_fall`)."""

    ratio: float  # the lowest window's mean over the start's, floored at 0
    start: float  # the mean over the early segment
    low: float  # the lowest mean over a window as long as the late segment
    low_at: int  # that window's first index


def entropy_fall(entropy: np.ndarray, early: slice, late: slice) -> EntropyFall | None:
    """Return the entropy at its lowest against its early mean; None where that is not positive.

    The temperature at its lowest, over a window as long as the late segment, from the early
    segment's end (the last window is the late segment itself): a policy that concentrated and
    then spread again (no KL holds it) still concentrated. The concentration reading of
    :func:`concentration` and the lr advice (``empirical/logs/mode_advice.py``) share it.
    """
    start = window_mean(entropy, early)
    if not (np.isfinite(start) and start > 0):
        return None
    low, low_at = lowest_window(entropy, early.stop, late.stop - late.start)
    return EntropyFall(max(low, 0.0) / start, start, low, low_at)


def concentration(run: Run, early: slice, late: slice, group_size: int | None
                   ) -> ModeVerdict:
    """Score policy concentration: the entropy's fall beyond what the reward's move explains.

    Below the ceiling the zero-std share (or verl's advantage extremes) must confirm that the
    failing prompts locked; without them the diagnosis abstains (``undecided``).
    """
    entropy = run.metrics.get("entropy")
    if entropy is None or np.isfinite(entropy).sum() < 4:
        return _without_entropy(run, early, late, group_size)
    fall = entropy_fall(entropy, early, late)
    if fall is None:
        return unjudged("entropy at the start is not positive")
    e0, e1 = fall.start, window_mean(entropy, late)
    ratio, low, low_at = fall.ratio, fall.low, fall.low_at
    width = late.stop - late.start
    # the share of the temperature lost: past the flag when the entropy halved (the threshold
    # monitoring tools use); below the ceiling the groups must confirm it (see below)
    score = float(np.clip(1 - ratio, 0.0, 1.0))
    low_steps = (run.steps[low_at], run.steps[min(low_at + width, run.n_points) - 1])
    span = (float(low_steps[0]), float(run.steps[-1]))  # where it shows
    if ratio < 1:
        words = (f"entropy {e0:.3g} -> {low:.3g} at its lowest (x{ratio:.2g}, steps "
                 f"{low_steps[0]:g}-{low_steps[1]:g}), {e1:.3g} late in the run")
    else:
        words = (f"entropy {e0:.3g} at the start and never lower after it (x{ratio:.2g} at "
                 f"its lowest, steps {low_steps[0]:g}-{low_steps[1]:g}), {e1:.3g} late in the "
                 "run: the temperature did not fall")
    cap = 0.45  # below the flag: entropy alone cannot tell concentration from learning
    r_late = window_mean(run.reward, late)
    frac = run.metrics.get("frac_reward_zero_std")
    shared = frac is not None and np.isfinite(frac[late]).any()
    pool_early = prompt_pool_at(run, early, group_size) if shared or frac is None else None
    pool_late = prompt_pool_at(run, late, group_size) if pool_early is not None else None
    pointed = score >= FLAG_SCORE  # the entropy halved: what the temperature alone says
    if not is_success_rate(run):
        score = min(score, cap)
        words += ("; rewards outside [0, 1]: no success rate to set the temperature "
                  "prediction, entropy alone cannot tell concentration from learning")
        return ModeVerdict(False, score, words, True, span, undecided=pointed)
    elif r_late >= CEILING:
        score = 0.0
        words += (f"; at the ceiling (reward {r_late:.2f}): the entropy fell as the prompts "
                  "got solved, which is convergence, not a failure")
    elif r_late <= 1 - CEILING:
        words += (f"; at the floor (reward {r_late:.2f}): " +
                  ("the policy concentrated onto wrong answers" if pointed else
                   "the entropy did not halve, so the failing prompts still spread their "
                   "answers"))
    elif pool_early is not None and pool_late is not None:
        # temperature prediction. The zero-std share of the late steps gives their Beta law
        # (or, in verl's metrics, the advantages' extremes); its all-wrong groups
        # E[(1-p)^G], as a share of the failures left (1 - r), are the prompts the policy
        # locked onto wrong answers. A policy that keeps the spread across prompts of its
        # first steps (their phi, moved to the late mean) locks the share predicted below;
        # concentration locks far more, convergence (prompts locked onto right answers) does
        # not count. The score is the smaller of the entropy's fall and the share of the
        # failing prompts that should still explore but do not
        g_used = pool_late.group_size
        predicted, locked, beyond = _locked_shares(pool_early, pool_late, r_late)
        score = min(score, beyond)
        bound = "" if group_size else (f"; G unknown, judged at G = {G_BOUND}, the smallest "
                                       "group (a larger G predicts fewer such groups and "
                                       "raises this share)")
        share = (f"zero-std groups {window_mean(frac, late):.2f} late" if shared else
                 f"no zero-std share in the log; verl's advantage extremes give a Beta law "
                 f"that predicts zero-std groups {pool_late.observed_share:.2f} late")
        words += (f"; {share} (Beta phi "
                  f"{_phi_words(pool_late.point_phi)}, {pool_late.status}) at G = {g_used}: "
                  f"{locked:.0%} of the failing prompts always fail, against {predicted:.0%} "
                  f"for the spread of the first steps (phi "
                  f"{_phi_words(pool_early.point_phi)}) moved to the reward {r_late:.2f}: "
                  f"{beyond:.0%} of the failing prompts that should explore do not{bound}")
        words += (": the policy is deterministic on most prompts" if beyond >= FLAG_SCORE
                  else ": the groups still explore")
    else:
        # no zero-std share (verl's default metrics lack it): the entropy against the reward.
        # A pool that keeps the spread of its prompts' success rates while its
        # mean moves from r0 to the reward of the entropy's lowest window keeps at least the
        # share ``kept`` of its answer entropy (prompt_pool_entropy_ratio_bound): learning
        # lowers the entropy as prompts get solved. A fall within that bound is what the
        # reward explains: no sign of concentration. A fall beyond it points to prompts
        # locked beyond the reward's change, but a token entropy is not an answer entropy:
        # real runs that learn (the public ShibukiZero logs, rise 0.2 -> 0.6) lose 3-5x more
        # token entropy than the bound allows, so the diagnosis abstains there
        r0 = window_mean(run.reward, early)
        r_low = window_mean(run.reward, slice(low_at, low_at + width))
        kept = entropy_ratio_bound(r0, r_low)
        beyond = float(np.clip(1 - ratio / kept, 0.0, 1.0))
        rise = (" (a rise: the reward moved toward 1/2, where the answers spread most)"
                if kept > 1 else "")
        words += (f"; no zero-std share in the log{_missing_share_words(run)}: the reward moved "
                  f"{amount(r0, 2)} -> {amount(r_low, 2)} over those steps, after which prompts "
                  f"that keep their spread keep at least x{kept:.2f} of their answer entropy{rise} "
                  f"(docs/theory.md section 7); {beyond:.0%} of that entropy was lost beyond it")
        if beyond < FLAG_SCORE:
            score = min(score, beyond)
            words += ": less than half of it, no sign of concentration"
        else:
            score = min(score, cap)
            words += (": beyond what the reward explains, but a token entropy can fall faster "
                      "than the answers' (real runs that learn do), so without the zero-std "
                      "share the diagnosis cannot tell concentration from learning")
            return ModeVerdict(False, score, words, True, span, undecided=pointed)
    return ModeVerdict(score >= FLAG_SCORE, score, words, True, span)




def _missing_share_words(run: Run) -> str:
    """Say why a verl log lacks the zero-std share (its default metrics omit it); else nothing.

    Only a verl log (its own format, or its metric names read through another writer) is
    told so: on any other log the missing share is the log's own choice.
    """
    verl = run.format.startswith("verl") or run.reward_key in ALIASES["verl"]["reward"]
    return " (verl's default metrics omit it)" if verl else ""


def _read(fluct: Fluctuation) -> tuple[bool, float, bool, str] | None:
    """Return (flag, score, undecided, words) from the reward's sampling share, or None.

    Flagged when more than half of the reward's variance lies between prompts (kappa, or
    its lower bound without G, at or above ``FLAG_SCORE``): the policy answers most prompts
    deterministically; clean when kappa (or its upper bound) is below; undecided between.
    """
    if fluct.status == "measured":
        share = float(np.clip(fluct.kappa, 0.0, 1.0))
        flag = share >= FLAG_SCORE
    elif fluct.status == "bounded":
        if fluct.high < FLAG_SCORE:
            share, flag = float(np.clip(fluct.high, 0.0, 1.0)), False
        elif fluct.low >= FLAG_SCORE:
            share, flag = float(np.clip(fluct.low, 0.0, 1.0)), True
        else:
            return (False, min(FLAG_SCORE, max(fluct.low, 0.0)), True,
                    fluct.words + ": either side of half, declaring G (--group-size) decides")
    else:
        return None
    verdict = (": the policy answers most prompts deterministically" if flag
               else ": the groups still explore")
    return flag, share, False, fluct.words + verdict


def _locked_shares(pool_early: PromptPool, pool_late: PromptPool, reward: float
                   ) -> tuple[float, float, float]:
    """Return the failing prompts' shares (predicted locked, locked, locked beyond prediction).

    docs/theory.md sections 7 and 10: the all-wrong groups E[(1-p)^G] of a Beta law of the
    prompts, as a share of the failures left (1 - r) at the reward ``reward``; ``predicted``
    moves the first steps' spread (``pool_early``) to that reward, ``locked`` is the late
    law's, and the last is the share of the prompts that should still explore but do not.
    """
    left = max(1 - reward, 1e-12)
    predicted = min(pool_early.failed_share_at(reward) / left, 1.0)
    locked = min(pool_late.failed_share_at(reward) / left, 1.0)
    return predicted, locked, float(np.clip((locked - predicted) / max(1 - predicted, 1e-12),
                                            0.0, 1.0))


def _degenerate_from_start(run: Run, early: slice, group_size: int | None) -> float:
    """Share of the drift that groups of G lost at the first steps' reward, prompts identical.

    docs/theory.md section 7: identical prompts at the mean reward r0 lose the least drift
    of any pool with that mean (p^G + (1-p)^G is convex in p), so a loss of half or more
    here means the groups had no spread to lose from the first steps: success rates at the
    floor, where a reward (or a zero-std share) cannot tell a policy locked onto wrong
    answers from one that never samples the right one. 0 when G or the level is unknown.
    """
    r0 = window_mean(run.reward, early)
    if group_size is None or not np.isfinite(r0):
        return 0.0
    return float(drift_loss(float(np.clip(r0, 1e-9, 1 - 1e-9)), np.inf, group_size))


def _locked_beyond_start(run: Run, early: slice, late: slice, group_size: int | None
                         ) -> tuple[float, str] | None:
    """Return the share of the failing prompts locked late beyond the first steps' spread.

    The temperature prediction of :func:`concentration` read from the zero-std share alone
    (the Beta law of the prompts early and late, docs/theory.md sections 7 and 10); None
    when the log has no zero-std share (nor verl's advantage extremes) to fit it.
    """
    frac = run.metrics.get("frac_reward_zero_std")
    if frac is None or not np.isfinite(frac[late]).any():
        return None
    pool_early = prompt_pool_at(run, early, group_size)
    pool_late = prompt_pool_at(run, late, group_size)
    if pool_early is None or pool_late is None:
        return None
    r_late = window_mean(run.reward, late)
    predicted, locked, beyond = _locked_shares(pool_early, pool_late, r_late)
    bound = "" if group_size else f", G unknown: judged at G = {G_BOUND}"
    return beyond, (f"zero-std groups {window_mean(frac, late):.2f} late (Beta phi "
                    f"{_phi_words(pool_late.point_phi)}{bound}): {locked:.0%} of the failing "
                    f"prompts always fail, against {predicted:.0%} for the spread of the first "
                    f"steps (phi {_phi_words(pool_early.point_phi)}) moved to the reward "
                    f"{r_late:.2f}: {beyond:.0%} of the failing prompts that should explore do not")


def _without_entropy(run: Run, early: slice, late: slice, group_size: int | None
                     ) -> ModeVerdict:
    """Judge concentration without the entropy: the reward's sampling noise (module fluctuation).

    At the ceiling a low temperature is convergence. Where the groups had no spread from the
    first steps (:func:`_degenerate_from_start`) the success rates cannot show a temperature
    falling, and the diagnosis abstains (degeneracy, upstream, names the run). Elsewhere the
    zero-std share, where logged, reads the locked prompts directly
    (:func:`_locked_beyond_start`); without it the share of the reward's variance between
    prompts decides (:func:`_read`); where B (or the whiteness of the fluctuations) is missing
    the diagnosis abstains with the reason rather than call the run healthy.
    """
    base = "no entropy in the log"
    if not is_success_rate(run):
        return unjudged(base + ": the policy's temperature cannot be followed, and rewards "
                        "outside [0, 1] have no Bernoulli sampling prediction")
    span = (float(run.steps[late][0]), float(run.steps[-1]))
    r_late = window_mean(run.reward, late)
    if r_late >= CEILING:
        return ModeVerdict(False, 0.0, f"{base}; at the ceiling (reward {r_late:.2f}): a low "
                           "temperature there is convergence, not a failure", True, span)
    lost0 = _degenerate_from_start(run, early, group_size)
    if lost0 >= FLAG_SCORE:
        first = amount(window_mean(run.reward, early))
        return ModeVerdict(False, 0.0, f"{base}; at the first steps' reward {first} "
                           f"identical prompts in groups of G = {group_size} already lose "
                           f"{lost0:.0%} of the drift: the groups had no spread to lose, and "
                           "without the entropy a prompt that never samples the right answer "
                           "reads like one locked onto a wrong one, the diagnosis abstains",
                           True, span, undecided=True)
    groups = _locked_beyond_start(run, early, late, group_size)
    if groups is not None:
        beyond, why = groups
        flag = beyond >= FLAG_SCORE
        why += (": the policy is deterministic on most prompts" if flag
                else ": the groups still explore")
        return ModeVerdict(flag, beyond, f"{base}; {why}", True, span)
    fluct = sampling_share(run, late, group_size)
    reading = _read(fluct)
    if reading is None:
        return ModeVerdict(False, 0.0, f"{base}; {fluct.words}: concentration cannot be "
                           "judged, the diagnosis abstains", False, span, undecided=True)
    flag, share, undecided, why = reading
    return ModeVerdict(flag, share, f"{base}; {why}", True, span, undecided=undecided)
