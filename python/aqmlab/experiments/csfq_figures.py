"""The CSFQ paper's figures of §3.1–§3.3 (Stoica, Shenker, Zhang, SIGCOMM 1998).

Every run uses the §3 setup of `_csfq.py` (10 Mbps links, 1 ms, 64 KB buffers,
RED/FRED thresholds 16/32 KB, K = K_alpha = K_c = 100 ms) and compares the six
mechanisms FIFO (drop-tail), RED, FRED-1, FRED-2, DRR and CSFQ.

- `csfq-fig3a` (§3.1, Fig. 3a): 32 UDP flows on a 10 Mbps link, flow i sending
  (i+1) × its 0.3125 Mbps fair share.
- `csfq-fig3b` (§3.1, Fig. 3b): one UDP at 10 Mbps and 31 TCPs: the project demo
  (`demo.py`) plus the row of "FRED" as §3 defines it (see `fig3b`).
- `csfq-fig4` (§3.1, Fig. 4): one TCP against N-1 UDPs each at twice its fair share
  10/N Mbps, N = 2…32; the TCP's throughput / fair share.
- `csfq-fig6` (§3.2, Figs. 5–6): a chain of k = 1…5 congested 10 Mbps links, ten
  2 Mbps UDP cross flows on each; (a) UDP-0 at its fair share 10/11 Mbps through
  all of them: the fraction it gets through; (b) a TCP in its place: its
  throughput / fair share.
- Fig. 7 (§3.3) needs RLM (layered multicast), which aqmlab does not implement: it is
  listed as not yet reproduced.

Choices the paper leaves open:
- Measurement: each figure is a "10 sec" average (Figs. 3, 4; Fig. 6 unstated, taken
  the same). We measure the last 10 s of a 20 s run, as the demo does (quick: the last
  4 s of 6 s; Fig. 3(a), UDP only: the last 10 s of 12 s).
- Hosts: the dumbbell runs use the demo's scenario file (scenarios/csfq-fig3b.toml:
  100 Mbps, 1 ms host links so that each source offers its full jittered rate);
  the parking lot uses the topology's defaults (100 Mbps, 1 ms host links).
- UDP sources are the paper's footnote-4 CBR: interarrival times uniform in
  [0.5, 1.5) × the mean; 1000-byte packets. TCP is NewReno, as in the demo (the paper
  names no variant).
- Fig. 4's UDP rate: the clean copy prints "$-bps", the interleaved one "10 Mbps";
  twice the fair share 10/N Mbps is the only reading consistent with "twice its fair
  share rate" (reproduction-targets: csfq-fig4).
- Fig. 6's x-axis range is only in the figure; we run 1…5 links.
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

from collections.abc import Callable, Iterable, Mapping

import numpy as np
import pandas as pd

import aqmlab

from ..plots import pyplot as _pyplot
from ..results import MBPS
from ..scenario import Scenario
from . import Reproduction, Row, _csfq, demo, experiment, not_reproduced

MECHANISMS: dict[str, dict] = _csfq.MECHANISMS
# The paper's names, for legends.
LABELS = {
    "droptail": "FIFO",
    "red": "RED",
    "fred-1": "FRED-1",
    "fred-2": "FRED-2",
    "drr": "DRR",
    "csfq": "CSFQ",
    "fred": "FRED",
}

LINK_MBPS = 10.0
FULL = {"duration": "20s", "warmup": "10s", "seeds": (1, 2, 3)}
QUICK = {"duration": "6s", "warmup": "2s", "seeds": (1,)}
# Fig. 3(a) has only UDP flows, which CSFQ settles within a few K = 100 ms, and its check is a
# band for a 10-s average: quick runs keep the 10-s window and shorten the warm-up.
FIG3A_QUICK = {"duration": "12s", "warmup": "2s", "seeds": (1,)}

# Fig. 3(a): "flow i sends i + 1 times more than its fair share of 0.3125 Mbps".
FIG3A_FLOWS = 32
FIG3A_FAIR_MBPS = LINK_MBPS / FIG3A_FLOWS
# "for CSFQ the throughputs of all flows are between -11% and +5% of the ideal value"
FIG3A_CSFQ_BAND = (-0.11, 0.05)
# Accepted: the paper's band widened to [-20 %, +15 %] (reproduction-targets: csfq-fig3a),
# since the paper's band comes from one 10-s run of a randomised estimator.
FIG3A_CSFQ_ACCEPT = (-0.20, 0.15)
# "DRR is extremely effective": no number given; we accept every flow within 5 % of its share,
# under half of CSFQ's reported -11 % (flow 0 sends exactly its share, so its jittered queue
# is critically loaded and loses a few packets to longest-queue drop).
FIG3A_DRR_MAX_DEVIATION = 0.05
# "FIFO, RED, and FRED-1 fail to ensure fairness, with each flow getting a share proportional
# to its incoming rate"; "CSFQ and FRED-2 achieve a less precise degree of fairness".
FIG3A_ALLOCATION = {
    "droptail": "proportional",
    "red": "proportional",
    "fred-1": "proportional",
    "fred-2": "fair",
    "drr": "fair",
    "csfq": "fair",
}

# Fig. 4: N = 2...32; quick runs a few N on both sides of the paper's DRR/CSFQ crossover.
FIG4_N = tuple(range(2, 33))
FIG4_N_QUICK = (4, 12, 20, 26, 32)
# "DRR performs very well when there are less than 22 flows" (reproduction-targets: DRR >= 0.8
# for N <= 20); "CSFQ performs better than DRR when the number of flows is large" (crossover in
# [22, 32]); "across the entire range, CSFQ provides similar or better performance as compared
# to FRED" (CSFQ >= FRED - 0.1: one TCP's 10-s throughput varies by about that much).
FIG4_DRR_GOOD_UP_TO, FIG4_DRR_GOOD_MIN = 20, 0.8
FIG4_CROSSOVER = (22, 32)
FIG4_CSFQ_VS_FRED_SLACK = 0.1
# RED and FIFO are the "(unfair) status quo": far below the fair share at every N.
FIG4_BASELINE_MAX = 0.5

# Fig. 5: ten 2 Mbps UDP cross flows per link; UDP-0 "at its fair share rate of 0.909 Mbps".
FIG6_LINKS = (1, 2, 3, 4, 5)
FIG6_LINKS_QUICK = (1, 3, 5)
FIG6_CROSS_FLOWS, FIG6_CROSS_RATE = 10, "2Mbps"
FIG6_UDP0_BPS = LINK_MBPS * MBPS / (FIG6_CROSS_FLOWS + 1)
# Fig. 6(a) "CSFQ and FRED perform reasonably well, although not quite as well as DRR":
# DRR >= CSFQ, FRED up to binomial noise (~1100 packets of UDP-0 in 10 s forwarded with
# probability ~0.9: sd 0.009; two sd), and CSFQ >= 0.7 at the most links (reproduction-targets).
FIG6A_NOISE = 0.02
FIG6A_CSFQ_MIN = 0.7
# Fig. 6(b) "FRED performs significantly worse though still much better than RED and FIFO":
# FRED <= 0.8 x CSFQ at the most links (reproduction-targets); "much better" read as at least twice.
FIG6B_FRED_VS_CSFQ = 0.8
FIG6B_MUCH_BETTER = 2.0


def _dumbbell(name: str, flows: list[dict], settings: Mapping) -> Scenario:
    """The demo's 10 Mbps dumbbell (scenarios/csfq-fig3b.toml) with other flows."""
    base = aqmlab.load(aqmlab.scenarios_dir() / "csfq-fig3b.toml")
    return base.with_({"name": name, "flows": flows}).with_duration(settings["duration"], warmup=settings["warmup"])


def _parking_lot(name: str, links: int, through_flow: dict, settings: Mapping) -> Scenario:
    """CSFQ Fig. 5: `links` congested 10 Mbps, 1 ms links, ten 2 Mbps UDP cross flows each
    (entering at router i, leaving at i+1), and `through_flow` (flow 0) across all of them."""
    cross = [
        {
            "name": f"cross{hop}",
            "type": "cbr",
            "rate": FIG6_CROSS_RATE,
            "jitter": True,
            "count": FIG6_CROSS_FLOWS,
            "hop": hop,
        }
        for hop in range(links)
    ]
    return Scenario.from_dict(
        {
            "name": name,
            "simulation": {"duration": settings["duration"], "warmup": settings["warmup"], "seed": 1},
            "topology": {
                "type": "parking_lot",
                "congested_links": links,
                "link": {"rate": f"{LINK_MBPS:g}Mbps", "delay": "1ms", "qdisc": {"type": "droptail"}},
            },
            "flows": [through_flow, *cross],
        }
    )


def _with_mechanism(scenario: Scenario, qdisc: Mapping) -> Scenario:
    path = "topology.link.qdisc" if scenario.get("topology.type") == "parking_lot" else "topology.bottleneck.qdisc"
    return scenario.with_({path: dict(qdisc)})


def _flow0_normalised(scenarios: Mapping[int, Scenario], seeds: Iterable[int]) -> pd.DataFrame:
    """Flow 0's goodput / max-min fair share, mean over the seeds: one row per key of
    `scenarios` (`x`), one column per mechanism, then `fred` (the better FRED)."""
    rows = []
    for x, scenario in scenarios.items():
        row: dict = {"x": x}
        for name, qdisc in MECHANISMS.items():
            runs = [aqmlab.run(_with_mechanism(scenario, qdisc).with_seed(seed)) for seed in seeds]
            row[name] = float(np.mean([r.flows["normalised_goodput"].iloc[0] for r in runs]))
        row["fred"] = max(row["fred-1"], row["fred-2"])
        rows.append(row)
    return pd.DataFrame(rows)


def _curves_figure(panels: list[tuple[pd.DataFrame, str, str, str]], columns: Iterable[str], title: str):
    """One panel per (table, x label, y label, panel title): a line per mechanism column
    against the table's `x`, with the fair share (1) dashed."""
    plt = _pyplot()
    from matplotlib.ticker import MaxNLocator

    fig, axes = plt.subplots(1, len(panels), figsize=(6.5 * len(panels), 4.5), squeeze=False)
    for ax, (table, xlabel, ylabel, panel_title) in zip(axes[0], panels):
        for column in columns:
            ax.plot(table["x"], table[column], marker="o", markersize=3.5, linewidth=1.2, label=LABELS[column])
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


# --- Fig. 3(a) ---------------------------------------------------------------------------


@experiment("csfq-fig3a", "CSFQ Fig. 3(a): 32 UDP flows, flow i at (i+1)x its 0.3125 Mbps fair share, per mechanism")
def fig3a(quick: bool) -> Reproduction:
    flows = [
        {"name": f"udp{i}", "type": "cbr", "rate": (i + 1) * FIG3A_FAIR_MBPS * MBPS, "jitter": True}
        for i in range(FIG3A_FLOWS)
    ]
    scenario = _dumbbell("csfq-fig3a", flows, FIG3A_QUICK if quick else FULL)
    goodput = {
        name: aqmlab.run(_with_mechanism(scenario, qdisc)).flows["goodput_bps"].to_numpy() / MBPS
        for name, qdisc in MECHANISMS.items()
    }
    offered = np.array([f["rate"] for f in flows]) / MBPS
    # Shares proportional to the offered rates: flow i gets (i+1) x 10/528 Mbps.
    proportional = offered * LINK_MBPS / offered.sum()
    per_flow = pd.DataFrame(
        {
            "flow": range(FIG3A_FLOWS),
            "offered_mbps": offered,
            "fair_mbps": FIG3A_FAIR_MBPS,
            "proportional_mbps": proportional,
        }
    )
    for name, g in goodput.items():
        per_flow[f"{name}_mbps"] = g
    deviation = {name: g / FIG3A_FAIR_MBPS - 1 for name, g in goodput.items()}
    summary = pd.DataFrame(
        [
            {
                "mechanism": name,
                "lowest_vs_fair": d.min(),
                "highest_vs_fair": d.max(),
                "largest_abs_deviation": np.abs(d).max(),
                "rms_to_fair_mbps": _rms(goodput[name] - FIG3A_FAIR_MBPS),
                "rms_to_proportional_mbps": _rms(goodput[name] - proportional),
            }
            for name, d in deviation.items()
        ]
    )
    rows = _fig3a_rows(summary.set_index("mechanism"))
    fig = _pyplot().figure(figsize=(9, 4.8))
    ax = fig.gca()
    for name, g in goodput.items():
        ax.plot(per_flow["flow"], g, marker="o", markersize=3.5, linewidth=1.2, label=LABELS[name])
    ax.axhline(FIG3A_FAIR_MBPS, color="black", linestyle="--", linewidth=0.8, label="fair share (0.3125)")
    ax.set_xlabel("flow i (sends (i+1) x 0.3125 Mbps)")
    ax.set_ylabel("throughput over 10 s (Mbps)")
    ax.set_title("CSFQ Fig. 3(a): 32 UDP flows on a 10 Mbps link")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8, ncol=2)
    fig.tight_layout()
    notes = [
        "Allocation nearer to (RMS distance over the 32 flows): proportional shares (i+1) x 10/528 Mbps, or the fair share 0.3125 Mbps."
    ]
    return Reproduction(
        rows=rows, figure=fig, data={"per_flow": per_flow, "fairness": summary}, show=["fairness"], notes=notes
    )


def _rms(x: np.ndarray) -> float:
    return float(np.sqrt(np.mean(np.square(x))))


def _fig3a_rows(s: pd.DataFrame) -> list[Row]:
    csfq, drr = s.loc["csfq"], s.loc["drr"]
    low, high = FIG3A_CSFQ_BAND
    rows = [
        Row.at_least("CSFQ lowest flow vs fair share", f"{low:+.0%}", csfq.lowest_vs_fair, FIG3A_CSFQ_ACCEPT[0]),
        Row.at_most("CSFQ highest flow vs fair share", f"{high:+.0%}", csfq.highest_vs_fair, FIG3A_CSFQ_ACCEPT[1]),
        Row.at_most(
            "DRR largest |deviation| from fair share",
            "extremely effective",
            drr.largest_abs_deviation,
            FIG3A_DRR_MAX_DEVIATION,
        ),
    ]
    unfair = min(s.loc[m, "largest_abs_deviation"] for m in ("droptail", "red", "fred-1"))
    rows.append(
        Row(
            "Largest |deviation|: DRR < CSFQ < FIFO, RED, FRED-1",
            "DRR < CSFQ < FIFO, RED, FRED-1",
            f"DRR {drr.largest_abs_deviation:.3f} < CSFQ {csfq.largest_abs_deviation:.3f} < {unfair:.3f}",
            "order exact",
            bool(drr.largest_abs_deviation < csfq.largest_abs_deviation < unfair),
        )
    )
    for name, paper in FIG3A_ALLOCATION.items():
        fair, proportional = s.loc[name, "rms_to_fair_mbps"], s.loc[name, "rms_to_proportional_mbps"]
        ours = "fair" if fair < proportional else "proportional"
        rows.append(
            Row(
                f"{LABELS[name]} allocation nearer to",
                paper,
                f"{ours} (RMS {fair:.3f} to fair, {proportional:.3f} to proportional)",
                "the nearer of the two",
                ours == paper,
            )
        )
    return rows


# --- Fig. 3(b) ---------------------------------------------------------------------------

# "Under FRED the UDP flow gets almost 1.8 Mbps"; by §3's convention ("we are quoting the
# results from the version of FRED which performed better") this is the better FRED version.
# Band as for the demo's FRED-1 row (reproduction-targets: csfq-fig3b, [1.0, 2.7] Mbps).
FIG3B_FRED_BAND = (1.0, 2.7)


@experiment("csfq-fig3b", "CSFQ Fig. 3(b): 1 UDP at 10 Mbps vs 31 TCPs on a 10 Mbps link, per mechanism")
def fig3b(quick: bool) -> Reproduction:
    """The demo (its scenario, durations and rows: the full run measures the last 10 s of
    20 s, the paper's 10-s average) plus the row of "FRED" as §3 defines it.

    Which row the paper's 1.8 Mbps belongs to: §3 quotes "FRED" as the better of FRED-1 and
    FRED-2, so 1.8 Mbps is the better version's UDP goodput (`fred` row here). The demo
    checks it against FRED-1, which is the same reading if FRED-1 was the better version in
    the paper's run ("FRED-2 performs better than FRED-1 only when the number of flows is
    large"); both rows are kept so that the report shows which reading holds."""
    rep = demo.demo(quick)
    udp = rep.data["mechanisms"].set_index("mechanism")["udp_mbps"]
    better = min(("fred-1", "fred-2"), key=lambda m: udp[m])
    rep.rows.insert(
        len(rep.rows) - 1,
        Row.between(
            f"UDP goodput, FRED = better of FRED-1/FRED-2 ({better}) (Mbps)",
            "almost 1.8",
            udp[better],
            *FIG3B_FRED_BAND,
        ),
    )
    rep.notes.append(
        "Paper: FRED 'almost 1.8' Mbps is the better FRED version's (§3); the demo's fred-1 row assumes FRED-1 was that version."
    )
    return rep


# --- Fig. 4 ------------------------------------------------------------------------------


@experiment("csfq-fig4", "CSFQ Fig. 4: one TCP vs N-1 UDPs at twice their fair share, N = 2..32")
def fig4(quick: bool) -> Reproduction:
    counts, settings = (FIG4_N_QUICK, QUICK) if quick else (FIG4_N, FULL)
    scenarios = {n: _dumbbell(f"csfq-fig4-n{n}", _fig4_flows(n), settings) for n in counts}
    table = _flow0_normalised(scenarios, settings["seeds"]).rename(columns={"x": "n"})
    rows = _fig4_rows(table)
    figure = _curves_figure(
        [
            (
                table.rename(columns={"n": "x"}),
                "total number of flows N",
                "TCP throughput / fair share",
                "1 TCP vs N-1 UDPs at 2 x 10/N Mbps",
            )
        ],
        list(MECHANISMS),
        "CSFQ Fig. 4",
    )
    notes = [
        f"Normalised TCP throughput: mean of seeds {settings['seeds']}; `fred` = better of fred-1 and fred-2 at each N."
    ]
    return Reproduction(rows=rows, figure=figure, data={"tcp_normalised": table}, show=["tcp_normalised"], notes=notes)


def _fig4_flows(n: int) -> list[dict]:
    """One TCP (flow 0) and n-1 UDPs, each at twice its fair share 10/n Mbps."""
    return [
        {"name": "tcp", "type": "tcp", "tcp": {"variant": "newreno"}},
        {"name": "udp", "type": "cbr", "rate": 2 * LINK_MBPS * MBPS / n, "jitter": True, "count": n - 1},
    ]


def _fig4_rows(t: pd.DataFrame) -> list[Row]:
    small = t[t["n"] <= FIG4_DRR_GOOD_UP_TO]
    rows = [
        Row.at_least(
            f"DRR lowest, N <= {FIG4_DRR_GOOD_UP_TO}", "very well (< 22 flows)", small["drr"].min(), FIG4_DRR_GOOD_MIN
        )
    ]
    above = t[t["csfq"] > t["drr"]]
    crossover = int(above["n"].min()) if len(above) else float("nan")
    rows.append(Row.between("First N with CSFQ > DRR", "large N (DRR declines after 22)", crossover, *FIG4_CROSSOVER))
    largest = t.iloc[-1]
    rows.append(Row.at_most(f"DRR at N = {int(largest['n'])}", "declines after 22", largest["drr"], FIG4_DRR_GOOD_MIN))
    margin = t["csfq"] - t["fred"]
    worst = t.loc[margin.idxmin()]
    rows.append(
        Row.at_least(
            f"CSFQ - FRED, lowest over N (at N = {int(worst['n'])})",
            "similar or better",
            margin.min(),
            -FIG4_CSFQ_VS_FRED_SLACK,
        )
    )
    baseline = t[["red", "droptail"]].max(axis=1)
    rows.append(Row.at_most("RED, FIFO highest over N", "status quo (unfair)", baseline.max(), FIG4_BASELINE_MAX))
    return rows


# --- Fig. 6 ------------------------------------------------------------------------------


@experiment(
    "csfq-fig6", "CSFQ Fig. 6: UDP-0 (a) or a TCP (b) across 1..5 congested links with 2 Mbps UDP cross traffic"
)
def fig6(quick: bool) -> Reproduction:
    links, settings = (FIG6_LINKS_QUICK, QUICK) if quick else (FIG6_LINKS, FULL)
    udp0 = {"name": "udp0", "type": "cbr", "rate": FIG6_UDP0_BPS, "jitter": True}
    tcp0 = {"name": "tcp0", "type": "tcp", "tcp": {"variant": "newreno"}}
    # UDP-0 sends exactly its fair share, so goodput / fair share is the fraction forwarded.
    a = _flow0_normalised({k: _parking_lot(f"csfq-fig6a-k{k}", k, udp0, settings) for k in links}, settings["seeds"])
    b = _flow0_normalised({k: _parking_lot(f"csfq-fig6b-k{k}", k, tcp0, settings) for k in links}, settings["seeds"])
    rows = _fig6a_rows(a) + _fig6b_rows(b)
    figure = _curves_figure(
        [
            (
                a,
                "number of congested links",
                "fraction of UDP-0's traffic forwarded",
                "(a) UDP-0 at its fair share 0.909 Mbps",
            ),
            (b, "number of congested links", "TCP throughput / fair share", "(b) a TCP in UDP-0's place"),
        ],
        list(MECHANISMS),
        "CSFQ Fig. 6: one flow across k congested links",
    )
    data = {"udp0_forwarded": a.rename(columns={"x": "links"}), "tcp_normalised": b.rename(columns={"x": "links"})}
    last = b.iloc[-1]
    notes = [
        f"Mean of seeds {settings['seeds']}; `fred` = better of fred-1 and fred-2 at each number of links.",
        f"(b) unchecked: CSFQ's TCP gets {last['csfq']:.2f} of its share at {int(last['x'])} links, DRR's {last['drr']:.2f} (paper: 'DRR and CSFQ prove to be effective', no number).",
    ]
    return Reproduction(rows=rows, figure=figure, data=data, show=list(data), notes=notes)


def _ordering_rows(
    table: pd.DataFrame, metric: str, paper: str, check: Callable[[pd.Series], tuple[bool, str]]
) -> list[Row]:
    rows = []
    for _, r in table.iterrows():
        ok, ours = check(r)
        rows.append(
            Row(f"{metric}, {int(r['x'])} link{'s' if r['x'] > 1 else ''}", paper, ours, "order exact", bool(ok))
        )
    return rows


def _fig6a_rows(a: pd.DataFrame) -> list[Row]:
    def check(r: pd.Series) -> tuple[bool, str]:
        fair_ok = r["drr"] >= max(r["csfq"], r["fred"]) - FIG6A_NOISE
        baseline_ok = min(r["csfq"], r["fred"]) > max(r["red"], r["droptail"])
        return (
            fair_ok and baseline_ok,
            f"DRR {r['drr']:.2f} >= CSFQ {r['csfq']:.2f}, FRED {r['fred']:.2f} > RED {r['red']:.2f}, FIFO {r['droptail']:.2f}",
        )

    rows = _ordering_rows(
        a, "Fig. 6(a) UDP-0 forwarded", f"DRR >= CSFQ ≈ FRED > RED ≈ FIFO (DRR -{FIG6A_NOISE:g} noise)", check
    )
    last = a.iloc[-1]
    rows.append(
        Row.at_least(
            f"Fig. 6(a) CSFQ forwarded, {int(last['x'])} links", "reasonably well", last["csfq"], FIG6A_CSFQ_MIN
        )
    )
    return rows


def _fig6b_rows(b: pd.DataFrame) -> list[Row]:
    def check(r: pd.Series) -> tuple[bool, str]:
        baseline = max(r["red"], r["droptail"])
        ok = min(r["drr"], r["csfq"]) > r["fred"] >= FIG6B_MUCH_BETTER * baseline and r["fred"] > baseline
        return (
            ok,
            f"DRR {r['drr']:.2f}, CSFQ {r['csfq']:.2f} > FRED {r['fred']:.2f} >> RED {r['red']:.2f}, FIFO {r['droptail']:.2f}",
        )

    rows = _ordering_rows(
        b, "Fig. 6(b) TCP / fair share", f"DRR ≈ CSFQ > FRED >> RED ≈ FIFO (>> read as {FIG6B_MUCH_BETTER:g}x)", check
    )
    last = b.iloc[-1]
    rows.append(
        Row.at_most(
            f"Fig. 6(b) FRED / CSFQ, {int(last['x'])} links",
            "significantly worse",
            last["fred"] / last["csfq"],
            FIG6B_FRED_VS_CSFQ,
        )
    )
    return rows


# --- Fig. 7 ------------------------------------------------------------------------------

# §3.3: "a 4 Mbps link traversed by one TCP and three RLM flows", each RLM source a seven-layer
# encoding whose receivers join and leave layers by their losses.
not_reproduced(
    "csfq-fig7",
    "CSFQ Fig. 7: 3 RLM layered-multicast flows and 1 TCP on a 4 Mbps link",
    "needs RLM (receiver-driven layered multicast), which aqmlab does not implement",
)
