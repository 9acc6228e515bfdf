"""Whole-run benchmarks: wall time, simulated events and events per second."""

from __future__ import annotations

import json
import time

from . import _core
from .scenario import Scenario

# (name, scenario file in scenarios/, what it measures)
BENCHMARKS = (
    ("demo-red", "bench-demo-red.toml", "the demo (1 UDP + 31 TCP on 10 Mbps) under RED, 100 s"),
    ("100tcp-45mbps", "bench-100tcp-45mbps.toml", "100 TCP flows over a 45 Mbps RED bottleneck, 100 s"),
)


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
