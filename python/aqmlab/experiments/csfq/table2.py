"""CSFQ §3.4, Table 2: mean and std of the transfer time of 60 short TCP transfers
sharing a 10 Mbps link (1 ms, 64 KB, K = 100 ms) with a UDP flow at 10 Mbps.

Workload: 60 TCP flows, each one transfer (`tcp.packets`) of a Pareto size (mean 20
packets, shape 1.06) starting at exponential inter-arrival times; sizes and starts are
drawn in Python from a numpy Generator seeded with the run's seed. The transfer time
is from the flow's start until its last packet is acknowledged (Results.transfers).

Inter-arrival mean: printed "0.05 ms". We grade the 0.05 s reading: a 0.05 ms mean is
1/16 of one packet's transmission time at 10 Mbps, so the 60 transfers the text describes
as arriving at exponentially distributed times would all start within about 3 ms, a single
burst in which the spacing the text specifies plays no part; 0.05 s spreads them over
about 3 s. The printed reading is run too, and its rows are informative (`.alt_printed_gap`).

Initial RTO: unstated. We grade the paper's simulator's default, ns-2's `rtxcur_init_ 6.0`
of 1997–2006 (the `ns2` profile of `csfq.TCP`); RFC 1122/2988's 3 s (aqmlab's `rfc`
default) was our first setting and its rows are informative (`.alt_rto3s`).

Statistic: Pareto(1.06) sizes have infinite variance, so the mean of 60 transfer times
depends on the few largest transfers drawn (per-seed means differ by an order of
magnitude). The paper reports one sample of 60; we report the median over seeds
(full: 20; quick: 4) of each run's mean and std, i.e. what a single run typically
shows. Runs last 200 s (full) so that every transfer finishes.

Tolerances (reproduction-targets, csfq-table2): RED 592 ms and FIFO 840 ms ±50 % (a
single heavy-tailed sample); "CSFQ performs worse than FRED ... but still almost one
order of magnitude better than FIFO and RED": CSFQ at most 0.2 x our RED.

Failing rows: the FIFO mean (full and quick) misses the paper's ±50 %: its reason, measured
(timeouts of the transfers, spread of the per-seed means), is printed with the rows. ns-2.35
running this scenario (exported, the same 20 seeds' transfers; docs/ns2-reproductions.md) misses
it too, with ours inside its median's 95 % interval: the row's verdict is `ns2`. The RED
mean failed in quick mode too (949 ms) until issue 9's TCP fix (a timeout in recovery sets
ssthresh = max(FlightSize/2, 2), RFC 5681 eq. 4); it is 798 ms since, inside 592 ms ±50 %.
Under FIFO and RED most of the time is spent waiting for the initial RTO of transfers whose
first packet was dropped, so those means scale with it.

Setup and the choices where the paper is silent: `csfq/_tables.py`.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

import aqmlab

from ...presets import THRESHOLDS
from ...results import Results
from .. import PAPER_NAMES, Reproduction, Row, RunSettings, experiment
from . import TCP, better_fred
from ._tables import ORDERING, bar_figure, mechanisms, paper_groups, single_link_scenario

# Table 2 (ms), readable rows only: "RED 5921274" and "FIFO 840 1 1695" (mean, std).
TABLE2 = {"red": (592, 1274), "droptail": (840, 1695)}
# "60 TCP transfers whose inter-arrival times are exponentially distributed with the mean
# of 0.05 ms, and the length of each transfer is drawn from a Pareto distribution with a
# mean of 20 packets (1 packet = 1 KB) and a shaping parameter of 1.06".
TRANSFERS = 60
PARETO_MEAN = 20.0
PARETO_SHAPE = 1.06
PRINTED_GAP = 0.05e-3  # s, as printed
GAP = 0.05  # s, the graded reading (module docstring)
# The initial RTO of the graded rows, the `ns2` profile's (`rtxcur_init_ 6.0`), and of the
# informative rows: RFC 1122/2988's 3 s.
INITIAL_RTO = "6s"
TCP_RTO_3S = {**TCP, "initial_rto": "3s"}
# Tolerances (module docstring): RED and FIFO ±50 %; CSFQ at most 0.2 x our RED.
TABLE2_REL = 0.5
CSFQ_VS_RED = 0.2

FULL = RunSettings(seeds=range(1, 21), duration=200.0)
QUICK = RunSettings(seeds=range(1, 5), duration=60.0)


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
        for i, (n, t) in enumerate(zip(sizes, starts, strict=True))
    ]


def transfer_metrics(results: Results) -> dict[str, float]:
    """Mean, std and median (ms) of a run's transfer times, how many did not finish (their
    time is counted as run end minus start, a lower bound), the packets moved, and the share
    of transfers that had a retransmission timeout with the mean time of the others."""
    transfers = results.transfers
    times = 1000 * (transfers["end"].fillna(results.duration) - transfers["start"])
    timeouts = results.flows.set_index("id").loc[transfers["flow"], "timeouts"].to_numpy() > 0
    return {
        "mean_ms": times.mean(),
        "std_ms": times.std(ddof=0),
        "median_ms": times.median(),
        "unfinished": int(transfers["end"].isna().sum()),
        "packets": int(transfers["packets"].sum()),
        "timed_out": float(timeouts.mean()),
        "mean_without_timeout_ms": float(times[~timeouts].mean()) if (~timeouts).any() else np.nan,
    }


def transfer_runs(seeds: Sequence[int], gap: float, duration: float, tcp: dict = TCP) -> pd.DataFrame:
    """Per seed (its own transfers) and mechanism: transfer_metrics."""
    records = []
    for seed in seeds:
        flows = [flow if flow["type"] != "tcp" else {**flow, "tcp": tcp} for flow in web_flows(seed, gap)]
        for name, qdisc in mechanisms().items():
            results = aqmlab.run(single_link_scenario(qdisc, flows, duration, seed))
            # RED's and FRED's average queue (bytes) at its highest: FRED-2 differs from FRED-1 only above max_th.
            peak = results.queue["average"].max()
            records.append({"mechanism": name, "seed": seed, **transfer_metrics(results), "peak_average_bytes": peak})
    return pd.DataFrame(records)


def typical_metrics(runs: pd.DataFrame) -> pd.DataFrame:
    """Median over seeds of each run's mean and std: what one run typically shows."""
    return runs.groupby("mechanism", sort=False).agg(
        mean_ms=("mean_ms", "median"),
        std_ms=("std_ms", "median"),
        pooled_median_ms=("median_ms", "median"),
        unfinished=("unfinished", "sum"),
    )


@experiment("csfq-table2", "CSFQ Table 2: 60 short TCP transfers (Pareto sizes) vs a 10 Mbps UDP")
def table2(quick: bool) -> Reproduction:
    settings = QUICK if quick else FULL
    runs = transfer_runs(settings.seeds, GAP, settings.duration)
    printed = transfer_runs(settings.seeds, PRINTED_GAP, settings.duration)
    rto3s = transfer_runs(settings.seeds, GAP, settings.duration, TCP_RTO_3S)
    means, fred = _typical_means(runs)
    table = _table2_frame(typical_metrics(runs))
    notes = [
        f"Median over {len(settings.seeds)} seeds of each run's mean/std over its 60 transfers; inter-arrival mean "
        f"{GAP * 1000:g} ms (printed: 0.05 ms); initial RTO {INITIAL_RTO}; {settings.duration:.0f} s runs.",
        f"FRED: FRED-1 {means['fred-1']:.0f} ms, FRED-2 {means['fred-2']:.0f} ms; the better ({PAPER_NAMES[fred]}) "
        f"is checked. The paper does not print DRR's row; ours: {means['drr']:.0f} ms.",
        "Informative rows (info): '.alt_printed_gap' with the printed 0.05 ms inter-arrival mean (all 60 transfers "
        "in the first ~3 ms), '.alt_rto3s' with a 3 s initial RTO; tables table2_as_printed, table2_rto3s.",
        fred_versions_note(runs),
    ]
    data = {
        "table2": table,
        "table2_runs": runs,
        "table2_as_printed": _table2_frame(typical_metrics(printed)),
        "table2_rto3s": _table2_frame(typical_metrics(rto3s)),
    }
    figure = bar_figure(
        f"CSFQ Table 2: mean transfer time of 60 short TCPs (median of {len(settings.seeds)} runs)",
        "mean transfer time (ms)",
        table,
        "mean_ms",
        "paper_mean_ms",
        log=True,
    )
    slow = {f"{m}.mean_time": m for m in TABLE2}
    return Reproduction(
        rows=table2_rows(means, fred) + _other_readings(printed, rto3s),
        figure=figure,
        data=data,
        show=["table2", "table2_as_printed", "table2_rto3s"],
        notes=notes,
        explain=lambda row: _slow_mean_reason(slow[row.key], runs, rto3s) if row.key in slow else None,
    )


def _other_readings(printed: pd.DataFrame, rto3s: pd.DataFrame) -> list[Row]:
    """Table 2's rows, informative, in the runs with the printed 0.05 ms inter-arrival mean and
    with a 3 s initial RTO."""
    rows = []
    for other, reading, alt in (
        (printed, "0.05 ms as printed", "alt_printed_gap"),
        (rto3s, "initial RTO 3 s", "alt_rto3s"),
    ):
        rows += [row.informative(reading, alt) for row in table2_rows(*_typical_means(other))]
    return rows


def _typical_means(runs: pd.DataFrame) -> tuple[dict[str, float], str]:
    """The typical mean transfer time (ms) by mechanism, "fred" the better FRED, and which it is."""
    means = typical_metrics(runs)["mean_ms"].to_dict()
    fred = better_fred(means, lower_is_better=True)
    return {**means, "fred": means[fred]}, fred


def _slow_mean_reason(mechanism: str, runs: pd.DataFrame, rto3s: pd.DataFrame) -> str:
    """Why `mechanism`'s typical mean misses the paper's, measured from its runs."""
    own = runs[runs["mechanism"] == mechanism]
    other = rto3s[rto3s["mechanism"] == mechanism]["mean_ms"].median()
    return (
        f"{PAPER_NAMES[mechanism]}'s per-seed means range {own['mean_ms'].min():.0f}–{own['mean_ms'].max():.0f} ms "
        f"(median {own['mean_ms'].median():.0f}); {own['timed_out'].mean():.0%} of its transfers had a retransmission "
        f"timeout, the others took {own['mean_without_timeout_ms'].median():.0f} ms (median over seeds): the mean is "
        f"the initial-RTO waits ({INITIAL_RTO}, then backed off) of transfers whose first packets meet the "
        f"buffer the UDP keeps full, over Pareto(1.06) sizes; with a 3 s initial RTO it is {other:.0f} ms."
    )


def fred_versions_note(runs: pd.DataFrame) -> str:
    """Why FRED-1 and FRED-2 coincide here (issue 9, item 14): FRED-2's two-packet buffer
    (FRED §6) replaces block A, line B and block C, which all act only while avg >= max_th."""
    by_version = runs[runs["mechanism"].isin(["fred-1", "fred-2"])].pivot(index="seed", columns="mechanism")
    identical = int((by_version["mean_ms"]["fred-1"] == by_version["mean_ms"]["fred-2"]).sum())
    peak = by_version["peak_average_bytes"].max().max()
    if peak >= THRESHOLDS["max_th"]:
        return (
            f"FRED-1 = FRED-2 in {identical} of {len(by_version)} runs; FRED's average peaked at {peak / 1000:.1f} KB."
        )
    return (
        f"FRED-1 = FRED-2 in {identical} of {len(by_version)} runs, and not by a configuration slip: FRED-2 "
        f"differs only while FRED's average is at or above max_th ({THRESHOLDS['max_th'] / 1000:g} KB), "
        f"and it peaked at {peak / 1000:.1f} KB (highest over the runs): the UDP is held to max_q = min_th "
        f"({THRESHOLDS['min_th'] / 1000:g} KB) by FRED's per-flow limit and strikes, the short "
        "transfers' windows add little, so the two-packet buffer never engages."
    )


def table2_rows(means: dict[str, float], fred: str) -> list[Row]:
    """`means`: the typical mean transfer time (ms) by mechanism, "fred" the better FRED, `fred`."""
    return [
        Row.within(
            "RED: mean transfer time (ms)",
            TABLE2["red"][0],
            means["red"],
            TABLE2_REL,
            relative=True,
            key="red.mean_time",
        ),
        Row.within(
            "FIFO: mean transfer time (ms)",
            TABLE2["droptail"][0],
            means["droptail"],
            TABLE2_REL,
            relative=True,
            key="droptail.mean_time",
        ),
        Row.at_most(
            "CSFQ: mean transfer time (ms), at most 0.2 x RED's",
            "≈ 1/10 of FIFO and RED",
            means["csfq"],
            CSFQ_VS_RED * means["red"],
            key="csfq.mean_time",
        ),
        Row.ordered(
            f"Mean transfer time, ordering (FRED = {PAPER_NAMES[fred]})",
            "FRED < CSFQ ≪ RED < FIFO",
            paper_groups(means, [["fred"], ["csfq"], ["red"], ["droptail"]]),
            relation=["<", "<<", "<"],
            digits=0,
            sort=True,
            tolerance=ORDERING,
            key="order.mean_time",
        ),
    ]


def _table2_frame(typical: pd.DataFrame) -> pd.DataFrame:
    return pd.DataFrame(
        {
            "mechanism": [PAPER_NAMES[m] for m in typical.index],
            "paper_mean_ms": [TABLE2.get(m, (None, None))[0] for m in typical.index],
            "paper_std_ms": [TABLE2.get(m, (None, None))[1] for m in typical.index],
            "mean_ms": typical["mean_ms"].round(0).to_numpy(),
            "std_ms": typical["std_ms"].round(0).to_numpy(),
            "median_ms": typical["pooled_median_ms"].round(0).to_numpy(),
            "unfinished": typical["unfinished"].to_numpy(),
        }
    ).astype({"paper_mean_ms": "Float64", "paper_std_ms": "Float64"})
