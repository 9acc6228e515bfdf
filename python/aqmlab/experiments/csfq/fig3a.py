"""CSFQ §3.1, Fig. 3(a): 32 UDP flows on a 10 Mbps link, flow i sending (i+1) × its
0.3125 Mbps fair share, under each mechanism: CSFQ, DRR and FRED-2 share fairly, FIFO, RED
and FRED-1 in proportion to the input rates.

Setup and the choices where the paper is silent: `csfq/_figures.py`.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import numpy as np
import pandas as pd

import aqmlab

from ...plots import new_figure
from ...presets import CSFQ_MECHANISMS as MECHANISMS
from ...results import MBPS
from .. import PAPER_NAMES, Reproduction, Row, experiment
from . import _figures as figures
from ._figures import LINK_MBPS, demo_scenario

# Fig. 3(a): "flow i sends i + 1 times more than its fair share of 0.3125 Mbps".
FIG3A_FLOWS = 32
FIG3A_FAIR_MBPS = LINK_MBPS / FIG3A_FLOWS
# "for CSFQ the throughputs of all flows are between -11% and +5% of the ideal value"
FIG3A_CSFQ_BAND = (-0.11, 0.05)
# Accepted: the paper's band widened to [-20 %, +15 %] (reproduction-targets: csfq-fig3a),
# since the paper's band comes from one 10-s run of a randomised estimator.
FIG3A_CSFQ_ACCEPT = (-0.20, 0.15)
# "DRR is extremely effective": no number given; we accept every flow within 5 % of its share,
# under half of CSFQ's reported -11 % (flow 0 sends exactly its share, so its jittered queue
# is critically loaded and loses a few packets to longest-queue drop).
FIG3A_DRR_MAX_DEVIATION = 0.05
# "FIFO, RED, and FRED-1 fail to ensure fairness, with each flow getting a share proportional
# to its incoming rate"; "CSFQ and FRED-2 achieve a less precise degree of fairness".
FIG3A_ALLOCATION = {
    "droptail": "proportional",
    "red": "proportional",
    "fred-1": "proportional",
    "fred-2": "fair",
    "drr": "fair",
    "csfq": "fair",
}

# One run (seed 1) per mechanism. Fig. 3(a) has only UDP flows, which CSFQ settles within a few
# K = 100 ms, and its check is a band for a 10-s average: quick runs keep the 10-s window and
# shorten the warm-up.
FULL = replace(figures.FULL, seeds=(1,))
QUICK = replace(figures.QUICK, duration="12s")


@experiment("csfq-fig3a", "CSFQ Fig. 3(a): 32 UDP flows, flow i at (i+1)x its 0.3125 Mbps fair share, per mechanism")
def fig3a(quick: bool) -> Reproduction:
    settings = QUICK if quick else FULL
    flows = [
        {"name": f"udp{i}", "type": "cbr", "rate": (i + 1) * FIG3A_FAIR_MBPS * MBPS, "jitter": True}
        for i in range(FIG3A_FLOWS)
    ]
    scenario = demo_scenario("csfq-fig3a", flows, settings)
    runs = {name: aqmlab.run(scenario.with_qdisc(qdisc)) for name, qdisc in MECHANISMS.items()}
    goodput = {name: results.flows["goodput_bps"].to_numpy() / MBPS for name, results in runs.items()}
    offered = np.array([f["rate"] for f in flows]) / MBPS
    # Shares proportional to the offered rates: flow i gets (i+1) x 10/528 Mbps.
    proportional = offered * LINK_MBPS / offered.sum()
    per_flow = pd.DataFrame(
        {
            "flow": range(FIG3A_FLOWS),
            "offered_mbps": offered,
            "fair_mbps": FIG3A_FAIR_MBPS,
            "proportional_mbps": proportional,
        }
    )
    for name, mbps in goodput.items():
        per_flow[f"{name}_mbps"] = mbps
    fairness = fig3a_metrics(goodput, proportional)
    notes = [
        "Allocation nearer to (RMS distance over the 32 flows): proportional shares (i+1) x 10/528 Mbps, "
        "or the fair share 0.3125 Mbps."
    ]
    return Reproduction(
        rows=fig3a_rows(fairness.set_index("mechanism")),
        figure=_fig3a_figure(per_flow["flow"], goodput),
        data={"per_flow": per_flow, "fairness": fairness},
        show=["fairness"],
        notes=notes,
        explain=lambda row: _drr_deviation_reason(runs["drr"]) if row.key == "drr.largest_deviation" else None,
    )


def _drr_deviation_reason(results: aqmlab.Results) -> str:
    """What the DRR flow farthest from its fair share sent and lost in the window, measured."""
    flows = results.flows
    deviation = flows["goodput_bps"] / (FIG3A_FAIR_MBPS * MBPS) - 1
    worst = int(deviation.abs().idxmax())
    flow = flows.loc[worst]
    drops = results.drops[results.drops["flow"] == worst].groupby("reason")["window_count"].sum()
    mix = ", ".join(f"{reason} {n}" for reason, n in drops.items() if n > 0) or "none"
    window = results.duration - results.warmup
    offered = (worst + 1) * FIG3A_FAIR_MBPS
    due = offered * MBPS * window / (8 * flow["sent_bytes"] / flow["sent_packets"])
    return (
        f"DRR's flow {worst} (offered {offered:.4g} Mbps, {worst + 1}x its fair share) gets {deviation[worst]:+.1%}: "
        f"it sent {flow['window_sent_packets']} packets in the {window:g}-s window ({due:.1f} due at its rate) and "
        f"DRR dropped {flow['window_dropped_packets']} of them (drops {mix}). Pushout drops from the longest queue: "
        "a flow offering exactly its share keeps a critically loaded queue, which the jitter makes the longest at "
        "times."
    )


def fig3a_metrics(goodput: dict[str, np.ndarray], proportional: np.ndarray) -> pd.DataFrame:
    """Per mechanism (`goodput`: each flow's, Mbps): the lowest and highest flow and the
    largest |deviation| relative to the fair share, and the RMS distances to the fair and
    to the proportional allocation."""
    rows = []
    for name, mbps in goodput.items():
        deviation = mbps / FIG3A_FAIR_MBPS - 1
        rows.append(
            {
                "mechanism": name,
                "lowest_vs_fair": deviation.min(),
                "highest_vs_fair": deviation.max(),
                "largest_abs_deviation": np.abs(deviation).max(),
                "rms_to_fair_mbps": _rms(mbps - FIG3A_FAIR_MBPS),
                "rms_to_proportional_mbps": _rms(mbps - proportional),
            }
        )
    return pd.DataFrame(rows)


def _rms(x: np.ndarray) -> float:
    return float(np.sqrt(np.mean(np.square(x))))


def fig3a_rows(fairness: pd.DataFrame) -> list[Row]:
    """CSFQ within its band, DRR within FIG3A_DRR_MAX_DEVIATION, DRR < CSFQ < the unfair ones,
    and each mechanism's allocation nearer to the paper's (`fairness`: fig3a_metrics by mechanism)."""
    csfq, drr = fairness.loc["csfq"], fairness.loc["drr"]
    low, high = FIG3A_CSFQ_BAND
    unfair = min(fairness.loc[m, "largest_abs_deviation"] for m in ("droptail", "red", "fred-1"))
    rows = [
        Row.at_least(
            "CSFQ lowest flow vs fair share",
            f"{low:+.0%}",
            csfq.lowest_vs_fair,
            FIG3A_CSFQ_ACCEPT[0],
            key="csfq.lowest_vs_fair",
        ),
        Row.at_most(
            "CSFQ highest flow vs fair share",
            f"{high:+.0%}",
            csfq.highest_vs_fair,
            FIG3A_CSFQ_ACCEPT[1],
            key="csfq.highest_vs_fair",
        ),
        Row.at_most(
            "DRR largest |deviation| from fair share",
            "extremely effective",
            drr.largest_abs_deviation,
            FIG3A_DRR_MAX_DEVIATION,
            key="drr.largest_deviation",
        ),
        Row.ordered(
            "Largest |deviation|: DRR < CSFQ < FIFO, RED, FRED-1",
            "DRR < CSFQ < FIFO, RED, FRED-1",
            [{"DRR": drr.largest_abs_deviation}, {"CSFQ": csfq.largest_abs_deviation}, unfair],
            digits=3,
            key="order.largest_deviation",
        ),
    ]
    for name, paper in FIG3A_ALLOCATION.items():
        fair, proportional = fairness.loc[name, "rms_to_fair_mbps"], fairness.loc[name, "rms_to_proportional_mbps"]
        ours = "fair" if fair < proportional else "proportional"
        rows.append(
            Row(
                f"{PAPER_NAMES[name]} allocation nearer to",
                paper,
                f"{ours} (RMS {fair:.3f} to fair, {proportional:.3f} to proportional)",
                "the nearer of the two",
                ours == paper,
                key=f"{name}.allocation",
                # Another simulator's value of this row is its nearer allocation ("fair", "proportional").
                check=lambda nearer, paper=paper: nearer == paper,
            )
        )
    return rows


def _fig3a_figure(flow: pd.Series, goodput: dict[str, np.ndarray]) -> Any:
    fig = new_figure(figsize=(9, 4.8))
    ax = fig.gca()
    for name, mbps in goodput.items():
        ax.plot(flow, mbps, marker="o", markersize=3.5, linewidth=1.2, label=PAPER_NAMES[name])
    ax.axhline(FIG3A_FAIR_MBPS, color="black", linestyle="--", linewidth=0.8, label="fair share (0.3125)")
    ax.set_xlabel("flow i (sends (i+1) x 0.3125 Mbps)")
    ax.set_ylabel("throughput over 10 s (Mbps)")
    ax.set_title("CSFQ Fig. 3(a): 32 UDP flows on a 10 Mbps link")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8, ncol=2)
    fig.tight_layout()
    return fig
