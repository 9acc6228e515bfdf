"""SRED §VI-A, Figs. 2–8: Full SRED's buffer occupancy with 10, 50, 100, 200, 300, 500 and
1000 persistent TCPs on the symmetrical network (RTT 42 ms), all starting at t = 0.

The paper: after the initial surge the occupancy stays "below or at worst slightly above
B/3"; "when the number of flows is less than 256, SRED stabilizes the buffer occupancy to a
level that is independent of the number of flows", above 256 it "increases with N, although
quite gradually"; it "almost never decreases below B/6"; overflow only "during the initial
surge".

Rows (tolerances of reproduction-targets, sred-fig2-8): the post-transient means for N = 10,
50, 100, 200 each within ±20 % of their average (the figures are single runs, read by eye;
the targets allow N = 10 out "if time-outs dominate", shown as the informative `.alt` row);
the mean for N = 1000 at least that for N = 100; at most 5 % of the 10 ms samples below B/6
and no overflow drop after the first 10 s, for every N.

Setup, TCP and durations: `sred/__init__.py`. The runs are shared with sred-fig9-11, sred-fig12-14 and
sred-pmax.
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from ...plots import subplots
from .. import Reproduction, Row, experiment
from . import FULL, QUICK, occupancy_figure, occupancy_table, persistent_run

FLAT_N = (10, 50, 100, 200)  # "less than 256": the sweep's values the flatness row compares
FLAT_BAND = 0.2  # each within ±20 % of their average (reproduction-targets)
BELOW_B6 = 0.05  # "almost never decreases below B/6": at most 5 % of the samples
NO_OVERFLOW = 0  # "when this happens it is always during the initial surge"


@experiment("sred-fig2-8", "SRED Figs. 2–8: Full SRED buffer occupancy, 10–1000 persistent TCPs")
def fig2_8(quick: bool) -> Reproduction:
    settings = QUICK if quick else FULL
    runs = {n: persistent_run(n, "full", settings.duration) for n in settings.sweep}
    table = occupancy_table(runs)
    rows = fig2_8_rows(table)
    means = table.set_index("n")["mean_kb"]
    notes = [
        f"One run of {settings.duration:g} s per N, measured after {settings.warmup:g} s; B = 500 KB, "
        "B/6 = 83.3 KB, B/3 = 166.7 KB.",
        "Post-transient mean occupancy (KB): " + ", ".join(f"N={n} {v:.0f}" for n, v in means.items()),
    ]
    return Reproduction(
        rows=rows,
        figure=_figure(runs),
        data={"fig2_8": table},
        show=["fig2_8"],
        notes=notes,
        explain=lambda row: _reason(row.key, table),
    )


def flatness(means: pd.Series, ns: tuple[int, ...]) -> float:
    """The largest relative distance of the means for `ns` from their average."""
    values = means[list(ns)]
    return float((values / values.mean() - 1).abs().max())


def fig2_8_rows(table: pd.DataFrame) -> list[Row]:
    by_n = table.set_index("n")
    means = by_n["mean_kb"]
    flat = Row.at_most(
        "Mean occupancy N = 10…200: largest deviation from their average",
        "independent of N (N < 256)",
        flatness(means, FLAT_N),
        FLAT_BAND,
        key="occupancy.flat_10_200",
    )
    without_10 = Row.at_most(
        flat.metric, flat.paper, flatness(means, FLAT_N[1:]), FLAT_BAND, key="occupancy.flat_10_200"
    ).informative("N = 10 left out (time-outs)", "alt_without_10")
    rows = [
        flat,
        without_10,
        Row.ordered(
            "Mean occupancy (KB): N = 100 vs 1000",
            "increases gradually for N > 256",
            [{"N=100": means[100]}, {"N=1000": means[1000]}],
            relation="<=",
            digits=1,
            key="order.occupancy.n100_le_n1000",
        ),
    ]
    for n, run in by_n.iterrows():
        rows += [
            Row.at_most(
                f"N = {n}: fraction of samples below B/6",
                "almost never",
                run["below_b6"],
                BELOW_B6,
                key=f"n{n}.below_b6",
            ),
            Row.at_most(
                f"N = {n}: overflow drops after 10 s",
                "only in the initial surge",
                run["overflow_drops"],
                NO_OVERFLOW,
                key=f"n{n}.overflow_after_10s",
            ),
        ]
    return rows


def _reason(key: str, table: pd.DataFrame) -> str:
    """Why a row fails, from the runs' occupancy, drops and timeouts."""
    by_n = table.set_index("n")
    state = "; ".join(
        f"N={n}: mean {r.mean_kb:.0f} KB, {r.below_b6:.1%} below B/6, {r.above_b3:.1%} at or above B/3, "
        f"{r.overflow_drops} overflow / {r.aqm_drops} SRED drops, {r.timeouts} timeouts"
        for n, r in by_n.iterrows()
    )
    return f"{key}: measured after the warm-up: {state}"


def _figure(runs: dict) -> Any:
    fig, axes = subplots(len(runs), 1, figsize=(9, 2.0 * len(runs)), sharex=True)
    for ax, (n, results) in zip(axes, runs.items(), strict=True):
        occupancy_figure(ax, results, f"Full SRED, {n} persistent connections")
    fig.tight_layout()
    return fig
