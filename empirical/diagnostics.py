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
Needs numpy only.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field

import numpy as np

from grpodyn.numerics.validation import InputError, check_int

from .loaders import Run

__all__ = ["MODES", "ModeVerdict", "Diagnosis", "diagnose", "threshold_rules"]

MODES = ("reward_hacking", "advantage_degeneracy", "policy_concentration",
         "dynamical_instability")
FLAG_SCORE = 0.5
_CEILING = 0.97  # a reward this close to 1 (for 0/1 rewards) has nothing left to learn
_MIN_POINTS = 20
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


@dataclass(frozen=True)
class Diagnosis:
    """Verdicts on the four modes and the primary one (None for a healthy run)."""

    modes: dict[str, ModeVerdict]
    primary: str | None
    source: str = ""
    notes: list[str] = field(default_factory=list)

    def to_dict(self) -> dict:
        return {"source": self.source, "primary": self.primary, "notes": self.notes,
                "modes": {name: asdict(v) for name, v in self.modes.items()}}


def _smooth(y: np.ndarray, window: int, mode: str = "same") -> np.ndarray:
    """Moving average that ignores NaN; NaN where a window has no finite point.

    ``mode="same"``: centred, same length, the edges use the points they have;
    ``mode="valid"``: one mean per full window, ``len(y) - window + 1`` of them.
    """
    finite = np.isfinite(y)
    values = np.where(finite, y, 0.0)
    kernel = np.ones(window)
    total = np.convolve(values, kernel, mode=mode)
    count = np.convolve(finite.astype(float), kernel, mode=mode)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(count > 0, total / np.maximum(count, 1), np.nan)


def _window_mean(y: np.ndarray, part: slice) -> float:
    chunk = y[part]
    chunk = chunk[np.isfinite(chunk)]
    return float(chunk.mean()) if chunk.size else float("nan")


def _lowest_window(y: np.ndarray, start: int, width: int) -> tuple[float, int]:
    """The lowest mean of ``width`` consecutive points from ``start`` on, and where it begins
    (windows without a finite point are skipped; inf when every one lacks them)."""
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
    if gain_train <= max(spread, 0.03):
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


def _degeneracy(run: Run, late: slice, group_size: int | None, noise: float) -> ModeVerdict:
    frac = run.metrics.get("frac_reward_zero_std")
    r_late = _window_mean(run.reward, late)
    source = "logged"
    if frac is None or not np.isfinite(frac).any():
        if group_size is None:
            return _unjudged("no frac_reward_zero_std in the log and no group size G to "
                             "predict it from the reward level")
        if not _is_success_rate(run):
            return _unjudged("no frac_reward_zero_std in the log, and rewards outside [0, 1] "
                             "are no success rate to predict it from")
        p = np.clip(run.reward, 0, 1)
        frac = p**group_size + (1 - p) ** group_size
        source = f"predicted from the reward at G = {group_size}"
    f_late = _window_mean(frac, late)
    predicted = ""
    if group_size is not None and _is_success_rate(run):
        expected = r_late**group_size + (1 - r_late) ** group_size
        predicted = (f"; p^G + (1-p)^G at the reward {r_late:.2f} and G = {group_size} "
                     f"predicts {expected:.2f}")
    idx = np.arange(run.n_points)[late]
    slope = np.polyfit(run.steps[idx], run.reward[idx], 1)[0] if idx.size > 2 else 0.0
    gain = slope * (run.steps[idx[-1]] - run.steps[idx[0]]) if idx.size > 2 else 0.0
    short_of_ceiling = r_late < _CEILING or not _is_success_rate(run)
    # the drift factor 1 - f is what the stiffness keeps: the score f passes the flag when
    # half of it is gone (G = 2 loses at least half at any p), whether or not the (noisy)
    # reward already shows the stall it implies
    score = float(f_late) if short_of_ceiling else 0.0
    steps = (float(run.steps[idx[0]]), float(run.steps[idx[-1]]))
    words = (f"zero-std groups {f_late:.2f} of the batch late in the run ({source}){predicted}: "
             f"only {1 - f_late:.0%} of the groups carry a gradient; reward {r_late:.2f}, "
             f"gain {gain:+.3f} over the last quarter")
    if not short_of_ceiling:
        words += " (at the ceiling: nothing left to learn, not a failure)"
    return ModeVerdict(score >= FLAG_SCORE, score, words, True, steps)


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
    words = (f"entropy {e0:.3g} -> {low:.3g} at its lowest (x{ratio:.2f}, steps "
             f"{low_steps[0]:g}-{low_steps[1]:g}), {e1:.3g} late in the run")
    undecided = 0.45  # below the flag: entropy alone cannot tell concentration from learning
    r_late = _window_mean(run.reward, late)
    frac = run.metrics.get("frac_reward_zero_std")
    if not _is_success_rate(run):
        score = min(score, undecided)
        words += ("; rewards outside [0, 1]: no success rate to set the temperature "
                  "prediction, entropy alone cannot tell concentration from learning")
    elif r_late >= _CEILING:
        words += (f"; at the ceiling (reward {r_late:.2f}): the policy concentrated onto the "
                  "rewarded answer, exploration is gone")
    elif r_late <= 1 - _CEILING:
        words += (f"; at the floor (reward {r_late:.2f}): the policy concentrated onto wrong "
                  "answers")
    elif group_size is not None and frac is not None and np.isfinite(frac).any():
        # temperature prediction: an unconcentrated policy at success rate r leaves a share
        # r^G + (1-r)^G of the groups without spread; a policy that is deterministic per
        # prompt leaves far more (each prompt always right or always wrong)
        # the score is the smaller of the entropy's fall and the share of the groups that
        # should explore but do not: both must pass the flag
        predicted = r_late**group_size + (1 - r_late) ** group_size
        observed = _window_mean(frac, late)
        beyond = float(np.clip((observed - predicted) / max(1 - predicted, 1e-12), 0.0, 1.0))
        score = min(score, beyond)
        words += (f"; zero-std groups {observed:.2f} against {predicted:.2f} for an "
                  f"unconcentrated policy at the reward {r_late:.2f} and G = {group_size}: "
                  f"{beyond:.0%} of the groups that should explore do not")
        words += (": the policy is deterministic on most prompts" if beyond >= FLAG_SCORE
                  else ": the groups still explore")
    else:
        score = min(score, undecided)
        words += ("; below the ceiling, entropy alone cannot tell concentration from learning "
                  "(needs frac_reward_zero_std and G)")
    return ModeVerdict(score >= FLAG_SCORE, score, words, True,
                       (float(low_steps[0]), float(run.steps[-1])))


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
        at_floor = _is_success_rate(run) and r1 <= 1 - _CEILING
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
        if np.isfinite(k_late) and k_mid > 0:
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
        A loaded training log (``grpodyn.empirical.loaders.load_run``).
    group_size : int, optional
        G; default: the ``G`` hyperparameter found with the log, if any.

    Returns
    -------
    Diagnosis
        One :class:`ModeVerdict` per mode of ``MODES`` and the primary mode (the flagged one
        with the highest score), None when nothing is flagged.
    """
    if run.n_points < _MIN_POINTS:
        raise InputError(f"{run.source}: a diagnosis needs at least {_MIN_POINTS} logged "
                         f"points, got {run.n_points}")
    found = run.meta.value("group_size")
    if group_size is None and isinstance(found, int) and found >= 2:  # G = 1 has no groups
        group_size = found
    if group_size is not None:
        group_size = check_int("group_size", group_size, minimum=2)
    early, late, _ = _segments(run.n_points)
    noise = float(np.nanstd(np.diff(run.reward)) / np.sqrt(2))
    modes = {
        "reward_hacking": _hacking(run, early, late, noise),
        "advantage_degeneracy": _degeneracy(run, late, group_size, noise),
        "policy_concentration": _concentration(run, early, late, group_size),
        "dynamical_instability": _instability(run, early, late, noise),
    }
    # causal order: an instability's collapse concentrates the policy, and a concentrated
    # policy degenerates the groups, so the upstream mode is the primary one
    primary = next((name for name in _CAUSAL_ORDER if modes[name].flag), None)
    notes = [f"{name}: not judged ({v.evidence})" for name, v in modes.items() if not v.judged]
    return Diagnosis(modes, primary, run.source, notes)


def threshold_rules(run: Run) -> dict[str, bool]:
    """The simple rules monitoring tools use, for comparison with :func:`diagnose`.

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
