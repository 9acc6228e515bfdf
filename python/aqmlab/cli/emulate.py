"""`aqmlab emulate FILE`: the scenario's network in real time between real Linux endpoints."""

from __future__ import annotations

import contextlib
import json
from pathlib import Path
from typing import Annotated

import typer

from .. import terminal
from .._core import ScenarioError
from ..emulate import emulate as emulate_scenario
from ..emulate import figures
from ..outdir import OutputError, result_folder
from ..progress import RunProgress
from ..results import to_json_value
from ..scenario import load
from ._common import (
    ForceOption,
    Format,
    FormatOption,
    NoPlotsOption,
    OutOption,
    PcapDropsOption,
    PcapOption,
    Time,
    WaitOption,
    blaming,
    command_app,
    command_help,
    console,
    fail,
    interrupted,
    print_json,
    save_results,
    say,
    summary_lines,
    time_parser,
    with_captures,
    with_time_options,
)

app = command_app()


@app.command(
    help=command_help(
        "emulate",
        "Each flow's endpoints are real sockets in two network namespaces that aqmlab makes: TCP flows are "
        "Linux's TCP with the flow's `tcp.cc` (reno, the default, cubic or bbr), CBR and ON-OFF flows UDP "
        "senders driven by the simulator's own sources. "
        "Between them the scenario's links, their queue disciplines included, run in real time (docs/emulate.md). "
        "Prints the same per-flow table as `run`, then what the forwarder added per packet and its CPU; with "
        "--out it writes the files `run --out` writes (with --pcap, captures of the real packets' headers) and "
        "emulation.json, the forwarder's figures. Needs "
        "root (CAP_SYS_ADMIN, CAP_NET_ADMIN); every namespace, device and thread it made is removed when it "
        "ends, fails or is interrupted. A scenario emulation cannot express yet is refused naming the field.",
    )
)
def emulate(
    file: Annotated[
        Path, typer.Argument(help="Scenario file (TOML), or the name of a shipped one (`aqmlab scenarios`).")
    ],
    duration: Annotated[
        Time | None,
        typer.Option(
            "--duration",
            help="Override simulation.duration (`20s`, `2min`; a bare number is seconds). Real time: at most 600 s.",
            parser=time_parser(),
            metavar="TIME",
        ),
    ] = None,
    warmup: Annotated[
        Time | None,
        typer.Option(
            "--warmup",
            help="Override simulation.warmup (`5s`; a bare number is seconds).",
            parser=time_parser(),
            metavar="TIME",
        ),
    ] = None,
    seed: Annotated[int | None, typer.Option("--seed", help="Override simulation.seed (start times, jitter).")] = None,
    json_output: Annotated[
        bool,
        typer.Option("--json", help="Print the summary and the forwarder's figures as one JSON object on stdout."),
    ] = False,
    wide: Annotated[
        bool, typer.Option("--wide", help="Print long tables whole (default: summarised by flow group to fit).")
    ] = False,
    out: OutOption = None,
    format: FormatOption = Format.parquet,
    no_plots: NoPlotsOption = False,
    pcap: PcapOption = None,
    pcap_drops: PcapDropsOption = False,
    force: ForceOption = False,
    wait: WaitOption = False,
) -> None:
    times = {"--duration": ("simulation.duration", duration), "--warmup": ("simulation.warmup", warmup)}
    try:
        scenario = load(file)
        if seed is not None:
            scenario = scenario.with_seed(seed)
        scenario = with_captures(with_time_options(scenario, times), pcap, pcap_drops, out)
        about = {"kind": "emulate", "name": scenario.name, "scenario_sha256": scenario.digest()}
        with (
            result_folder(out, about, force, wait, say) if out is not None else contextlib.nullcontext() as folder,
            RunProgress(console) as bars,
        ):
            with blaming(times):
                emulated = emulate_scenario(
                    scenario, progress=bars, note=lambda text: say(f"note: {text}"), pcap_dir=folder
                )
            if folder is not None:
                save_results(emulated.results, folder, out, format.value, not no_plots, bars)
                (folder / "emulation.json").write_text(json.dumps(to_json_value(emulated.stats), indent=2) + "\n")
    except (ScenarioError, OutputError) as e:
        raise fail(str(e)) from None
    except OSError as e:
        raise fail(str(e), code=1) from None
    except KeyboardInterrupt as e:
        raise interrupted(e) from None
    summary = emulated.results.summary()
    shown = figures(emulated.stats)
    for error in shown.errors:
        say(f"warning: {error}")
    if json_output:
        print_json({**summary, "emulation": emulated.stats})
    else:
        terminal.show([*summary_lines(summary, wide), *shown.lines()])
    if out is not None:  # the tables, summary, plots, captures, emulation.json and manifest
        say(f"wrote {sum(1 for _ in out.iterdir())} files to {out}")
