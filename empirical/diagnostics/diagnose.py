"""Tell the four failure modes of GRPO apart from a training log (THEORY.md section 10).

A reward curve alone conflates them; the mean-field theory gives each a signature that the
other metrics of a log can test:

- reward hacking: the optimised reward rises while the true (held-out or verifier) reward does
  not follow. Measured by the coupling ratio Delta r_heldout / Delta r_train.
- advantage degeneracy: the drift factor 1 - p^G - (1-p)^G goes to 0 before the reward reaches
  its plateau, so the stiffness collapses. Measured by the share of zero-std groups (or, when the
  log lacks it, its prediction from the reward level and G) while the reward is still short of
  its ceiling and no longer rising.
- policy concentration: p(1-p) and the entropy go to 0, the noise temperature vanishes.
  Measured by the entropy's fall to its lowest level in the run and the collapse of the group
  reward spread beyond what p^G + (1-p)^G predicts for an unconcentrated policy.
- dynamical instability: the effective damping c_eff <= 0 or the stiffness beyond the limits of
  section 5: growing oscillation, divergence, collapse. Measured by the AR(2) roots of the
  reward's fluctuations (the discrete map's poles), the growth of their amplitude, a collapse of
  the reward from its best level, and a runaway KL.

Each mode gets a score in [0, 1], a flag (score >= 0.5), evidence in words with the steps where
it shows, or ``judged = False`` with the reason when the log lacks what the mode needs.

Prompts differ (revision 5, issue 17): the zero-std share is the pool average of
p^G + (1-p)^G, so degeneracy and concentration read the Beta law of the prompts' success rates
(:mod:`grpodyn.numerics.prompt_pool`) instead of that expression at the mean reward. G comes
from the caller or ``run.meta`` with its source. Besides the modes, a run has a state that is
not a failure: converged, learning, not_learning, declining (a fall beyond the noise, never
healthy) or too_short. Revision 6: the fall back from the best level is tested at a Bonferroni
threshold over the windows the best was picked from, against the noise at the window's scale;
revision 7: degeneracy also counts the drift lost over the whole run; revision 9: without a
zero-std share, an entropy fall that the reward's move explains (the kept-spread bound of
THEORY.md section 7) is decided, one beyond it abstains (docs/findings.md, 4b); revision 10:
verl's ``critic/advantages/{max,min}`` give the Beta law where the zero-std share is missing
(:func:`~grpodyn.numerics.prompt_pool.fit_prompt_pool_extremes`), so concentration is judged
there as on TRL's logs.
Needs numpy only.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from statistics import NormalDist

import numpy as np

from grpodyn.empirical.logs.loaders import Run
from grpodyn.ground import InputError, check_int
from grpodyn.numerics.compiled import compiled
from grpodyn.numerics.fit import estimate_noise
from grpodyn.numerics.prompt_pool import (
    PromptPool,
    drift_loss,
    entropy_ratio_bound,
    fit_prompt_pool,
    fit_prompt_pool_extremes,
)

__all__ = ["MODES", "STATES", "CEILING", "NEGLIGIBLE_RISE", "ModeVerdict", "Diagnosis",
           "diagnose", "threshold_rules"]

MODES = ("reward_hacking", "advantage_degeneracy", "policy_concentration",
         "dynamical_instability")
FLAG_SCORE = 0.5
#: a success rate this close to 1 has nothing left to learn: a policy locked there converged
CEILING = 0.97
#: the least change of a success rate that a mode reads from the reward: a smaller rise gives
#: the hacking test no progress to decouple (revision 4), so over a whole run it is "no mode
#: can be judged from the reward", issue 17's definition of not learning (revision 8)
NEGLIGIBLE_RISE = 0.03
_MIN_POINTS = 20
_SHORT = 40  # fewer logged points than this: too short to tell a plateau from a pause
_ALPHA = 0.0027  # false-alarm rate of each test of the state (a fall, no change), per run
#: what the reward did, whatever the modes say
STATES = ("converged", "learning", "not_learning", "declining", "too_short")
_G_BOUND = 2  # G unknown: the smallest group, the most zero-std groups a pool can leave
_CAUSAL_ORDER = ("dynamical_instability", "reward_hacking", "policy_concentration",
                 "advantage_degeneracy")


@dataclass(frozen=True)
class ModeVerdict:
    """One failure mode: its score in [0, 1], whether it is flagged, and why."""

    flag: bool
    score: float
    evidence: str
    judged: bool = True
    steps: tuple[float, float] | None = None  # where it shows (first, last step)
    #: the evidence at hand points to the mode, but the log lacks what would confirm or
    #: refute it: the diagnosis abstains (not a flag, not a clean bill)
    undecided: bool = False


@dataclass(frozen=True)
class Diagnosis:
    """Verdicts on the four modes and the primary one (None for a healthy run)."""

    modes: dict[str, ModeVerdict]
    primary: str | None
    source: str = ""
    notes: list[str] = field(default_factory=list)
    state: str = "learning"
    state_evidence: str = ""
    group_size: dict = field(default_factory=dict)  # value, source, evidence (value None)
    prompt_pool: dict = field(default_factory=dict)  # early and late Beta laws, when fitted

    def to_dict(self) -> dict:
        """Return the diagnosis as plain JSON types (the keys of ``grpodyn diagnose``)."""
        return {"source": self.source, "primary": self.primary, "state": self.state,
                "state_evidence": self.state_evidence, "group_size": self.group_size,
                "prompt_pool": self.prompt_pool, "notes": self.notes,
                "modes": {name: asdict(v) for name, v in self.modes.items()}}


def _window_sums(values: np.ndarray, window: int, mode: str) -> np.ndarray:
    """Sum ``window`` consecutive values as ``np.convolve(values, ones(window), mode)`` does.

    From one cumulative sum: linear in the length whatever the window.
    """
    n = values.size
    if window > n:  # numpy centres on the longer of the two: a window longer than the run
        return np.convolve(values, np.ones(window), mode)
    total = np.concatenate([[0.0], np.cumsum(values)])
    if mode == "valid":
        return total[window:] - total[: n - window + 1]
    centre = np.arange(n)
    lo = np.clip(centre - window // 2, 0, n)
    hi = np.clip(centre + (window - 1) // 2 + 1, 0, n)
    return total[hi] - total[lo]


def _smooth(y: np.ndarray, window: int, mode: str = "same") -> np.ndarray:
    """Average over a moving window, ignoring NaN (NaN where a window has no finite point).

    ``mode="same"``: centred, same length, the edges use the points they have;
    ``mode="valid"``: one mean per full window, ``len(y) - window + 1`` of them.
    """
    finite = np.isfinite(y)
    total = _window_sums(np.where(finite, y, 0.0), window, mode)
    count = np.rint(_window_sums(finite.astype(float), window, mode))
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(count > 0, total / np.maximum(count, 1), np.nan)


def _window_mean(y: np.ndarray, part: slice) -> float:
    chunk = y[part]
    chunk = chunk[np.isfinite(chunk)]
    return float(chunk.mean()) if chunk.size else float("nan")


def _lowest_window(y: np.ndarray, start: int, width: int) -> tuple[float, int]:
    """Find the lowest mean of ``width`` consecutive points from ``start`` on, and its start.

    Windows without a finite point are skipped (inf when every one lacks them).
    """
    means = np.nan_to_num(_smooth(y[start:], width, mode="valid"), nan=np.inf)
    at = int(np.argmin(means))
    return float(means[at]), start + at


def _segments(n: int) -> tuple[slice, slice, slice]:
    """Early (first 15%), late (last 25%) and middle of a run of n points."""
    early, late = max(3, n * 15 // 100), max(3, n // 4)
    return slice(0, early), slice(n - late, n), slice(early, n - late)


def _is_success_rate(run: Run) -> bool:
    """Rewards in [0, 1], read as a success rate p (the p^G + (1-p)^G predictions need it)."""
    return bool(np.nanmin(run.reward) >= 0 and np.nanmax(run.reward) <= 1)


def _unjudged(reason: str) -> ModeVerdict:
    return ModeVerdict(flag=False, score=0.0, evidence=reason, judged=False)


def _hacking(run: Run, early: slice, late: slice, noise: float) -> ModeVerdict:
    held = run.metrics.get("heldout_reward")
    if held is None or np.isfinite(held).sum() < 4:
        length = run.metrics.get("completion_length")
        hint = ""
        if length is not None and np.isfinite(length).sum() > 4:
            ratio = _window_mean(length, late) / max(_window_mean(length, early), 1e-12)
            if ratio > 1.5:
                hint = f" (completion length grew x{ratio:.2f}, which hacking often shows)"
        return _unjudged("no held-out or verifier reward in the log: the coupling of the "
                         "optimised reward to the true one cannot be measured" + hint)
    idx = np.flatnonzero(np.isfinite(held))
    train = _smooth(run.reward, max(5, run.n_points // 40))[idx]
    k = max(2, idx.size // 8)
    gain_train = float(np.mean(train[-k:]) - np.mean(train[:k]))
    gain_held = float(np.mean(held[idx[-k:]]) - np.mean(held[idx[:k]]))
    spread = 2 * noise * np.sqrt(2.0 / k)
    steps = (float(run.steps[idx[0]]), float(run.steps[idx[-1]]))
    if gain_train <= max(spread, NEGLIGIBLE_RISE):
        return ModeVerdict(False, 0.0, f"the optimised reward did not rise (gain "
                           f"{gain_train:+.3f}): no progress to decouple", True, steps)
    # coupling: regression slope of the held-out on the (smoothed) optimised reward
    centred = train - train.mean()
    coupling = float(centred @ (held[idx] - held[idx].mean()) / (centred @ centred))
    score = float(np.clip(1.0 - coupling, 0.0, 1.0))
    return ModeVerdict(score >= FLAG_SCORE, score,
                       f"optimised reward {gain_train:+.3f}, held-out {gain_held:+.3f} between "
                       f"steps {steps[0]:g} and {steps[1]:g}: coupling ratio {coupling:.2f} "
                       "(1 when the true reward follows)", True, steps)


def _fit_pool(run: Run, part: slice, group_size: int) -> PromptPool | None:
    """Fit the Beta law of the prompts over the steps of ``part`` (None without the metrics)."""
    frac = run.metrics.get("frac_reward_zero_std")
    if frac is None or not _is_success_rate(run):
        return None
    both = np.isfinite(frac[part]) & np.isfinite(run.reward[part])
    if both.sum() < 2:
        return None
    return fit_prompt_pool(run.reward[part], frac[part], group_size=group_size)


def _fit_pool_extremes(run: Run, part: slice, group_size: int | None) -> PromptPool | None:
    """Fit the Beta law from verl's advantage extremes over ``part`` (revision 10).

    Needs G (declared, read or given: the extremes are decoded at the true G, never at a
    bound), B, rewards that are a success rate, and ``critic/advantages/{max,min}``; None
    otherwise, or when too few steps decode as binary GRPO groups.
    """
    hi, lo = run.metrics.get("advantage_max"), run.metrics.get("advantage_min")
    batch = run.meta.batch.value if run.meta.batch is not None else None
    if (hi is None or lo is None or group_size is None or not isinstance(batch, int)
            or batch < 1 or not _is_success_rate(run)):
        return None
    return fit_prompt_pool_extremes(run.reward[part], hi[part], lo[part],
                                    group_size=group_size, batch=batch)


def _pool(run: Run, part: slice, group_size: int | None) -> PromptPool | None:
    """Fit the Beta law over ``part``: from the zero-std share, else the advantage extremes."""
    return (_fit_pool(run, part, group_size or _G_BOUND)
            or _fit_pool_extremes(run, part, group_size))


def _drift_lost_over_run(run: Run, phi: float, group_size: int) -> float:
    """Share of the drift that groups of G lost over the whole run (THEORY.md section 7).

    The drift lost at each level the reward passed through (the means of disjoint windows of
    max(10, n/10) points below the ceiling, under a Beta pool of concentration ``phi``),
    weighted by the large-G drift sqrt(r (1 - r)) that level could carry: a run that spent its
    first steps near the floor with a small G lost most of its learning signal there, even if
    it escaped later.
    """
    window = max(10, run.n_points // 10)
    levels = _smooth(run.reward, window, mode="valid")[::window]
    levels = levels[np.isfinite(levels) & (levels > 0) & (levels < CEILING)]
    if not levels.size:
        return 0.0
    weights = np.sqrt(levels * (1 - levels))
    lost = np.array([drift_loss(m, phi, group_size) for m in levels])
    return float(np.sum(weights * lost) / np.sum(weights))


def _degeneracy(run: Run, late: slice, group_size: int | None) -> ModeVerdict:
    frac = run.metrics.get("frac_reward_zero_std")
    r_late = _window_mean(run.reward, late)
    logged = frac is not None and np.isfinite(frac[late]).any()
    if not logged:
        if group_size is None:
            return _unjudged("no frac_reward_zero_std in the log and no group size G to "
                             "predict it from the reward level")
        if not _is_success_rate(run):
            return _unjudged("no frac_reward_zero_std in the log, and rewards outside [0, 1] "
                             "are no success rate to predict it from")
        frac = compiled("degenerate_group_probability")(group_size, np.clip(run.reward, 0, 1))
    f_late = _window_mean(frac, late)
    idx = np.arange(run.n_points)[late]
    slope = np.polyfit(run.steps[idx], run.reward[idx], 1)[0] if idx.size > 2 else 0.0
    gain = slope * (run.steps[idx[-1]] - run.steps[idx[0]]) if idx.size > 2 else 0.0
    short_of_ceiling = r_late < CEILING or not _is_success_rate(run)
    steps = (float(run.steps[idx[0]]), float(run.steps[idx[-1]]))
    words = (f"zero-std groups {f_late:.2f} of the batch late in the run "
             f"({'logged' if logged else f'predicted from the reward at G = {group_size}'})")
    if group_size is not None and _is_success_rate(run):
        # the drift factor, averaged over the prompts: the share of the large-G drift
        # sqrt(p(1-p)) that groups of G lose, under the Beta law the late steps show
        pool = _fit_pool(run, late, group_size) if logged else None
        phi = pool.point_phi if pool is not None else np.inf
        lost = drift_loss(r_late, phi, group_size) if 0 < r_late < 1 else 1.0
        over_run = _drift_lost_over_run(run, phi, group_size)
        score = max(lost, over_run)
        law = (f"prompt pool Beta with mean {r_late:.2f}, phi {phi:.3g} ({pool.status})"
               if pool is not None else f"identical prompts at the reward {r_late:.2f}")
        words += (f"; {law}: groups of G = {group_size} lose {lost:.0%} of the "
                  f"drift a large group would carry late, {over_run:.0%} over the run")
    else:
        # without G, or without a success rate to set the Beta law, the share of groups
        # without spread is the drift factor itself
        score = float(f_late)
        why = ("G unknown; with G the share of the drift lost to the group size would be "
               "scored instead" if group_size is None else
               "rewards outside [0, 1]: no success rate to set the prompts' Beta law")
        words += f": only {1 - f_late:.0%} of the groups carry a gradient ({why})"
    words += f"; reward {r_late:.2f}, gain {gain:+.3f} over the last quarter"
    if not short_of_ceiling:
        score = 0.0
        words += " (at the ceiling: nothing left to learn, not a failure)"
    return ModeVerdict(score >= FLAG_SCORE, float(score), words, True, steps)


def _concentration(run: Run, early: slice, late: slice, group_size: int | None
                   ) -> ModeVerdict:
    entropy = run.metrics.get("entropy")
    if entropy is None or np.isfinite(entropy).sum() < 4:
        return _unjudged("no entropy in the log: the policy's temperature cannot be followed")
    e0, e1 = _window_mean(entropy, early), _window_mean(entropy, late)
    if not (np.isfinite(e0) and e0 > 0):
        return _unjudged("entropy at the start is not positive")
    # the temperature at its lowest, over a window as long as the late segment: a policy that
    # concentrated and then spread again (no KL holds it) still concentrated
    width = late.stop - late.start
    # the last window is the late segment itself
    low, low_at = _lowest_window(entropy, early.stop, width)
    ratio = max(low, 0.0) / e0
    # the share of the temperature lost: past the flag when the entropy halved (the threshold
    # monitoring tools use); below the ceiling the groups must confirm it (see below)
    score = float(np.clip(1 - ratio, 0.0, 1.0))
    low_steps = (run.steps[low_at], run.steps[min(low_at + width, run.n_points) - 1])
    span = (float(low_steps[0]), float(run.steps[-1]))  # where it shows
    words = (f"entropy {e0:.3g} -> {low:.3g} at its lowest (x{ratio:.2f}, steps "
             f"{low_steps[0]:g}-{low_steps[1]:g}), {e1:.3g} late in the run")
    cap = 0.45  # below the flag: entropy alone cannot tell concentration from learning
    r_late = _window_mean(run.reward, late)
    frac = run.metrics.get("frac_reward_zero_std")
    shared = frac is not None and np.isfinite(frac[late]).any()
    pool_early = _pool(run, early, group_size) if shared or frac is None else None
    pool_late = _pool(run, late, group_size) if pool_early is not None else None
    pointed = score >= FLAG_SCORE  # the entropy halved: what the temperature alone says
    if not _is_success_rate(run):
        score = min(score, cap)
        words += ("; rewards outside [0, 1]: no success rate to set the temperature "
                  "prediction, entropy alone cannot tell concentration from learning")
        return ModeVerdict(False, score, words, True, span, undecided=pointed)
    elif r_late >= CEILING:
        score = 0.0
        words += (f"; at the ceiling (reward {r_late:.2f}): the entropy fell as the prompts "
                  "got solved, which is convergence, not a failure")
    elif r_late <= 1 - CEILING:
        words += (f"; at the floor (reward {r_late:.2f}): the policy concentrated onto wrong "
                  "answers")
    elif pool_early is not None and pool_late is not None:
        # temperature prediction. The zero-std share of the late steps gives their Beta law
        # (or, in verl's metrics, the advantages' extremes: revision 10); its all-wrong groups
        # E[(1-p)^G], as a share of the failures left (1 - r), are the prompts the policy
        # locked onto wrong answers. A policy that keeps the spread across prompts of its
        # first steps (their phi, moved to the late mean) locks the share predicted below;
        # concentration locks far more, convergence (prompts locked onto right answers) does
        # not count. The score is the smaller of the entropy's fall and the share of the
        # failing prompts that should still explore but do not
        g_used = pool_late.group_size
        left = max(1 - r_late, 1e-12)
        predicted = min(pool_early.failed_share_at(r_late) / left, 1.0)
        locked = min(pool_late.failed_share_at(r_late) / left, 1.0)
        beyond = float(np.clip((locked - predicted) / max(1 - predicted, 1e-12), 0.0, 1.0))
        score = min(score, beyond)
        bound = "" if group_size else (f"; G unknown, judged at G = {_G_BOUND}, the smallest "
                                       "group (a larger G predicts fewer such groups and "
                                       "raises this share)")
        share = (f"zero-std groups {_window_mean(frac, late):.2f} late" if shared else
                 f"no zero-std share in the log; verl's advantage extremes give a Beta law "
                 f"that predicts zero-std groups {pool_late.observed_share:.2f} late")
        words += (f"; {share} (Beta phi "
                  f"{pool_late.point_phi:.3g}, {pool_late.status}) at G = {g_used}: "
                  f"{locked:.0%} of the failing prompts always fail, against {predicted:.0%} "
                  f"for the spread of the first steps (phi {pool_early.point_phi:.3g}) moved to "
                  f"the reward {r_late:.2f}: {beyond:.0%} of the failing prompts that should "
                  f"explore do not{bound}")
        words += (": the policy is deterministic on most prompts" if beyond >= FLAG_SCORE
                  else ": the groups still explore")
    else:
        # no zero-std share (verl's default metrics): the entropy against the reward
        # (revision 9). A pool that keeps the spread of its prompts' success rates while its
        # mean moves from r0 to the reward of the entropy's lowest window keeps at least the
        # share ``kept`` of its answer entropy (prompt_pool_entropy_ratio_bound): learning
        # lowers the entropy as prompts get solved. A fall within that bound is what the
        # reward explains: no sign of concentration. A fall beyond it points to prompts
        # locked beyond the reward's change, but a token entropy is not an answer entropy:
        # real runs that learn (the public ShibukiZero logs, rise 0.2 -> 0.6) lose 3-5x more
        # token entropy than the bound allows, so the diagnosis abstains there
        r0 = _window_mean(run.reward, early)
        r_low = _window_mean(run.reward, slice(low_at, low_at + width))
        kept = entropy_ratio_bound(r0, r_low)
        beyond = float(np.clip(1 - ratio / kept, 0.0, 1.0))
        words += (f"; no zero-std share in the log (verl's default metrics): the reward moved "
                  f"{r0:.2f} -> {r_low:.2f} over those steps, which explains an answer-entropy "
                  f"ratio of at least x{kept:.2f} for prompts that keep their spread (THEORY.md "
                  f"section 7); {beyond:.0%} of that entropy was lost beyond it")
        if beyond < FLAG_SCORE:
            score = min(score, beyond)
            words += ": a fall the move of the reward explains, no sign of concentration"
        else:
            score = min(score, cap)
            words += (": beyond what the reward explains, but a token entropy can fall faster "
                      "than the answers' (real runs that learn do), so without the zero-std "
                      "share the diagnosis cannot tell concentration from learning")
            return ModeVerdict(False, score, words, True, span, undecided=pointed)
    return ModeVerdict(score >= FLAG_SCORE, score, words, True, span)


def _z(alpha: float) -> float:
    """Return the standard normal quantile exceeded with probability ``alpha`` (one-sided)."""
    return NormalDist().inv_cdf(1.0 - alpha)


def _point_noise(r: np.ndarray, window: int, noise: float) -> float:
    """Estimate the reward's noise per point at the scale of ``window`` points.

    The point-to-point estimate ``noise`` (std of the differences over sqrt 2) holds for white
    noise; slow fluctuations of a stable run (a policy that wanders at a fixed distance from
    its reference) make means over a window vary more than it says. Their spread is read from
    consecutive disjoint window means: the median absolute second difference (blind to a
    linear trend, robust to one real fall; 0.6745 sqrt 6 times their s.e. for independent
    means), from six windows on. The larger of the two is used, expressed per point: a window
    mean has s.e. ``_point_noise / sqrt(window)``.
    """
    blocks = _smooth(r, window, mode="valid")[::window]
    blocks = blocks[np.isfinite(blocks)]
    if blocks.size < 6:
        return noise
    spread = float(np.median(np.abs(np.diff(blocks, 2)))) / (0.6745 * np.sqrt(6.0))
    return max(noise, spread * np.sqrt(window))


def _state(run: Run, early: slice, late: slice, noise: float) -> tuple[str, str]:
    """Name what the reward did: converged, learning, not_learning, declining or too_short.

    Every test runs at the false-alarm rate ``_ALPHA``. A fall back from the best level is
    tested against the run's noise at the scale of a window (:func:`_point_noise`: slow
    fluctuations count); that level is the best of the disjoint full windows before the late
    segment, so its threshold is the Bonferroni quantile over their number (the best of m
    noisy window means is biased upward). The start and the end (first 15%, last 25%) are
    compared against the point-to-point noise.
    """
    if run.n_points < _SHORT:
        return "too_short", f"{run.n_points} logged points (fewer than {_SHORT})"
    r = run.reward
    n_early, n_late = early.stop - early.start, late.stop - late.start
    r0, r1 = _window_mean(r, early), _window_mean(r, late)
    window = max(10, run.n_points // 10)
    sigma = _point_noise(r, window, noise)
    # the segments' comparison uses the point-to-point noise: the window-scale estimate also
    # grows with the bend of a learning curve, which would read a real rise as flat
    se = noise * np.sqrt(1.0 / n_early + 1.0 / n_late)
    # the best level: a full window (a level needs its window of points) ending before the
    # late segment starts
    means = _smooth(r[: late.start], window, mode="valid")
    where = f"steps {run.steps[0]:g}-{run.steps[-1]:g}"
    if means.size and np.isfinite(means).any():
        best = int(np.nanargmax(means))
        peak = float(means[best])
        chances = max(1, late.start // window)
        limit = _z(_ALPHA / chances) * sigma * np.sqrt(1.0 / window + 1.0 / n_late)
        drop = peak - r1
        if drop > limit:
            return "declining", (
                f"reward {r0:.3f} at the start, {peak:.3f} at its best (steps "
                f"{run.steps[best]:g}-{run.steps[best + window - 1]:g}), {r1:.3f} late: it "
                f"fell back {drop:.3f}, beyond the {limit:.3f} that noise (s.e. "
                f"{sigma / np.sqrt(window):.3f} per window mean) leaves to the best of "
                f"{chances} windows at a false-alarm rate of {_ALPHA:g}")
    if r1 < r0 - _z(_ALPHA) * se:
        return "declining", (f"reward {r0:.3f} -> {r1:.3f} over {where}: a fall beyond its "
                             f"noise (s.e. {se:.3f})")
    if abs(r1 - r0) <= _z(_ALPHA / 2) * se:
        return "not_learning", (f"reward {r0:.3f} -> {r1:.3f} over {where}, within "
                                f"{_z(_ALPHA / 2):.2f} s.e. ({se:.3f}) of no change: flat from "
                                "the start")
    if _is_success_rate(run) and abs(r1 - r0) <= NEGLIGIBLE_RISE:
        return "not_learning", (f"reward {r0:.3f} -> {r1:.3f} over {where}: beyond its noise "
                                f"(s.e. {se:.3f}) but within {NEGLIGIBLE_RISE} of no change, "
                                "less than any mode reads from the reward: flat in practice")
    idx = np.arange(run.n_points)[late]
    slope = np.polyfit(run.steps[idx], r[idx], 1)[0]
    late_gain = slope * (run.steps[idx[-1]] - run.steps[idx[0]])
    late_se = noise * np.sqrt(12.0 / n_late)  # s.e. of a fitted line's rise over the segment
    at_ceiling = _is_success_rate(run) and r1 >= CEILING
    if at_ceiling or abs(late_gain) <= 2 * late_se:
        return "converged", (f"reward {r0:.3f} -> {r1:.3f}; over the last quarter it moved "
                             f"{late_gain:+.3f} (noise {late_se:.3f}): at its plateau")
    return "learning", (f"reward {r0:.3f} -> {r1:.3f}, still rising {late_gain:+.3f} over the "
                        f"last quarter (noise {late_se:.3f})")


def _ar2_poles(x: np.ndarray) -> np.ndarray:
    """Poles of an AR(2) fitted by least squares (the discrete map's characteristic roots)."""
    design = np.column_stack([x[1:-1], x[:-2]])
    coef, *_ = np.linalg.lstsq(design, x[2:], rcond=None)
    return np.roots([1.0, -coef[0], -coef[1]])


def _instability(run: Run, early: slice, late: slice, noise: float) -> ModeVerdict:
    r = run.reward
    window = max(10, run.n_points // 10)
    smooth = _smooth(r, window)
    best = int(np.nanargmax(smooth))
    collapse = float(smooth[best] - _window_mean(smooth, late))
    # the best of many noisy window means is biased upward by a few of their s.e.
    significant = collapse > 5 * noise / np.sqrt(window)
    collapse_score = float(np.clip((collapse - 0.1) / 0.2, 0.0, 1.0)) \
        if best < run.n_points * 3 // 4 and significant else 0.0
    short, long_ = 5, max(25, run.n_points // 10)
    excess, radius, oscillating, excess_score = float("nan"), float("nan"), False, 0.0
    if run.n_points >= 4 * long_:  # an oscillation needs a trend to oscillate around
        slow = _smooth(r, short) - _smooth(r, long_)
        inner = slice(long_, run.n_points - long_)
        white = noise**2 * (1.0 / short - 1.0 / long_)  # its variance for trend + white noise
        excess = float(np.nanvar(slow[inner]) / white) if white > 0 else 1.0
        poles = _ar2_poles(np.nan_to_num(slow[inner]))
        radius = float(np.max(np.abs(poles))) if poles.size else 0.0
        oscillating = bool(np.any(np.abs(poles.imag) > 1e-9))
        excess_score = float(np.clip((excess - 4.0) / 8.0, 0.0, 1.0))
    entropy = run.metrics.get("entropy")
    entropy_growth = float("nan")  # late over early entropy
    if entropy is not None and np.isfinite(entropy).sum() > 4:
        e0 = _window_mean(entropy, early)
        if e0 > 0:
            entropy_growth = _window_mean(entropy, late) / e0
    divergence_score, divergence_words = 0.0, ""
    if entropy_growth > 1.3:
        r0, r1 = _window_mean(r, early), _window_mean(r, late)
        at_floor = _is_success_rate(run) and r1 <= 1 - CEILING
        if at_floor or r1 < r0 - max(0.05, 3 * noise / np.sqrt(early.stop)):
            # the opposite of concentration: the temperature rose while the reward fell, the
            # updates threw the policy off its start (divergence)
            divergence_score = 1.0
            divergence_words = (f"; entropy rose x{entropy_growth:.2f} while the reward fell "
                                f"{r0:.2f} -> {r1:.2f} (divergence)")
    kl = run.metrics.get("kl")
    kl_score, kl_words, kl_growth = 0.0, "", float("nan")
    if kl is not None and np.isfinite(kl).sum() > 8:
        k_mid = np.nanmedian(kl[: max(4, run.n_points // 2)])
        k_late = _window_mean(kl, late)
        if np.isfinite(k_late) and k_late > 0 and k_mid > 0:  # a KL estimate can be < 0
            kl_growth = k_late / k_mid
        # a stable map keeps the KL at its stationary level; an unstable one carries the policy
        # away from the reference: a tenfold growth past 1 nat scores 1
        if np.isfinite(kl_growth) and k_late > 1.0 and kl_growth > 1.0:
            kl_score = float(np.clip(np.log10(kl_growth), 0.0, 1.0))
            kl_words = f"; KL grew x{kl_growth:.1f} ({k_mid:.3g} -> {k_late:.3g})"
    collapse_words = ""
    if collapse_score == 0:
        # a policy that concentrates also leaves the reference; the KL's growth tells an
        # instability only together with the fall of the reward it causes
        kl_score = 0.0
    else:
        # a fall of the reward at a fixed distance from the reference is a slow fluctuation of
        # a stable, noisy run (large at small G); an instability moves the policy: the KL
        # changes, or the entropy rises, by a factor of 3 or more. A falling entropy does not
        # count: it is the concentration's own signature, and a policy concentrating onto wrong
        # answers loses reward just as a collapse does
        moved = []
        if np.isfinite(kl_growth):
            moved.append(abs(np.log(kl_growth)))
        if np.isfinite(entropy_growth) and entropy_growth > 0:
            moved.append(np.log(entropy_growth))
        if moved and max(moved) < np.log(3.0):
            collapse_score = kl_score = 0.0
            collapse_words = (" without the policy leaving the reference (KL within a factor 3, "
                              "entropy not up x3): a slow fluctuation or a concentration, not "
                              "a divergence")
    score = max(collapse_score, excess_score, kl_score, divergence_score)
    idx = np.arange(run.n_points)
    where = (float(run.steps[best]), float(run.steps[idx[-1]]))
    oscillation = (f"slow fluctuations x{excess:.1f} the variance that noise alone gives; "
                   f"AR(2) pole radius {radius:.3f}{' (oscillatory)' if oscillating else ''}"
                   if np.isfinite(excess) else "too few points for an oscillation test")
    words = (f"reward fell {collapse:+.3f} from its best smoothed level at step "
             f"{run.steps[best]:g}{collapse_words}; {oscillation}{kl_words}{divergence_words}")
    return ModeVerdict(score >= FLAG_SCORE, score, words, True, where)


def diagnose(run: Run, *, group_size: int | None = None) -> Diagnosis:
    """Score the four failure modes of one run.

    Parameters
    ----------
    run : Run
        A loaded training log (``grpodyn.empirical.logs.loaders.load_run``).
    group_size : int, optional
        G; default: ``run.meta.group_size`` (declared, read or inferred), if any.

    Returns
    -------
    Diagnosis
        One :class:`ModeVerdict` per mode of ``MODES``, the primary mode (the most upstream
        flagged one), None when nothing is flagged, the ``state`` (one of ``STATES``) with its
        evidence, the group size with its source, and the prompt pool's Beta law early and
        late where the log has the zero-std share.
    """
    if run.n_points < _MIN_POINTS:
        raise InputError(f"{run.source}: a diagnosis needs at least {_MIN_POINTS} logged "
                         f"points, got {run.n_points}")
    g_info = {"value": None, "source": "unknown", "evidence": "not declared, read or inferred"}
    if group_size is not None:
        group_size = check_int("group_size", group_size, minimum=2)
        g_info = {"value": group_size, "source": "user", "evidence": "given to diagnose"}
    elif run.meta.group_size is not None:
        declared = run.meta.group_size
        if declared.source == "user":  # the user's --group-size: a bad one is an error
            check_int("group_size", declared.value, minimum=2)
        if isinstance(declared.value, int) and declared.value >= 2:
            group_size = declared.value
            g_info = declared.to_dict()
    early, late, _ = _segments(run.n_points)
    noise = estimate_noise(run.reward[np.isfinite(run.reward)]).sigma
    modes = {
        "reward_hacking": _hacking(run, early, late, noise),
        "advantage_degeneracy": _degeneracy(run, late, group_size),
        "policy_concentration": _concentration(run, early, late, group_size),
        "dynamical_instability": _instability(run, early, late, noise),
    }
    # causal order: an instability's collapse concentrates the policy, and a concentrated
    # policy degenerates the groups, so the upstream mode is the primary one
    primary = next((name for name in _CAUSAL_ORDER if modes[name].flag), None)
    notes = [f"{name}: not judged ({v.evidence})" for name, v in modes.items() if not v.judged]
    notes += [f"{name}: undecided, the diagnosis abstains (the log points to it but cannot "
              "confirm it)" for name, v in modes.items() if v.undecided]
    if group_size is None:
        notes.append("group size G unknown: degeneracy is scored on the share of groups "
                     "without spread and concentration at G = 2; declaring G (--group-size) "
                     "scores the drift lost to the group size instead")
    state, state_words = _state(run, early, late, noise)
    if state == "declining" and primary is None:
        notes.append("the reward fell back by more than its noise and no mode explains it: "
                     "decline, cause unknown")
    pools = {}
    for part, name in ((early, "early"), (late, "late")):
        pool = _pool(run, part, group_size)
        if pool is not None:
            pools[name] = {**pool.to_dict(), "steps": [float(run.steps[part][0]),
                                                       float(run.steps[part][-1])]}
    return Diagnosis(modes, primary, run.source, notes, state, state_words, g_info, pools)


def threshold_rules(run: Run) -> dict[str, bool]:
    """Apply the simple rules monitoring tools use, for comparison with :func:`diagnose`.

    reward_std below 0.01 for 20 consecutive steps (degeneracy); entropy down by more than 50%
    (concentration); held-out reward down by more than 0.05 while the train reward rises
    (hacking); KL above 1 or a non-finite reward (instability).
    """
    out = dict.fromkeys(MODES, False)
    spread = run.metrics.get("reward_std")
    if spread is not None:
        low = np.nan_to_num(spread, nan=1.0) < 0.01
        run_length = 0
        for flag in low:
            run_length = run_length + 1 if flag else 0
            if run_length >= 20:
                out["advantage_degeneracy"] = True
                break
    entropy = run.metrics.get("entropy")
    if entropy is not None and np.isfinite(entropy).sum() > 4:
        early, late, _ = _segments(run.n_points)
        out["policy_concentration"] = bool(_window_mean(entropy, late)
                                           < 0.5 * _window_mean(entropy, early))
    held = run.metrics.get("heldout_reward")
    if held is not None and np.isfinite(held).sum() > 4:
        idx = np.flatnonzero(np.isfinite(held))
        k = max(2, idx.size // 4)
        out["reward_hacking"] = bool(np.mean(held[idx[-k:]]) < np.mean(held[idx[:k]]) - 0.05
                                     and np.mean(run.reward[idx[-k:]])
                                     > np.mean(run.reward[idx[:k]]))
    kl = run.metrics.get("kl")
    out["dynamical_instability"] = bool(kl is not None and np.nanmax(np.nan_to_num(kl)) > 1.0)
    return out
