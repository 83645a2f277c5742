"""What a reward series did against its own noise: :func:`run_trend` -> :class:`Trend`.

The advice's reading of a run (flat, rising, fell, overshot, pinned), from the thirds of the
run and its best window (:func:`run_trend`), made to agree with the diagnosis's state where the
run is long enough for one (:func:`agree_with_state`), so that ``advise`` and ``diagnose`` read one
direction from one run. A fall that keeps more than half of the rise from the start and no
longer falls is a stable map's overshoot, ``overshot`` (:func:`settled_overshoot`): the map
started from rest overshoots its plateau by a share OS of the gain and gives back OS / (1 + OS)
of the rise at its peak, under half wherever OS < 1 (docs/theory.md section 4), so such a run
says that it oscillated, not that it reached the stability limit.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

import numpy as np

from grpodyn.empirical.diagnostics.modes import late_without_spread
from grpodyn.empirical.diagnostics.series import point_noise, segments, smooth, z_quantile
from grpodyn.empirical.diagnostics.state import ALPHA, SHORT
from grpodyn.empirical.logs.loaders import Run
from grpodyn.ground import TooFewPoints

if TYPE_CHECKING:
    from grpodyn.empirical.diagnostics.diagnose import Diagnosis

__all__ = ["Trend", "run_trend", "agree_with_state", "series_trend", "settled_overshoot"]

_LEVEL = 0.975  # two-sided 95%: a change beyond it is "beyond the noise"
#: A standard error below this share of the reward's scale is floating-point rounding, not
#: noise: a noise-free series is said to be one rather than rising by 1e17 standard errors.
_RESOLUTION = 1e-12


@dataclass(frozen=True)
class Trend:
    """What a reward series did, judged against its own noise.

    Attributes
    ----------
    kind : str
        ``flat`` (no change beyond noise), ``pinned`` (one constant value: no gradient),
        ``rising``, ``fell`` (collapsed, or a rise given back) or ``overshot`` (a rise given
        back in part: the end keeps more than half of it, beyond noise, and no longer falls).
    sigma : float
        Per-point noise from first differences [reward].
    change, change_stderr : float
        Mean of the last third minus the first third, and its standard error [reward].
    peak, peak_step, final : float
        Highest and last running mean (window of a sixth of the points) and where the peak is.
    thirds : (float, float, float)
        Means of the three thirds; ``thirds_stderr`` their standard errors; ``thirds_step``
        their mean steps.
    span : float
        Steps from the first to the last point.
    text : str
        The judgement in words.
    at_floor : bool
        The last third sits exactly at the floor of the reward's range after a start above it.
    overshoot : float or None
        For ``overshot``: the share of the gain (end minus start) by which the peak exceeded
        the end, OS [1].
    """

    kind: str
    sigma: float
    change: float
    change_stderr: float
    peak: float
    peak_step: float
    final: float
    thirds: tuple[float, float, float]
    thirds_stderr: tuple[float, float, float]
    thirds_step: tuple[float, float, float]
    span: float
    text: str
    at_floor: bool = False
    overshoot: float | None = None


def run_trend(steps: np.ndarray, reward: np.ndarray, *,
              floor: float | None = None) -> Trend:
    """Judge whether a reward series stayed flat, rose, or fell, against its noise.

    Parameters
    ----------
    steps, reward : numpy.ndarray
        Increasing steps and the reward at them (at least 3 finite points).
    floor : float, optional
        The lowest reward the range allows: a run whose last third sits exactly there after
        starting above it has collapsed, whatever its noise estimate says.

    Returns
    -------
    Trend
        The judgement with its numbers.
    """
    steps, reward = np.asarray(steps, float), np.asarray(reward, float)
    keep = np.isfinite(steps) & np.isfinite(reward)
    steps, reward = steps[keep], reward[keep]
    if reward.size < 3:
        raise TooFewPoints(f"reward: advice needs at least 3 logged points, got {reward.size}")
    sigma = float(np.std(np.diff(reward)) / math.sqrt(2))  # as numerics.fit.estimate_noise
    parts = np.array_split(np.arange(reward.size), 3)
    means = tuple(float(reward[p].mean()) for p in parts)
    errors = tuple(sigma / math.sqrt(p.size) for p in parts)
    centres = tuple(float(steps[p].mean()) for p in parts)
    change = means[2] - means[0]
    change_se = math.hypot(errors[0], errors[2])
    rounding = _RESOLUTION * max(abs(m) for m in means)
    if change_se <= rounding:  # no noise: a move of the thirds beyond rounding is real
        change_se = 0.0
        change = change if abs(change) > rounding else 0.0
    # the noise comes from n - 1 differences: Student's t with n - 2 degrees of freedom
    from scipy.stats import t as student_t  # a third of a second to import: only when needed

    z = float(student_t.ppf(_LEVEL, max(reward.size - 2, 1)))
    width = max(1, reward.size // 6)
    running = np.convolve(reward, np.ones(width) / width, mode="valid")
    top = int(np.argmax(running))
    peak, final = float(running[top]), float(running[-1])
    # a rise given back is the diagnosis's "declining" (docs/theory.md section 10): the peak is
    # the best of the windows the run offers, so both differences are held to its false-alarm
    # rate over those windows, and window means carry the slow fluctuations too
    window_se = point_noise(reward, width, sigma) / math.sqrt(width)
    z_peak = z_quantile(ALPHA / max(1, reward.size // width))
    rise, loss = peak - means[0], peak - final
    gave_back = (rise > z_peak * math.hypot(errors[0], window_se)
                 and loss > z_peak * math.sqrt(2) * window_se and loss >= 0.5 * rise
                 and loss > rounding)
    at_floor = (floor is not None and bool(np.all(reward[parts[2]] == floor))
                and reward[0] > floor)
    if change < -z * change_se or gave_back or at_floor:
        kind = "fell"
        text = (f"fell: from {means[0]:.4g} (first third) to {final:.4g} at the end"
                + (f" after a peak of {peak:.4g} near step {steps[top + width // 2]:g}"
                   if gave_back else "")
                + (f", and sits at the floor {floor:g} of its range" if at_floor else
                   f", beyond its noise ({z:.2g} standard errors = {z * change_se:.2g})"
                   if change_se > 0 else ", without noise"))
    elif change > z * change_se:
        kind = "rising"
        text = (f"rose from {means[0]:.4g} to {means[2]:.4g} (first to last third), "
                + (f"{change / change_se:.3g} standard errors" if change_se > 0
                   else "without noise"))
    else:
        kind = "flat"
        dof = max(reward.size - 2, 1)
        text = (f"did not move beyond its noise: {means[0]:.4g} -> {means[2]:.4g} (first to "
                f"last third), {change:+.2g} against a standard error of {change_se:.2g}, "
                f"within the {z:.3g} standard errors that a noise read from {reward.size} "
                f"points ({dof} degree{'s' * (dof != 1)} of freedom) allows"
                if change_se > 0 else f"did not move: {means[0]:.4g} -> {means[2]:.4g} (first "
                "to last third), without noise")
    return Trend(kind, sigma, change, change_se, peak, float(steps[top + width // 2]), final,
                 means, errors, centres, float(steps[-1] - steps[0]), text, at_floor)


#: The trend a state of the diagnosis implies (``too_short`` keeps the thirds' judgement).
_STATE_TREND = {"declining": "fell", "not_learning": "flat", "learning": "rising",
                "converged": "rising"}


def agree_with_state(trend: Trend, run: Run, diagnosis: Diagnosis | None, *,
                     momentum: float | None = None) -> Trend:
    """Return ``trend`` with the direction the diagnosis's state gives the same run.

    A run long enough for the state (:data:`~grpodyn.empirical.diagnostics.state.SHORT`
    points) is judged once, by the diagnosis's
    :func:`~grpodyn.empirical.diagnostics.state.classify_state` (false-alarm rate ``ALPHA``,
    the look-elsewhere effect of a peak picked after the fact, slow fluctuations at the scale
    of a window), so that ``advise`` and ``diagnose`` never contradict each other; a reward
    sitting at the floor of its range after starting above it stays a fall whatever the
    state. Shorter runs (or no ``diagnosis``) keep the thirds' test of :func:`run_trend`.
    A fall, from the thirds' test or from the state, that :func:`settled_overshoot` reads as a
    stable map's overshoot is ``overshot`` (``momentum``: the run's beta, where known).
    """
    if run.n_points < SHORT or trend.at_floor or diagnosis is None:
        return settled_overshoot(trend, run.steps, run.reward, momentum=momentum)
    trend = _with_state(trend, diagnosis.state, diagnosis.pinned, diagnosis.state_evidence)
    if trend.kind == "fell":
        return settled_overshoot(trend, run.steps, run.reward, momentum=momentum)
    if trend.kind == "flat" and late_without_spread(run, segments(run.n_points)[1]):
        # flat because no group had a spread late in the run: no gradient, no relaxation to
        # bound the stiffness with
        return replace(trend, kind="pinned", text=f"{_TREND_WORDS['pinned']} late in the run "
                       f"at {run.reward[np.isfinite(run.reward)][-1]:g}, every mean of its last "
                       "quarter (the diagnosis's advantage degeneracy: no group had a spread)")
    return trend


def series_trend(steps: np.ndarray, reward: np.ndarray, *, floor: float | None = None,
                 momentum: float | None = None) -> Trend:
    """Return what :func:`agree_with_state` reads from a bare reward series.

    The thirds' test of :func:`run_trend`, made to agree with the diagnosis's state of the
    same series (:func:`~grpodyn.empirical.diagnostics.state.classify_state` reads the reward
    and its steps alone), so that a run of a sweep, known by its reward path only, is read as
    the advice reads a run it diagnoses; ``momentum`` as in :func:`settled_overshoot`.
    """
    from grpodyn.empirical.diagnostics.series import segments
    from grpodyn.empirical.diagnostics.state import classify_state
    from grpodyn.numerics.fit import estimate_noise

    steps, reward = np.asarray(steps, float), np.asarray(reward, float)
    keep = np.isfinite(steps) & np.isfinite(reward)
    trend = run_trend(steps[keep], reward[keep], floor=floor)
    run = Run("series", "series", steps[keep], reward[keep], {})
    if run.n_points < SHORT or trend.at_floor:  # as agree_with_state
        return settled_overshoot(trend, run.steps, run.reward, momentum=momentum)
    early, late, _ = segments(run.n_points)
    state = classify_state(run, early, late, estimate_noise(run.reward).sigma)
    return settled_overshoot(_with_state(trend, state.name, state.pinned, state.evidence),
                             run.steps, run.reward, momentum=momentum)


def settled_overshoot(trend: Trend, steps: np.ndarray, reward: np.ndarray, *,
                      momentum: float | None = None) -> Trend:
    """Return a fall that keeps more than half of its rise, and has stopped, as ``overshot``.

    The map started from rest (docs/theory.md section 4) overshoots its plateau by a share OS
    of the gain and gives back OS / (1 + OS) of the rise at its peak: less than half wherever
    OS < 1 (at beta = 0.9 every stiffness below about 1.13, some 430 times the critical one,
    :func:`~grpodyn.numerics.settling.first_overshoot`). A run past its stability limit, or
    one that collapsed, gives back more. So a ``fell`` whose end lies above the midpoint of
    its start (the mean of its first ``_START`` points) and its peak (read from below,
    :func:`_peak_from_below`) by more than ``z_quantile(ALPHA)`` standard errors, and whose
    last quarter does not fall (:func:`_still_falling`: a fall still under way may go on), is
    a stable oscillation that settled: ``overshot``, with OS = (peak - end) / (end - start) < 1,
    a lower bound. Without momentum the map has no complex poles, so a ``momentum`` known to be
    0 leaves a fall a fall; so does a floor reached.

    Parameters
    ----------
    trend : Trend
        The reading of ``reward`` (:func:`run_trend`, made to agree with a state or not).
    steps, reward : numpy.ndarray
        The series it was read from (non-finite points are left out, as the trend left them).
    momentum : float, optional
        beta of the run, where known (None: unknown, read as with momentum).

    Returns
    -------
    Trend
    """
    steps, reward = np.asarray(steps, float), np.asarray(reward, float)
    keep = np.isfinite(steps) & np.isfinite(reward)
    steps, reward = steps[keep], reward[keep]
    if trend.kind != "fell" or trend.at_floor or reward.size < 2 * _START \
            or (momentum is not None and not momentum > 0):
        return trend
    start = float(reward[:_START].mean())
    width = max(1, reward.size // 6)
    end_se = point_noise(reward, width, trend.sigma) / math.sqrt(width)
    peak, peak_se = _peak_from_below(reward, trend, end_se)
    held = trend.final - 0.5 * (peak + start)  # > 0 exactly where the share below is < 1
    held_se = math.sqrt(end_se ** 2 + 0.25 * peak_se ** 2 + trend.sigma ** 2 / (4 * _START))
    if not held > z_quantile(ALPHA) * held_se or _still_falling(steps, reward, trend.sigma):
        return trend
    share = float((peak - trend.final) / (trend.final - start))
    return replace(trend, kind="overshot", overshoot=share, text=(
        f"overshot and settled: from {start:.4g} (first {_START} points) to a peak of at least "
        f"{peak:.4g} near step {trend.peak_step:g}, then {trend.final:.4g} at the end, "
        f"which keeps more than half of the rise ({held:+.2g} above its midpoint, "
        f"{held / held_se:.3g} standard errors), and the last quarter does not fall; an "
        f"overshoot of at least {share:.2g} of the gain, which a stable map with momentum makes "
        "(it gives back OS / (1 + OS) < 1/2 of its rise), where a run past its stability "
        "limit gives back more"))


#: Points whose mean is a run's start in :func:`settled_overshoot`: few, since a fast rise
#: leaves the start within the first steps.
_START = 3


def _peak_from_below(reward: np.ndarray, trend: Trend, wide_se: float) -> tuple[float, float]:
    """Return the peak of ``reward`` read from below, with the standard error of its window.

    Two standard errors under its best mean over ``_START`` times fewer points than the trend's
    window, or the trend's peak if higher (``wide_se``: the s.e. of a mean over the trend's
    window). The trend's window (a sixth of the run) flattens a
    peak that lasts a few steps; a shorter window keeps it, and its best mean, picked after the
    fact, is lowered by two of its standard errors (the window-scale noise,
    :func:`~grpodyn.empirical.diagnostics.series.point_noise`), so that the overshoot it gives
    stays a lower bound.
    """
    width = max(_START, reward.size // (6 * _START))
    means = smooth(reward, width, mode="valid")
    error = point_noise(reward, width, trend.sigma) / math.sqrt(width)
    lowered = float(np.max(means)) - 2 * error
    return (lowered, error) if lowered > trend.peak else (trend.peak, wide_se)


def _still_falling(steps: np.ndarray, reward: np.ndarray, sigma: float) -> bool:
    """Whether the last quarter falls: its fitted line, or its mean against the quarter before.

    Either beyond 2 standard errors of the point-to-point noise ``sigma``: the line's change
    over the quarter (s.e. sigma span / sqrt(sum (t - t_mean)^2), for any spacing of the
    steps), and the drop of the quarter's mean below the quarter before's (s.e.
    sigma sqrt(2 / n), n points a quarter). A fall that has not yet given back half of the
    rise may go on; a series too short for two quarters of 3 points is read as falling.
    """
    size = max(3, reward.size // 4)
    if reward.size < 2 * size:
        return True
    late, before = reward[-size:], reward[-2 * size:-size]
    late_steps = steps[-size:]
    spread = float(np.sum((late_steps - late_steps.mean()) ** 2))
    if not spread > 0:
        return True
    span = float(np.ptp(late_steps))
    change = float(np.polyfit(late_steps, late, 1)[0]) * span
    if change < -2 * sigma * span / math.sqrt(spread):
        return True
    return float(before.mean() - late.mean()) > 2 * sigma * math.sqrt(2.0 / size)


def _with_state(trend: Trend, state: str, pinned: bool, evidence: str) -> Trend:
    """Return ``trend`` with the direction a state of the diagnosis gives, and its words."""
    kind = "pinned" if pinned else _STATE_TREND.get(state, trend.kind)
    if kind == trend.kind:
        return trend
    return replace(trend, kind=kind, text=f"{_TREND_WORDS[kind]} (the diagnosis's state "
                   f"{state}: {evidence})")


_TREND_WORDS = {"fell": "fell beyond its noise", "flat": "stayed flat",
                "rising": "rose beyond its noise", "pinned": "is pinned"}
