"""Fitting one model to many logs: in this process, a local process pool or a Dask cluster.

A researcher's test bed has hundreds or thousands of reward series. :func:`fit_many` fits the
same model to each (:func:`grpodyn.numerics.fit.fit_curve`, the fits of docs/theory.md section 3)
and returns the results in input order. Every fit is deterministic (a fixed starting grid, no
random numbers), so the results are identical whatever the executor (tested: serial, process
pool, Dask ``LocalCluster``). Pools and clusters receive chunks of series, so that a task's
start-up and transfer cost is shared by many fits.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from functools import partial
from typing import Any

import numpy as np
import numpy.typing as npt

from grpodyn.ground import InputError

from .executor import describe_executor, run_tasks
from .fit import FitResult, fit_at, fit_curve

__all__ = ["fit_many"]

#: Series per task on a pool or cluster: about 0.1-1 s of fits per task at 1000 points.
CHUNK = 64


def _fit_chunk(name: str, chunk: Sequence[tuple[np.ndarray, np.ndarray]], first: int,
               options: dict[str, Any]) -> list[np.ndarray]:
    """Fit ``name`` to each series of a chunk; return each fit's parameters (picklable).

    A model's shape functions are closures (not picklable): the caller rebuilds each
    :class:`~grpodyn.numerics.fit.FitResult` from its parameters (:func:`fit_at`).

    Raises
    ------
    InputError
        Naming the series (its index in the whole batch) that cannot be fitted.
    """
    out = []
    for offset, (t, y) in enumerate(chunk):
        try:
            out.append(fit_curve(name, t, y, **options).theta)
        except InputError as exc:
            raise InputError(f"series {first + offset}: {exc}") from None
    return out


def fit_many(name: str, series: Iterable[tuple[npt.ArrayLike, npt.ArrayLike]], *,
             executor: Any = "auto", progress: bool | None = None,
             chunk: int = CHUNK, **options: Any) -> list[FitResult]:
    """Fit one model to many series (steps, rewards) and return the fits in input order.

    Parameters
    ----------
    name
        Model name (``grpodyn.numerics.fit.MODEL_NAMES`` or ``EXTRA_MODELS``).
    series
        Pairs (t, y) of steps and rewards, as :func:`~grpodyn.numerics.fit.fit_curve` takes.
    executor
        ``"auto"`` (default: a local process pool over all cores when there are at least two
        chunks and two cores, else this process), ``"serial"`` (this process, each fit exactly
        :func:`fit_curve`), ``"process"``, a Dask scheduler address or a ``distributed.Client``
        (:func:`grpodyn.numerics.executor.run_tasks`).
    progress
        tqdm bar over the chunks on a pool or cluster; default: only on a terminal.
    chunk
        Series per task on a pool or cluster (at least 1).
    **options
        Keyword options of :func:`fit_curve` (momentum, plateau_bounds, ...), the same for
        every series (``learning_rate`` differs per series: fit those one by one).

    Returns
    -------
    list of FitResult
        One fit per series, identical whatever the executor.

    Raises
    ------
    InputError
        When a series cannot be fitted (naming its index), or for a chunk below 1.
    """
    pairs = [(np.asarray(t), np.asarray(y)) for t, y in series]
    if isinstance(chunk, bool) or not isinstance(chunk, int) or chunk < 1:
        raise InputError(f"chunk must be a positive integer, got {chunk!r}")
    if "learning_rate" in options:
        raise InputError("fit_many: learning_rate differs per series; fit those with fit_curve")
    if describe_executor(executor, -(-len(pairs) // chunk)) == "serial":
        out = []
        for index, (t, y) in enumerate(pairs):
            try:
                out.append(fit_curve(name, t, y, **options))
            except InputError as exc:
                raise InputError(f"series {index}: {exc}") from None
        return out
    starts = range(0, len(pairs), chunk)
    tasks = [partial(_fit_chunk, name, pairs[first:first + chunk], first, options)
             for first in starts]
    thetas = [theta for part in run_tasks(tasks, executor=executor, progress=progress,
                                          description=f"{name} fits") for theta in part]
    fixed = {key: options[key] for key in ("momentum", "plateau_bounds") if key in options}
    return [fit_at(name, t, y, theta, **fixed)
            for (t, y), theta in zip(pairs, thetas, strict=True)]
