"""SRED §VI-A, Figs. 12–14: RED ("w = 1/500", "p_max = .075", linear from B/6 to B/3) with
10, 100 and 1000 persistent TCPs on the symmetrical network, against Full SRED's runs of
Figs. 2–8.

The paper: "for SRED the buffer occupancy is independent of the number of connections from
10 to 300 connections ... for RED the buffer occupancy increases with the number of
connections"; RED with 10 sources recovers slowly after the initial burst and then shows a
"sawtooth" (the figure shows it; no row). The authors call the comparison "far from
systematic".

Rows (reproduction-targets, sred-fig12-14, ordering only): RED's post-transient mean
occupancy strictly increasing over N = 10, 100, 1000; the spread (largest over smallest
mean) of SRED's means over N = 10…300 smaller than RED's over N = 10…1000.

Setup: `sred/__init__.py` (`red_qdisc`); the SRED runs are sred-fig2-8's.
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from ...plots import subplots
from .. import Reproduction, Row, experiment
from . import FIGURE_N, FULL, QUICK, occupancy_figure, occupancy_table, persistent_run

SRED_FLAT_N = (10, 50, 100, 200, 300)  # "from 10 to 300 connections"


@experiment("sred-fig12-14", "SRED Figs. 12–14: RED's buffer occupancy with 10, 100, 1000 persistent TCPs")
def fig12_14(quick: bool) -> Reproduction:
    settings = QUICK if quick else FULL
    red_runs = {n: persistent_run(n, "red", settings.duration) for n in FIGURE_N}
    sred_runs = {n: persistent_run(n, "full", settings.duration) for n in settings.sweep}
    red = occupancy_table(red_runs).assign(mechanism="RED")
    sred = occupancy_table(sred_runs).assign(mechanism="SRED")
    table = pd.concat([sred, red], ignore_index=True)
    rows = fig12_14_rows(red.set_index("n")["mean_kb"], sred.set_index("n")["mean_kb"])
    notes = [f"One run of {settings.duration:g} s per point, means after {settings.warmup:g} s."]
    return Reproduction(
        rows=rows,
        figure=_figure(red_runs, sred_runs),
        data={"fig12_14": table},
        show=["fig12_14"],
        notes=notes,
        explain=lambda row: _reason(table),
    )


def spread(means: pd.Series) -> float:
    """Largest over smallest mean occupancy."""
    return float(means.max() / means.min())


def fig12_14_rows(red: pd.Series, sred: pd.Series) -> list[Row]:
    return [
        Row.ordered(
            "RED mean occupancy (KB) by N",
            "increases with N",
            [{f"N={n}": red[n]} for n in FIGURE_N],
            digits=1,
            key="order.red.occupancy_by_n",
        ),
        Row.ordered(
            "Spread of mean occupancy (max/min): SRED N = 10…300 vs RED N = 10…1000",
            "SRED flat, RED increasing",
            [{"SRED": spread(sred[list(SRED_FLAT_N)])}, {"RED": spread(red)}],
            key="order.spread.sred_lt_red",
        ),
    ]


def _reason(table: pd.DataFrame) -> str:
    state = "; ".join(
        f"{r.mechanism} N={r.n}: mean {r.mean_kb:.0f} KB, {r.below_b6:.1%} below B/6, "
        f"{r.aqm_drops} early / {r.overflow_drops} overflow drops, {r.timeouts} timeouts"
        for r in table.itertuples()
    )
    return f"measured after the warm-up: {state}"


def _figure(red_runs: dict, sred_runs: dict) -> Any:
    fig, axes = subplots(len(FIGURE_N), 2, figsize=(12, 2.4 * len(FIGURE_N)), sharex=True, sharey=True)
    for row, n in zip(axes, FIGURE_N, strict=True):
        occupancy_figure(row[0], red_runs[n], f"RED, {n} persistent connections")
        occupancy_figure(row[1], sred_runs[n], f"Full SRED, {n} persistent connections")
    fig.tight_layout()
    return fig
