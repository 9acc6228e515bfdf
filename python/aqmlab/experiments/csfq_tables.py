"""CSFQ paper (Stoica, Shenker, Zhang, SIGCOMM 1998) §3.4–§3.6: Tables 1–4.

Common setup (§3, see _csfq.py): 10 Mbps output links with 1 ms latency and a 64 KB
buffer, RED/FRED thresholds 16 KB and 32 KB, K = K_alpha = K_c = 100 ms, the first
router of a flow is its CSFQ edge. Hosts attach through 100 Mbps drop-tail links as in
the demo (scenarios/csfq-fig3b.toml), so sources offer their full rate to the congested
link. Packets are 1000 bytes ("1 packet = 1 KB", §3.4). UDP sources have interarrival
times uniform in [0.5, 1.5) x the mean (footnote 4).

Choices for values the paper leaves unstated:
- TCP: NewReno (variant unstated, as in the demo) with the timers of the paper's 1998
  ns-2, whose defaults changed later (ns-2 test suites keep the old ones with "Agent/TCP
  set rtxcur_init_ 6.0 ; # Default changed on 2006/01/21" and "Agent/TCP set tcpTick_
  0.1"): `initial_rto = 6s` and `timer_granularity = 100ms`. The granularity keeps the
  RTO at least 100 ms above the smoothed RTT; with our default 10 ms, the 100 ms-latency
  run of Table 3 under CSFQ had about 43 timeouts per TCP flow for 9 drops (CSFQ's queue
  there swings between empty and 256 KB, 0 to 205 ms, faster than RTTVAR follows) and
  the spurious timeouts cut the TCPs' mean from 6011 to 4898 packets per 100 s. The
  initial RTO matters only in Table 2, where a short transfer whose first packet is lost
  waits for it (see table2).
- TCP flows start uniformly in the first second (unstated; as the demo).
- "FRED" of the tables: the paper ran FRED-1 (basic) and FRED-2 (two-packet buffer) and
  reports the better; we run both, show both, and check the better one (named in each
  table). Which one the paper reported is not printed.
- Runs: the paper reports one run per table; we repeat each with several seeds (numbers
  in each experiment) and say which statistic we compare.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

import aqmlab

from ..plots import _pyplot
from ..results import MBPS
from ..scenario import Scenario
from . import Reproduction, Row, _csfq, experiment

# §3.4: "1 packet = 1 KB".
PACKET_BYTES = 1000
# See the module docstring: the TCP timers of the paper's 1998 ns-2.
TCP = {"variant": "newreno", "initial_rto": "6s", "timer_granularity": "100ms"}
# Display order and names of the mechanisms (keys of _csfq.mechanisms()).
NAMES = {"drr": "DRR", "csfq": "CSFQ", "fred-1": "FRED-1", "fred-2": "FRED-2", "red": "RED", "droptail": "FIFO"}


def _mechanisms(**config: str) -> dict[str, dict]:
    """_csfq.mechanisms(**config) in the order of NAMES (the tables' row order)."""
    mechanisms = _csfq.mechanisms(**config)
    return {m: mechanisms[m] for m in NAMES}


def _dumbbell(
    qdisc: Mapping,
    flows: list[dict],
    duration: float,
    seed: int,
    warmup: float = 0.0,
    delay: str = "1ms",
    buffer: str = _csfq.BUFFER,
) -> Scenario:
    """One 10 Mbps congested link (L->R) with `qdisc`; hosts on 100 Mbps drop-tail links."""
    return Scenario.from_dict(
        {
            "simulation": {"duration": duration, "warmup": warmup, "seed": seed},
            "topology": {
                "type": "dumbbell",
                "access_rate": "100Mbps",
                "access_delay": "1ms",
                "sink_delay": "1ms",
                "access_qdisc": {"type": "droptail", "limit_bytes": buffer},
                "bottleneck": {"rate": "10Mbps", "delay": delay, "qdisc": dict(qdisc)},
            },
            "flows": flows,
        }
    )


def _better_fred(values: Mapping[str, float], lower_is_better: bool) -> str:
    """The FRED variant the paper would have reported: the better of FRED-1 and FRED-2."""
    pick = min if lower_is_better else max
    return pick(("fred-1", "fred-2"), key=lambda m: values[m])


def _ordering_row(
    metric: str,
    paper: str,
    values: Mapping[str, float],
    groups: Sequence[Sequence[str]],
    much: Sequence[bool] | None = None,
) -> Row:
    """Checks that `groups` are in increasing order of `values` (ties within a group are
    free). `much[i]` asks for "≪" between group i and i+1: the larger group's smallest
    value at least twice the smaller group's largest (a lenient reading: where the paper
    writes ≪ its own gaps are 3x (Table 1, CSFQ vs RED) to 8x (Table 3, RED vs FRED))."""
    much = much or [False] * (len(groups) - 1)
    ok = True
    for (low, high), strong in zip(itertools.pairwise(groups), much):
        top, bottom = max(values[m] for m in low), min(values[m] for m in high)
        ok &= bottom >= 2 * top if strong else bottom > top
    ours = " < ".join(
        f"{NAMES.get(m, 'FRED')} {values[m]:.0f}" for m in sorted(itertools.chain(*groups), key=lambda m: values[m])
    )
    tolerance = "order exact (ties within a group free; ≪: at least 2x)"
    return Row(metric, paper, ours, tolerance, bool(ok))


def _bar_figure(
    title: str, ylabel: str, frame: pd.DataFrame, ours: str, paper: str, err: str | None = None, log: bool = False
):
    """Bars of our value per mechanism, with the paper's value (where printed) as a black tick."""
    fig, ax = _pyplot().subplots(figsize=(7, 4))
    x = np.arange(len(frame))
    ax.bar(x, frame[ours], yerr=frame[err] if err else None, capsize=3, color="tab:blue", label="ours")
    printed = frame[paper].notna()
    ax.hlines(frame.loc[printed, paper], x[printed] - 0.4, x[printed] + 0.4, colors="black", linewidth=2, label="paper")
    ax.set_xticks(x)
    ax.set_xticklabels(frame["mechanism"])
    ax.set_ylabel(ylabel)
    if log:
        ax.set_yscale("log")
    ax.set_title(title, fontsize=10)
    ax.legend(fontsize=8)
    fig.tight_layout()
    return fig


# ---------------------------------------------------------------------------------------
# Table 1 (§3.4): an ON-OFF source and 19 TCPs on one 10 Mbps link.

# "The ON-OFF source sent 6758 packets over the course of the experiment."
ONOFF_SENT = 6758
# Table 1 (delivered, dropped); only the DRR and CSFQ rows are clean. "FRED RED 53221436
# 5452 FIFO" survives of the rest: 5322 + 1436 = 6758 is one pair, read as RED's; 5452 is
# read as FIFO's delivered (reproduction-targets, csfq-table1). The FRED row is unreadable.
TABLE1 = {"drr": (601, 6157), "csfq": (1680, 5078), "red": (5322, 1436), "droptail": (5452, None)}
# ON 100 ms and OFF 1900 ms (exponential means) at 10 Mbps: 1250 packets/s x 0.1/2.0 =
# 62.5 packets/s on average, so the paper's 6758 packets took about 108 s.
ONOFF_DURATION = ONOFF_SENT / (10e6 / (8 * PACKET_BYTES) * 0.1 / 2.0)


@experiment("csfq-table1", "CSFQ Table 1: an ON-OFF source (10 Mbps when ON) vs 19 TCPs on 10 Mbps")
def table1(quick: bool) -> Reproduction:
    """CSFQ §3.4, Table 1: packets of the ON-OFF source delivered and dropped per mechanism.

    One ON-OFF source (exponential ON 100 ms / OFF 1900 ms, 10 Mbps while ON) and 19 TCPs
    share a 10 Mbps link, 1 ms, 64 KB, K = 100 ms. The duration is unstated; we run 108 s,
    the expected time for the paper's 6758 packets. Our ON-OFF sample path sends a
    different count, so every count is scaled by 6758 / sent (reproduction-targets), then
    averaged over seeds (full: 5 seeds; quick: 1). Tolerances (reproduction-targets):
    DRR and CSFQ ±40 % (a single run whose ON periods are exponential: the count over
    about 54 ON periods varies by ±14 % alone, and which packets fall in which ON period
    varies more); RED and FIFO deliver at least 70 % of what was sent.
    """
    seeds = [1] if quick else [1, 2, 3, 4, 5]
    flows = [
        {"name": "onoff", "type": "onoff", "rate": "10Mbps", "on_time": "100ms", "off_time": "1900ms"},
        {"name": "tcp", "type": "tcp", "count": 19, "start_jitter": "1s", "tcp": TCP},
    ]
    records = []
    for seed, (name, qdisc) in itertools.product(seeds, _mechanisms().items()):
        onoff = aqmlab.run(_dumbbell(qdisc, flows, ONOFF_DURATION, seed)).flows.iloc[0]
        scale = ONOFF_SENT / onoff["sent_packets"]
        records.append(
            {
                "mechanism": name,
                "seed": seed,
                "sent": onoff["sent_packets"],
                "delivered": onoff["delivered_packets"],
                "dropped": onoff["dropped_packets"],
                "delivered_scaled": onoff["delivered_packets"] * scale,
                "dropped_scaled": onoff["dropped_packets"] * scale,
            }
        )
    runs = pd.DataFrame(records)
    mean = runs.groupby("mechanism", sort=False)[
        ["sent", "delivered", "dropped", "delivered_scaled", "dropped_scaled"]
    ].mean()
    delivered = mean["delivered_scaled"].to_dict()
    fred = _better_fred(delivered, lower_is_better=True)  # fairer: closer to DRR's fair-share count
    delivered["fred"] = delivered[fred]
    table = pd.DataFrame(
        {
            "mechanism": [NAMES[m] for m in mean.index],
            "paper_delivered": [TABLE1.get(m, (None, None))[0] for m in mean.index],
            "paper_dropped": [TABLE1.get(m, (None, None))[1] for m in mean.index],
            "delivered": mean["delivered_scaled"].round(0).to_numpy(),
            "dropped": mean["dropped_scaled"].round(0).to_numpy(),
            "sent_unscaled": mean["sent"].round(0).to_numpy(),
            "delivered_unscaled": mean["delivered"].round(0).to_numpy(),
        }
    ).astype({"paper_delivered": "Float64", "paper_dropped": "Float64"})
    rows = [
        Row.within("DRR: ON-OFF packets delivered (scaled to 6758 sent)", 601, delivered["drr"], 0.40, relative=True),
        Row.within("CSFQ: ON-OFF packets delivered (scaled)", 1680, delivered["csfq"], 0.40, relative=True),
        Row.at_least("RED: ON-OFF packets delivered (scaled)", "5322 (?)", delivered["red"], 0.7 * ONOFF_SENT),
        Row.at_least("FIFO: ON-OFF packets delivered (scaled)", "5452 (?)", delivered["droptail"], 0.7 * ONOFF_SENT),
        _ordering_row(
            "ON-OFF packets delivered, ordering",
            "DRR < CSFQ ≪ RED ≈ FIFO",
            delivered,
            [["drr"], ["csfq"], ["red", "droptail"]],
            much=[False, True],
        ),
        # FRED's row is unreadable; "FRED and CSFQ also are able to achieve a high degree of
        # fairness" puts it with CSFQ, far (≪, as above) below RED and FIFO.
        Row.at_most(
            f"FRED ({NAMES[fred]}): ON-OFF packets delivered (scaled), at most half of RED's and FIFO's",
            "unreadable; fair like CSFQ",
            delivered["fred"],
            0.5 * min(delivered["red"], delivered["droptail"]),
        ),
    ]
    notes = [
        f"Counts are scaled by 6758 / sent and averaged over {len(seeds)} seed(s) of {ONOFF_DURATION:.0f} s; the ON-OFF source sent {runs['sent'].min()}–{runs['sent'].max()} packets unscaled.",
        f"FRED (unreadable in the paper): FRED-1 delivered {delivered['fred-1']:.0f}, FRED-2 {delivered['fred-2']:.0f}; the fairer one ({NAMES[fred]}) is checked.",
        "Dropped counts exclude the few packets still queued or in flight at the end of the run.",
    ]
    figure = _bar_figure(
        "CSFQ Table 1: ON-OFF source's packets delivered (scaled to 6758 sent)",
        "packets delivered",
        table,
        "delivered",
        "paper_delivered",
    )
    return Reproduction(
        rows=rows, figure=figure, data={"table1": table, "table1_runs": runs}, show=["table1"], notes=notes
    )


# ---------------------------------------------------------------------------------------
# Table 2 (§3.4): 60 short TCP transfers against a 10 Mbps UDP flow.

# Table 2 (ms), readable rows only: "RED 5921274" and "FIFO 840 1 1695" (mean, std).
TABLE2 = {"red": (592, 1274), "droptail": (840, 1695)}
# "60 TCP transfers whose inter-arrival times are exponentially distributed with the mean
# of 0.05 ms, and the length of each transfer is drawn from a Pareto distribution with a
# mean of 20 packets (1 packet = 1 KB) and a shaping parameter of 1.06".
TRANSFERS = 60
PARETO_MEAN = 20.0
PARETO_SHAPE = 1.06
PRINTED_GAP = 0.05e-3  # s, as printed
GAP = 0.05  # s, our reading (see table2's docstring)


def web_flows(seed: int, gap: float) -> list[dict]:
    """The UDP flow and one TCP flow per transfer: a Pareto size in packets (rounded, at
    least 1, as the core's web mode does) starting at Poisson arrival times with mean
    gap `gap` s, both drawn from a numpy Generator seeded with `seed`."""
    rng = np.random.default_rng(seed)
    # numpy's pareto() is the Lomax form: (draw + 1) x scale is Pareto with that scale, and
    # a Pareto of shape a and mean m has scale m (a - 1) / a.
    sizes = np.maximum(
        1, np.round((rng.pareto(PARETO_SHAPE, TRANSFERS) + 1) * PARETO_MEAN * (PARETO_SHAPE - 1) / PARETO_SHAPE)
    )
    starts = np.cumsum(rng.exponential(gap, TRANSFERS))
    udp = {"name": "udp", "type": "cbr", "rate": "10Mbps", "jitter": True}
    return [udp] + [
        {
            "name": f"web{i}",
            "type": "tcp",
            "start": float(t),
            "tcp": TCP,
            "workload": {"type": "transfer", "packets": int(n)},
        }
        for i, (n, t) in enumerate(zip(sizes, starts))
    ]


def transfer_times(seeds: Sequence[int], gap: float, duration: float) -> pd.DataFrame:
    """Per mechanism and seed: mean and std (ms) of the 60 transfer times, and how many did
    not finish (their time is counted as run end minus start, a lower bound)."""
    records = []
    for seed in seeds:
        flows = web_flows(seed, gap)
        for name, qdisc in _mechanisms().items():
            transfers = aqmlab.run(_dumbbell(qdisc, flows, duration, seed)).transfers
            times = 1000 * (transfers["end"].fillna(duration) - transfers["start"])
            records.append(
                {
                    "mechanism": name,
                    "seed": seed,
                    "mean_ms": times.mean(),
                    "std_ms": times.std(ddof=0),
                    "median_ms": times.median(),
                    "unfinished": int(transfers["end"].isna().sum()),
                    "packets": int(transfers["packets"].sum()),
                }
            )
    return pd.DataFrame(records)


def _typical(runs: pd.DataFrame) -> pd.DataFrame:
    """Median over seeds of each run's mean and std: what one run typically shows."""
    return runs.groupby("mechanism", sort=False).agg(
        mean_ms=("mean_ms", "median"),
        std_ms=("std_ms", "median"),
        pooled_median_ms=("median_ms", "median"),
        unfinished=("unfinished", "sum"),
    )


@experiment("csfq-table2", "CSFQ Table 2: 60 short TCP transfers (Pareto sizes) vs a 10 Mbps UDP")
def table2(quick: bool) -> Reproduction:
    """CSFQ §3.4, Table 2: mean and std of the transfer time of 60 short TCP transfers
    sharing a 10 Mbps link (1 ms, 64 KB, K = 100 ms) with a UDP flow at 10 Mbps.

    Workload: 60 TCP flows, each one transfer (`tcp.packets`) of a Pareto size (mean 20
    packets, shape 1.06) starting at exponential inter-arrival times; sizes and starts are
    drawn in Python from a numpy Generator seeded with the run's seed. The transfer time
    is from the flow's start until its last packet is acknowledged (Results.transfers).

    Inter-arrival mean: printed "0.05 ms". We read it as 0.05 s: a 0.05 ms mean is 1/16 of
    one packet's transmission time at 10 Mbps, so the 60 "Web" transfers would all start
    within about 3 ms, a single burst in which the exponential spacing is irrelevant; 0.05
    s spreads them over about 3 s. The printed reading is run too (full mode) and
    reported beside ours.

    Statistic: Pareto(1.06) sizes have infinite variance, so the mean of 60 transfer times
    depends on the few largest transfers drawn (per-seed means differ by an order of
    magnitude). The paper reports one sample of 60; we report the median over seeds
    (full: 20; quick: 4) of each run's mean and std, i.e. what a single run typically
    shows. Runs last 200 s (full) so that every transfer finishes.

    Tolerances (reproduction-targets, csfq-table2): RED 592 ms and FIFO 840 ms ±50 % (a
    single heavy-tailed sample); "CSFQ performs worse than FRED ... but still almost one
    order of magnitude better than FIFO and RED": CSFQ at most 0.2 x our RED.

    Sensitivity: under FIFO and RED most of the time is spent waiting for the initial RTO
    of transfers whose first packet was dropped, so the RED and FIFO means scale with it.
    With ns-2's 1998 default of 6 s (module docstring) ours is RED 484 / FIFO 1624 ms;
    with RFC 6298's 3 s it was RED 285 / FIFO 1220 ms (and CSFQ/RED 0.27).
    """
    seeds = list(range(1, 5)) if quick else list(range(1, 21))
    duration = 60.0 if quick else 200.0
    runs = transfer_times(seeds, GAP, duration)
    typical = _typical(runs)
    means = typical["mean_ms"].to_dict()
    fred = _better_fred(means, lower_is_better=True)
    means["fred"] = means[fred]
    table = _table2_frame(typical)
    rows = [
        Row.within("RED: mean transfer time (ms)", 592, means["red"], 0.5, relative=True),
        Row.within("FIFO: mean transfer time (ms)", 840, means["droptail"], 0.5, relative=True),
        Row.at_most(
            "CSFQ: mean transfer time (ms), at most 0.2 x RED's",
            "≈ 1/10 of FIFO and RED",
            means["csfq"],
            0.2 * means["red"],
        ),
        _ordering_row(
            f"Mean transfer time, ordering (FRED = {NAMES[fred]})",
            "FRED < CSFQ ≪ RED < FIFO",
            means,
            [["fred"], ["csfq"], ["red"], ["droptail"]],
            much=[False, True, False],
        ),
    ]
    notes = [
        f"Median over {len(seeds)} seeds of each run's mean/std over its 60 transfers; inter-arrival mean {GAP * 1000:g} ms (printed: 0.05 ms); {duration:.0f} s runs.",
        f"FRED: FRED-1 {means['fred-1']:.0f} ms, FRED-2 {means['fred-2']:.0f} ms; the better ({NAMES[fred]}) is checked. The paper does not print DRR's row; ours: {means['drr']:.0f} ms.",
    ]
    data = {"table2": table, "table2_runs": runs}
    show = ["table2"]
    if not quick:
        printed = transfer_times(seeds, PRINTED_GAP, duration)
        data["table2_as_printed"] = _table2_frame(_typical(printed))
        data["table2_as_printed_runs"] = printed
        show.append("table2_as_printed")
        p = _typical(printed)["mean_ms"]
        notes.append(
            "As printed (0.05 ms, all 60 transfers in the first ~3 ms): mean "
            + ", ".join(f"{NAMES[m]} {v:.0f}" for m, v in p.items())
            + " ms; CSFQ/RED = "
            + f"{p['csfq'] / p['red']:.2f}."
        )
    figure = _bar_figure(
        f"CSFQ Table 2: mean transfer time of 60 short TCPs (median of {len(seeds)} runs)",
        "mean transfer time (ms)",
        table,
        "mean_ms",
        "paper_mean_ms",
        log=True,
    )
    return Reproduction(rows=rows, figure=figure, data=data, show=show, notes=notes)


def _table2_frame(typical: pd.DataFrame) -> pd.DataFrame:
    return pd.DataFrame(
        {
            "mechanism": [NAMES[m] for m in typical.index],
            "paper_mean_ms": [TABLE2.get(m, (None, None))[0] for m in typical.index],
            "paper_std_ms": [TABLE2.get(m, (None, None))[1] for m in typical.index],
            "mean_ms": typical["mean_ms"].round(0).to_numpy(),
            "std_ms": typical["std_ms"].round(0).to_numpy(),
            "median_ms": typical["pooled_median_ms"].round(0).to_numpy(),
            "unfinished": typical["unfinished"].to_numpy(),
        }
    ).astype({"paper_mean_ms": "Float64", "paper_std_ms": "Float64"})


# ---------------------------------------------------------------------------------------
# Table 3 (§3.5): 100 ms link latency, 19 TCPs and a 10 Mbps UDP.

# Table 3: mean and std of the packets a TCP flow gets per 100 s.
TABLE3 = {"drr": (6080, 64), "csfq": (5761, 220), "fred": (4974, 190), "red": (628, 80), "droptail": (378, 69)}
# §3.5: "we set the buffer size to be 256 KB, and K, K_alpha, and K_c to be 400 ms".
LATENCY_BUFFER = "256KB"
LATENCY_K = "400ms"
# Band (relative) per row, from reproduction-targets (csfq-table3): the mean of 19 flows
# over 100 s is stable, but the paper's single run leaves the mechanism's own noise.
TABLE3_TOLERANCE = {"drr": 0.10, "csfq": 0.20, "fred": 0.25}
# "RED and FIFO < 1500": a few times the paper's values, far below the others.
TABLE3_STARVED = 1500


@experiment("csfq-table3", "CSFQ Table 3: 19 TCPs and a 10 Mbps UDP over a 100 ms link")
def table3(quick: bool) -> Reproduction:
    """CSFQ §3.5, Table 3: mean and standard deviation over the 19 TCP flows of the
    packets each delivers in 100 s, with a UDP flow at 10 Mbps, on a 10 Mbps link with
    100 ms propagation delay, a 256 KB buffer and K = K_alpha = K_c = 400 ms.

    Unstated: RED/FRED thresholds (we keep §3's 16 KB / 32 KB: the paper changes only the
    buffer and K here; with B/4 and B/2 = 64 / 128 KB FRED rises to ~5500 packets, above
    our CSFQ), run length (we measure 100 s after a 20 s warm-up; quick: 30 s after 10 s,
    scaled to 100 s), and the std's normalisation (population std over the 19 flows).
    Full mode averages the per-run mean and std over 3 seeds; quick runs one.
    """
    seeds = [1] if quick else [1, 2, 3]
    warmup, window = (10.0, 30.0) if quick else (20.0, 100.0)
    flows = [
        {"name": "udp", "type": "cbr", "rate": "10Mbps", "jitter": True},
        {"name": "tcp", "type": "tcp", "count": 19, "start_jitter": "1s", "tcp": TCP},
    ]
    records = []
    for seed, (name, qdisc) in itertools.product(seeds, _mechanisms(buffer=LATENCY_BUFFER, k=LATENCY_K).items()):
        results = aqmlab.run(
            _dumbbell(qdisc, flows, warmup + window, seed, warmup=warmup, delay="100ms", buffer=LATENCY_BUFFER)
        )
        goodput = results.flows["goodput_bps"].to_numpy()
        packets = goodput[1:] * 100 / (8 * PACKET_BYTES)  # per 100 s
        records.append(
            {
                "mechanism": name,
                "seed": seed,
                "mean": packets.mean(),
                "std": packets.std(),
                "udp_mbps": goodput[0] / MBPS,
            }
        )
    runs = pd.DataFrame(records)
    mean = runs.groupby("mechanism", sort=False)[["mean", "std", "udp_mbps"]].mean()
    means = mean["mean"].to_dict()
    fred = _better_fred(means, lower_is_better=False)
    means["fred"] = means[fred]
    table = pd.DataFrame(
        {
            "mechanism": [NAMES[m] for m in mean.index],
            "paper_mean": [TABLE3.get("fred" if m.startswith("fred") else m)[0] for m in mean.index],
            "paper_std": [TABLE3.get("fred" if m.startswith("fred") else m)[1] for m in mean.index],
            "mean": mean["mean"].round(0).to_numpy(),
            "std": mean["std"].round(0).to_numpy(),
            "udp_mbps": mean["udp_mbps"].round(2).to_numpy(),
        }
    )
    label = dict(NAMES, fred=f"FRED ({NAMES[fred]})")
    rows = [
        Row.within(
            f"{label[m]}: TCP packets per 100 s, mean", TABLE3[m][0], means[m], TABLE3_TOLERANCE[m], relative=True
        )
        for m in ("drr", "csfq", "fred")
    ]
    rows += [
        Row.at_most(f"{label[m]}: TCP packets per 100 s, mean", TABLE3[m][0], means[m], TABLE3_STARVED)
        for m in ("red", "droptail")
    ]
    rows.append(
        _ordering_row(
            f"TCP packets per 100 s, ordering (FRED = {NAMES[fred]})",
            "FIFO < RED ≪ FRED < CSFQ < DRR",
            means,
            [["droptail"], ["red"], ["fred"], ["csfq"], ["drr"]],
            much=[False, True, False, False],
        )
    )
    notes = [
        f"Mean over {len(seeds)} seed(s) of the per-run mean and std over the 19 TCP flows; {window:.0f} s measured after {warmup:.0f} s, scaled to 100 s. Fair share: 6250 packets per 100 s.",
        f"FRED: FRED-1 {means['fred-1']:.0f}, FRED-2 {means['fred-2']:.0f} packets; the better ({NAMES[fred]}) is checked.",
    ]
    figure = _bar_figure(
        "CSFQ Table 3: TCP packets per 100 s (mean ± std over 19 flows), 100 ms link",
        "packets per TCP flow per 100 s",
        table,
        "mean",
        "paper_mean",
        err="std",
    )
    return Reproduction(
        rows=rows, figure=figure, data={"table3": table, "table3_runs": runs}, show=["table3"], notes=notes
    )


# ---------------------------------------------------------------------------------------
# Table 4 (§3.6): relabelling across two congested links (Fig. 8).

# Table 4 (Mbps on link 2, averaged over 10 s).
TABLE4 = {"udp": (3.36, 3.32, 3.28), "tcp": (3.43, 3.13, 3.43)}
# "the fair shares of flows 1 and 2 are less on link 2 (3.33 Mbps) than on link 1 (5 Mbps)".
FAIR_LINK2 = 10 / 3
# reproduction-targets (csfq-table4): UDP ±5 % (the paper's three UDPs lie within ±1.5 %,
# one run); TCP ±15 % ("despite the TCP burstiness", the paper's own spread is ±6 %).
TABLE4_TOLERANCE = {"udp": 0.05, "tcp": 0.15}
# Derived, not in the paper: without relabelling, flows 1 and 2 reach link 2 at 5 Mbps but
# still labelled 10 Mbps, like flow 3, so link 2 drops all three alike and forwards each
# in proportion to its arrival rate: 10 x 5/20 = 2.5 Mbps for flows 1 and 2, 5 for flow 3.
NO_RELABEL = (2.5, 2.5, 5.0)
CSFQ_LINKS = ("R1->R2", "R2->R3")


def relabel_scenario(traffic: str, relabel: bool = True) -> Scenario:
    """scenarios/csfq-fig8-relabel.toml with its three flows UDP (as in the file) or TCP,
    and CSFQ's relabelling on or off on both links."""
    scenario = aqmlab.load(aqmlab.scenarios_dir() / "csfq-fig8-relabel.toml")
    if traffic == "tcp":
        for i, flow in enumerate(scenario.get("flows")):
            scenario = scenario.with_(
                {
                    f"flows[{i}]": {
                        "name": flow["name"],
                        "type": "tcp",
                        "src": flow["src"],
                        "dst": flow["dst"],
                        "tcp": TCP,
                    }
                }
            )
    for link in CSFQ_LINKS:
        scenario = scenario.with_qdisc({**scenario.qdisc(link), "relabel": relabel}, link=link)
    return scenario


@experiment("csfq-table4", "CSFQ Table 4: relabelling, 3 UDPs or 3 TCPs through two congested links (Fig. 8)")
def table4(quick: bool) -> Reproduction:
    """CSFQ §3.6, Fig. 8 and Table 4: flows 1 and 2 cross link 1 then link 2, flow 3 only
    link 2 (10 Mbps, 1 ms each, CSFQ with §3's defaults); each flow's throughput on link
    2 averaged over 10 s should be near its 3.33 Mbps fair share, three UDPs at 10 Mbps or
    three TCPs (scenarios/csfq-fig8-relabel.toml: 2 s warm-up, then 10 s).

    The paper reports one 10-s average; we average each flow over seeds (full: 10; quick:
    2). Ablation (derived, not in the paper): relabelling off on both links.
    """
    seeds = [1, 2] if quick else list(range(1, 11))
    records = []
    for traffic, relabel, seed in itertools.product(("udp", "tcp"), (True, False), seeds):
        goodput = aqmlab.run(relabel_scenario(traffic, relabel).with_seed(seed)).flows["goodput_bps"] / MBPS
        records += [
            {"traffic": traffic, "relabel": relabel, "seed": seed, "flow": i + 1, "mbps": v}
            for i, v in enumerate(goodput)
        ]
    runs = pd.DataFrame(records)
    mean = runs.groupby(["traffic", "relabel", "flow"])["mbps"].mean()
    rows = []
    for traffic in ("udp", "tcp"):
        for flow, paper in enumerate(TABLE4[traffic], start=1):
            ours = mean[(traffic, True, flow)]
            rows.append(
                Row.within(
                    f"{traffic.upper()} flow {flow} on link 2 (Mbps); fair share 3.33",
                    paper,
                    ours,
                    round(TABLE4_TOLERANCE[traffic] * FAIR_LINK2, 3),
                )
            )
    for flow, derived in enumerate(NO_RELABEL, start=1):
        rows.append(
            Row.within(
                f"Ablation (derived, not in the paper), relabel off: UDP flow {flow} (Mbps)",
                derived,
                mean[("udp", False, flow)],
                0.05,
                relative=True,
            )
        )
    cases = list(itertools.product(("udp", "tcp"), (True, False)))
    table = pd.DataFrame(
        [
            {
                "traffic": t.upper(),
                "relabel": "on" if r else "off",
                "paper": " / ".join(map(str, TABLE4[t])) if r else "—",
                **{f"flow{f}_mbps": round(mean[(t, r, f)], 2) for f in (1, 2, 3)},
            }
            for t, r in cases
        ]
    )
    tcp_off = [mean[("tcp", False, f)] for f in (1, 2, 3)]
    notes = [
        f"Mean over {len(seeds)} seed(s) of each flow's goodput over 10 s (2 s warm-up); tolerances are fractions of the 3.33 Mbps fair share.",
        "Relabelling off (derived): UDP flows 1 and 2 keep their 10 Mbps labels at link 2 and get 2.5 Mbps each, flow 3 gets 5. "
        f"TCP flows do not need it ({', '.join(f'{v:.2f}' for v in tcp_off)} Mbps without): two TCPs do not congest link 1, so CSFQ never relabels there.",
    ]
    return Reproduction(
        rows=rows,
        figure=_table4_figure(table),
        data={"table4": table, "table4_runs": runs},
        show=["table4"],
        notes=notes,
    )


def _table4_figure(table: pd.DataFrame):
    fig, ax = _pyplot().subplots(figsize=(7, 4))
    x = np.arange(len(table))
    for i, flow in enumerate((1, 2, 3)):
        ax.bar(x + (i - 1) * 0.25, table[f"flow{flow}_mbps"], width=0.25, label=f"flow {flow}")
    ax.axhline(FAIR_LINK2, color="black", linestyle="--", linewidth=1, label="fair share 3.33 Mbps")
    ax.set_xticks(x)
    ax.set_xticklabels([f"{t}\nrelabel {r}" for t, r in zip(table["traffic"], table["relabel"])])
    ax.set_ylabel("throughput on link 2 (Mbps)")
    ax.set_title("CSFQ Table 4 (Fig. 8): throughput on link 2, with and without relabelling", fontsize=10)
    ax.legend(fontsize=8)
    fig.tight_layout()
    return fig
