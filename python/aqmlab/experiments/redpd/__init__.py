"""RED-PD (R. Mahajan, S. Floyd, "Controlling High-Bandwidth Flows at the Congested Router",
ACIRI 2000), §5.2 and §7: the setup shared by the paper's simulations, one module per
experiment (redpd/*.py). The paper's global settings (§7, §7.2):

- "The capacity of the congested link is 10 Mbps in all the simulations";
- "Flows were started at a random time within 10 seconds and aggregated results ... were
  taken not before 20 seconds after the start of the simulation";
- "Unless otherwise specified, the target R is 40ms" (the qdisc's default);
- "the packet size used in simulations is 1000 bytes";
- "RED was running in packet mode and the SACK version of TCP was used"; "TCP flows that send
  a separate ACK for every data packet" (no delayed ACK).

Values the paper leaves unstated, and our choices (made before any run):

- TCP (`TCP`, every experiment with TCP): the paper ran ns-2 (§7), so ns-2's one-way SACK
  agent of its time, `Agent/TCP/Sack1` (`profile = "ns2"`, `variant = "sack"`: its arithmetic
  pipe_ in recovery, tcp-sack1.cc), no delayed ACK, and ns-2's default
  window of 20 packets: it never binds here (20 packets per 70 ms is 2.3 Mb/s against fair
  shares near 0.8 Mb/s in Figs. 15–16).
- RED (`RED`): the paper ran ns-2 (§7), so RED as ns-2's `red.cc` runs it (`profile =
  "ns2"`: its instantaneous-queue guard, first-packet rule and idle averaging; issue 21). The
  paper states none of its RED parameters; we use those of the authors' own
  ns-2 RED-PD validation suite (ns-2 `tcl/test/test-suite-red-pd.tcl`): queue limit 100
  packets, min_th 5, max_th 15, w_q 0.002, gentle, max_p 0.1 (ns-2's `linterm_ 10`).
- RED-PD (`red_pd_qdisc`): the paper's simulations ran the authors' own ns-2 engine
  (`tcl/ex/red-pd/monitoring.tcl`, `helper.tcl`, `queue/red-pd.cc`; issue 21), so RED-PD's
  `profile = "ns2"`: the engine starts at 10.1 s, acts only above a 0.1 % drop rate on flows
  with drops in the last interval, spaces pre-filter drops, and treats `fixed_p` as ns-2's
  FRp mode (a fixed loss in front of RED). An experiment whose text needs the paper's own
  reading grades that (`profile = "paper"`) and says why in its module.
- The dumbbell: 100 Mb/s access links, a 10 Mb/s bottleneck of 5 ms; a flow's RTT is set by
  its source's access delay (sink delay 1 ms).
- The fixed-loss queue of §5.2 and §7.1 (Figs. 11–13) runs on a 100 Mb/s link: its only
  drops should be the configured p, and at 10 Mb/s Fig. 12's 4× and 2× flows (14.7 Mb/s)
  overflow it (chosen after a first Fig. 12 run showed the overflow drops).
- Durations (unstated): 100 s for the link-sharing runs (Figs. 14–15), measured from 20 s;
  Figs. 11 and 16 as long as their rate changes need (the last change at 250 s, then 30 s
  for the release). One run per point (the paper gives single runs).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import pandas as pd

from ...results import Results

LINK_RATE = 10e6  # §7: "The capacity of the congested link is 10 Mbps"
FIXED_LOSS_RATE = 100e6  # the fixed-loss queue's link (module docstring)
LOSS_RATES = (0.01, 0.05, 0.10)  # the fixed-loss queue's p in §4.4's Fig. 9 (its lines) and §6.4
ACCESS_RATE = 100e6
BOTTLENECK_DELAY = 0.005
SINK_DELAY = 0.001
PACKET = 1000  # §7.2: "the packet size used in simulations is 1000 bytes"
TARGET_RTT = 0.040  # §7.2: "Unless otherwise specified, the target R is 40ms"
START_SPREAD = 10.0  # §7.2: "started at a random time within 10 seconds"
WARMUP = 20.0  # §7.2: "taken not before 20 seconds after the start"
K, M = 3, 5  # §4.2
DURATION = 100.0
QUICK_DURATION = 40.0

# The one TCP of every experiment (module docstring): ns-2's SACK agent, an ACK per packet.
TCP: dict[str, Any] = {"profile": "ns2", "variant": "sack", "delayed_ack": False}
# The RED of ns-2's RED-PD validation suite (module docstring).
RED: dict[str, Any] = {
    "profile": "ns2",
    "limit": 100,
    "min_th": 5,
    "max_th": 15,
    "w_q": 0.002,
    "gentle": True,
    "max_p": 0.1,
}


def reference_rate(p: float, rtt: float = TARGET_RTT) -> float:
    """Eq. 1: f(R, p) = √1.5 / (R·√p), packets per second."""
    return math.sqrt(1.5) / (rtt * math.sqrt(p))


def reference_bps(p: float, rtt: float = TARGET_RTT) -> float:
    """Eq. 1 in bits per second of 1000-byte packets."""
    return reference_rate(p, rtt) * PACKET * 8


def cutdown_time(gamma: float, alpha: float, p: float, rtt: float = TARGET_RTT) -> float:
    """Eq. 6 with the denominator its derivation gives, γ·p·M·√(1.5p) (the extraction prints
    √(1.5pM)): (γ − α)/(γp) rounds of M − 1 intervals of (K/M)·R/√(1.5p)."""
    return (gamma - alpha) * rtt * K * (M - 1) / (gamma * p * M * math.sqrt(1.5 * p))


def release_time(
    probability: float, p: float, beta: float = 2.0, max_decrease: float = 0.05, floor: float = 0.005, wait: int = 3
) -> float:
    """Eq. 7: (m + n)·l·R·K/(√(1.5p)·M), n subtractive and m multiplicative rounds (§5.2)."""
    n = 0 if probability <= 2 * max_decrease else round(probability / max_decrease - 2)
    m = math.ceil(math.log((probability - n * max_decrease) / floor) / math.log(beta))
    return (m + n) * wait * TARGET_RTT * K / (math.sqrt(1.5 * p) * M)


def red_pd_qdisc(**fields: Any) -> dict:
    """ns-2's RED-PD over the RED above (module docstring); `fields` are RED-PD's (e.g.
    `unresponsive_test`, or `profile = "paper"`)."""
    red = dict(RED) | fields.pop("red", {})
    return {"type": "red_pd", "profile": "ns2", "red": red} | fields


def red_qdisc() -> dict:
    return {"type": "red", **RED}


def fixed_loss_qdisc(p: float, **fields: Any) -> dict:
    """§5.2 / §7.1's controlled queue: RED-PD whose output queue drops each arrival with probability p."""
    return red_pd_qdisc(red={"fixed_p": p, "limit": 1000}, **fields)


def cbr(name: str, rate: float, **extra: Any) -> dict:
    return {"name": name, "type": "cbr", "rate": rate, "packet_size": PACKET, **extra}


def tcp(name: str, rtt: float, **extra: Any) -> dict:
    """A SACK TCP whose RTT (propagation) is `rtt`: its source's access delay makes up the rest."""
    access = rtt / 2 - BOTTLENECK_DELAY - SINK_DELAY
    return {"name": name, "type": "tcp", "packet_size": PACKET, "tcp": TCP, "access_delay": access, **extra}


def scenario(
    name: str,
    flows: list[dict],
    qdisc: Mapping[str, Any],
    duration: float,
    warmup: float,
    seed: int = 1,
    rate: float = LINK_RATE,
) -> dict:
    """The dumbbell (10 Mb/s bottleneck unless `rate`) with `flows` and the discipline `qdisc`."""
    return {
        "name": name,
        "simulation": {"duration": duration, "warmup": warmup, "seed": seed},
        "topology": {
            "type": "dumbbell",
            "access_rate": ACCESS_RATE,
            "access_delay": 0.001,
            "sink_delay": SINK_DELAY,
            "bottleneck": {"rate": rate, "delay": BOTTLENECK_DELAY, "qdisc": dict(qdisc)},
        },
        "flows": flows,
    }


def mixed_scenario(mechanism: str, qdisc: Mapping[str, Any], duration: float) -> dict:
    """§7.2 Fig. 15: 9 SACK TCPs (3 each near 30, 50, 70 ms) and UDPs at 5, 3, 1 Mb/s, the
    bottleneck's queue `qdisc` (named `mechanism`)."""
    flows = [tcp(f"tcp{i}", rtt, start_jitter=START_SPREAD) for i, rtt in enumerate(TCP_RTTS)]
    flows += [cbr(f"udp{i}", rate * 1e6, start_jitter=START_SPREAD) for i, rate in enumerate((5, 3, 1))]
    return scenario(f"redpd-mixed-{mechanism}", flows, qdisc, duration, WARMUP)


# §7.2: "RTTs of TCP flows 1-3 are close to 30 ms ..., 4-6 around 50 ms ... 7-9 ... 70 ms";
# "some variation in the actual RTTs": ±2 ms within a group (our choice).
TCP_RTTS = (0.028, 0.030, 0.032, 0.048, 0.050, 0.052, 0.068, 0.070, 0.072)


def ambient_drop_rate(results: Results) -> float:
    """§7.2's ambient drop rate over the measurement window ("aggregated results ... were taken
    not before 20 seconds after the start"): the output queue's drops (RED's, not the
    pre-filter's) over its arrivals, which are the data packets the sources sent less those the
    pre-filter dropped (every source is behind the bottleneck, and the 100 Mb/s access links drop
    none). The authors' allTCP.pl takes it alike, from the engine's `bdrops` over `barrivals`."""
    drops = results.drops
    at_link = drops[drops["link"] == results.link("L->R")["id"]]
    dropped = int(at_link.loc[at_link["reason"].isin(("early", "forced", "overflow")), "window_count"].sum())
    prefiltered = int(at_link.loc[at_link["reason"] == "pre_filter", "window_count"].sum())
    return dropped / (int(results.flows["window_sent_packets"].sum()) - prefiltered)


def flow_record(results: Results, flow: int) -> pd.Series | None:
    """RED-PD's `qdisc_flows` row of `flow` at the bottleneck, or None if never identified."""
    rows = results.qdisc_flows
    rows = rows[(rows["link"] == results.link("L->R")["id"]) & (rows["flow"] == flow)]
    return None if rows.empty else rows.iloc[0]


def flow_id(results: Results, name: str) -> int:
    flows = results.flows
    return int(flows.loc[flows["name"] == name, "id"].iloc[0])


def binned(results: Results, flow: int) -> pd.Series:
    """A flow's received bits per second in 1-s bins, indexed by bin start."""
    t = results.throughput
    return t[t["flow"] == flow].set_index("time")["bps"]


def first_at_or_below(series: pd.Series, after: float, level: float) -> float:
    """The first bin start ≥ `after` whose value is at or below `level` (NaN if none)."""
    hits = series[(series.index >= after) & (series <= level)]
    return float(hits.index[0]) if len(hits) else math.nan


def monitoring_reason(results: Results, flows: list[int]) -> str:
    """For a failing row: each of `flows`' goodput, time monitored and pre-filter drops, and the
    bottleneck's utilisation."""
    drops = results.drops
    link = results.link("L->R")
    parts = []
    for flow in flows:
        record = flow_record(results, flow)
        prefilter = drops[(drops["link"] == link["id"]) & (drops["flow"] == flow) & (drops["reason"] == "pre_filter")]
        goodput = results.flows.set_index("id").loc[flow, "goodput_bps"] / 1e6
        monitored = 0.0 if record is None else record["time_monitored"]
        parts.append(
            f"flow {flow + 1}: {goodput:.3f} Mb/s, monitored {monitored:.0f} s of {results.duration:g}, "
            f"{int(prefilter['window_count'].sum())} pre-filter drops in the window"
        )
    return "; ".join(parts) + f"; bottleneck utilisation {link['utilisation']:.3f}"
