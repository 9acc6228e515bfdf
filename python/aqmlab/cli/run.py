"""`aqmlab run FILE`: one scenario, its per-flow table, and with --out its files."""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import Annotated, Any

import typer

from .. import run as run_scenario
from .. import terminal
from .._core import ScenarioError
from ..outdir import OutputError, result_folder
from ..progress import RunProgress
from ..run_summary import print_summary
from ..scenario import load
from ._common import (
    ForceOption,
    Format,
    FormatOption,
    NoPlotsOption,
    OutOption,
    PcapDropsOption,
    PcapOption,
    WaitOption,
    command_app,
    command_help,
    console,
    fail,
    interrupted,
    print_json,
    save_results,
    say,
    summary_lines,
    with_captures,
)

app = command_app()


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
    out: OutOption = None,
    format: FormatOption = Format.parquet,
    no_plots: NoPlotsOption = False,
    seed: Annotated[int | None, typer.Option("--seed", help="Override simulation.seed.")] = None,
    json_output: Annotated[
        bool,
        typer.Option("--json", help="Print the summary as one JSON object on stdout (nothing else goes to stdout)."),
    ] = False,
    wide: Annotated[
        bool, typer.Option("--wide", help="Print long tables whole (default: summarised by flow group to fit).")
    ] = False,
    pcap: PcapOption = None,
    pcap_drops: PcapDropsOption = False,
    force: ForceOption = False,
    wait: WaitOption = False,
) -> None:
    if json_output and out is None and pcap is None and not pcap_drops:
        raise typer.Exit(print_summary(file, seed))
    try:
        scenario = load(file)
        if seed is not None:
            scenario = scenario.with_seed(seed)
        scenario = with_captures(scenario, pcap, pcap_drops, out)
        # The folder is taken and checked before the run, written under a temporary name and
        # renamed into place last: a run folder is whole or absent (outdir.py).
        about = {"kind": "run", "name": scenario.name, "scenario_sha256": scenario.digest()}
        with (
            result_folder(out, about, force, wait, say) if out is not None else contextlib.nullcontext() as folder,
            RunProgress(console) as bars,
        ):
            results = run_scenario(scenario, progress=bars, pcap_dir=folder)
            if folder is not None:
                save_results(results, folder, out, format.value, not no_plots, bars)
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


def _run_lines(summary: dict[str, Any], wide: bool) -> list[str]:
    """The per-flow table, the Jain index, utilisation and drops, then the run's speed."""
    return [
        *summary_lines(summary, wide),
        f"{summary['events']:,} events in {summary['wall_time_s']:.2f} s "
        f"({summary['events_per_second']:,.0f} events/s)",
    ]
