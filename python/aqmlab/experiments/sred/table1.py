"""SRED §VIII, Table I: one UDP source sending a 576-byte packet "exactly once every 4 msec"
and 100 persistent TCPs on the symmetrical network under Full SRED, 100 s, "the first 15
seconds are not used for statistics collection".

The paper's loads: the UDP's packets received in the last 85 s; the TCPs' the increase of
the receivers' next expected byte over 536. Both are our goodput in 576-byte packets (a
TCP's goodput counts in-order segments). Hits/packet = hits (from 15 s) / load.

| | UDP | TCP (100) |
|---|---|---|
| Total load (packets) | 20,821 | 808,300 |
| Load per connection | 20,821 | 8,083 |
| Hits | 494 | 11,000 |
| Hits/packet | .0237 | .0136 |

"the 'overactive' connection, with a load of about 2.58 times that of the average 'other'
connection, has a hit/packet ration about 1.74 as large"; a hit's probability is the
flow's share π_i (eq. 3.4), so theory expects the ratio near the load ratio, and the paper
finds the CBR's "slightly smaller than what is predicted".

Rows (reproduction-targets, sred-table1): load ratio 2.58 ± 25 % (it follows from the TCPs'
share of the link); hits/packet ratio in [1.4, 2.6] and below the load ratio; UDP's
hits/packet above the TCPs'.

Setup: `sred/__init__.py` (`misbehaving_scenario`); the run is shared with sred-table2.
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from ...plots import subplots
from ...results import Results
from .. import Reproduction, Row, RunSettings, experiment
from . import DURATION, PACKET, QUICK_DURATION, TABLE_WARMUP, misbehaving_run

FULL = RunSettings(duration=DURATION, warmup=TABLE_WARMUP)
QUICK = RunSettings(duration=QUICK_DURATION, warmup=TABLE_WARMUP)
# Table I: (load, hits) of the UDP source and of the 100 TCPs together.
TABLE1 = {"udp": (20_821, 494), "tcp": (808_300, 11_000)}
TCPS = 100
LOAD_RATIO, LOAD_BAND = 2.58, 0.25  # §VIII; reproduction-targets
HITS_RATIO, HITS_BAND = 1.74, (1.4, 2.6)  # §VIII; reproduction-targets


def hit_table(results: Results) -> pd.DataFrame:
    """Per source (the UDP, flow 0, and the TCPs): load in packets, hits, hits with Count ≥ 1
    and mean Total Occurrence over the measurement window; the TCPs summed (Total Occurrence
    weighted by hits), load per connection and hits per packet of load."""
    window = results.duration - results.warmup
    flows = results.flows.set_index("id")
    load = flows["goodput_bps"] * window / (8 * PACKET)
    measured = results.qdisc_flows
    measured = measured[(measured["link"] == results.link("L->R")["id"]) & (measured["direction"] == "data")]
    measured = measured.set_index("flow").assign(load=load)
    measured["occurrence_sum"] = measured["mean_total_occurrence"].fillna(0) * measured["hits"]
    is_udp = measured.index == 0
    rows = []
    for source, part in (("UDP", measured[is_udp]), ("TCP", measured[~is_udp])):
        hits = part["hits"].sum()
        rows.append(
            {
                "source": source,
                "connections": len(part),
                "load": part["load"].sum(),
                "load_per_connection": part["load"].sum() / len(part),
                "arrivals": part["arrivals"].sum(),
                "hits": hits,
                "hits_per_packet": hits / part["load"].sum(),
                "repeat_hits": part["repeat_hits"].sum(),
                "repeat_fraction": part["repeat_hits"].sum() / hits,
                "mean_total_occurrence": part["occurrence_sum"].sum() / hits,
                "candidates": int(part["candidate"].sum()),
            }
        )
    return pd.DataFrame(rows).set_index("source")


@experiment("sred-table1", "SRED Table I: hits and load, one UDP every 4 ms vs 100 TCPs")
def table1(quick: bool) -> Reproduction:
    settings = QUICK if quick else FULL
    results = misbehaving_run(settings.duration)
    table = hit_table(results)
    rows = table1_rows(table)
    paper = pd.DataFrame(
        {
            "source": ["UDP", "TCP"],
            "paper_load": [TABLE1["udp"][0], TABLE1["tcp"][0]],
            "paper_hits": [TABLE1["udp"][1], TABLE1["tcp"][1]],
            "paper_hits_per_packet": [TABLE1["udp"][1] / TABLE1["udp"][0], TABLE1["tcp"][1] / TABLE1["tcp"][0]],
        }
    ).set_index("source")
    shown = paper.join(table[["load", "load_per_connection", "hits", "hits_per_packet"]]).reset_index()
    window = settings.duration - settings.warmup
    notes = [
        f"One run of {settings.duration:g} s, counted over the last {window:g} s (the paper's: 85 s).",
        f"SRED's candidate flag (z ≥ 3, docs/scenario.md): UDP {table.loc['UDP', 'candidates']}, "
        f"TCPs {table.loc['TCP', 'candidates']} of {TCPS}.",
    ]
    return Reproduction(
        rows=rows,
        figure=_figure(table, paper),
        data={"table1": shown},
        show=["table1"],
        notes=notes,
        explain=lambda row: _reason(table),
    )


def table1_rows(table: pd.DataFrame) -> list[Row]:
    load_ratio = table.loc["UDP", "load_per_connection"] / table.loc["TCP", "load_per_connection"]
    hits_ratio = table.loc["UDP", "hits_per_packet"] / table.loc["TCP", "hits_per_packet"]
    return [
        Row.within("Load: UDP / average TCP", LOAD_RATIO, load_ratio, LOAD_BAND, relative=True, key="load_ratio"),
        Row.between("Hits per packet: UDP / TCP", HITS_RATIO, hits_ratio, *HITS_BAND, key="hits_per_packet_ratio"),
        Row.ordered(
            "Hits-per-packet ratio vs load ratio",
            "1.74 < 2.58",
            [{"hits": hits_ratio}, {"load": load_ratio}],
            key="order.hits_ratio_below_load_ratio",
        ),
        Row.ordered(
            "Hits per packet: TCP vs UDP",
            ".0136 < .0237",
            [{"TCP": table.loc["TCP", "hits_per_packet"]}, {"UDP": table.loc["UDP", "hits_per_packet"]}],
            digits=4,
            key="order.hits_per_packet",
        ),
    ]


def _reason(table: pd.DataFrame) -> str:
    state = "; ".join(
        f"{source}: load {r.load:.0f} packets ({r.load_per_connection:.0f} per connection), {r.arrivals:.0f} "
        f"arrivals, {r.hits:.0f} hits ({r.hits_per_packet:.4f} per packet)"
        for source, r in table.iterrows()
    )
    return f"measured over the window: {state}"


def _figure(table: pd.DataFrame, paper: pd.DataFrame) -> Any:
    fig, ax = subplots(figsize=(6, 4))
    x = range(len(table))
    ax.bar([i - 0.2 for i in x], paper.loc[table.index, "paper_hits_per_packet"], width=0.4, label="paper")
    ax.bar([i + 0.2 for i in x], table["hits_per_packet"], width=0.4, label="ours")
    ax.set_xticks(list(x), table.index)
    ax.set(ylabel="hits per packet of load", title="SRED Table I: one UDP every 4 ms vs 100 TCPs")
    ax.legend()
    fig.tight_layout()
    return fig
