"""Early warning of a collapse: the precursors of instability at the last logged steps.

A warning, not a verdict: it says that the run's last steps show what precedes a collapse in
the theory, and which precursor fired. Causal: it reads only the steps it is given (``grpodyn
diagnose LOG --until STEP`` cuts the log with :func:`prefix`). :func:`early_warning` reads the
last steps; :func:`standing_warning` the warning standing at the last step, one that fired at an
earlier step included (the precursors often fall silent once the collapse they announce has
begun; a warning found at consecutive steps is one, dated by its first onset), as
:class:`grpodyn.empirical.monitor.Monitor` holds it. The precursors:

- ``critical_slowing_down``: as a pole of the mean-field map approaches the unit circle
  (docs/theory.md sections 5-6) the reward's fluctuations around its trend decay more slowly and
  grow: their lag-1 autocorrelation and variance rise together. Measured as ewstools does, by
  the Kendall tau of the rolling lag-1 autocorrelation and of the rolling variance against
  time (rolling window half the run, fluctuations around a moving mean of a fifth of it, as
  ewstools' defaults; for a success rate the fluctuations are scaled by sqrt(r (1 - r)), the
  binomial sampling noise, so that a reward moving towards 0.5 does not read as a rising
  variance). Fires when both taus reach :data:`TAU`;
- ``entropy_rise``: the entropy leaves its trend upwards (the temperature rises: the updates
  throw the policy off, section 10's divergence);
- ``kl_rise``: the KL to the reference leaves its trend upwards (the policy runs away);
- ``length_departure``: the mean completion length leaves its trend (towards the length cap,
  or into degenerate short answers);
- ``clipped_rise``: the share of completions truncated at the length cap (TRL
  ``completions/clipped_ratio``, verl ``response_length/clip_ratio``: the canonical
  ``clipped_share``) leaves its trend upwards;
- ``cap_approach``: where the log has no truncated share but the cap is known
  (``run.meta.length_cap``: TRL ``max_completion_length``, verl ``data.max_response_length``),
  the mean completion length is above its trend and within :data:`RELATIVE` of its level below
  the cap: one more move the length test counts as material reaches the cap;
- ``zero_std_rise``: the share of groups without reward spread leaves its trend upwards (the
  drift factor 1 - p^G - (1-p)^G collapses, section 7).

"Leaves its trend" is one test for every metric: the value at a step against the straight line
fitted to the :func:`trend_window` logged points before it, beyond :data:`Z` robust standard
deviations of that line's residuals (1.4826 MAD) and beyond a share of the level
(:data:`RELATIVE`) that makes the move matter. A runaway that grows smoothly over tens of steps
keeps pace with such a line (it steepens as the window takes in the rise), so the entropy and
the KL also rise when they stay, over the last :data:`HOLD` steps, at least :data:`GROWTH`
times the median of the window before those steps and beyond :data:`Z` robust standard
deviations of it, at the onset of such a rise: a sustained rise, not one spike, read once the
run has a window behind its first (the KL's growth from zero at the start is no runaway).

A warning needs :data:`COINCIDE` distinct precursors within the last :data:`HOLD` logged steps
(critical slowing down, two statistics rising together, counts as one), with the exceptions of
:data:`ALONE`, the precursors of completions reaching the length cap, which warn on their own:
the mean completion length leaving its trend upwards, the truncated share leaving its trend
upwards, and the length's rise to within reach of the cap. Completions running into the length
cap are truncated and score nothing, so completions reaching the cap are the collapse's own
mechanism, not one of its symptoms (the truncated share reads it directly, the length and the
cap indirectly); the length is also the only precursor a log with the reward and the length
alone can show before the rolling statistics have points to rank (:data:`MIN_POINTS` against
40), and a fall within the first steps leaves no time for a second one. The same test and
thresholds as every other precursor; the exceptions' cost in false warnings is measured in
``studies/diagnosis/README.md``. Needs numpy and scipy.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from grpodyn.empirical.diagnostics.series import is_success_rate, smooth, trend_tau
from grpodyn.empirical.logs.loaders import Run
from grpodyn.ground import InputError

__all__ = ["SIGNALS", "MIN_POINTS", "Z", "TAU", "HOLD", "COINCIDE", "ALONE", "RELATIVE",
           "GROWTH", "EarlyWarning",
           "early_warning", "standing_warning", "warning_at_cut",
           "prefix", "trend_window", "remedy"]

SIGNALS = ("critical_slowing_down", "entropy_rise", "kl_rise", "length_departure",
           "clipped_rise", "cap_approach", "zero_std_rise")
#: robust standard deviations of the trend's residuals a step must leave the trend by
Z = 4.0
#: the least move that matters, as a share of the trend's level (the shares of the batch,
#: zero-std and truncated: absolute)
RELATIVE = {"entropy": 0.25, "kl": 1.0, "completion_length": 0.25, "frac_reward_zero_std": 0.1,
            "clipped_share": 0.1}
_SHARES = ("frac_reward_zero_std", "clipped_share")
#: the least sustained rise over the level before, 1 + 2 RELATIVE: the entropy by half again,
#: the KL threefold (twice the move the trend test asks, beyond the level itself)
GROWTH = {name: 1.0 + 2.0 * RELATIVE[name] for name in ("entropy", "kl")}
#: Kendall tau both rolling statistics must reach for critical slowing down
TAU = 0.8
#: the warning covers this many last logged steps
HOLD = 3
#: distinct precursors that must fire within the last HOLD steps: an instability moves the
#: policy, so its temperature, its distance to the reference and its answers' length move
#: together, while one metric alone leaves its trend by chance far more often
COINCIDE = 2
#: the precursors that warn on their own, each with the direction it must move in: completions
#: reaching the length cap (truncated completions score nothing: the collapse's mechanism)
ALONE = {"length_departure": "rose above", "clipped_rise": "rose above",
         "cap_approach": "rose above"}
#: fewer logged points: no trend to leave (the shortest trend window)
MIN_POINTS = 10
_CSD_POINTS = 40  # fewer: no rolling statistics to rank


@dataclass(frozen=True)
class EarlyWarning:
    """The step by which precursors coincided, which fired, and the evidence of each."""

    step: float
    signals: tuple[str, ...]
    evidence: dict[str, str] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """Return ``{"step", "signals", "evidence", "remedy"}`` as JSON types."""
        return {"step": self.step, "signals": list(self.signals), "evidence": dict(self.evidence),
                "remedy": remedy(self.signals)}


def remedy(signals: Sequence[str]) -> str:
    """Say what to try when the precursors of a collapse fire (a warning, not a verdict)."""
    words = ["keep a checkpoint from before this step and watch the next ones; if the reward "
             "falls, lower the lr (grpodyn advise --log LOG says how far)"]
    if {"clipped_rise", "cap_approach"} & set(signals):
        words.append("completions reach the length cap: raise the cap or penalise length")
    if "zero_std_rise" in signals:
        words.append("groups lose their spread: raise G or drop prompts every completion "
                     "solves or fails")
    return "; ".join(words)


def trend_window(n: int) -> int:
    """Return the number of steps a step is compared against: n / 5, between 10 and 50."""
    return int(min(50, max(10, n // 5)))


def prefix(run: Run, until: float) -> Run:
    """Return the run cut to its steps up to ``until`` (inclusive): its series as logged then.

    The series are cut; the settings (``run.meta``: lr, G, B, the length cap) are kept whole,
    since a run has them from its start. Where the loader inferred them from the whole log's
    metrics (the peak of a logged lr, G and B by the rewards' granularity), that reading looks
    ahead of ``until``; a Monitor is given them.

    Raises
    ------
    InputError
        When no logged step is at or before ``until``.
    """
    keep = run.steps <= until
    if not keep.any():
        raise InputError(f"{run.source}: --until {until:g}: the log starts at step "
                         f"{run.steps[0]:g}; no step is at or before it")
    return replace(run, steps=run.steps[keep], reward=run.reward[keep],
                   metrics={k: v[keep] for k, v in run.metrics.items()})


def _median(x: np.ndarray) -> float:
    """Return the median of a non-empty 1-d array of finite values, as ``np.median`` gives it.

    The precursors take medians of windows of 10-50 points at every step of every prefix read;
    ``np.median``'s generality costs several times the sort itself there. One sort; the
    callers pass finite values only (at least 5).
    """
    v = np.sort(x)
    half = v.size // 2
    return float(v[half]) if v.size % 2 else float((v[half - 1] + v[half]) / 2)


def _robust_sd(x: np.ndarray) -> float:
    """Return the robust standard deviation of ``x``: 1.4826 times its median absolute deviation."""
    return 1.4826 * _median(np.abs(x - _median(x)))


def _line(x: np.ndarray, y: np.ndarray) -> tuple[float, float]:
    """Return the least-squares line's (slope, intercept) through the points (x, y).

    The closed form on centred sums, as ``np.polyfit(x, y, 1)`` gives it (to rounding), without
    its least-squares solver's cost on a window of a few points.
    """
    xm, ym = x.mean(), y.mean()
    dx = x - xm
    slope = float(dx @ (y - ym) / (dx @ dx))
    return slope, float(ym - slope * xm)


def _departure(values: np.ndarray, t: int, window: int) -> tuple[float, float, float, int]:
    """Return (value, trend prediction, robust s.d., points) of ``values[t]`` against its trend.

    The trend is the least-squares line through the finite values of the ``window`` steps
    before t (fewer at the run's start), ``points`` of them; NaN when t or fewer than half the
    window (and than 5) are not finite.
    """
    nan = (float("nan"),) * 3 + (0,)
    x = values[t]
    past = values[max(0, t - window): t]
    at = np.flatnonzero(np.isfinite(past))
    if not np.isfinite(x) or at.size < max(5, window // 2):
        return nan
    slope, intercept = _line(at.astype(float), past[at])
    resid = past[at] - (slope * at + intercept)
    sigma = _robust_sd(resid)
    pred = float(slope * (t - max(0, t - window)) + intercept)
    return float(x), pred, sigma, int(at.size)


def _risen(values: np.ndarray, start: int, t: int, window: int, name: str
           ) -> tuple[float, float, float] | None:
    """Return (least value, level, robust s.d.) where values[start:t+1] stay GROWTH above."""
    block, past = values[start: t + 1], values[start - window: start]
    past = past[np.isfinite(past)]
    if not np.all(np.isfinite(block)) or past.size < max(5, window // 2):
        return None
    level, sigma = _median(past), _robust_sd(past)
    low = float(block.min())
    if not (level > 0 and low >= GROWTH[name] * level and low - level > Z * sigma):
        return None
    return low, level, sigma


def _sustained_rise(values: np.ndarray, steps: np.ndarray, t: int, window: int, name: str
                    ) -> str | None:
    """Return the evidence of ``name`` staying :data:`GROWTH` times above its level, or None.

    Over the last :data:`HOLD` values up to index t, every one at least GROWTH times the median
    of the ``window`` values before them and beyond :data:`Z` robust s.d. (1.4826 MAD) of that
    median, where the HOLD values before them had not risen so (the onset: a metric that stays
    high does not fire again at every step, which would move a standing warning's step on);
    read only where those windows start one window after the run's first point.
    """
    start = t - HOLD + 1
    if start - HOLD < 2 * window:
        return None
    risen = _risen(values, start, t, window, name)
    if risen is None or _risen(values, start - HOLD, t - HOLD, window, name) is not None:
        return None  # not risen, or risen before: its onset was read then
    low, level, sigma = risen
    return (f"{name} stayed at or above {low:.4g} over steps {steps[start]:g}-{steps[t]:g}, "
            f"x{low / level:.3g} its median {level:.4g} over the {window} logged points "
            f"before, beyond x{GROWTH[name]:g} and {Z:g} robust s.d. "
            f"({sigma:.3g}): a sustained rise that a trend line through those points keeps "
            "pace with")


def _metric_signals(run: Run, t: int, window: int) -> dict[str, tuple[str, str]]:
    """Evaluate the trend-departure precursors at index ``t``: signal -> (evidence, direction).

    The direction is "rose above" or "fell below" (its trend).
    """
    fired = {}
    step = run.steps[t]
    for name, signal in (("entropy", "entropy_rise"), ("kl", "kl_rise"),
                         ("completion_length", "length_departure"),
                         ("clipped_share", "clipped_rise"),
                         ("frac_reward_zero_std", "zero_std_rise")):
        values = run.metrics.get(name)
        if values is None:
            continue
        x, pred, sigma, points = _departure(values, t, window)
        if not np.isfinite(x):
            continue
        level = abs(pred) if name not in _SHARES else 1.0
        move = x - pred
        need = max(Z * sigma, RELATIVE[name] * level)
        two_sided = name == "completion_length"
        if name in GROWTH and not move > need:
            growth = _sustained_rise(values, run.steps, t, window, name)
            if growth is not None:
                fired[signal] = (growth, "rose above")
            continue
        if move > need or (two_sided and -move > need):
            where = "rose above" if move > 0 else "fell below"
            fired[signal] = (f"{name} {x:.4g} at step {step:g} {where} its trend "
                             f"{pred:.4g} (from the {points} logged points before) by "
                             f"{abs(move):.3g}, "
                             f"beyond {Z:g} robust s.d. ({sigma:.3g}) and {RELATIVE[name]:.0%} "
                             f"of {'one' if level == 1.0 else 'its level'}"
                             + (": completions truncated at the length cap score nothing"
                                if signal == "clipped_rise" else ""), where)
    approach = _cap_approach(run, t, window)
    if approach is not None:
        fired["cap_approach"] = (approach, "rose above")
    return fired


def _cap_approach(run: Run, t: int, window: int) -> str | None:
    """Return the evidence of the mean length rising to within reach of the cap at ``t``, or None.

    Read only where the cap is known and the truncated share is not logged (the share reads the
    same mechanism directly): the length x is above its trend's prediction (rising, not falling
    back) and within :data:`RELATIVE` of its level below the cap, cap - x < 0.25 x. The cap,
    not the trend's noise, is the reference: a length that ran into the cap and back leaves
    residuals that hide its next surge from a test against the trend.
    """
    cap = run.meta.value("length_cap")
    length = run.metrics.get("completion_length")
    if cap is None or length is None or "clipped_share" in run.metrics or cap <= 0:
        return None
    x, pred, _, _ = _departure(length, t, window)
    share = RELATIVE["completion_length"]
    if not (np.isfinite(x) and x > pred and cap - x < share * x):
        return None
    return (f"completion_length {x:.4g} at step {run.steps[t]:g} rose above its trend "
            f"{pred:.4g} (from the {window} logged points before) to within {share:.0%} of its "
            f"level below the length cap {cap:g} ({run.meta.length_cap.evidence}): completions "
            "truncated at the cap score nothing")


def _rolling(x: np.ndarray, width: int) -> tuple[np.ndarray, np.ndarray]:
    """Return the rolling variance and lag-1 autocorrelation over windows of ``width``."""
    def sums(v: np.ndarray) -> np.ndarray:
        total = np.concatenate([[0.0], np.cumsum(v)])
        return total[width:] - total[:-width]

    mean = sums(x) / width
    var = sums(x * x) / width - mean**2
    lead, lag = x[1:], x[:-1]
    w = width - 1
    total = lambda v: (np.concatenate([[0.0], np.cumsum(v)])[w:]  # noqa: E731
                       - np.concatenate([[0.0], np.cumsum(v)])[:-w])
    m1, m0 = total(lead) / w, total(lag) / w
    cov = total(lead * lag) / w - m1 * m0
    v1 = total(lead * lead) / w - m1**2
    v0 = total(lag * lag) / w - m0**2
    with np.errstate(invalid="ignore", divide="ignore"):
        ac = cov / np.sqrt(v1 * v0)
    return var, ac


def _slowing_down(run: Run) -> str | None:
    """Return the evidence of critical slowing down over the run, or None."""
    finite = np.isfinite(run.reward)
    r = run.reward[finite]
    n = r.size
    if n < _CSD_POINTS:
        return None
    level = smooth(r, max(5, n // 5))
    x = r - level
    if is_success_rate(run):
        x = x / np.sqrt(np.clip(level * (1 - level), 0.01, None))
    width = max(10, n // 2)
    var, ac = _rolling(x, width)
    ok = np.isfinite(var) & np.isfinite(ac)
    if ok.sum() < 10:
        return None
    tau_var, tau_ac = trend_tau(var[ok]), trend_tau(ac[ok])
    if tau_var >= TAU and tau_ac >= TAU:
        return (f"over rolling windows of {width} steps the reward's fluctuations grew in "
                f"variance (Kendall tau {tau_var:.2f}) and in lag-1 autocorrelation (tau "
                f"{tau_ac:.2f}, last {ac[ok][-1]:.2f}): the map's pole approaches the unit "
                "circle")
    return None


def _check_run(run: Any, function: str) -> None:
    """Refuse anything but a loaded run (a path is loaded by ``grpodyn.load_run``)."""
    if not isinstance(run, Run):
        raise InputError(f"{function}(): run must be a Run (grpodyn.load_run(path)), got "
                         f"{type(run).__name__} {run!r:.40}")


def early_warning(run: Run) -> EarlyWarning | None:
    """Look for the precursors of a collapse at the last :data:`HOLD` logged steps.

    Parameters
    ----------
    run : Run
        The log as known so far (cut with :func:`prefix` for a step in the past).

    Returns
    -------
    EarlyWarning or None
        The first of the last :data:`HOLD` steps by which :data:`COINCIDE` distinct
        precursors fired (or one of :data:`ALONE` fired in its direction), every precursor
        that fired over those steps, and each one's evidence; None otherwise (or when the run
        has fewer than :data:`MIN_POINTS`).
    """
    _check_run(run, "early_warning")
    n = run.n_points
    if n < MIN_POINTS:
        return None
    window = trend_window(n)
    evidence: dict[str, str] = {}
    slowing = _slowing_down(run)
    if slowing is not None:
        evidence["critical_slowing_down"] = slowing
    first, alone = None, False
    for t in range(max(window // 2, n - HOLD), n):
        fired = _metric_signals(run, t, window)
        for signal, (words, where) in fired.items():
            if ALONE.get(signal) == where and not alone:
                alone, evidence[signal] = True, words
            evidence.setdefault(signal, words)
        if first is None and (len(evidence) >= COINCIDE or alone):
            first = float(run.steps[t])
    if first is None:
        return None
    signals = tuple(s for s in SIGNALS if s in evidence)
    return EarlyWarning(first, signals, {s: evidence[s] for s in signals})


def reviews(flagged: bool, state: str, run: Run | None = None) -> bool:
    """Return whether a diagnosis carries a verdict that reviews a standing warning.

    A flagged mode carries one, and so does a state read from the reward's trend (learning,
    converged, not learning), but not a decline that no mode explains: the warning that fired
    before it may be the one account of that fall, so it stands. A run too short to read the
    state (``too_short``) carries one where its modes were judged (``run`` given) and its
    reward did not fall across its thirds (:func:`~grpodyn.empirical.logs.trend.run_trend`,
    the thirds' test of the advice, before it reads a settled fall as an overshoot); otherwise
    the warning stands.

    Parameters
    ----------
    flagged : bool
        Whether the diagnosis flags a mode.
    state : str
        The diagnosis's state (``Diagnosis.state``).
    run : Run, optional
        The run diagnosed, given where the diagnosis judged its modes (from
        ``diagnose.MODE_POINTS`` points on), for the trend of a run too short for the state.
    """
    if flagged:
        return True
    if state == "too_short":
        from grpodyn.empirical.logs.trend import run_trend

        if run is None:
            return False
        finite = np.isfinite(run.reward)
        return run_trend(run.steps[finite], run.reward[finite]).kind != "fell"
    return state != "declining"


def standing_warning(run: Run, *, reviewed: bool = False) -> EarlyWarning | None:
    """Return the early warning standing at the run's last step, as a monitor fed its steps has it.

    The precursors often fall silent once the collapse they announce has begun, so a warning
    that fired at an earlier step stands. A warning found at consecutive prefixes of the run
    (from :data:`MIN_POINTS` points on) is one episode, dated by its first onset and with the
    evidence of the first prefix that found it (as the precursors go on firing, each prefix
    finds its onset among its own last :data:`HOLD` steps, later and later); the latest
    episode's stands. A diagnosis that carries a verdict at the last step (:func:`reviews`: a
    flagged mode, or the reward's trend read, but a decline no mode explains) reviews the run:
    then only a warning at the last steps stands, the diagnosis's flags carry the rest. This is
    the rule of :class:`grpodyn.empirical.monitor.Monitor`, whose state at a diagnosis is what
    this returns for the steps it was fed.

    Parameters
    ----------
    run : Run
        The log as known so far (cut with :func:`prefix` for a step in the past).
    reviewed : bool
        Whether a diagnosis that carries a verdict reviews the run at its last step.

    Returns
    -------
    EarlyWarning or None
        The standing warning; None when none fired, or when ``reviewed`` and none fires at
        the last steps.

    Notes
    -----
    One :func:`early_warning` per prefix replayed: back over the episode when one fires at the
    last steps, every prefix otherwise unless ``reviewed``; the cost of that replay grows with
    the square of the run's length.
    """
    _check_run(run, "standing_warning")
    fresh = early_warning(run)
    if fresh is None and reviewed:
        return None
    if fresh is not None:
        first = fresh
        for k in range(run.n_points - 1, MIN_POINTS - 1, -1):  # back over the episode
            found = early_warning(prefix(run, float(run.steps[k - 1])))
            if found is None:
                break
            first = found
        return first
    standing, previous = None, None
    for k in range(MIN_POINTS, run.n_points):
        found = early_warning(prefix(run, float(run.steps[k - 1])))
        if found is not None and previous is None:  # a new episode
            standing = found
        previous = found
    return standing


def warning_at_cut(run: Run, cut: float) -> dict[str, Any] | None:
    """Return the early warning at a forecast's cut: the warning's JSON and a ``note``.

    A forecast reads the level and the trend, not the precursors of a collapse
    (docs/theory.md section 10); where they fired in the last steps before the cut
    (:func:`early_warning` of the run's :func:`prefix` up to ``cut``), the forecast says so.

    Parameters
    ----------
    run : Run
        The whole log.
    cut : float
        The last step the forecast was fitted on.

    Returns
    -------
    dict or None
        ``{"step", "signals", "evidence", "remedy", "note"}`` (the warning as ``diagnose``
        gives it, and the sentence a forecast says), or None when no precursor fired by the
        cut.
    """
    warning = early_warning(prefix(run, cut))
    if warning is None:
        return None
    return {**warning.to_dict(),
            "note": f"the early warning fired at step {warning.step:g} by the cut at step "
                    f"{cut:g} ({', '.join(warning.signals)}): a collapse may follow, which a "
                    f"forecast of the level and trend does not see (grpodyn diagnose LOG "
                    f"--until {cut:g})"}
