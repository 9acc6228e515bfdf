"""RED-PD: the six scenarios of ns-2's RED-PD validation suite (ns-2.35
`tcl/test/test-suite-red-pd.tcl`, by the paper's authors), each with the behaviour it exercises
asserted. ns-2 checks its suite against stored traces; we check the behaviour the scripts set up.
`aqmlab validate ns2` runs these scenarios beside ns-2's suite itself, per flow over many seeds
(`redpd-suite-*`, ns2/redpd_suite.py): a single run of them says little (docs/ns2.md).

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

Rows: red-pd.cc spaces a monitored flow's drops as RED spaces its own: the k-th arrival after a
drop goes with probability P/(1 − (k−1)·P), 1 once (k−1)·P ≥ 1, so the fraction dropped is
F(P) = 2P/(1 + P) when 1/P is a whole number (`spaced_fraction`). A scripted probability acts on
a responsive flow only while RED's average is at least min_th and more than one packet is queued
(red-pd.cc), and arrivals the gate spares still count, so its pre-filtered fraction is F(P, g)
± 3σ: the same spacing with each drop taken with probability g, the fraction of the window's
10-ms queue samples with the gate open (taken as independent of the count), σ binomial over the
window's arrivals. The first band, [F/2, F + 3σ] at g = 1, assumed the gate open most of the
time (set before results, with F = P while our pre-filter dropped independently). An
unresponsive flow's, with noidle off, is F(P·penalty) ± 3σ; none outside the scripted times.
The engine identifies a flow dropped in every interval when its K-th list closes, within M
intervals of at most 10R (2 s) after it starts or the engine does (10.1 s): monitored by 3 s
after the later. ns-2 itself misses that bound in `complete` (the CBR monitored at 13.53 s:
the TCPs sit in timeouts from 10.1 s, the CBR alone arrives as fast as the link sends, so RED
drops nothing and the rounds wait for drops). A fixed loss fraction is p ± 3σ. In `cbrs` the
two 0.1 Mb/s CBRs, below their 0.17 Mb/s share, should keep at least 90 % of their rate
(redpd-fig14's band for the flows RED-PD protects).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import pandas as pd

import aqmlab

from ..plots import subplots
from ..results import Results
from . import Reproduction, Row, RunSettings, experiment
from ._redpd import RED

BOTTLENECK = {"rate": 0.5e6, "delay": 0.020}
LIMIT = 100
ACCESS_RATE = 10e6
SOURCE_DELAY = {"s1": 0.002, "s2": 0.003}
SINK_DELAY = {"s3": 0.004, "s4": 0.005}
# The suite's RED (`RED` of _redpd.py is the same but for ns-2's defaults wait_ and mean_pktsize_).
SUITE_RED = RED | {"profile": "ns2", "limit": LIMIT, "wait": True, "mean_pktsize": 500}
TCP = {"profile": "ns2", "variant": "sack", "window": 50, "delayed_ack": False}
CBR_PACKET = 210  # ns-2 Application/Traffic/CBR packetSize_
DURATION = 30.0  # every test's stoptime
SCRIPTED = 0.1  # monitorFlow's probability, and frp's P_testFRp_
PENALTY = 3.0  # unresponsiveFlow 3 3
MONITOR_AT, UNMONITOR_AT = 10.0, 20.0  # the scripted times
ENGINE_START = 10.1  # helper.tcl's first detect: our profile ns2's engine_start
IDENTIFIED_WITHIN = 3.0  # s after a flow or the engine starts: M intervals of at most 10R, plus 1 s
WINDOWS = ((1.0, MONITOR_AT), (MONITOR_AT, UNMONITOR_AT), (UNMONITOR_AT, DURATION))
SMALL_CBR_SHARE = 0.9  # redpd-fig14's "≥ 90 % of send rate" for flows below their share
# Drops behind the pre-filter: the FRp loss, then RED's.
QUEUE_DROPS = ("loss", "early", "forced", "overflow")
FULL = RunSettings(duration=DURATION)
QUICK = FULL  # 0.5 Mb/s for 30 s: seven runs take about a second


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


def fraction_band(p: float, arrivals: float) -> float:
    """Three binomial standard deviations of a fraction p of `arrivals`."""
    return 3 * math.sqrt(p * (1 - p) / arrivals)


def spaced_fraction(p: float, gate: float = 1.0) -> float:
    """The long-run fraction of arrivals red-pd.cc's pre-filter drops at probability `p`: the k-th
    arrival after a drop is dropped with probability gate·p/(1 − (k−1)·p), gate·1 once
    (k−1)·p ≥ 1; one over the mean gap between drops, Σ_k P(gap > k)."""
    if gate <= 0:
        return 0.0
    mean_gap, survive, since_drop = 0.0, 1.0, 0
    while survive > 1e-12:
        mean_gap += survive
        spent = since_drop * p
        survive *= 1 - gate * (min(1.0, p / (1 - spent)) if spent < 1 else 1.0)
        since_drop += 1
    return 1 / mean_gap


def gated_rows(run: Run, flow: int, name: str, key: str) -> list[Row]:
    """A responsive flow monitored at P from 10 to 20 s: F(P, g) of its arrivals pre-filtered.
    The band with g was set after seeing results, so the first band, [F/2, F + 3σ] at g = 1 (the
    gate assumed open most of the time), is graded beside it."""
    expected = spaced_fraction(SCRIPTED, run.gate_open(MONITOR_AT, UNMONITOR_AT))
    always = spaced_fraction(SCRIPTED)
    fraction = run.prefiltered(flow, MONITOR_AT, UNMONITOR_AT)[1]
    arrivals = run.arrivals(flow, MONITOR_AT, UNMONITOR_AT)
    return [
        Row.within(
            f"{name}'s arrivals pre-filtered, 10–20 s (spaced P, gate open g)",
            expected,
            fraction,
            fraction_band(expected, arrivals),
            key=key,
        ),
        Row.between(
            f"{name}'s arrivals pre-filtered, 10–20 s (first band: gate assumed open)",
            always,
            fraction,
            always / 2,
            always + fraction_band(always, arrivals),
            key=f"{key}_first_band",
        ),
    ]


def unfiltered_row(run: Run, flow: int, metric: str, start: float, end: float, key: str) -> Row:
    """None of `flow`'s arrivals from `start` to `end` (s) pre-filtered: it was not monitored then."""
    return Row.within(metric, 0, run.dropped(flow, start, end, ("pre_filter",)), 0, key=key)


def monitored_rows(run: Run, flow: int, name: str, key: str) -> list[Row]:
    """A flow monitored from 10 s: nothing pre-filtered before, then `gated_rows` to 20 s."""
    return [
        unfiltered_row(run, flow, f"{name} pre-filter drops before 10 s", 0, MONITOR_AT, f"{key}.before"),
        *gated_rows(run, flow, name, f"{key}.during"),
    ]


def simple_rows(run: Run) -> list[Row]:
    tcp1, tcp2 = 0, 1
    share = {w: run.goodput(tcp1, *w) / (run.goodput(tcp1, *w) + run.goodput(tcp2, *w)) for w in WINDOWS}
    return [
        *monitored_rows(run, tcp1, "tcp1", "simple"),
        unfiltered_row(run, tcp1, "tcp1 pre-filter drops after 20 s", UNMONITOR_AT, DURATION, "simple.after"),
        unfiltered_row(run, tcp2, "tcp2 pre-filter drops", 0, DURATION, "simple.tcp2"),
        Row.ordered(
            "tcp1's share of the two TCPs' goodput: 10–20 s < 20–30 s",
            "lower while monitored",
            [{"10–20 s": share[WINDOWS[1]]}, {"20–30 s": share[WINDOWS[2]]}],
            key="simple.share",
        ),
    ]


def unresponsive_rows(run: Run) -> list[Row]:
    cbr = 2
    record = run.record(cbr)
    after_fraction = run.prefiltered(cbr, UNMONITOR_AT, DURATION)[1]
    penalised = spaced_fraction(SCRIPTED * PENALTY)
    rows = [
        Row.within(
            "CBR monitored at (s)",
            MONITOR_AT,
            record.get("first_monitored_at", math.nan),
            1e-6,
            key="unresponsive.monitored_at",
        ),
        Row.within(
            "CBR declared unresponsive at (s)",
            UNMONITOR_AT,
            record.get("unresponsive_at", math.nan),
            1e-6,
            key="unresponsive.declared_at",
        ),
        *monitored_rows(run, cbr, "CBR", "unresponsive"),
        Row.within(
            "CBR's arrivals pre-filtered, 20–30 s (unresponsive, penalty 3)",
            penalised,
            after_fraction,
            fraction_band(penalised, run.arrivals(cbr, UNMONITOR_AT, DURATION)),
            key="unresponsive.penalised",
        ),
        Row.ordered(
            "CBR goodput (Mb/s): 20–30 s < 10–20 s",
            "lower once unresponsive",
            [
                {"20–30 s": run.goodput(cbr, UNMONITOR_AT, DURATION)},
                {"10–20 s": run.goodput(cbr, MONITOR_AT, UNMONITOR_AT)},
            ],
            digits=3,
            key="unresponsive.rate",
        ),
    ]
    return rows


def frp_rows(run: Run) -> list[Row]:
    rows = []
    for flow_id, name in ((0, "tcp1"), (1, "tcp2")):
        arrivals = run.arrivals(flow_id, 0, DURATION)
        fraction = run.dropped(flow_id, 0, DURATION, ("loss",)) / arrivals
        rows.append(
            Row.within(
                f"{name}'s arrivals dropped at the fixed probability",
                SCRIPTED,
                fraction,
                fraction_band(SCRIPTED, arrivals),
                key=f"frp.{name}",
            )
        )
    prefilter = sum(run.dropped(f, 0, DURATION, ("pre_filter",)) for f in (0, 1))
    rows.append(Row.within("Pre-filter drops (nothing monitored)", 0, prefilter, 0, key="frp.prefilter"))
    return rows


def identified_rows(name: str, run: Run, cbr: int, start: float) -> list[Row]:
    """The engine's part: the CBR monitored soon after it or the engine starts and declared unresponsive."""
    record = run.record(cbr)
    by = max(start, ENGINE_START) + IDENTIFIED_WITHIN
    return [
        Row.at_most(
            "CBR monitored at (s)",
            f"≤ {by:g}",
            record.get("first_monitored_at", math.inf),
            by,
            key=f"{name}.monitored_at",
        ),
        Row.at_most(
            "CBR declared unresponsive at (s)",
            f"< {DURATION:g}",
            record.get("unresponsive_at", math.inf),
            DURATION,
            key=f"{name}.declared",
        ),
    ]


def complete_rows(run: Run, red: Run) -> list[Row]:
    cbr, late = 2, (MONITOR_AT, DURATION)
    tcp = {name: sum(r.goodput(f, *late) for f in (0, 1)) for name, r in (("RED-PD", run), ("RED", red))}
    return identified_rows("complete", run, cbr, 1.0) + [
        Row.ordered(
            "CBR goodput 10–30 s (Mb/s): RED-PD < RED",
            "RED-PD controls the CBR",
            [{"RED-PD": run.goodput(cbr, *late)}, {"RED": red.goodput(cbr, *late)}],
            digits=3,
            key="complete.cbr",
        ),
        Row.ordered(
            "TCPs' goodput 10–30 s (Mb/s): RED-PD > RED",
            "the TCPs gain",
            [{"RED-PD": tcp["RED-PD"]}, {"RED": tcp["RED"]}],
            relation=">",
            digits=3,
            key="complete.tcps",
        ),
    ]


def cbrs_rows(name: str, run: Run) -> list[Row]:
    rows = identified_rows(name, run, 2, 0.0)
    for flow_id in (0, 1):
        rows.append(
            Row.at_least(
                f"cbr{flow_id + 1} (0.1 Mb/s) goodput 5–30 s (Mb/s)",
                "protected",
                run.goodput(flow_id, 5.0, DURATION),
                SMALL_CBR_SHARE * 0.1,
                key=f"{name}.cbr{flow_id + 1}",
            )
        )
    return rows


@experiment("redpd-ns2-suite", "RED-PD: the six scenarios of ns-2's test-suite-red-pd.tcl")
def ns2_suite(quick: bool) -> Reproduction:
    runs = {name: Run(aqmlab.run(build())) for name, build in SCENARIOS.items()}
    utilisation = {name: float(runs[name].link["utilisation"]) for name in ("cbrs", "cbrs-noidle")}
    rows = (
        simple_rows(runs["simple"])
        + unresponsive_rows(runs["unresponsive"])
        + frp_rows(runs["frp"])
        + complete_rows(runs["complete"], runs["complete-red"])
        + cbrs_rows("cbrs", runs["cbrs"])
        + cbrs_rows("cbrs_noidle", runs["cbrs-noidle"])
    )
    rows.append(
        Row.ordered(
            "Link utilisation: cbrs ≤ cbrs-noidle",
            "noidle keeps the link busy",
            [{"cbrs": utilisation["cbrs"]}, {"cbrs-noidle": utilisation["cbrs-noidle"]}],
            relation="<=",
            digits=3,
            key="noidle.utilisation",
        )
    )
    table = _table(runs)
    return Reproduction(
        rows=rows,
        figure=_figure(runs),
        data={"ns2_suite": table},
        show=["ns2_suite"],
        explain=lambda row: _reason(row, table, runs),
    )


def _table(runs: dict[str, Run]) -> pd.DataFrame:
    """Per scenario and flow: goodput over the run, pre-filter and queue drops (FRp loss and RED), monitoring record."""
    lines = []
    for name, run in runs.items():
        for f in run.results.flows.itertuples():
            record = run.record(int(f.id))
            lines.append(
                {
                    "scenario": name,
                    "flow": f.name,
                    "mbps": run.goodput(int(f.id), 0.0, DURATION),
                    "pre_filter": run.dropped(int(f.id), 0, DURATION, ("pre_filter",)),
                    "red_drops": run.dropped(int(f.id), 0, DURATION, QUEUE_DROPS),
                    "monitored_at": record.get("first_monitored_at", math.nan),
                    "unresponsive_at": record.get("unresponsive_at", math.nan),
                    "utilisation": float(run.link["utilisation"]),
                }
            )
    return pd.DataFrame(lines)


def _reason(row: Row, table: pd.DataFrame, runs: dict[str, Run]) -> str:
    """The row's scenario (both `cbrs` runs for the utilisation row): each flow's goodput, drops and
    record; for a first band's row, how often the pre-filter's gate was open."""
    prefix = row.key.split(".")[0]
    scenarios = {"noidle": ("cbrs", "cbrs-noidle"), "cbrs_noidle": ("cbrs-noidle",)}.get(prefix, (prefix,))
    gate = ""
    if row.key.endswith("_first_band"):
        opened = runs[prefix].gate_open(MONITOR_AT, UNMONITOR_AT)
        gate = f"the pre-filter's gate was open in {opened:.0%} of the 10–20 s queue samples; "
    return f"{gate}measured {row.ours}; " + "; ".join(
        f"{t.scenario} {t.flow}: {t.mbps:.3f} Mb/s, pre-filter drops {t.pre_filter}, RED drops {t.red_drops}, "
        f"monitored at {t.monitored_at:.2f} s, unresponsive at {t.unresponsive_at:.2f} s, "
        f"utilisation {t.utilisation:.3f}"
        for t in table[table["scenario"].isin(scenarios)].itertuples()
    )


def _figure(runs: dict[str, Run]) -> Any:
    names = ("simple", "unresponsive", "complete", "cbrs", "cbrs-noidle", "frp")
    fig, axes = subplots(2, 3, figsize=(11, 6), sharex=True)
    for ax, name in zip(axes.flat, names, strict=True):
        t = runs[name].results.throughput
        flows = runs[name].results.flows.set_index("id")["name"]
        for flow_id, group in t.groupby("flow"):
            ax.plot(group["time"], group["bps"] / 1e6, label=flows[flow_id])
        ax.set(title=name, ylabel="Mb/s")
        ax.legend(fontsize="x-small")
    for ax in axes[1]:
        ax.set_xlabel("time (s)")
    fig.suptitle("ns-2 test-suite-red-pd.tcl: goodput per flow, 1-s bins (0.5 Mb/s link)")
    fig.tight_layout()
    return fig
