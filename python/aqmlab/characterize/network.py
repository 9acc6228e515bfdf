"""The network RFC 7928 characterizes an AQM on, and the mechanisms as they run on it.

RFC 7928 §3.1 asks for a dumbbell ("a single bottleneck ... with senders and receivers on
either side") and leaves its numbers to the tester; every value below is the one the ns-3 AQM
Evaluation Suite sets (aqm-eval-suite-2.0, `src/aqm-eval-suite/model/eval-topology.cc` and the
examples' `CreateScenario`), so that its results compare with ours (tools/ns3_aqm_eval/):

- the bottleneck 1 Mbit/s with 48 ms of propagation, each sender's and receiver's access link
  10 Mbit/s with 1 ms: a round-trip time of 100 ms;
- a buffer of 45 packets on the bottleneck (`ConfigureQueueDisc (45, 750, ...)`), for every
  mechanism: about 270 ms of 750-byte packets at 1 Mbit/s;
- 750-byte packets on the wire (`MeanPktSize 750`; 698 bytes of payload);
- NewReno with SACK, an initial window of 3 (RFC 3390), delayed ACKs of two segments with a
  200 ms timeout, and a minimum RTO of 1 s (RFC 6298): ns-3's TCP defaults, which the suite keeps.

The suite runs each test for 300 s of traffic. The measurement window starts after 10 s (100
round-trip times of this network), chosen before any result was seen: slow start and the
mechanisms' first control intervals (CoDel's 100 ms, PIE's 30 ms updates) are over by then.
"""

from __future__ import annotations

from typing import Any

from .. import python_qdisc
from ..mechanisms import PRESETS

BOTTLENECK_RATE = "1Mbps"
BOTTLENECK_DELAY = "48ms"
ACCESS_RATE = "10Mbps"
ACCESS_DELAY = "1ms"
BUFFER_PACKETS = 45
PACKET_BYTES = 750
DURATION_S = 300.0
QUICK_DURATION_S = 60.0
WARMUP_S = 10.0
# RFC 7928 §2.7: goodput and delay are sampled every K × the minimum RTT, K = 10.
SAMPLES_PER_RTT = 10

# ns-3's TCP as the suite runs it (NewReno, SACK on, IW3, delayed ACK 2 / 200 ms, min RTO 1 s),
# written in the `rfc` profile's words.
NEWRENO = {
    "profile": "rfc",
    "variant": "sack",
    "initial_window": 3,
    "delayed_ack": True,
    "delack_timeout": "200ms",
    "min_rto": "1s",
}

# The suite's AQM settings where they are not the type's own defaults (eval-topology.cc
# `ConfigureQueueDisc`, read back from ns-3.44's attributes by tools/ns3_aqm_eval/): RED in
# packets with min_th 5, max_th 15, max_p 1/50 (`LInterm 50`), w_q 0.002, gentle, `wait` and a
# mean packet size of 750 B; CoDel with RFC 8289's 5 ms / 100 ms and `MinBytes` 750, PIE with
# `MeanPktSize` 750: the network's packet size where RFC 8289 and RFC 8033 (and our defaults)
# have one MTU, 1500 B, as the backlog CoDel never drops below and as PIE's "2 * MEAN_PKTSIZE"
# of RFC 8033 §4.1's work-conserving safeguard. PIE otherwise runs its own defaults, RFC 8033's
# 15 ms target and 15 ms update interval, which ns-3.44's PIE has too (the suite of 2017 ran
# ns-3's 20 ms and 30 ms of then).
_SUITE_RED = {
    "min_th": 5,
    "max_th": 15,
    "max_p": 0.02,
    "w_q": 0.002,
    "gentle": True,
    "wait": True,
    "mean_pktsize": f"{PACKET_BYTES}B",
}
_SUITE_CODEL = {"mtu": f"{PACKET_BYTES}B"}
_SUITE_PIE = {"mtu": f"{PACKET_BYTES}B"}


def qdisc_for(name: str, buffer_packets: int = BUFFER_PACKETS) -> dict[str, Any]:
    """The qdisc table of mechanism `name` on this network, with a buffer of `buffer_packets`
    packets. `name` is what `aqmlab compare` takes: a preset (its own settings, the buffer made
    the network's), a qdisc type (its own defaults, the buffer made the network's where the type
    counts a `limit` in packets) or a queue discipline written in Python (`my_aqm.py:Class`:
    unchanged, it keeps its own buffer). RED, RED-PD's RED and CHOKe run the suite's RED, CoDel
    and PIE the suite's."""
    if python_qdisc.is_spec(name):
        return python_qdisc.table(name)
    buffer_bytes = buffer_packets * PACKET_BYTES
    kind = PRESETS.get(name, {"type": name})["type"]
    if kind == "red":
        return {"type": "red", "limit": buffer_packets, **_SUITE_RED}
    if kind == "choke":
        # CHOKe's RED has no gentle region nor `wait` (the CHOKe paper's RED is F-J's).
        own = {k: v for k, v in _SUITE_RED.items() if k not in ("gentle", "wait")}
        return {"type": "choke", "limit": buffer_packets, **own}
    if kind == "red_pd":
        return {"type": "red_pd", "red": {"limit": buffer_packets, **_SUITE_RED}}
    if kind == "codel":
        return {"type": "codel", "limit": buffer_packets, **_SUITE_CODEL}
    if kind == "pie":
        return {"type": "pie", "limit": buffer_packets, **_SUITE_PIE}
    if kind == "sred":
        # SRED's buffer B is in bytes (its §VI), its thresholds fractions of B.
        return {"type": "sred", "limit_bytes": f"{buffer_bytes}B"}
    if kind == "fred":
        # FRED in packets with its own thresholds (buffer/4, twice that), as the FRED paper's
        # defaults; the `fred-2` preset keeps its two-packet buffer.
        return {"type": "fred", "limit": buffer_packets} | {
            k: v for k, v in PRESETS.get(name, {}).items() if k == "two_packet_buffer"
        }
    if name in PRESETS:
        # The preset's own settings; its buffer (the CSFQ paper's 64 KB) becomes this network's.
        table = {k: v for k, v in PRESETS[name].items() if k not in ("limit_bytes", "memory_limit", "limit")}
        return {**table, "limit": buffer_packets}
    return {"type": name, "limit": buffer_packets}


def scenario(
    topology: dict[str, Any],
    flows: list[dict[str, Any]],
    duration: float,
    name: str,
    bin_s: float,
    record_drops: bool = False,
) -> dict[str, Any]:
    """A scenario of `flows` (`[[flows]]` tables; each gets the network's packet size unless it
    sets one) on `topology`, measured from `WARMUP_S`, with goodput and queueing delay per `bin_s`
    (K × the minimum RTT), the queueing delay of every packet kept per flow group, and with
    `record_drops` every drop's time (for loss synchronisation)."""
    return {
        "name": name,
        "simulation": {
            "duration": duration,
            "warmup": WARMUP_S,
            "throughput_bin": bin_s,
            "sample_interval": 0,
            "queue_delay": "groups",
            "queue_delay_series": True,
            "record_drops": record_drops,
        },
        "topology": topology,
        "flows": [{"packet_size": f"{PACKET_BYTES}B", **flow} for flow in flows],
    }


def dumbbell(
    qdisc: dict[str, Any], bottleneck: dict[str, Any] | None = None, access_rate: str = ACCESS_RATE
) -> dict[str, Any]:
    """The network's dumbbell with the mechanism `qdisc` on its bottleneck (`bottleneck` overrides
    the link's rate and delay, or adds rate changes)."""
    return {
        "type": "dumbbell",
        "bottleneck": {"rate": BOTTLENECK_RATE, "delay": BOTTLENECK_DELAY, **(bottleneck or {}), "qdisc": qdisc},
        "access_rate": access_rate,
        "access_delay": ACCESS_DELAY,
        "sink_delay": ACCESS_DELAY,
    }


def two_way(qdisc: dict[str, Any]) -> dict[str, Any]:
    """The dumbbell as a graph with one host on each side (A - L - R - B), so that flows run both
    ways, with the mechanism on both directions of the bottleneck L - R (RFC 7928 §9.2)."""
    access = {"rate": ACCESS_RATE, "delay": ACCESS_DELAY}
    return {
        "type": "graph",
        "nodes": ["A", "L", "R", "B"],
        "links": [
            {"from": "A", "to": "L", **access},
            {
                "from": "L",
                "to": "R",
                "rate": BOTTLENECK_RATE,
                "delay": BOTTLENECK_DELAY,
                "qdisc": qdisc,
                "reverse_qdisc": qdisc,
                "monitor": True,
            },
            {"from": "R", "to": "B", **access},
        ],
    }


def parking_lot(qdisc: dict[str, Any], links: int) -> dict[str, Any]:
    """`links` bottlenecks in a row, each at the network's rate with the mechanism, their
    propagation splitting the bottleneck's 48 ms so that a flow through all has the network's
    100 ms RTT (RFC 7928 §10)."""
    delay_ms = float(BOTTLENECK_DELAY.removesuffix("ms")) / links
    return {
        "type": "parking_lot",
        "congested_links": links,
        "link": {"rate": BOTTLENECK_RATE, "delay": f"{delay_ms:g}ms", "qdisc": qdisc},
        "access_rate": ACCESS_RATE,
        "access_delay": ACCESS_DELAY,
        "sink_delay": ACCESS_DELAY,
    }


def bulk_tcp(name: str, count: int = 1, **fields: Any) -> dict[str, Any]:
    """Long-lived NewReno flows as the suite's (`tcp` entries in `fields` add to its settings)."""
    tcp = {**NEWRENO, **fields.pop("tcp", {})}
    return {"type": "tcp", "name": name, "count": count, "tcp": tcp, **fields}
