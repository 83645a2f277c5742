"""The analyses of the public API on a run or on the path of its log, and ``fit_run``.

``grpodyn.analyse_run``, ``grpodyn.diagnose`` and ``grpodyn.advise_log`` take a loaded
:class:`~grpodyn.empirical.logs.loaders.Run` or the path of a log, which they load as
``grpodyn.load_run`` does (of several runs, the longest, with a note); anything else is refused
with an :class:`~grpodyn.ground.InputError` that names the argument, not an ``AttributeError`` from
deep inside. An error about too few points says when the log's records were merged on shared steps
(the points a log keeps can be far fewer than its records). The analyses themselves live in
:mod:`grpodyn.empirical.logs.run_analysis`, :mod:`grpodyn.empirical.diagnostics.diagnose` and
:mod:`grpodyn.empirical.logs.advice`.

``fit_run`` is the JSON object of ``grpodyn fit``, kept for scripts and notebooks: a thin
wrapper that makes the analysis's dict strict JSON.
"""

from __future__ import annotations

import functools
import inspect
import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, TypeVar

from grpodyn.empirical.diagnostics.diagnose import diagnose as _diagnose
from grpodyn.empirical.logs.advice import advise_log as _advise_log
from grpodyn.empirical.logs.common import MERGED_STEPS
from grpodyn.empirical.logs.loaders import Run, load_run
from grpodyn.empirical.logs.run_analysis import FIT_MODELS
from grpodyn.empirical.logs.run_analysis import analyse_run as _analyse_run
from grpodyn.ground import InputError, TooFewPoints, finite_json

__all__ = ["fit_run", "analyse_run", "diagnose", "advise_log", "as_run", "saying_merged_steps"]

Result = TypeVar("Result")

#: What the first argument of the analyses may be, as their signatures show it.
RUN_OR_PATH = "Run | str | os.PathLike[str]"


def as_run(run: Any, *, function: str) -> Run:
    """Return ``run`` as a Run: a Run as it is, the path of a log loaded as ``load_run`` loads it.

    A log of several runs gives the one with the most reward points, with a note in its
    warnings, as ``grpodyn.load_run`` and the commands read it.

    Parameters
    ----------
    run : Run, str or os.PathLike
        A loaded run, or the path of its log (a file or a run directory).
    function : str
        The name of the function ``run`` was given to, for the error message.

    Returns
    -------
    Run
        The run.

    Raises
    ------
    InputError
        When ``run`` is neither a Run nor a path.
    LogFormatError
        When the log cannot be read (as ``grpodyn.load_run`` raises it).
    """
    if isinstance(run, Run):
        return run
    if not isinstance(run, (str, os.PathLike)):
        raise InputError(f"{function}(): run must be a Run (grpodyn.load_run(path)) or the "
                         f"path of a log, got {type(run).__name__}")
    return load_run(run)


@contextmanager
def saying_merged_steps(run: Run) -> Iterator[None]:
    """Add to an error about too few points the loader's note on records merged by step.

    A log whose records share steps keeps one point per step; "needs at least 10 logged points,
    got 1" from a log of 100 records is understood only with that note.

    Parameters
    ----------
    run : Run
        The run the analysis inside the block reads.

    Raises
    ------
    TooFewPoints
        The analysis's, with the note appended where the loader merged records.
    """
    try:
        yield
    except TooFewPoints as exc:
        note = next((w for w in run.warnings if MERGED_STEPS in w), None)
        if note is None:
            raise
        raise TooFewPoints(f"{exc}: the log's {note}") from None


def _on_a_run_or_path(function: Callable[..., Result]) -> Callable[..., Result]:
    """Return ``function`` taking, as its first argument, a Run or the path of its log."""

    @functools.wraps(function)
    def wrapper(run: Any, *args: Any, **kwargs: Any) -> Result:
        run = as_run(run, function=function.__name__)
        with saying_merged_steps(run):
            return function(run, *args, **kwargs)

    signature = inspect.signature(function)
    first, *rest = signature.parameters.values()
    wrapper.__signature__ = signature.replace(  # type: ignore[attr-defined]
        parameters=[first.replace(annotation=RUN_OR_PATH), *rest])
    wrapper.__module__ = __name__
    summary, _, rest = inspect.cleandoc(function.__doc__ or "").partition("\n\n")
    wrapper.__doc__ = (f"{summary}\n\nHere ``run`` may also be the path of a log, "
                       "loaded with the loader's\ndefaults (:func:`as_run`).\n\n" + rest)
    return wrapper


analyse_run = _on_a_run_or_path(_analyse_run)
diagnose = _on_a_run_or_path(_diagnose)
advise_log = _on_a_run_or_path(_advise_log)


def fit_run(run: Run, *, model: str = "all", momentum: float | None = None,
            train_fraction: float = 1.0,
            reward_range: tuple[float, float] | None = None) -> dict[str, Any]:
    """Fit the reward of ``run``; below a ``train_fraction`` of 1, fit its leading part only.

    Parameters
    ----------
    run : Run
        The loaded run.
    model : str
        One model of :data:`~grpodyn.empirical.logs.run_analysis.FIT_MODELS`, or ``all``.
    momentum : float, optional
        Optimiser momentum (Adam's beta1); default the log's.
    train_fraction : float
        In (0, 1]: below 1, every model, weight, the plateau and tau are fitted on this leading
        fraction of the points (``fitted_on`` says which steps) and the rest is forecast and
        scored beside them (``forecast``, with the same plateau).
    reward_range : (lo, hi), optional
        The range the reward can reach; default inferred.

    Returns
    -------
    dict
        The JSON object of ``grpodyn fit``: strict JSON (non-finite floats as null). It holds
        no ``diagnosis`` (``grpodyn fit`` makes none; ``grpodyn diagnose LOG`` does).
    """
    analysis = _analyse_run(run, momentum=momentum, reward_range=reward_range,
                            train_fraction=train_fraction if train_fraction < 1 else None,
                            models=FIT_MODELS if model == "all" else (model,),
                            diagnose_run=False, fit_on_training_part=True)
    out = analysis.to_dict()
    del out["diagnosis"]  # not made here: a null would read as "looked for, none found"
    return finite_json(out)
