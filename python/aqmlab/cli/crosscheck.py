"""`aqmlab crosscheck FILE`: one scenario in ns-2 and in aqmlab, side by side."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from .. import terminal
from .._core import ScenarioError
from ..ns2.crosscheck import run_both, spread
from ..ns2.run import Ns2Error
from ..scenario import load
from ._common import command_app, command_help, fail, interrupted, print_json, say

app = command_app()


@app.command(
    help=command_help(
        "crosscheck",
        "Exports the scenario to ns-2.35 (as `aqmlab export ns2`), runs it there and in aqmlab for each seed "
        "(simulation.seed, seed + 1, ...; jittered starts drawn once and the same in both), and prints one "
        "table: metric, ns-2, aqmlab (means over the seeds, ± the seeds' standard deviation), ratio aqmlab / "
        "ns-2. Metrics over the measurement window: each flow's goodput and its drops at the monitored links, "
        "the total goodput, TCP timeouts (whole run), each monitored link's drops and utilisation. Needs `ns` "
        "on PATH (exit status 1 without it).",
    )
)
def crosscheck(
    file: Annotated[
        Path, typer.Argument(help="Scenario file (TOML), or the name of a shipped one (`aqmlab scenarios`).")
    ],
    seeds: Annotated[int, typer.Option("--seeds", help="Runs in each simulator, one per seed.", min=1)] = 1,
    json_output: Annotated[
        bool,
        typer.Option("--json", help='Print {"seeds", "rows": [{"metric", "ns2": [...], "aqmlab": [...]}]} on stdout.'),
    ] = False,
) -> None:
    try:
        scenario = load(file)
        first = scenario.resolved()["simulation"]["seed"]
        chosen = list(range(first, first + seeds))
        rows, _ = run_both(scenario, chosen, on_seed=lambda seed: say(f"seed {seed}: ns-2, then aqmlab"))
    except ScenarioError as e:
        raise fail(str(e)) from None
    except Ns2Error as e:
        raise fail(str(e), code=1) from None
    except KeyboardInterrupt as e:
        raise interrupted(e) from None
    if json_output:
        print_json({"seeds": chosen, "rows": [{"metric": r.metric, "ns2": r.ns2, "aqmlab": r.aqmlab} for r in rows]})
        return
    cells = [[r.metric, spread(r.ns2), spread(r.aqmlab), "-" if r.ratio != r.ratio else f"{r.ratio:.3f}"] for r in rows]
    title = f"{file.name}: ns-2 vs aqmlab, seeds {chosen[0]}" + (f"-{chosen[-1]}" if len(chosen) > 1 else "")
    terminal.show(terminal.table(["metric", "ns-2", "aqmlab", "ratio"], cells, title))
