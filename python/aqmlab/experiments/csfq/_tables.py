"""CSFQ paper (Stoica, Shenker, Zhang, SIGCOMM 1998) §3.4–§3.6: the setup shared by
Tables 1–4, one module per table (csfq/table1.py … csfq/table4.py).

Common setup (§3, see csfq/__init__.py): 10 Mbps output links with 1 ms latency and a 64 KB
buffer, RED/FRED thresholds 16 KB and 32 KB, K = K_alpha = K_c = 100 ms, the first
router of a flow is its CSFQ edge. Hosts attach through 100 Mbps drop-tail links as in
the demo (scenarios/csfq-fig3b.toml), so sources offer their full rate to the congested
link. Packets are 1000 bytes ("1 packet = 1 KB", §3.4). UDP sources have interarrival
times uniform in [0.5, 1.5) x the mean (footnote 4).

Choices for values the paper leaves unstated:
- TCP: `csfq.TCP`, ns-2's TCP of 1998 (`profile = "ns2"`), as every §3 experiment. Its
  100 ms `tcpTick_` keeps the RTO well above the smoothed RTT: with the `rfc` profile's exact
  samples and 10 ms granularity, the 100 ms-latency run of Table 3 under CSFQ had about 43
  timeouts per TCP flow for 9 drops (CSFQ's queue there swings between empty and 256 KB,
  0 to 205 ms, faster than RTTVAR follows); Table 3 shows that reading as informative
  rows. The initial RTO (6 s, `rtxcur_init_` until 2006) matters only in Table 2, where a
  short transfer whose first packet is lost waits for it (see csfq/table2.py).
- TCP flows start uniformly in the first second (unstated; as the demo).
- "FRED" of the tables: the paper ran FRED-1 (basic) and FRED-2 (two-packet buffer) and
  reports the better; we run both, show both, and check the better one (named in each
  table). Which one the paper reported is not printed.
- Runs: the paper reports one run per table; we repeat each with several seeds (numbers
  in each experiment) and say which statistic we compare.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from ...plots import subplots
from ...presets import BUFFER, csfq_mechanisms
from ...scenario import Scenario
from .. import PAPER_NAMES

# The mechanisms in the tables' row order.
TABLE_ORDER = ("drr", "csfq", "fred-1", "fred-2", "red", "droptail")
# The tolerance of the tables' ordering rows (Row.ordered with sort=True).
ORDERING = "order exact (ties within a group free; ≪: at least 2x)"


def mechanisms(**config: str) -> dict[str, dict]:
    """csfq_mechanisms(**config) in the tables' row order (TABLE_ORDER)."""
    tables = csfq_mechanisms(**config)
    return {m: tables[m] for m in TABLE_ORDER}


def single_link_scenario(
    qdisc: Mapping,
    flows: list[dict],
    duration: float,
    seed: int = 1,
    warmup: float = 0.0,
    delay: str = "1ms",
    buffer: str = BUFFER,
) -> Scenario:
    """One 10 Mbps congested link (L->R) with `qdisc`; hosts on 100 Mbps drop-tail links."""
    return Scenario.from_dict(
        {
            "simulation": {"duration": duration, "warmup": warmup, "seed": seed},
            "topology": {
                "type": "dumbbell",
                "access_rate": "100Mbps",
                "access_delay": "1ms",
                "sink_delay": "1ms",
                "access_qdisc": {"type": "droptail", "limit_bytes": buffer},
                "bottleneck": {"rate": "10Mbps", "delay": delay, "qdisc": dict(qdisc)},
            },
            "flows": flows,
        }
    )


def paper_groups(values: Mapping[str, float], groups: Sequence[Sequence[str]]) -> list[dict[str, float]]:
    """Groups of mechanisms for Row.ordered, each value under the mechanism's paper name."""
    return [{PAPER_NAMES[m]: values[m] for m in group} for group in groups]


def bar_figure(
    title: str, ylabel: str, frame: pd.DataFrame, ours: str, paper: str, err: str | None = None, log: bool = False
) -> Any:
    """Bars of our value per mechanism, with the paper's value (where printed) as a black tick."""
    fig, ax = subplots(figsize=(7, 4))
    x = np.arange(len(frame))
    ax.bar(x, frame[ours], yerr=frame[err] if err else None, capsize=3, color="tab:blue", label="ours")
    printed = frame[paper].notna()
    ax.hlines(frame.loc[printed, paper], x[printed] - 0.4, x[printed] + 0.4, colors="black", linewidth=2, label="paper")
    ax.set_xticks(x)
    ax.set_xticklabels(frame["mechanism"])
    ax.set_ylabel(ylabel)
    if log:
        ax.set_yscale("log")
    ax.set_title(title, fontsize=10)
    ax.legend(fontsize=8)
    fig.tight_layout()
    return fig
