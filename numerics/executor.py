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

__all__ = ["run_tasks", "start_tasks", "PendingTasks", "usable_cores", "describe_executor"]


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


def _progress_bar(total: int, description: str, progress: bool | None) -> Any:
    """Return a tqdm bar, or None when disabled, not on a terminal, or tqdm is missing."""
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
    """Name what :func:`run_tasks` uses for ``tasks`` tasks: "serial", "process:N", "dask"."""
    if executor is None or executor == "auto":
        workers = min(usable_cores(), tasks)
        return "serial" if workers < 2 else f"process:{workers}"
    if executor == "serial":
        return "serial"
    if executor == "process":
        return f"process:{max(1, min(usable_cores(), tasks))}"
    return "dask"


class PendingTasks:
    """Tasks started by :func:`start_tasks`; :meth:`results` waits for them (in task order).

    While a pool or cluster works, the caller's process is free for other work.
    """

    def __init__(self, tasks: list[Callable[[], Any]], order: list[int], kind: str,
                 executor: Any, bar: Any) -> None:
        self._tasks, self._bar, self._kind = tasks, bar, kind
        self._pool = self._client = None
        self._own_client = False
        self._futures: dict[Any, int] = {}
        if kind.startswith("process"):
            from concurrent.futures import ProcessPoolExecutor

            self._pool = ProcessPoolExecutor(max_workers=int(kind.split(":")[1]),
                                             initializer=_single_threaded_blas)
            self._futures = {self._pool.submit(_call, tasks[i]): i for i in order}
        elif kind == "dask":
            try:
                from distributed import Client
            except ImportError:
                raise ImportError("a Dask scheduler needs the dask extra: pip install "
                                  "'grpodyn[dask]'") from None
            self._own_client = isinstance(executor, str)
            self._client = Client(executor) if self._own_client else executor
            futures = self._client.map(_call, [tasks[i] for i in order], pure=False)
            self._futures = dict(zip(futures, order, strict=True))

    def results(self) -> list[Any]:
        """Return the results in task order (runs the tasks here when the executor is serial)."""
        results: list[Any] = [None] * len(self._tasks)
        try:
            if self._kind == "serial":
                for index, task in enumerate(self._tasks):
                    results[index] = task()
                    self._tick()
            else:
                if self._pool is not None:
                    from concurrent.futures import as_completed
                else:
                    from distributed import as_completed
                for future in as_completed(list(self._futures)):
                    results[self._futures[future]] = future.result()
                    self._tick()
        finally:
            self._close()
        return results

    def _tick(self) -> None:
        if self._bar is not None:
            self._bar.update()

    def _close(self) -> None:
        if self._bar is not None:
            self._bar.close()
        if self._pool is not None:
            self._pool.shutdown(cancel_futures=True)
        if self._own_client:
            self._client.close()


def start_tasks(tasks: Sequence[Callable[[], Any]], *, executor: Any = "auto",
                progress: bool | None = None, description: str = "tasks",
                costs: Sequence[float] | None = None) -> PendingTasks:
    """Start independent tasks and return at once; ``.results()`` waits for them.

    Same arguments as :func:`run_tasks`.
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
    return PendingTasks(tasks, order, kind, executor,
                        _progress_bar(len(tasks), description, progress))


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
    return start_tasks(tasks, executor=executor, progress=progress, description=description,
                       costs=costs).results()
