"""`aqmlab scenarios`: the scenario files and sweep specs shipped in the package."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer

from .. import terminal
from .._core import ScenarioError
from ..scenario import SWEEPS, description, scenarios_dir, shipped, shipped_file
from ._common import command_app, command_help, fail, say

app = command_app()


@app.command(
    help=command_help(
        "scenarios",
        "Without NAME, one line each: name and description. With NAME, print that file (a commented TOML "
        "scenario or sweep spec); with --copy DEST, write it to DEST (a file, or a folder to put NAME.toml "
        "in) to edit. Every command that takes a scenario or sweep file also takes a shipped one's name: "
        "`aqmlab run csfq-fig3b`, `aqmlab sweep droptail-buffer --out DIR`; in Python, "
        '`aqmlab.load("csfq-fig3b")`. Every field, unit and default: docs/scenario.md in the aqmlab source.',
    )
)
def scenarios(
    name: Annotated[str | None, typer.Argument(help="A shipped scenario or sweep spec to print or copy.")] = None,
    copy: Annotated[
        Path | None, typer.Option("--copy", help="Write NAME's file here (a file name, or a folder).")
    ] = None,
) -> None:
    if name is None:
        if copy is not None:
            raise fail("--copy: name the scenario to copy, e.g. aqmlab scenarios csfq-fig3b --copy my.toml")
        terminal.show(_listing())
        return
    try:
        source = shipped_file(name)
    except ScenarioError as e:
        raise fail(str(e)) from None
    if copy is None:
        sys.stdout.write(source.read_text())
        return
    target = copy / source.name if copy.is_dir() else copy
    if target.exists():
        raise fail(f"--copy: {target} exists; give another name (nothing was overwritten)")
    try:
        target.write_text(source.read_text())
    except OSError as e:
        raise fail(f"--copy: {target}: {e.strerror or e}") from None
    say(f"wrote {target}: run it with `aqmlab run {target}`" if source.parent == scenarios_dir() else f"wrote {target}")


def _listing() -> list[str]:
    files = shipped()
    kinds = {
        "scenarios (aqmlab run NAME, compare NAME)": [n for n, p in files.items() if p.parent.name != SWEEPS],
        "sweep specs (aqmlab sweep NAME --out DIR)": [n for n, p in files.items() if p.parent.name == SWEEPS],
    }
    lines = []
    for title, names in kinds.items():
        lines += terminal.table(["name", "description"], [[n, description(files[n])] for n in names], title)
    return [*lines, "`aqmlab scenarios NAME` prints one; `--copy DEST` writes it to edit."]
