"""A TRL/transformers ``TrainerCallback`` that forecasts and diagnoses a GRPO run as it trains.

A thin layer on the framework-free :class:`grpodyn.empirical.monitor.Monitor`: it feeds the
metrics of every log event to the monitor (the trainer's arguments read as a log's config is
read: momentum = ``adam_beta1`` for Adam, ``optim_args``' momentum or 0 for SGD and
RMSprop, 0 for Adafactor, Adagrad and (Ada)LOMO; G =
``num_generations``; the length cap = ``max_completion_length``): a training event's
reward, and an evaluation event's held-out reward (``eval_reward``, which TRL logs in an event
of its own) at its step, for the diagnosis of reward hacking. At every event that has a reward
it writes into the trainer's log (the current ``logs`` and ``state.log_history``, saved in
``trainer_state.json``) the numbers the monitor's analysis determines, and only those
(:meth:`grpodyn.empirical.monitor.MonitorState.log_values`). By default that analysis fits the
exponential law alone, weighed by BIC against a level and a flat line (a few ms; the state's
``basis``): ``grpodyn report`` on the same steps weighs five curve models by stacking and can
find a plateau or tau not determined that it determines; ``full_analysis=True`` runs that
analysis instead, at about eight times the cost (:mod:`grpodyn.empirical.monitor`).

- ``grpodyn/plateau``: the plateau r* (when determined), or ``grpodyn/plateau_lower`` /
  ``grpodyn/plateau_upper``: the one-sided bound of a run that has not begun to saturate;
- ``grpodyn/tau``: the relaxation time tau in steps (when determined);
- ``grpodyn/steps_to_plateau``: steps left until 95% of the way to the plateau is made (a rise or a
  fall);
- ``grpodyn/stability_margin``: 1 - k / k_max with k = (1 - beta1) / tau the stiffness of the
  overdamped mean-field map and k_max = 2(1 + beta1) its on-policy limit (sections 3 and 5);
  where tau was read on the lr clock of a logged schedule, k is the stiffness at the lr's peak,
  k / share (section 9).

transformers calls the callbacks in their order: the reporting integrations ``report_to``
names (TensorBoard, W&B, ...) come before the callbacks passed as ``callbacks=[...]`` or
``trainer.add_callback``, and have sent an event on before this callback writes into it. So
these numbers reach ``log_history`` but no dashboard, unless the callback is placed ahead of
the reporters with :meth:`GRPODynamicsCallback.attach`.

It warns once per failure mode the monitor's diagnosis flags, and once per early warning the
monitor reports (per onset step: the precursors of a collapse at the last steps,
``early_warning``, which stands until a diagnosis that carries a verdict reviews it),
and stops the run when a mode listed in ``stop_on`` is flagged, or on an early warning when
``stop_on`` holds ``"early_warning"``. Needs ``transformers`` (the ``trl`` extra); no sympy.

Example
-------
>>> from grpodyn.empirical.callback import GRPODynamicsCallback   # doctest: +SKIP
>>> trainer = GRPOTrainer(..., args=GRPOConfig(..., report_to="tensorboard"))
>>> GRPODynamicsCallback(stop_on=("dynamical_instability",)).attach(trainer)
>>> trainer.train()
"""

from __future__ import annotations

import warnings
from collections.abc import Iterable
from typing import Any

try:
    from transformers import TrainerCallback, TrainerControl, TrainerState, TrainingArguments
    from transformers.integrations import get_reporting_integration_callbacks
    from transformers.trainer_callback import PrinterCallback, ProgressCallback
except ImportError as exc:  # the callback plugs into transformers' Trainer: an optional extra
    raise ImportError(f"grpodyn's TRL callback needs transformers ({exc}): "
                      "pip install 'grpodyn[trl]'") from None

from grpodyn.empirical.diagnostics.diagnose import MODES
from grpodyn.empirical.logs.config import meta_from_config
from grpodyn.ground import InputError, check_group_size, check_int

from .monitor import GRPODynamicsWarning, Monitor

__all__ = ["GRPODynamicsCallback", "GRPODynamicsWarning", "EARLY_WARNING"]

#: the name ``stop_on`` takes for the early warning
EARLY_WARNING = "early_warning"


class GRPODynamicsCallback(TrainerCallback):
    """Online forecast, stability margin and diagnosis of a GRPO run.

    Parameters
    ----------
    refit_every : int
        Refit the reward law every this many log events (default 10; the fit is the costly
        part): the ``Monitor``'s name. ``fit_every``, the older name, is still read, with a
        ``DeprecationWarning``.
    min_points : int
        Logged rewards needed before the first fit.
    diagnose_every : int
        Run the diagnosis every this many log events (0: never; default 20, as the
        ``Monitor``'s).
    stop_on : str or iterable of str
        Failure modes (of ``MODES``) that stop training when flagged, and ``"early_warning"``
        to stop when the precursors of a collapse fire.
    group_size : int, optional
        G for the diagnosis; default: ``args.num_generations`` when the trainer has it.
    momentum : float, optional
        The optimizer's momentum (Adam's beta1) for the stability margin; default: the
        trainer's (``adam_beta1`` for Adam and Lion; for SGD and RMSprop the momentum of
        ``optim_args``, else 0; 0 for Adafactor, Adagrad and (Ada)LOMO, which transformers
        builds without a first moment).
    reward_range : (float, float), optional
        The range the reward can reach (default: inferred from the rewards).
    full_analysis : bool
        Analyse as ``grpodyn report LOG`` does (five curve models, stacked), so that the
        plateau and tau logged are those its statuses determine, at about eight times the
        cost; default False: the exponential law alone
        (:class:`grpodyn.empirical.monitor.Monitor`).
    """

    def __init__(self, *, refit_every: int | None = None, min_points: int = 30,
                 diagnose_every: int = 20, stop_on: Iterable[str] = (),
                 group_size: int | None = None, momentum: float | None = None,
                 reward_range: tuple[float, float] | None = None,
                 full_analysis: bool = False, fit_every: int | None = None) -> None:
        if fit_every is not None:
            if refit_every is not None:
                raise InputError("fit_every and refit_every: give refit_every alone (fit_every "
                                 "is its older name)")
            warnings.warn("GRPODynamicsCallback(fit_every=) is now refit_every=, as the "
                          "Monitor names it", DeprecationWarning, stacklevel=2)
            refit_every = fit_every
        self.refit_every = check_int("refit_every", 10 if refit_every is None else refit_every,
                                     minimum=1)
        self.min_points = check_int("min_points", min_points, minimum=5)
        self.diagnose_every = check_int("diagnose_every", diagnose_every, minimum=0)
        # one mode given as a string is that mode, not its characters
        if isinstance(stop_on, str):
            stop_on = (stop_on,)
        elif not isinstance(stop_on, Iterable):
            raise InputError(f"stop_on: expected a mode's name or a list of them, got "
                             f"{type(stop_on).__name__} {stop_on!r:.40}")
        self.stop_on = tuple(stop_on)
        known = (*MODES, EARLY_WARNING)
        unknown = [m for m in self.stop_on if m not in known]
        if unknown:
            raise InputError(f"stop_on: unknown modes {unknown}; choose from {', '.join(known)}")
        self.group_size = None if group_size is None else check_group_size(group_size)
        if not isinstance(full_analysis, bool):
            raise InputError(f"full_analysis: expected True or False, got {full_analysis!r:.40}")
        self.full_analysis = full_analysis
        # checked here, where a wrong value is given, not at the first log event in training
        # (the Monitor's checks: it refuses a momentum given as text, "0.9")
        given = Monitor(momentum=momentum, reward_range=reward_range)
        self.momentum, self.reward_range = given.momentum, given.reward_range
        self.monitor: Monitor | None = None  # built at the first log event, from the args
        self.warned: set[str] = set()
        self.early_warning: dict[str, Any] | None = None  # the monitor's, at the last event
        self._warned_onsets: set[float] = set()  # onset steps of the early warnings warned of

    @property
    def fit_every(self) -> int:
        """The older name of :attr:`refit_every` (read with a ``DeprecationWarning``)."""
        warnings.warn("GRPODynamicsCallback.fit_every is now refit_every", DeprecationWarning,
                      stacklevel=2)
        return self.refit_every

    def __repr__(self) -> str:
        """Return one line: the options, and the monitor's state once a log event came."""
        seen = "no log event yet" if self.monitor is None else repr(self.monitor)
        return (f"GRPODynamicsCallback(stop_on={list(self.stop_on)}, "
                f"refit_every={self.refit_every}, diagnose_every={self.diagnose_every}: {seen})")

    def attach(self, trainer: Any) -> Any:
        """Add this callback to ``trainer`` ahead of its reporters, so that they send its numbers.

        transformers calls the callbacks in their order, and puts the reporting integrations
        ``report_to`` names (TensorBoard, W&B, ...) before the callbacks a user passes or adds:
        they send a log event on before a later callback adds to it. This moves the reporters
        of ``trainer.args.report_to`` and the console printer after this callback, with the
        trainer's own ``pop_callback`` and ``add_callback``, so that the ``grpodyn/`` numbers
        reach the dashboards and the console as well as ``log_history``. A reporter added by
        hand (not through ``report_to``) is not moved: add it after this call.

        Parameters
        ----------
        trainer : transformers.Trainer
            The trainer (TRL's ``GRPOTrainer`` among them), before ``train()``; this callback
            may already be among its callbacks.

        Returns
        -------
        transformers.Trainer
            ``trainer``.
        """
        reporters = (*get_reporting_integration_callbacks(trainer.args.report_to),
                     ProgressCallback, PrinterCallback)
        trainer.pop_callback(self)
        moved = []
        for kind in dict.fromkeys(reporters):
            while (found := trainer.pop_callback(kind)) is not None:
                moved.append(found)
        for callback in (self, *moved):
            trainer.add_callback(callback)
        return trainer

    def _monitor(self, args: TrainingArguments) -> Monitor:
        """Return the monitor, built once with the trainer's momentum and group size."""
        if self.monitor is None:
            # to_dict gives the fields' plain values; vars adds attributes set on the args
            settings = {**vars(args), **(args.to_dict() if hasattr(args, "to_dict") else {})}
            meta = meta_from_config(settings, "logged", "the trainer's arguments")
            if self.group_size is None and meta.group_size is not None:
                self.group_size = int(meta.group_size.value)
            momentum = self.momentum
            if momentum is None and meta.momentum is not None:
                momentum = float(meta.momentum.value)
                if not 0 <= momentum < 1:  # never raise into the trainer's loop for its args
                    warnings.warn(f"grpodyn: the trainer's momentum {momentum:g} "
                                  f"({meta.momentum.evidence}) is not in [0, 1): the stability "
                                  "margin is left not determined (give momentum=)",
                                  GRPODynamicsWarning, stacklevel=3)
                    momentum = None
            cap = None if meta.length_cap is None else meta.length_cap.value
            self.monitor = Monitor(momentum=momentum, group_size=self.group_size,
                                   reward_range=self.reward_range,
                                   refit_every=self.refit_every,
                                   diagnose_every=self.diagnose_every,
                                   min_points=self.min_points,
                                   length_cap=cap if isinstance(cap, int) and cap > 0 else None,
                                   full_analysis=self.full_analysis)
        return self.monitor

    def on_log(self, args: TrainingArguments, state: TrainerState, control: TrainerControl,
               logs: dict[str, Any] | None = None, **kwargs: Any) -> TrainerControl:
        """Feed the logged metrics to the monitor; log its forecast, warn, stop if asked.

        An evaluation event (no reward) gives the monitor its held-out reward and adds
        nothing to the log.

        Parameters
        ----------
        args : transformers.TrainingArguments
            The trainer's arguments (read once, at the first event: momentum, G, length cap).
        state : transformers.TrainerState
            The trainer's state: its ``global_step`` is the step of ``logs``, and the numbers
            the analysis determines are added to its last ``log_history`` entry of that step.
        control : transformers.TrainerControl
            Set to stop training on a mode of ``stop_on``.
        logs : dict, optional
            The metrics of this log event; the ``grpodyn/`` numbers are added to it.
        **kwargs
            What transformers passes besides (the model, the optimizer, ...); not read.

        Returns
        -------
        transformers.TrainerControl
            ``control``.
        """
        if not logs:
            return control
        monitor = self._monitor(args)
        points = len(monitor.steps)
        current = monitor.update(state.global_step, logs)
        if len(monitor.steps) == points:  # no reward in this event
            return control
        forecast = current.log_values()
        if forecast:
            logs.update(forecast)
            if state.log_history and state.log_history[-1].get("step") == state.global_step:
                state.log_history[-1].update(forecast)
        self._warn_early(current.early_warning, control)
        for name in current.flags:
            if name not in self.warned:
                self.warned.add(name)
                warnings.warn(f"grpodyn: {name} at step {current.step:g}: "
                              f"{current.evidence[name]}", GRPODynamicsWarning, stacklevel=2)
            if name in self.stop_on:
                control.should_training_stop = True
        return control

    def _warn_early(self, warning: dict[str, Any] | None, control: TrainerControl) -> None:
        """Warn once for each early warning the monitor reports (each onset step)."""
        if warning and warning["step"] not in self._warned_onsets:
            self._warned_onsets.add(warning["step"])
            warnings.warn(f"grpodyn: early warning at step {warning['step']:g} (precursors of "
                          f"a collapse: {', '.join(warning['signals'])}): "
                          + "; ".join(warning["evidence"].values())
                          + f". Try: {warning['remedy']}", GRPODynamicsWarning, stacklevel=3)
        if warning and EARLY_WARNING in self.stop_on:
            control.should_training_stop = True
        self.early_warning = warning
