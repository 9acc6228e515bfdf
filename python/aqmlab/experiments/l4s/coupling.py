"""`l4s-coupling`: the DualQ Coupled AQM's own claims (RFC 9332), under Linux's DualPI2 with its
defaults. TCP Prague flows (L4S, ECT(1)) beside CUBIC flows (classic, not ECN-capable) share a
40 Mbit/s bottleneck, every flow at the same base RTT, for base RTTs of 10, 25, 50 and 100 ms and
mixes of 1+1, 4+4, 1+4 and 4+1 flows. Settings chosen before any run: 40 Mbit/s so that a 1500-byte
packet takes 0.3 ms, below the L queue's 1 ms step (RFC 9332 §1.4 tested 4–200 Mbit/s with base
RTTs up to 100 ms); 60 s with the first 20 discarded (CUBIC's epochs at 100 ms last seconds), seeds
1–3. Quick: 20 s from 8 s, seed 1, RTTs 25 and 100 ms, mixes 1+1 and 4+4. Graded:
- rate per flow, Prague over CUBIC, in [0.5, 2]: §2.1 "roughly equal" (the coupling k = 2's
  purpose; §1.4 "a flow will get roughly the same throughput whichever it uses"). A factor of two
  reads "roughly"; Appendix C.2's model, r_L/r_C ≈ (R + target)/(1.4·max(R, 25 ms)) at equal base
  RTTs R, is shown beside each (0.71 at 10 ms to 1.14 at 25 ms), not graded.
- the L queue's mean delay below 1 ms and its 99th percentile at most 2 ms (§1.4: "the AQM kept
  the average queuing delay below 1 ms ... with the 99th percentile being no worse than 2 ms").
- the C queue's median delay within ±50 % of PI2's 15 ms target (Appendix A.1): the PI
  controller holds the classic queue near its target.

    aqmlab reproduce l4s-coupling [--quick]
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from ...plots import subplots
from ...scenario import Scenario
from .. import Reproduction, Row, RunSettings, experiment, run_seeds
from . import DUALPI2, cubic, group_stats, prague

RATE = "40Mbps"
# PI2's target (Appendix A.1) and Prague's RTT-independence target (tcp_prague.c `prague_rtt_target`),
# the R_typ of Appendix C.2's model.
TARGET_MS = 15.0
R_TYPICAL_MS = 25.0
RATIO_BAND = (0.5, 2.0)
L_MEAN_MS = 1.0
L_P99_MS = 2.0
C_BAND = 0.5

FULL = RunSettings(seeds=(1, 2, 3), duration="60s", warmup="20s", sweep=(10, 25, 50, 100))
QUICK = RunSettings(seeds=(1,), duration="20s", warmup="8s", sweep=(25, 100))
MIXES_FULL = ((1, 1), (4, 4), (1, 4), (4, 1))
MIXES_QUICK = ((1, 1), (4, 4))


def network(*flows: dict[str, Any], qdisc: dict[str, Any] = DUALPI2, duration: str, warmup: str) -> Scenario:
    """The 40 Mbit/s dumbbell with `flows` and `qdisc` at the bottleneck."""
    return Scenario.from_dict(
        {
            "name": "l4s",
            "simulation": {"duration": duration, "warmup": warmup, "seed": 1},
            "topology": {
                "type": "dumbbell",
                "access_rate": "1Gbps",
                "bottleneck": {"rate": RATE, "delay": "0.5ms", "qdisc": qdisc},
            },
            "flows": list(flows),
        }
    )


def model_ratio(rtt_ms: float) -> float:
    """RFC 9332 Appendix C.2: r_L/r_C ≈ (R_bC + target)/(1.4·max(R_bL, R_typ)) at equal base RTTs."""
    return (rtt_ms + TARGET_MS) / (1.4 * max(rtt_ms, R_TYPICAL_MS))


def coupling_cell(rtt_ms: float, n_l: int, n_c: int, settings: RunSettings) -> dict[str, Any]:
    """One cell: its runs' mean per-flow rates, the ratio, and each queue's delays."""
    base = network(
        prague("prague", n_l, rtt_ms),
        cubic("cubic", n_c, rtt_ms),
        duration=str(settings.duration),
        warmup=str(settings.warmup),
    )
    stats = [group_stats(r) for r in run_seeds(base, settings.seeds)]
    mean = pd.concat(stats).groupby(level=0).mean()
    return {
        "rtt_ms": rtt_ms,
        "mix": f"{n_l}+{n_c}",
        "prague_mbps": mean.at["prague", "mbps_per_flow"],
        "cubic_mbps": mean.at["cubic", "mbps_per_flow"],
        "ratio": float(np.mean([s.at["prague", "mbps_per_flow"] / s.at["cubic", "mbps_per_flow"] for s in stats])),
        "model_ratio": model_ratio(rtt_ms),
        "utilisation": float((mean["mbps"].sum()) / 40.0),
        "l_mean_ms": mean.at["prague", "delay_mean_ms"],
        "l_p99_ms": mean.at["prague", "delay_p99_ms"],
        "c_median_ms": mean.at["cubic", "delay_median_ms"],
        "c_p99_ms": mean.at["cubic", "delay_p99_ms"],
    }


@experiment("l4s-coupling", "DualPI2: Prague beside CUBIC across base RTTs and flow mixes (RFC 9332)")
def l4s_coupling(quick: bool) -> Reproduction:
    settings = QUICK if quick else FULL
    mixes = MIXES_QUICK if quick else MIXES_FULL
    table = pd.DataFrame([coupling_cell(rtt, n_l, n_c, settings) for rtt in settings.sweep for n_l, n_c in mixes])
    rows: list[Row] = []
    for cell in table.itertuples():
        at = f"{cell.mix} at {cell.rtt_ms:g} ms"
        key = f"{cell.mix.replace('+', 'x')}.{cell.rtt_ms:g}ms"
        rows += [
            Row.between(
                f"Prague / CUBIC rate per flow, {at}",
                f"roughly equal (§2.1); C.2 model {cell.model_ratio:.2f}",
                cell.ratio,
                *RATIO_BAND,
                key=f"ratio.{key}",
            ),
            Row.at_most(
                f"L queue mean delay (ms), {at}", "< 1 ms (§1.4)", cell.l_mean_ms, L_MEAN_MS, key=f"l_mean.{key}"
            ),
            Row.at_most(f"L queue p99 delay (ms), {at}", "<= 2 ms (§1.4)", cell.l_p99_ms, L_P99_MS, key=f"l_p99.{key}"),
            Row.within(
                f"C queue median delay (ms), {at}",
                TARGET_MS,
                cell.c_median_ms,
                C_BAND,
                relative=True,
                key=f"c_median.{key}",
            ),
        ]
    seeds = ", ".join(map(str, settings.seeds))
    return Reproduction(
        rows=rows,
        figure=delay_figure(table),
        data={"cells": table},
        show=["cells"],
        notes=[
            f"40 Mbit/s, DualPI2 (Linux defaults), seeds {seeds}, {settings.duration} from {settings.warmup}; "
            "rates per flow; delays are each class's packets' sojourn in its queue"
        ],
    )


def delay_figure(table: pd.DataFrame) -> object:
    """Each class's queueing delay (mean and p99 for L, median and p99 for C) against the base RTT,
    one line per flow mix; the rate ratio beside with the Appendix C.2 model."""
    fig, (delay, ratio) = subplots(1, 2, figsize=(11, 4))
    for mix, cells in table.groupby("mix", sort=False):
        line = delay.plot(cells.rtt_ms, cells.c_median_ms, marker="o", label=f"C median, {mix}")[0]
        delay.plot(cells.rtt_ms, cells.c_p99_ms, marker="o", linestyle=":", color=line.get_color())
        line = delay.plot(cells.rtt_ms, cells.l_mean_ms, marker="s", label=f"L mean, {mix}")[0]
        delay.plot(cells.rtt_ms, cells.l_p99_ms, marker="s", linestyle=":", color=line.get_color())
        ratio.plot(cells.rtt_ms, cells.ratio, marker="o", label=mix)
    delay.axhline(TARGET_MS, color="grey", linewidth=1, linestyle="--")
    delay.set_yscale("log")
    delay.set_xlabel("base RTT (ms)")
    delay.set_ylabel("queueing delay (ms); dotted: p99")
    delay.set_title("L and C queueing delay under DualPI2")
    delay.legend(fontsize=7, ncol=2)
    rtts = np.array(sorted(table.rtt_ms.unique()))
    ratio.plot(rtts, [model_ratio(r) for r in rtts], color="black", linestyle="--", label="RFC 9332 C.2 model")
    ratio.axhspan(*RATIO_BAND, color="0.92", zorder=0)
    ratio.set_xlabel("base RTT (ms)")
    ratio.set_ylabel("rate per flow, Prague / CUBIC")
    ratio.set_title("the coupling (k = 2)")
    ratio.legend(fontsize=7)
    fig.tight_layout()
    return fig
