"""`l4s-unresponsive`: the four flows and a UDP flood at half the link (5 Mbit/s, as `today-tcp`'s)
that marks ECT(1), so DualPI2 puts it in its low-latency queue. Graded:
- CSFQ and DRR hold it at most 1.5 times its fair share (CSFQ §3.1: 1.16 and 1.27; `today-tcp`'s
  rows);
- DualPI2, which has no queue protection (Linux's has none; RFC 9330 §8.2: "Without it, there
  will be potential for attacks on the low latency of the L4S service"), lets it take more of its
  fair share than CSFQ does: an ordering.

    aqmlab reproduce l4s-unresponsive [--quick]
"""

from __future__ import annotations

from .. import Reproduction, Row, experiment
from ..today.tcp import flood_held_rows
from .mix import CLASSES, FLOOD_RATE, class_table, headline, settings_note, shares_figure

FLOOD_HELD = ("csfq", "drr")


@experiment(
    "l4s-unresponsive",
    "An ECT(1) UDP flood beside 2 Prague and 2 CUBIC, per mechanism: DualPI2 against the seeds",
    compares=True,
)
def l4s_unresponsive(quick: bool) -> Reproduction:
    table = class_table(flood=True, quick=quick)
    by = table.set_index("mechanism")
    rows = flood_held_rows(by, FLOOD_HELD, "ECT(1) flood")
    rows.append(
        Row.ordered(
            "ECT(1) flood / its fair share: CSFQ < DualPI2 (no queue protection)",
            "CSFQ < DualPI2 (RFC 9330 §8.2)",
            [by.at["csfq", "flood_share"], by.at["dualpi2", "flood_share"]],
            key="flood.dualpi2_over_csfq",
        )
    )
    classes = ("flood",) + CLASSES
    return Reproduction(
        rows=rows,
        figure=shares_figure(table, classes, f"a {FLOOD_RATE} ECT(1) flood, 2 Prague and 2 CUBIC on 10 Mb/s"),
        data={"classes": table},
        show=["classes"],
        notes=[settings_note(quick), headline(by, classes)],
    )
