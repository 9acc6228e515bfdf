"""RED-PD §7.2, Fig. 15: 9 SACK TCPs (RTTs "close to 30 ms", "around 50 ms", "70 ms", three
each) and 3 UDP CBR flows at 5, 3 and 1 Mb/s on the 10 Mb/s link. "With RED, the high-bandwidth
UDP flows run away with almost all the bandwidth ... RED-PD is able to restrict the bandwidth
allotted to the UDP flows to near their fair share"; RED-PD monitors the UDP flows and the
30 ms TCPs "(and occasionally those with 50 ms as well)"; "TCP flows with RTT of 70 ms still
get slightly less bandwidth compared to other flows."

Rows (reproduction-targets, redpd-fig15): RED-PD's UDP flows each within ±40 % of the equal
share 10/12 = 0.833 Mb/s; under RED the UDPs take at least 80 % of the link; under RED-PD the
70 ms TCPs get the least of the three TCP groups; and (from the text) RED-PD monitors the
30 ms TCPs longer than the 70 ms ones (`qdisc_flows` `time_monitored`). Setup: `redpd/__init__.py`
(`mixed_scenario`, 100 s, measured from 20 s; quick mode 40 s). Mechanisms a user adds
(`reproduce redpd-fig15 -m SPEC`) run the same network as columns of the table and lines of the
figure of their own (no paper row grades them).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

import aqmlab

from ...mechanisms import describe
from ...plots import subplots
from ...results import MBPS
from .. import Reproduction, Row, RunSettings, experiment, with_extra_mechanisms
from . import (
    DURATION,
    LINK_RATE,
    QUICK_DURATION,
    TCP_RTTS,
    WARMUP,
    flow_record,
    mixed_scenario,
    monitoring_reason,
    red_pd_qdisc,
    red_qdisc,
)

FAIR = LINK_RATE / 12 / MBPS  # Mb/s, derived: 12 flows
UDP_BAND = 0.40
RED_UDP_SHARE = 0.80  # "run away with almost all the bandwidth"
UDP_FLOWS = (9, 10, 11)  # flows 10–12 (ids from 0)
GROUPS = {"30 ms": (0, 1, 2), "50 ms": (3, 4, 5), "70 ms": (6, 7, 8)}
FULL = RunSettings(duration=DURATION, warmup=WARMUP)
QUICK = RunSettings(duration=QUICK_DURATION, warmup=WARMUP)


@experiment(
    "redpd-fig15", "RED-PD Fig. 15: 9 TCPs (30/50/70 ms) and UDPs of 5, 3, 1 Mb/s, RED vs RED-PD", compares=True
)
def fig15(quick: bool) -> Reproduction:
    settings = QUICK if quick else FULL
    qdiscs = with_extra_mechanisms({"red": red_qdisc(), "red_pd": red_pd_qdisc()})
    runs = {m: aqmlab.run(mixed_scenario(m, qdisc, settings.duration)) for m, qdisc in qdiscs.items()}
    goodput = {m: r.flows.sort_values("id")["goodput_bps"].to_numpy() / MBPS for m, r in runs.items()}
    monitored = np.array([_monitored(runs["red_pd"], flow) for flow in range(12)])
    table = pd.DataFrame(
        {
            "flow": np.arange(1, 13),
            "kind": [f"TCP {rtt * 1000:.0f} ms" for rtt in TCP_RTTS] + ["UDP 5", "UDP 3", "UDP 1"],
            **goodput,
            "red_pd_monitored_s": monitored,
        }
    )
    notes = [
        f"One {settings.duration:g} s run per discipline, measured from {WARMUP:g} s; monitored time over the run."
    ]
    return Reproduction(
        rows=fig15_rows(goodput, monitored),
        figure=_figure(table, list(runs)),
        data={"fig15": table},
        show=["fig15"],
        notes=notes,
        explain=lambda row: monitoring_reason(runs["red_pd"], list(range(12))),
    )


def fig15_rows(goodput: dict[str, np.ndarray], monitored: np.ndarray) -> list[Row]:
    """RED-PD's UDP flows near the fair share, RED's UDP flows taking almost the whole link, and
    RED-PD's 70 ms TCPs the lowest and monitored the least (`goodput` in Mb/s by discipline,
    `monitored` in s by flow under RED-PD)."""
    group = {name: goodput["red_pd"][list(ids)].mean() for name, ids in GROUPS.items()}
    rows = [
        Row.within(
            f"RED-PD UDP flow {flow + 1} (Mb/s)", FAIR, goodput["red_pd"][flow], UDP_BAND, True, key=f"udp{flow + 1}"
        )
        for flow in UDP_FLOWS
    ]
    red_udp = goodput["red"][list(UDP_FLOWS)].sum() / (LINK_RATE / MBPS)
    return rows + [
        Row.at_least("RED: UDP share of the link", "almost all", red_udp, RED_UDP_SHARE, key="red.udp_share"),
        Row.ordered(
            "RED-PD TCP groups (Mb/s): 70 ms lowest",
            "70 ms < 30, 50 ms",
            [{"70 ms": group["70 ms"]}, {"30 ms": group["30 ms"], "50 ms": group["50 ms"]}],
            key="order.tcp_70ms_lowest",
        ),
        Row.ordered(
            "RED-PD time monitored (s): 70 ms TCPs < 30 ms TCPs",
            "30 ms monitored, 70 ms not",
            [{"70 ms": monitored[list(GROUPS["70 ms"])].mean()}, {"30 ms": monitored[list(GROUPS["30 ms"])].mean()}],
            digits=1,
            key="order.monitored_30ms",
        ),
    ]


def _monitored(results: Any, flow: int) -> float:
    record = flow_record(results, flow)
    return 0.0 if record is None else float(record["time_monitored"])


def _figure(table: pd.DataFrame, mechanisms: list[str]) -> Any:
    fig, ax = subplots(figsize=(7, 4))
    for mechanism, marker in zip(mechanisms, "os^vD<>p*h", strict=False):
        described = describe(mechanism)
        ax.plot(table["flow"], table[mechanism], f"{marker}-", color=described.colour, label=described.label)
    ax.axhline(FAIR, color="grey", linestyle="--", label="equal share")
    ax.set(xlabel="flow (1–9 TCP, 10–12 UDP)", ylabel="throughput (Mb/s)", title="RED-PD Fig. 15")
    ax.legend()
    fig.tight_layout()
    return fig
