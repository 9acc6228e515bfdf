"""`aqmlab report DIR`: the HTML page(s) of an output folder."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from ..report import page_kind, write_report
from ._common import command_app, command_help, fail, say

app = command_app()


@app.command(
    help=command_help(
        "report",
        "DIR/report.html for the folder of `aqmlab run`, `reproduce ID` or `sweep` (figures embedded, tables, "
        "the scenario, the summary, pass/fail marks); for the folder of `reproduce --all`, each experiment's "
        "page and DIR/index.html; for the folder of `characterize`, DIR/index.html and a page per test.",
    )
)
def report(
    folder: Annotated[Path, typer.Argument(help="An output folder (--out) of run, reproduce or sweep.")],
) -> None:
    try:
        written = write_report(folder)
    except ValueError as e:  # OutputError included: a damaged or foreign file, named
        raise fail(str(e)) from None
    # A suite's or a characterization's index comes first, then a page per experiment or test.
    pages = [path for path in written[1:] if path.suffix == ".html"]
    more = f" and {len(pages)} {page_kind(folder).subpages}" if pages else ""
    say(f"wrote {written[0]}{more}")
