"""RED-PD §7.4, Figs. 17–18: web traffic beside ten long TCPs and a 2 Mb/s UDP flow, RED vs
RED-PD; the run both figures use (cached once per process).

§7.4: "The packet size in this simulation was 500 bytes. The object size distribution used
was pareto with average 24 packets and shape parameter 1.2. The long term average of the
generated web traffic was about 5 Mbps ... A dumbbell topology with 5 nodes on each side was
used. The RTTs for flows on this topology ranged from 20 to 100 ms", plus "ten infinite demand
TCP flows" ("2 each with RTT in ms of 20, 40, 60, 80 and 100", Fig. 18) and "Flow 11 is a UDP
flow sending at 2 Mbps".

Our mapping (before any run): ns-2's WebTraf draws pages of objects with exponential
inter-page times; we model each web client as a TCP `web` workload fetching one Pareto object
(mean 24 packets, shape 1.2) per page, then an exponential think time of mean 1 s; 60 clients
(12 on each of the five RTTs 20, 40, 60, 80, 100 ms, the five node pairs), about 60 × 24 × 500
× 8 bits per ~1.3 s ≈ 4.4 Mb/s, near the paper's 5 Mb/s (the realised load is shown). Every
flow uses 500-byte packets here (the paper states one size for the simulation). Runs of 100 s
from 20 s (quick: 40 s); web clients start within 10 s (§7.2).
"""

from __future__ import annotations

from functools import cache

import pandas as pd

import aqmlab

from ...results import Results
from . import START_SPREAD, WARMUP, cbr, red_pd_qdisc, red_qdisc, scenario, tcp

WEB_PACKET = 500  # §7.4
OBJECT_MEAN, OBJECT_SHAPE = 24, 1.2  # §7.4, packets
THINK = 1.0  # s, our choice (module docstring)
CLIENTS_PER_RTT = 12
RTTS = (0.020, 0.040, 0.060, 0.080, 0.100)  # §7.4 / Fig. 18
UDP_RATE = 2e6  # Fig. 18: "a UDP flow sending at 2 Mbps"
WEB_LOAD = 5e6  # §7.4: "about 5 Mbps"


def web_scenario(mechanism: str, duration: float) -> dict:
    workload = {"type": "web", "pareto_mean": OBJECT_MEAN, "pareto_shape": OBJECT_SHAPE, "think_time": THINK}
    flows = [tcp(f"long{i}", rtt, packet_size=WEB_PACKET) for i, rtt in enumerate(r for r in RTTS for _ in (0, 1))]
    flows.append(cbr("udp", UDP_RATE, packet_size=WEB_PACKET))
    flows += [
        tcp(f"web{j}-{i}", rtt, packet_size=WEB_PACKET, workload=workload, start_jitter=START_SPREAD)
        for j, rtt in enumerate(RTTS)
        for i in range(CLIENTS_PER_RTT)
    ]
    qdisc = red_qdisc() if mechanism == "red" else red_pd_qdisc(red={"mean_pktsize": WEB_PACKET})
    if mechanism == "red":
        qdisc["mean_pktsize"] = WEB_PACKET
    return scenario(f"redpd-web-{mechanism}", flows, qdisc, duration, WARMUP)


@cache
def web_run(mechanism: str, duration: float) -> Results:
    return aqmlab.run(web_scenario(mechanism, duration))


def completion_times(results: Results) -> pd.Series:
    """Completion times (s) of the web transfers started in the window; one not finished by
    the end counts as infinitely long (it is slower than every finished one)."""
    web = results.flows.loc[results.flows["name"].str.startswith("web"), "id"]
    transfers = results.transfers
    transfers = transfers[transfers["flow"].isin(web) & (transfers["start"] >= results.warmup)]
    return (transfers["end"] - transfers["start"]).fillna(float("inf"))


def web_load(results: Results) -> float:
    """The web clients' goodput together, b/s."""
    flows = results.flows
    return float(flows.loc[flows["name"].str.startswith("web"), "goodput_bps"].sum())
