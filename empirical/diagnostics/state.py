"""What the reward did, whatever the failure modes say: the state of a run.

One of :data:`STATES`: ``converged``, ``learning``, ``not_learning`` (flat from the start, or
pinned at one value: a constant reward leaves every group without spread, so no gradient,
docs/theory.md section 7), ``declining`` (a fall beyond the noise, with the step of the peak it fell
from; never healthy) or ``too_short``. Every test runs at the false-alarm rate ``ALPHA`` per
run. A ``converged`` run whose last quarter does not rule out a rise at the run's own average
pace either (its late gain within 2 s.e. of that rise as well as of none) is marked
unresolved: its evidence says that a plateau and a continuing rise read alike. A reward that
oscillates over the whole run (:func:`~grpodyn.empirical.diagnostics.cycle.sustained_cycle`) is
read net of its cycle: otherwise the windows compared would fall on crests or troughs, and the
state would turn with the cycle's phase. Needs numpy and scipy.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from functools import lru_cache

import numpy as np

from grpodyn.empirical.diagnostics.cycle import Cycle, sustained_cycle
from grpodyn.empirical.diagnostics.series import (
    amount,
    change_words,
    is_success_rate,
    point_noise,
    smooth,
    window_mean,
    z_quantile,
)
from grpodyn.empirical.diagnostics.verdict import ALPHA, CEILING, NEGLIGIBLE_RISE
from grpodyn.empirical.logs.loaders import Run

__all__ = ["STATES", "ALPHA", "SHORT", "State", "classify_state", "pinned_value"]

STATES = ("converged", "learning", "not_learning", "declining", "too_short")
SHORT = 40  # fewer logged points than this: too short to tell a plateau from a pause
_PINNED = 20  # a reward identical over this many last points (and half the run) is pinned
_IDENTICAL = 1e-9  # values within this share of their size are identical (relative: unit-free)


@dataclass(frozen=True)
class State:
    """The state of a run, its evidence in words and, for a decline, the step of the peak.

    ``pinned`` marks a run that does not learn because its reward sits at one value;
    ``resolved`` is False for a ``converged`` run whose last quarter is within 2 s.e. of a rise
    at the run's own average pace as well as of none: a plateau and a continuing rise read alike.
    """

    name: str
    evidence: str
    peak_step: float | None = None
    pinned: bool = False  # not learning because the reward sits at one value
    #: False for a plateau the last quarter cannot tell from a rise at the run's own pace
    resolved: bool = True
    #: True for a decline from the first steps, with no peak above the start
    from_start: bool = False
    #: the sustained oscillation the state was read net of, if the reward holds one
    cycle: Cycle | None = None


@lru_cache(maxsize=256)
def _joint_quantile(alpha: float, rho: float) -> float:
    """Return z with P(X > z, Y > z) = alpha for standard normals of correlation ``rho``."""
    from scipy.optimize import brentq
    from scipy.stats import multivariate_normal

    law = multivariate_normal(mean=[0.0, 0.0], cov=[[1.0, rho], [rho, 1.0]])
    # P(X > z, Y > z) = P(X < -z, Y < -z) by symmetry
    return float(brentq(lambda z: law.cdf([-z, -z]) - alpha, 0.0, 10.0))


def pinned_value(r: np.ndarray) -> float | None:
    """Return the value a reward sits at over its last half (``_PINNED`` points or more), or None.

    Identical to within ``_IDENTICAL`` of its size (relative, so that the reward's unit does
    not matter: a reward at 0 must be exactly 0): a pinned reward leaves every group without
    spread, so no gradient moves it (docs/theory.md section 7).
    """
    tail = np.asarray(r, dtype=float)[np.size(r) // 2:]
    tail = tail[np.isfinite(tail)]
    if tail.size < _PINNED or np.ptp(tail) > _IDENTICAL * abs(float(tail[0])):
        return None
    return float(tail[0])


def _pinned(run: Run) -> State | None:
    """Call a reward identical over its last half (and at least ``_PINNED`` points) pinned."""
    r = run.reward
    value = pinned_value(r)
    if value is None:
        return None
    moved = np.flatnonzero(np.abs(r - value) > _IDENTICAL * abs(value))
    since = run.steps[moved[-1] + 1] if moved.size else run.steps[0]
    if is_success_rate(run) and value >= CEILING:
        return State("converged", f"reward pinned at {value:g} (the ceiling) since step "
                     f"{since:g}: every prompt solved")
    return State("not_learning", f"reward pinned at {value:g} since step {since:g} (it started "
                 f"at {r[0]:.3g}): a constant reward leaves no group with spread, so no gradient "
                 "to learn from", pinned=True)


def _fall_from_peak(run: Run, late: slice, n_early: int, sigma: float, window: int,
                    r0: float, r1: float) -> State | None:
    """Test a fall back from the best window mean before the late segment.

    Two tests, each at ``ALPHA``: the fall alone, at the Bonferroni quantile over the windows
    the best was picked from, where the best window lies above the start (else the run fell
    from its start, which :func:`classify_state` reads as such); and a rise-then-fall, the
    best window after the early segment above both the start and the end, at the joint
    quantile of the two correlated differences (they share the best window's noise) over the
    same windows.
    """
    r = run.reward
    n_late = late.stop - late.start
    means = smooth(r[: late.start], window, mode="valid")
    if not means.size or not np.isfinite(means).any():
        return None
    best = int(np.nanargmax(means))
    peak = float(means[best])
    chances = max(1, late.start // window)
    limit = z_quantile(ALPHA / chances) * sigma * np.sqrt(1.0 / window + 1.0 / n_late)
    peak_step = float(run.steps[best + window // 2])
    span = f"steps {run.steps[best]:g}-{run.steps[best + window - 1]:g}"
    drop = peak - r1
    if drop > limit and peak > r0:  # a best window no higher than the start is no peak
        top_step, top_words = _top(run, window, peak_step)
        return State("declining", (
            f"reward {amount(r0)} at the start, {amount(peak)} at its best before the last "
            f"quarter (mean of {span}, peak near step {peak_step:g}), {amount(r1)} late: it "
            f"fell back {amount(drop)}, beyond the {amount(limit)} that noise (s.e. "
            f"{amount(sigma / np.sqrt(window))} per window mean) leaves to the best of "
            f"{chances} windows at a false-alarm rate of {ALPHA:g}{top_words}"), top_step)
    means_after = means[n_early:]
    if not means_after.size or not np.isfinite(means_after).any():
        return None
    best = n_early + int(np.nanargmax(means_after))
    peak = float(means[best])
    se_rise = sigma * np.sqrt(1.0 / window + 1.0 / n_early)
    se_fall = sigma * np.sqrt(1.0 / window + 1.0 / n_late)
    rho = (1.0 / window) / np.sqrt((1.0 / window + 1.0 / n_early) * (1.0 / window + 1.0 / n_late))
    z = _joint_quantile(ALPHA / chances, round(float(rho), 3))
    with np.errstate(divide="ignore", invalid="ignore"):  # a noiseless reward: sigma 0
        significant = (peak - r0) / se_rise > z and (peak - r1) / se_fall > z
    if significant:
        peak_step = float(run.steps[best + window // 2])
        top_step, top_words = _top(run, window, peak_step)
        return State("declining", (
            f"reward rose {amount(peak - r0)} from {amount(r0)} at the start to {amount(peak)} "
            f"(mean of steps {run.steps[best]:g}-{run.steps[best + window - 1]:g}, peak near "
            f"step {peak_step:g}) and fell back {amount(peak - r1)} to {amount(r1)} late: both "
            f"beyond {z:.2f} s.e. ({amount(se_rise)}, {amount(se_fall)}), a rise then a fall at "
            f"a false-alarm rate of {ALPHA:g} over {chances} windows{top_words}"), top_step)
    return None


def _top(run: Run, window: int, tested: float) -> tuple[float, str]:
    """Return the step where the run's ``window``-point mean peaks, and words where it moved.

    The fall is tested from the best window before the late segment (``tested``, its centre);
    a run that peaks within the late segment and falls there (a collapse the last steps show)
    peaked later than that window. Its peak is the best full window of the whole run, the step
    a restart would go back to; the words name it where it lies more than half a window from
    ``tested`` (empty otherwise, and where ``tested`` is NaN: no window was tested).
    """
    means = smooth(run.reward, window, mode="valid")
    at = int(np.nanargmax(means))
    top = float(run.steps[at + window // 2])
    if not np.isfinite(tested):  # no tested window: the run's own peak, without words
        return top, ""
    if abs(at + window // 2 - int(np.searchsorted(run.steps, tested))) <= window // 2:
        return tested, ""
    return top, (f"; over the whole run its {window}-point mean peaked near step {top:g} "
                 f"({amount(means[at])}), in windows reaching into the last quarter, and fell "
                 "after it")


def _pace_gain(steps: np.ndarray, early: slice, late: slice, r0: float, r1: float) -> float:
    """Return the rise over the late segment that the run's own average pace would give.

    The pace is the change of the segment means over the steps between the segments' centres;
    a late test whose 2 s.e. exceed the rise it gives over the late segment's span cannot tell
    a plateau from a curve that keeps rising as it did.
    """
    centre_early = 0.5 * (steps[early][0] + steps[early][-1])
    centre_late = 0.5 * (steps[late][0] + steps[late][-1])
    if not centre_late > centre_early:
        return float("nan")
    pace = (r1 - r0) / (centre_late - centre_early)
    return float(pace * (steps[late][-1] - steps[late][0]))


def classify_state(run: Run, early: slice, late: slice, noise: float) -> State:
    """Name what the reward did: converged, learning, not_learning, declining or too_short.

    A fall back from the best level is tested against the run's noise at the scale of a
    window (:func:`~grpodyn.empirical.diagnostics.series.point_noise`: slow fluctuations
    count); the start and the end (first 15%, last 25%) are compared against the
    point-to-point ``noise``. A sustained cycle is taken off the reward first, and the state
    carries it (``State.cycle``).
    """
    if run.n_points < SHORT:
        return State("too_short", f"{run.n_points} logged points (fewer than {SHORT})")
    pinned = _pinned(run)
    if pinned is not None:
        return pinned
    cycle = sustained_cycle(run.steps, run.reward, noise)
    if cycle is not None:
        state = _classify(replace(run, reward=run.reward - cycle.wave), early, late, noise)
        return replace(state, evidence=f"{cycle.words()}; net of the cycle: {state.evidence}",
                       cycle=cycle)
    return _classify(run, early, late, noise)


def _classify(run: Run, early: slice, late: slice, noise: float) -> State:
    """Name the state of a run that is long enough and not pinned (see :func:`classify_state`)."""
    r = run.reward
    n_early, n_late = early.stop - early.start, late.stop - late.start
    r0, r1 = window_mean(r, early), window_mean(r, late)
    window = max(10, run.n_points // 10)
    sigma = point_noise(r, window, noise)
    # the segments' comparison uses the point-to-point noise: the window-scale estimate also
    # grows with the bend of a learning curve, which would read a real rise as flat
    se = noise * np.sqrt(1.0 / n_early + 1.0 / n_late)
    fallen = _fall_from_peak(run, late, n_early, sigma, window, r0, r1)
    if fallen is not None:
        return fallen
    where = f"steps {run.steps[0]:g}-{run.steps[-1]:g}"
    if r1 < r0 - z_quantile(ALPHA) * se:
        return State("declining", f"reward {amount(r0)} -> {amount(r1)} over {where}: a fall of "
                     f"{amount(r0 - r1)} beyond its noise (s.e. {amount(se)}) from the start",
                     float(run.steps[0]), from_start=True)
    if abs(r1 - r0) <= z_quantile(ALPHA / 2) * se:
        top = (f" at the top of its range (>= {CEILING:g}): (nearly) every group solved leaves "
               "no reward spread, so little gradient; harder prompts are the lever"
               if is_success_rate(run) and min(r0, r1) >= CEILING else "")
        return State("not_learning", f"reward {amount(r0)} -> {amount(r1)} over {where}, within "
                     f"{z_quantile(ALPHA / 2):.3g} s.e. ({amount(se)}) of no change: flat from the "
                     f"start{top}")
    if is_success_rate(run) and abs(r1 - r0) <= NEGLIGIBLE_RISE:
        return State("not_learning", f"reward {amount(r0)} -> {amount(r1)} over {where}: beyond "
                     f"its noise (s.e. {amount(se)}) but within {NEGLIGIBLE_RISE} of no change, "
                     "less than any mode reads from the reward: flat in practice")
    idx = np.arange(run.n_points)[late]
    slope = np.polyfit(run.steps[idx], r[idx], 1)[0]
    late_gain = slope * (run.steps[idx[-1]] - run.steps[idx[0]])
    late_se = noise * np.sqrt(12.0 / n_late)  # s.e. of a fitted line's rise over the segment
    at_ceiling = is_success_rate(run) and r1 >= CEILING
    if abs(late_gain) <= 2 * late_se:
        words = (f"reward {amount(r0)} -> {amount(r1)}; over the last quarter it "
                 f"{change_words(late_gain)}, within 2 s.e. (s.e. {amount(late_se)})")
        expected = _pace_gain(run.steps, early, late, r0, r1)
        if expected > 0 and late_gain >= expected - 2 * late_se:
            return State("converged", f"{words}; a rise at the run's own average pace "
                         f"({amount(expected)} over the quarter) is within 2 s.e. of it as well: "
                         "the noise cannot tell a plateau from a continuing rise",
                         resolved=False)
        return State("converged", f"{words}: at its plateau")
    if at_ceiling:
        return State("converged", f"reward {amount(r0)} -> {amount(r1)}: at the top of its range "
                     f"(>= {CEILING:g})")
    if late_gain < 0:  # the end falls beyond its noise: not a run that learns
        peak_step, _ = _top(run, window, float("nan"))
        # r1 > r0 here: a lower end is a decline from the start or flat, read above
        return State("declining", f"reward {amount(r0)} -> {amount(r1)} (start to last quarter: it "
                     f"rose overall); over the last quarter it fell {amount(-late_gain)}, beyond "
                     f"2 s.e. ({amount(late_se)}): falling at the end, from a peak near step "
                     f"{peak_step:g}", peak_step)
    return State("learning", f"reward {amount(r0)} -> {amount(r1)}; over the last quarter it "
                 f"{change_words(late_gain)} (noise {amount(late_se)}): still moving")
