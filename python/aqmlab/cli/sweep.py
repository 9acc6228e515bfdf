"""`aqmlab sweep SPEC`: a parameter grid over a base scenario, on local processes or Dask."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from .. import terminal
from .._core import ScenarioError
from ..sweep import GridSummary, grid_summary, load_spec, open_sweep
from ..workers import CONNECT_TIMEOUT_S, WORKER_TIMEOUT_S, Cluster
from ._common import (
    ConnectTimeoutOption,
    WaitOption,
    WorkerTimeoutOption,
    command_app,
    command_help,
    fail,
    run_jobs,
    say,
)

app = command_app()


@app.command(
    help=command_help(
        "sweep",
        "Each job's results are stored under a hash of its full scenario in OUT/jobs/, so rerunning an "
        "interrupted sweep runs only the missing jobs. The combined tables are OUT/jobs.csv (one row per job)"
        " and OUT/flows.csv (one row per job and flow). It prints one row per grid point (the grid's values but "
        "simulation.seed's): each metric's mean over the point's seeds, and its min-max.\n\n"
        'A spec names a scenario file (`scenario = "base.toml"`) or holds a [base] table, and a [grid] of '
        'dotted paths to lists, e.g. `"simulation.seed" = [1, 2, 3]` or `"topology.bottleneck.qdisc" = [{type'
        ' = "droptail", limit = 50}, {type = "red", ...}]`.',
    )
)
def sweep(
    spec: Annotated[
        Path,
        typer.Argument(
            help="Sweep spec (TOML), or a shipped one's name: a base scenario and a [grid] of dotted paths to lists."
        ),
    ],
    out: Annotated[Path, typer.Option("--out", "-o", help="Folder for the jobs' results and the combined tables.")],
    scheduler: Annotated[
        str | None,
        typer.Option(
            "--scheduler", help="Dask scheduler address (e.g. tcp://host:8786); default: a local process pool."
        ),
    ] = None,
    workers: Annotated[
        int | None, typer.Option("--workers", help="Local processes (default: one per core).", min=1)
    ] = None,
    wait: WaitOption = False,
    connect_timeout: ConnectTimeoutOption = f"{CONNECT_TIMEOUT_S:g}s",
    worker_timeout: WorkerTimeoutOption = f"{WORKER_TIMEOUT_S:g}s",
) -> None:
    try:
        parsed = load_spec(spec)
    except ScenarioError as e:
        raise fail(str(e)) from None
    cluster = Cluster(scheduler, connect_timeout.seconds, worker_timeout.seconds) if scheduler else None
    report = run_jobs(
        open_sweep(parsed, out, wait, say),
        lambda folder, on_done: folder.run(workers, cluster, on_done),
        "jobs",
        out / "jobs",
        lambda job, error: f"job {job.index} failed ({job.label}): {error}",
    )
    terminal.show(summary_lines(grid_summary(out), parsed.name))
    say(f"ran {len(report.ran)} jobs; combined tables: {', '.join(str(p) for p in report.written)}")
    if report.failed:
        raise fail(f"{len(report.failed)} jobs failed", code=1)


def summary_lines(summary: GridSummary, name: str) -> list[str]:
    """A row per grid point: its axes' values, how many seeds have results, each metric's mean (min-max)."""
    points = len(summary.table)
    title = f"{name}: {points} grid points, each metric's mean (min-max) over the point's seeds"
    rows = [
        [*(summary.table[axis].iloc[i] for axis in summary.axes), summary.table["seeds"].iloc[i]]
        + [summary.spread(i, metric) for metric in summary.metrics]
        for i in range(points)
    ]
    return terminal.table([*summary.axes, "seeds", *summary.metrics], rows, title)
