"""`aqmlab compare FILE`: one scenario under several mechanisms, one row each."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from .. import compare as comparison
from .. import terminal
from .._core import ScenarioError
from ..scenario import load
from ._common import command_app, command_help, fail, print_json, say

app = command_app()


@app.command(
    help=command_help(
        "compare",
        "Prints one row per mechanism: goodput of each flow group (Mbps), Jain's index of goodput / fair share,"
        " the bottleneck's utilisation, the drop rate over the measurement window, and the median and 99th-"
        "percentile queueing delay (ms). A mechanism is a preset (the CSFQ paper's configurations and aqmlab's"
        " other mechanisms on its 64 KB buffer; `all` for every preset) or any qdisc type with its defaults. "
        "With --out, writes compare.csv and compare.png.",
    )
)
def compare(
    file: Annotated[
        Path, typer.Argument(help="Scenario file (TOML), or the name of a shipped one (`aqmlab scenarios`).")
    ],
    mechanisms: Annotated[
        str, typer.Option("--mechanisms", "-m", help="Comma-separated preset names or qdisc types, or `all`.")
    ] = "all",
    out: Annotated[Path | None, typer.Option("--out", "-o", help="Folder for compare.csv and compare.png.")] = None,
    json_output: Annotated[
        bool, typer.Option("--json", help='Print {"mechanisms": [{"mechanism": ..., ...}, ...]} on stdout.')
    ] = False,
) -> None:
    names = [name.strip() for name in mechanisms.split(",") if name.strip()]
    if not names:
        raise fail("--mechanisms: give at least one name, or all")
    try:
        scenario = load(file)
        table, _ = comparison.compare(scenario, names)
    except ScenarioError as e:
        raise fail(str(e)) from None
    if out is not None:
        out.mkdir(parents=True, exist_ok=True)
        table.to_csv(out / "compare.csv", index=False)
        comparison.compare_figure(table, title=f"{scenario.get_or('name', file.stem)}").savefig(out / "compare.png")
    if json_output:
        print_json({"mechanisms": table.to_dict(orient="records")})
    else:
        terminal.show(terminal.frame_table(table, f"{file.name}: mechanisms compared", wide=True))
    if out is not None:
        say(f"wrote {out / 'compare.csv'}, {out / 'compare.png'}")
