"""Today's TCP through the seed mechanisms (issue 24, goal 5): what the papers could not ask.

The five papers measured their mechanisms against 1998's TCP (Reno, ns-2's). Linux has run CUBIC
since 2006 and offers BBR, which does not back off on loss. Here three flows each of Reno, CUBIC
and BBR (aqmlab's Linux TCP, `profile = "linux"`: docs/linux-tcp.md) share a 10 Mbit/s bottleneck
with a 5 Mbit/s unresponsive UDP flood, under each mechanism's `compare` preset (mechanisms.py: the
CSFQ paper's 64 KB buffer and 16/32 KB thresholds; BRED with its §5.1 parameters).

Settings, chosen before any run: the CSFQ paper's link (10 Mbit/s, 64 KB, 1000-byte packets);
base RTTs 20, 40 and 80 ms for each congestion control (the papers' range, and so that no class
gains from a shorter RTT); the flood at half the link, five times its fair share (the papers'
unresponsive flows run from 1.5x to 32x theirs); 60 s with the first 20 discarded (BBR's
PROBE_RTT comes every 10 s), seeds 1-3. Quick: 20 s from 8 s, seed 1.

Graded, each a claim the papers make for their TCPs, carried to today's:
- CSFQ and DRR hold the flood near its fair share: CSFQ §3.1 measures its UDP at 1.16x its fair
  share (0.361 Mbit/s of 10/32) and DRR's at 1.27x (0.396); at most 1.5x here.
- CSFQ and DRR give each congestion control its fair share (CSFQ §1's aim, max-min fairness):
  each class's goodput within 25 % of three fair shares.
- On drop-tail with this shallow buffer (64 KB is 0.5 to 0.1 of the flows' bandwidth-delay
  products) BBR takes more than CUBIC, which takes about what Reno does (BBR v1 against CUBIC
  at shallow buffers: Cardwell et al., IETF 97 ICCRG 2016; Hock et al., ICNP 2017): BBR > CUBIC.
The rest is measured and shown, not graded: no paper states it.

    aqmlab reproduce today-tcp [--quick]
    aqmlab compare reno-cubic-bbr-flood -m droptail,red,red_pd,sred,fred-1,bred,csfq,drr
"""

from __future__ import annotations

import numpy as np
import pandas as pd

import aqmlab

from ...mechanisms import PRESETS
from ...plots import subplots
from ...results import MBPS, Results
from .. import Reproduction, Row, RunSettings, experiment, run_seeds, with_extra_mechanisms

SCENARIO = "reno-cubic-bbr-flood.toml"
# The papers' five and the baselines they were measured against, by `compare` preset name.
MECHANISMS = ("droptail", "red", "red_pd", "sred", "fred-1", "bred", "csfq", "drr")
CLASSES = ("flood", "reno", "cubic", "bbr")
FAIR_HELD = ("csfq", "drr")
# CSFQ §3.1: the UDP at 1.16x (CSFQ) and 1.27x (DRR) its fair share; accepted up to this.
FLOOD_SHARES = 1.5
# Each congestion control's goodput within this fraction of its fair share under CSFQ and DRR.
CLASS_BAND = 0.25

# The figure's name and colour of each class.
LEGEND = {
    "flood": ("UDP flood", "black"),
    "reno": ("Reno", "tab:blue"),
    "cubic": ("CUBIC", "tab:orange"),
    "bbr": ("BBR", "tab:green"),
}

FULL = RunSettings(seeds=(1, 2, 3), duration="60s", warmup="20s")
QUICK = RunSettings(seeds=(1,), duration="20s", warmup="8s")


def scenario() -> aqmlab.Scenario:
    """The shipped scenario (`aqmlab scenarios`): the flood, then 3 Reno, 3 CUBIC, 3 BBR."""
    return aqmlab.load(aqmlab.scenarios_dir() / SCENARIO)


@experiment(
    "today-tcp", "Today's TCP: 3 Reno, 3 CUBIC, 3 BBR and a 5 Mb/s UDP flood on 10 Mb/s, per mechanism", compares=True
)
def today_tcp(quick: bool) -> Reproduction:
    settings = QUICK if quick else FULL
    base = scenario().with_duration(settings.duration, warmup=settings.warmup)
    mechanisms = with_extra_mechanisms({name: PRESETS[name] for name in MECHANISMS})
    runs = {name: run_seeds(base.with_qdisc(qdisc), settings.seeds) for name, qdisc in mechanisms.items()}
    table = pd.DataFrame([class_metrics(name, results) for name, results in runs.items()])
    by = table.set_index("mechanism")
    rows = flood_held_rows(by, FAIR_HELD, "flood")
    rows += [
        Row.within(f"{cc} / its fair share, {name}", 1.0, by.at[name, f"{cc}_share"], CLASS_BAND, key=f"{cc}.{name}")
        for name in FAIR_HELD
        for cc in CLASSES[1:]
    ]
    rows.append(
        Row.ordered(
            "drop-tail: CUBIC vs BBR goodput (Mb/s)",
            "BBR > CUBIC (shallow buffer)",
            [by.at["droptail", "cubic_mbps"], by.at["droptail", "bbr_mbps"]],
            key="droptail.bbr_over_cubic",
        )
    )
    seeds = ", ".join(map(str, settings.seeds))
    return Reproduction(
        rows=rows,
        figure=shares_figure(table),
        data={"classes": table},
        show=["classes"],
        notes=[
            f"seeds {seeds}, {base.get('simulation.duration')} from {base.get('simulation.warmup')}; "
            "each class's goodput is its three flows' sum; share = goodput / the class's max-min fair share",
            headline(by),
        ],
    )


def flood_held_rows(by: pd.DataFrame, mechanisms: tuple[str, ...], flood: str) -> list[Row]:
    """CSFQ §3.1's claim, one row per mechanism: it holds the flood (`by`'s `flood_share`, named
    `flood` in the rows) at most FLOOD_SHARES of its fair share."""
    return [
        Row.at_most(
            f"{flood} / its fair share, {name}",
            "CSFQ §3.1: 1.16 (CSFQ), 1.27 (DRR)",
            by.at[name, "flood_share"],
            FLOOD_SHARES,
            key=f"flood.{name}",
        )
        for name in mechanisms
    ]


def class_metrics(mechanism: str, runs: list[Results]) -> dict[str, float | str]:
    """Each class's goodput (Mb/s, summed over its flows, mean over `runs`) and its share of its
    max-min fair share, with Jain's index and the bottleneck's median queueing delay (ms)."""
    out: dict[str, float | str] = {"mechanism": mechanism}
    per_run = [_classes(results) for results in runs]
    for cc in CLASSES:
        out[f"{cc}_mbps"] = float(np.mean([r[cc][0] for r in per_run]))
        out[f"{cc}_share"] = float(np.mean([r[cc][0] / r[cc][1] for r in per_run]))
    out["jain"] = float(np.mean([r.summary()["jain_index"] for r in runs]))
    bottleneck = [r.link("L->R") for r in runs]
    delays = []
    for results, link in zip(runs, bottleneck, strict=True):
        queue = results.queue[(results.queue["link"] == link["id"]) & (results.queue["time"] >= results.warmup)]
        delays.append(float((queue["bytes"] * 8 / link["rate_bps"] * 1000).median()))
    out["delay_median_ms"] = float(np.mean(delays))
    return out


def _classes(results: Results) -> dict[str, tuple[float, float]]:
    """Per class: its goodput and its max-min fair share, summed over its flows (Mb/s). A flow's
    class is its name up to the RTT (`reno20` is Reno's)."""
    flows = results.flows
    kind = flows["name"].str.rstrip("0123456789")
    return {
        cc: (
            float(flows.loc[kind == cc, "goodput_bps"].sum() / MBPS),
            float(flows.loc[kind == cc, "fair_share_bps"].sum() / MBPS),
        )
        for cc in CLASSES
    }


def headline(by: pd.DataFrame) -> str:
    """One line per mechanism: the flood's and each congestion control's goodput."""
    return "goodput (Mb/s) flood / Reno / CUBIC / BBR: " + "; ".join(
        f"{name} {m.flood_mbps:.2f} / {m.reno_mbps:.2f} / {m.cubic_mbps:.2f} / {m.bbr_mbps:.2f}"
        for name, m in by.iterrows()
    )


def shares_figure(table: pd.DataFrame) -> object:
    """Each class's goodput over its fair share, a group of bars per mechanism."""
    fig, ax = subplots(figsize=(10, 4))
    width = 0.8 / len(CLASSES)
    x = np.arange(len(table))
    for i, cc in enumerate(CLASSES):
        label, colour = LEGEND[cc]
        ax.bar(x + (i - 1.5) * width, table[f"{cc}_share"], width=width, label=label, color=colour)
    ax.axhline(1.0, color="grey", linewidth=1, linestyle="--")
    ax.set_xticks(x)
    ax.set_xticklabels(table["mechanism"])
    ax.set_ylabel("goodput / fair share")
    ax.set_title("3 Reno, 3 CUBIC, 3 BBR (20/40/80 ms) and a 5 Mb/s UDP flood on 10 Mb/s")
    ax.legend(fontsize=8, ncol=4)
    fig.tight_layout()
    return fig
