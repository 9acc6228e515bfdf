"""One scenario under several queue disciplines on its bottleneck: the demo, generalised.

`compare(scenario, ["red", "csfq", "fq_codel"])` runs the scenario once per mechanism and
returns one row per mechanism: goodput of each flow group (flows `name[i]` of one `count`
summed), Jain's index of goodput / fair share, the bottleneck's utilisation, the drop rate
over the measurement window, and the median and 99th-percentile queueing delay of the
bottleneck (queue samples, bytes / rate). A mechanism is a preset name (`presets()`: the
CSFQ paper's configurations on its 64 KB buffer, then aqmlab's other mechanisms on the same
buffer) or any qdisc `type` with its defaults.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import pandas as pd

from ._core import ScenarioError
from .results import MBPS, Results
from .scenario import Scenario

if TYPE_CHECKING:
    from matplotlib.figure import Figure

_INDEX = re.compile(r"\[\d+\]$")


def presets() -> dict[str, dict[str, Any]]:
    """Named qdisc tables: the demo's (CSFQ §3's mechanisms, then aqmlab's others on the same
    64 KB buffer; see experiments/demo.py)."""
    from .experiments.demo import MECHANISMS

    return dict(MECHANISMS)


def mechanisms(names: Sequence[str]) -> dict[str, dict[str, Any]]:
    """The qdisc table of each name: a preset, or a qdisc type with its defaults; `["all"]`
    gives every preset."""
    known = presets()
    if list(names) == ["all"]:
        return known
    return {name: known.get(name, {"type": name}) for name in names}


def compare(
    scenario: Scenario, names: Sequence[str], link: str | None = None
) -> tuple[pd.DataFrame, dict[str, Results]]:
    """Runs `scenario` with each mechanism of `names` on `link` (see `Scenario.with_qdisc`;
    None: the bottleneck) and returns the table (one row per mechanism) and the runs."""
    from . import run

    tables = mechanisms(names)
    for name, table in tables.items():
        try:
            scenario.with_qdisc(table, link=link).validate()
        except ScenarioError as e:
            raise ScenarioError(f"mechanism {name!r}: {e}") from None
    runs = {name: run(scenario.with_qdisc(table, link=link)) for name, table in tables.items()}
    return pd.DataFrame([_row(name, results) for name, results in runs.items()]), runs


def _row(name: str, results: Results) -> dict[str, Any]:
    flows = results.flows
    row: dict[str, Any] = {"mechanism": name}
    groups = flows.groupby(flows["name"].str.replace(_INDEX, "", regex=True), sort=False)["goodput_bps"].sum()
    row.update({f"{group}_mbps": bps / MBPS for group, bps in groups.items()})
    bottleneck = results.links.loc[results.links["utilisation"].idxmax()]
    queue = results.queue[(results.queue["link"] == bottleneck["id"]) & (results.queue["time"] >= results.warmup)]
    delay_ms = queue["bytes"] * 8 / bottleneck["rate_bps"] * 1000
    sent = flows["window_sent_packets"].sum()
    row.update(
        {
            "jain_index": results.summary(wall_time=False)["jain_index"],
            "utilisation": bottleneck["utilisation"],
            "drop_rate": flows["window_dropped_packets"].sum() / sent if sent else 0.0,
            "delay_median_ms": delay_ms.median() if len(delay_ms) else 0.0,
            "delay_p99_ms": delay_ms.quantile(0.99) if len(delay_ms) else 0.0,
        }
    )
    return row


def compare_figure(table: pd.DataFrame, title: str = "") -> Figure:
    """Goodput of each flow group per mechanism (stacked bars), and the queueing delay (median
    and 99th percentile) per mechanism."""
    from .plots import pyplot

    groups = [c for c in table.columns if c.endswith("_mbps")]
    fig, (left, right) = pyplot().subplots(1, 2, figsize=(max(8.0, 1.1 * len(table) + 4), 4))
    bottom = pd.Series(0.0, index=table.index)
    for group in groups:
        left.bar(table["mechanism"], table[group], bottom=bottom, label=group.removesuffix("_mbps"))
        bottom += table[group]
    left.set_ylabel("goodput (Mbps)")
    left.legend(fontsize=8)
    right.bar(table["mechanism"], table["delay_p99_ms"], color="lightgray", label="99th percentile")
    right.bar(table["mechanism"], table["delay_median_ms"], label="median")
    right.set_ylabel("queueing delay (ms)")
    right.legend(fontsize=8)
    for ax in (left, right):
        ax.tick_params(axis="x", rotation=60)
    fig.suptitle(title or "mechanisms compared")
    fig.tight_layout()
    return fig
