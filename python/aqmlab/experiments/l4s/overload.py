"""`l4s-overload`: 4 CUBIC flows (25 ms) beside an unresponsive UDP flood at 1.2 times the link, once
marking ECT(1) (into the L queue) and once not ECN-capable (into the C queue). RFC 9332 §4.2.3.1: "overload
with an unresponsive ECT(1) flow gets no more bandwidth advantage than with ECT(0)": graded, the
CUBIC flows' goodput with the ECT(1) flood within ±25 % of theirs with the classic flood (a band
chosen before the runs: the two floods differ in which queue the PI controller sees them).
Settings: `l4s-coupling`'s 40 Mbit/s dumbbell, 40 s from 10 s, seeds 1–3 (quick: 20 s from 8 s, seed 1).

    aqmlab reproduce l4s-overload [--quick]
"""

from __future__ import annotations

import pandas as pd

from .. import Reproduction, Row, RunSettings, experiment, run_seeds
from . import cubic, group_stats
from .coupling import network

OVERLOAD_BAND = 0.25

OVERLOAD_FULL = RunSettings(seeds=(1, 2, 3), duration="40s", warmup="10s")
OVERLOAD_QUICK = RunSettings(seeds=(1,), duration="20s", warmup="8s")
FLOOD_RATE = "48Mbps"


@experiment("l4s-overload", "DualPI2 under an unresponsive flood, ECT(1) against not-ECT (RFC 9332 §4.2.3.1)")
def l4s_overload(quick: bool) -> Reproduction:
    settings = OVERLOAD_QUICK if quick else OVERLOAD_FULL
    rows_by_flood = {}
    per_seed: dict[str, list[float]] = {}
    for codepoint in ("ect1", "not-ect"):
        flood = {"name": "flood", "type": "cbr", "rate": FLOOD_RATE, "packet_size": "1500B", "ecn": codepoint}
        base = network(flood, cubic("cubic", 4, 25), duration=str(settings.duration), warmup=str(settings.warmup))
        seeds = [group_stats(r) for r in run_seeds(base, settings.seeds)]
        per_seed[codepoint] = [s.at["cubic", "mbps"] for s in seeds]
        stats = pd.concat(seeds).groupby(level=0).mean()
        rows_by_flood[codepoint] = {
            "flood": codepoint,
            "flood_mbps": stats.at["flood", "mbps"],
            "cubic_mbps": stats.at["cubic", "mbps"],
            "cubic_delay_median_ms": stats.at["cubic", "delay_median_ms"],
            "flood_delay_median_ms": stats.at["flood", "delay_median_ms"],
        }
    table = pd.DataFrame(rows_by_flood.values())
    l4s, classic = rows_by_flood["ect1"], rows_by_flood["not-ect"]
    rows = [
        Row.within(
            "4 CUBIC under an ECT(1) flood / under a not-ECT flood, goodput",
            1.0,
            l4s["cubic_mbps"] / classic["cubic_mbps"],
            OVERLOAD_BAND,
            key="cubic.ect1_over_classic",
        )
    ]

    def why(row: Row) -> str:
        shown = {c: ", ".join(f"{v:.2f}" for v in values) for c, values in per_seed.items()}
        return (
            f"CUBIC's goodput per seed {shown['ect1']} Mb/s beside the ECT(1) flood, {shown['not-ect']} beside "
            f"the classic one, in {settings.duration} from {settings.warmup}: 1-1.3 Mb/s of 40 either way, a "
            "few dozen packets a second, so one seed's window moves the ratio by tenths (full mode, 3 seeds "
            "of 30 s: within the band); the classic queue holds "
            f"{l4s['cubic_delay_median_ms']:.1f} ms beside the ECT(1) flood against "
            f"{classic['cubic_delay_median_ms']:.1f} ms beside the classic one"
        )

    return Reproduction(
        rows=rows,
        data={"floods": table},
        show=["floods"],
        notes=[f"a {FLOOD_RATE} UDP flood on 40 Mbit/s beside 4 CUBIC (25 ms), DualPI2 (Linux defaults)"],
        explain=why,
    )
