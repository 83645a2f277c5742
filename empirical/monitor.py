"""A framework-free monitor of a GRPO run: forecast, stability margin and flags as it trains.

For custom training loops, verl or any trainer that hands out a dict of metrics per step::

    from grpodyn import Monitor

    monitor = Monitor(momentum=0.9, group_size=8)
    for step in range(steps):
        metrics = train_step()                      # {"reward": ..., "entropy": ..., ...}
        state = monitor.update(step, metrics)
        if "dynamical_instability" in state.flags or state.early_warning:
            break

Every ``refit_every`` updates (once ``min_points`` rewards are in) the run so far is analysed
by :func:`grpodyn.empirical.logs.run_analysis.analyse_run`: the plateau r*, the relaxation time
tau and the stability margin 1 - k / k_max of the overdamped mean-field map
(k = (1 - momentum) / tau, k_max = 2 (1 + momentum); docs/theory.md sections 3 and 5), each with
the status that analysis gives it. By default it fits the exponential law alone, weighed by BIC
against a level and a flat line (``models=("exponential",), stack=False``; :data:`BASES` and
``state.basis`` say so): the status rules are those of ``analyse_run``, but on fewer models,
so where another law (a power law, a sigmoid) fits the run better, ``grpodyn report LOG``,
which weighs five curve models by stacking, can find the plateau or tau not determined where
the monitor finds them determined. ``full_analysis=True`` runs that analysis (``analyse_run``'s
defaults, without its diagnosis): the plateau and tau with the statuses ``analyse_run`` gives
the same steps, at about eight times the cost (over 1000 updates refitted every 10: a mean of
24 ms an update against 3 ms, one analysis up to 0.5 s). Every ``diagnose_every`` updates
:func:`grpodyn.empirical.diagnostics.diagnose.diagnose` names the failure modes it flags
(docs/theory.md section 10). At every update from 10 rewards on,
:func:`grpodyn.empirical.diagnostics.early_warning.early_warning` looks for the precursors of a
collapse at the last steps (``state.early_warning``: a warning, not a verdict), and the
warning reported is the one standing at the last update, by the rule of
``early_warning.standing_warning`` (one episode, dated by its first onset, stands after its
precursors fall silent, except at a diagnosis that carries a verdict, ``early_warning.reviews``).
So at an update where the monitor diagnoses, its warning is the one ``grpodyn diagnose LOG
--until STEP`` (``diagnose(prefix(run, STEP))``) reports for the steps fed, which supposes a
diagnosis at STEP; between two diagnoses the monitor can still hold a warning that command
drops. With ``diagnose_every=1`` the two agree at every step. Until the first
diagnosis the state says that none has run and when it will (``headline``;
``diagnosed_at`` is None), so that no flag is not read as health.

The held-out reward (TRL ``eval_reward``, logged in an evaluation event of its own, without
the training reward) joins the training step of its event's step, as the log loaders align it.
A non-finite reward (NaN, an infinity), one beyond :data:`REWARD_MAGNITUDE_MAX` in
magnitude, a reward that is not one number (a per-sample array) and a step not after the last
recorded one (a restarted step counter) are skipped with a warning at the first of each kind
and a note in ``state.notes``: a monitor must not stop the training it watches, and the fits
lose their precision there.
The TRL callback (:mod:`grpodyn.empirical.callback`) is a thin layer on this class. Needs numpy
and scipy only.
"""

from __future__ import annotations

import math
import numbers
import warnings
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from grpodyn.empirical.diagnostics.diagnose import MODE_POINTS, diagnose
from grpodyn.empirical.diagnostics.early_warning import MIN_POINTS as WARNING_POINTS
from grpodyn.empirical.diagnostics.early_warning import early_warning, reviews
from grpodyn.empirical.logs.loaders import METRIC_ALIASES, Hyperparameter, Run, RunMeta
from grpodyn.empirical.logs.run_analysis import FIT_MODELS, analyse_run, not_determined
from grpodyn.ground import InputError, check_int, check_momentum, check_reward_range, finite_json
from grpodyn.ground.checks import REWARD_MAGNITUDE_MAX, check_group_size

__all__ = ["Monitor", "MonitorState", "GRPODynamicsWarning", "REWARD_MAGNITUDE_MAX", "BASES"]

#: Models fitted online by default: the exponential law alone (the fit is the costly part).
ONLINE_MODELS = ("exponential",)
#: What the plateau and tau rest on (``MonitorState.basis``), by ``full_analysis``.
BASES = {False: "the exponential law alone, weighed by BIC against a level and a flat line",
         True: "the analysis of grpodyn report LOG: five curve models, weighed by stacking"}
#: Rewards needed before the diagnosis is run: the diagnosis's own floor for judging the modes
#: (fewer, the monitor looks for the early warning alone).
MIN_DIAGNOSE_POINTS = MODE_POINTS
#: Updates without a reward, before any was seen, after which the monitor says so (once).
NO_REWARD_HINT = 5
#: The rewards the monitor skips, by kind: what they are, and why they are skipped.
_SKIPPED = {"beyond": (f"beyond {REWARD_MAGNITUDE_MAX:g} in magnitude",
                       "the fits lose their precision there: log a rescaled reward"),
            "not finite": ("not finite", "the fits read finite rewards only (a diverged step or "
                                         "a logging error?)"),
            "not a number": ("not one number", "give the step's mean reward as a float, not a "
                                               "per-sample array or a string"),
            "late held-out": ("held-out, arriving after later steps, for a step that has one "
                              "or more than a logging interval before the first",
                              "a step already passed keeps the held-out reward it holds"),
            "not after": ("at a step not after the last recorded one",
                          "an update of a recorded step, or a restarted step counter: the "
                          "monitor keeps the run it has; start a new Monitor for a new run")}

#: What follows a reward outside the declared range (the warning and the note say it).
_OUTSIDE = ("kept, and the analysis infers the range from the rewards from then on; declare a "
            "range that holds every reward the run can log")


class GRPODynamicsWarning(UserWarning):
    """A failure mode was flagged during training, or the monitor cannot read the metrics."""


def _number(value: Any) -> float | None:
    """Return a logged number as a float, None for anything else.

    A Python or numpy number, or an array or tensor of one element (on any numpy), is one
    number; a bool, a string or several values are not. A NaN or an infinity is returned as
    it is.
    """
    if value is None or isinstance(value, (bool, np.bool_, str, bytes)):
        return None
    if not isinstance(value, np.ndarray):  # float() of an array is deprecated in numpy
        try:
            return float(value)
        except (TypeError, ValueError):
            pass
    try:
        array = np.asarray(value)
    except (TypeError, ValueError, RuntimeError):
        return None
    if array.size != 1 or array.dtype.kind not in "iuf":
        return None
    return float(array.reshape(()))


def _real(value: Any) -> float | None:
    """Return a logged number as a float, None for a non-finite one or anything else."""
    number = _number(value)
    return number if number is not None and math.isfinite(number) else None


def _alias(name: str, metrics: Mapping[str, Any]) -> str | None:
    """Return the first of the canonical metric ``name``'s aliases present in ``metrics``."""
    return next((k for k in METRIC_ALIASES[name] if k in metrics), None)


def _logged(name: str, metrics: Mapping[str, Any]) -> float | None:
    """Return the canonical metric ``name`` under the first of its aliases present, or None.

    A non-finite number is returned as it is; a value that is no number is None.
    """
    key = _alias(name, metrics)
    return None if key is None else _number(metrics[key])


def _read(name: str, metrics: Mapping[str, Any]) -> float | None:
    """Return the canonical metric ``name`` from ``metrics`` if finite, else None."""
    value = _logged(name, metrics)
    return value if value is not None and math.isfinite(value) else None


def _entry(entry: dict[str, Any], reward_range: tuple[float, float] | None = None) -> str:
    """Say an entry of the state in a few characters: its value, or its status and bound.

    A value at the reward range's edge (``at_bound``) is shown with it; a one-sided bound that
    is an edge of ``reward_range`` is the range, not a measurement, and is left out.
    """
    value = entry.get("value")
    if isinstance(value, str):
        return value
    status = entry.get("status", "?")
    if value is not None and status == "determined":
        return f"{value:.4g}"
    if value is not None and status == "at_bound":
        return f"at_bound ({value:.4g})"
    side = entry.get("bound")
    bound = entry.get(side) if side in ("lower", "upper") else None
    if bound is None or bound in (reward_range or ()):
        return status
    return f"{status} ({'>=' if side == 'lower' else '<='} {bound:.4g})"


@dataclass(frozen=True)
class MonitorState:
    """What a :class:`Monitor` knows after an update.

    Its repr is one line: the step, the points, the plateau, tau and the margin (a value to 4
    digits, or the status with any one-sided bound), the flags and any early warning.

    Attributes
    ----------
    step : float
        The last step recorded (optimizer steps).
    points : int
        Rewards recorded so far.
    plateau : dict
        The plateau r* (reward units): ``value`` and ``status``, or a one-sided ``lower`` /
        ``upper`` bound with the ``reason`` it is not determined (docs/theory.md section 3);
        a side the data do not bound holds the reward range's edge (see ``reward_range``).
        Read from the fits ``basis`` names.
    tau : dict
        The relaxation time in steps, with ``status`` and, when determined,
        ``steps_to_plateau`` (steps left until 95% of the way to the plateau, up or down).
    stability_margin : dict
        1 - k / k_max of the overdamped map (dimensionless; docs/theory.md section 5), with status.
    regime : dict
        The map's regime (theory.md 4) at the measured stiffness, or the lr peak's (section 9).
    limits : dict
        ``refresh_max`` and ``staleness_max``: the largest stable refresh interval and
        staleness in steps at the measured stiffness (docs/theory.md section 5), each with status.
    flags : tuple of str
        Failure modes the last diagnosis flagged (docs/theory.md section 10); empty before
        the first diagnosis too (``diagnosed_at`` tells the two apart).
    evidence : dict
        The evidence of each flagged mode, one line each.
    analysed_at : float or None
        The step of the last analysis (None before the first).
    early_warning : dict or None
        The early warning standing at the last update: ``step`` (where its precursors
        coincided; each line of ``evidence`` names the step its own signal began), ``signals``,
        ``evidence`` and ``remedy`` (a warning, not a verdict), as they were when it fired;
        it stands by the rule of ``early_warning.standing_warning`` (the module docstring).
        None when none stands.
    headline : str
        The last diagnosis's one-line verdict; before the first, that no diagnosis has run
        and when the first will.
    diagnosed_at : float or None
        The step of the last diagnosis (None before the first).
    reward_range : (float, float) or None
        The reward range the last analysis bounded the fits with (None before the first, or
        for an unbounded reward): a plateau bound on its edge is the range, not a measurement.
    notes : tuple of str
        What the monitor skipped and why (non-finite rewards, rewards beyond
        :data:`REWARD_MAGNITUDE_MAX`).
    basis : str or None
        What the plateau, tau and the numbers read from tau rest on (one of :data:`BASES`:
        the exponential law alone by default); None before the first analysis.
    """

    step: float
    points: int
    plateau: dict[str, Any] = field(default_factory=lambda: not_determined("too few points"))
    tau: dict[str, Any] = field(default_factory=lambda: not_determined("too few points"))
    stability_margin: dict[str, Any] = field(
        default_factory=lambda: not_determined("too few points"))
    regime: dict[str, Any] = field(default_factory=lambda: not_determined("too few points"))
    limits: dict[str, Any] = field(default_factory=dict)
    flags: tuple[str, ...] = ()
    evidence: dict[str, str] = field(default_factory=dict)
    analysed_at: float | None = None
    early_warning: dict[str, Any] | None = None
    headline: str = "not diagnosed yet"
    diagnosed_at: float | None = None
    reward_range: tuple[float, float] | None = None
    notes: tuple[str, ...] = ()
    basis: str | None = None

    def __repr__(self) -> str:
        """Return one line: step, points, plateau, tau, margin, flags and any early warning."""
        flags = (self.headline.split(":")[0] if self.diagnosed_at is None
                 else f"flags={list(self.flags)} (diagnosed at step {self.diagnosed_at:g})")
        warning = (f", early_warning at step {self.early_warning['step']:g}"
                   if self.early_warning else "")
        notes = f", {len(self.notes)} note{'s' * (len(self.notes) != 1)}" if self.notes else ""
        step = "no step yet" if not self.points else f"step={self.step:g}"
        return (f"MonitorState({step}, points={self.points}, "
                f"plateau={_entry(self.plateau, self.reward_range)}, tau={_entry(self.tau)}, "
                f"stability_margin={_entry(self.stability_margin)}, {flags}{warning}{notes})")

    def log_values(self) -> dict[str, float]:
        """Return the numbers the analysis determines, under ``grpodyn/`` keys, and only those.

        A one-sided plateau bound is logged on the side the data bound it; a side that holds
        the reward range's edge (``reward_range``) is the range, not a measurement, and is
        left out.

        Returns
        -------
        dict
            ``grpodyn/plateau`` (or ``grpodyn/plateau_lower`` / ``grpodyn/plateau_upper``),
            ``grpodyn/tau`` and ``grpodyn/steps_to_plateau`` (steps),
            ``grpodyn/stability_margin``; a number that is not determined is left out.
        """
        out = {}
        if self.plateau["status"] == "determined":
            out["grpodyn/plateau"] = self.plateau["value"]
        else:
            edges = self.reward_range or ()
            for side in ("lower", "upper"):
                bound = self.plateau.get(side)
                if bound is not None and bound not in edges:
                    out[f"grpodyn/plateau_{side}"] = bound
        if self.tau["status"] == "determined":
            out["grpodyn/tau"] = self.tau["value"]
            out["grpodyn/steps_to_plateau"] = self.tau["steps_to_plateau"]
        if self.stability_margin["status"] == "determined":
            out["grpodyn/stability_margin"] = self.stability_margin["value"]
        return out

    def to_dict(self) -> dict[str, Any]:
        """Return the state as strict-JSON values (keys as the attributes; NaN is None).

        Returns
        -------
        dict
            One key per attribute (``step``, ``points``, ``plateau``, ..., ``basis``), each
            value made of JSON types.
        """
        return finite_json({
            "step": self.step, "points": self.points, "plateau": self.plateau, "tau": self.tau,
            "stability_margin": self.stability_margin, "regime": self.regime,
            "limits": self.limits, "flags": self.flags, "evidence": self.evidence,
            "analysed_at": self.analysed_at, "early_warning": self.early_warning,
            "headline": self.headline, "diagnosed_at": self.diagnosed_at,
            "reward_range": self.reward_range, "notes": self.notes, "basis": self.basis})


class Monitor:
    """Online forecast, stability margin and diagnosis of a run, fed one step at a time.

    Parameters
    ----------
    momentum : float, optional
        Optimiser momentum (Adam's beta1); None leaves the stability margin not determined.
    group_size : int, optional
        G, completions per prompt, for the diagnosis (None: the diagnosis says it is unknown).
    reward_range : (float, float), optional
        The range the reward can reach (default: inferred as in ``grpodyn report LOG``).
    refit_every : int
        Analyse the run every this many updates (default 10).
    diagnose_every : int
        Diagnose the run every this many updates (0: never; default 20, from the 20th reward,
        the fewest a diagnosis judges: about 0.3 ms an update on average over a 1,000-step run,
        against 0.85 ms at 10; ``benchmarks/run.py --only callback``).
    min_points : int
        Rewards needed before the first analysis (default 30, at least 5).
    length_cap : int, optional
        The most tokens a completion may have (TRL ``max_completion_length``), for the early
        warning's approach to the cap where the truncated share is not among the metrics.
    full_analysis : bool
        Analyse as ``grpodyn report LOG`` does (five curve models, stacked), so that the
        plateau and tau have the statuses :func:`analyse_run` gives the same steps, at about
        eight times the cost; default False: the exponential law alone (see the module).

    Notes
    -----
    ``grpodyn diagnose LOG --until STEP`` reports the early warning a monitor fed the log's
    steps holds at STEP where that monitor diagnoses at STEP (the number of rewards recorded a
    multiple of ``diagnose_every``, from :data:`MIN_DIAGNOSE_POINTS` on; at every step with
    ``diagnose_every=1``). Between two diagnoses the monitor can hold a warning that the
    command, which supposes a diagnosis at STEP, has dropped.
    """

    def __init__(self, *, momentum: float | None = None, group_size: int | None = None,
                 reward_range: tuple[float, float] | None = None, refit_every: int = 10,
                 diagnose_every: int = 20, min_points: int = 30,
                 length_cap: int | None = None, full_analysis: bool = False) -> None:
        if momentum is not None and (isinstance(momentum, bool)
                                     or not isinstance(momentum, numbers.Real)):
            # check_momentum alone would read the string "0.9" as a number
            raise InputError(f"momentum: expected a number in [0, 1) (Adam's beta1), got "
                             f"{momentum!r}")
        self.momentum = None if momentum is None else float(check_momentum(momentum, scalar=True))
        self.group_size = None if group_size is None else check_group_size(group_size)
        self.reward_range = None if reward_range is None else check_reward_range(reward_range)
        self.refit_every = check_int("refit_every", refit_every, minimum=1)
        self.diagnose_every = check_int("diagnose_every", diagnose_every, minimum=0)
        self.min_points = check_int("min_points", min_points, minimum=5)
        self.length_cap = None if length_cap is None else check_int("length_cap", length_cap,
                                                                    minimum=1)
        if not isinstance(full_analysis, bool):
            raise InputError(f"full_analysis: expected True or False, got {full_analysis!r:.40}")
        self.full_analysis = full_analysis
        self.steps: list[float] = []
        self.rewards: list[float] = []
        self.metrics: dict[str, list[float]] = {name: [] for name in METRIC_ALIASES
                                                if name != "reward"}
        self.state = MonitorState(step=math.nan, points=0, headline=self._undiagnosed())
        self._without_reward = 0  # updates without a reward before the first one
        # the first warning of the latest episode; whether the last update found one
        self._onset: dict[str, Any] | None = None
        self._warning_now = False
        self._pending_heldout: tuple[float, float] | None = None  # (step, value) of an eval
        # an evaluation before the first recorded step: placed there once the second step gives
        # the logging interval, if it lies within one interval before it (as the loaders do)
        self._before_first: tuple[float, float] | None = None
        # rewards skipped, by kind: (how many, (step, reward) of the first)
        self._skipped: dict[str, tuple[int, tuple[float, str]]] = {}
        # rewards kept outside the declared reward_range: (how many, (step, reward) of the first)
        self._outside: tuple[int, tuple[float, str]] | None = None

    def __repr__(self) -> str:
        """Return one line: the points seen, the last step, the flags and any early warning."""
        state = self.state
        step = "no step yet" if not state.points else f"last step {state.step:g}"
        flags = (state.headline.split(":")[0] if state.diagnosed_at is None
                 else f"flags={list(state.flags)} (diagnosed at step {state.diagnosed_at:g})")
        warning = ", early_warning" if state.early_warning else ""
        return f"Monitor({state.points} point{'s' * (state.points != 1)}, {step}, {flags}{warning})"

    def _undiagnosed(self) -> str:
        """Say that no diagnosis has run, and at how many rewards the first will."""
        if not self.diagnose_every:
            return "never diagnosed (diagnose_every=0): the diagnosis is off"
        first = self.diagnose_every * math.ceil(MIN_DIAGNOSE_POINTS / self.diagnose_every)
        floor = (f"; a diagnosis needs {MIN_DIAGNOSE_POINTS}"
                 if first != self.diagnose_every else "")
        return (f"not diagnosed yet: the first diagnosis runs when {first} rewards are recorded "
                f"(diagnose_every={self.diagnose_every}{floor})")

    def update(self, step: float, metrics: Mapping[str, Any]) -> MonitorState:
        """Record one step's metrics; analyse and diagnose when due.

        Parameters
        ----------
        step : float
            The optimizer step of these metrics (increasing).
        metrics : mapping
            The trainer's metrics of this step, under any key the loaders know (TRL, verl,
            OpenRLHF names); the reward is required, the others are optional.

        Returns
        -------
        MonitorState
            The current state; unchanged when ``metrics`` holds no reward. Metrics without a
            reward but with a held-out reward (an evaluation event: TRL ``eval_reward``) give
            that step its held-out reward, as the log loaders align it: the last recorded step
            when it is ``step``, or the next one recorded when that is ``step`` (an evaluation
            logged before its training step); read at the next analysis and diagnosis. A
            reward that is not finite, is beyond :data:`REWARD_MAGNITUDE_MAX` in magnitude, is
            not one number, or comes at a ``step`` not after the last recorded one is skipped,
            and ``notes`` says so.

        Raises
        ------
        InputError
            When ``metrics`` is not a mapping (a dict of metric names to values), or ``step``
            is not a finite number.

        Warns
        -----
        GRPODynamicsWarning
            Once, when the first ``NO_REWARD_HINT`` updates hold no finite reward: the keys
            seen and the names the monitor reads the reward under; and once for each kind of
            reward skipped (above), naming its step and value.
        """
        if not isinstance(metrics, Mapping):
            raise InputError(f"metrics: expected a mapping of metric names to values (e.g. "
                             f"{{'reward': 0.5}}), got {type(metrics).__name__} {metrics!r:.60}")
        given, step = step, _real(step)
        if step is None:
            raise InputError(f"step: expected a finite number (the optimizer step), got "
                             f"{type(given).__name__} {given!r:.40}")
        reward = _logged("reward", metrics)
        if reward is None:
            key = _alias("reward", metrics)
            given = None if key is None else metrics[key]
            held = self._held_out(step, metrics)
            if given is not None:
                self.state = self._skip(step, given, "not a number")
            elif not held and not self.steps:
                self._hint_no_reward(metrics)
            return self.state
        if not abs(reward) <= REWARD_MAGNITUDE_MAX:  # NaN too
            self.state = self._skip(step, reward, "beyond" if math.isfinite(reward)
                                    else "not finite")
            return self.state
        if self.steps and step <= self.steps[-1]:
            self.state = self._skip(step, reward, "not after")
            return self.state
        if self.reward_range and not self.reward_range[0] <= reward <= self.reward_range[1]:
            self._keep_outside(step, reward)
        pending, self._pending_heldout = self._pending_heldout, None
        if pending and pending[0] > step:  # an evaluation of a later step, fed early
            self._pending_heldout, pending = pending, None
        elif pending and not self.steps and pending[0] < step:
            self._before_first, pending = pending, None
        self.steps.append(step)
        self.rewards.append(reward)
        for name, values in self.metrics.items():
            value = _read(name, metrics)
            if value is None and name == "heldout_reward" and pending:
                value = pending[1]
            values.append(math.nan if value is None else value)
        self._place_before_first()
        points = len(self.steps)
        state = replace(self.state, step=step, points=points)
        due_fit = points >= self.min_points and points % self.refit_every == 0
        due_diagnosis = self.diagnose_every and points % self.diagnose_every == 0
        due_warning = points >= WARNING_POINTS
        if due_fit or due_diagnosis or due_warning:
            run = self.run()
            if due_fit:
                state = self._analyse(state, run)
            warning = early_warning(run) if due_warning else None
            if warning is not None and not self._warning_now:
                # a new episode; found again at the next updates, it keeps its first onset
                self._onset = warning.to_dict()
                state = replace(state, early_warning=self._onset)
            self._warning_now = warning is not None
            if due_diagnosis:
                state = self._diagnose(state, run, fresh_warning=warning is not None)
        self.state = state
        return state

    def _place_before_first(self) -> bool:
        """Give an evaluation before the first recorded step to it, once the interval is known.

        From the second recorded step: placed where it lies within one logging interval before
        the first and the first logs no value of its own, else dropped (the loaders' rule);
        returns whether one was placed.
        """
        if self._before_first is None or len(self.steps) < 2:
            return False
        (at, value), self._before_first = self._before_first, None
        held = self.metrics["heldout_reward"]
        placed = self.steps[0] - at <= self.steps[1] - self.steps[0] and math.isnan(held[0])
        if placed:
            held[0] = value
        return placed

    def _held_out(self, step: float, metrics: Mapping[str, Any]) -> bool:
        """Give the held-out reward of an evaluation event to its step; False when it has none.

        Aligned as the loaders align it: to the recorded step of the same step number, which
        is the last one recorded or, for an evaluation logged before its training step, the
        next one; one at a step that records no reward (an evaluation before training, at step
        0; evaluations every 25 steps, training logged every 10) goes to the next recorded
        step unless that step logs its own, the one at the latest step of several; one before
        the first recorded step goes to it only within one logging interval
        (:meth:`_place_before_first`).
        """
        value = _read("heldout_reward", metrics)
        if value is None:
            return False
        pending = self._pending_heldout
        if self.steps and step == self.steps[-1]:
            self.metrics["heldout_reward"][-1] = value
        elif self.steps and step < self.steps[-1]:
            self._late_held_out(step, value)
        elif (not self.steps or step > self.steps[-1]) and (pending is None
                                                          or step >= pending[0]):
            self._pending_heldout = (step, value)  # of several, the nearest to the next step
        return True

    def _late_held_out(self, step: float, value: float) -> None:
        """Give an evaluation that arrives after later steps to its step, as the loaders would.

        To the first recorded step at or after ``step`` where that one has no held-out reward
        of its own, one before the first step by :meth:`_place_before_first`; else it is
        dropped, with a warning and a note.
        """
        held = self.metrics["heldout_reward"]
        at = int(np.searchsorted(self.steps, step))
        if at == 0:  # before the first step: its rule, once the interval is known
            self._before_first = (step, value)
            if len(self.steps) > 1 and not self._place_before_first():
                self.state = self._skip(step, value, "late held-out")
        elif math.isnan(held[at]):
            held[at] = value
        else:
            self.state = self._skip(step, value, "late held-out")

    def _skip(self, step: float, reward: Any, kind: str) -> MonitorState:
        """Skip a reward of a kind of ``_SKIPPED``: not finite, too large, not one number, late.

        Warn at the first of each kind; the state's notes count them all, one note a kind.
        """
        shown = (f"{reward:.3g}" if isinstance(reward, float)
                 else f"{type(reward).__name__} {reward!r:.40}")
        count, first = self._skipped.get(kind, (0, (step, shown)))
        self._skipped[kind] = (count + 1, first)
        if not count:
            warnings.warn(f"grpodyn Monitor: reward {shown} at step {step:g} skipped: "
                          f"{_SKIPPED[kind][0]}; {_SKIPPED[kind][1]}", GRPODynamicsWarning,
                          stacklevel=3)
        return replace(self.state, notes=self._notes())

    def _keep_outside(self, step: float, reward: float) -> None:
        """Keep a reward outside the declared ``reward_range``; the analysis infers the range.

        Kept for the diagnosis and the early warning; the declared range no longer holds the
        run, so the fits stop reading it. Warn at the first; the state's notes count them.
        """
        count, first = self._outside or (0, (step, f"{reward:.3g}"))
        self._outside = (count + 1, first)
        if not count:
            warnings.warn(f"grpodyn Monitor: reward {reward:.3g} at step {step:g} lies outside "
                          f"reward_range {list(self.reward_range)}: {_OUTSIDE}",
                          GRPODynamicsWarning, stacklevel=3)
        self.state = replace(self.state, notes=self._notes())

    def _notes(self) -> tuple[str, ...]:
        """One note for each kind of reward skipped, and one for the rewards outside the range."""
        notes = tuple(f"{n} reward(s) {_SKIPPED[k][0]} skipped (the first: {r} at step "
                      f"{at:g}); {_SKIPPED[k][1]}" for k, (n, (at, r)) in self._skipped.items())
        if self._outside:
            n, (at, r) = self._outside
            notes += (f"{n} reward(s) outside reward_range {list(self.reward_range)} (the first: "
                      f"{r} at step {at:g}): {_OUTSIDE}",)
        return notes

    def _hint_no_reward(self, metrics: Mapping[str, Any]) -> None:
        """Say once, after ``NO_REWARD_HINT`` updates, that no reward has been read."""
        self._without_reward += 1
        if self._without_reward == NO_REWARD_HINT:
            keys = ", ".join(sorted(map(str, metrics))[:12]) or "none"
            warnings.warn(f"grpodyn Monitor: {NO_REWARD_HINT} updates without a finite reward "
                          f"(keys of the last: {keys}); it reads the reward under any of "
                          f"{', '.join(METRIC_ALIASES['reward'][:8])}, ...",
                          GRPODynamicsWarning, stacklevel=3)

    def run(self) -> Run:
        """Return the steps and metrics recorded so far as a ``Run``.

        Returns
        -------
        Run
            Source ``"<training>"``, format ``"monitor"``: the recorded steps, rewards and the
            metrics with a finite value (a held-out reward at the steps it was placed on), and
            the length cap given.
        """
        metrics = {k: np.asarray(v) for k, v in self.metrics.items()
                   if np.isfinite(np.asarray(v)).any()}
        meta = RunMeta() if self.length_cap is None else RunMeta(length_cap=Hyperparameter(
            self.length_cap, "user", "given to the monitor"))
        return Run(source="<training>", format="monitor", steps=np.asarray(self.steps),
                   reward=np.asarray(self.rewards), metrics=metrics, meta=meta)

    def _analyse(self, state: MonitorState, run: Run) -> MonitorState:
        """Analyse the run so far (the one call of ``analyse_run``).

        By default the exponential law with BIC weights, no rolling-origin refits (a few ms);
        with ``full_analysis``, ``analyse_run``'s defaults (five models, stacked).
        """
        if np.ptp(run.reward) == 0:
            reason = f"the reward has not changed in {run.n_points} points"
        else:
            full = self.full_analysis
            declared = None if self._outside else self.reward_range
            try:
                analysis = analyse_run(run, momentum=self.momentum,
                                       reward_range=declared, diagnose_run=False,
                                       models=FIT_MODELS if full else ONLINE_MODELS, stack=full)
            except InputError as exc:
                reason = f"the analysis refused the run so far: {exc}"
            else:
                dynamics = analysis.dynamics
                return replace(state, plateau=analysis.plateau, tau=dynamics["tau"],
                               stability_margin=dynamics["stability_margin"],
                               regime=dynamics["regime"],
                               limits={k: dynamics[k] for k in ("refresh_max", "staleness_max")
                                       if k in dynamics},
                               analysed_at=state.step, reward_range=analysis.reward_range,
                               basis=BASES[full])
        # no curve to fit: every number of the analysis says why, none a stale value
        missing = not_determined(reason)
        return replace(state, plateau=missing, tau=missing, stability_margin=missing,
                       regime=missing, limits={}, basis=None)

    def _diagnose(self, state: MonitorState, run: Run, *, fresh_warning: bool) -> MonitorState:
        """Diagnose the run so far: the flagged modes and their evidence.

        A diagnosis that carries a verdict (:func:`reviews`) drops the standing early warning
        unless a fresh one fired (``fresh_warning``); the flags carry any verdict. One too short
        to read the trend, or a decline no mode explains, leaves it standing.
        """
        if run.n_points < MIN_DIAGNOSE_POINTS:
            return state
        diagnosis = diagnose(run, group_size=self.group_size, warning=False)  # held here
        flagged = {name: v.evidence for name, v in diagnosis.modes.items() if v.flag}
        verdict = reviews(bool(flagged), diagnosis.state, run)
        standing = self._onset if fresh_warning or not verdict else None
        return replace(state, flags=tuple(flagged), evidence=flagged,
                       headline=diagnosis.headline, diagnosed_at=state.step,
                       early_warning=standing)
