"""The ns-2 column of reproductions whose mechanism ns-2.35 lacks but whose baselines it has:
CSFQ §3's FIFO (drop-tail), RED and DRR in `demo`, `csfq-fig3b`, `csfq-fig3a`, `csfq-fig4`,
`csfq-fig6` and `csfq-table1` … `csfq-table3`, and RED in `bred-vs-red` (BRED Figs. 10–11),
`bred-buffer` (Fig. 7) and `bred-short-lived` (Fig. 6; the BRED paper ran ns-2, §5); and, as a
reference only (no verdict: FRED's paper did not run ns-2, and ns-2.35 has no agent for its NetBSD
TCP), RED in `fred-fragile` and `fred-cbr`. Each experiment's own
scenario, with the baseline's qdisc, is written for ns-2 by aqmlab's exporter
(`aqmlab.ns2.export`, what `aqmlab export ns2` writes), run in `ns`, and measured as the
experiment measures ours (the same flows, rates and window, the same statistic over seeds); the
rows of CSFQ, FRED and BRED, which ns-2.35 does not have, are recorded as such (`not_in_ns2`).
docs/ns2-reproductions.md has the format and what each run differs in.

    make ns2-baselines
    PYTHONPATH=python .venv/bin/python tools/ns2_reproductions/baselines.py [--only ID ...]

Unlike redpd.py this needs the project (it builds the scenarios and exports them), not an
ns-2 source tree.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import json
import math
import shutil
import statistics
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import aqmlab
import numpy as np
import pandas as pd
from aqmlab.experiments import PAPER_NAMES, bred, csfq
from aqmlab.experiments.bred import buffer as bred_buffer
from aqmlab.experiments.bred import short_lived as bred_short_lived
from aqmlab.experiments.bred import vs_red as bred_vs_red
from aqmlab.experiments.csfq import fig3a as csfq_fig3a
from aqmlab.experiments.csfq import fig4 as csfq_fig4
from aqmlab.experiments.csfq import fig6 as csfq_fig6
from aqmlab.experiments.csfq import table1 as csfq_table1
from aqmlab.experiments.csfq import table2 as csfq_table2
from aqmlab.experiments.csfq import table3 as csfq_table3
from aqmlab.experiments.csfq._figures import LINK_MBPS, demo_scenario
from aqmlab.experiments.csfq._tables import mechanisms, single_link_scenario
from aqmlab.experiments.fred import NETBSD_TCP, WINDOW_64KB, pct
from aqmlab.experiments.fred import cbr as fred_cbr
from aqmlab.experiments.fred import fragile as fred_fragile
from aqmlab.ns2 import export, run
from aqmlab.presets import CSFQ_MECHANISMS, PACKET_BYTES
from aqmlab.results import MBPS
from aqmlab.scenario import Scenario

sys.path.insert(0, str(Path(__file__).resolve().parent))
from ns2runs import FULL_ONLY, OUT, REPO, combine, ns2_version, reference, shown, summary  # noqa: E402

COMMAND = "make ns2-baselines"
DRIVER = "tools/ns2_reproductions/baselines.py"
BASELINES = ("droptail", "red", "drr")  # CSFQ §3's mechanisms that ns-2.35 has
SEEDS = (1, 2, 3, 4, 5)
NOT_CSFQ = "CSFQ is not in ns-2.35"
NOT_FRED = "FRED is not in ns-2.35"
NOT_RFC = "the RFC TCP (profile rfc) has no ns-2.35 agent"
MECHANISM = {"csfq": NOT_CSFQ, "fred-1": NOT_FRED, "fred-2": NOT_FRED, "fred": NOT_FRED}


def ns2_flows(scenario: Scenario, seed: int) -> list[dict]:
    """Each flow's ns-2 results over the scenario's window (aqmlab.ns2.run: goodput_bps,
    delivered_packets, drops, …), by flow id."""
    return sorted(run.run(export.export(scenario.with_seed(seed))).flows, key=lambda flow: flow["id"])


def goodput(flow: dict) -> float:
    """A flow's goodput (Mb/s): what most experiments' rows are made of."""
    return flow["goodput_bps"] / MBPS


# A measure takes one seed's runs, {(scenario, qdisc): each flow's value (Baselines.value)},
# and gives {row key: value}.
Measure = Callable[[dict[tuple[str, str], list[Any]]], dict[str, object]]


def with_baselines(scenarios: dict[str, Scenario]) -> dict[tuple[str, str], Scenario]:
    """Each of CSFQ §3's `scenarios` under each of BASELINES (`aqmlab.presets.CSFQ_MECHANISMS`)."""
    return {(name, q): s.with_qdisc(CSFQ_MECHANISMS[q]) for name, s in scenarios.items() for q in BASELINES}


@dataclass
class Baselines:
    """One experiment's ns-2 runs (`scenarios` by (scenario, qdisc), once per seed), its rows from
    them (`measure`, or `combined` where a row is a statistic over the seeds' mean, as the
    experiment computes it), the rows ns-2 cannot measure, and the notes."""

    id: str
    scenarios: dict[tuple[str, str], Scenario]
    seeds: tuple[int, ...]
    measure: Measure
    not_in_ns2: dict[str, str]
    notes: dict[str, str]
    what: str
    ordered: frozenset[str] = frozenset()
    categories: frozenset[str] = frozenset()  # rows whose value is a category ("fair", "proportional")
    combined: Callable[[list[dict[tuple[str, str], list[float]]]], dict[str, float]] | None = None
    value: Callable[[dict], Any] = goodput  # what `measure` gets of each flow's ns-2 results
    # A numeric row's spread from its per-seed values, where half their range (the default) is not
    # the scatter of the statistic the row takes of them (csfq-table2's median).
    spread: Callable[[list[float]], float] | None = None
    # Where each seed has its own scenarios (csfq-table2 draws its transfers from the seed):
    # them, by seed; `scenarios` is then the first seed's.
    seeded: Callable[[int], dict[tuple[str, str], Scenario]] | None = None

    # Why the values give no verdict (the file's `reference_only`; docs/ns2-reproductions.md).
    reference_only: str = ""

    def scenarios_for(self, seed: int) -> dict[tuple[str, str], Scenario]:
        return self.seeded(seed) if self.seeded else self.scenarios


def demo_rows(runs: dict[tuple[str, str], list[float]]) -> dict[str, object]:
    return {f"udp.{q}": runs["demo", q][0] for q in BASELINES}


def fig3a_rows(runs: dict[tuple[str, str], list[float]]) -> dict[str, object]:
    goodput = {q: np.array(runs["fig3a", q]) for q in BASELINES}
    offered = (np.arange(csfq_fig3a.FIG3A_FLOWS) + 1) * csfq_fig3a.FIG3A_FAIR_MBPS
    fairness = csfq_fig3a.fig3a_metrics(goodput, offered * LINK_MBPS / offered.sum()).set_index("mechanism")
    rows: dict[str, object] = {"drr.largest_deviation": float(fairness.loc["drr", "largest_abs_deviation"])}
    for q in BASELINES:
        fair, proportional = fairness.loc[q, "rms_to_fair_mbps"], fairness.loc[q, "rms_to_proportional_mbps"]
        rows[f"{q}.allocation"] = "fair" if fair < proportional else "proportional"
    return rows


FIG4_N = tuple(csfq_fig4.FULL.sweep)


def fig4_curve(runs: dict[tuple[str, str], list[float]], q: str) -> dict[int, float]:
    """The TCP's (flow 0's) goodput over its max-min share 10/N Mb/s (every UDP sends twice that), by N."""
    return {n: runs[f"n{n}", q][0] / (LINK_MBPS / n) for n in FIG4_N}


def fig4_statistics(curves: dict[str, dict[int, float]]) -> dict[str, float]:
    """csfq_fig4.fig4_rows' statistics of the baselines' curves."""
    few = [n for n in FIG4_N if n <= csfq_fig4.FIG4_DRR_GOOD_UP_TO]
    return {
        "drr.few_flows.min": min(curves["drr"][n] for n in few),
        "drr.most_flows": curves["drr"][FIG4_N[-1]],
        "baseline.max": max(max(curves["red"][n], curves["droptail"][n]) for n in FIG4_N),
    }


def fig4_rows(runs: dict[tuple[str, str], list[float]]) -> dict[str, object]:
    """One seed's statistics: their spread over the seeds is what the recorded `spread` gives."""
    return dict(fig4_statistics({q: fig4_curve(runs, q) for q in BASELINES}))


def fig4_combined(per_seed: list[dict[tuple[str, str], list[float]]]) -> dict[str, float]:
    """The statistics of the curves averaged over the seeds, as csfq_fig4 computes ours."""
    curves = {q: {n: statistics.fmean(fig4_curve(runs, q)[n] for runs in per_seed) for n in FIG4_N} for q in BASELINES}
    return fig4_statistics(curves)


# csfq-fig6: flow 0 (UDP-0 at its 10/11 Mb/s fair share, or a TCP in its place) across k
# congested links; its goodput over that fair share, as csfq_fig6 (flow0_normalised) measures ours.
FIG6_K = tuple(csfq_fig6.FULL.sweep)
FIG6_FLOW0 = {"udp": (csfq_fig6.UDP0, "UDP-0 forwarded"), "tcp": (csfq_fig6.TCP0, "TCP / fair share")}
FIG6_NEAR_ZERO = ("red", "droptail")  # the baselines of the fig6b.red_fifo_near_zero rows


def fig6_flow0(runs: dict[tuple[str, str], list[float]], traffic: str, k: int, q: str) -> float:
    return runs[f"{traffic}{k}", q][0] / (csfq_fig6.FIG6_UDP0_BPS / MBPS)


def fig6_rows(runs: dict[tuple[str, str], list[float]]) -> dict[str, object]:
    """The larger of RED's and FIFO's TCP at each k; every baseline's flow 0 as other readings
    (in the note: ns-2 has no CSFQ or FRED for the orderings they belong to)."""
    rows: dict[str, object] = {}
    for k in FIG6_K:
        key = f"fig6b.red_fifo_near_zero.k{k}"
        rows[key] = max(fig6_flow0(runs, "tcp", k, q) for q in FIG6_NEAR_ZERO)
        for traffic, (_, what) in FIG6_FLOW0.items():
            for q in BASELINES:
                rows[f"{key}|{what}, {PAPER_NAMES[q]}"] = fig6_flow0(runs, traffic, k, q)
    return rows


def fig6_combined(per_seed: list[dict[tuple[str, str], list[float]]]) -> dict[str, float]:
    """The larger of RED's and FIFO's seed means, as csfq_fig6 computes ours."""
    return {
        f"fig6b.red_fifo_near_zero.k{k}": max(
            statistics.fmean(fig6_flow0(runs, "tcp", k, q) for runs in per_seed) for q in FIG6_NEAR_ZERO
        )
        for k in FIG6_K
    }


# csfq-table1: the ON-OFF source's (flow 0) packets delivered, scaled to the paper's 6758 sent, as
# ours. ns-2 reports delivered and dropped packets, so its sent count is their sum: it leaves out
# the packets queued or in flight at the end, at most the 64 KB buffer's 64 of about 7000 (1 %).
def delivered_dropped(flow: dict) -> tuple[int, int]:
    return flow["delivered_packets"], flow["drops"]


def table1_rows(runs: dict[tuple[str, str], list[Any]]) -> dict[str, object]:
    rows: dict[str, object] = {}
    for q in BASELINES:
        delivered, dropped = runs["table1", q][0]
        rows[f"{q}.delivered"] = delivered * csfq_table1.ONOFF_SENT / (delivered + dropped)
        rows[f"{q}.delivered|sent (unscaled)"] = delivered + dropped
    return rows


# csfq-table2: each run's mean transfer time (ms), the median over the seeds, as ours. The table
# prints no DRR row.
TABLE2_BASELINES = ("droptail", "red")


def table2_scenarios(seed: int) -> dict[tuple[str, str], Scenario]:
    """csfq-table2's scenario for `seed` (its own 60 transfers) under FIFO and RED."""
    flows = csfq_table2.web_flows(seed, csfq_table2.GAP)
    duration = csfq_table2.FULL.duration
    return {
        ("table2", q): single_link_scenario(qdisc, flows, duration, seed)
        for q, qdisc in mechanisms().items()
        if q in TABLE2_BASELINES
    }


def transfer_ms(flow: dict) -> float:
    """A transfer's time (ms) from its start until its last packet was ACKed; one that did not
    finish counts until the run's end (a lower bound), as ours (csfq_table2.transfer_metrics)."""
    end = flow["completed"] if flow["completed"] is not None else csfq_table2.FULL.duration
    return 1000 * (end - flow["start"])


def table2_rows(runs: dict[tuple[str, str], list[float]]) -> dict[str, object]:
    rows: dict[str, object] = {}
    for q in TABLE2_BASELINES:
        _udp, *transfers = runs["table2", q]
        rows[f"{q}.mean_time"] = statistics.fmean(transfers)
        rows[f"{q}.mean_time|median transfer"] = statistics.median(transfers)
    return rows


def median_half_interval(values: list[float]) -> float:
    """Half the width of the distribution-free 95 % interval of the median of `values`: from the
    j-th smallest to the j-th largest, j the largest with P(Binomial(n, 1/2) < j) ≤ 2.5 % (the
    6th to the 15th of 20). Half the range of heavy-tailed values would swamp the median's scatter."""
    n, x = len(values), sorted(values)
    j = 0
    while sum(math.comb(n, i) for i in range(j + 1)) / 2**n <= 0.025:
        j += 1
    return (x[n - j] - x[j - 1]) / 2


def table2_combined(per_seed: list[dict[tuple[str, str], list[float]]]) -> dict[str, float]:
    """The median over the seeds of each run's mean, as ours (csfq_table2.typical_metrics)."""
    return {
        f"{q}.mean_time": statistics.median(statistics.fmean(runs["table2", q][1:]) for runs in per_seed)
        for q in TABLE2_BASELINES
    }


# csfq-table3: the 19 TCPs' (flows 1…19) packets per 100 s, the mean over the flows, as ours.
def table3_rows(runs: dict[tuple[str, str], list[float]]) -> dict[str, object]:
    rows: dict[str, object] = {}
    for q in BASELINES:
        udp, *tcps = runs["table3", q]
        packets = np.array(tcps) * MBPS * 100 / (8 * PACKET_BYTES)
        rows[f"{q}.tcp_packets"] = float(packets.mean())
        rows[f"{q}.tcp_packets|std over the flows"] = float(packets.std())
        rows[f"{q}.tcp_packets|UDP (Mb/s)"] = udp
    return rows


# bred-vs-red: RED in BRED Figs. 10 (7 TCPs) and 11 (7 TCPs and 3 CBRs); flows in bred.SOURCES order.
BRED_TCPS = [i for i, name in enumerate(bred.SOURCES) if name in bred.TCPS]
BRED_CBRS = [i for i, name in enumerate(bred.SOURCES) if name in bred.CBRS]


def bred_rows(runs: dict[tuple[str, str], list[float]]) -> dict[str, object]:
    fig11 = runs["fig11", "red"]
    return {
        "fig10.red.long_run_fairness": bred.fairness(runs["fig10", "red"]),
        "fig11.red.tcp_total": sum(fig11[i] for i in BRED_TCPS),
        "fig11.red.cbr_min": min(fig11[i] for i in BRED_CBRS),
        "fig11.red.cbr_max": max(fig11[i] for i in BRED_CBRS),
    }


def bred_combined(per_seed: list[dict[tuple[str, str], list[float]]]) -> dict[str, float]:
    """The smallest and largest CBR of the goodputs averaged over the trials, as bred_vs_red's."""
    mean = [statistics.fmean(runs["fig11", "red"][i] for runs in per_seed) for i in BRED_CBRS]
    return {"fig11.red.cbr_min": min(mean), "fig11.red.cbr_max": max(mean)}


# bred-buffer: RED's TCPs at a 50 ms buffer (BRED Fig. 7: 7 TCPs, 3 CBRs at 10 Mb/s on 10 Mb/s).
def bred_buffer_rows(runs: dict[tuple[str, str], list[float]]) -> dict[str, object]:
    goodputs = runs["fig7-50ms", "red"]
    return {
        "red.50ms.tcp_total": sum(goodputs[i] for i in BRED_TCPS),
        "red.50ms.tcp_total|CBR total": sum(goodputs[i] for i in BRED_CBRS),
    }


# bred-short-lived: RED's TCPs in each period of BRED Fig. 6's schedule with CBRs active. One
# ns-2 run per period, measured over it (the export measures one window): the schedule's flows
# that have started by the period's end, run to it.
def active(start: float, end: float) -> set[str]:
    """The sources of BRED Fig. 6's schedule active for the whole of the period (start, end)."""
    return {n for n, (first, last) in bred_short_lived.FIG6_SCHEDULE.items() if first <= start and end <= last}


SHORT_LIVED_PERIODS = [
    (start, end)
    for start, end in bred_short_lived.periods(bred_short_lived.FIG6_SCHEDULE, bred.DURATION)
    if active(start, end) & set(bred.CBRS)
]


def period_key(start: float, end: float) -> str:
    return f"p{start:g}_{end:g}"


def short_lived_scenario(start: float, end: float) -> Scenario:
    spec = bred.ten_sources_scenario(
        bred_short_lived.FIG6_LINK,
        bred.red_qdisc(bred.buffer_packets(bred_short_lived.FIG6_LINK)),
        bred_short_lived.FIG6_CBR_RATE,
        schedule=bred_short_lived.FIG6_SCHEDULE,
        duration=end,
    )
    spec["flows"] = [flow for flow in spec["flows"] if flow["start"] < end]
    spec["simulation"]["warmup"] = start
    return Scenario.from_dict(spec)


def named_goodput(flow: dict) -> tuple[str, float]:
    return flow["name"], goodput(flow)


def short_lived_rows(runs: dict[tuple[str, str], list[tuple[str, float]]]) -> dict[str, object]:
    rows: dict[str, object] = {}
    for start, end in SHORT_LIVED_PERIODS:
        flows, goodputs = active(start, end), dict(runs[period_key(start, end), "red"])
        key = f"red.{period_key(start, end)}.tcp_total"
        rows[key] = sum(goodputs[n] for n in bred.TCPS if n in flows)
        rows[f"{key}|CBR total"] = sum(goodputs[n] for n in bred.CBRS if n in flows)
    return rows


# fred-fragile: RED's rows of FRED Tables 1 (window 16) and 2 (64 KB), from the experiment's own
# row functions on the ns-2 runs' metrics (fred_fragile.fragile_metrics' definitions). FRED's
# NetBSD 1.2 TCP has no ns-2.35 agent; ns-2's New-Reno with the paper's BSD timers stands in.
FRED_TCP = {**NETBSD_TCP, "profile": "ns2"}
FRED_REFERENCE_ONLY = (
    "FRED's paper did not run ns-2 (its own simulator, with the §11.1 ATM switch), and ns-2.35 has no "
    "agent for its NetBSD 1.2 TCP: ns-2's New-Reno with the same timers stands in"
)
FRAGILE_WINDOWS = (fred_fragile.FRAGILE_WINDOW, WINDOW_64KB)


def fragile_metrics(flows: list[dict]) -> dict[str, float]:
    """fred_fragile.fragile_metrics' measures from ns-2's flows (fragile first): goodput over
    the window, drops over arrivals at the bottleneck."""
    goodput = np.array([f["goodput_bps"] for f in flows])
    drops = np.array([f["drops"] for f in flows])
    loss = drops / np.array([f["arrivals"] for f in flows])
    return {
        "bw_max": pct(goodput[0] / fred_fragile.FRAGILE_MAX_BPS),
        "bw_link": pct(goodput[0] / fred_fragile.LINK_BPS),
        "bw_drop": (goodput[0] / goodput.sum()) / (drops[0] / drops.sum()) if drops[0] > 0 else np.nan,
        "fragile_loss": pct(loss[0]),
        "robust_loss": pct(loss[1:].mean()),
    }


def fragile_table_rows(frames: dict[int, pd.DataFrame]) -> dict[str, float]:
    """The numeric rows of Tables 1 and 2 (`frames`: the metrics by buffer, per window); a row
    undefined in a run (BW%/DROP% without a fragile drop) is left out of it."""
    rows = fred_fragile._table1_rows(frames[fred_fragile.FRAGILE_WINDOW]) + fred_fragile._table2_rows(
        frames[WINDOW_64KB]
    )
    return {r.key: float(r.ours) for r in rows if not r.is_ordering and np.isfinite(r.ours)}


def fragile_frames(runs: dict[tuple[str, str], list[dict]]) -> dict[int, pd.DataFrame]:
    return {
        w: pd.DataFrame([fragile_metrics(runs[f"w{w}-bs{bs}", "red"]) for bs in fred_fragile.BUFFERS])
        for w in FRAGILE_WINDOWS
    }


def fragile_rows(runs: dict[tuple[str, str], list[dict]]) -> dict[str, object]:
    return dict(fragile_table_rows(fragile_frames(runs)))


def fragile_combined(per_seed: list[dict[tuple[str, str], list[dict]]]) -> dict[str, float]:
    """The rows of each metric's mean over the runs (an undefined one skipped), as ours."""
    frames = [fragile_frames(runs) for runs in per_seed]
    return fragile_table_rows({w: pd.concat([f[w] for f in frames]).groupby(level=0).mean() for w in FRAGILE_WINDOWS})


# fred-cbr: RED's rows of FRED Figs. 6 (the CBR and one TCP, from 5 s) and 7 (the CBR in each
# 20-s epoch after a TCP joins, from 5 s into it): one ns-2 run per window, to its end and
# measured over it (the export measures one window), ns-2's New-Reno for NetBSD's (FRED_TCP).
def fred_cbr_scenario(tcp_starts: list[float], start: float, end: float) -> Scenario:
    spec = fred_cbr.cbr_scenario("red", fred_cbr.paper_gateway("red"), [t for t in tcp_starts if t < end], end)
    for flow in spec["flows"][1:]:
        flow["tcp"] = FRED_TCP
    spec["simulation"]["warmup"] = start
    return Scenario.from_dict(spec)


FRED_EPOCHS = [fred_cbr.EPOCH * (k + 1) for k in range(fred_cbr.TCP_JOINERS)]  # each epoch's start


def fred_cbr_rows(runs: dict[tuple[str, str], list[float]]) -> dict[str, object]:
    cbr, tcp = runs["fig6", "red"]
    rows: dict[str, object] = {"fig6.red.1tcp.cbr": cbr, "fig6.red.1tcp.tcp": tcp}
    for k, start in enumerate(FRED_EPOCHS):
        rows[f"fig7.red.tcps{k + 1}.cbr"] = runs[f"epoch{start:g}", "red"][0]
    return rows


DEMO_NOTE = (
    "the UDP's goodput (Mb/s), the last 10 s of 20 s, as ours: the demo's scenario (scenarios/csfq-fig3b.toml, "
    "31 NewReno TCPs of the ns2 profile) exported by aqmlab.ns2.export"
)


def experiments() -> list[Baselines]:
    demo_base = aqmlab.load(aqmlab.scenarios_dir() / "csfq-fig3b.toml").with_tcp(csfq.TCP)
    demo_absent = {"udp.csfq": NOT_CSFQ, "udp.fred-1": NOT_FRED, "order.udp": f"{NOT_CSFQ}; {NOT_FRED}"}
    rfc_rows = ("udp.droptail", "udp.red", "udp.drr", "udp.csfq", "udp.fred-1", "order.udp")
    demo_absent |= {f"{key}.alt_rfc": NOT_RFC for key in rfc_rows}
    demo_notes = {"*": DEMO_NOTE}
    fig3a_flows = [
        {"name": f"udp{i}", "type": "cbr", "rate": (i + 1) * csfq_fig3a.FIG3A_FAIR_MBPS * MBPS, "jitter": True}
        for i in range(csfq_fig3a.FIG3A_FLOWS)
    ]
    fig3a_scenario = demo_scenario("csfq-fig3a", fig3a_flows, csfq_fig3a.FULL)
    fig4_scenarios = {
        f"n{n}": demo_scenario(f"csfq-fig4-n{n}", csfq_fig4.fig4_flows(n), csfq_fig4.FULL) for n in FIG4_N
    }
    buffer10, buffer11 = bred.buffer_packets(bred_vs_red.FIG10_LINK), bred.buffer_packets(bred_vs_red.FIG11_LINK)
    bred_scenarios = {
        ("fig10", "red"): bred.ten_sources_scenario(
            bred_vs_red.FIG10_LINK, bred.red_qdisc(buffer10), tcp_only=True, sample=bred_vs_red.FIG10_SAMPLE
        ),
        ("fig11", "red"): bred.ten_sources_scenario(
            bred_vs_red.FIG11_LINK,
            bred.red_qdisc(buffer11),
            bred_vs_red.FIG11_CBR_RATE,
            sample=bred_vs_red.FIG11_SAMPLE,
        ),
    }
    fig6_scenarios = {
        f"{traffic}{k}": csfq_fig6.parking_lot_scenario(f"csfq-fig6-{traffic}-k{k}", k, flow, csfq_fig6.FULL)
        for traffic, (flow, _) in FIG6_FLOW0.items()
        for k in FIG6_K
    }
    csfq_fred = f"{NOT_CSFQ}; {NOT_FRED}"
    fig6_absent = {"fig6a.csfq.most_links": NOT_CSFQ, "fig6b.fred_over_csfq.most_links": csfq_fred}
    for k in FIG6_K:
        # ns-2's DRR, RED and FIFO in these orderings are in the notes of fig6b.red_fifo_near_zero.
        fig6_absent |= {f"order.fig6a.k{k}": csfq_fred, f"order.fig6b.k{k}": csfq_fred}
        fig6_absent[f"fig6b.csfq_vs_drr.k{k}"] = NOT_CSFQ
    table3_absent = {
        "csfq.tcp_packets": NOT_CSFQ,
        "fred.tcp_packets": NOT_FRED,
        "order.tcp_packets": f"{NOT_CSFQ}; {NOT_FRED}",
    }
    table3_keys = [f"{q}.tcp_packets" for q in ("drr", "csfq", "fred", "red", "droptail")] + ["order.tcp_packets"]
    table3_absent |= {f"{key}.alt_rfc": NOT_RFC for key in table3_keys}
    not_bred = "BRED is not in ns-2.35"
    bred_absent = {
        "order.fig10.sample_fairness.bred_gt_red": not_bred,
        "order.fig10.worst_sample_fairness.bred_gt_red": not_bred,
        "fig11.bred.cbr_max": not_bred,
        "fig11.bred.cbr_max_5s": not_bred,
        "order.fig11.tcp_total.bred_gt_red": not_bred,
        "fig11.bred.tcp_min_share": not_bred,
    }
    bred_note = (
        "RED (min_th B/4, max_th B/2, max_p 0.1, w_q 0.002, packets) under ns-2's Tahoe (ns2 profile, window 1000), "
        "500-byte packets, 100 s trials measured over the latter half, as ours"
    )
    bred_mechanisms = {
        "order.bred.tcp_total.50ms_lt_100ms": not_bred,
        "bred.50ms.tcp_total": not_bred,
        "bred.gain_50_100ms": not_bred,
    }
    bred_mechanisms |= {f"bred.gain_100_{b * 1000:g}ms": not_bred for b in bred_buffer.FULL.sweep if b > 0.1}
    short_lived_absent = {"bred.tcp_min_share": not_bred}
    for start, end in SHORT_LIVED_PERIODS:
        key = period_key(start, end)
        short_lived_absent |= {f"bred.{key}.cbr_max": not_bred, f"bred.{key}.tcp_total": not_bred}
        if (start, end) in bred_short_lived.PAPER_FIG6_BOUNDS:
            short_lived_absent[f"eq14.bound.{key}"] = "arithmetic (BRED's eq. 14), not a simulation"
    bred_red_note = (
        "RED (min_th B/4, max_th B/2, max_p 0.1, w_q 0.002, packets) under ns-2's Tahoe (ns2 profile, window 1000), "
        "500-byte packets"
    )
    return [
        Baselines(
            "fred-fragile",
            {
                (f"w{w}-bs{bs}", "red"): Scenario.from_dict(
                    fred_fragile.fragile_scenario("red", bs, w, duration=fred_fragile.FULL.duration, tcp=FRED_TCP)
                )
                for w in FRAGILE_WINDOWS
                for bs in fred_fragile.BUFFERS
            },
            tuple(fred_fragile.FULL.seeds),
            fragile_rows,
            {},
            {
                "*": (
                    "FRED Fig. 1: the fragile TCP (36 ms, window 16 or 64 KB) and four 6 ms TCPs on 45 Mb/s, RED "
                    "(BS/4, BS/2, max_p 0.02, w_q 0.002) of BS packets, 636-byte packets, 50 s measured over the "
                    "second half, as ours, but ns-2's New-Reno (ns2 profile) with the paper's BSD timers (500 ms "
                    "tick, 1 s minimum RTO, 200 ms delayed ACKs) for the NetBSD stack; loss: drops over arrivals at "
                    "the bottleneck; the mean over the runs, as ours"
                )
            },
            "fred-fragile's scenarios (fred_fragile.fragile_scenario) with ns-2's New-Reno for NetBSD's",
            value=lambda flow: flow,
            combined=fragile_combined,
            reference_only=FRED_REFERENCE_ONLY,
        ),
        Baselines(
            "fred-cbr",
            {
                ("fig6", "red"): fred_cbr_scenario([fred_cbr.FIG6_TCP_START], fred_cbr.SETTLE, fred_cbr.FIG6_DURATION),
            }
            | {
                (f"epoch{start:g}", "red"): fred_cbr_scenario(
                    FRED_EPOCHS, start + fred_cbr.SETTLE, start + fred_cbr.EPOCH
                )
                for start in FRED_EPOCHS
            },
            tuple(fred_cbr.FULL.seeds),
            fred_cbr_rows,
            {},
            {
                "*": (
                    "FRED Figs. 6-7: an 8 Mb/s CBR and TCPs (one from 1 s; or one joining every 20 s) on 10 Mb/s, "
                    "RED 64 packets (16/32, max_p 0.02), 636-byte packets, but ns-2's New-Reno (ns2 profile) with "
                    "the paper's BSD timers for the NetBSD stack; throughput (Mb/s on the wire) over 5-50 s (Fig. 6) "
                    "or each epoch after its first 5 s (Fig. 7), one run per window, to its end; mean over the runs"
                )
            },
            "fred-cbr's scenarios (fred_cbr.cbr_scenario) with ns-2's New-Reno for NetBSD's, one run per window",
            reference_only=FRED_REFERENCE_ONLY,
        ),
        Baselines(
            "bred-buffer",
            {
                ("fig7-50ms", "red"): Scenario.from_dict(
                    bred.ten_sources_scenario(
                        bred_buffer.FIG7_LINK,
                        bred.red_qdisc(bred.buffer_packets(bred_buffer.FIG7_LINK, 0.05)),
                        bred_buffer.FIG7_CBR_RATE,
                    )
                )
            },
            tuple(bred_buffer.FULL.seeds),
            bred_buffer_rows,
            bred_mechanisms,
            {
                "*": f"{bred_red_note}; Fig. 7's 7 TCPs and 3 CBRs at 10 Mb/s on 10 Mb/s, a 50 ms buffer "
                f"({bred.buffer_packets(bred_buffer.FIG7_LINK, 0.05)} packets), 100 s trials measured over the "
                "latter half, as ours; the TCPs' total goodput (Mb/s), mean over the trials"
            },
            "bred-buffer's scenario at 50 ms (bred.ten_sources_scenario: Fig. 7)",
        ),
        Baselines(
            "bred-short-lived",
            {(period_key(*period), "red"): short_lived_scenario(*period) for period in SHORT_LIVED_PERIODS},
            tuple(bred_short_lived.FULL.seeds),
            short_lived_rows,
            short_lived_absent,
            {
                "*": f"{bred_red_note}; Fig. 6's schedule of short-lived TCPs and 4.5 Mb/s CBRs on 4.5 Mb/s, "
                f"buffer {bred.buffer_packets(bred_short_lived.FIG6_LINK)} packets; one run per period, to its end, "
                "measured over it (ours: one 100 s run, the mean of its 5-s samples in the period); the active "
                "TCPs' total goodput (Mb/s), mean over the trials"
            },
            "bred-short-lived's schedule (bred.ten_sources_scenario: Fig. 6), one run per period",
            value=named_goodput,
        ),
        Baselines(
            "bred-vs-red",
            {key: Scenario.from_dict(spec) for key, spec in bred_scenarios.items()},
            tuple(bred_vs_red.FULL.seeds),
            bred_rows,
            bred_absent,
            {
                "*": bred_note,
                "fig10.red.long_run_fairness": f"{bred_note}; Fig. 10's 7 TCPs on 0.8 Mb/s: eq. 17's F of the "
                "goodputs per trial, mean over the trials",
                "fig11.red.tcp_total": f"{bred_note}; Fig. 11 (7 TCPs, 3 CBRs at 4 Mb/s, 4.5 Mb/s): the TCPs' "
                "total goodput (Mb/s), mean over the trials",
                "fig11.red.cbr_min": f"{bred_note}; Fig. 11: the smallest CBR's goodput averaged over the trials "
                "(spread: half the range of each trial's smallest)",
                "fig11.red.cbr_max": f"{bred_note}; Fig. 11: the largest CBR's goodput averaged over the trials "
                "(spread: half the range of each trial's largest)",
            },
            "bred-vs-red's scenarios (bred.ten_sources_scenario: Figs. 10 and 11)",
            combined=bred_combined,
        ),
        Baselines(
            "demo",
            with_baselines({"demo": demo_base}),
            SEEDS,
            demo_rows,
            demo_absent,
            demo_notes,
            "the demo's scenario (scenarios/csfq-fig3b.toml)",
        ),
        Baselines(
            "csfq-fig3b",
            with_baselines({"demo": demo_base}),
            SEEDS,
            demo_rows,
            demo_absent | {"udp.fred": NOT_FRED},
            demo_notes,
            "the demo's scenario (scenarios/csfq-fig3b.toml)",
        ),
        Baselines(
            "csfq-fig3a",
            with_baselines({"fig3a": fig3a_scenario}),
            SEEDS,
            fig3a_rows,
            {
                "csfq.lowest_vs_fair": NOT_CSFQ,
                "csfq.highest_vs_fair": NOT_CSFQ,
                "order.largest_deviation": NOT_CSFQ,
                "csfq.allocation": NOT_CSFQ,
                "fred-1.allocation": NOT_FRED,
                "fred-2.allocation": NOT_FRED,
            },
            {
                "*": (
                    "32 jittered CBRs at (i+1)·0.3125 Mb/s on the demo's dumbbell, the last 10 s of 20 s, as ours; "
                    "allocation: the nearer (RMS over the flows) of the fair and the proportional shares"
                ),
                "drr.largest_deviation": (
                    "32 jittered CBRs at (i+1)·0.3125 Mb/s on the demo's dumbbell, the last 10 s of 20 s, as ours; "
                    "DRR's largest |goodput / 0.3125 Mb/s − 1| over the flows"
                ),
            },
            "csfq-fig3a's scenario (csfq_fig3a: 32 CBRs on the demo's dumbbell)",
            categories=frozenset(f"{q}.allocation" for q in BASELINES),
        ),
        Baselines(
            "csfq-fig4",
            with_baselines(fig4_scenarios),
            tuple(csfq_fig4.FULL.seeds),
            fig4_rows,
            {"crossover.csfq_gt_drr": NOT_CSFQ, "csfq_minus_fred.min": f"{NOT_CSFQ}; {NOT_FRED}"},
            {
                "*": (
                    "one NewReno TCP (ns2 profile) and N − 1 jittered CBRs at 2·10/N Mb/s, N = 2…32, the last 10 s "
                    "of 20 s; the TCP's goodput over 10/N Mb/s averaged over the seeds at each N, then the row's "
                    "statistic over N, as ours (spread: half the range of the statistic of each seed's own curve)"
                )
            },
            "csfq-fig4's scenarios (csfq_fig4: a TCP and N − 1 CBRs on the demo's dumbbell)",
            combined=fig4_combined,
        ),
        Baselines(
            "csfq-table1",
            {
                ("table1", q): single_link_scenario(qdisc, csfq_table1.FLOWS, csfq_table1.FULL.duration)
                for q, qdisc in mechanisms().items()
                if q in BASELINES
            },
            tuple(csfq_table1.FULL.seeds),
            table1_rows,
            {"csfq.delivered": NOT_CSFQ, "order.delivered": NOT_CSFQ, "fred.delivered": NOT_FRED},
            {
                "*": (
                    f"one ON-OFF source (exponential ON 100 ms / OFF 1900 ms, 10 Mb/s when ON) and 19 NewReno TCPs "
                    f"(ns2 profile), {csfq_table1.ONOFF_DURATION:.0f} s, as ours; the ON-OFF source's packets "
                    "delivered × 6758 / sent, sent being ns-2's delivered + dropped (packets still queued at the "
                    "end, at most 64 of about 7000, not counted), mean over the seeds"
                )
            },
            "csfq-table1's scenario (csfq._tables.single_link_scenario: an ON-OFF source and 19 TCPs)",
            value=delivered_dropped,
        ),
        Baselines(
            "csfq-table2",
            table2_scenarios(1),
            tuple(csfq_table2.FULL.seeds),
            table2_rows,
            {"csfq.mean_time": NOT_CSFQ, "order.mean_time": f"{NOT_CSFQ}; {NOT_FRED}"},
            {
                "*": (
                    "a 10 Mb/s UDP and 60 NewReno transfers (ns2 profile, initial RTO 6 s) of Pareto(1.06) sizes, "
                    "mean 20 packets, at exponential gaps of mean 0.05 s, the seed's own as ours (csfq_table2."
                    "web_flows), 200 s; each run's mean transfer time (ms; from the start until the agent's `done`, "
                    "its last packet ACKed; unfinished: until the run's end), the median over the seeds, as ours "
                    "(spread: half the width of the median's distribution-free 95 % interval, the 6th to the 15th "
                    "of the 20 per-seed means)"
                )
            },
            "csfq-table2's scenarios (csfq_table2.web_flows: a UDP and each seed's 60 transfers)",
            value=transfer_ms,
            combined=table2_combined,
            spread=median_half_interval,
            seeded=table2_scenarios,
        ),
        Baselines(
            "csfq-table3",
            {
                ("table3", q): single_link_scenario(
                    qdisc,
                    csfq_table3.flows(csfq.TCP),
                    csfq_table3.FULL.duration,
                    warmup=csfq_table3.FULL.warmup,
                    delay="100ms",
                    buffer=csfq_table3.LATENCY_BUFFER,
                )
                for q, qdisc in mechanisms(buffer=csfq_table3.LATENCY_BUFFER, k=csfq_table3.LATENCY_K).items()
                if q in BASELINES
            },
            tuple(csfq_table3.FULL.seeds),
            table3_rows,
            table3_absent,
            {
                "*": (
                    "a 10 Mb/s UDP and 19 NewReno TCPs (ns2 profile) on a 10 Mb/s, 100 ms link, 256 KB buffer, "
                    "RED 16/32 KB, 100 s measured after 20 s, as ours; the TCPs' packets per 100 s, mean over the "
                    "19 flows, then over the seeds"
                )
            },
            "csfq-table3's scenario (csfq._tables.single_link_scenario: a UDP and 19 TCPs, 100 ms)",
        ),
        Baselines(
            "csfq-fig6",
            with_baselines(fig6_scenarios),
            tuple(csfq_fig6.FULL.seeds),
            fig6_rows,
            fig6_absent,
            {
                "*": (
                    "the parking lot of k = 1…5 congested 10 Mb/s, 1 ms links, ten jittered 2 Mb/s CBRs crossing "
                    "each, flow 0 across all, the last 10 s of 20 s, as ours; the larger of RED's and FIFO's "
                    "NewReno TCP (ns2 profile) in flow 0's place, goodput over its 10/11 Mb/s fair share, each "
                    "averaged over the seeds (spread: half the range of each seed's larger)"
                )
            },
            "csfq-fig6's parking lots (csfq_fig6.parking_lot_scenario: UDP-0 or a TCP as flow 0)",
            combined=fig6_combined,
        ),
    ]


def record(experiment: Baselines, per_seed: list[dict[tuple[str, str], list[float]]], version: str) -> dict:
    values: dict[str, list[object]] = {}
    for runs in per_seed:
        for key, value in experiment.measure(runs).items():
            values.setdefault(key, []).append(value)
    exact = experiment.combined(per_seed) if experiment.combined else {}
    rows: dict[str, dict[str, object]] = {}
    for key, seeds in values.items():
        if "|" in key:  # another reading of a row, "<key>|<label>": in that row's note
            continue
        note = experiment.notes.get(key, experiment.notes["*"])
        if key in experiment.categories:
            counts = {c: seeds.count(c) for c in dict.fromkeys(seeds)}
            category = max(counts, key=counts.__getitem__)
            tally = ", ".join(f"{c} in {n} of {len(seeds)} seeds" for c, n in counts.items())
            rows[key] = {"value": category, "note": f"{note}; {tally}"}
            continue
        entry = combine(seeds, key in experiment.ordered)
        if experiment.spread and "spread" in entry:
            entry["spread"] = round(experiment.spread(seeds), 4)
        if key in exact:
            entry["value"] = round(exact[key], 4)
        others = [f"{o.split('|', 1)[1]}: {summary(v, False)}" for o, v in values.items() if o.startswith(f"{key}|")]
        parts = [note, f"per seed {'; '.join(shown(v) for v in seeds)}", *others]
        rows[key] = entry | {"note": "; ".join(parts)}
    qdiscs = ", ".join(dict.fromkeys(PAPER_NAMES[q] for _, q in experiment.scenarios))
    script = (
        f"{experiment.what} with {qdiscs}, written for ns-2 by aqmlab.ns2.export (`aqmlab export ns2`), as run "
        f"by {DRIVER}"
    )
    data = reference(experiment.id, version, script, experiment.seeds, FULL_ONLY, rows, experiment.not_in_ns2, COMMAND)
    return data | {"reference_only": experiment.reference_only} if experiment.reference_only else data


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Runs the CSFQ and BRED baselines in ns-2 and records their rows.")
    parser.add_argument("--only", nargs="+", metavar="ID", help="experiment ids (default: all)")
    parser.add_argument("--jobs", type=int, default=2, help="ns processes at once (default 2)")
    args = parser.parse_args(argv)
    if shutil.which("ns") is None:
        print("error: ns (ns-2.35) is not on PATH; install it (Debian, Ubuntu: apt-get install ns2)", file=sys.stderr)
        return 2
    known = experiments()
    unknown = sorted(set(args.only or ()) - {e.id for e in known})
    if unknown:
        print(f"error: --only: unknown experiment(s) {unknown}; known: {[e.id for e in known]}", file=sys.stderr)
        return 2
    chosen = [e for e in known if not args.only or e.id in args.only]
    # Each (scenario, qdisc, seed) once: demo and csfq-fig3b share theirs.
    jobs = {
        (*key, seed): (scenario, seed)
        for e in chosen
        for seed in e.seeds
        for key, scenario in e.scenarios_for(seed).items()
    }
    with concurrent.futures.ThreadPoolExecutor(max_workers=args.jobs) as pool:
        futures = {key: pool.submit(ns2_flows, *job) for key, job in jobs.items()}
        done = {key: future.result() for key, future in futures.items()}
    version = ns2_version()
    for e in chosen:
        per_seed = [{key: [e.value(f) for f in done[(*key, seed)]] for key in e.scenarios} for seed in e.seeds]
        path = OUT / f"{e.id}.json"
        path.write_text(json.dumps(record(e, per_seed, version), indent=2, ensure_ascii=False) + "\n")
        print(f"ns2-baselines: wrote {path.relative_to(REPO)}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
