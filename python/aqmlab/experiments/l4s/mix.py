"""The seed mechanisms under L4S traffic: what a router of 1998–2003 does to scalable senders.

`l4s-mix` and `l4s-unresponsive` (`unresponsive.py`) use `today-tcp`'s network (the CSFQ paper's 10
Mbit/s link with each mechanism's `compare` preset: a 64 KB buffer, 16/32 KB thresholds), so the
seed mechanisms run with the settings their papers chose; DualPI2's preset is Linux's defaults with
a 64-packet limit. Flows, chosen before any run: two TCP Prague (L4S, ECT(1)) and two CUBIC
(classic), one of each at 20 and at 80 ms base RTT; 60 s with the first 20 discarded, seeds 1–3
(quick: 20 s from 8 s, seed 1).

`l4s-mix`: the four flows alone. Graded, each the claim of the mechanism's own paper or RFC:
- CSFQ, DRR and FQ-CoDel give each class (Prague, CUBIC) its fair share within 25 % (max-min
  fairness, CSFQ §1; `today-tcp`'s band);
- DualPI2 gives a Prague and a CUBIC flow roughly equal rates: per-flow ratio in [0.5, 2] (RFC
  9332 §2.1; `l4s-coupling`'s band).
The rest (drop-tail, RED, RED-PD, FRED, each class's queueing delay) is measured and shown.

    aqmlab reproduce l4s-mix [--quick]
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from ...mechanisms import PRESETS
from ...plots import subplots
from ...results import MBPS, Results
from ...scenario import Scenario
from .. import Reproduction, Row, RunSettings, experiment, run_seeds, with_extra_mechanisms
from . import cubic, prague

MECHANISMS = ("droptail", "red", "red_pd", "fred-1", "csfq", "drr", "fq_codel", "dualpi2")
FAIR_QUEUES = ("csfq", "drr", "fq_codel")
CLASSES = ("prague", "cubic")
RTTS_MS = (20, 80)
CLASS_BAND = 0.25
RATIO_BAND = (0.5, 2.0)
FLOOD_RATE = "5Mbps"

FULL = RunSettings(seeds=(1, 2, 3), duration="60s", warmup="20s")
QUICK = RunSettings(seeds=(1,), duration="20s", warmup="8s")


def network(flood: bool, settings: RunSettings) -> Scenario:
    """The 10 Mbit/s dumbbell with one Prague and one CUBIC flow at each RTT, and the ECT(1) flood."""
    flows: list[dict[str, Any]] = []
    if flood:
        flows.append({"name": "flood", "type": "cbr", "rate": FLOOD_RATE, "ecn": "ect1", "jitter": True})
    for rtt in RTTS_MS:
        flows += [prague(f"prague{rtt}", 1, rtt), cubic(f"cubic{rtt}", 1, rtt)]
    return Scenario.from_dict(
        {
            "name": "l4s-mix",
            "simulation": {"duration": str(settings.duration), "warmup": str(settings.warmup), "seed": 1},
            "topology": {
                "type": "dumbbell",
                "access_rate": "100Mbps",
                "bottleneck": {"rate": "10Mbps", "delay": "0.5ms", "qdisc": PRESETS["droptail"]},
            },
            "flows": flows,
        }
    )


def class_metrics(mechanism: str, runs: list[Results], classes: tuple[str, ...]) -> dict[str, Any]:
    """Each class's goodput (Mb/s, its flows' sum), share of its fair share, goodput per flow, its
    packets' median queueing delay at the bottleneck (ms, the mean over its flows) and the
    fraction of its packets the bottleneck marked CE, averaged over `runs`."""
    out: dict[str, Any] = {"mechanism": mechanism}
    per_run = []
    for results in runs:
        flows = results.flows
        kind = flows["name"].str.rstrip("0123456789")
        bottleneck = results.link("L->R")
        delays = results.queue_delay[results.queue_delay["link"] == bottleneck["id"]].set_index("flow")
        marks = results.marks[results.marks["link"] == bottleneck["id"]].set_index("flow")["window_count"]
        run = {}
        for cls in classes:
            members = flows[kind == cls]
            run[f"{cls}_mbps"] = members["goodput_bps"].sum() / MBPS
            run[f"{cls}_share"] = members["goodput_bps"].sum() / members["fair_share_bps"].sum()
            run[f"{cls}_per_flow"] = run[f"{cls}_mbps"] / len(members)
            run[f"{cls}_delay_ms"] = float(delays.reindex(members["id"])["median"].mean()) * 1e3
            sent = members["window_sent_packets"].sum()
            run[f"{cls}_marked"] = float(marks.reindex(members["id"]).fillna(0).sum() / sent) if sent else 0.0
        per_run.append(run)
    for name in per_run[0]:
        out[name] = float(np.mean([run[name] for run in per_run]))
    if "prague" in classes:
        out["prague_over_cubic"] = float(np.mean([r["prague_per_flow"] / r["cubic_per_flow"] for r in per_run]))
    return out


def class_table(flood: bool, quick: bool) -> pd.DataFrame:
    settings = QUICK if quick else FULL
    base = network(flood, settings)
    classes = (("flood",) if flood else ()) + CLASSES
    mechanisms = with_extra_mechanisms({name: PRESETS[name] for name in MECHANISMS})
    return pd.DataFrame(
        [
            class_metrics(name, run_seeds(base.with_qdisc(qdisc), settings.seeds), classes)
            for name, qdisc in mechanisms.items()
        ]
    )


@experiment("l4s-mix", "Two Prague and two CUBIC flows on 10 Mb/s, per mechanism: the seeds and DualPI2", compares=True)
def l4s_mix(quick: bool) -> Reproduction:
    table = class_table(flood=False, quick=quick)
    by = table.set_index("mechanism")
    rows = [
        Row.within(f"{cls} / its fair share, {name}", 1.0, by.at[name, f"{cls}_share"], CLASS_BAND, key=f"{cls}.{name}")
        for name in FAIR_QUEUES
        for cls in CLASSES
    ]
    rows.append(
        Row.between(
            "DualPI2: Prague / CUBIC rate per flow",
            "roughly equal (RFC 9332 §2.1)",
            by.at["dualpi2", "prague_over_cubic"],
            *RATIO_BAND,
            key="dualpi2.ratio",
        )
    )
    return Reproduction(
        rows=rows,
        figure=shares_figure(table, CLASSES, "2 Prague and 2 CUBIC (20 and 80 ms) on 10 Mb/s"),
        data={"classes": table},
        show=["classes"],
        notes=[settings_note(quick), headline(by, CLASSES)],
        explain=lambda row: _why_dualpi2_ratio(by) if row.key == "dualpi2.ratio" else None,
    )


def _why_dualpi2_ratio(by: pd.DataFrame) -> str:
    """What the runs measured of DualPI2's marking: the step at 1 ms is below one 1500-byte
    packet's 1.2 ms at 10 Mbit/s, so an L packet that waits behind one other is marked."""
    m = by.loc["dualpi2"]
    return (
        f"DualPI2 marked {m.prague_marked:.1%} of Prague's packets (CUBIC's, not ECN-capable, are dropped); "
        f"Prague's median sojourn {m.prague_delay_ms:.2f} ms: at 10 Mbit/s one 1500-byte packet takes 1.2 ms, "
        "above the L queue's 1 ms step (Linux's step_thresh, min_qlen_step 0), so a Prague packet that "
        "waits behind any other is marked; l4s-coupling's 40 Mbit/s link (0.3 ms a packet) gives ratios "
        "1.05-2.0"
    )


def settings_note(quick: bool) -> str:
    settings = QUICK if quick else FULL
    seeds = ", ".join(map(str, settings.seeds))
    return (
        f"seeds {seeds}, {settings.duration} from {settings.warmup}; each class's goodput is its flows' sum, "
        "share = goodput / the class's max-min fair share; delay = its packets' median sojourn at the bottleneck"
    )


def headline(by: pd.DataFrame, classes: tuple[str, ...]) -> str:
    """One line per mechanism: each class's goodput and median queueing delay."""
    return (
        "goodput (Mb/s) and median delay (ms) "
        + " / ".join(classes)
        + ": "
        + "; ".join(
            f"{name} " + " / ".join(f"{m[f'{c}_mbps']:.2f} ({m[f'{c}_delay_ms']:.1f})" for c in classes)
            for name, m in by.iterrows()
        )
    )


COLOURS = {"flood": "black", "prague": "tab:purple", "cubic": "tab:orange"}


def shares_figure(table: pd.DataFrame, classes: tuple[str, ...], title: str) -> object:
    """Each class's goodput over its fair share (bars) and median queueing delay (dots), per mechanism."""
    fig, (shares, delays) = subplots(2, 1, figsize=(10, 6), sharex=True)
    width = 0.8 / len(classes)
    x = np.arange(len(table))
    for i, cls in enumerate(classes):
        offset = (i - (len(classes) - 1) / 2) * width
        shares.bar(x + offset, table[f"{cls}_share"], width=width, label=cls, color=COLOURS[cls])
        delays.scatter(x + offset, table[f"{cls}_delay_ms"], color=COLOURS[cls], label=cls)
    shares.axhline(1.0, color="grey", linewidth=1, linestyle="--")
    shares.set_ylabel("goodput / fair share")
    shares.set_title(title)
    shares.legend(fontsize=8, ncol=len(classes))
    delays.set_yscale("log")
    delays.set_ylabel("median queueing delay (ms)")
    delays.set_xticks(x)
    delays.set_xticklabels(table["mechanism"])
    fig.tight_layout()
    return fig
