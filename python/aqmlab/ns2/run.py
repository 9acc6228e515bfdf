"""Runs ns-2 (`ns`) on an exported script and reads its measurements into rows.

`run(export)` writes the script into a temporary folder, runs `ns` there with a time limit,
and returns `Ns2Results`: per flow the goodput over the measurement window, its delivered
bytes and packets, its drops at the monitored links (window) and its timeouts (whole run);
per monitored link its utilisation and drops over the window. ns-2's own CPU time (user +
system, the whole process) comes with them.
"""

from __future__ import annotations

import resource
import shutil
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .export import MARK, Export

# One run of the validation's longest scenario takes about 10 s of ns-2; a script that runs
# for many minutes is not one the exporter meant.
TIMEOUT_S = 600.0
INSTALL_HINT = "install ns-2.35 (Debian/Ubuntu: apt-get install ns2)"
COUNTERS = ("parrivals", "barrivals", "pdepartures", "bdepartures", "pdrops", "bdrops")


class Ns2Error(RuntimeError):
    """ns-2 is missing, failed, timed out, or printed no measurements."""


@dataclass
class Ns2Results:
    version: str
    # id, name, type, start (s), goodput_bps, delivered_bytes, delivered_packets, arrivals and drops
    # (packets at the monitored links), drop_bytes, timeouts, completed (a transfer's: when its
    # last packet was ACKed, s; None if it did not finish or is not one)
    flows: list[dict[str, Any]]
    # id, name, utilisation, drops, drop_bytes, departures (all over the window)
    links: list[dict[str, Any]]
    cpu_s: float
    wall_s: float

    def link(self, name: str) -> dict[str, Any]:
        return next(link for link in self.links if link["name"] == name)


def ns_command() -> str:
    """The `ns` program's path; `Ns2Error` saying how to install it when there is none."""
    path = shutil.which("ns")
    if path is None:
        raise Ns2Error(f"ns-2 not found: no `ns` on PATH; {INSTALL_HINT}")
    return path


def version() -> str:
    """ns-2's version as its library reports it (`ns-version`, e.g. `2.35`; `ns -version` prints
    nothing in Debian's build)."""
    with tempfile.TemporaryDirectory(prefix="aqmlab-ns2-") as folder:
        (Path(folder) / "version.tcl").write_text("puts [ns-version]\n")
        done = subprocess.run([ns_command(), "version.tcl"], cwd=folder, capture_output=True, text=True, timeout=60)
    return done.stdout.strip() or "unknown"


def run_script(script: str, timeout: float = TIMEOUT_S) -> tuple[str, float, float]:
    """Runs `ns` on `script` in a fresh temporary folder: (stdout, CPU seconds, wall seconds)."""
    command = ns_command()
    with tempfile.TemporaryDirectory(prefix="aqmlab-ns2-") as folder:
        path = Path(folder) / "scenario.tcl"
        path.write_text(script)
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.perf_counter()
        try:
            done = subprocess.run(
                [command, path.name], cwd=folder, capture_output=True, text=True, timeout=timeout, check=False
            )
        except subprocess.TimeoutExpired:
            raise Ns2Error(f"ns-2 did not finish within {timeout:g} s") from None
        wall = time.perf_counter() - start
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    if done.returncode != 0 or f"{MARK} time end" not in done.stdout:
        last = (done.stderr.strip() or done.stdout.strip()).splitlines()[-1:] or ["no output"]
        raise Ns2Error(f"ns-2 failed (status {done.returncode}): {last[0]}")
    return done.stdout, cpu, wall


def run(export: Export, timeout: float = TIMEOUT_S) -> Ns2Results:
    """ns-2's results for an exported scenario."""
    stdout, cpu, wall = run_script(export.script, timeout)
    return parse_output(stdout, export, cpu, wall)


def engine_seconds(text: str) -> float:
    """ns-2's time in `$ns run`, as the script prints it (`aqmlab-ns2 engine SECONDS`)."""
    for line in text.splitlines():
        words = line.split()
        if words[:2] == [MARK, "engine"]:
            return float(words[2])
    raise Ns2Error("ns-2 printed no engine time")


def parse_output(text: str, export: Export, cpu_s: float = 0.0, wall_s: float = 0.0) -> Ns2Results:
    """The script's `aqmlab-ns2` lines as rows: each count at `end` less the one at `start`
    (the window), timeouts at `end` (the whole run)."""
    flows: dict[str, dict[int, list[str]]] = {"start": {}, "end": {}}
    links: dict[str, dict[int, list[str]]] = {"start": {}, "end": {}}
    per_flow: dict[str, dict[tuple[int, int], list[str]]] = {"start": {}, "end": {}}
    ns_version = "unknown"
    completed: dict[int, float] = {}
    for line in text.splitlines():
        words = line.split()
        if not words or words[0] != MARK:
            continue
        kind, rest = words[1], words[2:]
        if kind == "window":
            ns_version = rest[2]
        elif kind == "flow":
            flows[rest[0]][int(rest[1])] = rest[2:]
        elif kind == "link":
            links[rest[0]][int(rest[1])] = rest[2:]
        elif kind == "linkflow":
            per_flow[rest[0]][(int(rest[1]), int(rest[2]))] = rest[3:]
        elif kind == "done":
            completed[int(rest[0])] = float(rest[1])
    window = export.duration - export.warmup

    def change(table: dict[str, dict], key: Any, column: int) -> int:
        start = table["start"].get(key)
        end = table["end"].get(key)
        return int(end[column]) - (int(start[column]) if start is not None else 0) if end is not None else 0

    drops = COUNTERS.index("pdrops")
    flow_rows = []
    for flow in export.flows:
        delivered = change(flows, flow.id, 0)
        counted = int(flows["end"][flow.id][1])
        packets = change(flows, flow.id, 1) if counted >= 0 else delivered // flow.packet_size
        keys = [(link.index, flow.id) for link in export.monitored]
        flow_rows.append(
            {
                "id": flow.id,
                "name": flow.name,
                "type": flow.type,
                "start": flow.start,
                "goodput_bps": delivered * 8 / window,
                "delivered_bytes": delivered,
                "delivered_packets": packets,
                "arrivals": sum(change(per_flow, key, COUNTERS.index("parrivals")) for key in keys),
                "drops": sum(change(per_flow, key, drops) for key in keys),
                "drop_bytes": sum(change(per_flow, key, drops + 1) for key in keys),
                "timeouts": int(flows["end"][flow.id][2]),
                "completed": completed.get(flow.id),
            }
        )
    link_rows = [
        {
            "id": link.index,
            "name": link.name,
            "utilisation": change(links, link.index, COUNTERS.index("bdepartures")) * 8 / link.rate_bps / window,
            "drops": change(links, link.index, drops),
            "drop_bytes": change(links, link.index, drops + 1),
            "departures": change(links, link.index, COUNTERS.index("pdepartures")),
        }
        for link in export.monitored
    ]
    return Ns2Results(ns_version, flow_rows, link_rows, cpu_s, wall_s)
