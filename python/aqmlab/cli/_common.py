"""What every command shares: its typer app, stderr messages and the bars' console, errors and exit statuses, --json
output, and the job bar of `reproduce --all` and `sweep`."""

from __future__ import annotations

import contextlib
import functools
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer

from .._core import ScenarioError
from ..progress import job_progress
from ..results import to_json_value
from . import COMMANDS

if TYPE_CHECKING:
    from rich.console import Console


def command_app() -> typer.Typer:
    """The typer app of one command's module, with the settings of the `aqmlab` app."""
    return typer.Typer(add_completion=False, pretty_exceptions_enable=False, rich_markup_mode=None)


def command_help(name: str, details: str) -> str:
    """A command's --help: its summary line (`COMMANDS`), then `details`."""
    return f"{COMMANDS[name]}\n\n{details}"


@functools.cache
def console() -> Console:
    """The progress bars' console, on stderr. rich is imported on first use: a command that
    shows no bar loads none of it."""
    from rich.console import Console

    return Console(stderr=True)


def say(message: str) -> None:
    """Progress and diagnostics go to stderr, so that stdout carries only results (tables, or --json)."""
    print(message, file=sys.stderr)


def fail(message: str, code: int = 2) -> typer.Exit:
    """One line `error: message` on stderr; raise the result to exit with `code`."""
    print(f"error: {message}", file=sys.stderr)
    return typer.Exit(code)


def interrupted(e: KeyboardInterrupt) -> typer.Exit:
    """Ctrl-C: one line saying how far the run got (the core's message), and status 130 as a shell uses."""
    print(str(e) or "interrupted", file=sys.stderr)
    return typer.Exit(130)


def print_json(data: Any) -> None:
    sys.stdout.write(json.dumps(to_json_value(data)) + "\n")


def run_jobs(
    run: Callable[[Callable[[Any, Any, Any], None]], Any],
    noun: str,
    total: int,
    pending: int,
    kept_in: Path,
    failure: Callable[[Any, Any], str],
    mode: str | None = None,
) -> Any:
    """`run(on_done)` for `reproduce --all` and `sweep`: says how many of the `total` `noun` are
    already done, counts the `pending` ones on a bar as `run` reports each with
    `on_done(job, wall, error)` (no bar when none is pending: a resumed run that only combines
    the results), prints each failure as `failure(job, error)` words it; on Ctrl-C says how many
    finished, kept in `kept_in`, and exits with status 130."""
    heading = f"{total} {noun}" + (f" ({mode})" if mode else "")
    say(f"{heading}, {total - pending} already done, running {pending}")
    finished = 0

    def done(job: Any, wall: Any, error: Any) -> None:
        nonlocal finished
        finished += 1
        if bar is not None:
            bar.advance(task)
        if error is not None:
            say(failure(job, error))

    try:
        with job_progress(console()) if pending else contextlib.nullcontext() as bar:
            task = bar.add_task(noun, total=pending) if bar is not None else None
            return run(done)
    except ScenarioError as e:
        raise fail(str(e)) from None
    except KeyboardInterrupt:
        print(
            f"interrupted: {finished} of {pending} {noun} finished, kept in {kept_in}; "
            "run the same command again to resume",
            file=sys.stderr,
        )
        raise typer.Exit(130) from None
