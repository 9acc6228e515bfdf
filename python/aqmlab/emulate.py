"""`aqmlab.emulate`: a scenario's network in real time between real Linux endpoints.

The Rust core (`aqmlab_core::emulate`, docs/emulate.md) makes two network namespaces, a TUN
device in each, the flows' real sockets (Linux's TCP with the flow's `tcp.cc`; for CBR and
ON-OFF a UDP sender driven by the simulator's own source) and runs the scenario's network, its
queue disciplines included, on the monotonic clock between them. The results are the tables
`run` gives; the forwarder's own figures (time added per pass, CPU) come beside them. Needs root.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from . import _core, terminal
from .api import Progress, _as_scenario
from .results import Results
from .scenario import Scenario

# How often the progress callback is called, seconds of wall time (= emulated time).
PROGRESS_EVERY = 0.25

# The keys of the forwarder's figures (`EmulationStats`) that `Figures` shows; a saved
# `emulation.json` without one of them is named with it (`aqmlab report`).
FORWARDER_KEYS = (
    "packets_written",
    "wall_time_s",
    "added_mean_us",
    "added_p99_us",
    "driver_cpu",
    "cpu_us_per_packet",
    "process_cpu",
)
# What each of its `kernel_tcp` rows holds (the core's `KernelTcp`), and how it is shown.
KERNEL_TCP_KEYS = ("flow", "srtt_ms", "rttvar_ms", "cwnd_segments", "retransmits")
KERNEL_TCP_COLUMNS = ("flow", "srtt ms", "rttvar ms", "cwnd", "retransmits")
KERNEL_TCP_TITLE = "Linux's TCP when each flow stopped (TCP_INFO)"


@dataclass
class Emulated:
    """An emulation's results (the tables of `run`) and the forwarder's figures
    (`EmulationStats` in the core: packets, time added per pass, CPU)."""

    results: Results
    stats: dict[str, Any]


def emulate(
    scenario: Scenario | Mapping | str | Path,
    progress: Progress | None = None,
    note: Callable[[str], None] | None = None,
    pcap_dir: str | Path | None = None,
) -> Emulated:
    """Emulates a scenario (a `Scenario`, a dict, or a path to a TOML file) for its duration,
    in real time. With `pcap_dir`, the links `simulation.pcap` names are captured into that
    folder as in `aqmlab.run` (`<link>.pcap`, listed in `Results.pcap_files`), each record the
    real packet's headers.

    `progress(seconds_done, seconds_total, label)` is called every `PROGRESS_EVERY` s;
    `note(text)` gets what is taken differently from a simulation (e.g. the simulated TCP's
    options, which Linux's TCP replaces). Raises `ScenarioError` naming a field emulation
    cannot express, `OSError` if the machine refuses (not root, no `/dev/net/tun`, a
    congestion control the kernel lacks), and on Ctrl-C
    `KeyboardInterrupt("interrupted at 2.3 s of 10 s emulated")`. Every namespace, device,
    socket and thread it made is gone when it returns or raises.
    """
    scenario = _as_scenario(scenario)
    start = time.perf_counter()
    emulation = _core.Emulation(scenario.to_json(), None if pcap_dir is None else str(pcap_dir))
    try:
        for text in emulation.notes:
            if note is not None:
                note(text)
        label = f"{scenario.name or 'emulation'} (emulated)"
        while not emulation.wait(PROGRESS_EVERY):
            if progress is not None:
                progress(emulation.elapsed, emulation.duration, label)
        raw, stats = emulation.finish()
    except KeyboardInterrupt:
        at = emulation.elapsed
        emulation.close()
        raise KeyboardInterrupt(f"interrupted at {at:.1f} s of {emulation.duration:g} s emulated") from None
    finally:
        emulation.close()
    wall = time.perf_counter() - start
    captures = [Path(p) for p in emulation.capture_files]
    return Emulated(Results(json.loads(raw), scenario, wall, captures), json.loads(stats))


@dataclass(frozen=True)
class Figures:
    """An emulation's own figures as text, formatted here only: `aqmlab emulate` prints them
    (`line`, the `kernel_tcp` table, `errors` as warnings) and `aqmlab report` shows them
    (`forwarder` as a table of label and value)."""

    packets: str
    wall_time: str
    added: str
    cpu: str
    # The forwarder thread's scheduling class; None for an emulation.json older than it.
    priority: str | None = None
    # Rows under KERNEL_TCP_COLUMNS: each TCP flow's sender as its kernel saw it when the flow
    # stopped (`TCP_INFO`, what `ss -ti` shows).
    kernel_tcp: list[list[str]] = field(default_factory=list)
    # "flow NAME: what failed" for each endpoint that failed.
    errors: list[str] = field(default_factory=list)

    @property
    def forwarder(self) -> list[tuple[str, str]]:
        """What the forwarder cost and added, (label, value) each."""
        rows = [
            ("packets forwarded", self.packets),
            ("wall time", self.wall_time),
            ("time added per pass", self.added),
            ("forwarder CPU", self.cpu),
        ]
        return rows + [("forwarder priority", self.priority)] if self.priority else rows

    @property
    def line(self) -> str:
        """The forwarder's figures in one line."""
        priority = f"; priority {self.priority}" if self.priority else ""
        return (
            f"forwarded {self.packets} packets in {self.wall_time}; added per pass {self.added}; "
            f"forwarder CPU {self.cpu}{priority}"
        )

    def lines(self, width: int | None = None) -> list[str]:
        """As `aqmlab emulate` prints them: the `TCP_INFO` table (when a flow is TCP), then `line`."""
        table = terminal.table(KERNEL_TCP_COLUMNS, self.kernel_tcp, KERNEL_TCP_TITLE, width) if self.kernel_tcp else []
        return [*table, self.line]


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


# `driver_real_time`: whether the forwarder ran under SCHED_FIFO (docs/emulate.md, limits).
PRIORITY = {True: "real-time (SCHED_FIFO)", False: "ordinary (real-time refused)"}


def figures(stats: Mapping[str, Any]) -> Figures:
    """`Emulated.stats` (or a saved `emulation.json`) as text. `ValueError` naming every key it
    lacks (of FORWARDER_KEYS, and of KERNEL_TCP_KEYS in each `kernel_tcp` row), then every one
    that is not a number; `kernel_tcp` and `endpoint_errors` may be absent."""
    if not isinstance(stats, Mapping):
        raise ValueError("not a JSON object")
    rows = stats.get("kernel_tcp", [])
    if not isinstance(rows, list) or not all(isinstance(row, Mapping) for row in rows):
        raise ValueError("kernel_tcp is not a list of objects")
    errors = stats.get("endpoint_errors", [])
    if not isinstance(errors, list) or not all(isinstance(e, list) and len(e) == 2 for e in errors):
        raise ValueError("endpoint_errors is not a list of [flow, error] pairs")
    keys = [(stats, key, key) for key in FORWARDER_KEYS]
    keys += [(row, key, f"kernel_tcp[{i}].{key}") for i, row in enumerate(rows) for key in KERNEL_TCP_KEYS]
    missing = [name for where, key, name in keys if key not in where]
    if missing:
        raise ValueError(f"no {', '.join(missing)}")
    not_numbers = [name for where, key, name in keys if key != "flow" and not _is_number(where[key])]
    if not_numbers:
        raise ValueError(f"not a number: {', '.join(not_numbers)}")
    if not isinstance(stats.get("driver_real_time", False), bool):
        raise ValueError("driver_real_time is not true or false")
    return Figures(
        packets=f"{stats['packets_written']:,}",
        wall_time=f"{stats['wall_time_s']:.2f} s",
        added=f"{stats['added_mean_us']:.0f} µs mean, {stats['added_p99_us']:.0f} µs p99",
        cpu=(
            f"{stats['driver_cpu']:.1%} of a core ({stats['cpu_us_per_packet']:.1f} µs/packet), "
            f"process {stats['process_cpu']:.1%}"
        ),
        priority=PRIORITY.get(stats.get("driver_real_time")),
        kernel_tcp=[
            [k["flow"], f"{k['srtt_ms']:.1f}", f"{k['rttvar_ms']:.1f}", str(k["cwnd_segments"]), str(k["retransmits"])]
            for k in rows
        ],
        errors=[f"flow {name}: {error}" for name, error in errors],
    )
