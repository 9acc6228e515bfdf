"""Checks the per-packet queueing delay (`Results.queue_delay_groups`) against two measurements
that do not use it (issue 34):

- the captures of the bottleneck's two sides: a TCP packet's arrival at the `L->R` queue is its
  transmission's start on its access link `src<i>->L` plus that link's serialization and
  delay; its departure is its transmission's start on `L->R` (both from the pcap files,
  matched by flow, sequence number and occurrence, as a retransmission repeats a number);
- each flow's mean one-way delay (`flows.mean_delay`, sent to delivered) less its route's
  propagation and serialization: what is left is its queueing, at the bottleneck and (a
  little, for TCP's bursts) on its 100 Mbps access link.

    .venv/bin/python tools/check_queue_delay.py [SCENARIO] [-m droptail,red,drr,fq_codel,csfq]

prints one row per mechanism and group; the test (tests/test_queue_delay.py) runs it quickly.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
from collections import defaultdict
from pathlib import Path

import aqmlab
import dpkt
import numpy as np
from aqmlab.compare import mechanisms

# The pcap's ports are 5000 + flow id (metrics/pcap.rs, PORT_BASE).
PORT_BASE = 5000


def _records(path: Path) -> list[tuple[int, dpkt.ip.IP]]:
    with path.open("rb") as f:
        return [(int(ts * 10**9), dpkt.ip.IP(buf)) for ts, buf in dpkt.pcap.Reader(f)]


def _tcp_keys(records: list[tuple[int, dpkt.ip.IP]]) -> dict[tuple[int, int, int], int]:
    """(flow, sequence number, occurrence) -> time, of the TCP segments in `records` (of a link
    that carries data only: an access link's and the bottleneck's forward direction)."""
    seen: dict[tuple[int, int], int] = defaultdict(int)
    out = {}
    for t, ip in records:
        if not isinstance(ip.data, dpkt.tcp.TCP):
            continue
        flow, seq = ip.data.sport - PORT_BASE, ip.data.seq
        out[(flow, seq, seen[(flow, seq)])] = t
        seen[(flow, seq)] += 1
    return out


def captured_sojourns(results: aqmlab.Results, folder: Path) -> dict[int, list[float]]:
    """Each TCP flow's packets' sojourns in the `L->R` queue (s), from the captures in `folder`."""
    links = results.links.set_index("name")
    exits = _tcp_keys(sorted(_records(folder / "L-R.pcap") + _records(folder / "L-R.drops.pcap"), key=lambda r: r[0]))
    sent = {t for t, _ in _records(folder / "L-R.pcap")}
    window = results.warmup * 1e9
    out: dict[int, list[float]] = defaultdict(list)
    for flow in results.flows.itertuples():
        if flow.type != "tcp":
            continue
        access = links.loc[f"src{flow.id}->L"]
        serialization = round(flow.sent_bytes / flow.sent_packets * 8 / access["rate_bps"] * 1e9)
        hop = serialization + round(access["delay"] * 1e9)
        for key, t in _tcp_keys(_records(folder / f"src{flow.id}-L.pcap")).items():
            left = exits.get(key)
            if left is not None and left in sent and left >= window:
                out[flow.id].append((left - (t + hop)) / 1e9)
    return out


def check(scenario: aqmlab.Scenario, names: list[str]) -> list[dict]:
    """One row per (mechanism, group): the histogram's median, p99 and mean (ms), the captures'
    median and p99 (TCP groups), and the one-way-delay residual's mean (ms)."""
    rows = []
    for name in names:
        captures = ["L->R", *[f"src{i}->L" for i in range(_flow_count(scenario))]]
        variant = scenario.with_qdisc(mechanisms([name])[name]).with_(
            {"simulation.pcap": captures, "simulation.pcap_drops": True}
        )
        with tempfile.TemporaryDirectory() as tmp:
            results = aqmlab.run(variant, pcap_dir=tmp)
            captured = captured_sojourns(results, Path(tmp))
        flows = results.flows.set_index("id")
        links = results.links.set_index("name")
        groups = results.queue_delay_groups
        groups = groups[groups["link"] == links.loc["L->R", "id"]].set_index("group")
        for group, members in flows.groupby("group", sort=False):
            row = {
                "mechanism": name,
                "group": group,
                "median_ms": groups.loc[group, "median"] * 1e3,
                "p99_ms": groups.loc[group, "p99"] * 1e3,
                "mean_ms": groups.loc[group, "mean"] * 1e3,
            }
            tcp = [s for i in members.index for s in captured.get(i, [])]
            if tcp:
                row |= {
                    "captured_median_ms": statistics.median(tcp) * 1e3,
                    "captured_p99_ms": float(np.quantile(tcp, 0.99)) * 1e3,
                }
            row["one_way_residual_ms"] = float(
                np.average(
                    [_queueing(results, links, i) for i in members.index],
                    weights=members["delivered_packets"],
                )
                * 1e3
            )
            rows.append(row)
    return rows


def _flow_count(scenario: aqmlab.Scenario) -> int:
    return sum(int(f.get("count", 1)) for f in scenario.to_dict()["flows"])


def _queueing(results: aqmlab.Results, links, flow: int) -> float:
    """Flow `flow`'s mean one-way delay less its route's propagation and serialization (s)."""
    f = results.flows.set_index("id").loc[flow]
    size_bits = f["sent_bytes"] / f["sent_packets"] * 8
    route = [links.loc[f"src{flow}->L"], links.loc["L->R"], links.loc[f"R->dst{flow}"]]
    return f["mean_delay"] - sum(link["delay"] + size_bits / link["rate_bps"] for link in route)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("scenario", nargs="?", default=str(Path(__file__).parent / "tutorial-scenario.toml"))
    parser.add_argument("-m", "--mechanisms", default="droptail,red,drr,fq_codel,csfq")
    args = parser.parse_args()
    rows = check(aqmlab.load(args.scenario), args.mechanisms.split(","))
    columns = list(dict.fromkeys(k for r in rows for k in r))
    print("\t".join(columns))
    for r in rows:
        print("\t".join(f"{r[c]:.2f}" if isinstance(r.get(c), float) else str(r.get(c, "-")) for c in columns))
    return 0


if __name__ == "__main__":
    sys.exit(main())
