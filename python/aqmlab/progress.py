"""Progress bars (rich) for runs that take longer than a few seconds. rich is imported when a
bar first appears: a short run loads none of it (issue 15)."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from rich.console import Console
    from rich.progress import Progress, TaskID
    from rich.status import Status

# A bar appears once a run has taken this long; shorter runs print nothing.
SHOW_AFTER_SECONDS = 2.0


class RunProgress:
    """A `progress(done, total, label)` callback for `aqmlab.run`: one bar per run
    (a run starts when `done == 0`), shown only once the run is slow enough to need it, on the
    console that `console()` returns then.

        with RunProgress(console) as bars, aqmlab.reporting(bars):
            ...  # every aqmlab.run in here reports
    """

    def __init__(self, console: Callable[[], Console], show_after: float = SHOW_AFTER_SECONDS):
        self.console = console
        self.show_after = show_after
        self._progress: Progress | None = None
        self._task: TaskID | None = None
        self._started = 0.0
        self._status: Status | None = None

    def __enter__(self) -> RunProgress:
        return self

    def __exit__(self, *exc: object) -> None:
        if self._progress is not None:
            self._progress.stop()
            self._progress = None
        if self._status is not None:
            self._status.stop()
            self._status = None

    def __call__(self, done: float, total: float, label: str) -> None:
        if done == 0.0:
            self._started = time.monotonic()
            self._task = None
            return
        if self._task is None:
            if time.monotonic() - self._started < self.show_after:
                return
            if self._progress is None:
                from rich.progress import BarColumn, Progress, TextColumn, TimeRemainingColumn

                self._progress = Progress(
                    TextColumn("{task.description}"),
                    BarColumn(),
                    TextColumn("{task.completed:.1f}/{task.total:.1f} s simulated"),
                    TimeRemainingColumn(),
                    console=self.console(),
                )
                self._progress.start()
            self._task = self._progress.add_task(label, total=total)
        self._progress.update(self._task, completed=done, description=label)

    def stage(self, what: str) -> None:
        """Names what happens after the simulation (writing tables, drawing plots): on the last
        run's bar if one is shown, else on a spinner line that goes when the command ends (on a
        terminal only: rich draws neither into a file)."""
        if self._progress is not None and self._task is not None:
            self._progress.update(self._task, description=what)
            self._progress.refresh()
            return
        if self._status is None:
            self._status = self.console().status(what)
            self._status.start()
        else:
            self._status.update(what)


def job_progress(console: Console) -> Progress:
    """A bar counting finished jobs (sweeps)."""
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeElapsedColumn,
        TimeRemainingColumn,
    )

    return Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        TimeRemainingColumn(),
        console=console,
    )
