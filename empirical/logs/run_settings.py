"""What a run's log says of the settings its analysis needs: lr path, reward range, momentum.

Each reader returns the value with where it came from (the user, the log's metadata, the
logged metric, an inference from the reward's name or values), or None with the reason and
what to give; :mod:`.run_analysis` and the commands read the settings through them.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from grpodyn.empirical.logs.loaders import Run
from grpodyn.ground import InputError, check_momentum, check_reward_range
from grpodyn.ground.checks import REWARD_MAGNITUDE_MAX, STEP_MAGNITUDE_MAX

__all__ = ["learning_rate_of", "logged_schedule", "LoggedSchedule", "infer_reward_range",
           "momentum_of", "peak_lr_of", "check_magnitudes"]

_BOUNDED_WORDS = ("accuracy", "acc", "pass", "success", "correct", "win_rate", "solve")


def learning_rate_of(run: Run) -> np.ndarray | None:
    """Return the run's learning rate at every point (gaps interpolated).

    None if not logged or constant (then the learning-rate clock is the step clock and adds no
    model). A negative entry is not a learning rate: it counts as a gap.
    """
    lr = run.metrics.get("learning_rate")
    if lr is None:
        return None
    known = np.isfinite(lr) & (lr >= 0)
    if not known.any() or np.ptp(lr[known]) == 0:
        return None
    return np.interp(run.steps, run.steps[known], lr[known])


@dataclass(frozen=True)
class LoggedSchedule:
    """A logged lr schedule over a span of steps: its time-mean and its peak [lr units]."""

    mean: float
    peak: float

    @property
    def share(self) -> float:
        """The share of its peak that the lr averaged, mean / peak, in (0, 1)."""
        return self.mean / self.peak


def logged_schedule(steps: np.ndarray, lr: np.ndarray | None) -> LoggedSchedule | None:
    """Return the logged lr's time-mean over ``steps`` and its peak, None where it is constant.

    The overdamped law runs on the lr clock (docs/theory.md section 9), and the stability limit
    (section 5) binds where the lr peaks. The mean is the trapezoid rule's over the steps' span
    (:func:`~grpodyn.numerics.curve_models.cumulative_lr`, exponential_lr's clock), the lr as
    :func:`learning_rate_of` gives it at every point (None: not logged, or constant over the
    run or over ``steps``). The peak is the highest value the lr holds over three
    logged points: a value logged once is no regime the run stayed in (an lr at that peak but
    for such values is constant). The share is the schedule's shape: an lr given by the user
    scales the whole schedule.
    """
    from grpodyn.numerics.curve_models import cumulative_lr  # exponential_lr's own clock

    if lr is None or steps.size < 3 or not steps[-1] > steps[0]:
        return None
    mean = float(cumulative_lr(steps, lr)[-1] / (steps[-1] - steps[0]))
    peak = float(np.sort(lr)[-3])
    if not 0 < mean < peak * (1 - 1e-9):  # at its held peak throughout: constant
        return None
    return LoggedSchedule(mean, peak)


def check_magnitudes(run: Run) -> None:
    """Refuse a reward or a step beyond what the analyses take, naming the log and the value.

    The fits, the noise estimate and the diagnosis square the reward's deviations; beyond
    :data:`REWARD_MAGNITUDE_MAX` they lose their precision, and one such value swamps every
    other. A step beyond :data:`STEP_MAGNITUDE_MAX` is a corrupt record, on which the fits'
    time constants overflow.

    Parameters
    ----------
    run : Run
        The loaded run.

    Raises
    ------
    InputError
        When a logged reward's magnitude exceeds :data:`REWARD_MAGNITUDE_MAX`, or a step's
        :data:`STEP_MAGNITUDE_MAX`.
    """
    finite = np.abs(run.reward[np.isfinite(run.reward)])
    if finite.size and finite.max() > REWARD_MAGNITUDE_MAX:
        raise InputError(f"{run.source}: the reward ({run.reward_key}) reaches {finite.max():.3g}, "
                         f"beyond {REWARD_MAGNITUDE_MAX:g}, where the fits lose their precision; "
                         "log or pass a rescaled reward")
    steps = np.abs(np.asarray(run.steps, dtype=float))
    if steps.size and not steps.max() <= STEP_MAGNITUDE_MAX:
        raise InputError(f"{run.source}: a logged step reaches {steps.max():.3g}, beyond "
                         f"{STEP_MAGNITUDE_MAX:g}: not a count of steps (a corrupt record?); "
                         "pass the log without it")


def infer_reward_range(run: Run, declared: tuple[float, float] | None = None
                       ) -> tuple[tuple[float, float] | None, str]:
    """Return the range the reward can reach and where it comes from.

    Declared wins. Else [0, 1] where every logged value lies in it: from the reward's name
    (accuracy, pass rate, success), else as an assumption (a mean of binary rewards). Otherwise
    unknown (a summed, shaped or percent reward, the name named where it says a rate): None.
    """
    if declared is not None:
        lo, hi = check_reward_range(declared)
        outside = np.sum((run.reward < lo) | (run.reward > hi))
        if outside:
            raise InputError(f"{run.source}: reward range [{lo:g}, {hi:g}]: {outside} of "
                             f"{run.reward.size} logged rewards lie outside it (from "
                             f"{np.min(run.reward):.4g} to {np.max(run.reward):.4g})")
        return (lo, hi), "declared"
    named, key = any(w in run.reward_key.lower() for w in _BOUNDED_WORDS), run.reward_key
    outside = int(np.sum((run.reward < 0) | (run.reward > 1)))
    if not outside:
        return (0.0, 1.0), (f"inferred from the reward's name {key!r}" if named else "inferred: "
                            "every logged reward lies in [0, 1] (a mean of binary rewards); "
                            "declare reward_range= (--reward-range) if the reward can leave "
                            "it")
    return None, ((f"unknown: the reward's name {key!r} reads as a rate in [0, 1], but "
                   f"{outside} of {run.reward.size} logged values lie outside it (from "
                   f"{np.min(run.reward):.4g} to {np.max(run.reward):.4g}: a summed, shaped or "
                   "percent reward)" if named else "unknown: a reward outside [0, 1] (summed or "
                   "shaped)") + "; declare reward_range= (--reward-range)")


def momentum_of(run: Run, momentum: float | None) -> tuple[float | None, str]:
    """Return the momentum and its source.

    The momentum given (source ``user``, as for a user override in RunMeta), else the log's
    (its metadata, with the source RunMeta gives: logged, file, user, ...), else unknown.
    """
    if momentum is not None:
        return float(check_momentum(momentum, scalar=True)), "user"
    entry = run.meta.momentum
    if entry is not None and isinstance(entry.value, (int, float)):
        return float(check_momentum(entry.value, scalar=True)), entry.source
    return None, ("unknown: give momentum= (--momentum), Adam's beta1, for the regime and "
                  "margins")


def peak_lr_of(run: Run) -> tuple[float | None, str]:
    """Return the PEAK learning rate the run used and its source.

    Its metadata (peak, user's or config), else the largest logged value.
    """
    entry = run.meta.lr
    if entry is not None and isinstance(entry.value, (int, float)) and entry.value > 0:
        return float(entry.value), entry.source
    logged = run.metrics.get("learning_rate")
    if logged is not None and np.isfinite(logged).any() and np.nanmax(logged) > 0:
        return float(np.nanmax(logged)), "logged (peak)"
    return None, "unknown: give --lr (in Python run.meta.with_overrides(lr=...))"
