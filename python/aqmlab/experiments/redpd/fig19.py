"""RED-PD §7.5, Fig. 19: multiple congested links. A chain of 1 to 5 congested links; "Each
congested link has a capacity of 10 Mbps. On each link eight TCP sources and two UDP sources
were started, with round-trip times ranging from 20 to 80 ms. The UDP flows were each sending
at 5 Mbps." The through flow is "either a UDP flow with sending rate of 1 Mbps or (in a
separate simulation) a TCP flow with an RTT of 80 ms", kept at 80 ms whatever the number of
links. "The throughput for the multiple-links flow goes down as the number of links increases,
but is much better with RED-PD than with RED, because RED-PD decreases the ambient drop rate
for each of the congested links."

Our choices (before any run): the parking-lot topology with 2 ms links (unstated); each link's
eight cross TCPs at RTTs 20, 28.6, …, 80 ms (evenly spaced), its two UDPs without RTT; the
through TCP's access delay makes its RTT 80 ms at every link count. RED or RED-PD (the §7
settings of `redpd/__init__.py`) on every congested link. Runs of 100 s from 20 s, links 1…5; quick
mode 40 s with 1, 3 and 5 links. Rows (reproduction-targets, redpd-fig19): RED-PD > RED at
every link count, for each through flow; and throughput at 1 link above that at 5 links
(the trend, non-increasing within noise, shown in full in the table).

Cross traffic (issue 27): the text's cross UDPs send 5 Mb/s, the authors' script
(tcl/ex/red-pd/multi/multi.sh) 4 Mb/s. The text is graded; every row is shown again with the
script's 4 Mb/s as an informative row (`<key>.script`).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

import aqmlab

from ...plots import subplots
from ...results import MBPS
from .. import Reproduction, Row, RunSettings, experiment
from . import DURATION, PACKET, QUICK_DURATION, RED, SINK_DELAY, START_SPREAD, TCP, WARMUP, cbr, red_pd_qdisc

LINK_DELAY = 0.002  # s, our choice
CROSS_RTTS = tuple(np.linspace(0.020, 0.080, 8))  # §7.5: "ranging from 20 to 80 ms"
CROSS_UDP = 5e6  # §7.5: "each sending at 5 Mbps"
SCRIPT_CROSS_UDP = 4e6  # multi.sh's cross UDPs (module docstring)
THROUGH_UDP, THROUGH_RTT = 1e6, 0.080  # §7.5
FULL = RunSettings(duration=DURATION, warmup=WARMUP, sweep=(1, 2, 3, 4, 5))
QUICK = RunSettings(duration=QUICK_DURATION, warmup=WARMUP, sweep=(1, 3, 5))


def _tcp(name: str, access: float, **extra: Any) -> dict:
    return {"name": name, "type": "tcp", "packet_size": PACKET, "tcp": TCP, "access_delay": access, **extra}


def fig19_scenario(links: int, through: str, mechanism: str, duration: float, cross_udp: float = CROSS_UDP) -> dict:
    if through == "udp":
        flow = cbr("through", THROUGH_UDP)
    else:
        flow = _tcp("through", THROUGH_RTT / 2 - links * LINK_DELAY - SINK_DELAY)
    cross = []
    for hop in range(links):
        cross += [
            _tcp(f"tcp{hop}-{i}", rtt / 2 - LINK_DELAY - SINK_DELAY, hop=hop, start_jitter=START_SPREAD)
            for i, rtt in enumerate(CROSS_RTTS)
        ]
        cross += [cbr(f"udp{hop}-{i}", cross_udp, hop=hop, start_jitter=START_SPREAD) for i in range(2)]
    qdisc = {"type": "red", **RED} if mechanism == "red" else red_pd_qdisc()
    return {
        "name": f"redpd-fig19-{through}-{mechanism}-{links}",
        "simulation": {"duration": duration, "warmup": WARMUP, "seed": 1},
        "topology": {
            "type": "parking_lot",
            "congested_links": links,
            "access_rate": 100e6,
            "sink_delay": SINK_DELAY,
            "link": {"rate": 10e6, "delay": LINK_DELAY, "qdisc": qdisc},
        },
        "flows": [flow, *cross],
    }


@experiment("redpd-fig19", "RED-PD Fig. 19: a 1 Mb/s UDP or an 80 ms TCP across 1…5 congested links, RED vs RED-PD")
def fig19(quick: bool) -> Reproduction:
    settings = QUICK if quick else FULL
    table = through_table(settings, CROSS_UDP)
    rows = through_rows(table, settings)
    script = through_table(settings, SCRIPT_CROSS_UDP)
    rows += [row.informative("the script's 4 Mb/s cross UDPs", "script") for row in through_rows(script, settings)]
    shown = "; ".join(
        f"{t.through} {t.mechanism} {t.links}: {t.mbps:.3f} Mb/s, monitored {t.monitored_s:.0f} s"
        for t in table.itertuples()
    )
    data = {"fig19": table, "fig19_script": script}
    return Reproduction(
        rows=rows,
        figure=_figure(table),
        data=data,
        show=["fig19"],
        explain=lambda row: f"through flow per run: {shown}",
    )


def through_table(settings: RunSettings, cross_udp: float) -> pd.DataFrame:
    """The through flow's goodput and time monitored per (through, mechanism, links)."""
    records = []
    for through in ("udp", "tcp"):
        for mechanism in ("red", "red_pd"):
            for links in settings.sweep:
                results = aqmlab.run(fig19_scenario(links, through, mechanism, settings.duration, cross_udp))
                flows = results.flows.set_index("name")
                measured = results.qdisc_flows
                mine = measured[measured["flow"] == flows.loc["through", "id"]] if len(measured) else measured
                record = {"through": through, "mechanism": mechanism, "links": links}
                record["mbps"] = flows.loc["through", "goodput_bps"] / MBPS
                # The longest any congested link monitored the through flow (RED-PD only).
                record["monitored_s"] = float(mine["time_monitored"].max()) if len(mine) else 0.0
                records.append(record)
    return pd.DataFrame(records)


def through_rows(table: pd.DataFrame, settings: RunSettings) -> list[Row]:
    """RED-PD above RED at every link count, and each through flow's trend, per through flow."""
    at = table.set_index(["through", "mechanism", "links"])["mbps"]
    first, last = settings.sweep[0], settings.sweep[-1]
    rows = []
    for through in ("udp", "tcp"):
        rows += [
            Row.ordered(
                f"{through.upper()} through flow, {links} link(s) (Mb/s): RED < RED-PD",
                "RED < RED-PD",
                [{"RED": at[through, "red", links]}, {"RED-PD": at[through, "red_pd", links]}],
                digits=3,
                key=f"{through}.links{links}",
            )
            for links in settings.sweep
        ]
        rows += [
            Row.ordered(
                f"{through.upper()} through flow under {name} (Mb/s): {last} links < {first}",
                "decreasing in links",
                [{f"{last} links": at[through, mechanism, last]}, {f"{first} link": at[through, mechanism, first]}],
                digits=3,
                key=f"{through}.{mechanism}.trend",
            )
            for mechanism, name in (("red", "RED"), ("red_pd", "RED-PD"))
        ]
    return rows


def _figure(table: pd.DataFrame) -> Any:
    fig, axes = subplots(1, 2, figsize=(9, 3.8))
    for ax, through in zip(axes, ("udp", "tcp"), strict=True):
        for mechanism, name in (("red", "RED"), ("red_pd", "RED-PD")):
            part = table[(table["through"] == through) & (table["mechanism"] == mechanism)]
            ax.plot(part["links"], part["mbps"], "o-", label=name)
        ax.set(
            xlabel="congested links", ylabel="through-flow throughput (Mb/s)", title=f"{through.upper()} through flow"
        )
        ax.legend()
    fig.tight_layout()
    return fig
