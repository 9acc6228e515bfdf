"""RED-PD §7.4, Fig. 17: web traffic's completion times, RED vs RED-PD. "There is a significant
gain for the web traffic with RED-PD"; RED-PD "reduces the ambient drop rate".

Rows (reproduction-targets, redpd-fig17), orderings: the median and the 90th percentile of the
web transfers' completion times lower with RED-PD; the ambient drop rate lower with RED-PD.
The realised web load is shown against the paper's "about 5 Mbps" (informative: our clients'
count and think time are our choice). Setup: `redpd/_web.py`.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from ...plots import subplots
from ...results import MBPS
from .. import Reproduction, Row, RunSettings, experiment
from . import DURATION, QUICK_DURATION, WARMUP, ambient_drop_rate
from ._web import WEB_LOAD, completion_times, web_load, web_run

FULL = RunSettings(duration=DURATION, warmup=WARMUP)
QUICK = RunSettings(duration=QUICK_DURATION, warmup=WARMUP)


@experiment("redpd-fig17", "RED-PD Fig. 17: web completion times beside 10 TCPs and a 2 Mb/s UDP, RED vs RED-PD")
def fig17(quick: bool) -> Reproduction:
    settings = QUICK if quick else FULL
    runs = {m: web_run(m, settings.duration) for m in ("red", "red_pd")}
    times = {m: completion_times(r) for m, r in runs.items()}
    measures = {
        m: {
            "transfers": len(times[m]),
            "median_s": float(times[m].median()),
            "p90_s": float(times[m].quantile(0.9)),
            "ambient": ambient_drop_rate(r),
            "web_mbps": web_load(r) / MBPS,
        }
        for m, r in runs.items()
    }
    table = pd.DataFrame([{"mechanism": m, **v} for m, v in measures.items()])
    return Reproduction(
        rows=fig17_rows(measures),
        figure=_figure(times),
        data={"fig17": table},
        show=["fig17"],
        explain=lambda row: f"measured: {measures}",
    )


def fig17_rows(measures: dict[str, dict[str, float]]) -> list[Row]:
    """Web transfers finish sooner and the ambient drop rate is lower under RED-PD than RED; the web
    load ours offers, informative (`measures` by mechanism)."""
    rows = [
        Row.ordered(
            f"Web completion time, {label} (s): RED-PD < RED",
            "RED-PD < RED",
            [{"RED-PD": measures["red_pd"][name]}, {"RED": measures["red"][name]}],
            digits=3,
            key=f"order.{name}",
        )
        for label, name in (("median", "median_s"), ("90th percentile", "p90_s"))
    ]
    rows += [
        Row.ordered(
            "Ambient drop rate: RED-PD < RED",
            "RED-PD < RED",
            [{"RED-PD": measures["red_pd"]["ambient"]}, {"RED": measures["red"]["ambient"]}],
            digits=4,
            key="order.ambient",
        ),
        Row.within(
            "Web load under RED (Mb/s)", WEB_LOAD / MBPS, measures["red"]["web_mbps"], 0.3, True, key="web_load"
        ).informative("our clients and think time"),
    ]
    return rows


def _figure(times: dict[str, pd.Series]) -> Any:
    fig, ax = subplots(figsize=(6, 4))
    for mechanism, label in (("red", "RED"), ("red_pd", "RED-PD")):
        values = np.sort(times[mechanism].to_numpy())
        ax.step(values, np.arange(1, len(values) + 1) / len(values), where="post", label=label)
    ax.set(xscale="log", xlabel="completion time (s)", ylabel="cumulative fraction", title="RED-PD Fig. 17")
    ax.legend()
    fig.tight_layout()
    return fig
