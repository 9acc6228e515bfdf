"""RED-PD §5.2, Fig. 12: the effect of eq. 5. "two CBR flows were started. At t = 50s one of
them increases its sending rate to 4·f(R,p), the other one to 2·f(R,p)"; "when multiple flows
are identified at the same time, a larger increase quantum for the higher senders leads to a
quicker response from RED-PD and at the same time protects the low senders from a high
increase quantum", and Assumption 2 (every quantum p) "leads to an overestimation of the time
required".

Setup: Fig. 11's fixed 1 % loss queue (redpd_fig11.py); both flows start at 0.25·f(R,p) as
Fig. 11's does (our choice: the paper says only that two flows were started). Rows
(reproduction-targets, redpd-fig12), orderings only: the 4× flow reaches 2·f(R,p) sooner with
the 2× companion than alone (Fig. 11's run), and in the 50 s after the rise the pre-filter
drops a larger fraction of the 4× flow's arrivals than of the 2× flow's (its larger quantum).
"""

from __future__ import annotations

from typing import Any

import pandas as pd

import aqmlab

from ..plots import pyplot
from . import Reproduction, Row, RunSettings, experiment
from ._redpd import PACKET, binned, first_at_or_below, flow_record, reference_bps
from .redpd_fig11 import P, fig11_scenario

UP = 50.0  # §5.2
LEVEL = 2.0  # the 4× flow's target, in f(R,p): the lowest level both runs reach quickly
WINDOW = 50.0  # s after the rise over which pre-filter drop fractions are compared
FULL = RunSettings(duration=UP + WINDOW)
QUICK = FULL  # two runs of a few CBR flows take a fraction of a second


def prefilter_fraction(results: Any, flow: int, rate_bps: float) -> float:
    """The fraction of the flow's packets sent in the window that the pre-filter dropped."""
    drops = results.drops
    dropped = drops[(drops["flow"] == flow) & (drops["reason"] == "pre_filter")]["window_count"].sum()
    return float(dropped) / (rate_bps * (results.duration - results.warmup) / (8 * PACKET))


@experiment("redpd-fig12", "RED-PD Fig. 12: eq. 5's quantum, a 4× and a 2× CBR identified together at p = 1 %")
def fig12(quick: bool) -> Reproduction:
    settings = QUICK if quick else FULL
    end = settings.duration
    pair = aqmlab.run(fig11_scenario(UP, end, end, gammas=(4.0, 2.0), warmup=UP))
    alone = aqmlab.run(fig11_scenario(UP, end, end, warmup=UP))
    f = reference_bps(P)
    times = {
        "2 flows": first_at_or_below(binned(pair, 0) / f, UP + 1, LEVEL) - UP,
        "1 flow": first_at_or_below(binned(alone, 0) / f, UP + 1, LEVEL) - UP,
    }
    fraction = {"4x": prefilter_fraction(pair, 0, 4 * f), "2x": prefilter_fraction(pair, 1, 2 * f)}
    rows = [
        Row.ordered(
            f"Time for the 4× flow to reach {LEVEL:g}·f(R,p) (s)",
            "2 flows < 1 flow",
            [{"2 flows": times["2 flows"]}, {"1 flow": times["1 flow"]}],
            digits=0,
            key="order.cutdown",
        ),
        Row.ordered(
            "Pre-filter drop fraction after the rise: 2× < 4×",
            "quantum(2×) < quantum(4×)",
            [{"2x": fraction["2x"]}, {"4x": fraction["4x"]}],
            digits=3,
            key="order.quantum",
        ),
    ]
    first = {
        "4x (2 flows)": flow_record(pair, 0)["first_monitored_at"],
        "2x (2 flows)": flow_record(pair, 1)["first_monitored_at"],
        "4x (1 flow)": flow_record(alone, 0)["first_monitored_at"],
    }
    state = (
        f"times to {LEVEL:g}·f(R,p) {times}; pre-filter drop fractions {_rounded(fraction)}; "
        f"first monitored at (s) {_rounded(first)}"
    )
    reasons = {row.key: state for row in rows if not row.passed}
    table = pd.DataFrame([{"run": k, "time_to_2f_s": v} for k, v in times.items()])
    return Reproduction(rows=rows, figure=_figure(pair, alone), data={"fig12": table}, show=["fig12"], reasons=reasons)


def _rounded(values: dict[str, float]) -> dict[str, float]:
    return {key: round(float(value), 3) for key, value in values.items()}


def _figure(pair: Any, alone: Any) -> Any:
    fig, ax = pyplot().subplots(figsize=(7, 4))
    f = reference_bps(P)
    for label, results in (("2 flows", pair), ("1 flow", alone)):
        received = binned(results, 0) / f
        ax.plot(received.index, received.values, label=label)
    ax.set(xlabel="time (s)", ylabel="4× flow received / f(R,p)", title="RED-PD Fig. 12: p = 1 %")
    ax.legend()
    fig.tight_layout()
    return fig
