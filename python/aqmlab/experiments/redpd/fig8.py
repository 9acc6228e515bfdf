"""RED-PD §4.3, Fig. 8: single-list vs multiple-list identification under bursty loss. "The
congested link had a small buffer space and a high min_th (half of the buffer space)"; Fig. 8
plots "the fraction of times a TCP flow with the given RTT was identified by the two schemes":
"a single-list scheme based on losses rather than loss events identifies flows with round-trip
times much greater than R with a significant probability. On the other hand the multiple list
scheme does a better job of identifying only the high bandwidth flows."

Our choices (before any run): a 20-packet buffer with min_th 10 and max_th 20 (the paper gives
only "small" and "half"); twelve SACK TCPs, two each at RTTs 20, 40, 60, 80, 120 and 160 ms;
R = 40 ms; one 100 s run per scheme (quick: 40 s). RED-PD acts on what it identifies, so a
flow's identifications are not independent trials; we measure the fraction of the run each
RTT group was monitored (`qdisc_flows` `time_monitored`), the share of time the scheme held it
identified. Rows (reproduction-targets, redpd-fig8): for every RTT above R, multiple-list ≤
single-list; for RTTs ≥ 2R, single-list at least twice multiple-list (the papers' ≫).
"""

from __future__ import annotations

from typing import Any

import pandas as pd

import aqmlab

from ...plots import subplots
from .. import Reproduction, Row, RunSettings, experiment
from . import (
    DURATION,
    QUICK_DURATION,
    START_SPREAD,
    TARGET_RTT,
    WARMUP,
    flow_record,
    red_pd_qdisc,
    scenario,
    tcp,
)

RTTS = (0.020, 0.040, 0.060, 0.080, 0.120, 0.160)
PER_RTT = 2
BUFFER = {"limit": 20, "min_th": 10, "max_th": 20, "w_q": 0.002, "gentle": True, "max_p": 0.1}  # our choice
FULL = RunSettings(duration=DURATION, warmup=WARMUP)
QUICK = RunSettings(duration=QUICK_DURATION, warmup=WARMUP)


def fig8_scenario(single_list: bool, duration: float) -> dict:
    flows = [tcp(f"tcp{rtt * 1000:.0f}-{i}", rtt, start_jitter=START_SPREAD) for rtt in RTTS for i in range(PER_RTT)]
    qdisc = red_pd_qdisc(red=BUFFER, single_list=single_list)
    return scenario(f"redpd-fig8-{'single' if single_list else 'multiple'}", flows, qdisc, duration, WARMUP)


def monitored_by_rtt(results: Any) -> dict[float, float]:
    fractions = {}
    for index, rtt in enumerate(RTTS):
        ids = range(index * PER_RTT, (index + 1) * PER_RTT)
        records = [flow_record(results, flow) for flow in ids]
        total = sum(0.0 if r is None else r["time_monitored"] for r in records)
        fractions[rtt] = total / (PER_RTT * results.duration)
    return fractions


@experiment("redpd-fig8", "RED-PD Fig. 8: single-list vs multiple-list identification of TCPs of 20…160 ms")
def fig8(quick: bool) -> Reproduction:
    settings = QUICK if quick else FULL
    measured = {
        scheme: monitored_by_rtt(aqmlab.run(fig8_scenario(scheme == "single", settings.duration)))
        for scheme in ("single", "multiple")
    }
    table = pd.DataFrame(
        [
            {"rtt_ms": rtt * 1000, "single": measured["single"][rtt], "multiple": measured["multiple"][rtt]}
            for rtt in RTTS
        ]
    )
    shown = "; ".join(f"{t.rtt_ms:g} ms: single {t.single:.3f}, multiple {t.multiple:.3f}" for t in table.itertuples())
    return Reproduction(
        rows=fig8_rows(measured),
        figure=_figure(table),
        data={"fig8": table},
        show=["fig8"],
        explain=lambda row: f"fraction of the run monitored per RTT: {shown}",
    )


def fig8_rows(measured: dict[str, dict[float, float]]) -> list[Row]:
    """TCPs with RTTs above R monitored no more under multiple lists than under a single list, and much
    less from 2R on (`measured`: fraction of the run monitored by scheme and RTT)."""
    rows = []
    for rtt in (r for r in RTTS if r > TARGET_RTT):
        ms = f"{rtt * 1000:.0f}"
        rows.append(
            Row.ordered(
                f"{ms} ms TCPs, fraction monitored: multiple ≤ single",
                "multiple ≤ single",
                [{"multiple": measured["multiple"][rtt]}, {"single": measured["single"][rtt]}],
                relation="<=",
                digits=3,
                key=f"order.rtt{ms}",
            )
        )
        if rtt >= 2 * TARGET_RTT:
            rows.append(
                Row.ordered(
                    f"{ms} ms TCPs, fraction monitored: multiple ≪ single",
                    "multiple ≪ single",
                    [{"multiple": measured["multiple"][rtt]}, {"single": measured["single"][rtt]}],
                    relation="<<",
                    digits=3,
                    key=f"much.rtt{ms}",
                )
            )
    return rows


def _figure(table: pd.DataFrame) -> Any:
    fig, ax = subplots(figsize=(6, 4))
    ax.plot(table["rtt_ms"], table["single"], "o-", label="single list")
    ax.plot(table["rtt_ms"], table["multiple"], "s-", label="multiple lists")
    ax.set(xlabel="RTT (ms)", ylabel="fraction of the run monitored", title="RED-PD Fig. 8")
    ax.legend()
    fig.tight_layout()
    return fig
