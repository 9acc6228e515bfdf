"""Linux's numbers for `aqmlab validate linux`: each cell (qdisc × TCP) run in User-Mode Linux
several times, recorded in `reference.json` with the kernel's version, the date, the host's load
and the command that records them again (`make linux-reference`).

A cell's qdisc is written as a Linux user types it after `tc qdisc add dev r1 parent 1:1 handle
10:`; `validate.py` builds aqmlab's twin of the same words. The buffer is the demo's: 64 KB of
bytes for the byte-counted FIFO and RED, 64 packets where Linux counts packets, thresholds 16 KB
and 32 KB (16 and 32 packets for CHOKe), RED's w_q ≈ 0.002 (`burst 100` gives Wlog 9) and max_p
0.1; every other parameter Linux's default.

Beside the cells, `PAIRS`: BBR against CUBIC, one flow of each, on drop-tail with half and four
bandwidth-delay products of buffer (issue 24), recorded under `pairs`.

Beside them, `L4S_CELLS` (issue 37): DualPI2 and FQ-CoDel's `ce_threshold` under DCTCP against CUBIC
or Reno, and beside an unresponsive UDP flow marked ECT(1), on the kernel `tools/l4s_kernel/build.sh`
builds (`uml.L4S`), recorded in `l4s.json`.

    python -m aqmlab.linux.reference --record [--runs 3] [--work DIR] [--only red,pie] [--pairs | --l4s]

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

from ..mechanisms import MECHANISMS
from . import uml

HERE = Path(__file__).parent
REFERENCE = HERE / "reference.json"
RECORD_COMMAND = "make linux-reference"
CCS = ("reno", "cubic", "bbr")
# Each qdisc as `tc qdisc add` takes it (iproute2's words and units): the Linux twin of every
# mechanism that has one (`Mechanism.tc`) and that the reference kernel has, by its tc kind.
CELLS: dict[str, str] = {
    m.tc.split()[0]: m.tc for m in MECHANISMS if m.tc is not None and m.tc.split()[0] not in uml.MISSING_QDISCS
}
METRICS = ("udp_mbps", "tcp_mbps", "jain", "delay_median_ms")
DURATION_S = 30
WARMUP_S = 10
RUNS = 3
# BBR against CUBIC: one flow of each at the same base RTT, no UDP, drop-tail with PAIRS[key] times the
# bandwidth-delay product of buffer (10 Mbit/s x 40 ms = 50 kB of frames). Half a BDP is where BBR v1
# is known to take most of the link, four where CUBIC's filled buffer starts to win (Cardwell et al.,
# IETF 97 ICCRG; Hock et al., ICNP 2017). 60 s with the first 20 discarded: CUBIC takes tens of
# seconds to fill four BDPs. Five runs: the split moves from run to run.
PAIR_RTT_MS = 40
BDP_BYTES = 50_000
PAIRS: dict[str, float] = {"bbr-cubic/0.5bdp": 0.5, "bbr-cubic/4bdp": 4.0}
PAIR_DUMBBELL = uml.Dumbbell((("bbr", PAIR_RTT_MS), ("cubic", PAIR_RTT_MS)), udp=False)
PAIR_METRICS = ("bbr_mbps", "cubic_mbps", "bbr_share", "delay_median_ms")
PAIR_DURATION_S = 60
PAIR_WARMUP_S = 20
PAIR_RUNS = 5
# The L4S cells: one scalable and one classic flow at the same base RTT, so that the share between them
# is the coupling's doing (RFC 9332 §2.1: "roughly equal rates" at equal RTT) and not RTT unfairness,
# and each has a window of about 17 packets (10 Mbit/s x 40 ms / 2): DCTCP's two-packet floor does not
# set it. No UDP, but in the third cell, whose UDP is iperf3's flood (as the classic cells') marked ECT(1):
# an unresponsive flow in the L queue (RFC 9330 §8.2), beside the same two. Prague needs the L4S changes to
# TCP's core, which this kernel lacks (tools/l4s_kernel/README.md): the scalable flow is 6.1's DCTCP, which
# sends ECT(0), so DualPI2 classifies with `any_ect` (ECT(0), ECT(1) and CE to L; the classic flows do
# not negotiate ECN and go to C); DCTCP's receivers run DCTCP too (`uml.Dumbbell.receiver_cc`).
# FQ-CoDel's `ce_threshold` marks every ECN-capable packet whose sojourn exceeds it: 1 ms, DualPI2's step.
L4S_REFERENCE = HERE / "l4s.json"
L4S_COMMAND = "make linux-l4s-reference"
L4S_RTT_MS = 40
_SCALABLE_CLASSIC = (("dctcp", L4S_RTT_MS), ("cubic", L4S_RTT_MS))
L4S_CELLS: dict[str, tuple[str, uml.Dumbbell]] = {
    "dualpi2/dctcp+cubic": ("dualpi2 any_ect", uml.Dumbbell(_SCALABLE_CLASSIC, udp=False)),
    "dualpi2/dctcp+reno": ("dualpi2 any_ect", uml.Dumbbell((("dctcp", L4S_RTT_MS), ("reno", L4S_RTT_MS)), udp=False)),
    "dualpi2/dctcp+cubic+udp-ect1": ("dualpi2 any_ect", uml.Dumbbell(_SCALABLE_CLASSIC, udp_tos=1)),
    "fq_codel-ce/dctcp+reno": (
        "fq_codel ce_threshold 1ms",
        uml.Dumbbell((("dctcp", L4S_RTT_MS), ("reno", L4S_RTT_MS)), udp=False),
    ),
}
# `uml.classes`'s rows; the L and C queues' delays under DualPI2 only, the marks where the qdisc counts them.
L4S_METRICS = (
    "scalable_mbps",
    "classic_mbps",
    "udp_mbps",
    "delay_median_ms",
    "delay_p99_ms",
    "delay_l_median_ms",
    "delay_l_p99_ms",
    "delay_c_median_ms",
    "delay_c_p99_ms",
    "marks_per_s",
    "step_marks_per_s",
    "drops_per_s",
)
L4S_RUNS = 5
# A run whose guest fails (an iperf3 handshake timing out in a busy guest) is run again, this often.
ATTEMPTS = 3


def pair_qdisc(bdps: float) -> str:
    """The pairs' bottleneck qdisc, as `tc qdisc add` takes it: a byte FIFO of `bdps` BDPs."""
    return f"bfifo limit {round(bdps * BDP_BYTES)}"


def pair_metrics(run: dict[str, Any]) -> dict[str, float]:
    """A pair's rows from one run's measurements: each flow's goodput and BBR's share of their sum."""
    bbr, cubic = run["tcp_flow_mbps"]
    return {"bbr_mbps": bbr, "cubic_mbps": cubic, "bbr_share": bbr / (bbr + cubic)}


def summary(runs: list[dict[str, Any]], metrics: tuple[str, ...] = METRICS) -> dict[str, Any]:
    """A cell's runs as mean, sample standard deviation, min and max of each metric."""
    out: dict[str, Any] = {}
    for metric in metrics:
        values = [run[metric] for run in runs]
        out[metric] = {
            "mean": statistics.fmean(values),
            "sd": statistics.stdev(values) if len(values) > 1 else 0.0,
            "min": min(values),
            "max": max(values),
        }
    return out


def attempt(
    qdisc: str,
    dumbbell: uml.Dumbbell,
    folder: Path,
    duration_s: int = DURATION_S,
    warmup_s: int = WARMUP_S,
    kernel: uml.Kernel = uml.DEBIAN,
) -> uml.Run:
    """One run in UML, run again (up to `ATTEMPTS` in all) when the guest fails."""
    for left in range(ATTEMPTS - 1, -1, -1):
        try:
            return uml.run_cell(qdisc, dumbbell, folder, duration_s, warmup_s, kernel=kernel)
        except uml.UmlError as e:
            if not left:
                raise
            print(f"  failed, again: {e}", file=sys.stderr, flush=True)
    raise AssertionError("unreachable")


def record_runs(
    work: Path, runs: int, keys: list[str], measure: Callable[[str, int, Path], dict[str, Any]]
) -> tuple[dict[str, list[dict[str, Any]]], list[float]]:
    """Measures each key (a folder under `work`, e.g. `red/cubic`) `runs` times with
    `measure(key, run, folder)`, round-robin over the keys so that a change in the host's load falls
    on all of them, keeping each run's numbers in `work` (a kept run is not measured again). Returns
    each key's runs, and the host's load before and after every run."""
    for index in range(runs):
        for key in keys:
            result = work / key / f"run{index + 1}.json"
            if result.exists():
                continue
            print(f"{key.replace('/', ' / ')}: run {index + 1} of {runs}", file=sys.stderr, flush=True)
            run = measure(key, index + 1, work / key / f"run{index + 1}")
            result.parent.mkdir(parents=True, exist_ok=True)
            result.write_text(json.dumps(run, indent=1) + "\n")
            print(
                f"  UDP {run['udp_mbps']:.2f}  TCP {run['tcp_mbps']:.2f}  Jain {run['jain']:.3f}  "
                f"delay {run['delay_median_ms']:.1f} ms  "
                f"host load {run['load_before']:.1f}/{run['load_after']:.1f}",
                file=sys.stderr,
                flush=True,
            )
    kept = {key: [json.loads((work / key / f"run{i + 1}.json").read_text()) for i in range(runs)] for key in keys}
    loads = [value for key in keys for run in kept[key] for value in (run["load_before"], run["load_after"])]
    return kept, loads


def record_cells(
    work: Path, runs: int, only: list[str] | None, measure: Callable[[str, str, int, Path], dict[str, Any]]
) -> tuple[dict[str, Any], list[float]]:
    """`record_runs` for every cell (or `only` these) with `measure(qdisc, cc, run, folder)`.
    Returns each cell's runs with their `summary`, and the host's loads."""
    names = only or list(CELLS)
    unknown = [name for name in names if name not in CELLS]
    if unknown:
        raise SystemExit(f"unknown cell(s) {', '.join(unknown)} (known: {', '.join(CELLS)})")
    keys = [f"{name}/{cc}" for name in names for cc in CCS]

    def measure_key(key: str, run: int, folder: Path) -> dict[str, Any]:
        name, cc = key.split("/")
        return measure(name, cc, run, folder)

    kept, loads = record_runs(work, runs, keys, measure_key)
    cells = {}
    for key, key_runs in kept.items():
        name, cc = key.split("/")
        cells[key] = {"qdisc": CELLS[name], "cc": cc, "runs": key_runs, **summary(key_runs)}
    return cells, loads


def record_pairs(
    work: Path, runs: int, measure: Callable[[str, int, Path], dict[str, Any]]
) -> tuple[dict[str, Any], list[float]]:
    """`record_runs` for every pair of `PAIRS`. Returns each pair's runs (with their `pair_metrics`)
    and `summary`, and the host's loads."""
    kept, loads = record_runs(work, runs, list(PAIRS), measure)
    pairs = {}
    for key, key_runs in kept.items():
        key_runs = [run | pair_metrics(run) for run in key_runs]
        pairs[key] = {
            "qdisc": pair_qdisc(PAIRS[key]),
            "buffer_bdp": PAIRS[key],
            "runs": key_runs,
            **summary(key_runs, PAIR_METRICS),
        }
    return pairs, loads


def record(work: Path, runs: int, only: list[str] | None, out: Path = REFERENCE) -> dict[str, Any]:
    """Runs every cell `runs` times in Linux (`record_cells`) and writes them into `out`."""
    measured, loads = record_cells(
        work, runs, only, lambda name, cc, _, folder: attempt(CELLS[name], uml.Dumbbell.cell(cc), folder).to_dict()
    )
    return write(out, "cells", measured, loads)


def record_pair_runs(work: Path, runs: int, out: Path = REFERENCE) -> dict[str, Any]:
    """Runs every pair of `PAIRS` `runs` times in Linux (`record_pairs`) and writes them into `out`."""
    measured, loads = record_pairs(
        work,
        runs,
        lambda key, _, folder: attempt(
            pair_qdisc(PAIRS[key]), PAIR_DUMBBELL, folder, PAIR_DURATION_S, PAIR_WARMUP_S
        ).to_dict(),
    )
    return write(out, "pairs", measured, loads)


def l4s_run(key: str, folder: Path) -> dict[str, Any]:
    """One run of the L4S cell `key` on the L4S kernel: `uml.Run`'s numbers and `uml.classes`'s, and the
    release the guest ran (`uname -r`, the first line of its setup.txt)."""
    qdisc, dumbbell = L4S_CELLS[key]
    run = attempt(qdisc, dumbbell, folder, kernel=uml.L4S)
    release = (folder / "setup.txt").read_text().split("\n", 1)[0]
    return run.to_dict() | uml.classes(folder, run, WARMUP_S, DURATION_S) | {"kernel": release}


def record_l4s(
    work: Path, runs: int, out: Path = L4S_REFERENCE, measure: Callable[[str, Path], dict[str, Any]] = l4s_run
) -> dict[str, Any]:
    """Runs every L4S cell `runs` times on the L4S kernel (`measure(key, folder)`) and writes them into
    `out`, with the kernel."""
    kept, loads = record_runs(work, runs, list(L4S_CELLS), lambda key, _, folder: measure(key, folder))
    cells = {}
    for key, key_runs in kept.items():
        qdisc, dumbbell = L4S_CELLS[key]
        metrics = tuple(m for m in L4S_METRICS if m in key_runs[0])
        cells[key] = {"qdisc": qdisc, "dumbbell": dumbbell.to_dict(), "runs": key_runs, **summary(key_runs, metrics)}
    releases = sorted({run["kernel"] for key_runs in kept.values() for run in key_runs})
    reference = {
        "kernel": f"Linux {', '.join(releases)} (User-Mode Linux, HZ=100, one CPU)",
        "build": "tools/l4s_kernel/build.sh: Debian's linux-source-6.1 with L4STeam's sch_dualpi2 as a module, "
        "Debian's UML config; tc from the L4STeam iproute2 (tools/l4s_kernel/README.md)",
        "recorded": datetime.date.today().isoformat(),
        "command": L4S_COMMAND,
        "duration_s": DURATION_S,
        "warmup_s": WARMUP_S,
        "host_load": {"min": min(loads), "max": max(loads), "note": "1-minute load average of the 2-CPU host"},
        "cells": cells,
    }
    out.write_text(json.dumps(reference, indent=1) + "\n")
    return reference


def write(out: Path, section: str, measured: dict[str, Any], loads: list[float]) -> dict[str, Any]:
    """Writes `measured` into `out`'s `section` ("cells" or "pairs"), keeping what else it holds."""
    reference = json.loads(out.read_text()) if out.exists() else {}
    host_load = reference.get("host_load", {"min": min(loads), "max": max(loads)})
    reference |= {
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
        "pair_setup": {
            "duration_s": PAIR_DURATION_S,
            "warmup_s": PAIR_WARMUP_S,
            "rtt_ms": PAIR_RTT_MS,
            "bdp_bytes": BDP_BYTES,
            "tcp": "iperf3 -C bbr and iperf3 -C cubic, no UDP",
        },
        "host_load": {
            "min": min(host_load["min"], *loads),
            "max": max(host_load["max"], *loads),
            "note": "1-minute load average of the 2-CPU host",
        },
    }
    reference[section] = dict(sorted((reference.get(section, {}) | measured).items()))
    out.write_text(json.dumps(reference, indent=1) + "\n")
    return reference


def remeasure(work: Path) -> None:
    """Measures every kept run again from its guest's files (after a change to `uml.measure`),
    keeping the host's load and the wall time recorded when it ran."""
    for result in sorted(work.glob("*/*/run*.json")):
        kept = json.loads(result.read_text())
        key = str(result.parent.relative_to(work))
        warmup_s, duration_s = (PAIR_WARMUP_S, PAIR_DURATION_S) if key in PAIRS else (WARMUP_S, DURATION_S)
        run = uml.measure(
            result.with_suffix(""), warmup_s, duration_s, kept["load_before"], kept["load_after"], kept["wall_s"]
        )
        extra = uml.classes(result.with_suffix(""), run, warmup_s, duration_s) if key in L4S_CELLS else {}
        result.write_text(json.dumps(run.to_dict() | extra, indent=1) + "\n")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--record", action="store_true", help="run the cells in UML and write reference.json")
    parser.add_argument(
        "--runs", type=int, help=f"runs per cell (default {RUNS}; per pair {PAIR_RUNS}; per L4S cell {L4S_RUNS})"
    )
    parser.add_argument(
        "--work", type=Path, help="where runs are kept (default /var/tmp/aqmlab-linux-reference, -l4s-reference)"
    )
    parser.add_argument("--only", help="comma-separated cells (default: all)")
    parser.add_argument("--pairs", action="store_true", help="record the BBR-against-CUBIC pairs, not the cells")
    parser.add_argument("--l4s", action="store_true", help="record the L4S cells on the L4S kernel into l4s.json")
    parser.add_argument("--remeasure", action="store_true", help="measure the kept runs again before writing")
    args = parser.parse_args(argv)
    args.work = args.work or Path(f"/var/tmp/aqmlab-{'l4s' if args.l4s else 'linux'}-reference")
    if not args.record:
        parser.error("nothing to do: --record")
    if (args.pairs or args.l4s) and args.only:
        parser.error("--only names cells; --pairs and --l4s record all of theirs")
    if args.pairs and args.l4s:
        parser.error("--pairs and --l4s: one at a time")
    try:
        if args.remeasure:
            remeasure(args.work)
        if args.l4s:
            record_l4s(args.work, args.runs or L4S_RUNS)
        elif args.pairs:
            record_pair_runs(args.work, args.runs or PAIR_RUNS)
        else:
            record(args.work, args.runs or RUNS, args.only.split(",") if args.only else None)
    except uml.UmlError as e:
        raise SystemExit(f"linux-reference: {e}") from None


if __name__ == "__main__":
    main()
