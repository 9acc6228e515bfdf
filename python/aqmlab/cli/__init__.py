"""The `aqmlab` command: one module per command in this package (`run`, `reproduce`, ...).

A command's module is imported only when that command runs (or its `--help` is asked):
each imports at its top what it needs, and start-up loads one command, not all of them
(issue 15: `aqmlab --help` and `aqmlab run FILE --json` load neither pandas nor
matplotlib). `aqmlab --help` lists the commands from `COMMANDS` below.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Iterator, Mapping
from typing import Annotated, Any

import typer
from typer.core import TyperGroup

from .. import __version__

# Each command's one-line summary, as `aqmlab --help` lists them; a command's own `--help`
# starts with the same line (`_common.command_help`).
COMMANDS: dict[str, str] = {
    "run": "Run one scenario and print per-flow goodput against fair share, drops, the Jain index and link "
    "utilisation.",
    "reproduce": "Reproduce a paper experiment and compare with the paper's numbers.",
    "report": "Write one self-contained HTML page of an output folder.",
    "compare": "Run one scenario under several queue disciplines on its bottleneck and compare them.",
    "characterize": "Run the RFC 7928 AQM characterization tests for each mechanism and write their report.",
    "sweep": "Run every combination of a parameter grid over a base scenario.",
    "validate": "Check the simulator against closed-form models and exact event counts.",
    "bench": "Time whole runs and print wall time, simulated events and events/second.",
    "scenarios": "List the scenarios and sweep specs shipped with aqmlab; print one, or copy it to edit.",
    "export": "Write a scenario as a script for another simulator (ns-2).",
    "crosscheck": "Run one scenario in ns-2 and in aqmlab and compare the outcomes.",
    "emulate": "Run a dumbbell scenario's queue disciplines in real time between real Linux TCP/UDP endpoints (root).",
}


class _Commands(Mapping[str, Any]):
    """The commands by name; a command's module is imported when it is first looked up.

    No `click` here: typer 0.26 and later carry their own copy of click (`typer._click`), so a
    `click.Command` annotation would name another package's class, and importing click would make
    it a dependency that typer does not need (issue 34 item 2).
    """

    def __init__(self) -> None:
        self._loaded: dict[str, Any] = {}

    def __getitem__(self, name: str) -> Any:
        if name not in COMMANDS:
            raise KeyError(name)
        if name not in self._loaded:
            module = importlib.import_module(f"{__name__}.{name}")
            self._loaded[name] = typer.main.get_command(module.app)
        return self._loaded[name]

    def __iter__(self) -> Iterator[str]:
        return iter(COMMANDS)

    def __len__(self) -> int:
        return len(COMMANDS)


class _LazyGroup(TyperGroup):
    """A typer group whose commands come from `_Commands`, listed in `--help` from `COMMANDS`."""

    def __init__(self, **attrs: Any) -> None:
        super().__init__(**attrs)
        self.commands = _Commands()  # type: ignore[assignment]

    def format_commands(self, ctx: typer.Context, formatter: Any) -> None:
        with formatter.section("Commands"):
            formatter.write_dl(list(COMMANDS.items()))


app = typer.Typer(
    cls=_LazyGroup,
    help=(
        "aqmlab: a fast, deterministic packet-level simulator of router queue management "
        "(drop-tail, RED, ...) and fair bandwidth allocation.\n\n"
        "Scenario files are TOML: `aqmlab scenarios` lists those shipped with aqmlab, which every command "
        "also takes by name (`aqmlab run csfq-fig3b`), and copies one out to edit. "
        "Every command that reads one reports a bad value by naming its field, "
        "e.g. `flows[3].rate: must be > 0, got -1`, and exits with status 2. "
        "Ctrl-C stops a command within a second and exits with status 130."
    ),
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    # Plain help: typer's rich help loads rich's markdown and traceback modules, 0.1 s of the
    # 0.15 s that `aqmlab --help` may take (issue 15).
    rich_markup_mode=None,
)


def _version(value: bool) -> None:
    if value:
        print(f"aqmlab {__version__}")
        raise typer.Exit()


@app.callback()
def _options(
    version: Annotated[
        bool, typer.Option("--version", callback=_version, is_eager=True, help="Print the version and exit.")
    ] = False,
) -> None:
    pass


def main() -> None:
    from .._core import MechanismError

    try:
        app()
    except MechanismError as e:
        # A queue discipline written in Python failed: its message and the user's own traceback.
        from ..python_qdisc import failure_text

        print(f"error: {failure_text(e)}", file=sys.stderr)
        sys.exit(2)
