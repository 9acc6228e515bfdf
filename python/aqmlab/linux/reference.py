"""Linux's numbers for `aqmlab validate linux`: each cell (qdisc × TCP) run in User-Mode Linux
several times, recorded in `reference.json` with the kernel's version, the date, the host's load
and the command that records them again (`make linux-reference`).

A cell's qdisc is written as a Linux user types it after `tc qdisc add dev r1 parent 1:1 handle
10:`; `validate.py` builds aqmlab's twin of the same words. The buffer is the demo's: 64 KB of
bytes for the byte-counted FIFO and RED, 64 packets where Linux counts packets, thresholds 16 KB
and 32 KB (16 and 32 packets for CHOKe), RED's w_q ≈ 0.002 (`burst 100` gives Wlog 9) and max_p
0.1; every other parameter Linux's default.

    python -m aqmlab.linux.reference --record [--runs 3] [--work DIR] [--only red,pie]

Runs go one at a time (one UML on one CPU; two would share the host's two). Each run's numbers
are kept in the work folder as it finishes, so an interrupted recording resumes.
"""

from __future__ import annotations

import argparse
import datetime
import json
import statistics
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from . import uml

HERE = Path(__file__).parent
REFERENCE = HERE / "reference.json"
RECORD_COMMAND = "make linux-reference"
CCS = ("reno", "cubic")
# Each qdisc as `tc qdisc add` takes it (iproute2's words and units).
CELLS: dict[str, str] = {
    "bfifo": "bfifo limit 64000",
    "red": "red limit 64000 min 16000 max 32000 avpkt 1000 burst 100 probability 0.1 bandwidth 10mbit",
    "choke": "choke limit 64 min 16 max 32 avpkt 1000 burst 100 probability 0.1 bandwidth 10mbit",
    "sfb": "sfb limit 64",
    "sfq": "sfq limit 64",
    "codel": "codel limit 64",
    "fq_codel": "fq_codel limit 64",
    "pie": "pie limit 64",
}
METRICS = ("udp_mbps", "tcp_mbps", "jain", "delay_median_ms")
DURATION_S = 30
WARMUP_S = 10
RUNS = 3
# A run whose guest fails (an iperf3 handshake timing out in a busy guest) is run again, this often.
ATTEMPTS = 3


def summary(runs: list[dict[str, Any]]) -> dict[str, Any]:
    """A cell's runs as mean, sample standard deviation, min and max of each metric."""
    out: dict[str, Any] = {}
    for metric in METRICS:
        values = [run[metric] for run in runs]
        out[metric] = {
            "mean": statistics.fmean(values),
            "sd": statistics.stdev(values) if len(values) > 1 else 0.0,
            "min": min(values),
            "max": max(values),
        }
    return out


def attempt(qdisc: str, cc: str, folder: Path) -> uml.Run:
    """One run of a cell, run again (up to `ATTEMPTS` in all) when the guest fails."""
    for left in range(ATTEMPTS - 1, -1, -1):
        try:
            return uml.run_cell(qdisc, cc, folder, DURATION_S, WARMUP_S)
        except uml.UmlError as e:
            if not left:
                raise
            print(f"  failed, again: {e}", file=sys.stderr, flush=True)
    raise AssertionError("unreachable")


def record_cells(
    work: Path, runs: int, only: list[str] | None, measure: Callable[[str, str, int, Path], dict[str, Any]]
) -> tuple[dict[str, Any], list[float]]:
    """Measures every cell (or `only` these) `runs` times with `measure(qdisc, cc, run, folder)`,
    round-robin over the cells so that a change in the host's load falls on all of them, keeping
    each run's numbers in `work` (a kept run is not measured again). Returns each cell's runs with
    their `summary`, and the host's load before and after every run."""
    names = only or list(CELLS)
    unknown = [name for name in names if name not in CELLS]
    if unknown:
        raise SystemExit(f"unknown cell(s) {', '.join(unknown)} (known: {', '.join(CELLS)})")
    for index in range(runs):
        for name in names:
            for cc in CCS:
                result = work / name / cc / f"run{index + 1}.json"
                if result.exists():
                    continue
                print(f"{name} / {cc}: run {index + 1} of {runs}", file=sys.stderr, flush=True)
                run = measure(name, cc, index + 1, work / name / cc / f"run{index + 1}")
                result.parent.mkdir(parents=True, exist_ok=True)
                result.write_text(json.dumps(run, indent=1) + "\n")
                print(
                    f"  UDP {run['udp_mbps']:.2f}  TCP {run['tcp_mbps']:.2f}  Jain {run['jain']:.3f}  "
                    f"delay {run['delay_median_ms']:.1f} ms  "
                    f"host load {run['load_before']:.1f}/{run['load_after']:.1f}",
                    file=sys.stderr,
                    flush=True,
                )
    cells: dict[str, Any] = {}
    loads: list[float] = []
    for name in names:
        for cc in CCS:
            kept = [json.loads((work / name / cc / f"run{i + 1}.json").read_text()) for i in range(runs)]
            loads += [value for run in kept for value in (run["load_before"], run["load_after"])]
            cells[f"{name}/{cc}"] = {"qdisc": CELLS[name], "cc": cc, "runs": kept, **summary(kept)}
    return cells, loads


def record(work: Path, runs: int, only: list[str] | None, out: Path = REFERENCE) -> dict[str, Any]:
    """Runs every cell `runs` times in Linux (`record_cells`) and writes `out`."""
    measured, loads = record_cells(
        work, runs, only, lambda name, cc, _, folder: attempt(CELLS[name], cc, folder).to_dict()
    )
    existing = json.loads(out.read_text()) if out.exists() else {"cells": {}}
    cells = dict(existing.get("cells", {})) | measured
    reference = {
        "kernel": f"Linux {uml.kernel_version()} (User-Mode Linux, HZ=100, one CPU)",
        "recorded": datetime.date.today().isoformat(),
        "command": RECORD_COMMAND,
        "duration_s": DURATION_S,
        "warmup_s": WARMUP_S,
        "dumbbell": {
            "rate": uml.RATE,
            "rtts_ms": list(uml.RTTS_MS),
            "udp": f"iperf3 -u -b {uml.UDP_RATE} -l {uml.UDP_PAYLOAD}",
            "tcp": "8 iperf3 -C CC, MSS 1448 (timestamps), SACK, offloads off",
        },
        "host_load": {"min": min(loads), "max": max(loads), "note": "1-minute load average of the 2-CPU host"},
        "cells": dict(sorted(cells.items())),
    }
    out.write_text(json.dumps(reference, indent=1) + "\n")
    return reference


def remeasure(work: Path) -> None:
    """Measures every kept run again from its guest's files (after a change to `uml.measure`),
    keeping the host's load and the wall time recorded when it ran."""
    for result in sorted(work.glob("*/*/run*.json")):
        kept = json.loads(result.read_text())
        run = uml.measure(
            result.with_suffix(""), WARMUP_S, DURATION_S, kept["load_before"], kept["load_after"], kept["wall_s"]
        )
        result.write_text(json.dumps(run.to_dict(), indent=1) + "\n")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--record", action="store_true", help="run the cells in UML and write reference.json")
    parser.add_argument("--runs", type=int, default=RUNS)
    parser.add_argument("--work", type=Path, default=Path("/var/tmp/aqmlab-linux-reference"))
    parser.add_argument("--only", help="comma-separated cells (default: all)")
    parser.add_argument("--remeasure", action="store_true", help="measure the kept runs again before writing")
    args = parser.parse_args(argv)
    if not args.record:
        parser.error("nothing to do: --record")
    try:
        if args.remeasure:
            remeasure(args.work)
        record(args.work, args.runs, args.only.split(",") if args.only else None)
    except uml.UmlError as e:
        raise SystemExit(f"linux-reference: {e}") from None


if __name__ == "__main__":
    main()
