"""Tell the four failure modes of GRPO apart from a training log (docs/theory.md section 10).

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

Prompts differ: the zero-std share is the pool average of p^G + (1-p)^G, so degeneracy and
concentration read the Beta law of the prompts' success rates (:mod:`grpodyn.numerics.prompt_pool`)
instead of that expression at the mean reward. G comes from the caller or ``run.meta`` with its
source. Besides the modes, a run has a state that is not a failure: converged, learning,
not_learning, declining (a fall beyond the noise, never healthy) or too_short. The fall back
from the best level is tested at a Bonferroni threshold over the windows the best was picked
from (the pick itself would otherwise make a fall), against the noise at the window's scale;
degeneracy also counts the drift lost over the whole run, each reward level read at its
least degenerate value within the false-alarm margin of its noise; without a zero-std share,
an entropy fall that the reward's move explains (the kept-spread bound of docs/theory.md
section 7) is decided, one beyond it abstains (studies/tiny_grids/findings.md, 4b); verl's
``critic/advantages/{max,min}`` give the Beta law where the zero-std share is missing
(:func:`~grpodyn.numerics.prompt_pool.fit_prompt_pool_extremes`), so concentration is judged
there as on TRL's logs. Without the entropy, concentration is read from the zero-std share
where logged (the failing prompts locked beyond what the first steps' spread predicts), else
from the reward's sampling noise at the known B and G (:mod:`.fluctuation`: the share of its
variance between prompts); without B the diagnosis abstains with the reason rather than call
the run healthy, and where identical prompts at the first steps' reward already lose half the
drift to groups of G it abstains too: success rates at the floor cannot tell a policy locked
onto wrong answers from one that never samples the right one (degeneracy names the run).
The detectors live in their own modules: :mod:`.hacking`, :mod:`.modes` (degeneracy and
concentration), :mod:`.instability` (with the limit cycle of the AR(2) poles), :mod:`.state`
(what the reward did, with the step of the peak of a decline); :mod:`.text` writes the headline
and :mod:`.early_warning` the precursors of a collapse. Needs numpy and scipy.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

from grpodyn.empirical.diagnostics.early_warning import MIN_POINTS as EARLY_WARNING_POINTS
from grpodyn.empirical.diagnostics.early_warning import RELATIVE, reviews, standing_warning
from grpodyn.empirical.diagnostics.hacking import hacking
from grpodyn.empirical.diagnostics.instability import instability
from grpodyn.empirical.diagnostics.modes import (
    concentration,
    degeneracy,
    late_without_spread,
    prompt_pool_at,
)
from grpodyn.empirical.diagnostics.series import segments, window_mean
from grpodyn.empirical.diagnostics.state import STATES, classify_state
from grpodyn.empirical.diagnostics.text import headline, is_healthy
from grpodyn.empirical.diagnostics.verdict import (
    CEILING,
    MODES,
    NEGLIGIBLE_RISE,
    REMEDIES,
    ModeVerdict,
    unjudged,
)
from grpodyn.empirical.logs.loaders import Run
from grpodyn.empirical.logs.run_settings import check_magnitudes
from grpodyn.ground import InputError, TooFewPoints, check_flag, finite_json
from grpodyn.ground.checks import GROUP_SIZE_MAX, check_group_size
from grpodyn.numerics.fit import estimate_noise

__all__ = ["MIN_POINTS", "MODE_POINTS", "MODES", "STATES", "CEILING", "NEGLIGIBLE_RISE",
           "ModeVerdict", "Diagnosis", "diagnose", "threshold_rules"]

#: the fewest logged points a diagnosis reads: the early warning's shortest trend window
MIN_POINTS = EARLY_WARNING_POINTS
MODE_POINTS = 20  # fewer: no mode is judged, only the early warning is looked for
_CAUSAL_ORDER = ("dynamical_instability", "reward_hacking", "policy_concentration",
                 "advantage_degeneracy")


@dataclass(frozen=True)
class Diagnosis:
    """Verdicts on the four modes, the primary one (None when none is flagged) and the state.

    ``headline`` names the primary mode and the state in one line; ``healthy`` is True only
    for a run that learns or converged with no mode flagged or undecided; ``early_warning`` is
    None or the precursors of a collapse that fired at the last steps (a warning, not a
    verdict: :mod:`grpodyn.empirical.diagnostics.early_warning`).
    """

    modes: dict[str, ModeVerdict]
    primary: str | None
    source: str = ""
    notes: list[str] = field(default_factory=list)
    state: str = "learning"
    state_evidence: str = ""
    group_size: dict = field(default_factory=dict)  # value, source, evidence (value None)
    prompt_pool: dict = field(default_factory=dict)  # early and late Beta laws, when fitted
    peak_step: float | None = None  # the step of the peak a declining run fell from
    early_warning: dict[str, Any] | None = None
    pinned: bool = False  # the state's: not learning because the reward sits at one value
    #: the state's: False when the noise cannot tell a plateau from a continuing rise
    resolved: bool = True
    #: the state's: a decline from the first steps (``peak_step`` is then the first step)
    from_start: bool = False

    @property
    def healthy(self) -> bool:
        """True for a run that learns or converged, with no mode flagged or undecided."""
        return is_healthy(self.primary, self.state, self.modes)

    @property
    def headline(self) -> str:
        """The one-line verdict: the primary mode or "healthy", and the state."""
        return headline(self.primary, self.state, self.peak_step, self.modes, self.resolved,
                        from_start=self.from_start)

    def __repr__(self) -> str:
        """Return one line: the source, the state, the primary mode, the flags and any warning."""
        flagged = [name for name, v in self.modes.items() if v.flag]
        warning = (f", early_warning at step {self.early_warning.get('step')}"
                   if self.early_warning else "")
        name = self.source.rsplit("/", 1)[-1]
        return (f"Diagnosis({name!r}, state={self.state!r}, primary={self.primary!r}, "
                f"flagged={flagged}{warning})")

    def to_dict(self) -> dict:
        """Return the diagnosis as strict-JSON values (the keys of ``grpodyn diagnose``).

        A flagged mode carries ``remedy``, what to try (:data:`~.verdict.REMEDIES`); None
        otherwise; so does an early warning (:func:`~.early_warning.remedy`). A mode the log
        cannot judge has ``judged`` false and ``score`` None. A non-finite float (the unbounded
        side of an interval, the prompt pool's phi where the prompts look identical) is None, as
        the command line writes it (:func:`grpodyn.ground.finite_json`).
        """
        return finite_json({
                "source": self.source, "headline": self.headline, "healthy": self.healthy,
                "primary": self.primary, "state": self.state,
                "state_evidence": self.state_evidence, "peak_step": self.peak_step,
                "from_start": self.from_start,
                "early_warning": self.early_warning,
                "group_size": self.group_size,
                "prompt_pool": self.prompt_pool, "notes": self.notes,
                "modes": {name: {**asdict(v), "score": v.score if v.judged else None,
                                 "remedy": REMEDIES[name] if v.flag else None}
                          for name, v in self.modes.items()}})


def _group_size(run: Run, group_size: int | None) -> tuple[int | None, dict]:
    """Return G (the caller's, else the log's) with its source and evidence.

    A G beyond ``GROUP_SIZE_MAX`` is refused, naming where it came from (the caller, the
    user's ``--group-size`` or the log): the finite-G statistics cost memory and time in
    proportion to G.
    """
    g_info = {"value": None, "source": "unknown", "evidence": "not declared, read or inferred"}
    if group_size is not None:
        group_size = check_group_size(group_size)
        return group_size, {"value": group_size, "source": "user",
                            "evidence": "given to diagnose"}
    declared = run.meta.group_size
    if declared is not None:
        if declared.source == "user":  # the user's --group-size: a bad one is an error
            check_group_size(declared.value, "--group-size")
        if isinstance(declared.value, int) and declared.value > GROUP_SIZE_MAX:
            raise InputError(f"{run.source}: group size G = {declared.value} "
                             f"({declared.evidence or declared.source}) is beyond "
                             f"{GROUP_SIZE_MAX}, the largest the finite-G statistics are "
                             "computed for")
        if isinstance(declared.value, int) and declared.value >= 2:
            return declared.value, declared.to_dict()
    return None, g_info


def _too_short(run: Run, g_info: dict, look: bool) -> Diagnosis:
    """Diagnose a run too short for the modes: every mode unjudged, the warning read if ``look``."""
    why = (f"{run.n_points} logged points: the modes need {MODE_POINTS}; only the early "
           "warning is looked for")
    modes = {name: unjudged(why) for name in MODES}
    warning = standing_warning(run) if look else None
    return Diagnosis(modes, None, run.source, [why], "too_short", why, g_info, {}, None,
                     None if warning is None else warning.to_dict())


def diagnose(run: Run, *, group_size: int | None = None, warning: bool = True) -> Diagnosis:
    """Score the four failure modes of one run, name its state and look for precursors.

    Parameters
    ----------
    run : Run
        A loaded training log (``grpodyn.empirical.logs.loaders.load_run``).
    group_size : int, optional
        G; default: ``run.meta.group_size`` (declared, read or inferred), if any.
    warning : bool
        Look for the early warning standing at the last step (``standing_warning``, which
        replays the run's prefixes); False leaves ``early_warning`` None, for a caller that
        holds the warning itself (the ``Monitor``, fed step by step).

    Returns
    -------
    Diagnosis
        One :class:`ModeVerdict` per mode of ``MODES``, the primary mode (the most upstream
        flagged one), None when nothing is flagged, the ``state`` (one of ``STATES``) with its
        evidence and the step of the peak of a decline, the group size with its source, the
        prompt pool's Beta law early and late where the log has the zero-std share, and the
        early warning of the last steps.
    """
    check_magnitudes(run)
    warning = check_flag("warning", warning)
    if run.n_points < MIN_POINTS:
        raise TooFewPoints(f"{run.source}: a diagnosis needs at least {MIN_POINTS} logged "
                         f"points, got {run.n_points}")
    group_size, g_info = _group_size(run, group_size)
    if run.n_points < MODE_POINTS:
        return _too_short(run, g_info, warning)
    early, late, _ = segments(run.n_points)
    noise = estimate_noise(run.reward[np.isfinite(run.reward)]).sigma
    state = classify_state(run, early, late, noise)
    modes = {
        "reward_hacking": hacking(run, early, late, noise),
        "advantage_degeneracy": degeneracy(run, late, group_size, noise),
        "policy_concentration": concentration(run, early, late, group_size),
        "dynamical_instability": instability(run, early, late, noise,
                                             state_peak=None if state.from_start
                                             else state.peak_step, cycle=state.cycle),
    }
    # causal order: an instability's collapse concentrates the policy, and a concentrated
    # policy degenerates the groups, so the upstream mode is the primary one
    primary = next((name for name in _CAUSAL_ORDER if modes[name].flag), None)
    notes = [f"{name}: not judged ({v.evidence})" for name, v in modes.items() if not v.judged]
    notes += [f"{name}: undecided, the diagnosis abstains ("
              + ("the log points to it but cannot confirm it)" if v.judged else
                 "the log can neither confirm nor rule it out, so the run is not called "
                 "healthy)") for name, v in modes.items() if v.undecided]
    scored = [words for name, words in (
        ("advantage_degeneracy", "degeneracy is scored on the share of groups without spread"),
        ("policy_concentration", "concentration is scored at G = 2")) if modes[name].judged
        and not (name == "advantage_degeneracy" and late_without_spread(run, late))]
    if group_size is None and scored:  # a mode the log cannot judge reads no G either
        notes.append(f"group size G unknown: {', '.join(scored)}; declaring G "
                     "(--group-size) scores the drift lost to the group size instead")
    if state.name == "declining" and primary is None:
        notes.append(f"the reward fell {'from its start' if state.from_start else 'back'} by "
                     "more than its noise and no mode explains it: decline, cause unknown")
    truncation = _truncation_note(run, state.peak_step, late, "the start" if state.from_start
                                  else "the peak") if state.name == "declining" else None
    if truncation is not None:
        notes.append(truncation)
    pools = {}
    for part, name in ((early, "early"), (late, "late")):
        pool = prompt_pool_at(run, part, group_size)
        if pool is not None:
            pools[name] = {**pool.to_dict(), "steps": [float(run.steps[part][0]),
                                                       float(run.steps[part][-1])]}
    # the warning a monitor fed these steps holds (one that fired stands until a verdict)
    standing = standing_warning(run, reviewed=reviews(primary is not None, state.name, run)) \
        if warning else None
    return Diagnosis(modes, primary, run.source, notes, state.name, state.evidence, g_info,
                     pools, state.peak_step, None if standing is None else standing.to_dict(),
                     pinned=state.pinned, resolved=state.resolved, from_start=state.from_start)


def _truncation_note(run: Run, peak_step: float | None, late: slice, where: str = "the peak"
                     ) -> str | None:
    """Say whether completions reaching the length cap went with a decline, or return None.

    The truncated share up by :data:`early_warning.RELATIVE` (0.1 of the batch) from the five
    points around the peak (``where``: "the start" for a decline from the start) to the last
    quarter; without the share, where the cap is known, the
    late mean length within 25% of its level below the cap (the early warning's readings).
    Truncated completions score nothing, so the cap is a candidate cause of the fall.
    """
    if peak_step is None:
        return None
    at = int(np.searchsorted(run.steps, peak_step))
    around = slice(max(0, at - 2), at + 3)
    share = run.metrics.get("clipped_share")
    if share is not None:
        before, after = np.nanmean(share[around]), np.nanmean(share[late])
        if np.isfinite(before) and np.isfinite(after) and \
                after - before >= RELATIVE["clipped_share"]:
            return (f"completions truncated at the length cap rose from {before:.0%} around "
                    f"{where} (step {peak_step:g}) to {after:.0%} late: truncated completions "
                    "score nothing, so the cap may explain the fall")
        return None
    cap, length = run.meta.value("length_cap"), run.metrics.get("completion_length")
    if cap is None or length is None:
        return None
    late_length = np.nanmean(length[late])
    if np.isfinite(late_length) and cap - late_length < RELATIVE["completion_length"] * \
            late_length:
        return (f"the mean completion length late, {late_length:.4g} tokens, is within "
                f"{RELATIVE['completion_length']:.0%} of its level below the length cap {cap:g}: "
                "completions truncated at the cap score nothing, so the cap may explain the fall")
    return None


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
        early, late, _ = segments(run.n_points)
        out["policy_concentration"] = bool(window_mean(entropy, late)
                                           < 0.5 * window_mean(entropy, early))
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
