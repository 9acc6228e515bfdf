"""`aqmlab run FILE`: one scenario, its per-flow table, and with --out its files."""

from __future__ import annotations

import contextlib
from enum import Enum
from pathlib import Path
from typing import Annotated, Any

import typer

from .. import run as run_scenario
from .. import terminal
from .._core import ScenarioError
from ..outdir import OutputError, result_folder
from ..plots import save_run_figures
from ..progress import RunProgress
from ..results import Results
from ..run_summary import print_summary
from ..scenario import load
from ._common import (
    ForceOption,
    WaitOption,
    command_app,
    command_help,
    console,
    fail,
    interrupted,
    print_json,
    say,
    summary_lines,
)

app = command_app()


class Format(str, Enum):
    parquet = "parquet"
    csv = "csv"


@app.command(
    help=command_help(
        "run",
        "With --out, also write every table (Parquet or CSV), summary.json and the plots (per-flow throughput"
        " with the fair share marked; queue length over time), and with --pcap (or simulation.pcap) a libpcap"
        " capture of each link named (`L-R.pcap`, for Wireshark or `tshark -r`). The same scenario and seed"
        " always give byte-identical files.",
    )
)
def run(
    file: Annotated[
        Path, typer.Argument(help="Scenario file (TOML), or the name of a shipped one (`aqmlab scenarios`).")
    ],
    out: Annotated[
        Path | None, typer.Option("--out", "-o", help="Write the tables, summary.json and plots to this folder.")
    ] = None,
    format: Annotated[Format, typer.Option("--format", help="File format of the tables.")] = Format.parquet,
    no_plots: Annotated[bool, typer.Option("--no-plots", help="Do not draw the plots.")] = False,
    seed: Annotated[int | None, typer.Option("--seed", help="Override simulation.seed.")] = None,
    json_output: Annotated[
        bool,
        typer.Option("--json", help="Print the summary as one JSON object on stdout (nothing else goes to stdout)."),
    ] = False,
    wide: Annotated[
        bool, typer.Option("--wide", help="Print long tables whole (default: summarised by flow group to fit).")
    ] = False,
    pcap: Annotated[
        str | None,
        typer.Option(
            "--pcap",
            help="Capture these links (comma-separated, by name `L->R` or file name `L-R`) to OUT/<link>.pcap: "
            "every packet each transmits, with IPv4 and TCP/UDP headers. Sets simulation.pcap.",
        ),
    ] = None,
    pcap_drops: Annotated[
        bool,
        typer.Option("--pcap-drops", help="Also capture what those links drop, to OUT/<link>.drops.pcap."),
    ] = False,
    force: ForceOption = False,
    wait: WaitOption = False,
) -> None:
    if json_output and out is None and pcap is None and not pcap_drops:
        raise typer.Exit(print_summary(file, seed))
    try:
        scenario = load(file)
        if seed is not None:
            scenario = scenario.with_seed(seed)
        if pcap is not None:
            scenario = scenario.with_({"simulation.pcap": [name.strip() for name in pcap.split(",") if name.strip()]})
        if pcap_drops:
            scenario = scenario.with_({"simulation.pcap_drops": True})
        scenario.validate()
        if pcap is not None and out is None:
            raise fail("--pcap: give --out DIR, the folder the captures are written to")
        if scenario.get_or("simulation.pcap") and out is None:
            say("simulation.pcap: no capture written without --out DIR")
        # The folder is taken and checked before the run, written under a temporary name and
        # renamed into place last: a run folder is whole or absent (outdir.py).
        about = {"kind": "run", "name": scenario.name, "scenario_sha256": scenario.digest()}
        with (
            result_folder(out, about, force, wait, say) if out is not None else contextlib.nullcontext() as folder,
            RunProgress(console) as bars,
        ):
            results = run_scenario(scenario, progress=bars, pcap_dir=folder)
            if folder is not None:
                _save(results, folder, out, format.value, not no_plots, bars)
    except (ScenarioError, OutputError) as e:
        raise fail(str(e)) from None
    except OSError as e:
        raise fail(str(e), code=1) from None
    except KeyboardInterrupt as e:
        raise interrupted(e) from None
    summary = results.summary()
    if json_output:
        print_json(summary)
    else:
        terminal.show(_run_lines(summary, wide))
    if out is not None:  # the tables, summary, plots, captures and manifest
        say(f"wrote {sum(1 for _ in out.iterdir())} files to {out}")


def _save(results: Results, folder: Path, out: Path, format: str, plots: bool, bars: RunProgress) -> None:
    """The tables, summary and plots of a run, into `folder` (which becomes `out`)."""
    try:
        bars.stage(f"writing the tables to {out}")
        results.save(folder, format=format)
        if plots:
            bars.stage(f"drawing the plots into {out}")
            save_run_figures(results, folder)
    except KeyboardInterrupt:
        raise KeyboardInterrupt("interrupted while saving the results: nothing written") from None


def _run_lines(summary: dict[str, Any], wide: bool) -> list[str]:
    """The per-flow table, the Jain index, utilisation and drops, then the run's speed."""
    return [
        *summary_lines(summary, wide),
        f"{summary['events']:,} events in {summary['wall_time_s']:.2f} s "
        f"({summary['events_per_second']:,.0f} events/s)",
    ]
