"""The six tests of ns-2.35's RED-PD validation suite (`tcl/test/test-suite-red-pd.tcl`, by the
RED-PD paper's authors) as aqmlab scenarios (`SCENARIOS`), and the per-flow measures of a run at
the bottleneck (`Run`): what `validate ns2` runs beside ns-2's suite (`redpd_suite.py`) and the
experiment `redpd-ns2-suite` grades (experiments/redpd/ns2_suite.py).

The suite's network (`Topology/net2`): sources s1 and s2 on 10 Mb/s links of 2 and 3 ms, sinks
s3 and s4 on 10 Mb/s links of 4 and 5 ms, and a 0.5 Mb/s, 20 ms RED/PD bottleneck r1 → r2 (drop
tail back), queue limit 100 both ways. Its RED: thresholds 5 and 15, `q_weight_ 0.002`, gentle,
packet mode; from ns-2's defaults `linterm_ 10` (max_p 0.1), `mean_pktsize_ 500`, `wait_ true`;
ns-2.35's red.cc, our RED `profile = "ns2"`.
TCPs are `TCP/Sack1` with `window_ 50`, ns-2's 1000-byte packets, one ACK per packet
(`TCPSink/Sack1`), `tcpTick_ 0.1`, `windowInit_ 1`: our `profile = "ns2"` SACK agent. CBRs are
ns-2's `Application/Traffic/CBR`: 210-byte packets unless set (`packetSize_ 210`), `random_`
nonzero is our `jitter`. RED-PD is ns-2's, our `profile = "ns2"`: its engine (`REDPDSim`, present
in `complete`, `cbrs`, `cbrs-noidle`) starts at 10.1 s with R = 40 ms, multiple lists, the §6.2
test on; its pre-filter spaces drops. Every run 30 s.

- `simple`: TCPs from s1 (at 0 s) and s2 (at 1 s) to s3; no engine; tcp1 monitored with
  probability 0.1 at 10 s, unmonitored at 20 s.
- `unresponsive`: the same TCPs and a 0.5 Mb/s CBR s1 → s4 from 1 s; no engine; the CBR
  monitored with 0.1 at 10 s and declared unresponsive at 20 s with `unresponsive_penalty_ 3`.
- `frp`: the two TCPs; no engine; `P_testFRp_ 0.1`, every arrival dropped with probability 0.1
  in front of RED, which still drops (drop reason `loss`, then RED's own).
- `complete`: as `unresponsive` with the engine instead of the script (and, for comparison, the
  same scenario under plain RED).
- `cbrs`: CBRs only, 200-byte packets with random gaps: 0.1 Mb/s from s1 (at 0.2 s) and s2 (at
  0.1 s) to s3, 0.5 Mb/s s1 → s4 from 0 s; the engine; `noidle_ false`.
- `cbrs-noidle`: the same with `noidle_ true`, "so that we don't drop from unresponsive flows
  when it would result in the link going idle"; ns-2 prints the link utilisation of both.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pandas as pd

from ..results import Results

BOTTLENECK = {"rate": 0.5e6, "delay": 0.020}
LIMIT = 100
ACCESS_RATE = 10e6
SOURCE_DELAY = {"s1": 0.002, "s2": 0.003}
SINK_DELAY = {"s3": 0.004, "s4": 0.005}
# The suite's RED (module docstring): its thresholds, q_weight_ and gentle_, ns-2's defaults for the rest.
SUITE_RED = {
    "profile": "ns2",
    "limit": LIMIT,
    "min_th": 5,
    "max_th": 15,
    "w_q": 0.002,
    "gentle": True,
    "max_p": 0.1,
    "wait": True,
    "mean_pktsize": 500,
}
TCP = {"profile": "ns2", "variant": "sack", "window": 50, "delayed_ack": False}
CBR_PACKET = 210  # ns-2 Application/Traffic/CBR packetSize_
DURATION = 30.0  # every test's stoptime
SCRIPTED = 0.1  # monitorFlow's probability, and frp's P_testFRp_
PENALTY = 3.0  # unresponsiveFlow 3 3
MONITOR_AT, UNMONITOR_AT = 10.0, 20.0  # the scripted times
# Drops behind the pre-filter: the FRp loss, then RED's.
QUEUE_DROPS = ("loss", "early", "forced", "overflow")


def flow(name: str, kind: str, src: str, dst: str, start: float, **fields: Any) -> dict:
    return {
        "name": name,
        "type": kind,
        "start": start,
        "access_rate": ACCESS_RATE,
        "access_delay": SOURCE_DELAY[src],
        "sink_delay": SINK_DELAY[dst],
        **fields,
    }


def tcps() -> list[dict]:
    """tcp1 s1 → s3 from 0 s, tcp2 s2 → s3 from 1 s."""
    return [flow("tcp1", "tcp", "s1", "s3", 0.0, tcp=TCP), flow("tcp2", "tcp", "s2", "s3", 1.0, tcp=TCP)]


def red_pd(**fields: Any) -> dict:
    return {"type": "red_pd", "profile": "ns2", "red": dict(SUITE_RED), **fields}


def net2(name: str, flows: list[dict], qdisc: dict) -> dict:
    return {
        "name": f"redpd-ns2-{name}",
        "simulation": {"duration": DURATION, "record_drops": True},
        "topology": {
            "type": "dumbbell",
            "access_rate": ACCESS_RATE,
            "bottleneck": BOTTLENECK | {"qdisc": qdisc, "reverse_qdisc": {"type": "droptail", "limit": LIMIT}},
        },
        "flows": flows,
    }


def cbr_unresponsive() -> dict:
    """The 0.5 Mb/s CBR s1 → s4 from 1 s, ns-2's 210-byte packets."""
    return flow("cbr", "cbr", "s1", "s4", 1.0, rate=0.5e6, packet_size=CBR_PACKET)


def cbrs() -> list[dict]:
    extra = {"packet_size": 200, "jitter": True}
    return [
        flow("cbr1", "cbr", "s1", "s3", 0.2, rate=0.1e6, **extra),
        flow("cbr2", "cbr", "s2", "s3", 0.1, rate=0.1e6, **extra),
        flow("cbr", "cbr", "s1", "s4", 0.0, rate=0.5e6, **extra),
    ]


def scripted(flow_id: int, *commands: tuple[float, str]) -> list[dict]:
    return [
        {"at": at, "flow": flow_id, "action": action} | ({"probability": SCRIPTED} if action == "monitor" else {})
        for at, action in commands
    ]


SCENARIOS: dict[str, Callable[[], dict]] = {
    "simple": lambda: net2(
        "simple",
        tcps(),
        red_pd(identification="off", schedule=scripted(0, (MONITOR_AT, "monitor"), (UNMONITOR_AT, "unmonitor"))),
    ),
    "unresponsive": lambda: net2(
        "unresponsive",
        [*tcps(), cbr_unresponsive()],
        red_pd(
            identification="off",
            unresponsive_penalty=PENALTY,
            schedule=scripted(2, (MONITOR_AT, "monitor"), (UNMONITOR_AT, "unresponsive")),
        ),
    ),
    "frp": lambda: net2("frp", tcps(), red_pd(identification="off", red=SUITE_RED | {"fixed_p": SCRIPTED})),
    "complete": lambda: net2("complete", [*tcps(), cbr_unresponsive()], red_pd()),
    "complete-red": lambda: net2("complete-red", [*tcps(), cbr_unresponsive()], {"type": "red", **SUITE_RED}),
    "cbrs": lambda: net2("cbrs", cbrs(), red_pd(noidle=False)),
    "cbrs-noidle": lambda: net2("cbrs-noidle", cbrs(), red_pd(noidle=True)),
}


class Run:
    """One run's per-flow measures at the bottleneck over time windows."""

    def __init__(self, results: Results):
        self.results = results
        self.link = results.link("L->R")
        log = results.drop_log
        self.drops = log[log["link"] == self.link["id"]]
        self.sizes = {int(f.id): int(f.size) for f in self._sizes().itertuples()}

    def _sizes(self) -> pd.DataFrame:
        flows = self.results.flows
        sent = flows["sent_bytes"] / flows["sent_packets"]
        return pd.DataFrame({"id": flows["id"], "size": sent.round()})

    def goodput(self, flow: int, start: float, end: float) -> float:
        """Mb/s received in [start, end) (1-s bins)."""
        t = self.results.throughput
        bins = t[(t["flow"] == flow) & (t["time"] >= start) & (t["time"] < end)]
        return float(bins["bps"].sum()) / (end - start) / 1e6

    def dropped(self, flow: int, start: float, end: float, reasons: tuple[str, ...]) -> int:
        d = self.drops
        return int(((d["flow"] == flow) & (d["time"] >= start) & (d["time"] < end) & d["reason"].isin(reasons)).sum())

    def arrivals(self, flow: int, start: float, end: float) -> float:
        """Packets of `flow` that reached the bottleneck in [start, end): delivered plus dropped there."""
        delivered = self.goodput(flow, start, end) * 1e6 * (end - start) / 8 / self.sizes[flow]
        return delivered + self.dropped(flow, start, end, ("pre_filter", *QUEUE_DROPS))

    def prefiltered(self, flow: int, start: float, end: float) -> tuple[int, float]:
        """Pre-filter drops of `flow` in [start, end), and their fraction of its arrivals."""
        drops = self.dropped(flow, start, end, ("pre_filter",))
        return drops, drops / self.arrivals(flow, start, end)

    def gate_open(self, start: float, end: float) -> float:
        """The fraction of the queue samples in [start, end) with RED's average at least min_th
        and more than one packet queued: when a responsive flow's pre-filter may drop."""
        q = self.results.queue
        q = q[(q["link"] == self.link["id"]) & (q["time"] >= start) & (q["time"] < end)]
        return float(((q["average"] >= SUITE_RED["min_th"]) & (q["packets"] > 1)).mean())

    def record(self, flow: int) -> dict[str, float]:
        rows = self.results.qdisc_flows
        row = rows[(rows["link"] == self.link["id"]) & (rows["flow"] == flow)]
        return {} if row.empty else row.iloc[0].to_dict()
