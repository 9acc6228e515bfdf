"""Whole-run benchmarks: wall time, simulated events and events per second; the scale
series (the same per-flow work at 10² to 10⁵ flows, with peak memory per flow); and the
comparisons on the same work with ns-3 (given a built reference program) and with ns-2 (the
same scenario file, exported)."""

from __future__ import annotations

import json
import multiprocessing
import resource
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

from . import _core, scenarios_dir
from ._core import ScenarioError
from .compare import mechanisms as qdisc_tables
from .scenario import Scenario

# (name, scenario file in scenarios/, what it measures)
BENCHMARKS = (
    ("demo-red", "bench-demo-red.toml", "the demo (1 UDP + 31 TCP on 10 Mbps) under RED, 100 s"),
    ("100tcp-45mbps", "bench-100tcp-45mbps.toml", "100 TCP flows over a 45 Mbps RED bottleneck, 100 s"),
    ("ns3-a", "bench-ns3-a.toml", "ns-3 case (a): 31 TCP + 1 UDP on 10 Mbps RED, TCP as ns-3's, 100 s"),
    ("ns3-b", "bench-ns3-b.toml", "ns-3 case (b): 100 TCP on 45 Mbps RED, TCP as ns-3's, 100 s"),
)

# The ns-3 reference program's arguments for the same work as bench-ns3-a/b.toml (`--ns3 PATH`:
# a dumbbell of NewReno BulkSend and OnOff CBR senders over RED, printing one JSON object).
NS3_ARGS = {
    "ns3-a": ("--nTcp=31", "--nUdp=1", "--udpRates=10", "--qdisc=red", "--bw=10", "--T=100"),
    "ns3-b": ("--nTcp=100", "--nUdp=0", "--qdisc=red", "--bw=45", "--T=100"),
}
# The cases run in ns-2 and in aqmlab (`--ns2`): one scenario file each, exported to ns-2.
NS2_BENCHMARKS = (
    ("ns2-a", "bench-ns2-a.toml", "ns-2 case (a): 31 NewReno + 1 CBR on 10 Mbps RED, 100 s"),
    ("ns2-b", "bench-ns2-b.toml", "ns-2 case (b): 100 NewReno on 45 Mbps RED, 100 s"),
)

# ns-3 reports application payload, aqmlab the packets on the wire: the headers the scenarios'
# packet sizes include (IPv4 20 bytes, TCP 20 or UDP 8, PPP 2).
HEADER_BYTES = {"tcp": 42, "cbr": 30}

# The scale series (issue 15): N NewReno flows on a RED dumbbell of N Mbps, so that every flow
# has a 1 Mbps fair share and does the same work at every N (10⁴ flows: a 10 Gbps bottleneck).
SCALE_FLOWS = (100, 1_000, 10_000, 100_000)
SCALE_SHARE_MBPS = 1
SCALE_DURATION_S = 5
# The buffer holds 20 ms of the bottleneck's rate (about half the 42 ms minimum RTT); RED's
# thresholds and weights are the 100-TCP benchmark's (SRED §VI: B/6, B/3, w 1/500, max_p 0.075).
SCALE_BUFFER_S = 0.02
# A scale point reports progress this many times (`progress`): at 10⁶ flows a point takes minutes.
SCALE_PROGRESS_STEPS = 10
# What a point takes at its peak, for refusing one the machine cannot hold: the peak resident
# memory per flow measured at 10⁵ flows (6.3 KiB; 10⁶ flows held 5.1 KiB per flow after 0.5 s
# simulated: BENCHMARKS.md, issue 40) with a margin, above the interpreter and the extension.
SCALE_BYTES_PER_FLOW = 7 * 1024
SCALE_BASE_BYTES = 100 * 2**20


def run_all(
    only: str | None = None,
    repeat: int = 3,
    mechanisms: Sequence[str] | None = None,
    scale: Sequence[int] = SCALE_FLOWS,
    ns3: Path | None = None,
    on_start: Callable[[str], None] = lambda what: None,
    ns2: bool = False,
    progress: bool = False,
) -> dict[str, list[dict]]:
    """What `aqmlab bench` measures: `{"runs", "scale", "ns3", "ns2"}`. The whole-run benchmarks
    (`only` one of them, or "scale" for only the series), each once per mechanism of
    `mechanisms` on its bottleneck when given; the scale series at `scale` flows; with `ns3`
    (a built reference program) the comparison with ns-3; with `ns2` the comparison with ns-2
    (`only` may name one of its cases). `on_start(what)` is told what each step runs; with
    `progress`, each scale point writes its progress on stderr. A mechanism a benchmark cannot
    take is a ScenarioError naming both; a scale point larger than the machine's memory is
    ScaleTooLarge, before anything runs."""
    if only in (None, "scale"):
        check_scale_memory(scale)
    report: dict[str, list[dict]] = {"runs": [], "scale": [], "ns3": [], "ns2": []}
    for name, file, what in BENCHMARKS:
        if only not in (None, name):
            continue
        on_start(f"running {name}: {what}")
        scenario = Scenario.load(scenarios_dir() / file)
        variants = (
            {name: scenario}
            if mechanisms is None
            else {f"{name}/{m}": scenario.with_qdisc(table) for m, table in qdisc_tables(mechanisms).items()}
        )
        for label, variant in variants.items():
            try:
                report["runs"].append(run_benchmark(label, variant, repeat=repeat))
            except ScenarioError as e:
                raise ScenarioError(f"{file} as {label}: {e}") from None
    for flows in scale if only in (None, "scale") else []:
        on_start(f"running the scale series at {flows} flows")
        report["scale"].append(run_scale_point(flows, progress))
    for name, file, _ in BENCHMARKS if ns3 is not None else []:
        if name.startswith("ns3-") and only in (None, name):
            on_start(f"running {name} in ns-3 and in aqmlab")
            report["ns3"].append(ns3_comparison(name, scenarios_dir() / file, ns3, repeat=repeat))
    for name, file, _ in NS2_BENCHMARKS if ns2 else []:
        if only in (None, name):
            on_start(f"running {name} in ns-2 and in aqmlab")
            report["ns2"].append(ns2_comparison(name, scenarios_dir() / file, repeat=repeat))
    return report


def run_benchmark(name: str, scenario: Scenario, repeat: int = 3) -> dict:
    """Runs one scenario `repeat` times and keeps the fastest (every run does the same
    work: the spread is the machine's noise). The wall time covers the core's run
    (building, simulating, collecting results), not the Python tables. Utilisation and
    Jain index are there to check that a faster run still computes the same thing."""
    text = scenario.to_json()
    wall = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        raw = _core.run(text)
        wall = min(wall, time.perf_counter() - start)
    summary = json.loads(raw)["summary"]
    return {
        "name": name,
        "simulated_s": summary["duration"],
        "wall_time_s": wall,
        "events": summary["events"],
        "events_per_second": summary["events"] / wall if wall > 0 else None,
        "utilisation": dict(summary["utilisation"]),
        "jain_index": summary["jain_index"],
    }


def scale_scenario(flows: int) -> Scenario:
    """`flows` long-lived NewReno flows over a RED bottleneck of `flows` × 1 Mbps, 42 ms minimum RTT."""
    rate_bps = flows * SCALE_SHARE_MBPS * 1e6
    buffer = round(rate_bps * SCALE_BUFFER_S / 8)
    red = {
        "type": "red",
        "bytes": True,
        "limit_bytes": buffer,
        "min_th": buffer // 6,
        "max_th": buffer // 3,
        "w_q": 0.002,
        "max_p": 0.075,
    }
    return Scenario.from_dict(
        {
            "name": f"scale-{flows}",
            # One delay histogram for the group, not one per flow (a few KB each: 10⁵ flows would
            # add more than the run's own state; docs/scenario.md, `queue_delay`).
            "simulation": {"duration": f"{SCALE_DURATION_S}s", "warmup": "1s", "seed": 1, "queue_delay": "groups"},
            "topology": {
                "type": "dumbbell",
                "access_delay": "10ms",
                "sink_delay": "10ms",
                "bottleneck": {"rate": f"{flows * SCALE_SHARE_MBPS}Mbps", "delay": "1ms", "qdisc": red},
            },
            "flows": [{"name": "tcp", "type": "tcp", "count": flows, "start_jitter": "1s"}],
        }
    )


def run_scale_point(flows: int, progress: bool = False) -> dict:
    """One point of the scale series, in a fresh process (see `scale_point`); forkserver, as sweeps."""
    context = multiprocessing.get_context("forkserver")
    with ProcessPoolExecutor(max_workers=1, mp_context=context) as pool:
        return pool.submit(scale_point, flows, progress).result()


def scale_point(flows: int, progress: bool = False) -> dict:
    """Runs `scale_scenario(flows)` once: wall time (building, simulating, computing the results)
    and the CPU time of the same, events per second, and the peak resident memory the run added,
    per flow (ru_maxrss after the run less before it: meaningful in a process that has run nothing
    else). Only the summary is taken from the core: at 10⁶ flows the tables' text alone would be
    gigabytes. With `progress`, a line on stderr at every tenth of the simulated time."""
    text = scale_scenario(flows).to_json()
    before = resource.getrusage(resource.RUSAGE_SELF)
    start = time.perf_counter()
    sim = _core.Simulation(text)
    for step in range(1, SCALE_PROGRESS_STEPS + 1):
        sim.run_until(sim.duration * step / SCALE_PROGRESS_STEPS)
        if progress:
            elapsed = time.perf_counter() - start
            print(f"{flows:,} flows: {sim.now:g} of {sim.duration:g} s simulated, {elapsed:.1f} s", file=sys.stderr)
    summary = json.loads(sim.summary())
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_SELF)
    return {
        "flows": flows,
        "simulated_s": summary["duration"],
        "wall_time_s": wall,
        # On a shared machine the wall time includes waiting for a core; the CPU time does not.
        "cpu_time_s": after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime,
        "events": summary["events"],
        "events_per_second": summary["events"] / wall,
        # ru_maxrss is in KiB on Linux.
        "peak_memory_bytes": after.ru_maxrss * 1024,
        "memory_per_flow_bytes": (after.ru_maxrss - before.ru_maxrss) * 1024 / flows,
        "utilisation": dict(summary["utilisation"]),
        "jain_index": summary["jain_index"],
    }


def scale_memory_estimate(flows: int) -> int:
    """The bytes a point of `flows` flows is expected to take at its peak (`SCALE_BYTES_PER_FLOW`
    each, above `SCALE_BASE_BYTES`)."""
    return SCALE_BASE_BYTES + flows * SCALE_BYTES_PER_FLOW


def available_memory_bytes() -> int | None:
    """The memory this machine can give a new process without swapping (Linux's MemAvailable),
    or None where that is not known."""
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) * 1024
    except OSError:
        pass
    return None


def check_scale_memory(points: Sequence[int]) -> None:
    """Raises ScaleTooLarge naming the first point of the series this machine cannot hold, with
    the estimate, before any runs."""
    available = available_memory_bytes()
    for flows in points if available is not None else []:
        need = scale_memory_estimate(flows)
        if need > available:
            raise ScaleTooLarge(
                f"{flows:,} flows would take about {need / 2**30:.1f} GiB "
                f"({SCALE_BYTES_PER_FLOW / 1024:.1f} KiB per flow, as measured at 10^5 flows with a margin), "
                f"and this machine has {available / 2**30:.1f} GiB available"
            )


class ScaleTooLarge(ValueError):
    """A point of the scale series would take more memory than the machine has."""


def ns3_comparison(name: str, scenario_file: Path, program: Path, repeat: int = 3) -> dict:
    """The ns-3 reference program and aqmlab on the same work (`NS3_ARGS[name]` and
    `scenario_file`), fastest of `repeat`: ns-3's time inside `Simulator::Run` and its whole
    process, aqmlab's engine (`wall_time_s`: building, simulating, collecting results) and
    its whole `aqmlab run FILE --json` process; then what each computed over the second half
    (bottleneck utilisation, drops at the bottleneck, goodput of TCP and UDP in payload Mbps,
    Jain's index of the TCP flows' goodput)."""
    from . import run
    from .metrics import jain_index

    ns3_run = ns3_process = aqmlab_process = aqmlab_engine = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        done = subprocess.run([str(program), *NS3_ARGS[name]], capture_output=True, text=True, check=True)
        ns3_process = min(ns3_process, time.perf_counter() - start)
        ns3 = json.loads(done.stdout.strip().splitlines()[-1])
        ns3_run = min(ns3_run, ns3["wall_run_s"])
        start = time.perf_counter()
        command = [sys.executable, "-m", "aqmlab", "run", str(scenario_file), "--json"]
        summary = json.loads(subprocess.run(command, capture_output=True, text=True, check=True).stdout)
        aqmlab_process = min(aqmlab_process, time.perf_counter() - start)
        aqmlab_engine = min(aqmlab_engine, summary["wall_time_s"])
    results = run(Scenario.load(scenario_file))
    flows = results.flows
    # Every data packet of a flow has its `packet_size`: the bytes it sent over the packets.
    packet_size = flows["sent_bytes"] / flows["sent_packets"]
    goodput = flows["goodput_bps"] * (1 - flows["type"].map(HEADER_BYTES) / packet_size) / 1e6
    tcp = flows["type"] == "tcp"
    bottleneck = results.link("L->R")
    return {
        "name": name,
        "ns3_run_s": ns3_run,
        "aqmlab_engine_s": aqmlab_engine,
        "engine_ratio": ns3_run / aqmlab_engine,
        "ns3_process_s": ns3_process,
        "aqmlab_process_s": aqmlab_process,
        "process_ratio": ns3_process / aqmlab_process,
        "outcome": {
            "utilisation": (ns3["bn_util_last_half"], float(bottleneck["utilisation"])),
            "bottleneck_drops": (ns3["bn_qdisc_drops"], int(bottleneck["drops"])),
            "tcp_goodput_mbps": (ns3["goodput_tcp_sum_mbps"], float(goodput[tcp].sum())),
            "udp_goodput_mbps": (ns3["goodput_udp_sum_mbps"], float(goodput[~tcp].sum())),
            "tcp_jain_index": (ns3["jain_tcp"], jain_index(goodput[tcp])),
            "events": (ns3["events"], results.summary()["events"]),
        },
    }


def _compile_package() -> None:
    """Compiles the package's modules to bytecode, as installing a wheel does, so that a timed
    `aqmlab` process loads them as an installed copy would (a checkout run with
    PYTHONDONTWRITEBYTECODE set would compile every module at every start: 0.02 s more)."""
    import compileall

    compileall.compile_dir(Path(__file__).parent, quiet=1)


def ns2_comparison(name: str, scenario_file: Path, repeat: int = 3) -> dict:
    """ns-2 and aqmlab on the same scenario file (exported for ns-2), fastest of `repeat`: each
    one's time in its event loop (ns-2: `$ns run`, measured in the script; aqmlab: the engine's
    `wall_time_s`, building, simulating and collecting results), and the CPU time (user +
    system) of each whole process (`ns SCRIPT`; `aqmlab run FILE --json`); then what each
    computed over the measurement window (crosscheck's totals)."""
    from . import run
    from .ns2 import crosscheck
    from .ns2 import export as ns2_export
    from .ns2 import run as ns2_run

    scenario = Scenario.load(scenario_file)
    exported = ns2_export.export(scenario)
    _compile_package()
    ns2_engine = ns2_cpu = aqmlab_engine = aqmlab_cpu = float("inf")
    for _ in range(repeat):
        stdout, cpu, _ = ns2_run.run_script(exported.script)
        ns2_cpu = min(ns2_cpu, cpu)
        ns2_engine = min(ns2_engine, ns2_run.engine_seconds(stdout))
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        command = [sys.executable, "-m", "aqmlab", "run", str(scenario_file), "--json"]
        summary = json.loads(subprocess.run(command, capture_output=True, text=True, check=True).stdout)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        aqmlab_cpu = min(aqmlab_cpu, after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
        aqmlab_engine = min(aqmlab_engine, summary["wall_time_s"])
    ns2 = ns2_run.parse_output(stdout, exported)
    theirs = crosscheck.ns2_metrics(ns2, exported)
    ours = crosscheck.aqmlab_metrics(run(scenario), exported)
    outcomes = ("total goodput (Mb/s)", "drops L->R", "utilisation L->R", "TCP timeouts (whole run)")
    return {
        "name": name,
        "ns2_version": ns2.version,
        "ns2_engine_s": ns2_engine,
        "aqmlab_engine_s": aqmlab_engine,
        "engine_ratio": ns2_engine / aqmlab_engine,
        "ns2_process_cpu_s": ns2_cpu,
        "aqmlab_process_cpu_s": aqmlab_cpu,
        "process_ratio": ns2_cpu / aqmlab_cpu,
        "outcome": {metric: (theirs[metric], ours[metric]) for metric in outcomes},
    }
