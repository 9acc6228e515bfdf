"""`aqmlab compare FILE`: one scenario under several mechanisms, one row each."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from .. import compare as comparison
from .. import terminal
from .._core import ScenarioError
from ..mechanisms import presets_text
from ..outdir import OutputError, check_folder_path
from ..progress import RunProgress
from ..scenario import Scenario, load
from ._common import command_app, command_help, console, fail, interrupted, print_json, say

app = command_app()


@app.command(
    help=command_help(
        "compare",
        "Prints one row per mechanism: what ran (qdisc type and buffer), goodput of each flow group (Mbps), "
        "Jain's index of goodput / fair share, the bottleneck's utilisation, the drop rate over the "
        "measurement window, each flow group's median and 99th-percentile queueing delay per packet at the "
        "bottleneck (ms: from its arrival at the queue to the start of its transmission), and the backlog's "
        "(`backlog_delay_*`: the queue's bytes over the link's rate, sampled; what a FIFO makes every packet "
        "wait, not what a scheduler does).\n\n"
        "A mechanism is `scenario` (the bottleneck's qdisc as the file sets it, unchanged), a preset, or any "
        "qdisc type with its own defaults (buffer `default`: see docs/scenario.md). `all` is `scenario` then "
        f"every preset. {presets_text()}\n\n"
        "With --emulate, each mechanism runs in real time between real Linux TCP/UDP endpoints, as "
        "`aqmlab emulate` runs a scenario (root; dumbbells), one after the other, and the table gains the "
        "forwarder's time added per pass (µs).\n\n"
        "--link names the link the mechanisms go on, as the results name it (`B->C`): a graph topology has no "
        "one bottleneck, so there it is required; in a dumbbell it is L->R (the default) or R->L. The row's "
        "utilisation and delays are that link's (by default the busiest link's).\n\n"
        "With --out, writes compare.csv, compare.png and compare.json (what ran); `aqmlab report DIR` makes "
        "a page of them.",
    )
)
def compare(
    file: Annotated[
        Path, typer.Argument(help="Scenario file (TOML), or the name of a shipped one (`aqmlab scenarios`).")
    ],
    mechanisms: Annotated[
        str,
        typer.Option("--mechanisms", "-m", help="Comma-separated: `scenario`, preset names, qdisc types; or `all`."),
    ] = "all",
    link: Annotated[
        str | None,
        typer.Option("--link", help='The link to put each mechanism on, e.g. "B->C" (required in a graph topology).'),
    ] = None,
    out: Annotated[Path | None, typer.Option("--out", "-o", help="Folder for compare.csv and compare.png.")] = None,
    json_output: Annotated[
        bool, typer.Option("--json", help='Print {"mechanisms": [{"mechanism": ..., ...}, ...]} on stdout.')
    ] = False,
    emulated: Annotated[
        bool, typer.Option("--emulate", help="Run each mechanism emulated, in real time (root; `aqmlab emulate`).")
    ] = False,
) -> None:
    names = [name.strip() for name in mechanisms.split(",") if name.strip()]
    if not names:
        raise fail("--mechanisms: give at least one name, or all")
    try:
        scenario = load(file)
        _check_link(scenario, link, file)
        if out is not None:
            check_folder_path(out)
        with RunProgress(console) as bars:
            table, runs = comparison.compare(
                scenario, names, link=link, emulated=emulated, note=lambda text: say(f"note: {text}"), progress=bars
            )
    except (ScenarioError, OutputError) as e:
        raise fail(str(e)) from None
    except OSError as e:
        raise fail(str(e), code=1) from None
    except KeyboardInterrupt as e:
        raise interrupted(e) from None
    written = comparison.save(table, runs, scenario, out, link=link) if out is not None else []
    if json_output:
        print_json({"mechanisms": table.to_dict(orient="records")})
    else:
        how = "emulated" if emulated else "compared"
        terminal.show(terminal.frame_table(table, f"{file.name}: mechanisms {how}", wide=True))
    if written:
        say(f"wrote {', '.join(str(path) for path in written)}")


def _check_link(scenario: Scenario, link: str | None, file: Path) -> None:
    """Refuses, before anything runs, a --link the scenario has no such link for, or none where
    it has no one bottleneck (a graph), listing its links."""
    try:
        scenario.qdisc(link)
    except ScenarioError:
        links = ", ".join(scenario.qdisc_links())
        if link is None:
            raise ScenarioError(
                f'{file}: a graph topology has no one bottleneck: name the link with --link "A->B", one of {links}'
            ) from None
        raise ScenarioError(f"--link {link}: no such link in {file}; its links are {links}") from None
