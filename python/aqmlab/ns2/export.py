"""An aqmlab scenario as an ns-2.35 Tcl script (`aqmlab export ns2 FILE`).

The script builds the same network (one simplex link per direction, each with its own queue),
the same flows and the same measurement window, and prints its measurements as lines starting
with `aqmlab-ns2` (`run.parse_output` reads them back): at the start of the window and at the
end, each flow's in-order delivered bytes (TCP sink `bytes_`, UDP `LossMonitor`) and, for TCP,
its timeouts (`nrexmit_`); each monitored link's arrivals, departures and drops, in all and per
flow (an ns-2 flow monitor, `makeflowmon Fid`).

What each part becomes, and why, is docs/ns2.md's table: drop-tail, RED, DRR and SFQ (its ns2
variant) become ns-2's queues with every parameter written out, TCP ns-2's one-way agents as the
`ns2` profile reproduces them (`fixed_settings.py`: what the export sets whatever the scenario).

The network, the flows and every default come from the core (`Scenario.resolved`): this module
only writes them as Tcl. A part ns-2 cannot express raises `ScenarioError` naming its field path,
as the core does.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, fields
from typing import Any

from .. import __version__
from .._core import ScenarioError
from ..scenario import Scenario
from . import drr_hash
from .fixed_settings import (
    NS2_PROFILE_CLASS_SETTINGS,
    RED_FIXED,
    TCP_AGENTS,
    TCP_SINKS,
    TFRC_FIXED,
    TFRC_SINK_FIXED,
    WINDOW_OPTIONS,
)

# Lines of the script's output that carry measurements start with this.
MARK = "aqmlab-ns2"


@dataclass(frozen=True)
class Link:
    """One direction of a link: named as aqmlab's results name it (`L->R`)."""

    index: int
    name: str
    src: int
    dst: int
    rate_bps: float
    delay_s: float
    # The core's resolved table: `type` and every parameter with its default.
    qdisc: dict[str, Any]
    qdisc_path: str
    monitored: bool
    # Its capacity follows a trace (refused: ns-2 has one bandwidth_ per link).
    traced: bool


@dataclass(frozen=True)
class Flow:
    """One flow after `count` expansion, as the core numbers, names and starts them."""

    id: int
    name: str
    type: str
    src: int
    dst: int
    # The links its data and its ACKs cross (link indices).
    route: list[int]
    reverse_route: list[int]
    start: float
    stop: float | None
    packet_size: int
    # Its type's settings with the core's defaults (tcp: `tcp` and `workload`), base units.
    settings: dict[str, Any]
    path: str
    # It pauses (refused: ns-2's applications start and stop once).
    paused: bool


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


# --- the network: nodes, links and flows as the core resolves them (net/resolved.rs) ---


def _network(resolved: Mapping[str, Any]) -> tuple[list[Link], list[Flow]]:
    for link in resolved["links"]:
        table = link["qdisc_path"].rpartition(".")[0]
        if link["rate_changes"]:
            raise _unexportable(
                f"{table}.rate_changes", "the export has no link rate changes (one bandwidth_ per link)"
            )
        if link["traced"]:
            raise _unexportable(f"{table}.trace", "the export has no capacity traces (one bandwidth_ per link)")
    renamed = {"src": "from", "dst": "to", "rate_bps": "rate", "delay_s": "delay"}
    links = [_read(Link, link, renamed) for link in resolved["links"]]
    return links, [_read(Flow, flow) for flow in resolved["flows"]]


def _read(record: type, table: Mapping[str, Any], renamed: Mapping[str, str] | None = None) -> Any:
    """A `record` (Link, Flow) of a resolved scenario's table: each field from its key, or `renamed`'s."""
    return record(**{f.name: table[(renamed or {}).get(f.name, f.name)] for f in fields(record)})


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
    limit, limit_bytes = qdisc["limit"], qdisc["limit_bytes"]
    if limit is not None and limit_bytes is not None:
        raise _unexportable(f"{path}.limit_bytes", "ns-2's DropTail bounds packets or bytes, not both")
    if limit_bytes is not None:
        return "DropTail", [
            ("queue_in_bytes_", True, "the bound in bytes"),
            ("mean_pktsize_", 1, "limit_ in bytes"),
            ("limit_", limit_bytes + 1, f"ours {limit_bytes} B: refused when bytes + size >= limit_"),
            ("drop_front_", False, ""),
        ]
    return "DropTail", [
        ("queue_in_bytes_", False, ""),
        ("limit_", limit + 1, f"ours {limit}: ns-2's DropTail keeps limit_ - 1 waiting"),
        ("drop_front_", False, ""),
    ]


def _red(qdisc: Mapping[str, Any], path: str, notes: list[str]) -> tuple[str, list[tuple[str, Any, str]]]:
    if qdisc["profile"] == "linux":
        raise _unexportable(f"{path}.profile", 'ns-2 has no Linux RED (sch_red.c): export profile "ns2"')
    if qdisc["profile"] != "ns2":
        notes.append(f'{path}: ns-2 runs its own RED (red.cc), which aqmlab runs with profile = "ns2"')
    if qdisc["mark_forced"]:
        raise _unexportable(f"{path}.mark_forced", "ns-2's Queue/RED drops in its forced region (no forced marks)")
    if qdisc["fixed_p"] is not None:
        raise _unexportable(f"{path}.fixed_p", "ns-2's Queue/RED has no fixed drop probability (RED-PD's P_testFRp_)")
    in_bytes, mean = qdisc["bytes"], qdisc["mean_pktsize"]
    per_packet = mean if in_bytes else 1
    # Without limit or limit_bytes the core's limit is its default: byte mode then refuses it.
    limit, limit_bytes = qdisc["limit"], qdisc["limit_bytes"]
    if in_bytes:
        if limit_bytes is None:
            raise _unexportable(f"{path}.limit", "ns-2's byte-mode RED bounds the queue in bytes: give limit_bytes")
        if limit is not None:
            raise _unexportable(f"{path}.limit", "ns-2's byte-mode RED bounds bytes only (limit_ x mean_pktsize_)")
        if limit_bytes % mean:
            raise _unexportable(
                f"{path}.limit_bytes",
                f"ns-2's byte-mode RED holds limit_ x mean_pktsize_ bytes: give a multiple of {mean}",
            )
        queue_limit = limit_bytes // mean
        why = f"ours {limit_bytes} B: limit_ x mean_pktsize_ bytes"
    else:
        if limit_bytes is not None:
            raise _unexportable(f"{path}.limit_bytes", "ns-2's packet-mode RED bounds packets only: give limit")
        queue_limit = limit
        why = "packets waiting, as ours (red.cc refuses an arrival when qlen >= limit_)"
    return "RED", [
        ("bytes_", in_bytes, "byte mode: p in proportion to size"),
        ("queue_in_bytes_", in_bytes, "average and thresholds in bytes"),
        ("limit_", queue_limit, why),
        ("thresh_", qdisc["min_th"] / per_packet, "min_th, in mean packets (not 0: 0 auto-configures)"),
        ("maxthresh_", qdisc["max_th"] / per_packet, "max_th (not 0: 0 auto-configures)"),
        ("mean_pktsize_", mean, "idle decay and byte-mode scaling"),
        ("idle_pktsize_", mean, "used only with cautious_ 3"),
        ("q_weight_", qdisc["w_q"], "w_q (not -1: -1 auto-configures)"),
        ("linterm_", 1.0 / qdisc["max_p"], "1/max_p"),
        ("gentle_", qdisc["gentle"], ""),
        ("wait_", qdisc["wait"], ""),
        ("setbit_", qdisc["ecn"], "ecn: mark instead of an early drop"),
        *RED_FIXED,
    ]


def _drr(qdisc: Mapping[str, Any], path: str, buckets: int, notes: list[str]) -> tuple[str, list[tuple[str, Any, str]]]:
    if qdisc["profile"] != "ns2":
        notes.append(f'{path}: ns-2 runs its own DRR (drr.cc), which aqmlab runs with profile = "ns2"')
    if qdisc["limit"] is not None:
        raise _unexportable(f"{path}.limit", "ns-2's DRR bounds bytes only (blimit_): give limit_bytes")
    if qdisc["pushout"] != "head":
        raise _unexportable(f"{path}.pushout", 'ns-2\'s DRR drops from the head of the longest queue: "head"')
    return "DRR", [
        ("blimit_", qdisc["limit_bytes"], "shared buffer, bytes: the longest queue's head is dropped above it"),
        ("quantum_", qdisc["quantum"], ""),
        ("buckets_", buckets, "no two flows' source nodes share a bucket"),
        ("mask_", 0, "hash on the source node"),
    ]


def _sfq(qdisc: Mapping[str, Any], path: str) -> tuple[str, list[tuple[str, Any, str]]]:
    if qdisc["variant"] != "ns2":
        raise _unexportable(
            f"{path}.variant",
            "ns-2's Queue/SFQ is not Linux's SFQ (a packet per turn, its own drop rule): write variant = \"ns2\"",
        )
    return "SFQ", [
        ("maxqueue_", qdisc["limit"], "packets in all queues"),
        ("buckets_", qdisc["divisor"], "hashed by source + destination node"),
    ]


# --- TCP ---


def _tcp_options(flow: Flow) -> dict[str, Any]:
    """The flow's resolved `tcp` table, once it is one ns-2 can run."""
    tcp, workload = flow.settings["tcp"], flow.settings["workload"]
    path = f"{flow.path}.tcp"
    if tcp["profile"] != "ns2":
        raise _unexportable(
            f"{path}.profile",
            'ns-2\'s TCP agents are the "ns2" profile (RFC 6298 timing has no ns-2 counterpart): write profile = "ns2"',
        )
    if tcp["tiny_window"]:
        raise _unexportable(f"{path}.tiny_window", "ns-2 has no FRED §11.3 tiny-window rule (singledup_ is RFC 3042's)")
    if tcp["congestion_avoidance"] not in WINDOW_OPTIONS:
        raise _unexportable(
            f"{path}.congestion_avoidance", f"ns-2 has no {tcp['congestion_avoidance']!r} (windowOption_ 0 or 1)"
        )
    if not float(tcp["initial_ssthresh"]).is_integer():
        raise _unexportable(f"{path}.initial_ssthresh", "ns-2's ssthresh_ is a whole number of packets")
    if tcp["ecn"] == "ect1":
        raise _unexportable(f"{path}.ecn", "ns-2's agents set ECT(0) only (ecn_ 1): write ecn = true")
    if tcp.get("ecn_feedback", "classic") != "classic":
        raise _unexportable(f"{path}.ecn_feedback", 'ns-2\'s sinks echo ECE only (RFC 3168): write "classic"')
    if workload["type"] not in ("infinite", "transfer"):
        raise _unexportable(
            f"{flow.path}.workload.type", f"the export has no {workload['type']!r} (infinite, transfer)"
        )
    return tcp


# --- the script ---


def export(scenario: Scenario) -> Export:
    """The ns-2 script for `scenario` (validated first); `ScenarioError` naming the first part
    ns-2 cannot express."""
    resolved = scenario.resolved()
    nodes = resolved["nodes"]
    links, flows = _network(resolved)
    for flow in flows:
        if flow.type not in ("tcp", "cbr", "onoff", "tfrc"):
            raise _unexportable(f"{flow.path}.type", f"the export has no {flow.type!r} flows (tcp, cbr, onoff, tfrc)")
        if flow.paused:
            raise _unexportable(f"{flow.path}.pauses", "the export has no pauses (one start and stop per application)")
    simulation = resolved["simulation"]
    duration, warmup, seed = simulation["duration"], simulation["warmup"], simulation["seed"]
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
    _links(script, links, flows, notes)
    _flows(script, flows, notes)
    _monitors(script, links, flows, warmup, duration)
    script.add(
        "",
        "# ns-2's own time in the event loop (`aqmlab bench --ns2` reads it)",
        "set engine_start [clock microseconds]",
        "$ns run",
        f'puts "{MARK} engine [format %.6f [expr {{([clock microseconds] - $engine_start) / 1e6}}]]"',
    )
    return Export("\n".join(script.lines) + "\n", nodes, links, flows, warmup, duration, seed, notes)


def _links(script: _Script, links: list[Link], flows: list[Flow], notes: list[str]) -> None:
    script.section("Links: one simplex link per direction, each with its own queue (rate b/s, delay s)")
    for link in links:
        kind = link.qdisc["type"]
        if kind == "droptail":
            ns2_type, settings = _droptail(link.qdisc, link.qdisc_path)
        elif kind == "red":
            ns2_type, settings = _red(link.qdisc, link.qdisc_path, notes)
        elif kind == "drr":
            keys = drr_hash.keys(link.index, flows)
            ns2_type, settings = _drr(link.qdisc, link.qdisc_path, drr_hash.buckets(keys, link.qdisc_path), notes)
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
        elif kind == "dualpi2":
            raise _unexportable(
                f"{link.qdisc_path}.type", "the export has no 'dualpi2': ns-2 has no DualQ Coupled AQM (RFC 9332)"
            )
        else:
            raise _unexportable(f"{link.qdisc_path}.type", f"the export has no {kind!r} (droptail, red, drr, sfq)")
        a, b = f"$n({link.src})", f"$n({link.dst})"
        script.add(f"$ns simplex-link {a} {b} {_num(link.rate_bps)} {_num(link.delay_s)} {ns2_type} ;# {link.name}")
        script.add(f"set q({link.index}) [[$ns link {a} {b}] queue]")
        script.settings(f"$q({link.index})", settings)


def _flows(script: _Script, flows: list[Flow], notes: list[str]) -> None:
    script.section("Flows (fid_ is aqmlab's flow id)")
    for f in flows:
        script.add(f"# flow {f.id}: {f.name} ({f.type}), {f.path}")
        if f.type == "tcp":
            _tcp_flow(script, f)
        elif f.type == "tfrc":
            _tfrc_flow(script, f, notes)
        else:
            script.add(
                f"set src({f.id}) [new Agent/UDP]",
                f"$src({f.id}) set fid_ {f.id}",
                f"$src({f.id}) set packetSize_ {f.packet_size}",
                f"set dst({f.id}) [new Agent/LossMonitor]",
            )
            _attach(script, f)
            _udp_source(script, f)
            script.add(f'$ns at {_num(f.start)} "$app({f.id}) start"')
        if f.stop is not None:
            script.add(f'$ns at {_num(f.stop)} "$app({f.id}) stop"')


def _attach(script: _Script, f: Flow) -> None:
    script.add(
        f"$ns attach-agent $n({f.src}) $src({f.id})",
        f"$ns attach-agent $n({f.dst}) $dst({f.id})",
        f"$ns connect $src({f.id}) $dst({f.id})",
    )


def _tcp_flow(script: _Script, f: Flow) -> None:
    tcp = _tcp_options(f)
    packets = f.settings["workload"].get("packets")
    script.add(f"set src({f.id}) [new {TCP_AGENTS[tcp['variant']]}]")
    script.settings(
        f"$src({f.id})",
        [
            ("fid_", f.id, ""),
            ("packetSize_", f.packet_size, "bytes on the wire"),
            ("window_", tcp["window"], ""),
            ("windowInit_", tcp["initial_window"], ""),
            ("windowOption_", WINDOW_OPTIONS[tcp["congestion_avoidance"]], ""),
            ("tcpTick_", tcp["timer_granularity"], ""),
            ("rtxcur_init_", tcp["initial_rto"], ""),
            ("minrto_", tcp["min_rto"], ""),
            ("ecn_", int(tcp["ecn"] == "ect0"), ""),
        ],
    )
    sink = TCP_SINKS[(tcp["variant"] == "sack", tcp["delayed_ack"])]
    script.add(f"set dst({f.id}) [new {sink}]", f"$dst({f.id}) set fid_ {f.id}")
    if tcp["delayed_ack"]:
        script.add(f"$dst({f.id}) set interval_ {_num(tcp['delack_timeout'])}")
    _attach(script, f)
    script.add(f"set app({f.id}) [new Application/FTP]", f"$app({f.id}) attach-agent $src({f.id})")
    # ns-2 starts ssthresh_ at window_ (tcp.cc reset()), as the core's default is the window.
    if tcp["initial_ssthresh"] != tcp["window"]:
        script.add(f'$ns at 0 "$src({f.id}) set ssthresh_ {int(tcp["initial_ssthresh"])}"')
    begin = "start" if packets is None else f"produce {packets}"
    script.add(f'$ns at {_num(f.start)} "$app({f.id}) {begin}"')
    if packets is not None:
        # tcp.cc calls `done` once the last packet is ACKed (highest_ack_ >= curseq_ - 1):
        # the transfer's completion time, as aqmlab's Results.transfers.
        script.add(f'$src({f.id}) proc done {{}} {{ puts "{MARK} done {f.id} [[Simulator instance] now]" }}')


def _tfrc_flow(script: _Script, f: Flow, notes: list[str]) -> None:
    tfrc = f.settings
    if tfrc["profile"] != "ns2":
        notes.append(
            f'{f.path}: ns-2 runs its own TFRC (tfrc.cc, tfrc-sink.cc), which aqmlab runs with profile = "ns2"'
        )
    script.add(f"set src({f.id}) [new Agent/TFRC]")
    script.settings(
        f"$src({f.id})",
        [
            ("fid_", f.id, ""),
            ("packetSize_", f.packet_size, "bytes on the wire"),
            ("useHeaders_", False, "no 32-byte header added: packetSize_ is the packet, as aqmlab's packet_size"),
            *TFRC_FIXED,
        ],
    )
    # The rfc5348 profile leaves them unset: ns-2 then runs its own defaults (the note above).
    if tfrc["initial_rate"] is not None:
        script.settings(f"$src({f.id})", [("InitRate_", tfrc["initial_rate"] / 8, "initial_rate, bytes/s")])
    if tfrc["rto_tick"] is not None:
        script.settings(f"$src({f.id})", [("tcp_tick_", tfrc["rto_tick"], "rto_tick: t_RTO in TCP's ticks")])
    script.add(f"set dst({f.id}) [new Agent/TFRCSink]", f"$dst({f.id}) set fid_ {f.id}")
    script.settings(
        f"$dst({f.id})", [*TFRC_SINK_FIXED, ("discount_", int(tfrc["history_discounting"]), "history_discounting")]
    )
    _attach(script, f)
    # The agent is its own source (SndrType_ 0: an infinite sender): `start` and `stop` go to it.
    script.add(f"set app({f.id}) $src({f.id})", f'$ns at {_num(f.start)} "$app({f.id}) start"')


def _udp_source(script: _Script, f: Flow) -> None:
    if f.settings.get("ecn", "not-ect") != "not-ect":
        raise _unexportable(f"{f.path}.ecn", "ns-2's UDP agent sends no ECN codepoint")
    if f.type == "cbr":
        script.add(f"set app({f.id}) [new Application/Traffic/CBR]")
        script.settings(
            f"$app({f.id})",
            [
                ("packetSize_", f.packet_size, ""),
                ("rate_", f.settings["rate"], "b/s on the wire"),
                ("random_", int(f.settings["jitter"]), "jitter: gaps uniform in [0.5, 1.5) x the gap"),
                ("maxpkts_", 268435456, ""),
            ],
        )
        for change in f.settings["rate_changes"]:
            script.add(f'$ns at {_num(change["at"])} "$app({f.id}) set rate_ {_num(change["rate"])}"')
    else:
        # ns-2 draws a burst's packet count (mean on_time / gap) where aqmlab draws its length.
        script.add(f"set app({f.id}) [new Application/Traffic/Exponential]")
        script.settings(
            f"$app({f.id})",
            [
                ("packetSize_", f.packet_size, ""),
                ("rate_", f.settings["rate"], "the ON rate"),
                ("burst_time_", f.settings["on_time"], "mean ON period"),
                ("idle_time_", f.settings["off_time"], "mean OFF period"),
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
