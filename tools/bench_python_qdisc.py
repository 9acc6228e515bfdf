"""What a queue discipline written in Python costs (issue 35 goal 6; BENCHMARKS.md): the Python
drop-tail and RED of docs/examples/own_qdisc.py against the built-in `droptail` and `red` on the
bottleneck of bench-demo-red and bench-100tcp-45mbps, each run `--repeat` times in this process
(fastest kept: every repetition does the same work).

    .venv/bin/python tools/bench_python_qdisc.py [--repeat 3]

Prints per scenario and pair: the built-in's and the Python's wall time, their ratio, the
bottleneck's arrivals (packets offered to the discipline) and the time the Python one adds per
arrival (its enqueue and, for the packets it queues, its dequeue).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import aqmlab

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "docs" / "examples"))
import own_qdisc  # noqa: E402

# Packet mode, on the benchmark's buffer in packets of its 1000-byte data (the built-in's the same).
PAIRS = {
    "bench-demo-red": {"limit": 64, "min_th": 16, "max_th": 32, "max_p": 0.1},
    "bench-100tcp-45mbps": {"limit": 500, "min_th": 83, "max_th": 167, "max_p": 0.075},
}


def fastest(scenario: aqmlab.Scenario, repeat: int) -> tuple[float, aqmlab.Results]:
    best, results = float("inf"), None
    for _ in range(repeat):
        start = time.perf_counter()
        results = aqmlab.run(scenario)
        best = min(best, time.perf_counter() - start)
    return best, results


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    print("scenario\tpair\tbuilt-in s\tpython s\tratio\tarrivals\tadded µs/arrival\tsame results")
    for name, red in PAIRS.items():
        base = aqmlab.load(ROOT / "scenarios" / f"{name}.toml")
        pairs = {
            "droptail": (base.with_qdisc("droptail", limit=red["limit"]), own_qdisc.DropTail(limit=red["limit"])),
            "red": (base.with_qdisc("red", **red), own_qdisc.Red(**red)),
        }
        for pair, (builtin, mine) in pairs.items():
            t_builtin, a = fastest(builtin, args.repeat)
            t_python, b = fastest(builtin.with_qdisc(mine), args.repeat)
            bottleneck = a.links.set_index("name").loc["L->R"]
            arrivals = int(bottleneck["packets_sent"] + bottleneck["drops"])
            same = a.flows["goodput_bps"].equals(b.flows["goodput_bps"]) and a.drops["count"].equals(b.drops["count"])
            added = (t_python - t_builtin) / arrivals * 1e6
            print(
                f"{name}\t{pair}\t{t_builtin:.3f}\t{t_python:.3f}\t{t_python / t_builtin:.1f}\t{arrivals}\t"
                f"{added:.2f}\t{same}"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
