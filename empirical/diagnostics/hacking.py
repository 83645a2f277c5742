"""Detector of reward hacking: the held-out (true) reward stops following the optimised one.

docs/theory.md section 10: under hacking the optimised reward keeps rising while the true reward,
measured on held-out prompts or by a verifier, does not follow: it stays flat or falls. A
smaller rise of the held-out reward is not hacking: near a ceiling every gain is bounded by the
headroom left (1 - r for a success rate), and a train/validation gap on a verifiable reward is
generalisation, not a decoupling. So the detector asks two questions, each against the noise of
the held-out series:

- did the held-out reward fall back from its best level while the optimised reward kept rising
  after that best (it stopped following)? A fall is tested at a Bonferroni threshold over the
  windows the best was picked from;
- did the held-out reward rise at all (beyond twice the s.e. of its gain)? If not, while the
  optimised reward rose, the coupling is read in units of the headroom each had left at the
  start (gain / (1 - start) for success rates): a held-out that moved a small share of its
  headroom while the optimised reward took a large share of its own did not follow.

A held-out reward that rose beyond its noise and never fell back follows, whatever its slope.
Needs numpy.
"""

from __future__ import annotations

import numpy as np

from grpodyn.empirical.diagnostics.series import (
    amount,
    change_words,
    is_success_rate,
    smooth,
    window_mean,
    z_quantile,
)
from grpodyn.empirical.diagnostics.verdict import (
    FLAG_SCORE,
    NEGLIGIBLE_RISE,
    ModeVerdict,
    unjudged,
)
from grpodyn.empirical.logs.aliases import resolve
from grpodyn.empirical.logs.loaders import Run
from grpodyn.numerics.fit import estimate_noise

__all__ = ["hacking"]

#: false-alarm rate of the test of a fall of the held-out reward from its best level, per run
_ALPHA = 0.0027
#: a held-out gain beyond this many s.e. is a rise: the true reward follows
_FOLLOW_Z = 2.0
#: the fewest held-out reward points the test reads (a first and a last window of two)
_HELD_POINTS = 4


def _length_hint(run: Run, early: slice, late: slice) -> str:
    """Say that the completions grew, which hacking often shows, when they did (x1.5 or more)."""
    length = run.metrics.get("completion_length")
    if length is None or np.isfinite(length).sum() <= 4:
        return ""
    ratio = window_mean(length, late) / max(window_mean(length, early), 1e-12)
    return f" (completion length grew x{ratio:.2f}, which hacking often shows)" \
        if ratio > 1.5 else ""


def _reward_is_heldout(run: Run) -> bool:
    """Return True when the reward analysed is a held-out metric (no training reward chosen).

    A log without a training reward is read on its held-out reward: the held-out series is
    then the analysed reward itself, not missing, and the words must say so.
    """
    names = set(run.reward_key.split("+"))
    return any(resolve("heldout_reward", {name}) == name for name in names)


def _headroom_share(gain: float, start: float, success: bool) -> float:
    """Return a gain as a share of the headroom left at ``start`` (the gain itself off [0, 1])."""
    return gain / max(1.0 - start, 1e-3) if success else gain


def _unseen_rise(run: Run, first: int, level: float, noise: float, window: int) -> str:
    """Say that the optimised reward rose before the first held-out step, when it did.

    The coupling is measured over the steps that have a held-out reward; a rise before them (a
    proxy at its plateau by the first evaluation) is not seen by it. The rise: the optimised
    reward's moving mean at the first held-out step (``level``, over ``window`` points) less
    the mean of its first points (a third of those before that step, at most a thirtieth of
    the run, at least two), beyond twice the s.e. of that difference (``noise`` per point). An
    evaluation before training gives the held-out its start.
    """
    count = max(2, min(first, run.n_points // 10) // 3)
    start = run.reward[:count]
    start = start[np.isfinite(start)]
    if first < 2 or start.size < 2:
        return ""
    rise = float(level - np.mean(start))
    limit = max(2 * noise * np.sqrt(1 / start.size + 1 / window), NEGLIGIBLE_RISE)
    if not rise > limit:
        return ""
    return (f"; but from its first {start.size} points to the first held-out step "
            f"({run.steps[first]:g}) it had risen {rise:.3g}, which the coupling cannot see: log "
            "an evaluation before training (TRL eval_on_start, verl val_before_train) to "
            "measure it from the start")


def hacking(run: Run, early: slice, late: slice, noise: float) -> ModeVerdict:
    """Score reward hacking from the held-out reward against the optimised one.

    Parameters
    ----------
    run : Run
        The log; needs ``heldout_reward`` at :data:`_HELD_POINTS` steps or more.
    early, late : slice
        The early and late segments of the run (for the completion-length hint).
    noise : float
        Point-to-point noise of the optimised reward (reward units).

    Returns
    -------
    ModeVerdict
        Flagged when the held-out reward fell back beyond its noise while the optimised one
        rose after the held-out's best, or stayed flat (within 2 s.e.) while the optimised one
        took a share of its headroom at least twice the held-out's.
    """
    held = run.metrics.get("heldout_reward")
    if held is None or np.isfinite(held).sum() < _HELD_POINTS:
        if held is not None:
            missing = (f"only {int(np.isfinite(held).sum())} held-out reward points in the log "
                       f"({_HELD_POINTS} needed)")
        elif _reward_is_heldout(run):
            missing = (f"the analysed reward {run.reward_key!r} is itself the held-out one and "
                       "no optimised training reward is read beside it")
        else:
            missing = "no held-out or verifier reward in the log"
        return unjudged(f"{missing}: the coupling of the optimised reward to the true one "
                        "cannot be measured" + _length_hint(run, early, late))
    idx = np.flatnonzero(np.isfinite(held))
    h = held[idx]
    window = max(5, run.n_points // 40)
    train = smooth(run.reward, window)[idx]
    k = max(2, idx.size // 5)
    gain_train = float(np.mean(train[-k:]) - np.mean(train[:k]))
    gain_held = float(np.mean(h[-k:]) - np.mean(h[:k]))
    spread = 2 * noise * np.sqrt(2.0 / k)
    steps = (float(run.steps[idx[0]]), float(run.steps[idx[-1]]))
    where = (f"from the mean of the first {k} held-out steps ({steps[0]:g}-"
             f"{run.steps[idx[k - 1]]:g}) to that of the last {k} ({run.steps[idx[-k]]:g}-"
             f"{steps[1]:g})")
    if gain_train <= max(spread, NEGLIGIBLE_RISE):
        beyond = "" if gain_train <= 0 else " beyond its noise"
        return ModeVerdict(False, 0.0, f"the optimised reward did not rise{beyond} over the "
                           f"steps with a held-out reward ({change_words(gain_train)} {where}, "
                           f"noise {spread:.2g}): no progress to decouple"
                           + _unseen_rise(run, int(idx[0]), float(train[0]), noise, window),
                           True, steps)
    sigma_h = max(estimate_noise(h).sigma, 1e-12)
    se_gain = sigma_h * np.sqrt(2.0 / k)
    # the held-out's best level: the best mean of k consecutive evaluations before the last k
    means = np.convolve(h, np.ones(k) / k, mode="valid")[: max(1, h.size - 2 * k + 1)]
    best = int(np.argmax(means))
    fall = float(means[best] - np.mean(h[-k:]))
    fall_limit = z_quantile(_ALPHA / means.size) * se_gain
    rise_after = float(np.mean(train[-k:]) - np.mean(train[best:best + k]))
    success = is_success_rate(run)
    share_train = _headroom_share(gain_train, float(np.mean(train[:k])), success)
    share_held = _headroom_share(gain_held, float(np.mean(h[:k])), success)
    ratio = share_held / share_train
    words = (f"optimised reward {change_words(gain_train)}, held-out "
             f"{change_words(gain_held)} {where} (held-out noise s.e. {amount(se_gain)} on a gain)")
    if success:
        words += (f"; as shares of the headroom each had left: {share_train:.0%} and "
                  f"{share_held:.0%} (ratio {ratio:.2f})")
    if fall > fall_limit and rise_after > spread:
        score = float(np.clip(0.5 + 0.5 * fall / (fall + rise_after), FLAG_SCORE, 1.0))
        words += (f"; the held-out fell {amount(fall)} from its best (step "
                  f"{run.steps[idx[best]]:g}), beyond the {amount(fall_limit)} its noise allows, "
                  f"while the optimised reward rose {amount(rise_after)} after it: it stopped "
                  "following")
        return ModeVerdict(True, score, words, True, (float(run.steps[idx[best]]), steps[1]))
    if gain_held > _FOLLOW_Z * se_gain:
        score = float(0.45 * np.clip(1.0 - ratio, 0.0, 1.0))
        words += ("; the held-out rose beyond its noise and did not fall back: it follows (a "
                  "smaller rise near a ceiling is a train/held-out gap, not hacking)")
        return ModeVerdict(False, score, words, True, steps)
    score = float(np.clip(1.0 - ratio, 0.0, 1.0))
    words += (f"; the held-out did not rise beyond {_FOLLOW_Z:g} s.e. while the optimised reward "
              "rose" + (": it did not follow" if score >= FLAG_SCORE else
                        ", but by a similar share of its headroom: too little to decouple"))
    return ModeVerdict(score >= FLAG_SCORE, score, words, True, steps)
