"""RED-PD §7.4, Fig. 18: the long flows beside the web traffic, RED vs RED-PD. "Apart from the
UDP flow, RED-PD also reduces the bandwidth obtained by the short-RTT TCP flows (1 and 2), as
their RTT is less than the target R of 40ms."

Rows (reproduction-targets, redpd-fig18), orderings per flow group: the UDP flow and the
20 ms TCPs (mean of the two) get less with RED-PD; the 40, 60, 80 and 100 ms TCPs (the mean
of each pair) get at least as much. Setup: `redpd/_web.py` (the run of redpd-fig17).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from ...plots import subplots
from ...results import MBPS
from .. import Reproduction, Row, RunSettings, experiment
from . import DURATION, QUICK_DURATION, WARMUP
from ._web import RTTS, web_run

FULL = RunSettings(duration=DURATION, warmup=WARMUP)
QUICK = RunSettings(duration=QUICK_DURATION, warmup=WARMUP)


@experiment("redpd-fig18", "RED-PD Fig. 18: 10 long TCPs (20…100 ms) and a 2 Mb/s UDP beside web traffic")
def fig18(quick: bool) -> Reproduction:
    settings = QUICK if quick else FULL
    goodput = {}
    for mechanism in ("red", "red_pd"):
        flows = web_run(mechanism, settings.duration).flows.set_index("name")["goodput_bps"] / MBPS
        groups = {
            f"tcp{rtt * 1000:.0f}": (flows[f"long{2 * i}"] + flows[f"long{2 * i + 1}"]) / 2
            for i, rtt in enumerate(RTTS)
        }
        goodput[mechanism] = {"udp": flows["udp"], **groups}
    table = pd.DataFrame(
        {"group": list(goodput["red"]), "red": goodput["red"].values(), "red_pd": goodput["red_pd"].values()}
    )
    return Reproduction(
        rows=fig18_rows(goodput),
        figure=_figure(table),
        data={"fig18": table},
        show=["fig18"],
        explain=lambda row: f"measured (Mb/s): {table.round(3).to_dict('records')}",
    )


def fig18_rows(goodput: dict[str, dict[str, float]]) -> list[Row]:
    """The UDP and the 20 ms TCPs get less under RED-PD than RED, the longer-RTT TCPs at least as much
    (`goodput` in Mb/s by mechanism and group)."""
    rows = [
        Row.ordered(
            f"{name} (Mb/s): RED-PD < RED",
            "RED-PD < RED",
            [{"RED-PD": goodput["red_pd"][name]}, {"RED": goodput["red"][name]}],
            digits=3,
            key=f"order.{name}",
        )
        for name in ("udp", "tcp20")
    ]
    rows += [
        Row.ordered(
            f"{name} (Mb/s, per flow): RED-PD ≥ RED",
            "RED-PD ≥ RED",
            [{"RED": goodput["red"][name]}, {"RED-PD": goodput["red_pd"][name]}],
            relation="<=",
            digits=3,
            key=f"order.{name}",
        )
        for name in ("tcp40", "tcp60", "tcp80", "tcp100")
    ]
    return rows


def _figure(table: pd.DataFrame) -> Any:
    fig, ax = subplots(figsize=(6, 4))
    x = np.arange(len(table))
    ax.bar(x - 0.2, table["red"], width=0.4, label="RED")
    ax.bar(x + 0.2, table["red_pd"], width=0.4, label="RED-PD")
    ax.set_xticks(x, table["group"])
    ax.set(ylabel="throughput (Mb/s)", title="RED-PD Fig. 18: long flows beside web traffic")
    ax.legend()
    fig.tight_layout()
    return fig
