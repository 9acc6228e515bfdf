"""`aqmlab export ns2 FILE`: a scenario as an ns-2.35 Tcl script."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from .._core import ScenarioError
from ..ns2.export import export as to_ns2
from ..scenario import load
from ._common import command_app, command_help, fail, say

app = command_app()
TARGETS = ("ns2",)


@app.command(
    help=command_help(
        "export",
        "`ns2`: an ns-2.35 script (run it with `ns OUT.tcl`) of the same network, flows, seed, start times and "
        "measurement window, printing per-flow delivered bytes, timeouts and drops at the monitored links as "
        "`aqmlab-ns2` lines. Parts ns-2 has: dumbbell, parking-lot and graph topologies; drop-tail (limit + 1 "
        "in ns-2, which keeps limit - 1 waiting), RED (every parameter set), DRR, SFQ; TCP Tahoe, Reno, NewReno "
        'and SACK with profile = "ns2", delayed ACKs, infinite or one-transfer workloads; CBR and ON-OFF. '
        "Another part is an error naming its field (exit status 2). Where ns-2 runs something other than the "
        "scenario says (a floyd93 RED, SFQ), a note on stderr says so. docs/ns2.md has the details.",
    )
)
def export(
    target: Annotated[str, typer.Argument(help="What to write: ns2.")],
    file: Annotated[
        Path, typer.Argument(help="Scenario file (TOML), or the name of a shipped one (`aqmlab scenarios`).")
    ],
    out: Annotated[Path | None, typer.Option("--out", "-o", help="Write the script here (default: stdout).")] = None,
) -> None:
    if target not in TARGETS:
        raise fail(f"unknown target {target!r} (known: {', '.join(TARGETS)})")
    try:
        exported = to_ns2(load(file))
    except ScenarioError as e:
        raise fail(str(e)) from None
    for note in exported.notes:
        say(f"note: {note}")
    if out is None:
        print(exported.script, end="")
        return
    try:
        out.write_text(exported.script)
    except OSError as e:
        raise fail(f"{out}: {e.strerror or e}", code=1) from None
    say(f"wrote {out}")
