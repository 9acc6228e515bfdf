"""CSFQ §3.1, Fig. 4: one TCP against N-1 UDPs each at twice its fair share 10/N Mbps,
N = 2…32; the TCP's throughput / fair share under each mechanism.

Fig. 4's UDP rate: the clean copy prints "$-bps", the interleaved one "10 Mbps"; twice the
fair share 10/N Mbps is the only reading consistent with "twice its fair share rate"
(reproduction-targets: csfq-fig4). Other choices: `csfq/_figures.py`.
"""

from __future__ import annotations

from dataclasses import replace

import pandas as pd

from ...presets import CSFQ_MECHANISMS as MECHANISMS
from ...results import MBPS
from ...scenario import Scenario
from .. import Reproduction, Row, experiment
from . import TCP
from . import _figures as figures
from ._figures import LINK_MBPS, curves_figure, demo_scenario, flow0_normalised, tcp_losses

# N = 2...32; quick runs a few N on both sides of the paper's DRR/CSFQ crossover.
FULL = replace(figures.FULL, sweep=range(2, 33))
QUICK = replace(figures.QUICK, sweep=(4, 12, 20, 26, 32))
# "DRR performs very well when there are less than 22 flows" (reproduction-targets: DRR >= 0.8
# for N <= 20); "CSFQ performs better than DRR when the number of flows is large" (crossover in
# [22, 32]); "across the entire range, CSFQ provides similar or better performance as compared
# to FRED" (CSFQ >= FRED - 0.1: one TCP's 10-s throughput varies by about that much).
FIG4_DRR_GOOD_UP_TO, FIG4_DRR_GOOD_MIN = 20, 0.8
FIG4_CROSSOVER = (22, 32)
FIG4_CSFQ_VS_FRED_SLACK = 0.1
# RED and FIFO are the "(unfair) status quo": far below the fair share at every N.
FIG4_BASELINE_MAX = 0.5


def fig4_flows(n: int) -> list[dict]:
    """One TCP (flow 0) and n-1 UDPs, each at twice its fair share 10/n Mbps."""
    return [
        {"name": "tcp", "type": "tcp", "tcp": TCP},
        {"name": "udp", "type": "cbr", "rate": 2 * LINK_MBPS * MBPS / n, "jitter": True, "count": n - 1},
    ]


@experiment("csfq-fig4", "CSFQ Fig. 4: one TCP vs N-1 UDPs at twice their fair share, N = 2..32")
def fig4(quick: bool) -> Reproduction:
    settings = QUICK if quick else FULL
    scenarios = {n: demo_scenario(f"csfq-fig4-n{n}", fig4_flows(n), settings) for n in settings.sweep}
    table = flow0_normalised(scenarios, settings.seeds)
    figure = curves_figure(
        [(table, "total number of flows N", "TCP throughput / fair share", "1 TCP vs N-1 UDPs at 2 x 10/N Mbps")],
        list(MECHANISMS),
        "CSFQ Fig. 4",
    )
    table = table.rename(columns={"x": "n"})
    notes = [
        f"Normalised TCP throughput: mean of seeds {settings.seeds}; `fred` = better of fred-1 and fred-2 at each N."
    ]
    return Reproduction(
        rows=fig4_rows(table),
        figure=figure,
        data={"tcp_normalised": table},
        show=["tcp_normalised"],
        notes=notes,
        explain=lambda row: _reason(table, scenarios, settings.seeds[0]) if row.key == "csfq_minus_fred.min" else None,
    )


def _reason(table: pd.DataFrame, scenarios: dict[int, Scenario], seed: int) -> str:
    """The TCP's losses under CSFQ and both FREDs at the N where CSFQ falls furthest below FRED."""
    worst = int(table.loc[(table["csfq"] - table["fred"]).idxmin(), "n"])
    return f"at N = {worst}, " + tcp_losses(scenarios[worst], seed, ("csfq", "fred-1", "fred-2"))


def fig4_rows(table: pd.DataFrame) -> list[Row]:
    """DRR good for few flows and declining for many, CSFQ overtaking it, CSFQ no worse than
    FRED, RED and FIFO low (`table`: flow0_normalised by number of flows `n`)."""
    few = table[table["n"] <= FIG4_DRR_GOOD_UP_TO]
    above = table[table["csfq"] > table["drr"]]
    crossover = int(above["n"].min()) if len(above) else float("nan")
    largest = table.iloc[-1]
    margin = table["csfq"] - table["fred"]
    worst = table.loc[margin.idxmin()]
    baseline = table[["red", "droptail"]].max(axis=1)
    return [
        Row.at_least(
            f"DRR lowest, N <= {FIG4_DRR_GOOD_UP_TO}",
            "very well (< 22 flows)",
            few["drr"].min(),
            FIG4_DRR_GOOD_MIN,
            key="drr.few_flows.min",
        ),
        Row.between(
            "First N with CSFQ > DRR",
            "large N (DRR declines after 22)",
            crossover,
            *FIG4_CROSSOVER,
            key="crossover.csfq_gt_drr",
        ),
        Row.at_most(
            f"DRR at N = {int(largest['n'])}",
            "declines after 22",
            largest["drr"],
            FIG4_DRR_GOOD_MIN,
            key="drr.most_flows",
        ),
        Row.at_least(
            f"CSFQ - FRED, lowest over N (at N = {int(worst['n'])})",
            "similar or better",
            margin.min(),
            -FIG4_CSFQ_VS_FRED_SLACK,
            key="csfq_minus_fred.min",
        ),
        Row.at_most(
            "RED, FIFO highest over N",
            "status quo (unfair)",
            baseline.max(),
            FIG4_BASELINE_MAX,
            key="baseline.max",
        ),
    ]
