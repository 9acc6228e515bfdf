"""What every command shares: its typer app, stderr messages and the bars' console, errors and exit statuses, --json
output, and the job bar of `reproduce --all` and `sweep`."""

from __future__ import annotations

import contextlib
import functools
import json
import sys
from collections.abc import Callable, Iterator, Mapping
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, NamedTuple

import typer

from .. import _core, terminal
from .._core import ScenarioError
from ..outdir import OutputError
from ..progress import job_progress
from ..results import to_json_value
from ..workers import ClusterError
from . import COMMANDS

if TYPE_CHECKING:
    from rich.console import Console

    from ..progress import RunProgress
    from ..results import Results
    from ..scenario import Scenario


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


class Time(NamedTuple):
    """A time option's value, as written (for messages) and in seconds."""

    text: str
    seconds: float


def time_parser(least: float | None = None) -> Callable[[str], Time]:
    """The parser of a time option: `"10s"`, `"500ms"` as a scenario's times (the core reads
    them), or a bare number of seconds, as these options took before they took units (issue 34
    item 9); with `least`, at least that many seconds. A bad value exits with status 2, the
    option named by typer: `Invalid value for '--duration': invalid time "10x": unknown unit ...`."""

    def parse(text: str) -> Time:
        try:
            value = Time(text, _core.seconds_option(text))
        except ScenarioError as e:
            raise typer.BadParameter(str(e)) from None
        if least is not None and value.seconds < least:
            raise typer.BadParameter(f"must be at least {least:g} s, got {text}")
        return value

    return parse


# A time option's flag -> the dotted path it sets and its value (None: not given).
TimeOverrides = Mapping[str, tuple[str, Time | None]]


def _shown(given: TimeOverrides) -> str:
    return " ".join(f"{flag} {value.text}" for flag, (_, value) in given.items() if value is not None)


def with_time_options(scenario: Scenario, options: TimeOverrides) -> Scenario:
    """`scenario` (valid, as loaded) with each given option's seconds at its path, checked: an
    error is the options', so it names them, `--duration 10: simulation.warmup: must be <
    duration (10s), got 10s`."""
    given = {path: value.seconds for path, value in options.values() if value is not None}
    if not given:
        return scenario
    try:
        return scenario.with_(given).validate()
    except ScenarioError as e:
        raise ScenarioError(f"{_shown(options)}: {e}") from None


@contextlib.contextmanager
def blaming(options: TimeOverrides) -> Iterator[None]:
    """A ScenarioError raised within about a field an option set is led by that option
    (`--duration 700: simulation.duration: emulation runs in real time: ...`): for the checks
    that come after `with_time_options` (emulation's)."""
    try:
        yield
    except ScenarioError as e:
        setting = {
            flag: (path, value)
            for flag, (path, value) in options.items()
            if value is not None and str(e).startswith(f"{path}:")
        }
        if not setting:
            raise
        raise ScenarioError(f"{_shown(setting)}: {e}") from None


# Options of the commands that write a run's folder: `run` and `emulate`.
class Format(StrEnum):
    parquet = "parquet"
    csv = "csv"


OutOption = Annotated[
    Path | None, typer.Option("--out", "-o", help="Write the tables, summary.json and plots to this folder.")
]
FormatOption = Annotated[Format, typer.Option("--format", help="File format of the tables.")]
NoPlotsOption = Annotated[bool, typer.Option("--no-plots", help="Do not draw the plots.")]
PcapOption = Annotated[
    str | None,
    typer.Option(
        "--pcap",
        help="Capture these links (comma-separated, by name `L->R` or file name `L-R`) to OUT/<link>.pcap: "
        "every packet each transmits, with IPv4 and TCP/UDP headers. Sets simulation.pcap.",
    ),
]
PcapDropsOption = Annotated[
    bool, typer.Option("--pcap-drops", help="Also capture what those links drop, to OUT/<link>.drops.pcap.")
]


def with_captures(scenario: Scenario, pcap: str | None, pcap_drops: bool, out: Path | None) -> Scenario:
    """`scenario` with --pcap and --pcap-drops applied (validated); `fail` if --pcap has no --out."""
    if pcap is not None:
        scenario = scenario.with_({"simulation.pcap": [name.strip() for name in pcap.split(",") if name.strip()]})
    if pcap_drops:
        scenario = scenario.with_({"simulation.pcap_drops": True})
    scenario.validate()
    if pcap is not None and out is None:
        raise fail("--pcap: give --out DIR, the folder the captures are written to")
    if scenario.get_or("simulation.pcap") and out is None:
        say("simulation.pcap: no capture written without --out DIR")
    return scenario


def save_results(results: Results, folder: Path, out: Path, format: str, plots: bool, bars: RunProgress) -> None:
    """The tables, summary and plots of a run, into `folder` (which becomes `out`)."""
    from ..plots import save_run_figures

    try:
        bars.stage(f"writing the tables to {out}")
        results.save(folder, format=format)
        if plots:
            bars.stage(f"drawing the plots into {out}")
            save_run_figures(results, folder)
    except KeyboardInterrupt:
        raise KeyboardInterrupt("interrupted while saving the results: nothing written") from None


# Options of the commands that write an output folder (outdir.py), and of those that use Dask.
WaitOption = Annotated[
    bool, typer.Option("--wait", help="If another aqmlab is writing the output folder, wait for it (default: stop).")
]
ForceOption = Annotated[
    bool, typer.Option("--force", help="Replace an output folder that holds another result (default: refuse).")
]
ConnectTimeoutOption = Annotated[
    Time,
    typer.Option(
        "--connect-timeout",
        help="With --scheduler: how long to wait for the scheduler to answer (`5s`; a bare number is seconds).",
        parser=time_parser(least=0.1),
        metavar="TIME",
    ),
]
WorkerTimeoutOption = Annotated[
    Time,
    typer.Option(
        "--worker-timeout",
        help="With --scheduler: how long to wait while the cluster has no worker (`60s`, `2min`; a bare number is "
        "seconds).",
        parser=time_parser(least=1),
        metavar="TIME",
    ),
]


def run_jobs(
    opening: contextlib.AbstractContextManager[Any],
    run: Callable[[Any, Callable[[Any, Any, Any], None]], Any],
    noun: str,
    kept_in: Path,
    failure: Callable[[Any, Any], str],
    mode: str | None = None,
) -> Any:
    """The jobs of `reproduce --all` and `sweep`: enters `opening` (suite.open_suite or
    sweep.open_sweep: the output folder taken and its results checked), says which results fail
    their manifest and how many of its `total` `noun` are already done, then `run(folder,
    on_done)`, counting the pending ones on a bar as `run` reports each with `on_done(job, wall,
    error)` (no bar when none is pending: a resumed run that only combines the results), and
    printing each failure as `failure(job, error)` words it. On a cluster fault or Ctrl-C, says
    how many finished, kept in `kept_in`, and exits with status 2 or 130."""
    finished = pending = 0
    bar = task = None

    def kept() -> str:
        return f"{finished} of {pending} {noun} finished, kept in {kept_in}; run the same command again to resume"

    def done(job: Any, wall: Any, error: Any) -> None:
        nonlocal finished
        finished += 1
        if bar is not None:
            bar.advance(task)
        if error is not None:
            say(failure(job, error))

    try:
        with opening as folder:
            for name, reason in folder.damaged().items():
                say(f"{name}: {reason}; running it again")
            pending = len(folder.pending)
            heading = f"{folder.total} {noun}" + (f" ({mode})" if mode else "")
            say(f"{heading}, {folder.total - pending} already done, running {pending}")
            with job_progress(console()) if pending else contextlib.nullcontext() as bar:
                task = bar.add_task(noun, total=pending) if bar is not None else None
                return run(folder, done)
    except (ScenarioError, OutputError) as e:
        raise fail(str(e)) from None
    except ClusterError as e:
        raise fail(f"{e}; {kept()}") from None
    except KeyboardInterrupt:
        print(f"interrupted: {kept()}", file=sys.stderr)
        raise typer.Exit(130) from None


def summary_lines(summary: dict[str, Any], wide: bool) -> list[str]:
    """A run's per-flow table (Mbps), then the Jain index, utilisation and drops (`run`, `emulate`)."""
    columns = ["id", "name", "type", "goodput", "fair share", "norm.", "drops", "loss"]
    rows = [
        [
            flow["id"],
            flow["name"],
            flow["type"],
            flow["goodput_bps"] / 1e6,
            flow["fair_share_bps"] / 1e6,
            flow["normalised_goodput"],
            flow["dropped_packets"],
            flow["loss_rate"],
        ]
        for flow in summary["flows"]
    ]
    window = summary["duration"] - summary["warmup"]
    title = f"{summary['name'] or 'run'}: goodput and max-min fair share (Mbps) over the last {window:g} s"
    utilisation = ", ".join(f"{link} {u:.1%}" for link, u in summary["utilisation"].items()) or "-"
    drops = ", ".join(f"{reason} {n}" for reason, n in summary["drops_by_reason"].items()) or "none"
    return [
        *terminal.records_table(columns, rows, title, wide=wide),
        f"Jain index {summary['jain_index']:.4f}   utilisation {utilisation}   drops {drops}",
    ]
