"""Independent tasks on a local process pool or a Dask cluster: the jobs of a sweep, the
experiments of `aqmlab reproduce --all`.

A task is a key and the arguments of one module-level function (workers import it by
name). `run_tasks` calls `finished(key, result, None)` as each task ends, or
`finished(key, None, message)` when it raised one of the `expected` errors; any other
error stops the whole run, as it would in one process.
"""

from __future__ import annotations

import multiprocessing
import signal
from collections.abc import Callable, Sequence
from typing import Any

from ._core import ScenarioError

Finished = Callable[[Any, Any, "str | None"], None]


def run_tasks(
    function: Callable[..., Any],
    tasks: Sequence[tuple[Any, tuple]],
    finished: Finished,
    workers: int = 1,
    scheduler: str | None = None,
    expected: tuple[type[BaseException], ...] = (ScenarioError,),
    dask_key: Callable[[Any], str] = str,
) -> None:
    """Calls `function(*args)` for each `(key, args)` of `tasks`: on the Dask cluster at
    `scheduler` (task names `dask_key(key)`), else on `workers` local processes (in this
    process when 1). Results arrive in the order tasks end."""
    if scheduler:
        _run_on_dask(function, tasks, finished, scheduler, expected, dask_key)
    elif workers == 1:
        for key, args in tasks:
            finished(*_call((function, key, args, expected)))
    else:
        # forkserver: workers never inherit the parent's threads (progress bars, Dask) mid-lock.
        # Workers ignore Ctrl-C; on it the parent stops them (leaving the block terminates the
        # pool): finished tasks have reported, a task cut short leaves what it left.
        context = multiprocessing.get_context("forkserver")
        calls = [(function, key, args, expected) for key, args in tasks]
        with context.Pool(workers, initializer=signal.signal, initargs=(signal.SIGINT, signal.SIG_IGN)) as pool:
            for outcome in pool.imap_unordered(_call, calls):
                finished(*outcome)


def _call(call: tuple[Callable[..., Any], Any, tuple, tuple]) -> tuple[Any, Any, str | None]:
    """(key, result, None), or (key, None, the message of an expected error)."""
    function, key, args, expected = call
    try:
        return key, function(*args), None
    except expected as e:
        return key, None, str(e) or type(e).__name__


def _run_on_dask(
    function: Callable[..., Any],
    tasks: Sequence[tuple[Any, tuple]],
    finished: Finished,
    scheduler: str,
    expected: tuple[type[BaseException], ...],
    dask_key: Callable[[Any], str],
) -> None:
    try:
        from dask.distributed import Client, as_completed
    except ImportError:
        raise ScenarioError("--scheduler: Dask is not installed (pip install 'aqmlab[dask]')") from None
    with Client(scheduler) as client:
        futures = {client.submit(function, *args, key=dask_key(key), pure=False): key for key, args in tasks}
        for future in as_completed(list(futures)):
            try:
                result = future.result()
            except expected as e:
                finished(futures[future], None, str(e) or type(e).__name__)
            else:
                finished(futures[future], result, None)
