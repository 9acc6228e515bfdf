"""CSFQ §3.3, Fig. 7: three RLM sessions and one TCP on a 4 Mbps link, under DRR, CSFQ,
FRED, RED and FIFO.

§3.3: "We consider a 4 Mbps link traversed by one TCP and three RLM flows. Each source uses a
seven layer encoding, where layer i sends 2^(i+4) Kbps; each layer is modeled by a UDP traffic
source. The fair share of each flow is 1Mbps. In the RLM case this will correspond to each
receiver subscribing to the first five layers" (footnote 7: "Σ_{i=1..5} 2^(i+4) Kbps = 0.992
Mbps"). "Since in this experiment the link bandwidth is 4 Mbps and the router buffer size is 64
KB, we set constants K, K_α, and K_c to be 250 ms". "The receiving rates averaged over 1 second
interval for each algorithm are plotted in Figure 7." "unlike DRR and CSFQ, FRED does not provide
fair bandwidth allocation in this scenario." Footnote 9: "when we change the simulation scenario
so that the TCP flow starts after all the RLM flows then it receives less than half of its fair
share" (under which mechanism is not said).

Setup: the §3 mechanisms (`presets.csfq_mechanisms`, K = K_α = K_c = 250 ms, 64 KB, RED/FRED
thresholds 16/32 KB) on a 4 Mbps, 1 ms link; hosts on 100 Mbps, 1 ms links as in the demo; the
TCP is `csfq.TCP`; RLM is `type = "rlm"` (transport/rlm.rs: ns-2's RLM, the one the paper ran),
seven layers of 32·2^(i−1) kbps, 1000-byte packets, each layer jittered as footnote 4's "UDP".
aqmlab has no multicast: each session is one source and one receiver on a unicast path, joins and
leaves reaching the source one path delay after the receiver decides.

Choices where the paper is silent, made before any run, with their reasons:
- Start order of Fig. 7: footnote 9 calls "the TCP flow starts after all the RLM flows" a change,
  so in Fig. 7 it did not: all four start together (the RLM receivers spread over the first
  second, as the demo's TCPs).
- Footnote 9's order: the RLM sessions as above, the TCP at 100 s, after the receivers have
  climbed alone (4 join experiments, each at least T_D + 2·deviation = 9 s after the last with
  RLM's initial estimates: about 50 s; doubled).
- Duration: 400 s, measured over the last 200 s (the TCP of footnote 9 then runs 100 s before
  the window), so that a join-timer backed off to its 60 s ceiling still probes a few times in
  the window; full runs average seeds 1–3. Quick: 250 s measured from 150 s, seed 1.
- "FRED": the better of FRED-1 and FRED-2 (§3), here the fairer (lower max/min of the four rates).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import numpy as np
import pandas as pd

import aqmlab

from ...plots import subplots
from ...presets import BUFFER, PACKET
from ...presets import csfq_mechanisms as mechanisms
from ...results import MBPS, Results
from ...scenario import Scenario
from .. import PAPER_NAMES, Reproduction, Row, RunSettings, experiment, run_seeds
from . import TCP, better_fred

LINK = "4Mbps"
# "we set constants K, K_α, and K_c to be 250 ms"; 64 KB buffers as every §3 run.
MECHANISMS = mechanisms(k="250ms")
# "The fair share of each flow is 1Mbps"; five layers: Σ_{i=1..5} 2^(i+4) kbps (footnote 7).
FAIR_MBPS = 1.0
FIVE_LAYERS_MBPS = 0.992
FAIR_LAYERS = 5
RLM_SESSIONS = 3
# reproduction-targets (csfq-fig7): under DRR and CSFQ each flow's long-run rate within ±30 % of
# 1 Mbps. Each receiver "subscribing to the first five layers": its time-averaged subscription
# within ±0.5 of 5, i.e. nearer 5 than 4 or 6.
RATE_TOLERANCE = 0.30
LAYERS_TOLERANCE = 0.5
# FRED "does not provide fair bandwidth allocation", the RLM receivers below their share
# (reproduction-targets): FRED's lowest RLM rate below the band DRR and CSFQ are held to.
FRED_RLM_BELOW_MBPS = FAIR_MBPS * (1 - RATE_TOLERANCE)
# Footnote 9: the late TCP "receives less than half of its fair share".
FOOTNOTE9_SHARE = 0.5
# The panels of Fig. 7, (a)-(e).
PANELS = ("drr", "csfq", "fred", "red", "droptail")

TCP_LATE_START = 100.0
FULL = RunSettings(seeds=(1, 2, 3), duration=400.0, warmup=200.0)
QUICK = RunSettings(seeds=(1,), duration=250.0, warmup=150.0)
ORDERS = {"fig7": "all start together (Fig. 7)", "late_tcp": f"TCP starts at {TCP_LATE_START:g} s (footnote 9)"}
FLOW_NAMES = ["tcp"] + [f"rlm{i}" for i in range(1, RLM_SESSIONS + 1)]


def fig7_scenario(order: str, settings: RunSettings) -> Scenario:
    """The 4 Mbps dumbbell with the TCP (flow 0) and three RLM sessions (flows 1–3), in
    `order` ("fig7" or "late_tcp"); 1-s throughput bins; the receivers' subscriptions traced."""
    tcp_start = TCP_LATE_START if order == "late_tcp" else 0.0
    rlm = {"type": "rlm", "jitter": True, "trace": True, "start_jitter": "1s"}
    flows = [{"name": "tcp", "type": "tcp", "tcp": TCP, "start": tcp_start}]
    flows += [{"name": name, **rlm} for name in FLOW_NAMES[1:]]
    return Scenario.from_dict(
        {
            "name": f"csfq-fig7-{order}",
            "simulation": {
                "duration": settings.duration,
                "warmup": settings.warmup,
                "seed": 1,
                "throughput_bin": "1s",
            },
            "topology": {
                "type": "dumbbell",
                "access_rate": "100Mbps",
                "access_delay": "1ms",
                "sink_delay": "1ms",
                "access_qdisc": {"type": "droptail", "limit_bytes": BUFFER},
                "bottleneck": {"rate": LINK, "delay": "1ms", "qdisc": {"type": "droptail", "limit_bytes": BUFFER}},
            },
            "flows": [{**flow, "packet_size": PACKET} for flow in flows],
        }
    )


def mean_layers(results: Results, flow: int, start: float, end: float) -> float:
    """The time average of an RLM receiver's subscription (its `layers` trace) over [start, end]."""
    trace = results.traces
    trace = trace[(trace["flow"] == flow) & (trace["var"] == "layers")]
    times = np.append(trace["time"].to_numpy(), end)
    spans = np.clip(times[1:], start, end) - np.clip(times[:-1], start, end)
    return float((trace["value"].to_numpy() * spans).sum() / (end - start))


def fig7_metrics(results: Results) -> dict[str, float]:
    """Each flow's goodput over the window (Mbps), each receiver's mean subscription, and the
    max/min ratio of the four goodputs."""
    goodput = results.flows["goodput_bps"].to_numpy() / MBPS
    metrics = {f"{name}_mbps": rate for name, rate in zip(FLOW_NAMES, goodput, strict=True)}
    for flow, name in enumerate(FLOW_NAMES[1:], start=1):
        metrics[f"{name}_layers"] = mean_layers(results, flow, results.warmup, results.duration)
    metrics["max_min"] = goodput.max() / goodput.min()
    return metrics


@experiment("csfq-fig7", "CSFQ Fig. 7: 3 RLM layered-multicast sessions and 1 TCP on a 4 Mbps link")
def fig7(quick: bool) -> Reproduction:
    settings = QUICK if quick else FULL
    runs = {
        (order, name): run_seeds(fig7_scenario(order, settings).with_qdisc(qdisc), settings.seeds)
        for order in ORDERS
        for name, qdisc in MECHANISMS.items()
    }
    table = fig7_table(runs)
    means = {order: table[table["order"] == order].set_index("mechanism") for order in ORDERS}
    return Reproduction(
        rows=fig7_rows(means["fig7"]) + footnote9_rows(means["late_tcp"]),
        figure=fig7_figure(runs, means),
        data={"rates": table, "series": series(runs)},
        show=["rates"],
        notes=fig7_notes(settings, means) + [csfq_seeds_note(runs["fig7", "csfq"]), late_csfq_note(settings)],
        explain=lambda row: fig7_reason(row.key, runs, means["fig7"]),
    )


def fig7_table(runs: dict[tuple[str, str], list[Results]]) -> pd.DataFrame:
    """One row per (order, mechanism): fig7_metrics averaged over the seeds, then one "fred"
    row per order, the fairer of FRED-1 and FRED-2 (lower max/min)."""
    records = [
        {"order": order, "mechanism": name, **pd.DataFrame([fig7_metrics(r) for r in results]).mean().to_dict()}
        for (order, name), results in runs.items()
    ]
    table = pd.DataFrame(records)
    fred = []
    for order in ORDERS:
        of_order = table[table["order"] == order].set_index("mechanism")
        better = better_fred(of_order["max_min"].to_dict(), lower_is_better=True)
        fred.append({**of_order.loc[better].to_dict(), "order": order, "mechanism": "fred", "fred_of": better})
    return pd.concat([table, pd.DataFrame(fred)], ignore_index=True)


def fig7_rows(means: pd.DataFrame) -> list[Row]:
    """DRR and CSFQ fair (each flow within ±30 % of 1 Mbps, each receiver at about 5 layers);
    FRED less fair than CSFQ, its lowest RLM below that band (`means`: fig7_table's rows of the
    Fig. 7 order, by mechanism)."""
    rows = []
    for name in ("drr", "csfq"):
        at = means.loc[name]
        label = PAPER_NAMES[name]
        rows += [
            Row.within(
                f"{label}: {flow} rate (Mbps)",
                FAIR_MBPS,
                at[f"{flow}_mbps"],
                RATE_TOLERANCE,
                True,
                key=f"{name}.{flow}.mbps",
            )
            for flow in FLOW_NAMES
        ]
        rows += [
            Row.within(
                f"{label}: {flow} mean subscription (layers)",
                FAIR_LAYERS,
                at[f"{flow}_layers"],
                LAYERS_TOLERANCE,
                key=f"{name}.{flow}.layers",
            )
            for flow in FLOW_NAMES[1:]
        ]
    fred = PAPER_NAMES[means.loc["fred", "fred_of"]]
    rlm_rates = means.loc["fred", [f"{flow}_mbps" for flow in FLOW_NAMES[1:]]]
    rows += [
        Row.ordered(
            f"max/min of the four rates: FRED ({fred}) > CSFQ",
            "FRED not fair, unlike DRR and CSFQ",
            [{"FRED": means.loc["fred", "max_min"]}, {"CSFQ": means.loc["csfq", "max_min"]}],
            relation=">",
            key="order.max_min.fred_gt_csfq",
        ),
        Row.at_most(
            f"FRED ({fred}): lowest RLM rate (Mbps)",
            "below fair share",
            float(rlm_rates.min()),
            FRED_RLM_BELOW_MBPS,
            key="fred.rlm_min.mbps",
        ),
    ]
    return rows


def footnote9_rows(means: pd.DataFrame) -> list[Row]:
    """Informative: the TCP's rate / its 1 Mbps fair share when it starts after the RLM sessions,
    under each mechanism (footnote 9 names none). `means`: fig7_table's late_tcp rows."""
    return [
        replace(
            Row.at_most(
                f"Footnote 9, TCP after the RLMs, {PAPER_NAMES[name]}: TCP rate / fair share",
                "< 0.5 (mechanism unstated)",
                means.loc[name, "tcp_mbps"] / FAIR_MBPS,
                FOOTNOTE9_SHARE,
                key=f"footnote9.{name}.tcp_share",
            ),
            graded=False,
        )
        for name in PANELS
    ]


def fig7_reason(key: str, runs: dict[tuple[str, str], list[Results]], means: pd.DataFrame) -> str:
    """For a failing row, the flows of the mechanism it checks (first seed, Fig. 7 order; both
    FRED and CSFQ for the max/min ordering): flow_facts."""
    checked = ["fred", "csfq"] if key.startswith("order.") else [key.split(".")[0]]
    named = [means.loc["fred", "fred_of"] if name == "fred" else name for name in checked]
    return " | ".join(flow_facts(runs["fig7", name][0]) for name in named)


def flow_facts(results: Results) -> str:
    """Each flow's rate, losses and (RLM) subscription in one run, and how busy and full the
    link was (and CSFQ's fair share α at the end): the reason for a failing row."""
    flows, link = results.flows, results.link("L->R")
    queue = results.queue[results.queue["time"] >= results.warmup]["bytes"]
    facts = [
        f"link {link['utilisation']:.0%} busy, queue at most {queue.max() / 1000:.0f} of {BUFFER}"
        + (f", α {link['qdisc.alpha_bps'] / MBPS:.2f} Mbps at the end" if link["qdisc"] == "csfq" else "")
    ]
    for flow, name in enumerate(FLOW_NAMES):
        row = flows.iloc[flow]
        drops = results.drops[results.drops["flow"] == flow].groupby("reason")["window_count"].sum()
        mix = ", ".join(f"{reason} {n}" for reason, n in drops.items() if n > 0) or "none"
        text = f"{name} {row['goodput_bps'] / MBPS:.3f} Mbps, loss {row['loss_rate']:.1%} ({mix})"
        if flow == 0:
            text += f", {row['timeouts']} timeouts"
        else:
            text += f", {mean_layers(results, flow, results.warmup, results.duration):.2f} layers"
        facts.append(text)
    return f"seed {results.summary()['seed']}, {results.scenario.get('name')}: " + "; ".join(facts)


def series(runs: dict[tuple[str, str], list[Results]]) -> pd.DataFrame:
    """The 1-s receiving rates of the first seed's runs (what Fig. 7 plots), Mbps."""
    frames = []
    for (order, name), results in runs.items():
        rates = results[0].throughput.assign(order=order, mechanism=name, mbps=lambda t: t["bps"] / MBPS)
        rates["flow"] = rates["flow"].map(dict(enumerate(FLOW_NAMES)))
        frames.append(rates[["order", "mechanism", "time", "flow", "mbps"]])
    return pd.concat(frames, ignore_index=True)


def fig7_figure(runs: dict[tuple[str, str], list[Results]], means: dict[str, pd.DataFrame]) -> Any:
    """Fig. 7's panels (DRR, CSFQ, FRED, RED, FIFO): each flow's 1-s receiving rate against
    time (first seed), the Fig. 7 order above and footnote 9's below; fair share dashed."""
    fig, axes = subplots(len(ORDERS), len(PANELS), figsize=(20, 7.5), sharex=True, sharey=True, squeeze=False)
    for row, order in enumerate(ORDERS):
        for col, name in enumerate(PANELS):
            mechanism = means[order].loc[name, "fred_of"] if name == "fred" else name
            rates = runs[order, mechanism][0].throughput
            ax = axes[row, col]
            for flow, label in enumerate(FLOW_NAMES):
                of_flow = rates[rates["flow"] == flow]
                ax.plot(of_flow["time"], of_flow["bps"] / MBPS, linewidth=0.8, label=label)
            ax.axhline(FAIR_MBPS, color="black", linestyle="--", linewidth=0.7)
            ax.set_title(f"({'abcde'[col]}) {PAPER_NAMES[mechanism]}: {ORDERS[order]}", fontsize=9)
            ax.set_ylim(0, 4)
            ax.grid(alpha=0.3)
        axes[row, 0].set_ylabel("receiving rate (Mbps, 1-s bins)")
    for ax in axes[-1]:
        ax.set_xlabel("time (s)")
    axes[0, -1].legend(fontsize=8)
    fig.suptitle("CSFQ Fig. 7: three RLM sessions and one TCP on a 4 Mbps link")
    fig.tight_layout()
    return fig


def fig7_notes(settings: RunSettings, means: dict[str, pd.DataFrame]) -> list[str]:
    """How the rates were measured, and which FRED is "FRED" in each order."""
    window = f"{settings.warmup:g}–{settings.duration:g} s"
    fred = ", ".join(f"{ORDERS[order]}: {PAPER_NAMES[means[order].loc['fred', 'fred_of']]}" for order in ORDERS)
    return [
        f"Rates: goodput over {window}, mean of seeds {settings.seeds}; layers: each receiver's time-averaged "
        f"subscription over the same window (5 layers = {FIVE_LAYERS_MBPS} Mbps).",
        f"FRED = the fairer of FRED-1 and FRED-2 (lower max/min): {fred}.",
    ]


def csfq_seeds_note(runs: list[Results]) -> str:
    """Measured, seed by seed: CSFQ in the Fig. 7 order either settles fair or never becomes
    congested (utilisation, largest queue, α, the TCP's timeouts, the receivers' layers)."""
    facts = []
    for results in runs:
        link = results.link("L->R")
        queue = results.queue[results.queue["time"] >= results.warmup]["bytes"].max() / 1000
        metrics = fig7_metrics(results)
        layers = ", ".join(f"{metrics[f'{flow}_layers']:.1f}" for flow in FLOW_NAMES[1:])
        facts.append(
            f"seed {results.summary()['seed']}: link {link['utilisation']:.0%} busy, queue ≤ {queue:.0f} KB, "
            f"α {link['qdisc.alpha_bps'] / MBPS:.2f} Mbps, TCP {metrics['tcp_mbps']:.2f} Mbps with "
            f"{results.flows.iloc[0]['timeouts']} timeouts, layers {layers}"
        )
    return (
        "CSFQ, Fig. 7 order, per seed: " + "; ".join(facts) + ". Where the link stays below capacity and the queue "
        "below half the buffer (§2.2.2: uncongested until then), α is the largest label of the last K_c: a receiver's "
        "join sends above it and fails, and the TCP, dropped whenever it sends above α, times out; the link never "
        "becomes congested. Where the TCP fills the link early, α becomes the fair share and all four flows get it."
    )


def late_csfq_note(settings: RunSettings) -> str:
    """Measured: where the RLM receivers are when footnote 9's TCP starts, under CSFQ and DRR
    (first seed). The run without the TCP, to its start, is that run until then: the sessions'
    random streams are keyed by their names."""
    base = fig7_scenario("late_tcp", settings)
    alone = base.with_({"flows": base.get("flows")[1:]}).with_duration(TCP_LATE_START, warmup=TCP_LATE_START / 2)
    facts = []
    for name in ("csfq", "drr"):
        results = aqmlab.run(alone.with_qdisc(MECHANISMS[name]).with_seed(settings.seeds[0]))
        layers = [mean_layers(results, flow, TCP_LATE_START - 10, TCP_LATE_START) for flow in range(RLM_SESSIONS)]
        early = int(results.drops.loc[results.drops["reason"] == "csfq", "count"].sum())
        facts.append(
            f"{PAPER_NAMES[name]} {', '.join(f'{x:.1f}' for x in layers)} layers, {early} RLM packets dropped by "
            f"CSFQ's rule, the link {results.link('L->R')['utilisation']:.0%} busy over the last "
            f"{TCP_LATE_START / 2:g} s"
        )
    return (
        f"Footnote 9's order, before the TCP starts at {TCP_LATE_START:g} s (seed {settings.seeds[0]}; mean "
        "subscription over the 10 s before): " + "; ".join(facts) + ". On a link below capacity CSFQ's α is the "
        "largest label of the last K_c, so a receiver that joins a layer sends above α until α catches up and loses "
        "packets: its join experiments fail, its join-timer backs off, and the receivers are still low when the TCP "
        "arrives."
    )
