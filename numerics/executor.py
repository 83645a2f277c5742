"""Running many independent tasks: in this process, in a local process pool, or on Dask.

A task is a picklable zero-argument callable (a ``functools.partial`` of a module-level
function) that carries its own seed, so its result does not depend on which worker runs it or
in which order: the results are identical whatever the executor. :func:`run_tasks` returns them
in task order.

Executors (``executor=``):

- ``"auto"`` (default): a local process pool over all usable cores when there are at least two
  tasks and two cores, otherwise this process;
- ``"serial"``: this process, in order;
- ``"process"``: a local :class:`concurrent.futures.ProcessPoolExecutor`;
- a Dask scheduler address (``"tcp://host:8786"``) or a ``distributed.Client``: the user's
  cluster (the ``dask`` extra). No scheduling of our own: Dask places the tasks.

Workers run their BLAS single-threaded (threadpoolctl, when installed), so a task's cost does not
depend on the machine's thread pool and workers do not oversubscribe the cores. A tqdm progress
bar is shown on a terminal (``progress=None``) and never under ``--json``.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Sequence
from typing import Any

__all__ = ["run_tasks", "usable_cores", "describe_executor"]


def usable_cores() -> int:
    """Cores this process may run on (the affinity mask where the OS has one)."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - macOS, Windows
        return os.cpu_count() or 1


def _single_threaded_blas() -> None:
    """Pool initialiser: one BLAS thread per worker (no-op without threadpoolctl)."""
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:  # pragma: no cover - threadpoolctl is in the fast extra
        return
    threadpool_limits(limits=1)


def _call(task: Callable[[], Any]) -> Any:
    return task()


def _progress_bar(total: int, description: str, progress: bool | None):
    """A tqdm bar, or None when disabled, not on a terminal, or tqdm is missing."""
    if progress is None:
        progress = sys.stderr.isatty()
    if not progress:
        return None
    try:
        from tqdm import tqdm
    except ImportError:  # pragma: no cover - tqdm ships with the optional extras
        return None
    return tqdm(total=total, desc=description, unit="task", file=sys.stderr)


def describe_executor(executor: Any, tasks: int) -> str:
    """What :func:`run_tasks` will use for ``tasks`` tasks: "serial", "process:N" or "dask"."""
    if executor is None or executor == "auto":
        workers = min(usable_cores(), tasks)
        return "serial" if workers < 2 else f"process:{workers}"
    if executor == "serial":
        return "serial"
    if executor == "process":
        return f"process:{max(1, min(usable_cores(), tasks))}"
    return "dask"


def run_tasks(tasks: Sequence[Callable[[], Any]], *, executor: Any = "auto",
              progress: bool | None = None, description: str = "tasks",
              costs: Sequence[float] | None = None) -> list[Any]:
    """Run independent tasks and return their results in task order.

    Parameters
    ----------
    tasks : sequence of callables
        Zero-argument, picklable (``functools.partial`` of module-level functions), each seeded
        on its own.
    executor : str or distributed.Client
        ``"auto"``, ``"serial"``, ``"process"``, a Dask scheduler address, or a Dask client.
    progress : bool, optional
        Show a tqdm bar on stderr; default: only when stderr is a terminal.
    description : str
        Label of the progress bar.
    costs : sequence of float, optional
        Relative cost of each task: pools and clusters start the costliest first (better
        balance); the results stay in task order.

    Raises
    ------
    ValueError
        For an executor that is none of the above.
    """
    tasks = list(tasks)
    if isinstance(executor, str) and executor not in ("auto", "serial", "process") \
            and ":" not in executor:
        raise ValueError(f"executor must be 'auto', 'serial', 'process', a Dask scheduler "
                         f"address (tcp://host:port) or a distributed.Client, got {executor!r}")
    if costs is not None and len(costs) != len(tasks):
        raise ValueError(f"costs has {len(costs)} entries for {len(tasks)} tasks")
    order = sorted(range(len(tasks)), key=lambda i: -costs[i]) if costs is not None \
        else list(range(len(tasks)))
    kind = describe_executor(executor, len(tasks))
    bar = _progress_bar(len(tasks), description, progress)
    try:
        if kind == "serial":
            results = []
            for task in tasks:
                results.append(task())
                if bar is not None:
                    bar.update()
            return results
        if kind.startswith("process"):
            return _run_pool(tasks, order, int(kind.split(":")[1]), bar)
        return _run_dask(tasks, order, executor, bar)
    finally:
        if bar is not None:
            bar.close()


def _run_pool(tasks: list[Callable[[], Any]], order: list[int], workers: int, bar) -> list[Any]:
    from concurrent.futures import ProcessPoolExecutor, as_completed

    results: list[Any] = [None] * len(tasks)
    with ProcessPoolExecutor(max_workers=workers, initializer=_single_threaded_blas) as pool:
        futures = {pool.submit(_call, tasks[index]): index for index in order}
        for future in as_completed(futures):
            results[futures[future]] = future.result()
            if bar is not None:
                bar.update()
    return results


def _run_dask(tasks: list[Callable[[], Any]], order: list[int], executor: Any, bar
              ) -> list[Any]:
    try:
        from distributed import Client, as_completed
    except ImportError:
        raise ImportError("a Dask scheduler needs the dask extra: pip install "
                          "'grpodyn[dask]'") from None
    own = isinstance(executor, str)
    client = Client(executor) if own else executor
    try:
        futures = client.map(_call, [tasks[i] for i in order], pure=False)
        index = {future.key: i for i, future in zip(order, futures, strict=True)}
        results: list[Any] = [None] * len(tasks)
        for future in as_completed(futures):
            results[index[future.key]] = future.result()
            if bar is not None:
                bar.update()
        return results
    finally:
        if own:
            client.close()
