"""Today's version of the seed question (issue 37): L4S. Scalable senders (DCTCP, TCP Prague) beside
classic ones (Reno, CUBIC) under the DualQ Coupled AQM (DualPI2, RFC 9332) and under the seed
mechanisms, and an unresponsive flow that marks ECT(1): one module per experiment (`coupling.py`,
`overload.py`, `mix.py`, `unresponsive.py`). The claims each grades are RFC 9332's,
quoted beside the rows; docs/l4s.md shows the results."""

from __future__ import annotations

from typing import Any

import pandas as pd

from ...results import MBPS, Results

# Linux's DualPI2 with tc's defaults (sch_dualpi2.c dualpi2_reset_default()): the qdisc every
# L4S experiment runs unless it compares mechanisms.
DUALPI2: dict[str, Any] = {"type": "dualpi2", "profile": "linux"}


def prague(name: str, count: int, rtt_ms: float) -> dict[str, Any]:
    """`count` TCP Prague flows (aqmlab's Linux 6.1 port of the L4S team's module) of `rtt_ms` base RTT."""
    return _tcp(name, count, rtt_ms, "prague")


def cubic(name: str, count: int, rtt_ms: float) -> dict[str, Any]:
    """`count` CUBIC flows (Linux's default, not ECN-capable) of `rtt_ms` base RTT."""
    return _tcp(name, count, rtt_ms, "cubic")


def _tcp(name: str, count: int, rtt_ms: float, cc: str) -> dict[str, Any]:
    # The base RTT is the access links' delay both ways (the bottleneck's own delay is 0.5 ms each way).
    return {
        "name": name,
        "type": "tcp",
        "count": count,
        "packet_size": "1500B",
        "access_delay": f"{(rtt_ms - 1) / 4:g}ms",
        "sink_delay": f"{(rtt_ms - 1) / 4:g}ms",
        "start_jitter": "1s",
        "tcp": {"profile": "linux", "cc": cc},
    }


def group_stats(results: Results, link: str = "L->R") -> pd.DataFrame:
    """Per flow group (a `[[flows]]` entry): its flows' goodput (Mb/s, total and per flow), its
    max-min fair share (Mb/s, total), and its packets' queueing delay at `link` (ms: mean, median,
    p99)."""
    bottleneck = results.link(link)
    delays = results.queue_delay_groups
    delays = delays[delays["link"] == bottleneck["id"]].set_index("group")
    rows = []
    for group, members in results.flows.groupby("group", sort=False):
        goodput = float(members["goodput_bps"].sum()) / MBPS
        stats = delays.loc[group] if group in delays.index else None
        rows.append(
            {
                "group": group,
                "flows": len(members),
                "mbps": goodput,
                "mbps_per_flow": goodput / len(members),
                "fair_mbps": float(members["fair_share_bps"].sum()) / MBPS,
                "delay_mean_ms": float(stats["mean"]) * 1e3 if stats is not None else float("nan"),
                "delay_median_ms": float(stats["median"]) * 1e3 if stats is not None else float("nan"),
                "delay_p99_ms": float(stats["p99"]) * 1e3 if stats is not None else float("nan"),
            }
        )
    return pd.DataFrame(rows).set_index("group")
