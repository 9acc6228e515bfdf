"""RED-PD §6.3: evasive flows. A high-bandwidth flow that "receives drops in at most K − 1 of M
successive identification intervals" evades identification: "the more bursty the sending
pattern of a flow over successive identification intervals, the less likely it is to be
detected". The paper simulates nothing here.

Our scenario (before any run; reproduction-targets, redpd-sec6.3): Fig. 11's fixed 1 % loss
queue (on a 100 Mb/s link) with RED-PD's defaults, and two flows of the same mean rate
4·f(R,p) = 9.8 Mb/s in separate runs: a CBR flow, and an on/off flow sending at 40·f(R,p)
during exponential ON periods of mean 0.1 s (about half of eq. 3's 0.196 s interval) separated
by OFF periods of mean 0.9 s. Each run 200 s. Row (ordering only): the on/off flow is
monitored for a smaller fraction of the run than the CBR flow (`qdisc_flows`
`time_monitored`); its received rate is shown beside.
"""

from __future__ import annotations

from typing import Any

import pandas as pd

import aqmlab

from ...plots import subplots
from ...results import MBPS
from .. import Reproduction, Row, RunSettings, experiment
from . import FIXED_LOSS_RATE, PACKET, cbr, fixed_loss_qdisc, flow_record, reference_bps, scenario

P = 0.01  # Fig. 11's p
GAMMA = 4.0  # reproduction-targets: "e.g. 4·f(R,p)"
ON, OFF = 0.1, 0.9  # s, mean ON and OFF periods: the ON rate is 10× the mean
FULL = RunSettings(duration=200.0)
QUICK = FULL  # two runs of one flow take about a second


def sec63_scenario(kind: str, duration: float) -> dict:
    mean = GAMMA * reference_bps(P)
    if kind == "cbr":
        flow = cbr("flow", mean)
    else:
        flow = {"name": "flow", "type": "onoff", "rate": mean * (ON + OFF) / ON, "on_time": ON, "off_time": OFF}
        flow["packet_size"] = PACKET
    return scenario(f"redpd-sec6.3-{kind}", [flow], fixed_loss_qdisc(P), duration, 0.0, rate=FIXED_LOSS_RATE)


@experiment("redpd-sec6.3", "RED-PD §6.3: an on/off flow vs a CBR flow of the same mean rate 4·f(R,p), p = 1 %")
def sec63(quick: bool) -> Reproduction:
    settings = QUICK if quick else FULL
    measures = {}
    for kind in ("cbr", "onoff"):
        results = aqmlab.run(sec63_scenario(kind, settings.duration))
        record = flow_record(results, 0)
        measures[kind] = {
            "monitored_fraction": 0.0 if record is None else record["time_monitored"] / results.duration,
            "identifications": 0.0 if record is None else record["identifications"],
            "received_mbps": float(results.flows["goodput_bps"].iloc[0]) / MBPS,
        }
    rows = [
        Row.ordered(
            "Fraction of the run monitored: on/off < CBR",
            "bursty flows less likely detected",
            [{"on/off": measures["onoff"]["monitored_fraction"]}, {"CBR": measures["cbr"]["monitored_fraction"]}],
            digits=3,
            key="order.monitored",
        )
    ]
    table = pd.DataFrame([{"flow": kind, **m} for kind, m in measures.items()])
    return Reproduction(
        rows=rows,
        figure=_figure(table),
        data={"sec6_3": table},
        show=["sec6_3"],
        explain=lambda row: f"measured: {measures}",
    )


def _figure(table: pd.DataFrame) -> Any:
    fig, (left, right) = subplots(1, 2, figsize=(7, 3.5))
    left.bar(table["flow"], table["monitored_fraction"])
    left.set(ylabel="fraction of the run monitored", title="identification")
    right.bar(table["flow"], table["received_mbps"])
    right.axhline(reference_bps(P) / MBPS, color="grey", linestyle="--", label="f(R,p)")
    right.set(ylabel="received (Mb/s)", title="mean rate 4·f(R,p)")
    right.legend()
    fig.tight_layout()
    return fig
