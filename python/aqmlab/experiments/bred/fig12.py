"""BRED §5.2.2, Fig. 12: eq. 17's fairness quotient F of 20, 50 and 100 flows (a quarter of them
CBR) against the CBRs' total rate on 1.5 Mb/s under LQD gateways, "simulated under the same
conditions as used in figure 9", beside BRED's (Fig. 9, `bred/many_flows.py`: its scenario
builder, measure and sweep, and its BRED runs again here). Buffer 400 ms of the backbone =
150 packets, one trial per point.

LQD (`lqd` qdisc) as BRED §2 describes the gateway it compares with: "whenever the buffer is
full, a packet of the flow with maximum number of packets in the buffer is dropped such that
the chosen packet is farthest from the end of the buffer": occupancy in packets, the oldest
packet of the longest flow (`longest_by = "packets"`, `pushout = "head"`). §2 adds that "the
cbr flows are penalized very much when their input rate becomes far larger than their fair
share. This is due to the nature of dropping from front". Dropping from the tail instead is
shown as an informative row beside each graded one.

The figure's values are not in the text. Reported (§5.2.2): "the fairness quotient of the LQD
gateways is far less than the fairness quotient of the BRED gateways"; the rows check the
ordering F(LQD) < F(BRED) at every load and number of flows (ordering only, as the
reproduction target states). Where the CBRs send below their equal share, LQD treats every
flow alike and is not less fair than BRED; up to about 3x their share (20 and 50 flows) LQD holds
them near it while BRED lets them have 1.5-1.7x it. Those rows fail, with the CBRs' measured
shares and the TCPs' spread as the reason (quick mode: 3 of 12; full: 7 of 18). Beyond, dropping
from the front starves the CBRs and F(LQD) is 0.74 against BRED's 0.81-0.92.

Verdicts (`cbr_judgements`, a reading made after seeing results): eq. 17 with every CBR at the
CBRs' mean and every TCP at the TCPs' mean (`class_ceiling`: the F of the CBRs' allocation
alone, which the TCPs' spread can only lower) orders LQD and BRED as the measured F does in 17
of the 18 full-mode cells. The paper's account of LQD's unfairness (§2) is about the CBRs only;
where that allocation puts LQD at or above BRED (full: 6 of the 7 failing rows, e.g. 0.849 vs
0.848 with 20 flows at 0.1 Mb/s, 0.999 vs 0.858 at 1 Mb/s), "far less" would need LQD to spread
the TCPs, which the paper does not say, and the row's verdict is arithmetic. With 20 flows at
0.5 Mb/s the CBRs get 1.3x their share under both and LQD's allocation is 0.001 lower (0.964 vs
0.965): that row stays open.
"""

from __future__ import annotations

import itertools
from typing import Any

import pandas as pd

import aqmlab

from ...plots import subplots
from ...results import MBPS
from .. import Judgement, Reproduction, Row, Verdict, experiment
from . import bred_qdisc, buffer_packets
from .many_flows import FIG9_FLOWS, FIG9_LINK, FULL, QUICK, many_flows_metrics, many_flows_scenario

# §5.2.2 (A. Anjum, L. Tassiulas, "Balanced-RED", CSHCN T.R. 99-9, 1999), what Fig. 12 shows.
PAPER_FIG12 = "the fairness quotient of the LQD gateways is far less than the fairness quotient of the BRED gateways"

BUFFER = buffer_packets(FIG9_LINK)
# §2's LQD (graded), and the other end of the longest flow's packets (informative).
LQD = {"type": "lqd", "limit": BUFFER, "longest_by": "packets", "pushout": "head"}
LQD_TAIL = {**LQD, "pushout": "tail"}
MECHANISMS = {"bred": bred_qdisc(BUFFER), "lqd": LQD, "lqd_tail": LQD_TAIL}


@experiment(
    "bred-fig12", "BRED Fig. 12: fairness quotient of LQD vs BRED (Fig. 9), 20/50/100 flows (a quarter CBR), 1.5 Mb/s"
)
def fig12(quick: bool) -> Reproduction:
    settings = QUICK if quick else FULL
    records = []
    for n, total, (name, qdisc) in itertools.product(FIG9_FLOWS, settings.sweep, MECHANISMS.items()):
        results = aqmlab.run(many_flows_scenario(n, total * MBPS, qdisc, duration=settings.duration))
        records.append(
            {"flows": n, "cbr_total": total, "mechanism": name, **many_flows_metrics(results)}
            | {"equal_share": FIG9_LINK / MBPS / n}
        )
    table = pd.DataFrame(records)
    rows = fig12_rows(table)
    return Reproduction(
        rows=rows,
        figure=_fig12_figure(table),
        data={"fig12": table},
        show=["fig12"],
        notes=[f"one trial of {settings.duration:g} s per point (as the paper), goodput over the latter half"],
        explain=lambda row: _reason(table, row.key),
        judged=cbr_judgements(table, rows),
    )


def _key(n: int, total: float) -> str:
    return f"order.n{n}.cbr{round(total * 1000)}k.lqd_lt_bred"


def fig12_rows(table: pd.DataFrame) -> list[Row]:
    """F(LQD) < F(BRED) for each number of flows and CBR load, with LQD dropping from the tail
    as the informative other reading."""
    f = table.set_index(["flows", "cbr_total", "mechanism"])["F"]
    rows = []
    for n, total in itertools.product(FIG9_FLOWS, sorted(set(table["cbr_total"]))):
        metric = f"F with {n} flows, CBR total {total:g} Mb/s: LQD < BRED"
        for lqd, reading in [("lqd", None), ("lqd_tail", "LQD dropping from the tail")]:
            row = Row.ordered(
                metric,
                "LQD far less than BRED",
                [{"LQD": f[n, total, lqd]}, {"BRED": f[n, total, "bred"]}],
                digits=3,
                key=_key(n, total),
            )
            rows.append(row if reading is None else row.informative(reading, alt="alt_tail"))
    return rows


def _reason(table: pd.DataFrame, key: str) -> str:
    """Why F(LQD) is not below F(BRED) at a point: what the CBRs get against the equal share,
    and the spread of the TCPs (slowest over mean)."""
    point = next(p for p in table.itertuples() if _key(p.flows, p.cbr_total) == key and p.mechanism == "lqd")
    by = table[(table["flows"] == point.flows) & (table["cbr_total"] == point.cbr_total)].set_index("mechanism")
    offered = point.cbr_total / (point.flows // 4) / point.equal_share

    def measured(name: str) -> str:
        got = by.loc[name, "cbr_mean"] / point.equal_share
        spread = by.loc[name, "tcp_min"] / by.loc[name, "tcp_mean"]
        return f"CBRs {got:.2f}x, slowest TCP {spread:.2f}x the TCP mean, F {by.loc[name, 'F']:.3f}"

    return (
        f"each CBR offers {offered:.2f}x the equal share of {point.equal_share * 1000:.0f} kb/s; "
        f"LQD: {measured('lqd')}; BRED: {measured('bred')}"
    )


def class_ceiling(cbr: float, tcp: float, flows: int) -> float:
    """Eq. 17's F when each CBR gets `cbr` and each TCP `tcp` (any unit), a quarter of the
    `flows` being CBRs: the F of the CBRs' allocation alone, every TCP at the TCPs' mean. The
    spread of the TCPs can only lower F from here (Cauchy–Schwarz)."""
    cbrs = flows // 4
    tcps = flows - cbrs
    return (cbrs * cbr + tcps * tcp) ** 2 / (flows * (cbrs * cbr**2 + tcps * tcp**2))


def cbr_judgements(table: pd.DataFrame, rows: list[Row]) -> dict[str, Judgement]:
    """The verdict on each failing graded row where the CBRs' allocation alone does not make LQD
    less fair than BRED (`class_ceiling` of LQD at least BRED's): the paper's account of LQD's
    unfairness (§2: the CBRs "are penalized very much when their input rate becomes far larger
    than their fair share", from dropping from the front) is about the CBRs only, and there eq.
    17 puts LQD at or above BRED; a far lower F(LQD) would need LQD to spread the TCPs, which the
    paper does not say. Elsewhere the row stays open."""
    judged = {}
    for row in rows:
        if row.graded and not row.passed:
            point = next(p for p in table.itertuples() if _key(p.flows, p.cbr_total) == row.key)
            by = table[(table["flows"] == point.flows) & (table["cbr_total"] == point.cbr_total)].set_index("mechanism")
            shares = {name: _class_shares(by.loc[name], point.flows) for name in ("lqd", "bred")}
            if shares["lqd"][0] >= shares["bred"][0]:
                judged[row.key] = Judgement(
                    Verdict.ARITHMETIC,
                    "eq. 17 with each class at its mean (the CBRs' allocation alone; the TCPs' spread only lowers "
                    f"F): LQD {shares['lqd'][1]}; BRED {shares['bred'][1]}. The paper's account of LQD's unfairness "
                    "(§2: CBRs penalized when their input is far above their share, from dropping from the front) is "
                    "about the CBRs, and through them LQD is at least as fair as BRED here; a far lower F(LQD) would "
                    "need LQD to spread the TCPs, which the paper does not say. This reading came after seeing results",
                )
    return judged


def _class_shares(point: pd.Series, flows: int) -> tuple[float, str]:
    """A mechanism's `class_ceiling` at one point, and its classes as a reader checks them."""
    ceiling = class_ceiling(point["cbr_mean"], point["tcp_mean"], flows)
    cbr = point["cbr_mean"] / point["equal_share"]
    tcp = point["tcp_min"] / point["tcp_mean"]
    return ceiling, f"CBRs {cbr:.2f}x their share, F ≤ {ceiling:.3f}, slowest TCP {tcp:.2f}x the TCP mean"


def _fig12_figure(table: pd.DataFrame) -> Any:
    fig, ax = subplots(figsize=(6.5, 4.5))
    styles = {"bred": ("-", "BRED (Fig. 9)"), "lqd": ("--", "LQD (Fig. 12)"), "lqd_tail": (":", "LQD, tail drop")}
    for (name, (line, label)), (n, marker) in itertools.product(styles.items(), zip(FIG9_FLOWS, "ox+", strict=True)):
        points = table[(table["mechanism"] == name) & (table["flows"] == n)]
        ax.plot(points["cbr_total"], points["F"], line, marker=marker, label=f"{label}, {n} flows")
    ax.set(
        title="BRED Fig. 12: LQD vs BRED, many flows, 1.5 Mb/s",
        xlabel="total CBR sending rate (Mb/s)",
        ylabel="fairness quotient F (eq. 17)",
        ylim=(0, 1.02),
    )
    ax.legend(fontsize="small", ncol=3)
    fig.tight_layout()
    return fig
