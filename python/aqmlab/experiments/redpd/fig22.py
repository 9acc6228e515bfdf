"""RED-PD §7.7, Fig. 22: the effect of the target R. "14 TCP connections were started, two each
with RTTs of 40 ms, 80 ms and 120 ms, and the rest with RTTs of 160 ms", R from 10 to 170 ms.
"For the simulations with R less than 40 ms, RED-PD does not identify any flows ... for the
simulations with R of 40 ms or higher, the short TCP flows with a 40 ms RTT start to be
identified and preferentially dropped"; "as R is increased, the bandwidth received by the short
TCP flows is decreased"; "as R is increased the ambient drop rate decreases and the throughput
for the long TCP flows increases"; "as R is increased above 80 ms, the 80 ms TCP flows begin to
be monitored".

Our choices (before any run): R = 10, 20, 30, 40, 50, 60, 80, 100, 120, 140, 170 ms (the step
is unstated); a group "is monitored" at an R when its flows were monitored for more than 10 %
of the run on average (`qdisc_flows` `time_monitored`), so that a rare identification does
not count as the paper's "identified and preferentially dropped". Rows (reproduction-targets,
redpd-fig22; thresholds within one grid step): the first R at which the 40 ms flows are
monitored in [30, 50] ms; the first at which the 80 ms flows are in [80, 120] ms (paper:
"above 80 ms", i.e. 100 on our grid); and, at R = 40, 100, 170 ms, the 40 ms flows' bandwidth
falling, the ambient drop rate falling and the 160 ms flows' bandwidth rising. Setup:
`redpd/__init__.py` (100 s runs from 20 s; quick mode 40 s).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

import aqmlab

from ...plots import subplots
from ...results import MBPS, Results
from .. import Reproduction, Row, RunSettings, experiment
from . import (
    DURATION,
    QUICK_DURATION,
    START_SPREAD,
    WARMUP,
    ambient_drop_rate,
    flow_record,
    red_pd_qdisc,
    scenario,
    tcp,
)

RTTS = (0.040,) * 2 + (0.080,) * 2 + (0.120,) * 2 + (0.160,) * 8  # §7.7
TARGETS = (0.010, 0.020, 0.030, 0.040, 0.050, 0.060, 0.080, 0.100, 0.120, 0.140, 0.170)
MONITORED = 0.10  # fraction of the run a group must be monitored (module docstring)
FIRST_40, FIRST_80 = (0.030, 0.050), (0.080, 0.120)  # one grid step around the paper's
TREND = (0.040, 0.100, 0.170)  # the R at which trends are compared
FULL = RunSettings(duration=DURATION, warmup=WARMUP, sweep=TARGETS)
QUICK = RunSettings(duration=QUICK_DURATION, warmup=WARMUP, sweep=TARGETS)


def fig22_scenario(target: float, duration: float) -> dict:
    flows = [tcp(f"tcp{i}", rtt, start_jitter=START_SPREAD) for i, rtt in enumerate(RTTS)]
    return scenario(f"redpd-fig22-{target * 1000:g}ms", flows, red_pd_qdisc(target_rtt=target), duration, WARMUP)


def fig22_metrics(results: Results) -> dict[str, float]:
    goodput = results.flows.sort_values("id")["goodput_bps"].to_numpy() / MBPS
    monitored = np.array(
        [
            0.0 if flow_record(results, f) is None else flow_record(results, f)["time_monitored"]
            for f in range(len(RTTS))
        ]
    )
    measures: dict[str, float] = {"ambient": ambient_drop_rate(results)}
    for rtt in sorted(set(RTTS)):
        members = [i for i, r in enumerate(RTTS) if r == rtt]
        name = f"{rtt * 1000:.0f}ms"
        measures[f"bw_{name}"] = float(goodput[members].mean())
        measures[f"monitored_{name}"] = float(monitored[members].mean() / results.duration)
    return measures


def first_monitored(table: pd.DataFrame, group: str) -> float:
    """The smallest R (s) at which `group` is monitored (NaN if never)."""
    hits = table[table[f"monitored_{group}"] > MONITORED]
    return float(hits["target"].min()) if len(hits) else float("nan")


@experiment("redpd-fig22", "RED-PD Fig. 22: target R from 10 to 170 ms, 14 TCPs of 40…160 ms")
def fig22(quick: bool) -> Reproduction:
    settings = QUICK if quick else FULL
    table = pd.DataFrame(
        [{"target": r, **fig22_metrics(aqmlab.run(fig22_scenario(r, settings.duration)))} for r in settings.sweep]
    )
    shown = table.assign(target=table["target"] * 1000)
    return Reproduction(
        rows=fig22_rows(table),
        figure=_figure(shown),
        data={"fig22": shown},
        show=["fig22"],
        explain=lambda row: _reason(shown),
    )


def fig22_rows(table: pd.DataFrame) -> list[Row]:
    """The first R that monitors the 40 ms and the 80 ms TCPs, and the trends as R grows over TREND."""
    at = table.set_index("target")
    trend = [at.loc[r] for r in TREND]
    labels = [f"R {r * 1000:.0f}" for r in TREND]
    return [
        Row.between(
            "First R monitoring the 40 ms TCPs (ms)",
            40,
            first_monitored(table, "40ms") * 1000,
            FIRST_40[0] * 1000,
            FIRST_40[1] * 1000,
            key="first.40ms",
        ),
        Row.between(
            "First R monitoring the 80 ms TCPs (ms)",
            "> 80",
            first_monitored(table, "80ms") * 1000,
            FIRST_80[0] * 1000,
            FIRST_80[1] * 1000,
            key="first.80ms",
        ),
        Row.ordered(
            "40 ms TCPs' bandwidth (Mb/s) as R grows",
            "decreasing",
            [{label: row["bw_40ms"]} for label, row in zip(labels, trend, strict=True)],
            relation=">",
            digits=3,
            key="order.bw_40ms",
        ),
        Row.ordered(
            "Ambient drop rate as R grows",
            "decreasing",
            [{label: row["ambient"]} for label, row in zip(labels, trend, strict=True)],
            relation=">",
            digits=4,
            key="order.ambient",
        ),
        Row.ordered(
            "160 ms TCPs' bandwidth (Mb/s) as R grows",
            "increasing",
            [{label: row["bw_160ms"]} for label, row in zip(labels, trend, strict=True)],
            digits=3,
            key="order.bw_160ms",
        ),
    ]


def _reason(shown: pd.DataFrame) -> str:
    """Per R (ms): the 40, 80 and 160 ms TCPs' bandwidth and monitoring, and the ambient drop rate."""
    return "per R (ms): " + "; ".join(
        f"{t.target:g}: 40 ms {t.bw_40ms:.3f} Mb/s monitored {t.monitored_40ms:.2f}, 80 ms monitored "
        f"{t.monitored_80ms:.2f}, 160 ms {t.bw_160ms:.3f} Mb/s, ambient {t.ambient:.4f}"
        for t in shown.itertuples()
    )


def _figure(table: pd.DataFrame) -> Any:
    fig, (top, bottom) = subplots(2, 1, figsize=(7, 6), sharex=True)
    for rtt in ("40ms", "80ms", "120ms", "160ms"):
        top.plot(table["target"], table[f"bw_{rtt}"], "o-", label=f"{rtt} TCPs")
    top.set(ylabel="throughput per flow (Mb/s)", title="RED-PD Fig. 22: effect of R")
    top.legend()
    bottom.plot(table["target"], table["ambient"], "k.-")
    bottom.set(xlabel="target R (ms)", ylabel="ambient drop rate")
    fig.tight_layout()
    return fig
