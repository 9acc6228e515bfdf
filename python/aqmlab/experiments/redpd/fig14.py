"""RED-PD §7.2, Fig. 14: max-min fairness among 11 CBR flows. "11 UDP CBR flows. The sending
rate of the first flow is 0.1 Mbps, that of second flow is 0.5 Mbps, and every subsequent flow
sends at a rate which is 0.5 Mbps more than its previous flow (so the last UDP flow sends at
5 Mbps)". "with RED each flow receives a bandwidth share proportional to its sending rate,
while with RED-PD all the flows receive roughly their fair share"; "With RED-PD the ambient
drop rate was reduced to roughly 4%, while without RED-PD the ambient drop rate would have
been about 63%."

Max-min shares of the 10 Mb/s link: 0.1, 0.5, 1.0, then 1.05 Mb/s for flows 4–11 (derived);
offered 27.6 Mb/s, so RED drops 1 − 10/27.6 = 63.8 %.

Tolerances (reproduction-targets, redpd-fig14): RED-PD flows 4–11 within ±30 % of 1.05 Mb/s;
flows 1–3 at least 90 % of their sending rate; RED-PD ambient drop 2–8 %; RED's 63 % ± 3
points; RED's throughputs ordered as the sending rates. Setup: `redpd/__init__.py` (one 100 s run per
discipline, flows starting within 10 s, measured from 20 s: the drop rates too,
`ambient_drop_rate`); quick mode 40 s.

§6.2's unresponsive test (issue 27): the text of §7.2 does not say whether it ran; the
authors' script (tcl/ex/red-pd/allUDP/allUDP.sh) turns it off (`testUnresp 0`), so the graded
RED-PD rows follow the script (`unresponsive_test = false`), and RED-PD with the test on
(RED-PD's default) is shown beside each as an informative row (`<key>.test_on`).
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
    cbr,
    monitoring_reason,
    red_pd_qdisc,
    red_qdisc,
    scenario,
)

RATES = (0.1, *(0.5 * i for i in range(1, 11)))  # Mb/s, §7.2
FAIR = 1.05  # Mb/s, flows 4–11 (derived max-min share)
FAIR_BAND = 0.30
PROTECTED = 0.90  # flows 1–3: at least this fraction of their rate
PAPER_DROP = {"red_pd": 0.04, "red": 0.63}  # §7.2
RED_PD_DROP_BAND = (0.02, 0.08)
RED_DROP_BAND = 0.03
FULL = RunSettings(duration=DURATION, warmup=WARMUP)
QUICK = RunSettings(duration=QUICK_DURATION, warmup=WARMUP)


def fig14_scenario(mechanism: str, duration: float, unresponsive_test: bool = False) -> dict:
    """The 11 CBRs on RED or RED-PD, the latter with §6.2's test as `unresponsive_test`
    (the authors' script: off)."""
    flows = [cbr(f"cbr{i}", rate * MBPS, start_jitter=START_SPREAD) for i, rate in enumerate(RATES)]
    qdisc = red_qdisc() if mechanism == "red" else red_pd_qdisc(unresponsive_test=unresponsive_test)
    return scenario(f"redpd-fig14-{mechanism}", flows, qdisc, duration, WARMUP)


def red_pd_rows(pd_rates: np.ndarray, drop: float) -> list[Row]:
    """The RED-PD rows: flows 4–11 near the fair share, flows 1–3 protected, the ambient drop."""
    rows = [
        Row.within(
            f"RED-PD flow {i + 1} (Mb/s)", FAIR, pd_rates[i], FAIR_BAND, relative=True, key=f"red_pd.flow{i + 1}"
        )
        for i in range(3, len(RATES))
    ]
    rows += [
        Row.at_least(
            f"RED-PD flow {i + 1} / its rate", 1.0, pd_rates[i] / RATES[i], PROTECTED, key=f"red_pd.protected{i + 1}"
        )
        for i in range(3)
    ]
    rows.append(
        Row.between("RED-PD ambient drop rate", PAPER_DROP["red_pd"], drop, *RED_PD_DROP_BAND, key="drop.red_pd")
    )
    return rows


@experiment("redpd-fig14", "RED-PD Fig. 14: 11 CBR flows of 0.1…5 Mb/s, RED vs RED-PD, max-min fairness")
def fig14(quick: bool) -> Reproduction:
    settings = QUICK if quick else FULL
    runs = {m: aqmlab.run(fig14_scenario(m, settings.duration)) for m in ("red", "red_pd")}
    runs["red_pd_test_on"] = aqmlab.run(fig14_scenario("red_pd", settings.duration, unresponsive_test=True))
    goodput = {m: (r.flows.sort_values("id")["goodput_bps"] / MBPS).to_numpy() for m, r in runs.items()}
    drop = {m: ambient_drop_rate(r) for m, r in runs.items()}
    rows = red_pd_rows(goodput["red_pd"], drop["red_pd"]) + red_rows(goodput["red"], drop["red"])
    rows += [
        row.informative("§6.2 test on", "test_on")
        for row in red_pd_rows(goodput["red_pd_test_on"], drop["red_pd_test_on"])
    ]
    table = pd.DataFrame({"flow": np.arange(1, 12), "rate": RATES} | {m: goodput[m] for m in runs})
    notes = [
        f"One {settings.duration:g} s run per discipline, measured from {WARMUP:g} s; RED-PD graded with "
        "§6.2's test off (the authors' allUDP.sh), shown with it on (`.test_on`)."
    ]
    return Reproduction(
        rows=rows,
        figure=_figure(table),
        data={"fig14": table},
        show=["fig14"],
        notes=notes,
        explain=lambda row: _reason(row, runs["red_pd"], goodput["red"], drop),
    )


def red_rows(goodput: np.ndarray, drop: float) -> list[Row]:
    """RED's ambient drop rate and its throughput in the order of the sending rates."""
    return [
        Row.within("RED ambient drop rate", PAPER_DROP["red"], drop, RED_DROP_BAND, key="drop.red"),
        Row.ordered(
            "RED: throughput in the order of the sending rates",
            "∝ sending rate",
            list(goodput),
            digits=2,
            key="order.red_proportional",
        ),
    ]


def _reason(row: Row, red_pd: Results, red_goodput: np.ndarray, drop: dict[str, float]) -> str:
    """A RED-PD row: its flow's monitoring; a RED row: RED's goodputs; both with the ambient drop rates."""
    drops = f"ambient drop RED-PD {drop['red_pd']:.3f}, RED {drop['red']:.3f}"
    if row.key.startswith("red_pd."):
        return f"{monitoring_reason(red_pd, [_flow_of(row.key)])}; {drops}"
    return f"{drops}; RED goodputs (Mb/s) {np.round(red_goodput, 3).tolist()}"


def _flow_of(key: str) -> int:
    """The flow id a `red_pd.flow<n>` or `red_pd.protected<n>` key names (n counts from 1)."""
    return int(key.removeprefix("red_pd.").removeprefix("flow").removeprefix("protected")) - 1


def _figure(table: pd.DataFrame) -> Any:
    fig, ax = subplots(figsize=(7, 4))
    ax.plot(table["flow"], table["red"], "o-", label="RED")
    ax.plot(table["flow"], table["red_pd"], "s-", label="RED-PD (§6.2 test off, graded)")
    ax.plot(table["flow"], table["red_pd_test_on"], "^:", label="RED-PD, §6.2 test on")
    ax.plot(table["flow"], np.minimum(table["rate"], FAIR), "k--", label="max-min share")
    ax.set(xlabel="flow", ylabel="throughput (Mb/s)", title="RED-PD Fig. 14: 11 CBR flows")
    ax.legend()
    fig.tight_layout()
    return fig
