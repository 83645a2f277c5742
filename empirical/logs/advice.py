"""Learning-rate advice from one training log: :func:`advise_log` -> :class:`LogAdvice`.

Every run that loads gets advice with its basis. The basis is the run's relaxation time tau
(docs/theory.md section 3: tau = (1 - beta) / k, k = a kappa), measured where the data determine it,
else bounded by what the run did:

- it stayed flat for N steps (no move beyond its noise, or by the diagnosis's state a success
  rate's move too small to count): tau > N (unless it already sits at its plateau),
  so its stiffness is bounded from above, k < (1 - beta) / N: raise the lr by at least the
  factor that brings tau to the goal;
- it rose, but the curvature of its rise does not pin tau: the quantiles of the curvature
  ratio of its thirds bound tau from below (and from above), and the advice raises by the least
  factor the lower bound demands;
- it fell beyond its noise (a collapse, or a rise given back): its stiffness reached the
  (lag-eroded) stability limit of docs/theory.md section 5, k >= k_max, so k_max <= k and the lr
  the theory's margin target allows is at most ``margin`` times the run's;
- it overshot: a rise given back in part, the end above the midpoint of start and peak and no
  longer falling (:func:`~.trend.settled_overshoot`): a stable map with momentum (docs/theory.md
  section 4) whose overshoot bounds its stiffness from below, k >= k(OS); where that bound lies
  past the fastest settling k_s the lr is lowered toward it (x k_s / k(OS), at most a halving),
  else kept (:mod:`.overshoot_advice`);
- the diagnosis flags dynamical instability without a fall (the reward oscillates around its
  trend, or its slow fluctuations swell): the map is near its stability limit, so the lr is
  lowered by the margin as after a fall, never raised against the diagnosis's remedy;
- it still rises beyond its noise over its last third: not at its plateau; the slope's decay
  between its last two thirds bounds the gain to come from below (``late_relaxation`` of
  numerics.advise), and this slow mode's tau (``slow_mode``) sets the advice when longer: its
  median, or, where the median gain to come fills the room left in the reward range, the
  range's cap (``estimate``: the longest tau the range allows, where the median sits), or,
  where the median shows no decay, its 2.5% quantile, a lower bound (value None).

The goal is 90% of the attainable gain within the horizon (``steps``, default the run's own length),
tau_goal = N / ln 10, floored at the map's fastest settling into the 10% band, T_s / ln 10 (no lr
reaches 90% of the gain for good in fewer than T_s steps: 26 at beta = 0.9); tau ~ lr^p with p = -1
(the map) unless a sweep measured it (:func:`exponent_from_sweep`). Without a horizon of the user's,
a run that did not fall and whose tau has a lower end beyond the critical-damping time is raised
further when that is the larger (headroom): tau >= tau_lo bounds its slow mode's stiffness, k <=
k(tau_lo), and the stiffness that settles soonest into the 10% band, k_s (numerics.settling: an
overshoot within the band; critical damping, k_c = (1 - sqrt(beta))^2, is the fastest without
overshoot, docs/theory.md section 4), is k_s / k(tau_lo) away. Without a horizon of the user's one
raise is at most 1 / margin, the inverse of the step down after a fall, since the stiffest
direction, which sets the stability limit, is not bounded by the run; the interval keeps what the
evidence asks. With ``--steps`` the advice is the least lr that reaches the goal. Given a sweep of
runs of the same model and task, its exponents replace the theory's and the lowest lr at which one
of its runs fell caps the advice at the margin target of that lr (:mod:`.sweep_advice`; runs at the
run's optimizer, G, B, updates per batch and KL). Where the diagnosis flags advantage degeneracy the
lr is not the lever: the advice says so and recommends the least G that gives half the groups a
spread (:mod:`.group_advice`); where it flags policy concentration, or the reward stayed flat below
its ceiling while the entropy halved, the policy moved while the reward did not, so a flat reward
bounds nothing and the lr is lowered by the margin, with the concentration's remedy
(:mod:`.mode_advice`). With Adam the slow mode's stiffness is on Adam's clock (a = lr (1 - beta1) /
sqrt(v)), so the advice is a multiple of the run's own lr, absolute only when the run's lr is known.

Without a momentum from the log or the user, Adam's beta1 = 0.9 is assumed, and every number
that rests on it says so: ``basis.momentum`` gives beta with its source and names those numbers
(``bears_on``: the stiffness k = (1 - beta) / tau and kappa, a tau the inertial model's fit
measured, a goal floored at the fastest settling, an lr ratio set by that floor or by the
headroom); the entries among them carry ``momentum_source`` and a reason that names the
assumption, their status saying what tau gives at that beta, and the text adds "at beta = 0.9,
assumed" to each.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from grpodyn.empirical.diagnostics.diagnose import MIN_POINTS, Diagnosis
from grpodyn.empirical.logs.advice_stiffness import (
    on_momentum,
    schedule_words,
    step_clock_warnings,
    stiffness_entry,
)
from grpodyn.empirical.logs.advice_text import (
    assumed_beta,
    basis_text,
    caveats,
    factor_words,
    goal_warnings,
    interval_entry,
    slow_mode_words,
    slow_tau_words,
    stiffness_at_most,
    tau_at_least,
)
from grpodyn.empirical.logs.group_advice import group_batch_effect
from grpodyn.empirical.logs.infer import group_batch_notes
from grpodyn.empirical.logs.loaders import Run
from grpodyn.empirical.logs.mode_advice import (
    concentration_evidence,
    instability_evidence,
    mode_notes,
    run_diagnosis,
    state_notes,
)
from grpodyn.empirical.logs.overshoot_advice import overshoot_evidence, overshoot_ratios
from grpodyn.empirical.logs.run_analysis import RunAnalysis, analyse_run, infer_reward_range
from grpodyn.empirical.logs.run_settings import check_magnitudes, learning_rate_of, logged_schedule
from grpodyn.empirical.logs.sweep_advice import (
    LIMIT_SETTINGS,
    THEORY_EXPONENT,
    bg_exponent_from_sweep,
    exponent_from_sweep,
    run_optimizer,
    sweep_cap,
)
from grpodyn.empirical.logs.trend import Trend, agree_with_state, run_trend
from grpodyn.ground import InputError, TooFewPoints, check_fraction, check_momentum
from grpodyn.numerics.advise import (
    MARGIN,
    goal_relaxation,
    headroom_raise,
    late_relaxation,
    lr_ratio_for_relaxation,
    thirds_relaxation,
)

__all__ = ["LogAdvice", "advise_log", "exponent_from_sweep", "bg_exponent_from_sweep",
           "run_trend", "Trend", "ASSUMED_MOMENTUM", "THEORY_EXPONENT"]

#: A series this short that shows no noise bounds nothing: its noise cannot be told from zero
#: (the diagnosis's own minimum of logged points).
FEWEST_NOISE_FREE = MIN_POINTS
#: Adam's default beta1, assumed (and said) when neither the log nor the user gives a momentum.
ASSUMED_MOMENTUM = 0.9
@dataclass
class LogAdvice:
    """The learning rate a log argues for, with its basis, interval, status and warnings.

    Attributes
    ----------
    recommendation : dict
        ``lr`` (absolute, None when the run's lr is unknown), ``lr_ratio`` (multiple of the
        run's lr), ``direction`` (raise, keep, lower), ``group_size``, ``batch`` (kept: the
        effect of changing them is in ``group_batch``).
    basis : dict
        ``kind`` (measured_tau, slow_mode, stiffness_upper_bound, stiffness_lower_bound,
        stability_limit, overshoot, instability, policy_concentration, not_determined), the
        relaxation time and stiffness with their status, the goal, the trend, the exponent and the
        momentum (value, source and the numbers that rest on it, ``bears_on``); with a sweep,
        ``sweep_fall`` (:func:`~.sweep_advice.fall_limit`, and ``capped``: what the cap moved).
    interval : dict
        ``lr_ratio`` [lo, hi] and ``lr`` [lo, hi] (None: unbounded) and what they mean.
    status : str
        ``determined`` (tau measured) or ``bound`` (one-sided).
    group_batch : dict
        What changing G or B does at a fixed lr (Adam's B G law).
    warnings, reasoning : list of str
        Caveats, and the steps of the advice in words.
    measured : dict
        The run's lr, momentum and tau with their sources.
    """

    source: str
    run: str | None
    recommendation: dict[str, Any]
    basis: dict[str, Any]
    interval: dict[str, Any]
    status: str
    group_batch: dict[str, Any]
    measured: dict[str, Any]
    warnings: list[str] = field(default_factory=list)
    reasoning: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        """Return the advice as plain JSON types (the JSON of ``grpodyn advise --log``)."""
        rec = self.recommendation
        return {"source": self.source, "run": self.run, "recommendation": dict(rec),
                "lr": rec["lr"], "learning_rate": rec["lr"], "basis": self.basis,
                "interval": self.interval, "status": self.status,
                "group_batch": self.group_batch, "measured": self.measured,
                "warnings": list(self.warnings), "reasoning": list(self.reasoning)}

    def __repr__(self) -> str:
        rec = self.recommendation
        lr = "" if rec["lr"] is None else f", lr={rec['lr']:.3g}"
        return (f"LogAdvice({rec['direction']} x{rec['lr_ratio']:.3g}{lr}, "
                f"basis={self.basis['kind']}, status={self.status})")


def _measured_tau(analysis: RunAnalysis | None, max_relative_error: float = 0.5
                  ) -> tuple[float, float, float] | None:
    """Return the fitted tau with a 95% interval if its relative error is small enough.

    A tau whose standard error exceeds half of it (196 +- 182) is not a measurement.
    """
    if analysis is None:
        return None
    tau = analysis.dynamics.get("tau", {})
    value, err = tau.get("value"), tau.get("stderr")
    if tau.get("status") != "determined" or value is None or err is None \
            or not err <= max_relative_error * value:
        return None
    return max(value - 1.96 * err, 0.0), float(value), value + 1.96 * err


def _tau_evidence(trend: Trend, analysis: RunAnalysis | None,
                  reward_range: tuple[float, float] | None, n_points: int) -> dict[str, Any]:
    """Relaxation time of the run: measured, or bounded by what it did (see the module)."""
    if trend.kind == "fell":
        return {"kind": "stability_limit", "value": None, "lower": None, "upper": None,
                "status": "bound", "method": "the reward fell beyond its noise: k >= k_max"}
    if trend.kind == "pinned":
        return {"kind": "not_determined", "value": None, "lower": None, "upper": None,
                "status": "not_determined",
                "method": "the reward is pinned at one value: no group has spread, so the "
                          "gradient is zero and the lr moves nothing (a task too hard or too "
                          "easy for the policy, or too small a group)"}
    if trend.kind == "flat":
        return {"kind": "stiffness_upper_bound", "value": None, "lower": trend.span,
                "upper": None, "status": "bound",
                "method": f"the reward stayed flat for {trend.span:g} steps (unless the run "
                          "already sits at its plateau)"}
    if trend.change_stderr == 0 and n_points < FEWEST_NOISE_FREE:  # no noise seen
        return {"kind": "not_determined", "value": None, "lower": None, "upper": None,
                "status": "not_determined",
                "method": f"{n_points} points that show no noise: too few to tell a noise-free "
                          f"series from one whose noise they do not reveal (a curvature needs "
                          f"at least {FEWEST_NOISE_FREE} to read without noise)"}
    if trend.change_stderr == 0 and _straight(trend):
        return {"kind": "stiffness_upper_bound", "value": None, "lower": trend.span,
                "upper": None, "status": "bound",
                "method": "a rise without noise and without curvature (its thirds' slopes "
                          "agree within rounding): tau is beyond the run's span"}
    fitted = _measured_tau(analysis)
    if fitted is not None:
        lo, value, hi = fitted
        model = analysis.dynamics["model"]
        return {"kind": "measured_tau", "value": value, "lower": lo, "upper": hi,
                "status": "determined", "method": f"fit of the {model} model (95% interval)",
                "model": model}
    lo, mid, hi = thirds_relaxation(trend.thirds, trend.thirds_stderr, trend.thirds_step)
    method = "curvature of the rise over its thirds (95% interval)"
    if reward_range is not None and trend.change > 0:
        # the mean slope cannot exceed the initial one, A / tau, with A <= hi - r0
        slope_bound = trend.span * (reward_range[1] - trend.thirds[0]) / trend.change
        if lo <= slope_bound < hi:  # below lo the two contradict: one exponential fits neither
            hi, method = slope_bound, method + "; upper end from the mean slope and the range"
    if lo > 0 and math.isfinite(hi) and hi <= 4 * lo:
        # the slope's bound can cut the interval below the curvature's centre (a straight rise)
        return {"kind": "measured_tau", "value": min(mid, hi), "lower": lo, "upper": hi,
                "status": "determined", "method": method}
    # an upper end of 0 is no bound: thirds that fall then rise fit no single relaxation
    upper = None if math.isinf(hi) or not hi > 0 else hi
    if lo > 0:
        kind = "stiffness_upper_bound"
    elif upper is not None:
        kind, method = "stiffness_lower_bound", method + ": the run relaxes at least this fast"
    else:
        return {"kind": "not_determined", "value": None, "lower": None, "upper": None,
                "status": "not_determined", "method": method + ": bounds nothing"}
    return {"kind": kind, "value": None, "lower": lo or None, "upper": upper,
            "status": "bound", "method": method}


def _straight(trend: Trend) -> bool:
    """Whether the thirds' mean rewards lie on one line, within floating-point rounding.

    Thirds of unequal sizes have unequally spaced centres, so a straight line's gains differ
    between them and the curvature of :func:`thirds_relaxation` reads a tau: the slopes do not.
    """
    (m1, m2, m3), (c1, c2, c3) = trend.thirds, trend.thirds_step
    first, second = (m2 - m1) / (c2 - c1), (m3 - m2) / (c3 - c2)
    return abs(first - second) <= 1e-9 * max(abs(first), abs(second), 1e-300)


def _evidence(run: Run, trend: Trend, analysis: RunAnalysis | None,
              reward_range: tuple[float, float] | None, diagnosis: Diagnosis | None,
              momentum: float) -> dict[str, Any]:
    """Return the basis: an overshoot's, a fall's, a pinned reward's, an instability's, or tau's.

    An overshoot that settled comes first (:mod:`.overshoot_advice`): the damped oscillation
    an instability test may read in it is the overshoot's own, at the pole modulus sqrt(beta).
    A fall lowers the lr as a concentration does, on stronger evidence; so does an instability
    the diagnosis flags without a fall (an oscillation around the trend, slow fluctuations); a
    pinned reward says the lr moves nothing (:mod:`.mode_advice`).
    """
    if trend.kind == "overshot":  # the oscillation the diagnosis may flag is the overshoot's
        return overshoot_evidence(trend, momentum)
    evidence = _tau_evidence(trend, analysis, reward_range, run.n_points)
    if trend.kind in ("fell", "pinned"):
        return evidence
    return (instability_evidence(diagnosis)
            or concentration_evidence(diagnosis, run, flat=trend.kind == "flat") or evidence)


def _slow_mode(tau: dict[str, Any], run: Run, reward_range: tuple[float, float] | None, *,
               runs_on: bool = False) -> tuple[dict[str, Any], str | None]:
    """Return the slow mode's evidence when the run still rises at its end, else ``tau``.

    It sets the advice when the relaxation time the run's end implies (the median of
    :func:`~grpodyn.numerics.advise.late_relaxation`, which sits at the reward range's cap where
    the median gain to come fills the room left; its 2.5% quantile, a lower bound, where the
    median shows no decay) exceeds the whole run's, and, when the whole run's tau is measured,
    its interval lies above it (a single relaxation's end rises too, at its own tau), unless
    the whole run already moves on beyond its fitted saturating curve (``runs_on``: the
    plateau's own test, :func:`~grpodyn.numerics.forecast.plateau_summary`, has rejected one
    timescale); with a warning. ``estimate`` says which of the three the value is.
    """
    if tau["kind"] in ("stability_limit", "instability", "policy_concentration", "overshoot"):
        return tau, None
    late = late_relaxation(run.steps, run.reward,
                           ceiling=None if reward_range is None else reward_range[1])
    if late is None or not late["rising"]:
        return tau, None
    lo, mid, hi = late["tau"]
    whole = tau["value"] if tau["value"] is not None else (tau["lower"] or 0.0)
    usable = lo if math.isinf(mid) else mid  # an unbounded centre: its lower end, if finite
    if math.isinf(usable) or not usable > whole:
        return tau, None
    if tau["kind"] == "measured_tau" and lo <= whole and not runs_on:  # one timescale within
        return tau, None                                # the slow mode's interval: not a second
    estimate = ("lower_quantile" if math.isinf(mid) else "median"
                if late["remaining"][1] < late["room"] else "range_cap")
    method, warning = slow_mode_words(late, estimate, tau)
    return {"kind": "slow_mode", "value": None if math.isinf(mid) else mid, "lower": lo or None,
            "upper": None if math.isinf(hi) else hi, "status": "bound", "estimate": estimate,
            "method": method,
            "whole_run": {key: tau[key] for key in ("kind", "value", "lower", "upper")}}, warning


def _ratios(tau: dict[str, Any], goal: float, p: float, margin: float, *, momentum: float,
            lr_share: float | None, horizon_given: bool
            ) -> tuple[str, float, list[float | None], str]:
    """Direction, lr ratio and its interval from the tau evidence (see the module).

    Without a horizon of the user's the raise goes on to the headroom toward the fastest
    settling that the lower end of tau allows at the lr's peak (:func:`_headroom`) when that is
    the larger, and one raise is at most 1 / margin (the interval keeps what the evidence asks).
    """
    goal_based = _goal_ratios(tau, goal, p, margin)
    if goal_based[0] == "lower":
        return goal_based
    if horizon_given:
        direction, ratio, interval, why = goal_based
        if direction == "raise" and ratio > 1 / margin:
            why += (f"; x{ratio:.3g} is the lr the horizon asks for, more than the "
                    f"x{1 / margin:g} (1 / margin) one raise takes when no horizon is given: "
                    "the run does not bound its stiffest direction, which sets the stability "
                    f"limit, so go there in raises of at most x{1 / margin:g} and watch for a "
                    "fall after each")
        return direction, ratio, interval, why
    direction, ratio, interval, why = _headroom(tau, p, momentum, margin, goal_based,
                                                lr_share) or goal_based
    if direction == "raise" and ratio > 1 / margin:
        why += (f"; one step is at most x{1 / margin:g} (1 / margin, the inverse of the step "
                "down after a fall): the rest is reached in steps, advised again after each")
        ratio = 1 / margin
    return direction, ratio, interval, why


def _headroom(tau: dict[str, Any], p: float, momentum: float, margin: float,
              goal_based: tuple[str, float, list[float | None], str], lr_share: float | None
              ) -> tuple[str, float, list[float | None], str] | None:
    """Return the headroom raise (:func:`~grpodyn.numerics.advise.headroom_raise`) if larger.

    Where tau was read on the lr clock it is read at the lr's peak, where the relaxation time
    is ``lr_share`` times the run's (at the mean lr).
    """
    if tau["kind"] not in ("measured_tau", "slow_mode", "stiffness_upper_bound") \
            or not tau["lower"]:
        return None
    share = 1.0 if lr_share is None else lr_share
    head = headroom_raise(tau_lower=tau["lower"] * share,
                          tau_upper=None if tau["upper"] is None else tau["upper"] * share,
                          momentum=momentum, exponent=p, margin=margin)
    if head is None or not head["ratio"] > max(goal_based[1], 1.0):
        return None
    least = goal_based[1] if goal_based[0] == "raise" else 1.0
    capped = (f"; one step is at most x{1 / margin:g} (1 / margin: a fall there sends the lr "
              "back to the run's)" if head["capped"] else "")
    at_peak = "" if lr_share is None else f" at the lr's peak ({schedule_words(lr_share)})"
    return ("raise", head["ratio"], [least, head["upper"]],
            f"headroom: {tau_at_least(tau['lower'])} bounds the slow mode's stiffness{at_peak}, "
            f"{stiffness_at_most(head['stiffness'])} (the map's dominant pole, exact: "
            "(1 - beta) / tau overstates k near critical damping); the fastest into the 10% "
            "band for good "
            f"(k_s = {head['target']:.3g}, an overshoot within the band; critical damping, "
            f"k_c = (1 - sqrt(beta))^2 = {(1 - math.sqrt(momentum)) ** 2:.3g}, is the fastest "
            f"without overshoot) is {factor_words(head['settling'])} the run's lr away{capped}; "
            "the horizon's goal alone "
            + (f"asks x{goal_based[1]:.3g}" if goal_based[0] == "raise" else "keeps the lr"))


def _goal_ratios(tau: dict[str, Any], goal: float, p: float, margin: float
                 ) -> tuple[str, float, list[float | None], str]:
    """Direction, lr ratio and interval that reach the horizon's goal (see the module)."""
    if tau["kind"] == "stability_limit":
        return ("lower", margin, [None, margin],
                f"the run's lr is at or beyond the limit (k >= k_max): lr_limit <= lr, and "
                f"{margin:.0%} of the limit (the margin target) is at most x{margin:g} the "
                "run's lr")
    if tau["kind"] == "instability":
        return ("lower", margin, [None, margin],
                f"the steps overshoot: the stiffness is near its stability limit; x{margin:g} "
                "(the margin, as after a fall), before the oscillation grows into one")
    if tau["kind"] == "policy_concentration":
        return ("lower", margin, [None, margin],
                f"the policy moved while the reward did not follow: its steps are too large "
                f"for the signal; x{margin:g} (the margin, as after a fall), with the remedy of "
                "a concentration")
    if tau["kind"] == "overshoot":
        return overshoot_ratios(tau, margin)

    def ratio(value: float | None) -> float | None:
        if value is None:
            return None
        out = lr_ratio_for_relaxation(tau=value, goal=goal, exponent=p)
        return None if math.isinf(out) else out

    lo, hi = ratio(tau["lower"]), ratio(tau["upper"])
    interval = [lo, hi]
    if tau["kind"] == "slow_mode" and (ratio(tau["value"]) or lo or 0) > 1:
        central = ratio(tau["value"]) or lo
        return ("raise", central, interval, f"the slow mode's {slow_tau_words(tau)} is longer "
                f"than the goal {goal:.3g}: lr x (tau / goal)^(1/|p|) = x{central:.3g}")
    if tau["kind"] == "measured_tau":
        central = ratio(tau["value"])
        if central > 1:
            return ("raise", central, interval, f"tau = {tau['value']:.3g} steps is longer "
                    f"than the goal {goal:.3g}: lr x (tau / goal)^(1/|p|) = x{central:.3g}")
        return ("keep", 1.0, interval, f"tau = {tau['value']:.3g} steps already meets the goal "
                f"{goal:.3g}: any lr above x{central:.3g} reaches it; a higher one only narrows "
                "the stability margin")
    if lo is not None and lo > 1:
        return ("raise", lo, interval, f"{tau_at_least(tau['lower'])}: lr {factor_words(lo)} at "
                "least to reach the goal; a larger raise is not supported by this run")
    if tau["kind"] == "not_determined":
        return ("keep", 1.0, interval, "the run bounds neither tau nor the stiffness: no "
                "change is argued for")
    return ("keep", 1.0, interval, "the bounds on tau do not exclude the goal: keep the lr "
            "(the interval says how far the data allow)")


def _value(entry: Any) -> Any:
    return None if entry is None else entry.value


def _analysis(run: Run, momentum: float, reward_range: tuple[float, float] | None
              ) -> tuple[RunAnalysis | None, str | None]:
    """Return the run's analysis, or None with the reason when it cannot be fitted."""
    try:
        return analyse_run(run, momentum=momentum, reward_range=reward_range,
                           diagnose_run=False), None
    except InputError as exc:
        return None, f"no curve fit ({exc}); the advice rests on the trend alone"


def advise_log(run: Run, *, momentum: float | None = None, steps: float | None = None,
               reward_range: tuple[float, float] | None = None, margin: float = MARGIN,
               sweep: Any = None, sweep_short: Sequence[Any] = ()) -> LogAdvice:
    """Advise the learning rate from one run (see the module for the reasoning).

    Parameters
    ----------
    run : Run
        A loaded run (:func:`grpodyn.empirical.logs.loaders.load_run`).
    momentum : float, optional
        beta (Adam's beta1); default the log's, else 0.9 assumed (said in the reasoning).
    steps : float, optional
        Horizon [steps]: the lr that reaches 90% of the attainable gain within it; default
        the run's own length.
    reward_range : (lo, hi), optional
        The range the reward can reach (default inferred as by the analysis).
    margin : float
        Fraction of the stability limit a run that fell is sent to (the margin target).
    sweep : grpodyn.empirical.logs.sweep.SweepFit, optional
        A joint fit of runs of the same model and task (``grpodyn sweep``): its tau-lr and B G
        exponents replace the theory's where it determines them, and the lowest lr at which
        one of its runs fell caps the advice (:mod:`.sweep_advice`); default p = -1 (status
        ``theory``), the B G exponent not determined, no cap.
    sweep_short : sequence of SweepRun
        Runs of the sweep too short for its joint fit (under ten points), read for falls only.

    Returns
    -------
    LogAdvice
        Recommendation, basis, interval, status, warnings and reasoning.

    Raises
    ------
    InputError
        On fewer than 3 points or a bad option (a ``sweep`` not a ``SweepFit``), naming it.
    """
    margin, sweep_short = _checked_options(sweep, margin, sweep_short)
    _check_run(run)
    optimizer = _value(run.meta.optimizer)
    family = None if sweep is None else run_optimizer(optimizer, run.format)  # the sweep's name
    exponent = dict(THEORY_EXPONENT if sweep is None else exponent_from_sweep(sweep, family))
    declared, _ = infer_reward_range(run, reward_range)
    floor = None if declared is None else declared[0]
    diagnosis = run_diagnosis(run)
    momentum, momentum_source = _momentum_of(run, momentum)
    known_beta = None if momentum_source == "assumed" else momentum
    trend = agree_with_state(run_trend(run.steps, run.reward, floor=floor), run, diagnosis,
                             momentum=known_beta)
    warnings = group_batch_notes(run)
    analysis, why = _analysis(run, momentum, reward_range)
    if why is not None:
        warnings.append(why)
    bounds = declared if analysis is None else analysis.reward_range
    horizon = float(steps) if steps is not None else trend.span
    goal, floored = goal_relaxation(steps=horizon, momentum=momentum)
    tau, two_scales = _slow_mode(_evidence(run, trend, analysis, bounds, diagnosis, momentum),
                                 run, bounds,
                                 runs_on=analysis is not None and "runs_on_t" in analysis.plateau)
    if two_scales is not None:
        warnings.append(two_scales)
    lr, lr_source = _run_lr(run, analysis)
    schedule = logged_schedule(run.steps, learning_rate_of(run))
    share = None if schedule is None or tau.get("model") != "exponential_lr" else schedule.share
    direction, ratio, interval, why_ratio = _ratios(tau, goal, exponent["value"], margin,
                                                    momentum=momentum, lr_share=share,
                                                    horizon_given=steps is not None)
    fall = None
    if sweep is not None:
        (direction, ratio, interval), fall = sweep_cap(
            sweep, (direction, ratio, interval), run=run, lr=lr, optimizer=family,
            settings={k: _value(getattr(run.meta, k)) for k in LIMIT_SETTINGS}, margin=margin,
            floor=floor, short_runs=sweep_short, momentum=known_beta)
        warnings += fall.pop("warnings")
    headroom, beta = why_ratio.startswith("headroom"), assumed_beta(momentum, momentum_source)
    on_beta_ratio = _ratio_on_beta(tau, direction, headroom or floored, fall)
    if beta and on_beta_ratio:
        why_ratio += f"; this ratio rests on beta = {momentum:g}, assumed"
    if tau.get("model") == "inertial":  # its tau is (1 - beta) / k
        tau = {**tau, "method": tau["method"] + beta, "momentum_source": momentum_source}
    text = basis_text(tau, momentum, momentum_source)
    reasoning = [f"the reward {trend.text}", text, _goal_words(horizon, goal, floored, beta),
                 f"tau ~ lr^p with p = {exponent['value']:.3g} ({exponent['status']}: "
                 f"{exponent['reason']})", why_ratio] + ([fall["text"]] if fall else [])
    warnings += caveats(direction, trend, run, steps, headroom=headroom,
                         bounded=tau["kind"] != "not_determined",
                         plateau=None if analysis is None else analysis.plateau)
    warnings += state_notes(tau, diagnosis)
    warnings += goal_warnings(horizon, goal, momentum, momentum_source, headroom=headroom,
                              floored=floored)
    stiffness = stiffness_entry(tau, momentum, lr, momentum_source, share)
    warnings += step_clock_warnings(tau, stiffness, schedule)
    group_batch = group_batch_effect(run, optimizer, None if sweep is None
                                     else bg_exponent_from_sweep(sweep, family))
    notes, group_size = mode_notes(run, diagnosis, tau, direction, group_batch["group_size"])
    warnings += notes
    measured = {"lr": lr, "lr_source": lr_source or "unknown: give --lr for an absolute lr "
                "(in Python run.meta.with_overrides(lr=...))",
                "momentum": momentum, "momentum_source": momentum_source,
                "tau": tau["value"], "tau_status": tau["status"],
                "kappa": stiffness.get("kappa"), "stiffness": stiffness.get("value"),
                "stiffness_at_peak": stiffness.get("at_peak", {}).get("value"),
                "n_points": run.n_points, "span": trend.span}
    recommendation = {"lr": None if lr is None else lr * ratio, "lr_ratio": ratio,
                      "direction": direction, "group_size": group_size,
                      "batch": group_batch["batch"]}
    interval_out = interval_entry(interval, lr, direction, ratio)
    on_beta = on_momentum(tau, stiffness, floored=floored, ratio=on_beta_ratio)
    if momentum_source == "assumed":
        reasoning.insert(0, f"momentum not in the log: Adam's default beta1 = {momentum:g} "
                         "assumed; give momentum= (--momentum) if the run used another; "
                         f"resting on it: {', '.join(on_beta) or 'no number of this advice'}")
    basis = {"kind": tau["kind"], "tau": tau, "stiffness": stiffness, "goal_tau": goal,
             "horizon": horizon, "trend": trend.kind, "trend_text": trend.text,
             "noise": trend.sigma, "exponent": exponent, "text": text,
             "momentum": {"value": momentum, "source": momentum_source, "bears_on": on_beta},
             "sweep_fall": fall}
    return LogAdvice(run.source, run.run_name, recommendation, basis, interval_out,
                     tau["status"], group_batch, measured, list(dict.fromkeys(warnings)),
                     reasoning)


def _ratio_on_beta(tau: dict[str, Any], direction: str, raised_on_beta: bool,
                   fall: dict[str, Any] | None) -> bool:
    """Return whether the lr ratio rests on beta.

    It does for a raise the headroom or the goal's floor set, and for a step down toward k_s
    from an overshoot (k_s and k(OS) are functions of beta); not where a sweep's fall moved it.
    """
    rests = (raised_on_beta and direction != "lower"
             or tau["kind"] == "overshoot" and direction == "lower")
    return rests and not (fall and fall["moved"])


def _goal_words(horizon: float, goal: float, floored: bool, beta: str) -> str:
    """Say the horizon's goal tau, and whether the fastest settling floored it."""
    return (f"goal: 90% of the attainable gain within {horizon:g} steps: tau_goal = {goal:.3g} "
            "steps" + (" (floored at the fastest settling into the 10% band, T_s / ln "
                       f"10{beta}: no lr gets there sooner)" if floored else " (N / ln 10)"))


def _check_run(run: Run) -> None:
    """Refuse a run with fewer than 3 points or magnitudes beyond the analyses', naming it."""
    check_magnitudes(run)
    if run.n_points < 3:
        raise TooFewPoints(f"{run.source}: advice needs at least 3 logged points, got "
                           f"{run.n_points}")


def _checked_options(sweep: Any, margin: float, sweep_short: Any
                     ) -> tuple[float, tuple[Any, ...]]:
    """Refuse a bad ``sweep``, ``sweep_short`` or ``margin``; return the margin, the short runs."""
    if sweep is not None:
        from grpodyn.empirical.logs.sweep_fit import SweepFit
        if not isinstance(sweep, SweepFit):  # a path: its runs are to be fitted first
            raise InputError(f"sweep: expected a SweepFit (grpodyn.fit_sweep), got {sweep!r:.60}")
    from grpodyn.empirical.logs.sweep_runs import SweepRun
    try:
        short = () if sweep_short is None else tuple(sweep_short)
    except TypeError:
        raise InputError(f"sweep_short: expected a sequence of SweepRuns, got "
                         f"{type(sweep_short).__name__}") from None
    odd = [r for r in short if not isinstance(r, SweepRun)]
    if odd:
        raise InputError(f"sweep_short: expected SweepRuns (load_sweep_run), got {odd[0]!r:.60}")
    if short and sweep is None:
        raise InputError("sweep_short: the short runs of a sweep are read with that sweep; give "
                         "sweep= too")
    margin = check_fraction("margin", margin)
    if not margin < 1:
        raise InputError(f"margin must lie in (0, 1), got {margin}")
    return margin, short


def _run_lr(run: Run, analysis: RunAnalysis | None) -> tuple[float | None, str | None]:
    """Return the run's lr with its source (the analysis's, else the log's), or (None, None)."""
    if analysis is not None and analysis.lr is not None:
        return analysis.lr, analysis.lr_source
    if run.meta.lr is not None and isinstance(run.meta.lr.value, (int, float)):
        return float(run.meta.lr.value), run.meta.lr.source
    return None, None


def _momentum_of(run: Run, momentum: float | None) -> tuple[float, str]:
    """Return beta with its source: the user's, else the log's, else 0.9 assumed."""
    if momentum is None and run.meta.momentum is None:
        return ASSUMED_MOMENTUM, "assumed"
    source = "user" if momentum is not None else run.meta.momentum.source
    value = run.meta.momentum.value if momentum is None else momentum
    return float(check_momentum(value, scalar=True)), source
