"""SRED §VIII, Table II: the run of Table I, hits split by the zombie's Count and the mean
Total Occurrence of the hitting flow.

| | UDP hits | UDP Total Occ. | TCP hits | TCP Total Occ. |
|---|---|---|---|---|
| Count = 0 | 452 | 27.9 | 10,484 | 17 |
| Count = 1 | 38 | 28.2 | 495 | 18.1 |
| Count = 2 | 3 | 27 | 20 | 18.9 |
| Count = 3 | 1 | 29 | 1 | 12 |

"For the 'overactive' connection, a fraction .085 of all hits has Count ≥ 1. For the TCP
connection this fraction is .047. The overactive UDP connection also has higher average
Total Occurrences." Over all Counts the mean Total Occurrence is 27.9 (UDP) and 17.1 (TCP),
the hits-weighted means of the table.

Our qdisc counts hits with Count ≥ 1 (`repeat_hits`) and the mean Total Occurrence over a
flow's hits (`qdisc_flows`, docs/scenario.md), not the split by each Count.

Rows (reproduction-targets, sred-table2): both orderings exact; the Count ≥ 1 fractions
within ±50 % (a few dozen UDP hits: 42 of 494 in the paper), the mean Total Occurrences
within ±30 %.

Setup: `sred/__init__.py`; the run is sred-table1's (`hit_table`).
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from ...plots import subplots
from .. import Reproduction, Row, experiment
from . import misbehaving_run
from .table1 import FULL, QUICK, hit_table

# Table II by Count: (UDP hits, UDP Total Occurrence, TCP hits, TCP Total Occurrence).
TABLE2 = {0: (452, 27.9, 10_484, 17.0), 1: (38, 28.2, 495, 18.1), 2: (3, 27.0, 20, 18.9), 3: (1, 29.0, 1, 12.0)}
REPEAT_FRACTION = {"UDP": 0.085, "TCP": 0.047}  # §VIII
FRACTION_BAND = 0.5  # reproduction-targets
OCCURRENCE_BAND = 0.3  # reproduction-targets


def paper_total_occurrence(column: int) -> float:
    """Table II's mean Total Occurrence over all Counts, weighted by the hits (column 0: UDP, 2: TCP)."""
    hits = sum(row[column] for row in TABLE2.values())
    return sum(row[column] * row[column + 1] for row in TABLE2.values()) / hits


@experiment("sred-table2", "SRED Table II: hits by zombie Count and Total Occurrence, UDP vs TCPs")
def table2(quick: bool) -> Reproduction:
    settings = QUICK if quick else FULL
    table = hit_table(misbehaving_run(settings.duration))
    occurrence = {"UDP": paper_total_occurrence(0), "TCP": paper_total_occurrence(2)}
    rows = table2_rows(table, occurrence)
    shown = table[["hits", "repeat_hits", "repeat_fraction", "mean_total_occurrence"]].assign(
        paper_repeat_fraction=pd.Series(REPEAT_FRACTION), paper_total_occurrence=pd.Series(occurrence)
    )
    notes = [f"The run of sred-table1 ({settings.duration:g} s, counted after {settings.warmup:g} s)."]
    return Reproduction(
        rows=rows,
        figure=_figure(shown),
        data={"table2": shown.reset_index()},
        show=["table2"],
        notes=notes,
        explain=lambda row: _reason(table),
    )


def table2_rows(table: pd.DataFrame, occurrence: dict[str, float]) -> list[Row]:
    rows = []
    for source in ("UDP", "TCP"):
        rows += [
            Row.within(
                f"{source}: fraction of hits with Count ≥ 1",
                REPEAT_FRACTION[source],
                table.loc[source, "repeat_fraction"],
                FRACTION_BAND,
                relative=True,
                key=f"{source.lower()}.repeat_fraction",
            ),
            Row.within(
                f"{source}: mean Total Occurrence of hits",
                round(occurrence[source], 1),
                table.loc[source, "mean_total_occurrence"],
                OCCURRENCE_BAND,
                relative=True,
                key=f"{source.lower()}.total_occurrence",
            ),
        ]
    for column, label in (
        ("repeat_fraction", "Fraction of hits with Count ≥ 1"),
        ("mean_total_occurrence", "Mean Total Occurrence"),
    ):
        rows.append(
            Row.ordered(
                f"{label}: TCP vs UDP",
                "UDP higher",
                [{"TCP": table.loc["TCP", column]}, {"UDP": table.loc["UDP", column]}],
                digits=3,
                key=f"order.{column}",
            )
        )
    return rows


def _reason(table: pd.DataFrame) -> str:
    state = "; ".join(
        f"{source}: {r.hits:.0f} hits, {r.repeat_hits:.0f} with Count ≥ 1 ({r.repeat_fraction:.3f}), mean Total "
        f"Occurrence {r.mean_total_occurrence:.1f}, load {r.load:.0f} packets"
        for source, r in table.iterrows()
    )
    return f"measured over the window: {state}"


def _figure(shown: pd.DataFrame) -> Any:
    fig, axes = subplots(1, 2, figsize=(10, 4))
    for ax, (ours, paper, label) in zip(
        axes,
        [
            ("repeat_fraction", "paper_repeat_fraction", "fraction of hits with Count ≥ 1"),
            ("mean_total_occurrence", "paper_total_occurrence", "mean Total Occurrence"),
        ],
        strict=True,
    ):
        x = range(len(shown))
        ax.bar([i - 0.2 for i in x], shown[paper], width=0.4, label="paper")
        ax.bar([i + 0.2 for i in x], shown[ours], width=0.4, label="ours")
        ax.set_xticks(list(x), shown.index)
        ax.set(ylabel=label)
        ax.legend()
    fig.suptitle("SRED Table II: one UDP every 4 ms vs 100 TCPs")
    fig.tight_layout()
    return fig
