"""RED-PD: the six scenarios of ns-2's RED-PD validation suite (ns-2.35
`tcl/test/test-suite-red-pd.tcl`, by the paper's authors), each with the behaviour it exercises
asserted. ns-2 checks its suite against stored traces; we check the behaviour the scripts set up.
`aqmlab validate ns2` runs these scenarios beside ns-2's suite itself, per flow over many seeds
(`redpd-suite-*`, ns2/redpd_suite.py): a single run of them says little (docs/ns2.md). The
suite's network, its tests and what a run measures are `ns2/redpd_scenarios.py`.

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
from typing import Any

import pandas as pd

import aqmlab

from ...ns2.redpd_scenarios import (
    DURATION,
    MONITOR_AT,
    PENALTY,
    QUEUE_DROPS,
    SCENARIOS,
    SCRIPTED,
    UNMONITOR_AT,
    Run,
)
from ...plots import subplots
from .. import Reproduction, Row, RunSettings, experiment

ENGINE_START = 10.1  # helper.tcl's first detect: our profile ns2's engine_start
IDENTIFIED_WITHIN = 3.0  # s after a flow or the engine starts: M intervals of at most 10R, plus 1 s
WINDOWS = ((1.0, MONITOR_AT), (MONITOR_AT, UNMONITOR_AT), (UNMONITOR_AT, DURATION))
SMALL_CBR_SHARE = 0.9  # redpd-fig14's "≥ 90 % of send rate" for flows below their share
FULL = RunSettings(duration=DURATION)
QUICK = FULL  # 0.5 Mb/s for 30 s: seven runs take about a second


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
