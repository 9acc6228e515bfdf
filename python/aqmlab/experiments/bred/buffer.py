"""BRED §5.1.1, Fig. 7: effect of the buffer size, seven TCPs and three CBRs at 10 Mb/s on
a 10 Mb/s backbone; per-flow throughput against the buffer (seconds of the backbone). The
TCPs together should gain much from 50 ms to 100 ms and little beyond; at 50 ms they are
"not completely shut out as in RED".

Where we differ: our TCPs gain steadily from 25 to 400 ms (x1.25 from 50 to 100 ms,
x1.23 from 100 to 200 ms, x1.36 to 400 ms) instead of a knee at 100 ms. At 10 Mb/s
a TCP's equal share is 10–25 packets in flight (RTT 40–100 ms), and l2 = B/(2[N̂])
is about 16 packets at 100 ms, 25–28 at 200 ms: a Tahoe window, restarting from one
packet after each loss, keeps few packets queued until l2 well exceeds that, so the
CBRs (each holding W_m = 1.3·l2) keep their advantage past 100 ms. (A FIFO serves
flows in proportion to what they queue, eq. 14's reasoning: from the throughputs,
each TCP queues about 4 packets at 100 ms against eq. 14's 0.5·β·l2 ≈ 7, and about
22 at 400 ms, where eq. 14's assumption holds.) The same shape
appears with 250- or 1000-byte packets and with a 20-packet window (checked while
choosing the setup), so it is not an artefact of those unstated choices.

Verdicts of the four failing gain rows: open (issue 27). Two readings were tried and neither
holds. (1) The paper's own reason for 50 ms ("the effective buffer size for each flow is far
less than its bandwidth-delay product"), with l2 = B/(2N) and a TCP's pipe at its equal share
C·RTT/N, gives l2/pipe = b/(2·RTT): the knee would be at 80, 120 and 200 ms for the 40, 60 and
100 ms TCPs, not at 100 ms; but the 40 ms TCPs, past it, still gain 1.31x from 100 to 400 ms
(0.556 → 0.727 Mb/s each, full run). (2) Eq. 14's bound, which §4.3.2 says "is adhered to",
would hold each CBR to 18.4 % (1.84 Mb/s) and the seven TCPs at 4.47 Mb/s or more at every
buffer; ours exceed it up to 200 ms (2.45, 2.24, 1.99 Mb/s per CBR at 50, 100, 200 ms) because
the TCPs queue less than its 0.5·β·l2 (eq. 14 counts a window as queued, §4.3.1, while at
10 Mb/s a TCP's pipe is 10–25 packets); whether the paper's Tahoe did the same cannot be told
without BRED in ns-2.

Setup and the choices where the paper is silent: `bred/__init__.py`.
"""

from __future__ import annotations

import itertools
from typing import Any

import pandas as pd

from ...plots import subplots
from ...results import MBPS
from .. import PAPER_NAMES, Reproduction, Row, RunSettings, experiment, run_seeds
from . import (
    CBRS,
    DURATION,
    MECHANISMS,
    QUICK_DURATION,
    SHUT_OUT,
    SOURCES,
    TCPS,
    TRIALS,
    buffer_packets,
    cbr_bound_mbps,
    mean_goodput,
    rtt_style,
    ten_sources_scenario,
)

FIG7_LINK = 10e6
FIG7_CBR_RATE = 10e6  # "each of the non-adaptive flows have an input rate equal to the backbone link bandwidth"
# Buffers in seconds of the backbone (the x axis, unstated except "about 50 ms" and "100 ms").
FULL = RunSettings(seeds=range(1, TRIALS + 1), duration=DURATION, sweep=(0.025, 0.05, 0.1, 0.2, 0.3, 0.4))
QUICK = RunSettings(seeds=(1,), duration=QUICK_DURATION, sweep=(0.05, 0.1, 0.2))
# "With a buffer size of 100 ms ... the throughputs of the tcp flows increase much": at
# least 1.3x the 50 ms value; "Further increase in the buffer size though does not lead to
# very dramatic change": within 20 % of the 100 ms value (reproduction-targets' bands).
FIG7_GAIN, FIG7_FLAT = 1.3, 0.2


@experiment("bred-buffer", "BRED Fig. 7: effect of the buffer size, 7 TCP + 3 CBR at 10 Mb/s on 10 Mb/s")
def buffer_size(quick: bool) -> Reproduction:
    settings = QUICK if quick else FULL
    table = buffer_table(settings)
    largest_cbr = table[table["mechanism"] == "bred"].set_index("buffer_s")[CBRS].max(axis=1)
    notes = [
        f"{len(settings.seeds)} trial(s) of {settings.duration:g} s per point; 500-byte packets "
        f"(100 ms = {buffer_packets(FIG7_LINK, 0.1)} packets)",
        "the TCPs gain steadily with the buffer instead of levelling off after 100 ms (see the docstring)",
        f"eq. 14 bound per CBR {cbr_bound_mbps(FIG7_LINK, len(CBRS), len(TCPS)):.3f} Mb/s; "
        "BRED's largest CBR by buffer: " + ", ".join(f"{b * 1000:g} ms {v:.3f}" for b, v in largest_cbr.items()),
    ]
    data = {"fig7_summary": table[["buffer_s", "buffer_packets", "mechanism", "tcp_total", "cbr_total"]], "fig7": table}
    return Reproduction(
        rows=buffer_rows(table, settings.sweep),
        figure=_fig7_figure(table),
        data=data,
        show=["fig7_summary"],
        notes=notes,
        explain=lambda row: _gain_reason(table, len(settings.seeds)) if row.key.startswith("bred.gain_") else None,
    )


def buffer_table(settings: RunSettings) -> pd.DataFrame:
    """Per buffer size (s) and mechanism: each source's goodput, mean over the seeds, the TCP and
    CBR totals, and under BRED its N̂ and l2."""
    records = []
    for seconds, mechanism in itertools.product(settings.sweep, MECHANISMS):
        packets = buffer_packets(FIG7_LINK, seconds)
        scenario = ten_sources_scenario(
            FIG7_LINK, MECHANISMS[mechanism](packets), FIG7_CBR_RATE, duration=settings.duration
        )
        runs = run_seeds(scenario, settings.seeds)
        goodput = mean_goodput(runs)
        records.append(
            {
                "buffer_s": seconds,
                "buffer_packets": packets,
                "mechanism": mechanism,
                **goodput[SOURCES].to_dict(),
                **(_bred_state(runs) if mechanism == "bred" else {}),
            }
        )
    table = pd.DataFrame(records)
    table["tcp_total"] = table[TCPS].sum(axis=1)
    table["cbr_total"] = table[CBRS].sum(axis=1)
    return table


def _bred_state(runs: list) -> dict[str, float]:
    """BRED's N̂ and l2 at the end of each run (its counters), mean over the runs."""
    links = [results.links.set_index("qdisc").loc["bred"] for results in runs]
    return {
        "n_hat": sum(link["qdisc.n_hat"] for link in links) / len(links),
        "l2": sum(link["qdisc.l2"] for link in links) / len(links),
    }


def _gain_reason(table: pd.DataFrame, runs: int) -> str:
    """Why BRED's TCP total does not step up at 100 ms and level off: its N̂ and l2 by buffer, measured."""
    bred = table[table["mechanism"] == "bred"].set_index("buffer_s")
    state = ", ".join(
        f"{b * 1000:g} ms: N̂ {row.n_hat:.1f}, l2 {row.l2:.0f} packets (B/(2N) = "
        f"{row.buffer_packets / (2 * len(SOURCES)):.0f}), TCPs {row.tcp_total:.2f} Mb/s"
        for b, row in bred.iterrows()
    )
    return (
        f"BRED at the end of each run (mean of {runs}): {state}. N̂ counts only flows with packets queued and stays "
        f"below the {len(SOURCES)} flows, so l2 and W_m = 1.3·l2 are larger than B/(2N) and each CBR holds more of "
        "the buffer; the Tahoe TCPs keep few packets queued until l2 well exceeds their window (docstring), so "
        "their total grows steadily with the buffer instead of stepping up at 100 ms."
    )


def buffer_rows(table: pd.DataFrame, buffers: tuple[float, ...]) -> list[Row]:
    """At 50 ms BRED's TCPs are not shut out and RED's are; BRED's TCPs gain much up to
    100 ms and little beyond (`table`: one row per buffer and mechanism)."""
    tcp = table[table["mechanism"] == "bred"].set_index("buffer_s")["tcp_total"]
    red_tcp = table[table["mechanism"] == "red"].set_index("buffer_s")["tcp_total"]
    # "Shut out": the seven TCPs together below SHUT_OUT of their equal share of the link.
    link = FIG7_LINK / MBPS
    shut_out = SHUT_OUT * len(TCPS) / len(SOURCES) * link
    rows = [
        Row.at_least(
            "BRED, 50 ms: TCP total (Mb/s)", "not completely shut out", tcp[0.05], shut_out, key="bred.50ms.tcp_total"
        ),
        Row.at_most("RED, 50 ms: TCP total (Mb/s)", "shut out", red_tcp[0.05], shut_out, key="red.50ms.tcp_total"),
        Row.ordered(
            "BRED: TCP total, 50 vs 100 ms (Mb/s)",
            "increases with the buffer",
            [tcp[0.05], tcp[0.1]],
            digits=3,
            key="order.bred.tcp_total.50ms_lt_100ms",
        ),
        Row.at_least(
            "BRED: TCP total 100 ms / 50 ms", "increase much", tcp[0.1] / tcp[0.05], FIG7_GAIN, key="bred.gain_50_100ms"
        ),
    ]
    for seconds in [b for b in buffers if b > 0.1]:
        rows.append(
            Row.between(
                f"BRED: TCP total {seconds * 1000:g} ms / 100 ms",
                "no dramatic change",
                tcp[seconds] / tcp[0.1],
                1 - FIG7_FLAT,
                1 + FIG7_FLAT,
                key=f"bred.gain_100_{seconds * 1000:g}ms",
            )
        )
    return rows


def _fig7_figure(table: pd.DataFrame) -> Any:
    fig, axes = subplots(1, 2, figsize=(12, 4.5))
    bred = table[table["mechanism"] == "bred"]
    for name in SOURCES:
        axes[0].plot(bred["buffer_s"], bred[name], label=name, linewidth=0.8, **rtt_style(name))
    axes[0].set(title="BRED: each flow", xlabel="buffer (s of the backbone)", ylabel="throughput (Mb/s)")
    axes[0].legend(fontsize=7, ncol=2)
    for mechanism, data in table.groupby("mechanism"):
        name = PAPER_NAMES[mechanism]
        axes[1].plot(data["buffer_s"], data["tcp_total"], marker="o", label=f"{name}: 7 TCPs")
        axes[1].plot(data["buffer_s"], data["cbr_total"], marker="s", linestyle="--", label=f"{name}: 3 CBRs")
    axes[1].set(title="together", xlabel="buffer (s of the backbone)", ylabel="throughput (Mb/s)")
    axes[1].legend(fontsize=8)
    fig.suptitle("BRED Fig. 7: effect of buffer size, 10 flows on 10 Mb/s")
    fig.tight_layout()
    return fig
