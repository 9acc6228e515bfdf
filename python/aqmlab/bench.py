"""Whole-run benchmarks: wall time, simulated events and events per second; the scale
series (the same per-flow work at 10² to 10⁵ flows, with peak memory per flow)."""

from __future__ import annotations

import json
import multiprocessing
import resource
import time
from concurrent.futures import ProcessPoolExecutor

from . import _core
from .scenario import Scenario

# (name, scenario file in scenarios/, what it measures)
BENCHMARKS = (
    ("demo-red", "bench-demo-red.toml", "the demo (1 UDP + 31 TCP on 10 Mbps) under RED, 100 s"),
    ("100tcp-45mbps", "bench-100tcp-45mbps.toml", "100 TCP flows over a 45 Mbps RED bottleneck, 100 s"),
)

# The scale series (issue 15): N NewReno flows on a RED dumbbell of N Mbps, so that every flow
# has a 1 Mbps fair share and does the same work at every N (10⁴ flows: a 10 Gbps bottleneck).
SCALE_FLOWS = (100, 1_000, 10_000, 100_000)
SCALE_SHARE_MBPS = 1
SCALE_DURATION_S = 5
# The buffer holds 20 ms of the bottleneck's rate (about half the 42 ms minimum RTT); RED's
# thresholds and weights are the 100-TCP benchmark's (SRED §VI: B/6, B/3, w 1/500, max_p 0.075).
SCALE_BUFFER_S = 0.02


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
            "simulation": {"duration": f"{SCALE_DURATION_S}s", "warmup": "1s", "seed": 1},
            "topology": {
                "type": "dumbbell",
                "access_delay": "10ms",
                "sink_delay": "10ms",
                "bottleneck": {"rate": f"{flows * SCALE_SHARE_MBPS}Mbps", "delay": "1ms", "qdisc": red},
            },
            "flows": [{"name": "tcp", "type": "tcp", "count": flows, "start_jitter": "1s"}],
        }
    )


def run_scale_point(flows: int) -> dict:
    """One point of the scale series, in a fresh process (see `scale_point`); forkserver, as sweeps."""
    context = multiprocessing.get_context("forkserver")
    with ProcessPoolExecutor(max_workers=1, mp_context=context) as pool:
        return pool.submit(scale_point, flows).result()


def scale_point(flows: int) -> dict:
    """Runs `scale_scenario(flows)` once: wall time (building, simulating, collecting results),
    events per second, and the peak resident memory the run added, per flow (ru_maxrss after the
    run less before it: meaningful in a process that has run nothing else)."""
    text = scale_scenario(flows).to_json()
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    start = time.perf_counter()
    raw = _core.run(text)
    wall = time.perf_counter() - start
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    summary = json.loads(raw)["summary"]
    return {
        "flows": flows,
        "simulated_s": summary["duration"],
        "wall_time_s": wall,
        "events": summary["events"],
        "events_per_second": summary["events"] / wall,
        # ru_maxrss is in KiB on Linux.
        "peak_memory_bytes": peak * 1024,
        "memory_per_flow_bytes": (peak - before) * 1024 / flows,
        "utilisation": dict(summary["utilisation"]),
        "jain_index": summary["jain_index"],
    }
