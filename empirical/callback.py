"""A TRL/transformers ``TrainerCallback`` that forecasts and diagnoses a GRPO run as it trains.

At every log event that has a reward it records the metrics; every ``fit_every`` events it
analyses the run so far with :func:`grpodyn.empirical.logs.run_analysis.analyse_run` (the same
analysis as ``grpodyn report``; momentum = the trainer's ``adam_beta1``) and writes into the
trainer's log (the current ``logs`` and ``state.log_history``) the numbers the analysis
determines, and only those:

- ``grpodyn/plateau``: the plateau r* (when determined), or ``grpodyn/plateau_lower`` /
  ``grpodyn/plateau_upper``: the one-sided bound of a run that has not begun to saturate;
- ``grpodyn/tau``: the relaxation time tau in steps (when determined);
- ``grpodyn/steps_to_plateau``: steps left until 95% of the gain is made;
- ``grpodyn/stability_margin``: 1 - k / k_max with k = (1 - beta1) / tau the stiffness of the
  overdamped mean-field map and k_max = 2(1 + beta1) its on-policy limit (sections 3 and 5).

Every ``diagnose_every`` events it runs :func:`grpodyn.empirical.diagnostics.diagnose`, warns
once per flagged mode, and stops the run when a mode listed in ``stop_on`` is flagged.
Needs ``transformers`` (the ``trl`` extra); no sympy.

Example
-------
>>> from grpodyn.empirical.callback import GRPODynamicsCallback   # doctest: +SKIP
>>> trainer = GRPOTrainer(..., callbacks=[GRPODynamicsCallback(stop_on=("dynamical_instability",))])
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Iterable

import numpy as np
from transformers import TrainerCallback

from grpodyn.empirical.diagnostics.diagnose import MODES, diagnose
from grpodyn.empirical.logs.loaders import METRIC_ALIASES, Run
from grpodyn.empirical.logs.run_analysis import analyse_run
from grpodyn.ground import InputError, check_int

__all__ = ["GRPODynamicsCallback", "GRPODynamicsWarning"]


class GRPODynamicsWarning(UserWarning):
    """A failure mode was flagged during training."""


class GRPODynamicsCallback(TrainerCallback):
    """Online forecast, stability margin and diagnosis of a GRPO run.

    Parameters
    ----------
    fit_every : int
        Refit the reward law every this many log events (the fit is the costly part).
    min_points : int
        Logged rewards needed before the first fit.
    diagnose_every : int
        Run the diagnosis every this many log events (0: never).
    stop_on : iterable of str
        Failure modes (of ``MODES``) that stop training when flagged.
    group_size : int, optional
        G for the diagnosis; default: ``args.num_generations`` when the trainer has it.
    """

    def __init__(self, *, fit_every: int = 10, min_points: int = 30, diagnose_every: int = 50,
                 stop_on: Iterable[str] = (), group_size: int | None = None) -> None:
        self.fit_every = check_int("fit_every", fit_every, minimum=1)
        self.min_points = check_int("min_points", min_points, minimum=5)
        self.diagnose_every = check_int("diagnose_every", diagnose_every, minimum=0)
        self.stop_on = tuple(stop_on)
        unknown = [m for m in self.stop_on if m not in MODES]
        if unknown:
            raise InputError(f"stop_on: unknown modes {unknown}; choose from {', '.join(MODES)}")
        self.group_size = group_size
        self.steps: list[float] = []
        self.rewards: list[float] = []
        self.metrics: dict[str, list[float]] = {name: [] for name in METRIC_ALIASES
                                                if name != "reward"}
        self.forecast: dict[str, float] = {}
        self.warned: set[str] = set()
        self.events = 0

    def _record(self, step: float, logs: dict) -> bool:
        reward = logs.get("reward")
        if not isinstance(reward, (int, float)) or not math.isfinite(reward):
            return False
        self.steps.append(float(step))
        self.rewards.append(float(reward))
        for name, values in self.metrics.items():
            key = next((k for k in METRIC_ALIASES[name] if k in logs), None)
            value = logs.get(key) if key else None
            values.append(float(value) if isinstance(value, (int, float)) else math.nan)
        return True

    def _run(self) -> Run:
        metrics = {k: np.asarray(v) for k, v in self.metrics.items()
                   if np.isfinite(np.asarray(v)).any()}
        return Run(source="<training>", format="callback", steps=np.asarray(self.steps),
                   reward=np.asarray(self.rewards), metrics=metrics)

    def _fit(self, beta1: float) -> dict[str, float]:
        run = self._run()
        if np.ptp(run.reward) == 0 or np.any(np.diff(run.steps) <= 0):
            return {}
        try:
            analysis = analyse_run(run, momentum=beta1, diagnose_run=False,
                                   models=("exponential",))
        except InputError:
            return {}
        out = {}
        plateau = analysis.plateau
        if plateau["status"] == "determined":
            out["grpodyn/plateau"] = plateau["value"]
        else:
            for side in ("lower", "upper"):
                if plateau.get(side) is not None:
                    out[f"grpodyn/plateau_{side}"] = plateau[side]
        tau = analysis.dynamics["tau"]
        if tau["status"] == "determined":
            out["grpodyn/tau"] = tau["value"]
            out["grpodyn/steps_to_plateau"] = tau["steps_to_plateau"]
        margin = analysis.dynamics["stability_margin"]
        if margin["status"] == "determined":
            out["grpodyn/stability_margin"] = margin["value"]
        return out

    def _diagnose(self, control) -> None:
        n = len(self.steps)
        run = self._run()
        if n < 20 or np.any(np.diff(run.steps) <= 0):
            return
        diagnosis = diagnose(run, group_size=self.group_size)
        for name, verdict in diagnosis.modes.items():
            if verdict.flag and name not in self.warned:
                self.warned.add(name)
                warnings.warn(f"grpodyn: {name} at step {self.steps[-1]:g}: {verdict.evidence}",
                              GRPODynamicsWarning, stacklevel=2)
            if verdict.flag and name in self.stop_on:
                control.should_training_stop = True

    def on_log(self, args, state, control, logs=None, **kwargs):
        if not logs or not self._record(state.global_step, logs):
            return control
        self.events += 1
        if self.group_size is None and getattr(args, "num_generations", None):
            self.group_size = int(args.num_generations)
        if len(self.steps) >= self.min_points and self.events % self.fit_every == 0:
            self.forecast = self._fit(float(getattr(args, "adam_beta1", 0.9)))
        if self.forecast:
            logs.update(self.forecast)
            if state.log_history and state.log_history[-1].get("step") == state.global_step:
                state.log_history[-1].update(self.forecast)
        if self.diagnose_every and self.events % self.diagnose_every == 0:
            self._diagnose(control)
        return control
