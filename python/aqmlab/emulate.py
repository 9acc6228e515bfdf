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
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from . import _core
from .api import Progress, _as_scenario
from .results import Results
from .scenario import Scenario

# How often the progress callback is called, seconds of wall time (= emulated time).
PROGRESS_EVERY = 0.25


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
