"""Several runs side by side: one table and one figure, on the step or the learning-rate clock.

The runs of a seed study, of a sweep or of one file that holds several runs are each analysed
by :func:`grpodyn.empirical.logs.run_analysis.analyse_run` (plateau r* and relaxation time tau with
their statuses) and diagnosed as ``grpodyn diagnose`` diagnoses it (the state in its words, with
their qualifier, even where no curve can be fitted) and drawn on one clock: the log's step, or the
learning-rate clock s(t) = sum of lr over the steps up to t (docs/theory.md section 3: with
heavy-ball SGD, where the effective step a is the lr, tau = (1 - beta)/(a kappa) and the
overdamped law relaxes as exp(-kappa s / (1 - beta)), so runs that differ only in their
learning rate or schedule, at one momentum, fall on one curve on this clock; Adam's effective
step is not its lr, docs/theory.md section 9, and there the clock aligns runs only as far as
a is proportional to the lr).
"""

from __future__ import annotations

import copy
import os
import textwrap
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from grpodyn.empirical.diagnostics.diagnose import MIN_POINTS, diagnose
from grpodyn.empirical.diagnostics.text import state_words
from grpodyn.empirical.logs.common import counted
from grpodyn.empirical.logs.loaders import Run
from grpodyn.empirical.logs.run_analysis import (
    analyse_run,
    learning_rate_of,
    not_determined,
)
from grpodyn.ground import InputError, save_figure
from grpodyn.ground.figures import new_figure

__all__ = ["short_names", "NAME_WIDTH", "CLOCKS", "ComparedRun", "Comparison", "compare_runs",
           "lr_clock", "lr_clock_known", "state_text"]

#: The clocks runs can be aligned on.
CLOCKS = ("step", "lr")
#: Share of the last logged points averaged into the final reward.
FINAL_SHARE = 0.1


def lr_clock_known(run: Run) -> bool:
    """Return whether the run's learning-rate clock can be read (:func:`lr_clock`).

    It can where the log holds the learning rate or the run's metadata a positive one.
    """
    entry = run.meta.lr
    return learning_rate_of(run) is not None or (
        entry is not None and isinstance(entry.value, (int, float)) and entry.value > 0)


def lr_clock(run: Run, *, name: str) -> np.ndarray:
    """Return the learning-rate clock of a run at its logged steps (units: lr x steps).

    s(t_i) = sum of lr over the steps up to t_i: the logged learning rate, interpolated between
    logged points (trapezoids, from step 0 at the first logged lr), or the run's constant peak lr
    (metadata) when the log holds no schedule (docs/theory.md section 3).

    Parameters
    ----------
    run : Run
        A loaded run.
    name : str
        The run's name, for the error message.

    Returns
    -------
    numpy.ndarray
        The clock at ``run.steps``.

    Raises
    ------
    InputError
        When the run has neither a logged learning rate nor one in its metadata, or when the
        clock overflows (a learning rate near the largest float: no run trains with one), which
        names where that learning rate comes from (``--lr`` for one the user gave).
    """
    lr = learning_rate_of(run)
    if lr is not None:
        t = np.concatenate([[0.0], run.steps])
        rates = np.concatenate([[lr[0]], lr])
        with np.errstate(over="ignore", invalid="ignore"):
            clock = np.cumsum(0.5 * (rates[1:] + rates[:-1]) * np.diff(t))
        if not np.isfinite(clock).all():
            raise InputError(f"{name}: the logged learning rate (up to {np.max(lr):.3g}) makes "
                             "the learning-rate clock overflow; use --clock step")
        return clock
    entry = run.meta.lr
    if not lr_clock_known(run):
        raise InputError(f"{name}: no learning rate in the log for --clock lr; give --lr (in "
                         "Python run.meta.with_overrides(lr=...)) or use --clock step "
                         "(clock='step')")
    with np.errstate(over="ignore", invalid="ignore"):
        clock = float(entry.value) * run.steps
    if not np.isfinite(clock).all():
        where = (f"--lr {entry.value:g}" if entry.source == "user"
                 else f"{name}: the learning rate {entry.value:g} ({entry.source})")
        raise InputError(f"{where}: the learning-rate clock (lr x step, to step "
                         f"{run.steps[-1]:g}) overflows; give the run's real learning rate")
    return clock


@dataclass(frozen=True)
class ComparedRun:
    """One run of a comparison: its curve on the chosen clock and its analysis's summary."""

    name: str
    source: str
    clock: np.ndarray
    reward: np.ndarray
    summary: dict[str, Any]

    def __repr__(self) -> str:
        """Return one line: the name, the points and the state (the curve left out)."""
        points = counted(self.summary.get("n_points", self.reward.size), "point")
        state = state_text(self.summary["diagnosis"])
        return f"ComparedRun({self.name!r}, {points}, state={state!r})"

    def to_dict(self) -> dict[str, Any]:
        """Return the run's summary (JSON-ready; the curve is left out)."""
        return dict(self.summary)


@dataclass(frozen=True)
class Comparison:
    """Runs aligned on one clock, each with its analysis's summary."""

    clock: str
    runs: tuple[ComparedRun, ...]

    def __repr__(self) -> str:
        """Return one line: the clock and each run's name with its state (no curve, no table)."""
        shown = ", ".join(f"{run.name!r}: {state_text(run.summary['diagnosis'])}"
                          for run in self.runs[:_REPR_RUNS])
        more = f", ... {len(self.runs) - _REPR_RUNS} more" if len(self.runs) > _REPR_RUNS else ""
        return (f"Comparison({len(self.runs)} run{'s' * (len(self.runs) != 1)} on the "
                f"{self.clock} clock: {shown}{more})")

    def to_dict(self) -> dict[str, Any]:
        """Return ``{"clock": ..., "runs": [...]}`` with each run's summary (JSON-ready)."""
        return {"clock": self.clock, "runs": [run.to_dict() for run in self.runs]}

    def to_text(self) -> str:
        """Return the comparison as a plain-text table, one run a line."""
        shown = short_names([run.name for run in self.runs], width=NAME_WIDTH)
        width = max(3, *map(len, shown))
        lines = [f"{'run':{width}s} {'last step':>9s} {'final':>9s}  {'plateau':34s} "
                 f"{'tau':30s} state"]
        why = []
        for run, name in zip(self.runs, shown, strict=True):
            s, state = run.summary, state_text(run.summary["diagnosis"])
            final = format(s["final_reward"]["value"], _DIGITS)
            lines.append(f"{name:{width}s} {s['steps']:9g} {final:>9s}"
                         f"  {_status_text(s['plateau'], _DIGITS, s.get('reward_range')):34s} "
                         f"{_status_text(s['tau'], _DIGITS):30s} {state}")
            why += [textwrap.fill(f"{name}: {words}", 100, subsequent_indent="    ",
                                  break_long_words=False) for words in _reasons(s)]
        return "\n".join(lines + (["why not determined:", *why] if why else []))

    def plot(self, *, path: str | Path | None = None) -> Any:
        """Draw every run's reward on the clock, with its plateau where determined.

        Parameters
        ----------
        path : str or Path, optional
            Save the figure there, atomically (the format from the suffix); such a figure is
            made without pyplot, so the caller's matplotlib backend stays as it was.

        Returns
        -------
        matplotlib.figure.Figure
            The figure.
        """
        fig, ax = new_figure(saving=path is not None, figsize=(7, 4.5))
        labels = short_names([run.name for run in self.runs], width=NAME_WIDTH)
        for i, (run, label) in enumerate(zip(self.runs, labels, strict=True)):
            color = f"C{i % 10}"
            window = max(1, run.reward.size // 50)
            smooth = np.convolve(run.reward, np.ones(window) / window, mode="valid")
            ax.plot(run.clock, run.reward, color=color, alpha=0.2, lw=0.8)
            ax.plot(run.clock[window - 1:], smooth, color=color, lw=1.5, label=label)
            plateau = run.summary["plateau"]
            if plateau["status"] == "determined":
                ax.axhline(plateau["value"], color=color, ls=":", lw=1)
        ax.set_xlabel("step, as each log counts it" if self.clock == "step"
                      else "learning-rate clock (sum of lr over steps)")
        ax.set_ylabel("reward (dotted: plateau where determined)")
        ax.set_title(f"{counted(len(self.runs), 'run')} on the {self.clock} clock")
        # below the axes, the names as the table shortens them: inside, it hid the runs that
        # fell to the floor
        ax.legend(fontsize=6, ncol=1 + len(self.runs) // 6, loc="upper center",
                  bbox_to_anchor=(0.5, -0.14), frameon=False)
        if path is not None:
            save_figure(fig, path, inputs=[run.source for run in self.runs])
        return fig


#: Significant digits of the table's rewards and times, as ``grpodyn fit`` and ``forecast``
#: print them: fixed decimals read a reward of 0.0005 as 0 and a tau of 0.4 steps as 0.
_DIGITS = ".4g"

#: Runs a comparison's repr names (the others are counted).
_REPR_RUNS = 6


def state_text(diagnosis: dict[str, Any]) -> str:
    """Say a compared run's state as ``grpodyn diagnose`` does, in short.

    The primary mode with the state in its words, the qualifier kept ("converged or still
    rising, the noise cannot tell which": the noise does not resolve the plateau), and the step
    of an early warning; "not diagnosed" for a run no diagnosis reads.
    """
    if diagnosis["state"] is None:
        return "not diagnosed"
    words = state_words(diagnosis["state"], None, diagnosis.get("resolved", True))
    text = words if diagnosis["primary"] is None else f"{diagnosis['primary']} ({words})"
    warning = diagnosis.get("early_warning")
    return text + ("" if warning is None else f"; early warning at step {warning['step']:g}")


def _diagnosis_of(run: Run, diagnosis: Any) -> dict[str, Any]:
    """Return a compared run's diagnosis entry: state, primary mode, qualifier and warning.

    The analysis's diagnosis, else the one ``grpodyn diagnose`` makes of the run (a run too
    short for the modes, a reward with no curve to fit), else None with the reason.
    """
    reason = None
    if diagnosis is None and run.n_points < MIN_POINTS:
        reason = (f"{counted(run.n_points, 'logged point')}, fewer than the {MIN_POINTS} a "
                  "diagnosis reads")
    elif diagnosis is None:
        try:
            diagnosis = diagnose(run)
        except InputError as exc:
            reason = str(exc).split(": ", 1)[-1]
    if diagnosis is None:
        return {"state": None, "primary": None, "resolved": None, "headline": None,
                "early_warning": None, "reason": reason}
    warning = diagnosis.early_warning
    return {"state": diagnosis.state, "primary": diagnosis.primary,
            "resolved": diagnosis.resolved, "headline": diagnosis.headline,
            "early_warning": copy.deepcopy(warning), "reason": None}


def _reasons(summary: dict[str, Any]) -> list[str]:
    """Say why a run's plateau, tau or diagnosis is missing (each reason once)."""
    said = {}
    for key in ("plateau", "tau"):
        entry = summary[key]
        if entry.get("status") != "determined" and entry.get("reason"):
            said.setdefault(f"{entry['status']}: {entry['reason']}", []).append(key)
    out = [f"{' and '.join(keys)} {words}" for words, keys in said.items()]
    reason = summary["diagnosis"].get("reason")
    if summary["diagnosis"]["state"] is None and reason and not any(reason in x for x in out):
        out.append(f"not diagnosed: {reason}")
    return out


def _status_text(entry: dict[str, Any], spec: str,
                 edges: Sequence[float] | None = None) -> str:
    """Format a number with its status: the value and interval when determined, else a bound.

    A value that is singular or at the fit's bound (a plateau on the reward range's edge) is
    shown with its status in brackets: ``1 (at_bound)``.

    A bound that is an edge of the reward range (``edges``) says nothing the range does not,
    so the other one is shown: a falling run's plateau ``(<= 0.005677)``, not ``(>= 0)``.
    """
    if entry.get("value") is not None and entry["status"] in ("determined", "singular",
                                                               "at_bound"):
        interval = (f" [{format(entry['lower'], spec)}, {format(entry['upper'], spec)}]"
                    if entry.get("lower") is not None and entry.get("upper") is not None
                    else "")
        return format(entry["value"], spec) + interval + (
            "" if entry["status"] == "determined" else f" ({entry['status']})")
    low, high = edges if edges is not None else (None, None)
    lower = None if entry.get("lower") == low else entry.get("lower")
    upper = None if entry.get("upper") == high else entry.get("upper")
    if lower is not None and upper is not None:
        return f"{entry['status']} [{format(lower, spec)}, {format(upper, spec)}]"
    bound = (f" (>= {format(lower, spec)})" if lower is not None
             else f" (<= {format(upper, spec)})" if upper is not None else "")
    return entry["status"] + bound


#: Widest run name in the comparison table [characters].
NAME_WIDTH = 40


def short_names(names: Sequence[str], *, width: int = NAME_WIDTH) -> list[str]:
    """Shorten names to ``width`` characters while keeping them distinct.

    The part every name shares at the start and at the end is cut first (to ``...``); a name
    still too long loses its middle, so the distinguishing head and tail both stay. Names that
    this cut makes alike are shortened again among themselves, cutting what they share.

    Parameters
    ----------
    names : sequence of str
        The names (distinct ones stay distinct where the width allows).
    width : int
        Largest length of a shown name (>= 9).

    Returns
    -------
    list of str
        The shown names, in order.
    """
    names = original = list(names)
    if all(len(n) <= width for n in names):
        return names
    if len(names) > 1:
        head = len(os.path.commonprefix(names))
        tail = len(os.path.commonprefix([n[::-1] for n in names]))
        shortest = min(map(len, names))
        tail = min(tail, shortest - head)
        # keep some of the shared text beside the distinct part, as context
        context = max(0, (width - 6 - max(len(n) - head - tail for n in names)) // 2)
        start, end = max(head - context, 0), max(tail - context, 0)
        names = [("..." if start > 3 else n[:start]) + n[start:len(n) - end]
                 + ("..." if end > 3 else n[len(n) - end:]) for n in names]
    half = (width - 3) // 2
    shown = [n if len(n) <= width else n[:width - 3 - half] + "..." + n[-half:] for n in names]
    for same in {n for n in shown if shown.count(n) > 1}:  # cut alike: shorten among them
        group = [i for i, n in enumerate(shown) if n == same]
        if len(group) < len(names):  # a smaller set shares more at its ends
            for i, n in zip(group, short_names([original[i] for i in group], width=width),
                            strict=True):
                shown[i] = n
    return shown


def _names(runs: Sequence[Run]) -> list[str]:
    """Name each run distinctly: its own name, else the file's stem, made unique.

    Files of one name (the trainer state of two checkpoints) are told apart by the folders
    above them, as few as it takes; a numbered suffix only when the paths are the same.
    """
    names = [run.run_name or Path(run.source).stem for run in runs]
    if len(set(names)) == len(names):
        return names
    for depth in range(2, 5):
        names = ["/".join(Path(run.source).with_suffix("").parts[-depth:])
                 + (f":{run.run_name}" if run.run_name else "") for run in runs]
        if len(set(names)) == len(names):
            return names
    return [f"{Path(run.source).stem}:{run.run_name}" if run.run_name
            else f"{Path(run.source).stem}#{i}" for i, run in enumerate(runs)]


def compare_runs(runs: Sequence[Run], *, clock: str = "step", momentum: float | None = None,
                 reward_range: tuple[float, float] | None = None,
                 progress: Callable[[Iterable[Any]], Iterable[Any]] | None = None
                 ) -> Comparison:
    """Analyse several runs and align them on one clock.

    Parameters
    ----------
    runs : sequence of Run
        The runs (at least one).
    clock : {"step", "lr"}
        Align on the log's step or on the learning-rate clock (:func:`lr_clock`).
    momentum : float, optional
        Adam's beta1 for every run (default: each log's).
    reward_range : (float, float), optional
        The range the reward can reach, for every run (default: inferred per run).
    progress : callable, optional
        Wraps the iteration over the runs (a progress bar).

    Returns
    -------
    Comparison
        Each run's curve and summary: name, source, steps (last step), n_points,
        final_reward (mean of the last 10% of points), plateau and tau with their statuses,
        the reward range the analysis took (None when unknown or not analysed), diagnosis
        (state, primary mode, ``resolved`` (False: the noise cannot tell a plateau from a
        rise), headline, the early warning (None or ``{step, signals, evidence, remedy}``, as
        ``diagnose`` gives it), and the reason when there is none).
    """
    if clock not in CLOCKS:
        raise InputError(f"clock: {clock!r} is not one of {', '.join(CLOCKS)}")
    if not runs:
        raise InputError("compare: no runs given")
    names = _names(runs)
    clocks = [run.steps if clock == "step" else lr_clock(run, name=name)
              for run, name in zip(runs, names, strict=True)]
    pairs = list(zip(runs, names, clocks, strict=True))
    compared = []
    for run, name, x in (progress(pairs) if progress else pairs):
        last = max(1, int(np.ceil(FINAL_SHARE * run.n_points)))
        summary = {
            "name": name, "source": run.source, "run": run.run_name,
            "steps": float(run.steps[-1]), "n_points": run.n_points,
            "final_reward": {"value": float(np.mean(run.reward[-last:])), "points": last},
            "clock_end": float(x[-1]), "warnings": list(run.warnings), "reward_range": None,
        }
        try:
            analysis = analyse_run(run, momentum=momentum, reward_range=reward_range)
        except InputError as exc:  # too short a run, a flat reward: said, the others go on
            reason = f"not analysed: {str(exc).split(': ', 1)[-1]}"
            summary.update(plateau=not_determined(reason), tau=not_determined(reason),
                           diagnosis=_diagnosis_of(run, None))
        else:
            summary.update(plateau=analysis.plateau, tau=analysis.dynamics["tau"],
                           reward_range=None if analysis.reward_range is None
                           else list(analysis.reward_range),
                           diagnosis=_diagnosis_of(run, analysis.diagnosis),
                           warnings=list(dict.fromkeys(summary["warnings"]
                                                       + analysis.warnings)))
        compared.append(ComparedRun(name=name, source=run.source, clock=x, reward=run.reward,
                                    summary=summary))
    return Comparison(clock=clock, runs=tuple(compared))
