"""The tests of RFC 7928 ("Characterization Guidelines for Active Queue Management", 2016), one
scenario family each: its section, what it tests, what it varies, its settings and where each
comes from, its cases, and the figure of merit the summary shows.

Every test runs on the network of network.py (the ns-3 AQM Evaluation Suite's: 1 Mbit/s, 48 ms,
45 packets, NewReno IW3) unless it says otherwise; where the RFC leaves a value open, the
suite's choice is taken and cited (its examples, `src/aqm-eval-suite/examples/*.cc`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from .network import (
    ACCESS_RATE,
    BOTTLENECK_DELAY,
    BUFFER_PACKETS,
    DURATION_S,
    NEWRENO,
    QUICK_DURATION_S,
    SAMPLES_PER_RTT,
    bulk_tcp,
    dumbbell,
    parking_lot,
    scenario,
    two_way,
)


@dataclass(frozen=True)
class Case:
    """One scenario of a test: its name (unique within the test), what it sets, and how it is built."""

    name: str
    label: str
    flows: tuple[dict[str, Any], ...]
    # The network's dumbbell with these changes to its bottleneck and access links ...
    bottleneck: Mapping[str, Any] = field(default_factory=dict)
    access_rate: str = ACCESS_RATE
    # ... or another topology, built around the mechanism's qdisc table.
    topology: Callable[[dict[str, Any]], dict[str, Any]] | None = None
    # The link whose queue the metrics are of, as the results name it.
    link: str = "L->R"
    buffer_packets: int = BUFFER_PACKETS
    # The smallest base RTT of its flows (s): the sampling interval is K times it (RFC 7928 §2.7).
    min_rtt_s: float = 0.1
    # The mechanism is asked to mark instead of drop (§4.5).
    ecn: bool = False
    # Its long-lived TCPs' loss synchronisation is measured (§2.6): every drop is recorded.
    synchronisation: bool = False

    def scenario(self, qdisc: dict[str, Any], duration: float, test: str, mark: bool) -> dict[str, Any]:
        """The case's scenario with the mechanism `qdisc`, told to mark (`ecn`) when `mark`."""
        qdisc = {**qdisc, "ecn": True} if mark else qdisc
        topology = self.topology(qdisc) if self.topology else dumbbell(qdisc, dict(self.bottleneck), self.access_rate)
        bin_s = round(SAMPLES_PER_RTT * self.min_rtt_s, 6)
        flows = [dict(flow) for flow in self.flows]
        return scenario(topology, flows, duration, f"rfc7928-{test}-{self.name}", bin_s, self.synchronisation)


@dataclass(frozen=True)
class Merit:
    """A test's figure of merit: what the summary's column shows of a mechanism's cells."""

    label: str
    unit: str
    # "higher", "lower" or "closer to 1": which way is better.
    better: str
    # Of the test's cells of one mechanism (case name -> the cell's metrics): the number, or for
    # a trade-off the pair [goodput (Mbps), delay (ms)].
    of: Callable[[Mapping[str, Mapping[str, Any]]], float | list[float]]


@dataclass(frozen=True)
class Test:
    """One RFC 7928 test."""

    section: str
    title: str
    # What the RFC asks this test to show, in a sentence or two.
    purpose: str
    varies: str
    settings: str
    cases: Callable[[bool], list[Case]]
    merit: Merit

    def duration(self, quick: bool) -> float:
        return QUICK_DURATION_S if quick else DURATION_S


def _only(case: str, metric: str, group: str | None = None) -> Callable[[Mapping[str, Mapping[str, Any]]], float]:
    """The merit that is one metric of one case (of one flow group)."""

    def of(cells: Mapping[str, Mapping[str, Any]]) -> float:
        cell = cells[case]
        return float(cell["groups"][group][metric] if group else cell[metric])

    return of


def _goodput_ratio_of(case: str, numerator: str, denominator: str) -> Callable[[Mapping[str, Any]], float]:
    """The merit that is one group's goodput over another's in one case."""
    return lambda cells: _goodput_ratio(numerator, denominator)(cells[case])


def _trade_off(case: str) -> Merit:
    """RFC 7928 §2.7's figure: the centre of the case's delay-goodput ellipse, [goodput, delay]."""

    def of(cells: Mapping[str, Mapping[str, Any]]) -> list[float]:
        centre = cells[case]["ellipse"]
        return [centre["goodput_mbps"], centre["delay_ms"]] if centre else [float("nan"), float("nan")]

    return Merit("goodput and delay (ellipse centre)", "Mbps, ms", "more goodput, less delay", of)


def _goodput_ratio(numerator: str, denominator: str) -> Callable[[Mapping[str, Any]], float]:
    def ratio(cell: Mapping[str, Any]) -> float:
        bottom = cell["groups"][denominator]["goodput_bps"]
        return cell["groups"][numerator]["goodput_bps"] / bottom if bottom else float("nan")

    return ratio


# §5.1.1, §8.2.2: one bulk NewReno, the suite's tcp-friendly-same-initcwnd.cc.
def _one_tcp(_: bool) -> list[Case]:
    return [Case("newreno", "1 NewReno", (bulk_tcp("tcp"),))]


# §5.1.2: tcp-friendly-different-initcwnd.cc: a bulk IW3 flow from 0 s and a 100-segment transfer
# (69 800 B of payload) with IW10 from 0.5 s. One transfer gives one completion time; the RFC asks
# how the AQM treats the IW10 burst, so the case repeats it: a transfer every 10 s from 0.5 s, each
# on its own connection, beside the bulk flow.
TRANSFER_PACKETS = 100
TRANSFER_EVERY_S = 10.0


def _iw10(quick: bool) -> list[Case]:
    duration = QUICK_DURATION_S if quick else DURATION_S
    starts = [0.5 + TRANSFER_EVERY_S * i for i in range(int((duration - 0.5) // TRANSFER_EVERY_S))]
    transfers = tuple(
        {
            "type": "tcp",
            "name": f"iw10-{i}",
            "start": start,
            "tcp": {**NEWRENO, "initial_window": 10},
            "workload": {"type": "transfer", "packets": TRANSFER_PACKETS},
        }
        for i, start in enumerate(starts)
    )
    return [Case("iw3-iw10", "IW3 bulk + IW10 transfers", (bulk_tcp("iw3"), *transfers))]


# §5.2: aggressive-transport-sender.cc runs one BIC flow (ns-3 has no CUBIC); CUBIC is what
# today's senders run (RFC 9438), here Linux's (tcp_cubic.c, HyStart) with the suite's IW3.
def _cubic(_: bool) -> list[Case]:
    cubic = {"type": "tcp", "name": "cubic", "tcp": {"profile": "linux", "cc": "cubic", "initial_window": 3}}
    return [Case("cubic", "1 CUBIC", (cubic,))]


# §5.4: LBE-transport-sender.cc: a less-than-best-effort LEDBAT (RFC 6817, target 100 ms, the
# suite's `TargetDelay`) beside a NewReno. LEDBAT is Linux-profile here (ledbat.rs), the suite's
# IW3; it yields where the queueing delay reaches its target, so an AQM that keeps the delay below
# 100 ms leaves it nothing to yield to: it then takes about what the NewReno takes.
def _lbe(_: bool) -> list[Case]:
    ledbat = {
        "type": "tcp",
        "name": "ledbat",
        "tcp": {"profile": "linux", "cc": "ledbat", "initial_window": 3, "ledbat": {"target": "100ms"}},
    }
    return [Case("ledbat-newreno", "LEDBAT + NewReno", (ledbat, bulk_tcp("newreno")))]


# §5.3.1: single-unresponsive-transport.cc: one UDP source at 10 Mbit/s, ten times the bottleneck.
def _udp(_: bool) -> list[Case]:
    return [Case("udp", "UDP 10 Mbit/s", ({"type": "cbr", "name": "udp", "rate": "10Mbps"},))]


# §5.3.2: unresponsive-with-friendly-transport.cc: one NewReno beside a UDP at 0.8 Mbit/s.
def _udp_tcp(_: bool) -> list[Case]:
    udp = {"type": "cbr", "name": "udp", "rate": "0.8Mbps"}
    return [Case("newreno-udp", "NewReno + UDP 0.8 Mbit/s", (bulk_tcp("tcp"), udp))]


# §6: rtt-fairness.cc: a flow of 100 ms RTT and one of R, R from 5 to 500 ms; the bottleneck's
# delay is 0.4·R below 100 ms (40 ms above) and the access links make up each flow's RTT.
RTTS_MS = (5, 8, 10, 16, 20, 30, 40, 60, 80, 100, 150, 200, 300, 400, 500)
QUICK_RTTS_MS = (5, 20, 100, 200, 500)


def rtt_links(r_ms: float) -> tuple[float, float, float]:
    """(bottleneck delay, fixed flow's access delay, R flow's access delay), one way, ms: the suite's
    rtt-fairness.cc, each access delay on both the sender's and the receiver's link."""
    if r_ms < 100:
        return 0.4 * r_ms, (50 - 0.4 * r_ms) / 2, 0.05 * r_ms
    return 40.0, 5.0, (r_ms - 80) / 4


def _rtt(quick: bool) -> list[Case]:
    cases = []
    for r in QUICK_RTTS_MS if quick else RTTS_MS:
        bottleneck, fixed, variable = rtt_links(r)
        flows = (
            bulk_tcp("rtt100", access_delay=f"{fixed:g}ms", sink_delay=f"{fixed:g}ms"),
            # The suite starts the second flow at 0.5 s (rtt-fairness.cc).
            bulk_tcp("rttR", access_delay=f"{variable:g}ms", sink_delay=f"{variable:g}ms", start=0.5),
        )
        cases.append(
            Case(
                f"R={r}ms",
                f"R = {r} ms",
                flows,
                bottleneck={"delay": f"{bottleneck:g}ms"},
                min_rtt_s=min(r, 100) / 1000,
            )
        )
    return cases


def _rtt_fairness(cells: Mapping[str, Mapping[str, Any]]) -> float:
    ratio = _goodput_ratio("rttR", "rtt100")
    return min(ratio(cell) for cell in cells.values())


# §7: burst absorption. RFC 7928 §7 names IW10 bursts, bursty video frames, web transfers and CBR
# over bulk TCP. Web: five sources of Pareto-sized transfers (mean 10 packets, shape 1.2, think
# 1 s) beside one bulk NewReno; video: 25 frames a second of 300 kbit/s (1500 B, two packets, a
# burst every 40 ms; video.rs) beside it; CBR: a 64 kbit/s stream of 200-byte packets (a VoIP-like
# G.711 call without its RTP) beside it.
WEB = {
    "type": "tcp",
    "name": "web",
    "count": 5,
    "tcp": NEWRENO,
    "workload": {"type": "web", "pareto_mean": 10, "think_time": "1s"},
}


def _bursts(_: bool) -> list[Case]:
    cbr = {"type": "cbr", "name": "cbr", "rate": "64kbps", "packet_size": "200B"}
    video = {"type": "video", "name": "video", "rate": "300kbps", "fps": 25}
    return [
        Case("web", "bulk + 5 web sources", (bulk_tcp("bulk"), WEB)),
        Case("video", "bulk + video 300 kbit/s", (bulk_tcp("bulk"), video)),
        Case("cbr", "bulk + CBR 64 kbit/s", (bulk_tcp("bulk"), cbr)),
    ]


# §8.2.2–8.2.4: mild-, medium-, heavy-congestion.cc: 0.036·62, 0.081·62, 0.114·62 = 2, 5 and 7
# NewReno flows (the suite's first version, indu98/aqm_eval_suite, ran 3, 7 and 10), flow i
# starting at i s; the mild case's bottleneck has 45 ms of propagation.
def _congestion(flows: int, delay: str = BOTTLENECK_DELAY) -> Callable[[bool], list[Case]]:
    def cases(_: bool) -> list[Case]:
        tcps = tuple(bulk_tcp(f"tcp{i}", start=float(i)) for i in range(flows))
        return [Case(f"{flows}-flows", f"{flows} NewReno", tcps, bottleneck={"delay": delay}, synchronisation=True)]

    return cases


# §8.2.5: vary-congestion-level.cc: 7 NewReno from 0 s; the flows i with 0.036·62 < i < 0.081·62
# (i = 3, 4, 5) pause at 40, 100, 160, 220 and 280 s and resume 20 s later (the last one not
# before the end), so that the load steps between 4 and 7 flows.
PAUSES_AT_S = (40, 100, 160, 220, 280)


def _varying_congestion(quick: bool) -> list[Case]:
    duration = QUICK_DURATION_S if quick else DURATION_S
    pauses = [{"at": at, "until": min(at + 20, duration)} for at in PAUSES_AT_S if at < duration]
    tcps = tuple(bulk_tcp(f"tcp{i}", **({"pauses": pauses} if 2 < i < 6 else {})) for i in range(7))
    return [Case("7-flows-pausing", "7 NewReno, 3 pausing", tcps, synchronisation=True)]


# §8.2.6: vary-available-capacity-uno.cc / -duo.cc: two NewReno on a 100 Mbit/s bottleneck that
# drops to 10 Mbit/s and back every 20 s (uno) or every 0.1 s (duo, the RFC's fast change),
# 500 Mbit/s access links, a 500-packet buffer.
def _capacity(quick: bool) -> list[Case]:
    duration = QUICK_DURATION_S if quick else DURATION_S

    def steps(every: float) -> list[dict[str, Any]]:
        count = int(duration / every + 1e-9)
        return [
            {"at": round(every * i, 6), "rate": "10Mbps" if i % 2 else "100Mbps"}
            for i in range(1, count)
            if every * i < duration
        ]

    flows = (bulk_tcp("tcp", count=2),)
    return [
        Case(
            f"every-{label}",
            f"100 ↔ 10 Mbit/s every {label}",
            flows,
            bottleneck={"rate": "100Mbps", "rate_changes": steps(every)},
            access_rate="500Mbps",
            buffer_packets=500,
        )
        for label, every in (("20s", 20.0), ("0.1s", 0.1))
    ]


# §4.5: ECN. rtt-fairness-with-ecn.cc runs §6 with ECN; here §8.2.3's five flows, ECN-capable
# (RFC 3168), with the mechanism marking where it can: the same load with and without marks.
def _ecn(_: bool) -> list[Case]:
    plain = tuple(bulk_tcp(f"tcp{i}", start=float(i)) for i in range(5))
    marked = tuple(bulk_tcp(f"tcp{i}", start=float(i), tcp={"ecn": True}) for i in range(5))
    return [Case("drop", "5 NewReno, no ECN", plain), Case("ecn", "5 NewReno with ECN", marked, ecn=True)]


def _ecn_gain(cells: Mapping[str, Mapping[str, Any]]) -> float:
    return cells["ecn"]["goodput_bps"] / cells["drop"]["goodput_bps"] if cells["drop"]["goodput_bps"] else float("nan")


# §4.4: packet sizes (RFC 7141): two NewReno flows of 1500-byte and 300-byte packets. A
# mechanism that drops per packet, not per byte, favours the large packets' flow (RFC 7141 §2.1).
def _sizes(_: bool) -> list[Case]:
    return [
        Case(
            "1500B-300B",
            "NewReno 1500 B + NewReno 300 B",
            (bulk_tcp("large", packet_size="1500B"), bulk_tcp("small", packet_size="300B")),
        )
    ]


# §9.1: a traffic mix of the kinds the RFC lists (bulk TCP, web, VoIP, CBR UDP; its adaptive
# video has no source here yet): one bulk NewReno, §7's five web sources, a VoIP-like call
# (80 kbit/s of 200-byte packets: G.711's 160 B every 20 ms with 40 B of RTP/UDP/IP) and a CBR
# UDP of 100 kbit/s.
VOIP = {"type": "cbr", "name": "voip", "rate": "80kbps", "packet_size": "200B"}


def _mix(_: bool) -> list[Case]:
    cbr = {"type": "cbr", "name": "cbr", "rate": "100kbps"}
    return [Case("mix", "bulk + 5 web + VoIP + CBR", (bulk_tcp("bulk"), WEB, VOIP, cbr))]


# §9.2: bidirectional traffic: a bulk NewReno each way, so that each direction's data shares the
# bottleneck with the other's ACKs; the mechanism runs on both directions.
def _two_way(_: bool) -> list[Case]:
    flows = (bulk_tcp("forward", src="A", dst="B"), bulk_tcp("reverse", src="B", dst="A"))
    return [Case("both-ways", "NewReno each way", flows, topology=two_way)]


# §10: the mechanism on two bottlenecks in a row (a parking lot): a NewReno through both beside
# one that crosses each; its fair share is half of each link.
def _parking_lot(_: bool) -> list[Case]:
    flows = (bulk_tcp("through"), bulk_tcp("cross0", hop=0), bulk_tcp("cross1", hop=1))
    return [
        Case("two-links", "through + 1 cross flow per link", flows, topology=lambda q: parking_lot(q, 2), link="R0->R1")
    ]


def _through_share(cells: Mapping[str, Mapping[str, Any]]) -> float:
    """The through flow's goodput over its max-min fair share."""
    group = cells["two-links"]["groups"]["through"]
    return group["goodput_bps"] / group["fair_share_bps"] if group["fair_share_bps"] else float("nan")


TESTS: tuple[Test, ...] = (
    Test(
        "4.4",
        "Packet sizes",
        "Whether the mechanism treats flows of small packets as flows of large ones (RFC 7141: drop "
        "or mark in proportion to bytes, not packets).",
        "the packet size of two otherwise equal NewReno flows",
        f"1500 B and 300 B on the standard network; buffer {BUFFER_PACKETS} packets",
        _sizes,
        Merit("small/large goodput", "ratio", "closer to 1", _goodput_ratio_of("1500B-300B", "small", "large")),
    ),
    Test(
        "4.5",
        "ECN",
        "What marking instead of dropping (RFC 3168) changes: goodput and delay with and without ECN.",
        "ECN on the flows and the mechanism",
        "§8.2.3's five NewReno flows; a mechanism that cannot mark drops",
        _ecn,
        Merit("goodput with / without ECN", "ratio", "higher", _ecn_gain),
    ),
    Test(
        "5.1.1",
        "One bulk TCP",
        "The baseline: one long-lived NewReno flow, its goodput and the queueing delay the mechanism keeps.",
        "nothing",
        "1 NewReno, IW3 (suite: tcp-friendly-same-initcwnd.cc)",
        _one_tcp,
        _trade_off("newreno"),
    ),
    Test(
        "5.1.2",
        "IW3 against IW10",
        "How the mechanism treats the burst of a larger initial window (RFC 6928) beside a bulk flow.",
        "initial window of the second flow",
        f"IW3 bulk, then {TRANSFER_PACKETS}-packet IW10 transfers every {TRANSFER_EVERY_S:g} s from 0.5 s "
        "(suite: tcp-friendly-different-initcwnd.cc, one transfer)",
        _iw10,
        Merit("IW10 transfer time, median", "s", "lower", _only("iw3-iw10", "fct_median_s")),
    ),
    Test(
        "5.2",
        "Aggressive sender",
        "One aggressive congestion control (CUBIC) alone: the delay it reaches under the mechanism.",
        "the congestion control",
        "1 Linux CUBIC, IW3 (suite: aggressive-transport-sender.cc, BIC)",
        _cubic,
        _trade_off("cubic"),
    ),
    Test(
        "5.3.1",
        "Unresponsive UDP",
        "An unresponsive flow at ten times the capacity: whether the mechanism still bounds the delay.",
        "nothing",
        "1 CBR at 10 Mbit/s (suite: single-unresponsive-transport.cc)",
        _udp,
        Merit("median delay", "ms", "lower", _only("udp", "delay_median_ms")),
    ),
    Test(
        "5.3.2",
        "UDP beside TCP",
        "An unresponsive flow beside a responsive one: how much the TCP keeps.",
        "nothing",
        "1 NewReno + 1 CBR at 0.8 Mbit/s (suite: unresponsive-with-friendly-transport.cc)",
        _udp_tcp,
        Merit(
            "TCP goodput", "Mbps", "higher", lambda cells: cells["newreno-udp"]["groups"]["tcp"]["goodput_bps"] / 1e6
        ),
    ),
    Test(
        "5.4",
        "Less-than-best-effort sender",
        "A LEDBAT beside a NewReno: whether the mechanism lets the background transport yield, as it "
        "does behind a FIFO, or keeps the delay below its target so that it competes.",
        "nothing",
        "LEDBAT (RFC 6817, target 100 ms) + NewReno (suite: LBE-transport-sender.cc)",
        _lbe,
        Merit("LEDBAT / NewReno goodput", "ratio", "lower", _goodput_ratio_of("ledbat-newreno", "ledbat", "newreno")),
    ),
    Test(
        "6",
        "RTT fairness",
        "Two NewReno flows of different RTTs: how the mechanism shares between them.",
        "R, the RTT of the second flow (the first has 100 ms)",
        f"R in {', '.join(map(str, RTTS_MS))} ms (quick: {', '.join(map(str, QUICK_RTTS_MS))}); "
        "suite: rtt-fairness.cc's link delays",
        _rtt,
        Merit("worst goodput ratio R / 100 ms", "ratio", "closer to 1", _rtt_fairness),
    ),
    Test(
        "7",
        "Burst absorption",
        "Short transfers and a small constant-rate stream beside a bulk flow: whether the mechanism "
        "absorbs their bursts without raising their delay.",
        "the burst traffic",
        "bulk NewReno + 5 web sources (Pareto mean 10 packets, think 1 s); bulk + video of 300 kbit/s at 25 "
        "frames/s; bulk + CBR 64 kbit/s of 200 B",
        _bursts,
        Merit("web transfer time, median", "s", "lower", _only("web", "fct_median_s")),
    ),
    Test(
        "8.2.2",
        "Mild congestion",
        "Goodput and delay under a light load of long flows.",
        "the number of flows (2)",
        "2 NewReno, flow i from i s, bottleneck 45 ms (suite: mild-congestion.cc)",
        _congestion(2, "45ms"),
        _trade_off("2-flows"),
    ),
    Test(
        "8.2.3",
        "Medium congestion",
        "Goodput and delay under a medium load of long flows.",
        "the number of flows (5)",
        "5 NewReno, flow i from i s (suite: medium-congestion.cc)",
        _congestion(5),
        _trade_off("5-flows"),
    ),
    Test(
        "8.2.4",
        "Heavy congestion",
        "Goodput and delay under a heavy load of long flows.",
        "the number of flows (7)",
        "7 NewReno, flow i from i s (suite: heavy-congestion.cc)",
        _congestion(7),
        _trade_off("7-flows"),
    ),
    Test(
        "8.2.5",
        "Varying congestion",
        "How the mechanism follows a load that steps between 4 and 7 long flows.",
        "the number of active flows over time",
        "7 NewReno from 0 s; flows 3, 4, 5 pause at 40, 100, 160, 220, 280 s for 20 s "
        "(suite: vary-congestion-level.cc)",
        _varying_congestion,
        _trade_off("7-flows-pausing"),
    ),
    Test(
        "8.2.6",
        "Varying capacity",
        "How fast the mechanism follows a link whose rate steps down and up, slowly and quickly.",
        "how often the rate changes",
        "2 NewReno; 100 ↔ 10 Mbit/s every 20 s and every 0.1 s; access 500 Mbit/s; buffer 500 packets "
        "(suite: vary-available-capacity-uno.cc, -duo.cc)",
        _capacity,
        Merit("utilisation, fast changes", "fraction", "higher", _only("every-0.1s", "utilisation")),
    ),
    Test(
        "9.1",
        "Traffic mix",
        "A mix of bulk, web, VoIP-like and CBR traffic: what each kind gets and waits.",
        "nothing",
        "1 bulk NewReno, 5 web sources, a VoIP-like CBR of 80 kbit/s in 200 B packets, a CBR of 100 kbit/s",
        _mix,
        Merit("VoIP delay, p99", "ms", "lower", _only("mix", "delay_p99_ms", "voip")),
    ),
    Test(
        "9.2",
        "Bidirectional traffic",
        "Flows both ways: each direction's data queues with the other's ACKs.",
        "nothing",
        "a bulk NewReno each way; the mechanism on both directions of the bottleneck",
        _two_way,
        Merit("goodput, both ways", "Mbps", "higher", lambda cells: cells["both-ways"]["goodput_bps"] / 1e6),
    ),
    Test(
        "10",
        "Several bottlenecks",
        "The mechanism on two bottlenecks in a row: what a flow through both keeps against one flow per link.",
        "nothing",
        "parking lot of 2 links of 1 Mbit/s, 24 ms each; a NewReno through both, one across each",
        _parking_lot,
        Merit("through flow / fair share", "ratio", "closer to 1", _through_share),
    ),
)

BY_SECTION: dict[str, Test] = {test.section: test for test in TESTS}
SECTIONS = tuple(BY_SECTION)
