"""An aqmlab scenario as an ns-2.35 Tcl script (`aqmlab export ns2 FILE`).

The script builds the same network (one simplex link per direction, each with its own queue),
the same flows and the same measurement window, and prints its measurements as lines starting
with `aqmlab-ns2` (`run.parse_output` reads them back): at the start of the window and at the
end, each flow's in-order delivered bytes (TCP sink `bytes_`, UDP `LossMonitor`) and, for TCP,
its timeouts (`nrexmit_`); each monitored link's arrivals, departures and drops, in all and per
flow (an ns-2 flow monitor, `makeflowmon Fid`).

What each part becomes (docs/ns2.md has the table and the reasons):

- drop-tail: `Queue/DropTail` with `limit_` one more than ours. ns-2's DropTail refuses an
  arrival when `length + 1 >= limit_` (queue/drop-tail.cc `enque`), counting only the packets
  waiting, not the one on the link (`Queue::recv` hands that one to the link and blocks), so
  it keeps `limit_ - 1` waiting; aqmlab's keeps `limit` waiting. In bytes: `queue_in_bytes_`,
  `mean_pktsize_ 1`, `limit_` = ours + 1 (refused when `bytes + size >= limit_`; ours when
  `bytes + size > limit_bytes`);
- RED: `Queue/RED` with every parameter set (ns-2.35's defaults auto-configure the thresholds
  and the weight): ns-2 always runs its own red.cc, which aqmlab's RED `profile = "ns2"` models;
- DRR: `Queue/DRR` (`blimit_`, `quantum_`); SFQ: `Queue/SFQ` (`maxqueue_`, `buckets_`) from
  aqmlab's `variant = "ns2"`, its model of queue/sfq.cc (same hash of the node pair, so the same
  flows share a bucket); the Linux SFQ is another algorithm and is refused;
- TCP: ns-2's one-way agents as the `ns2` profile reproduces them: the ns-2 variables the
  profile's rules correspond to are set to their 1997–2001 values (ns-2.35's defaults moved on).

A part ns-2 cannot express raises `ScenarioError` naming its field path, as the core does.
"""

from __future__ import annotations

import itertools
import math
import random
import re
from collections import deque
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from .. import __version__
from .._core import ScenarioError
from ..scenario import Scenario
from ..units import rate, seconds, size

# Lines of the script's output that carry measurements start with this.
MARK = "aqmlab-ns2"

# --- the scenario's defaults, as the core resolves them (docs/scenario.md) ---

ACCESS_RATE = "100Mbps"  # scenario/mod.rs default_access_rate
ACCESS_DELAY = "1ms"  # default_access_delay (sources and sinks)
DEFAULT_DROPTAIL_LIMIT = 1000  # qdisc/droptail.rs DEFAULT_LIMIT_PACKETS
PACKET_SIZE = 1000  # transport/flow.rs FlowCommon
RED_DEFAULTS = {"limit": 50, "min_th": 5.0, "max_th": 15.0, "max_p": 0.1, "w_q": 0.002, "mean_pktsize": 1000}
DRR_DEFAULTS = {"limit_bytes": 64_000, "quantum": 1000}  # qdisc/drr.rs
SFQ_NS2_DEFAULTS = {"limit": 40, "divisor": 16}  # qdisc/sfq.rs NS2_LIMIT, NS2_BUCKETS
# transport/tcp/mod.rs Profile::Ns2 and TcpOptions::resolve.
NS2_PROFILE = {"window": 20, "initial_window": 1, "min_rto": 0.0, "timer_granularity": 0.1, "initial_rto": 6.0}
DELACK_TIMEOUT = 0.1


@dataclass(frozen=True)
class Link:
    """One direction of a link: named as aqmlab's results name it (`L->R`)."""

    index: int
    name: str
    src: int
    dst: int
    rate_bps: float
    delay_s: float
    qdisc: dict[str, Any]
    qdisc_path: str
    monitored: bool


@dataclass(frozen=True)
class Flow:
    """One flow after `count` expansion, as the core numbers and names them."""

    id: int
    name: str
    type: str
    src: int
    dst: int
    start: float
    packet_size: int
    spec: dict[str, Any]
    path: str


@dataclass
class Export:
    """A scenario as ns-2 runs it: the script, and what its output's numbers refer to."""

    script: str
    nodes: list[str]
    links: list[Link]
    flows: list[Flow]
    warmup: float
    duration: float
    seed: int
    # Where ns-2 runs something other than the scenario says, one sentence each (for stderr).
    notes: list[str] = field(default_factory=list)

    @property
    def monitored(self) -> list[Link]:
        return [link for link in self.links if link.monitored]


def ns2_seed(seed: int) -> int:
    """ns-2's RNG seed for aqmlab's `simulation.seed`: 1 + seed mod (2^31 − 2), never 0 (which
    ns-2 replaces by a seed from the clock)."""
    return 1 + seed % (2**31 - 2)


def draw_starts(scenario: Scenario) -> list[float]:
    """Each expanded flow's start time: `start`, plus for `start_jitter` a uniform draw keyed by
    the seed and the flow's name (the exporter's own draw: the core's stream cannot be read)."""
    seed = scenario.get_or("simulation.seed", 1)
    starts = []
    for spec in scenario.get("flows"):
        for name in _flow_names(spec, len(starts)):
            jitter = seconds(spec.get("start_jitter", 0))
            draw = random.Random(f"aqmlab-ns2/{seed}/{name}").uniform(0.0, jitter) if jitter > 0 else 0.0
            starts.append(seconds(spec.get("start", 0)) + draw)
    return starts


def _flow_names(spec: Mapping[str, Any], first_id: int) -> list[str]:
    """The names the core gives a flow group's flows (`name`, `name[k]`, or `flow<id>`)."""
    count = spec.get("count", 1)
    name = spec.get("name")
    if name is None:
        return [f"flow{first_id + k}" for k in range(count)]
    return [name] if count == 1 else [f"{name}[{k}]" for k in range(count)]


def pinned(scenario: Scenario) -> Scenario:
    """The scenario with every flow group whose start is jittered expanded into single flows
    at the start times `draw_starts` gives, under the same names (a name keys a flow's random
    streams, so nothing else changes): what aqmlab runs when it is compared with ns-2."""
    starts = iter(draw_starts(scenario))
    flows = []
    for spec in scenario.get("flows"):
        names = _flow_names(spec, sum(f.get("count", 1) for f in flows))
        times = [next(starts) for _ in names]
        if seconds(spec.get("start_jitter", 0)) == 0:
            flows.append(spec)
            continue
        for name, start in zip(names, times, strict=True):
            single = {k: v for k, v in spec.items() if k not in ("count", "start_jitter", "name")}
            flows.append(single | {"name": name, "start": start})
    return scenario.with_({"flows": flows})


# --- the network: nodes, links and flows as the core builds them (net/mod.rs) ---


def _network(scenario: Scenario) -> tuple[list[str], list[Link], list[Flow]]:
    topology = scenario.get("topology")
    kind = topology["type"]
    nodes: list[str] = []
    links: list[Link] = []
    flows: list[Flow] = []
    starts = draw_starts(scenario)

    def node(name: str) -> int:
        nodes.append(name)
        return len(nodes) - 1

    def duplex(a: int, b: int, table: Mapping[str, Any], paths: tuple[str, str], monitored: bool) -> None:
        """Links a -> b (`table["qdisc"]`, its field path `paths[0]`) and b -> a (`reverse_qdisc`)."""
        link = paths[0].removesuffix(".qdisc")
        if table.get("rate_changes"):
            raise _unexportable(f"{link}.rate_changes", "the export has no link rate changes (one bandwidth_ per link)")
        if table.get("trace"):
            raise _unexportable(f"{link}.trace", "the export has no capacity traces (one bandwidth_ per link)")
        for src, dst, key, path, watched in (
            (a, b, "qdisc", paths[0], monitored),
            (b, a, "reverse_qdisc", paths[1], False),
        ):
            links.append(
                Link(
                    index=len(links),
                    name=f"{nodes[src]}->{nodes[dst]}",
                    src=src,
                    dst=dst,
                    rate_bps=rate(table["rate"]),
                    delay_s=seconds(table["delay"]),
                    qdisc=dict(table.get(key, {})),
                    qdisc_path=path,
                    monitored=watched,
                )
            )

    def hosts(spec: Mapping[str, Any], flow_id: int, first: int, last: int) -> tuple[int, int]:
        src, dst = node(f"src{flow_id}"), node(f"dst{flow_id}")
        access = topology.get("access_qdisc", {})
        for a, b, delay in (
            (src, first, spec.get("access_delay", topology.get("access_delay", ACCESS_DELAY))),
            (last, dst, spec.get("sink_delay", topology.get("sink_delay", ACCESS_DELAY))),
        ):
            table = {
                "rate": spec.get("access_rate", topology.get("access_rate", ACCESS_RATE)),
                "delay": delay,
                "qdisc": access,
                "reverse_qdisc": access,
            }
            duplex(a, b, table, ("topology.access_qdisc", "topology.access_qdisc"), False)
        return src, dst

    if kind == "dumbbell":
        left, right = node("L"), node("R")
        duplex(left, right, topology["bottleneck"], _paths("topology.bottleneck"), True)
        ends = lambda spec, flow_id: hosts(spec, flow_id, left, right)  # noqa: E731
    elif kind == "parking_lot":
        routers = [node(f"R{i}") for i in range(topology["congested_links"] + 1)]
        for a, b in itertools.pairwise(routers):
            duplex(a, b, topology["link"], _paths("topology.link"), True)

        def ends(spec: Mapping[str, Any], flow_id: int) -> tuple[int, int]:
            hop = spec.get("hop")
            first, last = (routers[0], routers[-1]) if hop is None else (routers[hop], routers[hop + 1])
            return hosts(spec, flow_id, first, last)

    else:
        for name in topology["nodes"]:
            node(name)
        for i, table in enumerate(topology["links"]):
            a, b = nodes.index(table["from"]), nodes.index(table["to"])
            duplex(a, b, table, _paths(f"topology.links[{i}]"), bool(table.get("monitor", False)))
        ends = lambda spec, flow_id: (nodes.index(spec["src"]), nodes.index(spec["dst"]))  # noqa: E731

    for index, spec in enumerate(scenario.get("flows")):
        for name in _flow_names(spec, len(flows)):
            flow_id = len(flows)
            src, dst = ends(spec, flow_id)
            flows.append(
                Flow(
                    id=flow_id,
                    name=name,
                    type=spec["type"],
                    src=src,
                    dst=dst,
                    start=starts[flow_id],
                    packet_size=size(spec.get("packet_size", PACKET_SIZE)),
                    spec=dict(spec),
                    path=f"flows[{index}]",
                )
            )
    return nodes, links, flows


def _paths(link: str) -> tuple[str, str]:
    return f"{link}.qdisc", f"{link}.reverse_qdisc"


# --- Tcl ---


def _num(value: float) -> str:
    """A number as Tcl reads it back exactly (integers without a fraction)."""
    if float(value).is_integer() and abs(value) < 1e15:
        return str(int(value))
    return repr(float(value))


def _bool(value: bool) -> str:
    return "true" if value else "false"


def _word(text: str) -> str:
    """`text` as one Tcl word printed as is: characters other than letters, digits and
    `_.-[]>` become `_` (names end the output's lines, where a space would split them)."""
    return "{" + re.sub(r"[^A-Za-z0-9_.\-\[\]>]", "_", text) + "}"


class _Script:
    def __init__(self) -> None:
        self.lines: list[str] = []

    def add(self, *lines: str) -> None:
        self.lines.extend(lines)

    def section(self, title: str) -> None:
        self.lines += ["", f"# {title}"]

    def settings(self, target: str, values: Iterable[tuple[str, Any, str]]) -> None:
        """`target set var value` lines, each with its reason as a comment."""
        for var, value, why in values:
            shown = (
                _bool(value) if isinstance(value, bool) else _num(value) if isinstance(value, (int, float)) else value
            )
            self.add(f"{target} set {var} {shown}" + (f" ;# {why}" if why else ""))


# --- queues ---


def _unexportable(path: str, why: str) -> ScenarioError:
    return ScenarioError(f"{path}: {why}")


def _droptail(qdisc: Mapping[str, Any], path: str) -> tuple[str, list[tuple[str, Any, str]]]:
    limit, limit_bytes = qdisc.get("limit"), qdisc.get("limit_bytes")
    if limit is not None and limit_bytes is not None:
        raise _unexportable(f"{path}.limit_bytes", "ns-2's DropTail bounds packets or bytes, not both")
    if limit_bytes is not None:
        return "DropTail", [
            ("queue_in_bytes_", True, "the bound in bytes"),
            ("mean_pktsize_", 1, "limit_ in bytes"),
            ("limit_", size(limit_bytes) + 1, f"ours {size(limit_bytes)} B: refused when bytes + size >= limit_"),
            ("drop_front_", False, ""),
        ]
    limit = DEFAULT_DROPTAIL_LIMIT if limit is None else limit
    return "DropTail", [
        ("queue_in_bytes_", False, ""),
        ("limit_", limit + 1, f"ours {limit}: ns-2's DropTail keeps limit_ - 1 waiting"),
        ("drop_front_", False, ""),
    ]


def _red(qdisc: Mapping[str, Any], path: str, notes: list[str]) -> tuple[str, list[tuple[str, Any, str]]]:
    if qdisc.get("profile") == "linux":
        raise _unexportable(f"{path}.profile", 'ns-2 has no Linux RED (sch_red.c): export profile "ns2"')
    if qdisc.get("profile", "floyd93") != "ns2":
        notes.append(f'{path}: ns-2 runs its own RED (red.cc), which aqmlab runs with profile = "ns2"')
    if qdisc.get("fixed_p") is not None:
        raise _unexportable(f"{path}.fixed_p", "ns-2's Queue/RED has no fixed drop probability (RED-PD's P_testFRp_)")
    params = RED_DEFAULTS | {k: v for k, v in qdisc.items() if k in RED_DEFAULTS or k == "limit_bytes"}
    in_bytes = bool(qdisc.get("bytes", False))
    mean = size(params["mean_pktsize"])
    per_packet = mean if in_bytes else 1
    min_th = qdisc.get("min_th", RED_DEFAULTS["min_th"] * per_packet)
    max_th = qdisc.get("max_th", RED_DEFAULTS["max_th"] * per_packet)
    limit, limit_bytes = qdisc.get("limit"), qdisc.get("limit_bytes")
    if in_bytes:
        if limit_bytes is None:
            raise _unexportable(f"{path}.limit", "ns-2's byte-mode RED bounds the queue in bytes: give limit_bytes")
        if limit is not None:
            raise _unexportable(f"{path}.limit", "ns-2's byte-mode RED bounds bytes only (limit_ x mean_pktsize_)")
        if size(limit_bytes) % mean:
            raise _unexportable(
                f"{path}.limit_bytes",
                f"ns-2's byte-mode RED holds limit_ x mean_pktsize_ bytes: give a multiple of {mean}",
            )
        queue_limit = size(limit_bytes) // mean
        why = f"ours {size(limit_bytes)} B: limit_ x mean_pktsize_ bytes"
    else:
        if limit_bytes is not None:
            raise _unexportable(f"{path}.limit_bytes", "ns-2's packet-mode RED bounds packets only: give limit")
        queue_limit = RED_DEFAULTS["limit"] if limit is None else limit
        why = "packets waiting, as ours (red.cc refuses an arrival when qlen >= limit_)"
    return "RED", [
        ("bytes_", in_bytes, "byte mode: p in proportion to size"),
        ("queue_in_bytes_", in_bytes, "average and thresholds in bytes"),
        ("limit_", queue_limit, why),
        ("thresh_", min_th / per_packet, "min_th, in mean packets (not 0: 0 auto-configures)"),
        ("maxthresh_", max_th / per_packet, "max_th (not 0: 0 auto-configures)"),
        ("mean_pktsize_", mean, "idle decay and byte-mode scaling"),
        ("idle_pktsize_", mean, "used only with cautious_ 3"),
        ("q_weight_", float(params["w_q"]), "w_q (not -1: -1 auto-configures)"),
        ("linterm_", 1.0 / float(params["max_p"]), "1/max_p"),
        ("gentle_", bool(qdisc.get("gentle", False)), ""),
        ("wait_", bool(qdisc.get("wait", False)), ""),
        ("setbit_", bool(qdisc.get("ecn", False)), "ecn: mark instead of an early drop"),
        ("use_mark_p_", False, "mark every early drop when setbit_, and drop at avg >= maxthresh_ (not gentle)"),
        ("mark_p_", 0.1, "unused without use_mark_p_"),
        ("drop_tail_", True, "a forced drop takes the arrival"),
        ("drop_front_", False, ""),
        ("drop_rand_", False, ""),
        ("ns1_compat_", False, ""),
        ("doubleq_", False, ""),
        ("summarystats_", False, ""),
        ("adaptive_", 0, "not Adaptive RED: cur_max_p stays 1/linterm_"),
        ("feng_adaptive_", 0, ""),
        ("cautious_", 0, ""),
        ("alpha_", 0.01, "adaptive only"),
        ("beta_", 0.9, "adaptive only"),
        ("interval_", 0.5, "adaptive only"),
        ("targetdelay_", 0.005, "adaptive only (and thresh_ 0)"),
        ("top_", 0.5, "adaptive only"),
        ("bottom_", 0.01, "adaptive only"),
    ]


def _drr(qdisc: Mapping[str, Any], path: str, buckets: int) -> tuple[str, list[tuple[str, Any, str]]]:
    if qdisc.get("limit") is not None:
        raise _unexportable(f"{path}.limit", "ns-2's DRR bounds bytes only (blimit_): give limit_bytes")
    if qdisc.get("pushout", "head") != "head":
        raise _unexportable(f"{path}.pushout", 'ns-2\'s DRR drops from the head of the longest queue: "head"')
    limit_bytes = size(qdisc.get("limit_bytes", DRR_DEFAULTS["limit_bytes"]))
    return "DRR", [
        ("blimit_", limit_bytes, "shared buffer, bytes: the longest queue's head is dropped above it"),
        ("quantum_", size(qdisc.get("quantum", DRR_DEFAULTS["quantum"])), ""),
        ("buckets_", buckets, "no two flows' source nodes share a bucket"),
        ("mask_", 0, "hash on the source node"),
    ]


def _sfq(qdisc: Mapping[str, Any], path: str) -> tuple[str, list[tuple[str, Any, str]]]:
    if qdisc.get("variant", "linux") != "ns2":
        raise _unexportable(
            f"{path}.variant",
            "ns-2's Queue/SFQ is not Linux's SFQ (a packet per turn, its own drop rule): write variant = \"ns2\"",
        )
    return "SFQ", [
        ("maxqueue_", qdisc.get("limit", SFQ_NS2_DEFAULTS["limit"]), "packets in all queues"),
        ("buckets_", qdisc.get("divisor", SFQ_NS2_DEFAULTS["divisor"]), "hashed by source + destination node"),
    ]


def _drr_hash(address: int) -> int:
    """ns-2 drr.cc hash() of a source node address (flat addressing: the node's index), before
    the modulo by `buckets_`: `((i + (i >> 8) + ~(i >> 4)) % ((2 << 23) - 1)) + 1`, C's `%`."""
    k = address + (address >> 8) + ~(address >> 4)
    return int(math.fmod(k, (2 << 23) - 1)) + 1


def _buckets(keys: dict[int, list[int]], path: str, what: str) -> int:
    """The fewest buckets (at least 16, ns-2's default) in which no two flows' hash keys share a
    bucket; `keys` maps each distinct hashed value to the flows it stands for."""
    shared = next((flows for flows in keys.values() if len(flows) > 1), None)
    if shared is not None:
        raise _unexportable(path, f"ns-2 hashes flows {shared[0]} and {shared[1]} to one queue ({what})")
    values = list(keys)
    buckets = max(16, len(values))
    while len({v % buckets for v in values}) < len(values):
        buckets += 1
    return buckets


# --- TCP ---

TCP_AGENTS = {"tahoe": "Agent/TCP", "reno": "Agent/TCP/Reno", "newreno": "Agent/TCP/Newreno", "sack": "Agent/TCP/Sack1"}
# (variant is sack, delayed ACK) -> the sink.
TCP_SINKS = {
    (False, False): "Agent/TCPSink",
    (False, True): "Agent/TCPSink/DelAck",
    (True, False): "Agent/TCPSink/Sack1",
    (True, True): "Agent/TCPSink/Sack1/DelAck",
}
WINDOW_OPTIONS = {"per_window": 0, "per_ack": 1}

# ns-2's one-way TCP as the `ns2` profile reproduces it (ns-2 of 1997–2001,
# transport/tcp/mod.rs and sender.rs): the variables whose ns-2.35 defaults came later, set
# back as the RED-PD authors' validation suite does (tcl/test/test-suite-red-pd.tcl).
NS2_PROFILE_CLASS_SETTINGS: tuple[tuple[str, str, Any, str], ...] = (
    ("Agent/TCP", "syn_", False, "no SYN: the first packet is data (default true from 2001/05/17)"),
    ("Agent/TCP", "delay_growth_", False, "(true from 2001/05/17)"),
    ("Agent/TCP", "singledup_", 0, "no limited transmit (1 from 2001/11/28)"),
    ("Agent/TCP", "LimTransmitFix_", False, ""),
    ("Agent/TCP", "precisionReduce_", False, "integer window halving (true from 2006/01/24)"),
    ("Agent/TCP", "updated_rttvar_", False, "(added 2006/01/21)"),
    ("Agent/TCP", "timerfix_", False, "(true from 2001/05/11)"),
    ("Agent/TCP", "rfc2988_", False, "back-off up to 64 (true from 2002/03/07)"),
    ("Agent/TCP", "maxrto_", 100000, "no practical cap (60 from 2007/03/28)"),
    ("Agent/TCP", "exitFastRetrans_", True, "inflate by dupacks only in fast recovery, as the profile (and the suite)"),
    ("Agent/TCP", "bugfix_ss_", True, "fast retransmit when packet 1 is lost (as the suite runs)"),
    ("Agent/TCP", "bugFix_", True, "one window reduction per window of data"),
    ("Agent/TCP", "useHeaders_", False, "packetSize_ is the packet on the wire, as aqmlab's packet_size"),
    ("Agent/TCP", "timestamps_", False, "RTT from one timed packet per RTT"),
    ("Agent/TCP", "windowInitOption_", 1, "windowInit_ packets"),
    ("Agent/TCP", "max_ssthresh_", 0, "no limited slow start"),
    ("Agent/TCP", "maxburst_", 0, ""),
    ("Agent/TCP", "numdupacks_", 3, ""),
    ("Agent/TCP", "overhead_", 0, ""),
    ("Agent/TCP", "srtt_init_", 0, ""),
    ("Agent/TCP", "rttvar_init_", 12, ""),
    ("Agent/TCP", "T_SRTT_BITS", 3, ""),
    ("Agent/TCP", "T_RTTVAR_BITS", 2, ""),
    ("Agent/TCP", "rttvar_exp_", 2, ""),
    ("Agent/TCP/Newreno", "newreno_changes_", 0, ""),
    ("Agent/TCP/Newreno", "newreno_changes1_", 0, "restart the timer on every partial ACK"),
    ("Agent/TCP/Newreno", "partial_window_deflation_", 0, "(1 from 2002)"),
    ("Agent/TCP/Newreno", "exit_recovery_fix_", 0, ""),
    ("Agent/TCPSink", "packetSize_", 40, "ACKs of 40 bytes, as aqmlab's"),
    ("Agent/TCPSink", "maxSackBlocks_", 3, ""),
    ("Agent/TCPSink", "generateDSacks_", False, ""),
    ("Agent/TCPSink", "RFC2581_immediate_ack_", True, "a gap-filling packet is ACKed at once"),
)


def _tcp_options(flow: Flow) -> dict[str, Any]:
    tcp = flow.spec.get("tcp", {})
    path = f"{flow.path}.tcp"
    if tcp.get("profile", "rfc") != "ns2":
        raise _unexportable(
            f"{path}.profile",
            'ns-2\'s TCP agents are the "ns2" profile (RFC 6298 timing has no ns-2 counterpart): write profile = "ns2"',
        )
    if tcp.get("tiny_window", False):
        raise _unexportable(f"{path}.tiny_window", "ns-2 has no FRED §11.3 tiny-window rule (singledup_ is RFC 3042's)")
    avoidance = tcp.get("congestion_avoidance", "per_ack")
    if avoidance not in WINDOW_OPTIONS:
        raise _unexportable(f"{path}.congestion_avoidance", f"ns-2 has no {avoidance!r} (windowOption_ 0 or 1)")
    ssthresh = tcp.get("initial_ssthresh")
    if ssthresh is not None and not float(ssthresh).is_integer():
        raise _unexportable(f"{path}.initial_ssthresh", "ns-2's ssthresh_ is a whole number of packets")
    workload = flow.spec.get("workload", {"type": "infinite"})
    if workload.get("type", "infinite") not in ("infinite", "transfer"):
        raise _unexportable(
            f"{flow.path}.workload.type", f"the export has no {workload['type']!r} (infinite, transfer)"
        )
    window = tcp.get("window", NS2_PROFILE["window"])
    return {
        "variant": tcp.get("variant", "newreno"),
        "delayed_ack": bool(tcp.get("delayed_ack", False)),
        "window": window,
        "initial_window": tcp.get("initial_window", NS2_PROFILE["initial_window"]),
        "window_option": WINDOW_OPTIONS[avoidance],
        "initial_ssthresh": None if ssthresh is None else int(ssthresh),
        "delack_timeout": seconds(tcp.get("delack_timeout", DELACK_TIMEOUT)),
        "min_rto": seconds(tcp.get("min_rto", NS2_PROFILE["min_rto"])),
        "tick": seconds(tcp.get("timer_granularity", NS2_PROFILE["timer_granularity"])),
        "initial_rto": seconds(tcp.get("initial_rto", NS2_PROFILE["initial_rto"])),
        "ecn": bool(tcp.get("ecn", False)),
        "packets": workload.get("packets") if workload.get("type") == "transfer" else None,
    }


# --- the script ---


def export(scenario: Scenario) -> Export:
    """The ns-2 script for `scenario` (validated first); `ScenarioError` naming the first part
    ns-2 cannot express."""
    scenario.validate()
    nodes, links, flows = _network(scenario)
    for flow in flows:
        if flow.type not in ("tcp", "cbr", "onoff"):
            raise _unexportable(f"{flow.path}.type", f"the export has no {flow.type!r} flows (tcp, cbr, onoff)")
        if flow.spec.get("pauses"):
            raise _unexportable(f"{flow.path}.pauses", "the export has no pauses (one start and stop per application)")
    duration = seconds(scenario.get("simulation.duration"))
    warmup = seconds(scenario.get_or("simulation.warmup", 0))
    seed = scenario.get_or("simulation.seed", 1)
    notes: list[str] = []
    script = _Script()
    source = scenario.source.name if scenario.source else scenario.name or "a scenario"
    script.add(
        f"# {source} as ns-2.35 runs it, written by aqmlab {__version__} (`aqmlab export ns2`).",
        f"# Run: ns THIS.tcl. It prints its measurements as lines starting with {MARK} (docs/ns2.md).",
        "set ns [new Simulator]",
    )
    script.section(f"Random numbers: aqmlab's seed {seed}")
    script.add(f"ns-random {ns2_seed(seed)}", f"$defaultRNG seed {ns2_seed(seed)}")
    if any(f.type == "tcp" for f in flows):
        script.section("TCP: ns-2's one-way agents as aqmlab's profile \"ns2\" (ns-2 of 1997-2001)")
        for target, var, value, why in NS2_PROFILE_CLASS_SETTINGS:
            script.settings(target, [(var, value, why)])
    script.section("Nodes (ns-2 node i is aqmlab's node i)")
    for i, name in enumerate(nodes):
        script.add(f"set n({i}) [$ns node] ;# {name}")
    _links(script, nodes, links, flows, notes)
    _flows(script, flows)
    _monitors(script, links, flows, warmup, duration)
    script.add(
        "",
        "# ns-2's own time in the event loop (`aqmlab bench --ns2` reads it)",
        "set engine_start [clock microseconds]",
        "$ns run",
        f'puts "{MARK} engine [format %.6f [expr {{([clock microseconds] - $engine_start) / 1e6}}]]"',
    )
    return Export("\n".join(script.lines) + "\n", nodes, links, flows, warmup, duration, seed, notes)


def _links(script: _Script, nodes: list[str], links: list[Link], flows: list[Flow], notes: list[str]) -> None:
    script.section("Links: one simplex link per direction, each with its own queue (rate b/s, delay s)")
    crossing: dict[int, list[tuple[Flow, bool]]] = {}  # the routes, worked out for the first DRR
    for link in links:
        kind = link.qdisc.get("type", "droptail")
        if kind == "drr" and not crossing:
            crossing = _crossing(nodes, links, flows)
        if kind == "droptail":
            ns2_type, settings = _droptail(link.qdisc, link.qdisc_path)
        elif kind == "red":
            ns2_type, settings = _red(link.qdisc, link.qdisc_path, notes)
        elif kind == "drr":
            # ns-2 hashes a packet by its source node: a flow's data by its source, its ACKs by its sink.
            keys = _keys((_drr_hash(f.src if data else f.dst), f.id) for f, data in crossing[link.index])
            ns2_type, settings = _drr(link.qdisc, link.qdisc_path, _buckets(keys, link.qdisc_path, "source node"))
        elif kind == "sfq":
            ns2_type, settings = _sfq(link.qdisc, link.qdisc_path)
        elif kind == "red_pd":
            # red-pd.cc is only the pre-filter; the identification engine is the authors' OTcl
            # (tcl/ex/red-pd/monitoring.tcl), which ns-2's library does not hold (ns2/redpd_suite.py).
            raise _unexportable(
                f"{link.qdisc_path}.type",
                "the export has no 'red_pd': ns-2's RED-PD engine is the authors' OTcl, not part of ns-2's"
                " library; `aqmlab validate ns2` runs ns-2's RED-PD suite from a source tree (NS2_SRC)",
            )
        else:
            raise _unexportable(f"{link.qdisc_path}.type", f"the export has no {kind!r} (droptail, red, drr, sfq)")
        a, b = f"$n({link.src})", f"$n({link.dst})"
        script.add(f"$ns simplex-link {a} {b} {_num(link.rate_bps)} {_num(link.delay_s)} {ns2_type} ;# {link.name}")
        script.add(f"set q({link.index}) [[$ns link {a} {b}] queue]")
        script.settings(f"$q({link.index})", settings)


def _keys(pairs: Iterable[tuple[int, int]]) -> dict[int, list[int]]:
    """Hash key -> the flows whose packets it stands for, from (key, flow) pairs."""
    keys: dict[int, list[int]] = {}
    for key, flow in pairs:
        if flow not in keys.setdefault(key, []):
            keys[key].append(flow)
    return keys


def _crossing(nodes: list[str], links: list[Link], flows: list[Flow]) -> dict[int, list[tuple[Flow, bool]]]:
    """Per link, the flows whose packets cross it: (flow, True) for its data, (flow, False) for
    its ACKs, on the routes the core takes (hop-count shortest paths, a breadth-first search
    following each node's links in link order; net/mod.rs `Router`)."""
    outgoing: list[list[Link]] = [[] for _ in nodes]
    for link in links:
        outgoing[link.src].append(link)

    def route(src: int, dst: int) -> list[Link]:
        via: dict[int, Link] = {}
        queue = deque([src])
        seen = {src}
        while queue:
            node = queue.popleft()
            for link in outgoing[node]:
                if link.dst not in seen:
                    seen.add(link.dst)
                    via[link.dst] = link
                    queue.append(link.dst)
        path = []
        while dst in via:
            path.append(via[dst])
            dst = via[dst].src
        return path

    crossing: dict[int, list[tuple[Flow, bool]]] = {link.index: [] for link in links}
    for f in flows:
        for data, (a, b) in ((True, (f.src, f.dst)), (False, (f.dst, f.src))):
            for link in route(a, b):
                crossing[link.index].append((f, data))
    return crossing


def _flows(script: _Script, flows: list[Flow]) -> None:
    script.section("Flows (fid_ is aqmlab's flow id)")
    for f in flows:
        script.add(f"# flow {f.id}: {f.name} ({f.type}), {f.path}")
        src, dst = f"$n({f.src})", f"$n({f.dst})"
        stop = f.spec.get("stop")
        if f.type == "tcp":
            tcp = _tcp_options(f)
            script.add(f"set src({f.id}) [new {TCP_AGENTS[tcp['variant']]}]")
            script.settings(
                f"$src({f.id})",
                [
                    ("fid_", f.id, ""),
                    ("packetSize_", f.packet_size, "bytes on the wire"),
                    ("window_", tcp["window"], ""),
                    ("windowInit_", tcp["initial_window"], ""),
                    ("windowOption_", tcp["window_option"], ""),
                    ("tcpTick_", tcp["tick"], ""),
                    ("rtxcur_init_", tcp["initial_rto"], ""),
                    ("minrto_", tcp["min_rto"], ""),
                    ("ecn_", int(tcp["ecn"]), ""),
                ],
            )
            sink = TCP_SINKS[(tcp["variant"] == "sack", tcp["delayed_ack"])]
            script.add(f"set dst({f.id}) [new {sink}]", f"$dst({f.id}) set fid_ {f.id}")
            if tcp["delayed_ack"]:
                script.add(f"$dst({f.id}) set interval_ {_num(tcp['delack_timeout'])}")
            script.add(
                f"$ns attach-agent {src} $src({f.id})",
                f"$ns attach-agent {dst} $dst({f.id})",
                f"$ns connect $src({f.id}) $dst({f.id})",
                f"set app({f.id}) [new Application/FTP]",
                f"$app({f.id}) attach-agent $src({f.id})",
            )
            if tcp["initial_ssthresh"] is not None:
                script.add(f'$ns at 0 "$src({f.id}) set ssthresh_ {tcp["initial_ssthresh"]}"')
            begin = "start" if tcp["packets"] is None else f"produce {tcp['packets']}"
            script.add(f'$ns at {_num(f.start)} "$app({f.id}) {begin}"')
            if tcp["packets"] is not None:
                # tcp.cc calls `done` once the last packet is ACKed (highest_ack_ >= curseq_ - 1):
                # the transfer's completion time, as aqmlab's Results.transfers.
                script.add(f'$src({f.id}) proc done {{}} {{ puts "{MARK} done {f.id} [[Simulator instance] now]" }}')
        else:
            script.add(
                f"set src({f.id}) [new Agent/UDP]",
                f"$src({f.id}) set fid_ {f.id}",
                f"$src({f.id}) set packetSize_ {f.packet_size}",
                f"set dst({f.id}) [new Agent/LossMonitor]",
                f"$ns attach-agent {src} $src({f.id})",
                f"$ns attach-agent {dst} $dst({f.id})",
                f"$ns connect $src({f.id}) $dst({f.id})",
            )
            _udp_source(script, f)
            script.add(f'$ns at {_num(f.start)} "$app({f.id}) start"')
        if stop is not None:
            script.add(f'$ns at {_num(seconds(stop))} "$app({f.id}) stop"')


def _udp_source(script: _Script, f: Flow) -> None:
    if f.type == "cbr":
        script.add(f"set app({f.id}) [new Application/Traffic/CBR]")
        script.settings(
            f"$app({f.id})",
            [
                ("packetSize_", f.packet_size, ""),
                ("rate_", rate(f.spec["rate"]), "b/s on the wire"),
                ("random_", int(bool(f.spec.get("jitter", False))), "jitter: gaps uniform in [0.5, 1.5) x the gap"),
                ("maxpkts_", 268435456, ""),
            ],
        )
        for change in f.spec.get("rate_changes", []):
            script.add(f'$ns at {_num(seconds(change["at"]))} "$app({f.id}) set rate_ {_num(rate(change["rate"]))}"')
    else:
        # ns-2 draws a burst's packet count (mean on_time / gap) where aqmlab draws its length.
        script.add(f"set app({f.id}) [new Application/Traffic/Exponential]")
        script.settings(
            f"$app({f.id})",
            [
                ("packetSize_", f.packet_size, ""),
                ("rate_", rate(f.spec["rate"]), "the ON rate"),
                ("burst_time_", seconds(f.spec["on_time"]), "mean ON period"),
                ("idle_time_", seconds(f.spec["off_time"]), "mean OFF period"),
            ],
        )
    script.add(f"$app({f.id}) attach-agent $src({f.id})")


def _monitors(script: _Script, links: list[Link], flows: list[Flow], warmup: float, duration: float) -> None:
    monitored = [link for link in links if link.monitored]
    script.section("Measurement: a flow monitor on each monitored link; the sinks' in-order bytes")
    for link in monitored:
        script.add(
            f"set fmon({link.index}) [$ns makeflowmon Fid]",
            f"$ns attach-fmon [$ns link $n({link.src}) $n({link.dst})] $fmon({link.index})",
        )
    names = " ".join(f"{f.id} {_word(f.name)}" for f in flows)
    link_names = " ".join(f"{link.index} {_word(link.name)}" for link in monitored)
    counters = "parrivals_ barrivals_ pdepartures_ bdepartures_ pdrops_ bdrops_"
    script.add(
        f"array set flow_name {{{names}}}",
        f"array set link_name {{{link_names}}}",
        "proc counters {object} {",
        "    set values {}",
        f"    foreach var {{{counters}}} {{ lappend values [$object set $var] }}",
        "    return [join $values]",
        "}",
        "proc record {label} {",
        "    global ns src dst fmon flow_name link_name",
        f'    puts "{MARK} time $label [$ns now]"',
        "    foreach id [lsort -integer [array names dst]] {",
        "        set timeouts [expr {[catch {$src($id) set nrexmit_} n] ? 0 : $n}]",
        "        set packets [expr {[catch {$dst($id) set npkts_} n] ? -1 : $n}]",
        f'        puts "{MARK} flow $label $id [$dst($id) set bytes_] $packets $timeouts $flow_name($id)"',
        "    }",
        "    foreach l [lsort -integer [array names fmon]] {",
        f'        puts "{MARK} link $label $l [counters $fmon($l)] $link_name($l)"',
        "        foreach f [$fmon($l) flows] {",
        f'            puts "{MARK} linkflow $label $l [$f set flowid_] [counters $f]"',
        "        }",
        "    }",
        "}",
        f'puts "{MARK} window {_num(warmup)} {_num(duration)} [ns-version]"',
        f'$ns at {_num(warmup)} "record start"',
        f'$ns at {_num(duration)} "record end; $ns halt"',
    )
