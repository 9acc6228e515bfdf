"""BRED (Anjum & Tassiulas, "Balanced-RED: An Algorithm to Achieve Fairness in the
Internet", CSHCN T.R. 99-9, 1999), §5: the setup shared by the paper's simulations, one
module per experiment: `bred-fig5` (bred/fig5.py), `bred-short-lived` (bred/short_lived.py),
`bred-buffer` (bred/buffer.py), `bred-many-flows` (bred/many_flows.py) and `bred-vs-red`
(bred/vs_red.py).

Setup shared by all experiments (§5, §5.1):

- Fig. 4: every source reaches the router over its own 100 Mb/s feeder link; the
  router's outgoing backbone link is the bottleneck. Ten sources: "sources 4 and 5 and
  10 are running non-adaptive applications" (CBR); the others are TCP Tahoe ("a
  congestion control algorithm equivalent to that of TCP tahoe") with RTTs tcp1 40 ms,
  tcp2 100 ms, tcp3 60 ms, tcp6 40 ms, tcp7 100 ms, tcp8 60 ms, tcp9 40 ms "excluding
  the service time".
- Packets of 500 bytes: the paper says sizes "from 100 to 500 bytes", but its buffers
  are 500-byte packets (150 packets "equivalent to 400ms" at 1.5 Mb/s, 450 at 4.5 Mb/s)
  and §5.1.2 says "500 bytes as in many of the earlier cases".
- "Each simulation is run for 100s and the latter half of the simulation is used for
  the purpose of bandwidth calculation. Further, each experiment is repeated 5 times
  and the average taken over all the five trials" (§5.1.2: one trial).
- BRED with §5.1's parameters (the qdisc's defaults: eq. 15–16, α = 1.3, β = 0.9,
  w_n = 0.02). RED (§5.2.1): min_th = B/4, max_th = B/2, max_p = 0.1; the paper ran ns-2
  ("We use ns2 [10] for the purpose of simulations", §5), so RED is ns-2's `red.cc`
  (`profile = "ns2"`: its instantaneous-queue guard, first-packet rule and idle averaging;
  issue 21).
- Bandwidth is goodput (bytes handed to the receiving application).

Values the paper leaves unstated, and our choices:

- Propagation delays: the backbone and each sink's link 1 ms one way, each source's
  feeder link the rest of its RTT (RTT/2 − 2 ms). The CBR sources' RTT: 40 ms (it does
  not matter to a CBR source). Fig. 8's delays are stated and used as given.
- TCP (`TCP`, every experiment): ns-2's Tahoe agent of the paper's time (`profile =
  "ns2"`: `cwnd_ += 1/cwnd_`, one packet timed per RTT on the 100 ms `tcpTick_`, RTO at
  least 2 ticks, initial RTO 6 s), receiver window unlimited (1000 packets: §5.1.2 says
  so for Fig. 9; the other figures' windows are "varied" and unstated, and §4's model has
  the network, not the receiver, limit the window), no delayed ACKs (ns-2's default sink;
  the analysis of §4 ignores them).
- Trials differ by seed: the sources start at random within the first second (the
  paper gives no start times except in Fig. 6), and BRED's and RED's random drops.
- CBR sources send evenly spaced packets (ns-2's CBR without `random_`).
- Buffers where unstated (Figs. 6, 10): 400 ms of the backbone, the paper's rule in
  every experiment whose buffer it states (§5.1, §5.1.2, §5.2.2).
- RED's w_q: 0.002 (Floyd–Jacobson, ns-2 default); its idle-time decay counts
  500-byte packets.
- The CBR rates swept in Figs. 5 and 9 and the buffer sizes of Fig. 7 (x axes of
  figures whose values the text does not give): chosen below, spanning from under the
  fair share to several times the link.

The paper's figures are not in the text; the rows check what the text says and the
numbers it prints (eq. 14's CBR bounds), with tolerances argued next to each.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import pandas as pd

from ...metrics import bred_cbr_bound, jain_index
from ...results import MBPS, Results

# §5: "congestion control algorithm equivalent to that of TCP tahoe", ns-2's agent (module docstring).
TCP = {"profile": "ns2", "variant": "tahoe", "window": 1000}
# §5.1: the ten sources of Fig. 4 in the paper's numbering, and each TCP's RTT (s).
SOURCES = ["tcp1", "tcp2", "tcp3", "cbr4", "cbr5", "tcp6", "tcp7", "tcp8", "tcp9", "cbr10"]
TCP_RTT = {"tcp1": 0.04, "tcp2": 0.1, "tcp3": 0.06, "tcp6": 0.04, "tcp7": 0.1, "tcp8": 0.06, "tcp9": 0.04}
CBR_RTT = 0.04  # unstated
TCPS = [s for s in SOURCES if s in TCP_RTT]
CBRS = [s for s in SOURCES if s not in TCP_RTT]
PACKET_SIZE = 500  # bytes (§5.1.2; the buffer arithmetic of §5.1)
BACKBONE_DELAY = SINK_DELAY = 0.001  # s, unstated for Fig. 4
FEEDER_RATE = 100e6  # §5.1: "a feeder access link of 100Mbps"

DURATION = 100.0  # s (§5.1); bandwidth over the latter half
TRIALS = 5  # §5.1: "each experiment is repeated 5 times"
QUICK_DURATION = 40.0  # s, quick runs: one trial of this length
BUFFER_SECONDS = 0.4  # §5.1, §5.1.2, §5.2.2: buffers of "400ms of the backbone link speed"

# §4.3.2: "we choose α = 1.3 and β = 0.9" (the BRED qdisc's defaults).
ALPHA, BETA = 1.3, 0.9

# A flow is "shut out" when it gets less than this fraction of its equal share of the link.
SHUT_OUT = 0.1

# Eq. 14's bound is a heuristic the paper says "is adhered to"; the simulated CBR
# throughput may exceed it by sampling noise and N̂'s lag: 15 % (reproduction-targets).
BOUND_SLACK = 1.15

MARKERS = {0.04: "x", 0.06: "o", 0.1: "+"}  # the paper marks TCPs of equal RTT alike


def buffer_packets(link_bps: float, seconds: float = BUFFER_SECONDS) -> int:
    """A buffer of `seconds` of the link's rate, in 500-byte packets."""
    return round(link_bps * seconds / (8 * PACKET_SIZE))


def bred_qdisc(buffer: int) -> dict:
    """BRED with §5.1's parameters (the qdisc's defaults) and a buffer of `buffer` packets."""
    return {"type": "bred", "limit": buffer}


def red_qdisc(buffer: int) -> dict:
    """§5.2.1: "lower threshold ... one-fourth of the buffer size and the upper threshold
    ... one-half ... The maximum dropping probability is taken to be 0.1"."""
    return {
        "type": "red",
        "profile": "ns2",
        "limit": buffer,
        "min_th": buffer / 4,
        "max_th": buffer / 2,
        "max_p": 0.1,
        "w_q": 0.002,
        "mean_pktsize": PACKET_SIZE,
    }


MECHANISMS = {"bred": bred_qdisc, "red": red_qdisc}


def cbr_bound_mbps(link_bps: float, n_c: int, n_t: int) -> float:
    """Eq. 14's upper bound on one non-conforming CBR flow (Mb/s), with α, β of §4.3.2."""
    return bred_cbr_bound(ALPHA, BETA, n_c, n_t) * link_bps / MBPS


def fairness(values: Iterable[float]) -> float:
    """Eq. 17's fairness quotient F = (Σb)² / (N·Σb²) (Jain's index)."""
    return jain_index(values)


def ten_sources_scenario(
    link_bps: float,
    qdisc: Mapping[str, Any],
    cbr_bps: float | Mapping[str, float] = 0.0,
    *,
    seed: int = 1,
    duration: float = DURATION,
    sample: float = 1.0,
    schedule: Mapping[str, tuple[float, float]] | None = None,
    tcp_only: bool = False,
) -> dict:
    """The Fig. 4 network with §5.1's ten sources.

    `cbr_bps` is every CBR's rate, or a rate per CBR name. `schedule` gives each
    source's (start, stop) in seconds (Fig. 6); without it the sources start within
    the first second and run to the end. `tcp_only` leaves the CBRs out (Fig. 10).
    Goodput is measured over the latter half; `sample` is the time-series bin.
    """
    rates = cbr_bps if isinstance(cbr_bps, Mapping) else dict.fromkeys(CBRS, cbr_bps)
    flows = []
    for name in SOURCES:
        if tcp_only and name in CBRS:
            continue
        rtt = TCP_RTT.get(name, CBR_RTT)
        flow: dict[str, Any] = {
            "name": name,
            "packet_size": PACKET_SIZE,
            "access_delay": rtt / 2 - BACKBONE_DELAY - SINK_DELAY,
        }
        flow.update({"type": "tcp", "tcp": TCP} if name in TCP_RTT else {"type": "cbr", "rate": rates[name]})
        if schedule is None:
            flow["start_jitter"] = 1.0
        else:
            start, stop = schedule[name]
            flow["start"] = start
            if stop < duration:
                flow["stop"] = stop
        flows.append(flow)
    return {
        "name": "bred-fig4",
        "simulation": {"duration": duration, "warmup": duration / 2, "seed": seed, "throughput_bin": sample},
        "topology": {
            "type": "dumbbell",
            "access_rate": FEEDER_RATE,
            "sink_delay": SINK_DELAY,
            "bottleneck": {"rate": link_bps, "delay": BACKBONE_DELAY, "qdisc": dict(qdisc)},
        },
        "flows": flows,
    }


def mean_goodput(runs: list[Results]) -> pd.Series:
    """Each flow's goodput (Mb/s) averaged over the trials, by flow name."""
    return pd.concat([results.flows.set_index("name")["goodput_bps"] for results in runs], axis=1).mean(axis=1) / MBPS


def mean_series(runs: list[Results]) -> pd.DataFrame:
    """Each flow's goodput per time bin (Mb/s; rows: bin start, columns: flow names), averaged over the trials."""
    frames = []
    for results in runs:
        table = results.throughput.pivot_table(index="time", columns="flow", values="bps", fill_value=0.0)
        table.columns = [results.flows.set_index("id").loc[c, "name"] for c in table.columns]
        frames.append(table / MBPS)
    return sum(frames[1:], frames[0]) / len(frames)


def rtt_style(name: str) -> dict[str, Any]:
    """Plot markers: the paper marks TCPs of equal RTT alike, CBRs as black squares."""
    if name in CBRS:
        return {"marker": "s", "color": "black", "markersize": 4}
    return {"marker": MARKERS[TCP_RTT[name]], "markersize": 5}
