"""Independent tasks on a local process pool or a Dask cluster: the jobs of a sweep, the
experiments of `aqmlab reproduce --all`.

A task is a key and the arguments of one module-level function (workers import it by
name). `run_tasks` calls `finished(key, result, None)` as each task ends, or
`finished(key, None, message)` when it raised one of the `expected` errors; any other
error stops the whole run, as it would in one process.

On a Dask cluster, a fault ends the run with `ClusterError`, one line: no scheduler at the
address (after `connect_timeout`), a malformed address, the scheduler lost, or no worker left
for `worker_timeout`. Tasks that finished have reported by then (a sweep's jobs are on disk).
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from ._core import ScenarioError

Finished = Callable[[Any, Any, "str | None"], None]

# The CLI reads the timeouts below at start-up: multiprocessing, logging and Dask are imported
# where they are used.

# How long a Dask scheduler may take to answer: a reachable one answers in milliseconds, and
# distributed's own default (30 s) leaves a user with a typo waiting.
CONNECT_TIMEOUT_S = 5.0
# How long a run waits with no worker in the cluster before it gives up (workers may be
# restarting: a minute, by default).
WORKER_TIMEOUT_S = 60.0
# How often the cluster's health is checked while no task ends.
POLL_S = 0.5


class ClusterError(RuntimeError):
    """The Dask cluster cannot run the tasks (the message is one line, naming the address)."""


@dataclass(frozen=True)
class Cluster:
    """A Dask scheduler's address and how long to wait for it and for its workers."""

    address: str
    connect_timeout: float = CONNECT_TIMEOUT_S
    worker_timeout: float = WORKER_TIMEOUT_S


def run_tasks(
    function: Callable[..., Any],
    tasks: Sequence[tuple[Any, tuple]],
    finished: Finished,
    workers: int = 1,
    scheduler: str | Cluster | None = None,
    expected: tuple[type[BaseException], ...] = (ScenarioError,),
    dask_key: Callable[[Any], str] = str,
) -> None:
    """Calls `function(*args)` for each `(key, args)` of `tasks`: on the Dask cluster at
    `scheduler` (an address, or a `Cluster` with its timeouts; task names `dask_key(key)`),
    else on `workers` local processes (in this process when 1). Results arrive in the order
    tasks end."""
    if scheduler:
        cluster = scheduler if isinstance(scheduler, Cluster) else Cluster(scheduler)
        _run_on_dask(function, tasks, finished, cluster, expected, dask_key)
    elif workers == 1:
        for key, args in tasks:
            finished(*_call((function, key, args, expected)))
    else:
        import multiprocessing
        import signal

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


@contextlib.contextmanager
def _quiet(name: str) -> Iterator[None]:
    """Only critical messages from the logger `name` within the block."""
    import logging

    logger = logging.getLogger(name)
    level = logger.level
    logger.setLevel(logging.CRITICAL)
    try:
        yield
    finally:
        logger.setLevel(level)


def _run_on_dask(
    function: Callable[..., Any],
    tasks: Sequence[tuple[Any, tuple]],
    finished: Finished,
    cluster: Cluster,
    expected: tuple[type[BaseException], ...],
    dask_key: Callable[[Any], str],
) -> None:
    from concurrent.futures import CancelledError

    try:
        from dask.distributed import Client, TimeoutError, wait
    except ImportError:
        raise ScenarioError("--scheduler: Dask is not installed (pip install 'aqmlab[dask]')") from None
    where = f"--scheduler {cluster.address}"
    try:
        client = Client(cluster.address, timeout=cluster.connect_timeout)
    except (OSError, TimeoutError):
        raise ClusterError(
            f"{where}: no Dask scheduler answered within {cluster.connect_timeout:g} s (--connect-timeout)"
        ) from None
    except (ValueError, TypeError) as e:
        raise ClusterError(f"{where}: not a Dask scheduler address, e.g. tcp://host:8786 ({e})") from None
    except Exception as e:  # something answered that is not a Dask scheduler (a web server, a proxy)
        raise ClusterError(f"{where}: no Dask scheduler answers there ({type(e).__name__}: {e})") from None
    lost = ClusterError(f"{where}: lost the connection to the scheduler")
    # distributed logs the lost connection as it gives up reconnecting; `lost` says it in one line.
    with _quiet("distributed.client"), client:
        futures = {client.submit(function, *args, key=dask_key(key), pure=False): key for key, args in tasks}
        waiting, alone_since = set(futures), None
        while waiting:
            try:
                done, waiting = wait(waiting, timeout=POLL_S, return_when="FIRST_COMPLETED")
            except TimeoutError:
                done = set()
            except CancelledError:  # the client cancels every future when it loses the scheduler
                raise lost from None
            for future in done:
                try:
                    result = future.result()
                except CancelledError:
                    raise lost from None
                except expected as e:
                    finished(futures[future], None, str(e) or type(e).__name__)
                else:
                    finished(futures[future], result, None)
            if done:
                continue
            if client.status != "running":
                raise lost
            if client.nthreads():
                alone_since = None
            elif alone_since is None:
                alone_since = time.monotonic()
            elif time.monotonic() - alone_since > cluster.worker_timeout:
                raise ClusterError(f"{where}: no worker for {cluster.worker_timeout:g} s (--worker-timeout)")
