"""SRED §VI-B, Figs. 15–16: 100 persistent TCPs on the asymmetrical network (minimal RTT 6 →
82 ms linearly), Simple SRED (eq. 4.4) against Full SRED (eq. 5.1).

The paper: "connections with short round trip times get higher throughput ... 'Full SRED'
reduces this advantage by a small but noticeable amount. The squared coefficient of
variation of the 100 throughputs is .1039 in the case of Simple SRED and .0522 in the case
of Full SRED"; "Simple SRED and Full SRED are equally effective in stabilizing buffer
occupation"; the effect "increases when the number of active connections decreases" (no N
given: we compare 20 connections with 100).

Rows (reproduction-targets, sred-fig15-16): CoV² (population variance over squared mean of
the goodputs after 10 s) Simple 0.1039 ± 40 %, Full 0.0522 ± 40 %, Full/Simple ≤ 0.75;
throughput falling with RTT (the shortest-RTT fifth of the flows above the longest-RTT fifth)
under both; the two means of occupancy within ±20 % of each other (the band of sred-fig2-8's
"independent of N"); the Full/Simple CoV² ratio smaller with 20 connections than with 100.

Where we differ (full run): CoV² Simple 0.078 and Full 0.043 (paper .1039, .0522), ratio
0.55 (paper 0.50); with 20 connections the ratio is 0.71, not smaller than with 100, so the
last row fails. The paper's remark gives no N and no number to weigh it against.

Verdict: open. Measured while judging (issue 27, 5 seeds of 100 s): the ratio is 0.52–0.86
(mean 0.70) with 20 connections and 0.51–0.62 (mean 0.56) with 100, so ours is weaker with
fewer connections in every seed, not by one run's noise (the 30 s quick run gives 0.23 with
20). The paper's own equations do not give its remark either: a flow sending π_i of the
packets causes a hit with probability π_i and P(t) ≈ Σπ_j² (eq. 3.4), so eq. 5.1 raises its
drop probability by 1 + π_i/P = 1 + r_i/mean(r²) on average (r_i its rate over the mean), in
which N cancels; with TCP's square-root law this predicts a ratio of 0.62 for both N from our
Simple runs. Ours lies on either side of that, the paper's claim on one; neither the paper's
arithmetic nor a named gap in our model explains it.

Setup: `sred/__init__.py` (`host_delays`).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from ...plots import subplots
from ...results import MBPS, Results
from .. import Reproduction, Row, experiment
from . import FULL, QUICK, occupancy_metrics, persistent_run

N = 100
FEW = 20  # "when the number of active connections decreases": unstated, our choice
COV2 = {"simple": 0.1039, "full": 0.0522}  # §VI-B
COV2_BAND = 0.4  # reproduction-targets: one run, a second moment of 100 noisy throughputs
RATIO_MAX = 0.75  # Full/Simple "small but noticeable" (reproduction-targets)
SAME_OCCUPANCY = 0.2  # "equally effective": within ±20 %
NAMES = {"simple": "Simple SRED", "full": "Full SRED"}


def cov2(results: Results) -> float:
    """Squared coefficient of variation of the flows' goodputs (population variance)."""
    goodput = results.flows["goodput_bps"].to_numpy()
    return float(goodput.var() / goodput.mean() ** 2)


def rtt_advantage(results: Results) -> dict[str, float]:
    """Mean goodput (Mb/s) of the fifth of flows with the shortest and with the longest RTT."""
    goodput = results.flows.sort_values("base_rtt")["goodput_bps"].to_numpy() / MBPS
    fifth = len(goodput) // 5
    return {"short_mbps": float(goodput[:fifth].mean()), "long_mbps": float(goodput[-fifth:].mean())}


@experiment("sred-fig15-16", "SRED Figs. 15–16: Simple vs Full SRED, 100 TCPs with RTTs 6–82 ms")
def fig15_16(quick: bool) -> Reproduction:
    settings = QUICK if quick else FULL
    runs = {(n, v): persistent_run(n, v, settings.duration, asymmetric=True) for n in (N, FEW) for v in NAMES}
    table = pd.DataFrame(
        [
            {
                "n": n,
                "variant": v,
                "cov2": cov2(r),
                **rtt_advantage(r),
                **occupancy_metrics(r),
            }
            for (n, v), r in runs.items()
        ]
    )
    rows = fig15_16_rows(table.set_index(["n", "variant"]))
    notes = [
        f"One run of {settings.duration:g} s per point, goodput and occupancy after {settings.warmup:g} s; "
        "RTT 6 → 82 ms linearly over the flows; 'short'/'long': the fifth of flows with the shortest/longest RTT."
    ]
    figure = _figure({v: runs[(N, v)] for v in NAMES})
    return Reproduction(
        rows=rows,
        figure=figure,
        data={"fig15_16": table},
        show=["fig15_16"],
        notes=notes,
        explain=lambda row: _reason(table),
    )


def fig15_16_rows(table: pd.DataFrame) -> list[Row]:
    at = table.loc
    rows = [
        Row.within(
            f"{NAMES[v]}: CoV² of the 100 throughputs",
            COV2[v],
            at[(N, v), "cov2"],
            COV2_BAND,
            relative=True,
            key=f"{v}.cov2",
        )
        for v in NAMES
    ]
    rows.append(
        Row.at_most(
            "CoV² Full / Simple",
            round(COV2["full"] / COV2["simple"], 3),
            at[(N, "full"), "cov2"] / at[(N, "simple"), "cov2"],
            RATIO_MAX,
            key="cov2_ratio",
        )
    )
    rows += [
        Row.ordered(
            f"{NAMES[v]}: throughput (Mb/s), longest- vs shortest-RTT fifth",
            "short RTTs get more",
            [{"long": at[(N, v), "long_mbps"]}, {"short": at[(N, v), "short_mbps"]}],
            digits=3,
            key=f"order.{v}.throughput_by_rtt",
        )
        for v in NAMES
    ]
    rows.append(
        Row.between(
            "Mean occupancy Full / Simple",
            "equally effective",
            at[(N, "full"), "mean_kb"] / at[(N, "simple"), "mean_kb"],
            1 - SAME_OCCUPANCY,
            1 + SAME_OCCUPANCY,
            key="occupancy_ratio",
        )
    )
    ratio = {n: at[(n, "full"), "cov2"] / at[(n, "simple"), "cov2"] for n in (FEW, N)}
    rows.append(
        Row.ordered(
            f"CoV² Full / Simple: {FEW} vs {N} connections",
            "Full SRED's effect grows as N decreases",
            [{f"N={FEW}": ratio[FEW]}, {f"N={N}": ratio[N]}],
            digits=3,
            key="order.cov2_ratio.few_lt_many",
        )
    )
    return rows


def _reason(table: pd.DataFrame) -> str:
    by = table.set_index(["n", "variant"])["cov2"]
    ratio = {n: by[(n, "full")] / by[(n, "simple")] for n in (FEW, N)}
    state = "; ".join(
        f"{NAMES[r.variant]} N={r.n}: CoV² {r.cov2:.4f}, short-RTT fifth {r.short_mbps:.3f} / long {r.long_mbps:.3f} "
        f"Mb/s, mean occupancy {r.mean_kb:.0f} KB, {r.timeouts} timeouts, {r.aqm_drops} SRED drops"
        for r in table.itertuples()
    )
    return (
        f"CoV² Full / Simple {ratio[FEW]:.3f} with {FEW} connections, {ratio[N]:.3f} with {N}; measured after the "
        f"warm-up: {state}"
    )


def _figure(runs: dict[str, Results]) -> Any:
    fig, axes = subplots(1, len(runs), figsize=(12, 4), sharey=True)
    for ax, (variant, results) in zip(axes, runs.items(), strict=True):
        flows = results.flows.sort_values("base_rtt")
        ax.plot(np.arange(1, len(flows) + 1), flows["goodput_bps"] / MBPS, marker=".", linewidth=0)
        ax.set(
            title=f"{N} asymmetrical connections, {NAMES[variant]} (CoV² {cov2(results):.3f})",
            xlabel="connection (RTT 6 → 82 ms)",
            ylabel="throughput (Mb/s)",
        )
    fig.tight_layout()
    return fig
