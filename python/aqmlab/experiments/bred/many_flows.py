"""BRED §5.1.2, Figs. 8–9: eq. 17's fairness quotient F of 20, 50 and 100 flows (a quarter
of them CBR) against the CBRs' total rate on 1.5 Mb/s, over every flow's goodput (as the
paper: raw bandwidths, so F < 1 when the CBRs send below their share), one trial per point.
Buffer 400 ms of the backbone = 150 packets; drop-tail on the feeders.

Setup and the choices where the paper is silent: `bred/__init__.py`.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd

import aqmlab

from ...plots import subplots
from ...results import MBPS, Results
from .. import Reproduction, Row, RunSettings, experiment
from . import DURATION, FEEDER_RATE, PACKET_SIZE, QUICK_DURATION, TCP, bred_qdisc, buffer_packets, fairness

FIG9_LINK = 1.5e6
FIG9_FLOWS = [20, 50, 100]
# Total CBR rate (Mb/s; the x axis, unstated): the first point has the CBRs "sending far
# less than their fair bandwidth share" (0.1 Mb/s over N/4 CBRs), the last 3x the link.
# One trial per point, as the paper (the flows' delays are drawn from the seed, 1).
FULL = RunSettings(duration=DURATION, sweep=(0.1, 0.5, 1.0, 1.5, 3.0, 4.5))
QUICK = RunSettings(duration=QUICK_DURATION, sweep=(0.1, 0.5, 1.5, 4.5))
# §5.1.2: "the fairness quotient values being about 90 percent": F of 100 flows in
# [0.8, 1.0] at every load (reproduction-targets; a single trial, figure only).
FIG9_F_BAND = (0.8, 1.0)
# "the fairness values decrease slowly till some point after which they taper off": from
# CBRs offering the link rate to offering 3x it, F changes by at most this much.
FIG9_TAPER = 0.05


def many_flows_scenario(
    n: int, cbr_total_bps: float, qdisc: Mapping[str, Any], *, seed: int = 1, duration: float = DURATION
) -> dict:
    """Fig. 8: backbone 1.5 Mb/s with 6 ms delay; sinks' feeders 100 Mb/s, 4 ms; sources'
    feeders 100 Mb/s with one-way delays uniform in [10, 100] ms (drawn from `seed`).
    Every fourth flow is CBR (one fourth of them), sharing `cbr_total_bps` equally."""
    delays = np.random.default_rng(seed).uniform(0.010, 0.100, n)
    flows = []
    for i, delay in enumerate(delays):
        flow: dict[str, Any] = {"name": f"flow{i}", "packet_size": PACKET_SIZE, "access_delay": float(delay)}
        if i % 4 == 3:
            flow.update(type="cbr", rate=cbr_total_bps / (n // 4))
        else:
            flow.update(type="tcp", tcp=TCP, start_jitter=1.0)
        flows.append(flow)
    return {
        "name": f"bred-fig8-{n}",
        "simulation": {"duration": duration, "warmup": duration / 2, "seed": seed},
        "topology": {
            "type": "dumbbell",
            "access_rate": FEEDER_RATE,
            "sink_delay": 0.004,
            "bottleneck": {"rate": FIG9_LINK, "delay": 0.006, "qdisc": dict(qdisc)},
        },
        "flows": flows,
    }


def many_flows_metrics(results: Results) -> dict[str, float]:
    """F over every flow's goodput, and the CBRs' and TCPs' mean goodput and the slowest TCP's (Mb/s)."""
    goodput = results.flows["goodput_bps"].to_numpy() / MBPS
    cbr = results.flows["type"].to_numpy() == "cbr"
    return {
        "F": fairness(goodput),
        "cbr_mean": goodput[cbr].mean(),
        "tcp_mean": goodput[~cbr].mean(),
        "tcp_min": goodput[~cbr].min(),
    }


@experiment(
    "bred-many-flows", "BRED Fig. 9: fairness quotient of 20/50/100 flows (a quarter CBR) vs total CBR rate, 1.5 Mb/s"
)
def fig9(quick: bool) -> Reproduction:
    settings = QUICK if quick else FULL
    qdisc = bred_qdisc(buffer_packets(FIG9_LINK))
    records = []
    for n, total in itertools.product(FIG9_FLOWS, settings.sweep):
        results = aqmlab.run(many_flows_scenario(n, total * MBPS, qdisc, duration=settings.duration))
        records.append(
            {"flows": n, "cbr_total": total, **many_flows_metrics(results), "equal_share": FIG9_LINK / MBPS / n}
        )
    table = pd.DataFrame(records)
    by_load = table.pivot(index="cbr_total", columns="flows", values="F")
    return Reproduction(
        rows=fairness_rows(by_load),
        figure=_fig9_figure(by_load),
        data={"fig9": table},
        show=["fig9"],
        notes=[f"one trial of {settings.duration:g} s per point (as the paper), goodput over the latter half"],
    )


def fairness_rows(by_load: pd.DataFrame) -> list[Row]:
    """F of 100 flows about 0.9 at every load; at high load F grows with the number of flows;
    F of 20 flows rises, then falls; F tapers off beyond the link rate (`by_load`: F, one row
    per total CBR rate, one column per number of flows)."""
    totals = by_load.index.tolist()
    rows = [
        Row.between(
            f"F, 100 flows, CBR total {t} Mb/s",
            "about 0.9",
            by_load.loc[t, 100],
            *FIG9_F_BAND,
            key=f"fairness.n100.cbr{round(t * 1000)}k",
        )
        for t in totals
    ]
    for t in [t for t in totals if t >= FIG9_LINK / MBPS]:  # "high CBR load": the CBRs offer the link rate or more
        rows.append(
            Row.ordered(
                f"F ordering at CBR total {t} Mb/s",
                "F(100) >= F(50) >= F(20)",
                [by_load.loc[t, n] for n in (100, 50, 20)],
                relation=">=",
                digits=3,
                key=f"order.fairness.cbr{round(t * 1000)}k.n100_ge_n50_ge_n20",
            )
        )
    f20 = by_load[20]
    rises = f20.iloc[0] < f20.max() and f20.idxmax() != totals[-1]
    rows.append(
        Row(
            "F of 20 flows along the CBR load",
            "increases first, then decreases",
            " -> ".join(f"{v:.3f}" for v in f20),
            "rise then fall",
            bool(rises),
            key="fairness.n20.rise_then_fall",
        )
    )
    link, top = FIG9_LINK / MBPS, totals[-1]
    for n in FIG9_FLOWS:
        rows.append(
            Row.at_most(
                f"F of {n} flows: change from CBR total {link:g} to {top:g} Mb/s",
                "tapers off",
                abs(by_load.loc[top, n] - by_load.loc[link, n]),
                FIG9_TAPER,
                key=f"fairness.n{n}.taper",
            )
        )
    return rows


def _fig9_figure(by_load: pd.DataFrame) -> Any:
    fig, ax = subplots(figsize=(6.5, 4.5))
    for n, marker in zip(FIG9_FLOWS, "ox+", strict=True):
        ax.plot(by_load.index, by_load[n], marker=marker, label=f"{n} flows")
    ax.set(
        title="BRED Fig. 9: fairness with many flows, 1.5 Mb/s",
        xlabel="total CBR sending rate (Mb/s)",
        ylabel="fairness quotient F (eq. 17)",
        ylim=(0, 1.02),
    )
    ax.legend()
    fig.tight_layout()
    return fig
