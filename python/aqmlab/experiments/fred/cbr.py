"""FRED §3.3 and §5, Figs. 5–7: an 8 Mbps CBR flow against TCPs joining every 20 s on a
10 Mbps link, RED vs FRED; and Fig. 6, the CBR against one TCP under RED. Mechanisms a user
adds (`reproduce fred-cbr -m SPEC`) run the Fig. 7 schedule too, as rows of the epochs table
and panels of the figure of their own (no paper row grades them).

Setup and the choices where the paper is silent: `fred/__init__.py`.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from ...mechanisms import describe
from ...plots import subplots
from ...results import MBPS, Results
from .. import Reproduction, Row, RunSettings, experiment, run_seeds, with_extra_mechanisms
from . import WIRE_BYTES, gateway, tcp_flow

CBR_LINK_BPS = 10e6
CBR_BPS = 8e6
EPOCH = 20.0  # §5: "At the end of each 20 second interval, a new TCP connection starts"
TCP_JOINERS = 4  # Fig. 7: five connections over 100 s
SETTLE = 5.0  # seconds after each join left out of the epoch's mean (reproduction-targets)
# Tolerances. §3.3 (Fig. 6, RED): "the UDP sender gets 8 mbps almost all the time, whereas
# the TCP connection can only get the leftover 2 mbps": UDP ≥ 90% of 8; the TCP's "leftover
# 2" read off one run's plot, ±0.8 Mbps (the 10% of the CBR's 8 that the UDP bound allows,
# either way): a starved TCP fails as much as one taking the CBR's share.
FIG6_UDP_MIN = 7.2
FIG6_TCP_BAND = (1.2, 2.8)
# §5 (Fig. 7, FRED): every TCP "to its fair share"; FRED holds the UDP flow to "the average
# number of buffers used by any of the flows". Read off a figure of one run: UDP within
# ±35% of the fair share, every TCP at least 60% of it.
FIG7_UDP_REL = 0.35
FIG7_TCP_MIN = 0.6
# Under RED the CBR keeps most of the link as TCPs join (§3.3: FCFS shares the link by input rate).
RED_UDP_MIN = 0.5 * CBR_LINK_BPS / MBPS
# Fig. 6: the CBR from time 0 and one TCP from 1 s, for 50 s.
FIG6_TCP_START, FIG6_DURATION = 1.0, 50.0

# The paper shows one run of each figure; full runs average five seeds. The durations follow
# from the schedule: one epoch before the first TCP joins and one after each join.
FULL = RunSettings(seeds=range(1, 6), duration=EPOCH * (TCP_JOINERS + 1))
QUICK = RunSettings(seeds=(1,), duration=EPOCH * (TCP_JOINERS + 1))


def paper_gateway(mechanism: str) -> dict[str, Any]:
    """The paper's 64-packet RED or FRED buffer, min_th = 16, max_th = 32."""
    return gateway(mechanism, 64, 16, 32)


def cbr_scenario(mechanism: str, qdisc: dict[str, Any], tcp_starts: list[float], duration: float) -> dict[str, Any]:
    """Figs. 5 and 7: an 8 Mbps CBR (flow 0, from time 0) and TCPs starting at `tcp_starts`
    on a 10 Mbps link whose queue is `qdisc` (`mechanism`'s)."""
    flows = [{"name": "cbr", "type": "cbr", "rate": CBR_BPS, "packet_size": WIRE_BYTES}]
    flows += [{"name": f"tcp{i + 1}", **tcp_flow(), "start": start} for i, start in enumerate(tcp_starts)]
    return {
        "name": f"fred-cbr-{mechanism}",
        "simulation": {"duration": duration, "seed": 1, "sample_interval": 0, "throughput_bin": 0.5},
        "topology": {
            "type": "dumbbell",
            "bottleneck": {"rate": CBR_LINK_BPS, "delay": "2ms", "qdisc": qdisc},
            "access_rate": "100Mbps",
            "access_delay": "1ms",
            "sink_delay": 0,
        },
        "flows": flows,
    }


def epoch_metrics(results: Results, first: float = EPOCH) -> pd.DataFrame:
    """Mean throughput (Mbps) of each flow in each epoch [first + 20k + SETTLE, first + 20(k+1)):
    one row per epoch with k + 1 TCPs, columns: epoch, tcps, fair_share, cbr, tcp_min, tcp_mean."""
    throughput = results.throughput
    rows = []
    for k in range(TCP_JOINERS):
        start = first + k * EPOCH
        window = throughput[(throughput["time"] >= start + SETTLE) & (throughput["time"] < start + EPOCH)]
        per_flow = window.groupby("flow")["bps"].mean() / MBPS
        tcps = [per_flow.get(i, 0.0) for i in range(1, k + 2)]
        rows.append(
            {
                "epoch": f"{start:g}-{start + EPOCH:g} s",
                "tcps": k + 1,
                "fair_share": CBR_LINK_BPS / MBPS / (k + 2),
                "cbr": per_flow.get(0, 0.0),
                "tcp_min": min(tcps),
                "tcp_mean": float(np.mean(tcps)),
            }
        )
    return pd.DataFrame(rows)


def fig6_metrics(results: Results) -> dict[str, float]:
    """Fig. 6 (CBR flow 0, TCP flow 1): mean throughputs (Mbps) after SETTLE, and the TCP's largest 1-s mean."""
    throughput = results.throughput
    throughput = throughput[throughput["time"] >= SETTLE]
    tcp = throughput[throughput["flow"] == 1]
    return {
        "cbr": throughput.loc[throughput["flow"] == 0, "bps"].mean() / MBPS,
        "tcp": tcp["bps"].mean() / MBPS,
        "tcp_peak": tcp.groupby(tcp["time"] // 1.0)["bps"].mean().max() / MBPS,
    }


@experiment(
    "fred-cbr", "FRED Figs. 6-7: an 8 Mbps CBR vs TCPs joining every 20 s on 10 Mbps, RED vs FRED", compares=True
)
def cbr(quick: bool) -> Reproduction:
    settings = QUICK if quick else FULL
    joins = [EPOCH * (k + 1) for k in range(TCP_JOINERS)]
    gateways = with_extra_mechanisms({m: paper_gateway(m) for m in ("red", "fred")})
    staggered = {
        m: run_seeds(cbr_scenario(m, qdisc, joins, settings.duration), settings.seeds) for m, qdisc in gateways.items()
    }
    epochs = {
        m: pd.concat([epoch_metrics(r) for r in runs])
        .groupby(["epoch", "tcps", "fair_share"], sort=False)
        .mean()
        .reset_index()
        for m, runs in staggered.items()
    }
    fig6 = run_seeds(cbr_scenario("red", paper_gateway("red"), [FIG6_TCP_START], FIG6_DURATION), settings.seeds)
    fig6_mean = pd.DataFrame([fig6_metrics(r) for r in fig6]).mean()
    table = pd.concat([e.assign(mechanism=m) for m, e in epochs.items()])[
        ["mechanism", "epoch", "tcps", "fair_share", "cbr", "tcp_min", "tcp_mean"]
    ]
    notes = [
        f"{len(settings.seeds)} run(s) per mechanism; epoch means leave out the first {SETTLE:g} s after each join; "
        "throughput in wire Mbps (cells).",
        "TCP timeouts over the staggered run (first seed): "
        + "; ".join(f"{describe(m).label} {runs[0].flows['timeouts'].tolist()[1:]}" for m, runs in staggered.items()),
    ]
    return Reproduction(
        rows=_fig6_rows(fig6_mean) + _fig7_rows(epochs["red"], epochs["fred"]),
        figure=_cbr_figure(fig6[0], {m: runs[0] for m, runs in staggered.items()}),
        data={"epochs": table.reset_index(drop=True)},
        show=["epochs"],
        notes=notes,
    )


def _fig6_rows(fig6: pd.Series) -> list[Row]:
    """§3.3, Fig. 6 under RED (`fig6`: the means of fig6_metrics)."""
    return [
        Row.at_least(
            "Fig. 6 RED, 1 TCP: CBR throughput (Mbps)",
            "8 almost all the time",
            fig6["cbr"],
            FIG6_UDP_MIN,
            key="fig6.red.1tcp.cbr",
        ),
        Row.between(
            "Fig. 6 RED, 1 TCP: TCP throughput (Mbps)",
            "the leftover 2",
            fig6["tcp"],
            *FIG6_TCP_BAND,
            key="fig6.red.1tcp.tcp",
        ),
        Row.at_most(
            "Fig. 6 RED: TCP's largest 1-s throughput (Mbps)",
            "below its 5 Mbps share",
            fig6["tcp_peak"],
            CBR_LINK_BPS / MBPS / 2,
            key="fig6.red.tcp_peak",
        ),
    ]


def _fig7_rows(red_epochs: pd.DataFrame, fred_epochs: pd.DataFrame) -> list[Row]:
    """§5, Fig. 7: per epoch, FRED's CBR near the fair share and its TCPs not far below; RED's CBR high."""
    rows = []
    for red, fred in zip(red_epochs.itertuples(), fred_epochs.itertuples(), strict=True):
        fair, epoch = fred.fair_share, f"tcps{fred.tcps}"
        rows.append(
            Row.within(
                f"Fig. 7 FRED {fred.epoch}, {fred.tcps} TCP: CBR (Mbps)",
                round(fair, 2),
                fred.cbr,
                FIG7_UDP_REL * fair,
                key=f"fig7.fred.{epoch}.cbr",
            )
        )
        rows.append(
            Row.at_least(
                f"Fig. 7 FRED {fred.epoch}, {fred.tcps} TCP: slowest TCP (Mbps)",
                round(fair, 2),
                fred.tcp_min,
                FIG7_TCP_MIN * fair,
                key=f"fig7.fred.{epoch}.slowest_tcp",
            )
        )
        rows.append(
            Row.at_least(
                f"RED {red.epoch}, {red.tcps} TCP: CBR (Mbps)",
                "most of the link",
                red.cbr,
                RED_UDP_MIN,
                key=f"fig7.red.{epoch}.cbr",
            )
        )
        rows.append(
            Row.ordered(
                f"ordering: {red.epoch}: CBR under RED > under FRED (Mbps)",
                "RED > FRED",
                [red.cbr, fred.cbr],
                relation=">",
                tolerance="order",
                key=f"order.fig7.{epoch}.cbr.red_gt_fred",
            )
        )
    return rows


def _cbr_figure(fig6: Results, staggered: dict[str, Results]) -> Any:
    """Fig. 6's run, then the Fig. 7 schedule under RED, FRED and each mechanism a user added."""
    titles = {"red": "Fig. 7 setup under RED", "fred": "Fig. 7, FRED"}
    fig, axes = subplots(1 + len(staggered), 1, figsize=(10, 3.2 * (1 + len(staggered))), sharey=True)
    panels = [(axes[0], fig6, "Fig. 6 setup, RED: CBR from 0 s, one TCP from 1 s")]
    panels += [
        (ax, results, f"{titles.get(m, describe(m).label)}: a TCP joins every 20 s")
        for ax, (m, results) in zip(axes[1:], staggered.items(), strict=True)
    ]
    for ax, results, title in panels:
        names = results.flows.set_index("id")["name"]
        for flow, series in results.throughput.groupby("flow"):
            ax.plot(series["time"], series["bps"] / MBPS, linewidth=0.9, label=names[flow])
        ax.set(ylabel="throughput (Mbps, 0.5 s bins)", title=title, ylim=(0, 10.5))
    # Max-min fair shares: the CBR's 8 Mbps alone, then 10 Mbps / (TCPs + 1).
    edges = [0.0] + [EPOCH * (k + 1) for k in range(TCP_JOINERS + 1)]
    fair = [CBR_BPS / MBPS] + [CBR_LINK_BPS / MBPS / (k + 2) for k in range(TCP_JOINERS)]
    for ax in axes[1:]:
        ax.stairs(fair, edges, baseline=None, color="black", linestyle=":", label="fair share")
    for ax in axes:
        ax.legend(fontsize=8, loc="upper right", ncol=6)
    axes[-1].set_xlabel("time (s)")
    fig.tight_layout()
    return fig
