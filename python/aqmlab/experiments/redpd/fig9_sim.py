"""RED-PD §4.4, Fig. 9 and eq. 4: the probability that a flow sending at γ·f(R,p) is identified
in one round. The flow sends γK/(Mp) packets per eq. 3 interval, so it suffers at least one
drop in an interval with P(1) = 1 − (1 − p)^(γK/(Mp)), and is identified when that happens in
at least K of M intervals (eq. 4, with P'(1) = 1 − P(1), the binomial form it needs). "Simulations
of the identification of CBR flows, in a scenario where each packet is dropped independently
with probability p, give essential[ly] the same probabilities of identification as those shown
in Figure 9."

Our scenario (before any run; reproduction-targets, redpd-fig9-sim): one CBR flow of
1000-byte packets at γ·f(R,p) through RED-PD's fixed-loss queue (each arrival dropped with
probability p, on a 100 Mb/s link so that p is its only loss), p = 1, 5, 10 % (Fig. 9's lines),
γ = 0.25 … 4 (the eq. 4 table's), R = 40 ms, K = 3, M = 5, every interval eq. 3's length
(`min_interval` lifted: ns-2's 2R floor would lengthen the 10 % intervals from 62 to 80 ms).
RED-PD runs with `identification = "count"`: it identifies at every interval close and counts,
but never monitors, so the pre-filter does not change what later rounds see (as ns-2's
`testIdent` mode for the same figure, which judges only every M-th interval). A round is an
interval close with M lists; rounds overlap (each shares M − 1 lists with the next), so the
variance of the identified fraction over n rounds is at most about 1/n (0.99/n at P = 0.5,
computed from the binomial windows), against 1/(4n) for independent rounds. RED-PD runs the
text's engine (`profile = "paper"`): eq. 4 is the text's rule, every interval from time 0;
ns-2's engine (`redpd`'s default) starts at 10.1 s, which drops 51 of the 5000 quick rounds
(its rows pass too, measured once).

Rows: |sim − eq. 4| ≤ 0.05 at each (p, γ) (reproduction-targets; quick mode 5000 rounds,
σ ≤ 0.014, full 20 000, σ ≤ 0.007); and eq. 4 itself against the table derived from it
(reproduction-targets, redpd-eq4) to 3 decimals.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pandas as pd

import aqmlab

from ...plots import subplots
from .. import Reproduction, Row, RunSettings, experiment
from . import (
    FIXED_LOSS_RATE,
    LOSS_RATES,
    PACKET,
    TARGET_RTT,
    K,
    M,
    cbr,
    fixed_loss_qdisc,
    flow_record,
    reference_bps,
    scenario,
)

GAMMAS = (0.25, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0)
# Eq. 4 for K/M = 3/5, derived in the reproduction targets (1.B, redpd-eq4): {γ: (1 %, 5 %, 10 %)}.
EQ4_TABLE = {
    0.25: (0.022, 0.023, 0.025),
    0.5: (0.115, 0.120, 0.127),
    1.0: (0.412, 0.425, 0.441),
    1.5: (0.674, 0.687, 0.704),
    2.0: (0.838, 0.847, 0.859),
    3.0: (0.966, 0.969, 0.973),
    4.0: (0.994, 0.995, 0.996),
}
TABLE_DIGITS = 0.0005  # the table's 3 decimals
TOLERANCE = 0.05  # reproduction-targets: |sim − eq. 4| ≤ 0.05 at each γ
ROUNDS = 20_000  # per point (module docstring)
QUICK_ROUNDS = 5_000
FULL = RunSettings(sweep=GAMMAS)
QUICK = FULL  # the same points, fewer rounds


def identification_probability(gamma: float, p: float, k: int = K, m: int = M) -> float:
    """Eq. 4: P(at least k of m intervals with a drop), P(1) = 1 − (1 − p)^(γk/(mp))."""
    p1 = 1 - (1 - p) ** (gamma * k / (m * p))
    return sum(math.comb(m, j) * p1**j * (1 - p1) ** (m - j) for j in range(k, m + 1))


def interval(p: float) -> float:
    """Eq. 3: (K/M)·R/√(1.5p), seconds."""
    return K / M * TARGET_RTT / math.sqrt(1.5 * p)


def fig9_scenario(gamma: float, p: float, rounds: int) -> dict:
    """`rounds` identification rounds (after the M intervals that fill the lists) of one CBR flow."""
    qdisc = fixed_loss_qdisc(p, identification="count", min_interval="1ns", profile="paper")
    duration = (rounds + M - 0.5) * interval(p)
    flows = [cbr("cbr", gamma * reference_bps(p))]
    return scenario("redpd-fig9", flows, qdisc, duration, 0.0, rate=FIXED_LOSS_RATE)


def fig9_metrics(results: Any) -> dict[str, float]:
    """The identification rounds and the fraction of them that identified the flow."""
    rounds = float(results.link("L->R")["qdisc.identification_rounds"])
    record = flow_record(results, 0)
    identified = 0.0 if record is None else float(record["identified_rounds"])
    return {"rounds": rounds, "identified": identified / rounds}


@experiment("redpd-fig9-sim", "RED-PD Fig. 9: identification probability of a CBR at γ·f(R,p) vs eq. 4")
def fig9(quick: bool) -> Reproduction:
    settings, rounds = (QUICK, QUICK_ROUNDS) if quick else (FULL, ROUNDS)
    table = pd.DataFrame(
        [
            {"p": p, "gamma": g, **fig9_metrics(aqmlab.run(fig9_scenario(g, p, rounds)))}
            for p in LOSS_RATES
            for g in settings.sweep
        ]
    )
    table["eq4"] = [identification_probability(g, p) for g, p in zip(table["gamma"], table["p"], strict=True)]
    notes = [f"{PACKET}-byte packets; rounds per point: {int(table['rounds'].min())}"]
    return Reproduction(
        rows=fig9_rows(table),
        figure=_figure(table),
        data={"fig9": table},
        show=["fig9"],
        notes=notes,
        explain=lambda row: _reason(row, table),
    )


def fig9_rows(table: pd.DataFrame) -> list[Row]:
    """The simulated fraction of rounds identified against eq. 4, and eq. 4 against the paper's table."""
    rows = [
        Row.within(
            f"Fraction of rounds identified, p = {t.p:.0%}, γ = {t.gamma:g}",
            round(t.eq4, 3),
            t.identified,
            TOLERANCE,
            key=f"sim.p{t.p * 100:g}.gamma_{t.gamma:g}",
        )
        for t in table.itertuples()
    ]
    return rows + [
        Row.within(
            f"Eq. 4, p = {p:.0%}, γ = {g:g}",
            EQ4_TABLE[g][i],
            identification_probability(g, p),
            TABLE_DIGITS,
            key=f"eq4.p{p * 100:g}.gamma_{g:g}",
        )
        for i, p in enumerate(LOSS_RATES)
        for g in GAMMAS
    ]


def _reason(row: Row, table: pd.DataFrame) -> str:
    """The row's value against eq. 4's, with the rounds behind it and their binomial spread."""
    return (
        f"{row.ours:.3f} identified against eq. 4's {row.paper:.3f} over "
        f"{int(table['rounds'].min())} rounds (σ ≤ {1 / math.sqrt(table['rounds'].min()):.3f})"
    )


def _figure(table: pd.DataFrame) -> Any:
    fig, ax = subplots(figsize=(6, 4))
    gammas = np.linspace(0.05, 4.0, 200)
    for p, group in table.groupby("p"):
        line = ax.plot(gammas, [identification_probability(g, p) for g in gammas], label=f"eq. 4, p = {p:.0%}")[0]
        ax.plot(group["gamma"], group["identified"], "o", color=line.get_color(), label=f"simulation, p = {p:.0%}")
    ax.set(
        xlabel="sending rate / f(R,p)",
        ylabel="fraction of rounds identified",
        title="RED-PD Fig. 9: K/M = 3/5, R = 40 ms",
    )
    ax.legend(fontsize="small")
    fig.tight_layout()
    return fig
