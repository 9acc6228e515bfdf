"""The CSFQ paper's figures of §3.1–§3.3 (Stoica, Shenker, Zhang, SIGCOMM 1998): their
shared setup. One module per figure:

- `csfq-fig3a` (csfq/fig3a.py; §3.1, Fig. 3a): 32 UDP flows on a 10 Mbps link, flow i
  sending (i+1) × its 0.3125 Mbps fair share.
- `csfq-fig3b` (csfq/fig3b.py; §3.1, Fig. 3b): one UDP at 10 Mbps and 31 TCPs: the
  project demo (`demo.py`) plus the row of "FRED" as §3 defines it.
- `csfq-fig4` (csfq/fig4.py; §3.1, Fig. 4): one TCP against N-1 UDPs each at twice its
  fair share 10/N Mbps, N = 2…32; the TCP's throughput / fair share.
- `csfq-fig6` (csfq/fig6.py; §3.2, Figs. 5–6): a chain of k = 1…5 congested 10 Mbps
  links, ten 2 Mbps UDP cross flows on each; (a) UDP-0 at its fair share 10/11 Mbps
  through all of them: the fraction it gets through; (b) a TCP in its place: its
  throughput / fair share.
- `csfq-fig7` (csfq/fig7.py; §3.3, Fig. 7): three RLM sessions and one TCP on a 4 Mbps
  link (its own setup, in that module).

Every run uses the §3 setup of `presets.py` and `csfq/__init__.py` (10 Mbps links, 1 ms, 64 KB buffers,
RED/FRED thresholds 16/32 KB, K = K_alpha = K_c = 100 ms) and compares the six
mechanisms FIFO (drop-tail), RED, FRED-1, FRED-2, DRR and CSFQ.

Choices the paper leaves open:
- Measurement: each figure is a "10 sec" average (Figs. 3, 4; Fig. 6 unstated, taken
  the same). We measure the last 10 s of a 20 s run, as the demo does (quick: the last
  4 s of 6 s; Fig. 3(a), UDP only: the last 10 s of 12 s).
- Hosts: the dumbbell runs use the demo's scenario file (scenarios/csfq-fig3b.toml:
  100 Mbps, 1 ms host links so that each source offers its full jittered rate);
  the parking lot uses the topology's defaults (100 Mbps, 1 ms host links).
- UDP sources are the paper's footnote-4 CBR: interarrival times uniform in
  [0.5, 1.5) × the mean; 1000-byte packets. TCP: `csfq.TCP` (ns-2's of 1998, NewReno),
  as every §3 experiment.
- Seeds: Figs. 4 and 6 plot one flow's 10-s throughput, which varies by ±0.1 of the
  fair share from seed to seed for a TCP (e.g. CSFQ at N = 32: 0.68 and 0.75 for
  seeds 1 and 2); full runs average seeds 1, 2, 3 so that an ordering check does not
  hinge on one sample path. Quick runs use seed 1.
- "FRED": "when we do not distinguish between the two, we are quoting the results from
  the version of FRED which performed better" (§3). Where the paper says FRED (Figs.
  3b, 4, 6), `fred` is the better of FRED-1 and FRED-2 at each point: the one giving
  the well-behaved flow more (Figs. 4, 6) or the UDP flow less (Fig. 3b).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import numpy as np
import pandas as pd

import aqmlab

from ...plots import subplots
from ...presets import CSFQ_MECHANISMS as MECHANISMS
from ...presets import PACKET_BYTES
from ...scenario import Scenario
from .. import PAPER_NAMES, RunSettings, run_seeds
from . import WINDOW, better_fred

LINK_MBPS = 10.0
# The 10-s average of a 20 s run (full), or of the last 4 s of 6 s on seed 1 (quick); full runs
# average seeds 1, 2, 3 (module docstring). Figures that sweep an x axis add it as `sweep`.
FULL = RunSettings(seeds=(1, 2, 3), duration="20s", warmup="10s")
QUICK = RunSettings(seeds=(1,), duration="6s", warmup="2s")


def demo_scenario(name: str, flows: list[dict], settings: RunSettings) -> Scenario:
    """The demo's 10 Mbps dumbbell (scenarios/csfq-fig3b.toml) with other flows."""
    base = aqmlab.load(aqmlab.scenarios_dir() / "csfq-fig3b.toml")
    return base.with_({"name": name, "flows": flows}).with_duration(settings.duration, warmup=settings.warmup)


def flow0_normalised(scenarios: Mapping[int, Scenario], seeds: Iterable[int]) -> pd.DataFrame:
    """Flow 0's goodput / max-min fair share, mean over the seeds: one row per key of
    `scenarios` (`x`), one column per mechanism, then `fred` (the better FRED)."""
    rows = []
    for x, scenario in scenarios.items():
        row: dict = {"x": x}
        for name, qdisc in MECHANISMS.items():
            runs = run_seeds(scenario.with_qdisc(qdisc), seeds)
            row[name] = float(np.mean([results.flows["normalised_goodput"].iloc[0] for results in runs]))
        row["fred"] = row[better_fred(row, lower_is_better=False)]
        rows.append(row)
    return pd.DataFrame(rows)


def curves_figure(panels: list[tuple[pd.DataFrame, str, str, str]], columns: Iterable[str], title: str) -> Any:
    """One panel per (table, x label, y label, panel title): a line per mechanism column
    against the table's `x`, with the fair share (1) dashed."""
    from matplotlib.ticker import MaxNLocator

    fig, axes = subplots(1, len(panels), figsize=(6.5 * len(panels), 4.5), squeeze=False)
    for ax, (table, xlabel, ylabel, panel_title) in zip(axes[0], panels, strict=True):
        for column in columns:
            ax.plot(table["x"], table[column], marker="o", markersize=3.5, linewidth=1.2, label=PAPER_NAMES[column])
        ax.axhline(1.0, color="black", linestyle="--", linewidth=0.8, label="fair share")
        ax.set_xlabel(xlabel)
        ax.set_ylabel(ylabel)
        ax.set_ylim(bottom=0)
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
        ax.set_title(panel_title, fontsize=10)
        ax.grid(alpha=0.3)
    axes[0, -1].legend(fontsize=8)
    fig.suptitle(title)
    fig.tight_layout()
    return fig


def tcp_losses(scenario: Scenario, seed: int, names: tuple[str, ...]) -> str:
    """The TCP's (flow 0's) losses and window bound under each of `names` in one scenario (one
    seed), measured: the reason for a failing row that compares their TCP shares."""
    facts = []
    for name in names:
        results = aqmlab.run(scenario.with_qdisc(MECHANISMS[name]).with_seed(seed))
        tcp = results.flows.iloc[0]
        drops = results.drops[results.drops["flow"] == 0].groupby("reason")["window_count"].sum()
        mix = ", ".join(f"{reason} {n}" for reason, n in drops.items() if n > 0) or "none"
        bound = window_bound(results)
        facts.append(
            f"{PAPER_NAMES[name]} {tcp['normalised_goodput']:.3f} of its share, loss {tcp['loss_rate']:.1%} "
            f"(drops {mix}), {tcp['timeouts']} timeouts, {tcp['fast_retransmits']} fast retransmits, "
            f"window bound {bound:.2f} of its share ({tcp['normalised_goodput'] / bound:.0%} of it used)"
        )
    return (
        f"seed {seed}, the TCP: " + "; ".join(facts) + ". The shares follow the timeouts (each idles the TCP for at "
        f"least one RTO of a 10-s or, quick, 4-s measurement) or the window: {WINDOW} packets per RTT (ns-2's "
        "window_), over the base RTT plus the mean queueing delay of the congested links the mechanism keeps."
    )


def window_bound(results: aqmlab.Results) -> float:
    """Flow 0's largest rate with a WINDOW-packet window, as a fraction of its fair share: WINDOW
    packets per base RTT plus the mean queueing delay (measured window) of the monitored links,
    which flow 0 crosses in every topology here (the congested ones)."""
    flow = results.flows.iloc[0]
    queue = results.queue[results.queue["time"] >= results.warmup]
    rates = results.links.set_index("id")["rate_bps"]
    queueing = sum(bytes_ * 8 / rates[link] for link, bytes_ in queue.groupby("link")["bytes"].mean().items())
    return WINDOW * PACKET_BYTES * 8 / (flow["base_rtt"] + queueing) / flow["fair_share_bps"]
