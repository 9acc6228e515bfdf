"""`aqmlab bench`: wall time of whole runs, the scale series, and the comparisons with ns-3 and ns-2."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from .. import __version__, terminal
from .._core import ScenarioError
from ..bench import BENCHMARKS, NS2_BENCHMARKS, ScaleTooLarge, run_all
from ..ns2.run import Ns2Error
from ._common import command_app, command_help, fail, print_json, say

app = command_app()


@app.command(
    help=command_help(
        "bench",
        "Prints the wall time (fastest of --repeat runs), simulated events and events/second of whole runs; "
        "then the scale series; with --ns3, the comparison with ns-3; with --ns2, the comparison with ns-2.\n\n"
        "Whole runs (the shipped bench-* scenarios, see `aqmlab scenarios`): the demo under RED and 100 TCP "
        "flows over a 45 Mbps RED bottleneck, 100 s each; ns-3's cases (a) 31 TCP + 1 UDP on 10 Mbps and (b) "
        "100 TCP on 45 Mbps, RED and TCP configured as ns-3's. The scale series: N NewReno flows over a RED "
        "bottleneck of N x 1 Mbps (10^4 flows: 10 Gbps), 5 s simulated, once per point, each in a fresh "
        "process: wall time, CPU time, events/s and the peak memory the run added, per flow (10^5 flows take minutes, "
        "10^6 flows longer; each point's progress goes to stderr; a point this machine's memory cannot hold is "
        "refused before anything runs, with the estimate). "
        "--ns3 PATH: a built ns-3 reference program (a dumbbell printing one JSON object); it runs cases (a) "
        "and (b) beside aqmlab: time in Simulator::Run against aqmlab's engine, the whole processes, and the "
        "outcomes (utilisation, bottleneck drops, TCP and UDP goodput, Jain's index of TCP goodput). With "
        "--mechanisms, each whole-run benchmark runs once per mechanism on its bottleneck (the cost of each "
        "queue discipline on the same traffic). --ns2: ns-2.35's `ns` (on PATH) and aqmlab on the same scenarios "
        "(bench-ns2-a and bench-ns2-b, exported as `aqmlab export ns2`): (a) 31 NewReno + 1 CBR on 10 Mbps RED and "
        "(b) 100 NewReno on 45 Mbps RED, 100 s each, TCP and RED as ns-2's (profile \"ns2\"): each one's time in "
        "its event loop, the CPU time of each whole process (`ns SCRIPT`, `aqmlab run FILE --json`), and the "
        "outcomes.",
    )
)
def bench(
    json_output: Annotated[
        bool, typer.Option("--json", help='Print {"runs", "scale", "ns3", "ns2"} as one JSON object on stdout.')
    ] = False,
    only: Annotated[
        str | None,
        typer.Option("--only", help="Run only this: demo-red, 100tcp-45mbps, ns3-a, ns3-b, scale, ns2-a or ns2-b."),
    ] = None,
    repeat: Annotated[int, typer.Option("--repeat", help="Runs per benchmark; the fastest counts.", min=1)] = 3,
    mechanisms: Annotated[
        str | None,
        typer.Option(
            "--mechanisms",
            "-m",
            help="Comma-separated preset names or qdisc types, or `all`, as `aqmlab compare`; "
            "rows are named benchmark/mechanism.",
        ),
    ] = None,
    scale: Annotated[
        str, typer.Option("--scale", help="Flows of each point of the scale series, comma-separated (none: skip).")
    ] = "100,1000,10000,100000",
    ns3: Annotated[
        Path | None, typer.Option("--ns3", help="A built ns-3 reference program to compare with on cases (a), (b).")
    ] = None,
    ns2: Annotated[bool, typer.Option("--ns2", help="Compare with ns-2 (`ns` on PATH) on its cases (a), (b).")] = False,
) -> None:
    names = [b[0] for b in BENCHMARKS] + ["scale"] + [b[0] for b in NS2_BENCHMARKS]
    if only not in (None, *names):
        raise fail(f"--only: unknown benchmark {only!r} (known: {', '.join(names)})")
    try:
        points = [int(n) for n in scale.split(",") if n.strip() and n.strip() != "none"]
    except ValueError:
        raise fail(f"--scale: expected flows separated by commas, e.g. 100,1000, got {scale!r}") from None
    if any(flows < 1 for flows in points):
        raise fail(f"--scale: every point needs at least 1 flow, got {scale!r}")
    if ns3 is not None and not ns3.is_file():
        raise fail(f"--ns3: no program at {ns3} (build it with the ns-3 reference's build.sh)")
    chosen = None if mechanisms is None else [name.strip() for name in mechanisms.split(",") if name.strip()]
    if chosen == []:
        raise fail("--mechanisms: give at least one name, or all")
    if only in [b[0] for b in NS2_BENCHMARKS] and not ns2:
        raise fail(f"--only {only}: an ns-2 case; add --ns2")
    try:
        report = run_all(only, repeat, chosen, points, ns3, on_start=say, ns2=ns2, progress=True)
    except ScaleTooLarge as e:
        raise fail(f"--scale: {e}; give fewer flows") from None
    except ScenarioError as e:
        raise fail(str(e)) from None
    except Ns2Error as e:
        raise fail(str(e), code=1) from None
    if json_output:
        print_json(report)
        return
    terminal.show(_lines(report))


def _lines(report: dict[str, list[dict]]) -> list[str]:
    lines = []
    if report["runs"]:
        columns = ["benchmark", "simulated", "wall time", "events", "events/s", "util.", "Jain"]
        rows = [
            [
                r["name"],
                f"{r['simulated_s']:g} s",
                f"{r['wall_time_s']:.3f} s",
                f"{r['events'] / 1e6:.2f} M",
                f"{r['events_per_second'] / 1e6:.2f} M",
                ", ".join(f"{u:.1%}" for u in r["utilisation"].values()),
                f"{r['jain_index']:.3f}",
            ]
            for r in report["runs"]
        ]
        lines += terminal.table(columns, rows, f"aqmlab {__version__}")
    if report["scale"]:
        columns = ["flows", "wall time", "CPU time", "events", "events/s", "peak memory", "per flow", "util."]
        rows = [
            [
                f"{r['flows']:,}",
                f"{r['wall_time_s']:.2f} s",
                f"{r['cpu_time_s']:.2f} s",
                f"{r['events'] / 1e6:.1f} M",
                f"{r['events_per_second'] / 1e6:.2f} M",
                f"{r['peak_memory_bytes'] / 2**20:,.0f} MiB",
                f"{r['memory_per_flow_bytes'] / 1024:.1f} KiB",
                f"{r['utilisation']['L->R']:.1%}",
            ]
            for r in report["scale"]
        ]
        lines += terminal.table(columns, rows, "scale")
    if report["ns3"]:
        columns = [
            "case",
            "ns-3 Simulator::Run",
            "aqmlab engine",
            "ratio",
            "ns-3 process",
            "aqmlab run --json",
            "ratio",
        ]
        rows = [
            [
                r["name"],
                f"{r['ns3_run_s']:.3f} s",
                f"{r['aqmlab_engine_s']:.3f} s",
                f"{r['engine_ratio']:.0f}x",
                f"{r['ns3_process_s']:.2f} s",
                f"{r['aqmlab_process_s']:.2f} s",
                f"{r['process_ratio']:.1f}x",
            ]
            for r in report["ns3"]
        ]
        lines += terminal.table(columns, rows, "ns-3 vs aqmlab: wall time")
        outcomes = [
            [r["name"], metric.replace("_", " "), terminal.fmt(theirs), terminal.fmt(ours)]
            for r in report["ns3"]
            for metric, (theirs, ours) in r["outcome"].items()
        ]
        lines += terminal.table(
            ["case", "outcome", "ns-3", "aqmlab"], outcomes, "ns-3 vs aqmlab: outcomes (second half)"
        )
    if report["ns2"]:
        columns = ["case", "ns-2 $ns run", "aqmlab engine", "ratio", "ns-2 process CPU", "aqmlab process CPU", "ratio"]
        rows = [
            [
                r["name"],
                f"{r['ns2_engine_s']:.3f} s",
                f"{r['aqmlab_engine_s']:.3f} s",
                f"{r['engine_ratio']:.1f}x",
                f"{r['ns2_process_cpu_s']:.2f} s",
                f"{r['aqmlab_process_cpu_s']:.2f} s",
                f"{r['process_ratio']:.1f}x",
            ]
            for r in report["ns2"]
        ]
        lines += terminal.table(columns, rows, f"ns-{report['ns2'][0]['ns2_version']} vs aqmlab: time")
        outcomes = [
            [r["name"], metric, terminal.fmt(theirs), terminal.fmt(ours)]
            for r in report["ns2"]
            for metric, (theirs, ours) in r["outcome"].items()
        ]
        lines += terminal.table(["case", "outcome", "ns-2", "aqmlab"], outcomes, "ns-2 vs aqmlab: outcomes (window)")
    return lines
