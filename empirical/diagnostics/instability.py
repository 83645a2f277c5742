"""Detector of dynamical instability: the map's damping is gone (docs/theory.md sections 5, 6, 10).

An unstable map shows as a collapse of the reward from its best level with the policy carried
off its reference (KL or entropy moved x3), a runaway KL, an entropy that rises while the reward
falls (divergence), slow fluctuations far beyond what the noise gives, or a limit cycle: an
unstable linear mode that the nonlinearity of the reward saturates into a sustained
oscillation. Both the slow fluctuations and the limit cycle are read on what is left of the
reward after its best non-decreasing curve (least squares, :func:`without_rise`): a rise is
learning, however steep, and its bend would otherwise leave a deterministic residual in the
slow band (a sigmoid over a few steps at little noise read as fluctuations x20-x140 the
noise's). A fall is not non-decreasing and is left whole; an oscillation keeps most of itself
(the fit pools each fall with the rise before it into a level), but a slow one of small
amplitude loses enough to drop below the flag (studies/diagnosis/README.md, "A rise is
learning"). The limit cycle is read from the AR(2)
of the reward's fluctuations around its
trend (its poles by the modified Yule-Walker equations, blind to the white sampling noise):
complex poles (an oscillation) whose radius is near 1 (its amplitude persists: at
0.9 it keeps a third of itself over 10 steps), with the fit explaining the fluctuations beyond
what white noise would at the false-alarm rate ``ALPHA`` (an F test of the AR(2) against
white noise). A radius above 1 is a fit that is not stationary, and the evidence says so: it
counts only where the limit cycle test reads any pole (complex, beyond the noise), then at
the top score. Needs numpy and scipy.
"""

from __future__ import annotations

import numpy as np

from grpodyn.empirical.diagnostics.cycle import POINTS, SHARE, SHORTEST, Cycle
from grpodyn.empirical.diagnostics.series import (
    change_words,
    is_success_rate,
    smooth,
    window_mean,
)
from grpodyn.empirical.diagnostics.verdict import ALPHA, CEILING, FLAG_SCORE, ModeVerdict
from grpodyn.empirical.logs.loaders import Run

__all__ = ["instability", "limit_cycle", "metric_growth", "relaxation_time", "without_rise",
           "LIMIT_RADIUS"]

#: an AR(2) pole radius this close to 1 is near the unit circle (an oscillation that persists)
LIMIT_RADIUS = 0.9


def without_rise(r: np.ndarray) -> np.ndarray:
    """Return the reward less its best non-decreasing curve (NaN where the reward is NaN).

    The curve is the least-squares isotonic fit (pool adjacent violators,
    ``scipy.optimize.isotonic_regression``): it follows any rise, however steep, and pools a
    fall or the falling half of an oscillation into a level, so what is left holds the falls
    and the oscillations whole and no rise. Over a white-noise plateau the fit is nearly
    constant and the noise is left as it was (the slow band's variance within 10% of the
    noise's on 100-400 points).

    Parameters
    ----------
    r : ndarray
        The reward per logged step.

    Returns
    -------
    ndarray
        r less its isotonic fit, in the reward's units.
    """
    from scipy.optimize import isotonic_regression

    out = np.full(r.shape, np.nan)
    finite = np.isfinite(r)
    if finite.sum() >= 2:
        out[finite] = r[finite] - isotonic_regression(r[finite], increasing=True).x
    return out


def limit_cycle(r: np.ndarray) -> dict:
    """Fit an AR(2) to the reward's fluctuations around its moving trend.

    Parameters
    ----------
    r : ndarray
        The reward per logged step (the diagnosis passes what :func:`without_rise` leaves).

    Returns
    -------
    dict
        ``score`` in [0, 1] (0.5 at radius :data:`LIMIT_RADIUS`, 1 at radius 1, 0 when the
        poles are real or the fit is not significant), ``radius``, ``period`` (logged points;
        NaN for real poles), ``p_value`` of the F test against white noise, ``r2`` (share of the
        fluctuations' variance the AR(2) explains); ``score`` 0 and NaN elsewhere when the run
        has fewer than four trend windows.
    """
    n = r.size
    width = max(25, n // 8)
    out = {"score": 0.0, "radius": float("nan"), "period": float("nan"),
           "p_value": float("nan"), "r2": float("nan")}
    if n < 4 * width:
        return out
    x = np.nan_to_num((r - smooth(r, width))[width // 2: n - width // 2])
    x = x - x.mean()
    design = np.column_stack([x[1:-1], x[:-2]])
    coef, *_ = np.linalg.lstsq(design, x[2:], rcond=None)
    resid = x[2:] - design @ coef
    total = float(np.sum(x[2:] ** 2))
    if total <= 0:
        return out
    r2 = float(1.0 - np.sum(resid**2) / total)
    m = x.size - 2
    from scipy.stats import f as f_law

    p_value = float(f_law.sf((r2 / 2) / max((1 - r2) / (m - 2), 1e-300), 2, m - 2))
    poles = _signal_poles(x)
    radius = float(np.max(np.abs(poles)))
    complex_ = bool(np.any(np.abs(poles.imag) > 1e-9))
    angle = float(np.max(np.abs(np.angle(poles)))) if complex_ else 0.0
    out.update(radius=radius, p_value=p_value, r2=r2,
               period=2 * np.pi / angle if angle > 0 else float("nan"))
    if complex_ and p_value < ALPHA and radius >= LIMIT_RADIUS:
        out["score"] = float(np.clip(FLAG_SCORE + (radius - LIMIT_RADIUS)
                                     / (1 - LIMIT_RADIUS) * (1 - FLAG_SCORE), FLAG_SCORE, 1.0))
    return out


def _signal_poles(x: np.ndarray, lags: int = 8) -> np.ndarray:
    """Return the AR(2) poles of the signal under white measurement noise (modified Yule-Walker).

    The logged reward is the map's state plus the batch's sampling noise, white: its
    autocovariances at lags k >= 1 are the state's alone, so the equations gamma(k) = a1
    gamma(k-1) + a2 gamma(k-2) for k = 3..``lags`` (which never use gamma(0)) give the state's
    poles, where an ordinary AR(2) fit pulls them towards 0 by the noise's share.
    """
    n = x.size
    gamma = np.array([x[: n - k] @ x[k:] / n for k in range(lags + 1)])
    design = np.column_stack([gamma[2:lags], gamma[1:lags - 1]])
    coef, *_ = np.linalg.lstsq(design, gamma[3:lags + 1], rcond=None)
    return np.roots([1.0, -coef[0], -coef[1]])


def _excess(r: np.ndarray, noise: float) -> tuple[float, float]:
    """Return the variance of the slow fluctuations over the white noise's, and its score."""
    n = r.size
    short, long_ = 5, max(25, n // 10)
    if n < 4 * long_:  # an oscillation needs a trend to oscillate around
        return float("nan"), 0.0
    slow = smooth(r, short) - smooth(r, long_)
    inner = slice(long_, n - long_)
    white = noise**2 * (1.0 / short - 1.0 / long_)  # its variance for trend + white noise
    excess = float(np.nanvar(slow[inner]) / white) if white > 0 else 1.0
    return excess, float(np.clip((excess - 4.0) / 8.0, 0.0, 1.0))


def metric_growth(run: Run, name: str, early: slice, late: slice) -> float:
    """Return a positive metric's mean over ``late`` divided by its mean over ``early``.

    NaN where the log lacks the metric, holds 4 or fewer finite values of it, or its early mean
    is not positive. The diagnosis reads the entropy's growth with it.
    """
    values = run.metrics.get(name)
    if values is None or np.isfinite(values).sum() <= 4:
        return float("nan")
    start = window_mean(values, early)
    return window_mean(values, late) / start if start > 0 else float("nan")


#: The KL's peak over its first half's median that says the policy moved though the KL settled
#: back: a tenfold spike, the growth the KL's own score counts in full. A KL's drift over a
#: healthy run reaches a few times its early level (x3.1 on a public noisy run at B G = 8).
KL_SPIKE = 10.0


def _kl(run: Run, late: slice) -> tuple[float, float, float, str]:
    """Return the KL's growth (late over the first half's median), its peak's, score and words.

    The peak: the highest 3-point median of the KL after the first half, over that half's
    median (NaN where either is not positive): a spike of the KL of :data:`KL_SPIKE` or more
    while the reward fell, over by the last quarter, still says the policy moved.
    """
    nan = float("nan")
    kl = run.metrics.get("kl")
    if kl is None or np.isfinite(kl).sum() <= 8:
        return nan, nan, 0.0, ""
    half = max(4, run.n_points // 2)
    k_mid = np.nanmedian(kl[:half])
    k_late = window_mean(kl, late)
    growth = k_late / k_mid if np.isfinite(k_late) and k_late > 0 and k_mid > 0 else nan
    # a gap counts as the lowest value: a triple's median needs two logged values of its three
    after = np.where(np.isfinite(kl[half:]), kl[half:], -np.inf)
    medians = np.median(np.stack([after[:-2], after[1:-1], after[2:]]), axis=0) \
        if after.size >= 3 else np.array([-np.inf])
    k_peak = float(medians.max()) if np.isfinite(medians).any() else nan
    peak = k_peak / k_mid if np.isfinite(k_peak) and k_peak > 0 and k_mid > 0 else nan
    # a stable map keeps the KL at its stationary level; an unstable one carries the policy
    # away from the reference: a tenfold growth past 1 nat scores 1
    if np.isfinite(growth) and k_late > 1.0 and growth > 1.0:
        return growth, peak, float(np.clip(np.log10(growth), 0.0, 1.0)), \
            f"; KL grew x{growth:.3g} ({k_mid:.3g} -> {k_late:.3g})"
    return growth, peak, 0.0, ""


def instability(run: Run, early: slice, late: slice, noise: float, *,
                state_peak: float | None = None, cycle: Cycle | None = None) -> ModeVerdict:
    """Score dynamical instability: collapse, runaway KL, divergence, excess, limit cycle.

    Parameters
    ----------
    run : Run
        The log.
    early, late : slice
        The early (first 15%) and late (last 25%) segments.
    noise : float
        Point-to-point noise of the reward (reward units).
    state_peak : float, optional
        The step of the peak a declining state fell from: its evidence names it beside this
        mode's own best level (a centred moving mean, which differs), so that the two read as
        two measures rather than two peaks.
    cycle : Cycle, optional
        The sustained oscillation of the reward the state found
        (:func:`~grpodyn.empirical.diagnostics.cycle.sustained_cycle`): a limit cycle whatever
        the AR(2) reads, scored from the share of the fluctuations it carries (0.5 at
        :data:`~grpodyn.empirical.diagnostics.cycle.SHARE`, 1 where it carries them all).

    Returns
    -------
    ModeVerdict
        The largest of the signatures' scores, flagged at 0.5.
    """
    r = run.reward
    # the levels are read net of a sustained cycle, which windows of a fraction of its period
    # would read as falls from its crests; the fluctuations keep it
    net = r if cycle is None else r - cycle.wave
    window = max(10, run.n_points // 10)
    spacing = float(np.median(np.diff(run.steps)))  # steps per logged point
    level = smooth(net, window)
    best = int(np.nanargmax(level))
    collapse = float(level[best] - window_mean(level, late))
    # the best of many noisy window means is biased upward by a few of their s.e.
    significant = collapse > 5 * noise / np.sqrt(window)
    collapse_score = float(np.clip((collapse - 0.1) / 0.2, 0.0, 1.0)) \
        if best < run.n_points * 3 // 4 and significant else 0.0
    fluctuations = without_rise(r)
    excess, excess_score = _excess(fluctuations, noise)
    ar2 = limit_cycle(fluctuations)
    # the AR(2) reads the logged points; its period in steps is that times their spacing
    ar2["period"] *= spacing
    entropy_growth = metric_growth(run, "entropy", early, late)
    divergence_score, divergence_words = 0.0, ""
    if entropy_growth > 1.3:
        r0, r1 = window_mean(net, early), window_mean(net, late)
        at_floor = is_success_rate(run) and r1 <= 1 - CEILING
        if at_floor or r1 < r0 - max(0.05, 3 * noise / np.sqrt(early.stop)):
            # the opposite of concentration: the temperature rose while the reward fell, the
            # updates threw the policy off its start (divergence)
            divergence_score = 1.0
            divergence_words = (f"; entropy rose x{entropy_growth:.2f} while the reward's mean "
                                f"fell from {r0:.3g} over the first 15% of the run to {r1:.3g} "
                                "over its last quarter (divergence)")
    kl_growth, kl_peak, kl_score, kl_words = _kl(run, late)
    collapse_words = ""
    if collapse_score == 0:
        # a policy that concentrates also leaves the reference; the KL's growth tells an
        # instability only together with the fall of the reward it causes
        kl_score = 0.0
    else:
        # a fall of the reward at a fixed distance from the reference is a slow fluctuation of
        # a stable, noisy run (large at small G); an instability moves the policy: the KL
        # changes, or the entropy rises, by a factor of 3 or more. A falling entropy does not
        # count: it is the concentration's own signature
        moved = [abs(np.log(kl_growth))] if np.isfinite(kl_growth) else []
        if np.isfinite(entropy_growth) and entropy_growth > 0:
            moved.append(np.log(entropy_growth))
        settled = bool(moved) and max(moved) < np.log(3.0)  # the last quarter near the start
        if settled and kl_peak >= KL_SPIKE:  # but the KL spiked after the first half
            collapse_words = (f"; the KL rose to x{kl_peak:.3g} its first half's median after "
                              "it, then settled back (its last quarter within x3): the policy "
                              "moved")
        elif settled:
            collapse_score = kl_score = 0.0
            collapse_words = (" without the policy moving (the logged KL's last quarter "
                              "within a factor 3 of its first half, entropy not up x3): a slow "
                              "fluctuation or a concentration, not a divergence")
        elif best < window and not moved:
            tau = relaxation_time(run.steps, net, noise, shortest=window * spacing / 2)
            if np.isfinite(tau):
                # no KL or entropy growth says whether the policy moved: the shape decides
                collapse_score = 0.0
                collapse_words = _relaxation_words(tau)
    sustained_score = 0.0 if cycle is None else float(np.clip(
        FLAG_SCORE + (cycle.share - SHARE) / (1 - SHARE) * (1 - FLAG_SCORE), FLAG_SCORE, 1.0))
    score = max(collapse_score, excess_score, kl_score, divergence_score, ar2["score"],
                sustained_score)
    where = (float(run.steps[best]), float(run.steps[-1]))
    # where the run was searched for a sustained cycle and held none, its shortest period
    searched = SHORTEST * spacing if cycle is None and run.n_points >= POINTS else None
    if np.isfinite(ar2["radius"]):
        oscillation = (f"slow fluctuations beyond the best non-decreasing curve "
                       f"x{_ratio_words(excess)} the variance that noise alone gives; "
                       f"{_cycle_words(ar2, float(run.steps[-1] - run.steps[0]), cycle, searched)}")
        if ar2["score"] >= FLAG_SCORE:
            where = (float(run.steps[0]), float(run.steps[-1]))
    else:
        oscillation = "too few points for an oscillation test"
    if cycle is not None:
        oscillation = (f"{cycle.words()}: a limit cycle, the map's poles at the unit circle "
                       f"held by the nonlinearity; {oscillation}")
        where = (float(run.steps[0]), float(run.steps[-1]))
    # a best within the last smoothing window is the end of a rise, not the start of a fall,
    # unless it lies before the late quarter (a short run's window is long)
    fell = collapse > 0 and (best < run.n_points - window or best < late.start)
    if fell:
        fall = (f"reward {change_words(-collapse)} from its best smoothed level "
                f"({_level_words(run.steps, best, window, state_peak)}) to its last quarter")
        if not significant:
            fall += (f", within 5 s.e. of a window mean ({noise / np.sqrt(window):.3g} each), "
                     "which the best of many noisy windows reaches: not beyond the noise")
    else:
        fall = f"reward at its best smoothed level at the end (step {run.steps[best]:g})"
    words = f"{fall}{collapse_words}; {oscillation}{kl_words}{divergence_words}"
    return ModeVerdict(score >= FLAG_SCORE, score, words, True, where)


def relaxation_time(steps: np.ndarray, r: np.ndarray, noise: float, *,
                    shortest: float = 0.0) -> float:
    """Return the time constant of a fall that is one exponential relaxation, NaN otherwise.

    A stable map relaxes to its fixed point: the distance to it shrinks by the same factor every
    step, so a reward that falls to a lower fixed point does so fastest at its start and slower
    and slower, ``r(t) = c + a exp(-(t - t0) / tau)`` with ``a > 0`` (docs/theory.md sections
    5 and 10).
    An unstable map does the opposite: its departure grows, so the fall speeds up after a
    plateau or a rise (a step or a sigmoid down), which no such curve follows. The curve is
    fitted by least squares (``c`` and ``a`` exactly for each ``tau`` on a logarithmic grid
    from one logging interval to ten spans) and accepted where the data resolve its shape
    (``tau`` at least ``shortest``: a crash within a few logging intervals is a step, whose
    speed at its start no log shows) and show both:

    - the slowing down: the curve beats a straight line by an F test at the false-alarm rate
      ``ALPHA`` (a steady decline, or one too noisy to show its shape, says nothing of it);
    - nothing else: its residual variance is within three standard errors of the white
      noise's, ``SSE / (m - 3) <= noise^2 (1 + 3 sqrt(2 / (m - 3)))``. Fluctuations slower
      than the logging interval inflate it beyond the point-to-point noise and fail this.

    Parameters
    ----------
    steps : ndarray
        The logged steps [step].
    r : ndarray
        The reward per logged step, fitted from its first point [reward] (the diagnosis passes
        the whole run, where its best level lies in its first smoothing window: a rise before
        that best must fit the same curve, which it does only within the noise).
    noise : float
        Point-to-point noise of the reward [reward].
    shortest : float
        The least time constant the data resolve [step]. The diagnosis passes half its
        smoothing window, the scale it reads levels on: the fall then spreads over two windows
        or more (2% of it left after two), where a crash ends within one.

    Returns
    -------
    float
        ``tau`` [step], or NaN where the fall is not one relaxation within the noise, is faster
        than ``shortest``, or the run holds fewer than 12 finite points or one distinct step.
    """
    from scipy.stats import f as f_law

    finite = np.isfinite(r)
    t, y = steps[finite] - steps[finite][0], r[finite]
    m, gaps = y.size, np.diff(t)
    if m < 12 or not noise > 0 or not np.any(gaps > 0):
        return float("nan")
    line = np.polynomial.polynomial.polyfit(t, y, 1)
    sse_line = float(np.sum((y - np.polynomial.polynomial.polyval(t, line)) ** 2))
    sse, tau = np.inf, float("nan")
    for trial in np.geomspace(float(np.median(gaps[gaps > 0])), 10 * float(t[-1]), 60):
        basis = np.column_stack([np.ones(m), np.exp(-t / trial)])
        coef, *_ = np.linalg.lstsq(basis, y, rcond=None)
        trial_sse = float(np.sum((y - basis @ coef) ** 2))
        if coef[1] > 0 and trial_sse < sse:
            sse, tau = trial_sse, float(trial)
    variance = sse / (m - 3)
    slows = variance > 0 and (sse_line - sse) / variance > f_law.isf(ALPHA, 1, m - 3)
    within = variance <= noise**2 * (1 + 3 * np.sqrt(2 / (m - 3)))
    return tau if slows and within and tau >= shortest else float("nan")


def _relaxation_words(tau: float) -> str:
    """Say that a fall from the first steps is a relaxation (time constant ``tau`` steps)."""
    return (f", from the first steps on, along one exponential relaxation (time constant "
            f"{tau:.3g} steps) within the noise: fastest at the start and slowing, as a stable "
            "map settles to a lower level, where an instability's fall grows (no growth of the "
            "KL or the entropy in the log to say more), so it does not count")


def _cycle_words(cycle: dict, span: float, sustained: Cycle | None = None,
                 searched_from: float | None = None) -> str:
    """Say what the AR(2) of the fluctuations found, and why its poles count or not.

    The period is in steps (``cycle["period"]``); one longer than the run's ``span`` (steps)
    is not measured by it, and is said so instead of as a number.

    A radius above 1 is a fit that is not stationary: it would grow without bound, which
    fluctuations held around a moving trend cannot do. It counts (at the top score) only as
    the limit cycle test reads any pole: complex and beyond the noise (F test at ``ALPHA``);
    otherwise the words say which of the two it lacks, rather than present it as a stable pole.
    Real poles beside a ``sustained`` cycle are its lags' blindness, not the absence of an
    oscillation: at lags of 3-8 points a cycle of many more bends the autocovariances too little.
    Complex poles beyond the noise that do not count, at a period of ``searched_from`` steps or
    more where the run was searched for a sustained cycle and none was found, are one swing or
    a fall that the trend bent (a step down reads as a period of about one trend window), not
    an oscillation, and the words say so.
    """
    radius, p_words = cycle["radius"], _p_words(cycle["p_value"])
    oscillatory = bool(np.isfinite(cycle["period"]))
    period = cycle["period"]
    kind = ("real poles: no oscillation" if not oscillatory and sustained is None else
            "real poles: its lags of 3-8 points do not resolve a cycle of "
            f"{sustained.period:.3g} steps" if not oscillatory else
            f"complex poles, period {period:.3g} steps, but no cycle persists over the run: "
            "one swing, or a fall the trend bent" if searched_from is not None
            and searched_from <= period <= span and cycle["score"] < FLAG_SCORE
            and cycle["p_value"] < ALPHA else
            f"oscillatory, period {period:.3g} steps" if period <= span else
            f"oscillatory, its period beyond the run's {span:g} steps: not measured")
    fit = f"explains {cycle['r2']:.0%} of their variance ({p_words} against white noise)"
    words = f"AR(2) of the fluctuations around the trend: pole radius {radius:.3f} ({kind})"
    if radius <= 1:
        counted = cycle["score"] >= FLAG_SCORE
        return f"{words}, {fit}" + (": a limit cycle, the map's poles at the unit circle"
                                    if counted else "")
    words += (", outside the unit circle: the fit is not stationary, it would grow without "
              "bound, which fluctuations held around a trend cannot do")
    if cycle["score"] >= FLAG_SCORE:
        return (f"{words}; it {fit}: a limit cycle, the map's poles beyond the unit circle, "
                "held by the nonlinearity")
    if cycle["p_value"] >= ALPHA:
        return (f"{words}; it {fit}, not beyond the noise at the false-alarm rate {ALPHA:g}: "
                "the poles are not resolved and do not count")
    return (f"{words}; it {fit}, but its poles are real: a slow drift the trend did not "
            "remove, not an oscillation, so they do not count")


def _level_words(steps: np.ndarray, best: int, window: int, state_peak: float | None) -> str:
    """Say which points the best centred moving mean averages, and how it relates to the state.

    At the ends of the run the centred window is cut short: fewer points, a noisier mean, which
    is why its best can sit at the start where the state's full windows put the peak later.
    """
    n = steps.size
    lo, hi = max(0, best - window // 2), min(n - 1, best + (window - 1) // 2)
    words = f"the moving mean over steps {steps[lo]:g}-{steps[hi]:g}"
    if hi - lo + 1 < window:
        end = "start" if lo == 0 else "end"
        words += f", its {window}-point window cut short to {hi - lo + 1} by the run's {end}"
    else:
        words += f", {window} points"
    # a state's peak within half a window of this best is the same place, read another way
    if state_peak is not None and abs(int(np.searchsorted(steps, state_peak)) - best) > window // 2:
        words += f"; the state's peak near step {state_peak:g} is another measure, on full windows"
    return words


def _p_words(p: float) -> str:
    """Say a p-value to two figures, or below 1e-6 as such (more digits mean nothing there)."""
    return "p < 1e-06" if p < 1e-6 else f"p = {p:.2g}"


def _ratio_words(ratio: float) -> str:
    """Say a variance ratio to two figures, or below 0.01 as such.

    The round-off of a flat reward gives ratios like 1e-27, which mean nothing.
    """
    return "<0.01" if ratio < 0.01 else f"{ratio:.2g}"
