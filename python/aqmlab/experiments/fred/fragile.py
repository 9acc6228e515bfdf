"""FRED §3.1 and §5, Fig. 1, Tables 1–4: a window-limited 36 ms-RTT TCP (the "fragile"
flow) against four 6 ms-RTT TCPs on 45 Mbps, buffer 16…56 packets, RED vs FRED.

Graded with NetBSD 1.2's congestion avoidance (`fred.NETBSD_TCP`); every row is repeated
with 4.4BSD-Lite's extra maxseg/8 per ACK (`fred.BSD44_TCP`) as an informative
`.alt_bsd44` row.

Setup and the choices where the paper is silent: `fred/__init__.py`.

Table 4 at BS 48 and 56 (paper 16 %, 15 %; ours 20.8 %, 21.2 %, seeds 19.2–23.6 %) and its
decline from BS 40 stay open (issue 27): ours holds the fragile flow at the 20 % fair share at
every BS from 24 to 56, which §5's text says of Table 4 ("close to the 20% fair share, except
when the buffer size is only 16 packets"), but the text also calls the table's 15–16 % close,
so it does not settle the rows, and the paper gives no cause for the decline. Ours decides
through FRED's per-flow cap (99 % of its drops; the average queue stays below min_th, so the
random-drop path hardly acts); no arithmetic of the paper's and no named gap of ours explains
the difference.
"""

from __future__ import annotations

import itertools
from typing import Any

import numpy as np
import pandas as pd

import aqmlab

from ...plots import subplots
from ...results import Results
from .. import PAPER_NAMES, Judgement, Reproduction, Row, RunSettings, Verdict, experiment, run_seeds
from . import BSD44_TCP, NETBSD_TCP, PAYLOAD_BYTES, WINDOW_64KB, WIRE_BYTES, gateway, pct, tcp_flow

BUFFERS = (16, 24, 32, 40, 48, 56)
LINK_BPS = 45e6
FRAGILE_RTT = 0.036
FRAGILE_WINDOW = 16
# §3.1: "The long RTT connection can send no more than 16*512 bytes each 0.036 seconds, or
# 4.05% of the bottleneck link capacity": 16·512·8 / 0.036 s = 1.820 Mbps of payload, 4.045%
# of 45 Mbps. In wire bytes the same window is 16·636·8 / 0.036 s; BW/MAX is the ratio of
# the fragile flow's rate to this bound in either unit.
FRAGILE_MAX_BPS = FRAGILE_WINDOW * WIRE_BYTES * 8 / FRAGILE_RTT
FRAGILE_MAX_PAYLOAD_SHARE = FRAGILE_WINDOW * PAYLOAD_BYTES * 8 / FRAGILE_RTT / LINK_BPS

# The paper's tables, one value per buffer size of BUFFERS (percent, or a plain ratio).
# Table 1 (RED, window 16): BW/MAX, BW%/DROP%, fragile's and R-1's loss rates.
TABLE1 = {
    "bw_max": (45, 67, 69, 70, 70, 71),
    "bw_drop": (0.456, 1.05, 1.03, 0.982, 0.911, 0.940),
    "fragile_loss": (1.13, 0.55, 0.42, 0.40, 0.37, 0.32),
    "robust_loss": (0.49, 0.44, 0.40, 0.38, 0.35, 0.33),
}
# Table 2 (RED, window 64 KB): BW/Link Rate, BW%/DROP%, loss rates.
TABLE2 = {
    "bw_link": (2.7, 3.9, 4.3, 4.5, 4.6, 4.6),
    "bw_drop": (0.522, 0.989, 1.01, 1.04, 0.995, 0.907),
    "fragile_loss": (0.97, 0.51, 0.43, 0.46, 0.37, 0.39),
    "robust_loss": (0.51, 0.45, 0.40, 0.37, 0.35, 0.34),
}
# Table 3 (FRED, window 16): BW/MAX, loss rates.
TABLE3 = {
    "bw_max": (99, 98, 98, 98, 97, 97),
    "fragile_loss": (0.04, 0.01, 0.00, 0.00, 0.00, 0.00),
    "robust_loss": (0.98, 0.85, 0.93, 0.88, 0.86, 0.76),
}
# Table 4 (FRED, window 64 KB): BW/Link Rate, loss rates.
TABLE4 = {
    "bw_link": (6.9, 19, 20, 20, 16, 15),
    "fragile_loss": (0.26, 0.08, 0.06, 0.07, 0.05, 0.04),
    "robust_loss": (1.35, 1.18, 1.21, 1.06, 0.86, 0.75),
}
# §3.1: alone, the 64 KB-window connection "is able to sustain 39% of the link capacity".
STANDALONE_64KB_PCT = 39.0

# Tolerances (reproduction-targets' bands for these tables). The paper's values are means
# of 10 runs of which only the last 25 s count; the fragile flow loses a few tens of
# packets per run, so its loss rate and BW%/DROP% carry ±15–20% sampling noise, and our
# packet model differs from the cell-level switch in the details of bursts. Hence:
BW_MAX_POINTS = 10  # Table 1 BW/MAX, BS ≥ 24: ±10 points
BW_DROP_BAND = (0.8, 1.2)  # BW%/DROP% "close to 1.0", BS ≥ 24
RED_LOSS_REL = 0.40  # RED loss rates, relative
RED_BW_LINK_REL = 0.40  # Table 2 BW/link, relative
RED_BW_LINK_MAX = 8.0  # Table 2: far below the 20% fair share at every BS
FRED_BW_MAX_MIN = 90.0  # Table 3: "as if there were no competition"
FRED_FRAGILE_LOSS_MAX = 0.1  # Table 3: fragile loss ≈ 0 (percent)
FRED_ROBUST_LOSS_REL = 0.50  # Table 3 robust loss, relative
# Table 4, BS 24–56 (20, 16, 15% at BS 40/48/56): the band has to resolve the paper's own
# decline from BS 40 to 56 (20 → 15, a quarter of the value), so ±25% of each value; the
# paper's 10-run means of ~10^4 packets each carry a few % of sampling noise, and the
# packet-vs-cell model difference is what the rest allows. The decline is an ordering row.
FRED_BW_LINK_REL = 0.25
STANDALONE_POINTS = 3.0  # the paper's 39% vs 40.2% for a 36 ms RTT

# §3.1: "10 simulations, each for 50 simulated seconds"; the second half is measured.
FULL = RunSettings(seeds=range(1, 11), duration=50.0)
QUICK = RunSettings(seeds=(1,), duration=30.0)


def fragile_scenario(
    mechanism: str,
    buffer: int,
    window: int,
    seed: int = 1,
    duration: float = 50.0,
    tcp: dict[str, Any] = NETBSD_TCP,
) -> dict[str, Any]:
    """Fig. 1: the fragile TCP (flow 0, RTT 36 ms, `window` packets) and four robust TCPs
    (RTT 6 ms, 64 KB windows) through a RED or FRED gateway of `buffer` packets with
    min_th = BS/4, max_th = BS/2, all TCPs with settings `tcp`. §3.1: every TCP starts at a
    random time in the first 5 s; only the second half of the run is measured."""
    return {
        "name": f"fred-fig1-{mechanism}-bs{buffer}-w{window}",
        "simulation": {"duration": duration, "warmup": duration / 2, "seed": seed, "sample_interval": 0.01},
        "topology": {
            "type": "dumbbell",
            "bottleneck": {
                "rate": LINK_BPS,
                "delay": "2ms",
                "qdisc": gateway(mechanism, buffer, buffer / 4, buffer / 2),
            },
            "access_rate": "100Mbps",
            "access_delay": "1ms",
            "sink_delay": 0,
        },
        "flows": [
            {
                "name": "fragile",
                **tcp_flow(tcp, window=window),
                "access_rate": LINK_BPS,
                "access_delay": "16ms",
                "start_jitter": "5s",
            },
            {"name": "robust", **tcp_flow(tcp), "count": 4, "start_jitter": "5s"},
        ],
    }


def standalone_scenario(duration: float = 20.0, tcp: dict[str, Any] = NETBSD_TCP) -> dict[str, Any]:
    """§3.1: the 64 KB-window long-delay connection alone (no competing traffic)."""
    scenario = fragile_scenario("red", 56, WINDOW_64KB, seed=1, duration=duration, tcp=tcp)
    scenario["flows"] = scenario["flows"][:1]
    scenario["flows"][0]["start_jitter"] = 0
    return scenario


def fragile_metrics(results: Results) -> dict[str, float]:
    """Per-run measures of Tables 1–4 over the measurement window (percent where the paper has %)."""
    flows = results.flows
    goodput = flows["goodput_bps"].to_numpy()
    drops = flows["window_dropped_packets"].to_numpy()
    queue = results.queue
    window = queue[queue["time"] >= results.warmup]
    tail = results.drops[results.drops["reason"].isin(["overflow", "forced"])]
    # Every flow's drops in the measured window by reason (what decided the run).
    reasons = results.drops.groupby("reason")["window_count"].sum()
    return {
        "bw_max": pct(goodput[0] / FRAGILE_MAX_BPS),
        "bw_link": pct(goodput[0] / LINK_BPS),
        # Share of the bandwidth over share of the drops; undefined without drops.
        "bw_drop": (goodput[0] / goodput.sum()) / (drops[0] / drops.sum()) if drops[0] > 0 else np.nan,
        "fragile_loss": pct(flows["loss_rate"].iloc[0]),
        # "R-1": one robust connection; the four are alike, so we average them (less noise).
        "robust_loss": pct(flows["loss_rate"].iloc[1:].mean()),
        "utilisation": pct(results.link("L->R")["utilisation"]),
        # Drops of the fragile flow at a full buffer (overflow) or above max_th (forced), percent.
        "fragile_tail_drops": pct(tail[tail["flow"] == 0]["window_count"].sum() / drops[0]) if drops[0] > 0 else np.nan,
        "avg_over_min_th": window["average"].mean() / results.scenario.get("topology.bottleneck.qdisc.min_th"),
        "fragile_drops": drops[0],
        **{f"drops.{reason}": reasons.get(reason, 0) for reason in DROP_REASONS},
    }


DROP_REASONS = ("early", "forced", "overflow", "per_flow_limit")


@experiment("fred-fragile", "FRED Tables 1-4: a window-limited 36 ms TCP vs four 6 ms TCPs, RED vs FRED, BS 16-56")
def fragile(quick: bool) -> Reproduction:
    settings = QUICK if quick else FULL
    runs, means, rows = _reading(settings, NETBSD_TCP)
    bsd44_runs, bsd44_means, bsd44_rows = _reading(settings, BSD44_TCP)
    rows += [row.informative("4.4BSD maxseg/8", "alt_bsd44") for row in bsd44_rows]
    red16, red64 = means.loc[("red", FRAGILE_WINDOW)], means.loc[("red", WINDOW_64KB)]
    fred16, fred64 = means.loc[("fred", FRAGILE_WINDOW)], means.loc[("fred", WINDOW_64KB)]
    tables = {
        "table1_red_w16": _paper_vs_ours(TABLE1, red16),
        "table2_red_w64k": _paper_vs_ours(TABLE2, red64),
        "table3_fred_w16": _paper_vs_ours(TABLE3, fred16),
        "table4_fred_w64k": _paper_vs_ours(TABLE4, fred64),
    }
    bsd44_tables = {
        "table1_red_w16_bsd44": _paper_vs_ours(TABLE1, bsd44_means.loc[("red", FRAGILE_WINDOW)]),
        "table4_fred_w64k_bsd44": _paper_vs_ours(TABLE4, bsd44_means.loc[("fred", WINDOW_64KB)]),
    }
    notes = _fragile_notes(settings, means) + [
        "Informative rows (info, '.alt_bsd44'): every row again with 4.4BSD-Lite's extra maxseg/8 per ACK in "
        "congestion avoidance; tables table1_red_w16_bsd44, table4_fred_w64k_bsd44 (all cells in runs_bsd44)."
    ]
    reasons, judged = _failure_reasons(settings, means)
    return Reproduction(
        rows=rows,
        figure=_fragile_figure(means),
        data={**tables, **bsd44_tables, "runs": runs, "runs_bsd44": bsd44_runs},
        show=list(tables) + list(bsd44_tables),
        notes=notes,
        explain=lambda row: reasons.get(row.key),
        judged=judged,
    )


def _reading(settings: RunSettings, tcp: dict[str, Any]) -> tuple[pd.DataFrame, pd.DataFrame, list[Row]]:
    """Every run with TCP settings `tcp`: the runs (fragile_runs), their means by mechanism,
    window and buffer, and the rows of Tables 1–4 and §3.1's standalone run."""
    runs = fragile_runs(settings, tcp)
    means = runs.groupby(["mechanism", "window", "buffer"]).mean(numeric_only=True).drop(columns="seed")
    standalone = pct(aqmlab.run(standalone_scenario(tcp=tcp)).flows["goodput_bps"].iloc[0] / LINK_BPS)
    red16, red64 = means.loc[("red", FRAGILE_WINDOW)], means.loc[("red", WINDOW_64KB)]
    fred16, fred64 = means.loc[("fred", FRAGILE_WINDOW)], means.loc[("fred", WINDOW_64KB)]
    rows = [
        *_table1_rows(red16),
        *_table2_rows(red64),
        Row.within(
            "§3.1 64 KB window alone: BW/link (%)",
            STANDALONE_64KB_PCT,
            standalone,
            STANDALONE_POINTS,
            key="s3_1.w64k.alone.bw_link",
        ),
        *_table3_rows(fred16),
        *_table4_rows(fred64),
        *_fred_vs_red_rows(red16, fred16, red64, fred64),
    ]
    return runs, means, rows


def fragile_runs(settings: RunSettings, tcp: dict[str, Any] = NETBSD_TCP) -> pd.DataFrame:
    """One row per run: mechanism, window, buffer, seed and `fragile_metrics`, TCP settings `tcp`."""
    records = []
    for mechanism, window, buffer in itertools.product(("red", "fred"), (FRAGILE_WINDOW, WINDOW_64KB), BUFFERS):
        scenario = fragile_scenario(mechanism, buffer, window, duration=settings.duration, tcp=tcp)
        for seed, results in zip(settings.seeds, run_seeds(scenario, settings.seeds), strict=True):
            labels = {"mechanism": mechanism, "window": window, "buffer": buffer, "seed": seed}
            records.append({**labels, **fragile_metrics(results)})
    return pd.DataFrame(records)


def _table1_rows(red16: pd.DataFrame) -> list[Row]:
    """Table 1 against RED at window 16 (`red16`: our means by buffer)."""
    bw_max, bw_drop = red16["bw_max"].tolist(), red16["bw_drop"].tolist()
    rows = []
    for i, bs in enumerate(BUFFERS):
        if bs > 16:
            rows.append(
                Row.within(
                    f"T1 RED w16 BS={bs}: BW/MAX (%)",
                    TABLE1["bw_max"][i],
                    bw_max[i],
                    BW_MAX_POINTS,
                    key=f"t1.red.w16.bs{bs}.bw_max",
                )
            )
            rows.append(
                Row.between(
                    f"T1 RED w16 BS={bs}: BW%/DROP%",
                    TABLE1["bw_drop"][i],
                    bw_drop[i],
                    *BW_DROP_BAND,
                    key=f"t1.red.w16.bs{bs}.bw_drop",
                )
            )
    rows.append(
        Row.ordered(
            "ordering: T1 RED w16 BW/MAX, BS=16 < BS=24 (tail-drop regime)",
            "45 < 67",
            bw_max[:2],
            digits=0,
            tolerance="order",
            key="order.t1.red.w16.bw_max.bs16_lt_bs24",
        )
    )
    # §3.1: "the long delay connection suffered more loss than others when the buffer sizes are small".
    rows.append(
        Row.at_most(
            "T1 RED w16 BS=16: BW%/DROP% below 1",
            TABLE1["bw_drop"][0],
            bw_drop[0],
            1.0,
            key="t1.red.w16.bs16.bw_drop_below_1",
        )
    )
    rows += _loss_rows("T1 RED w16", "t1.red.w16", TABLE1, red16)
    return rows


def _table2_rows(red64: pd.DataFrame) -> list[Row]:
    """Table 2 against RED at window 64 KB (`red64`: our means by buffer)."""
    bw_link, bw_drop = red64["bw_link"].tolist(), red64["bw_drop"].tolist()
    rows = []
    for i, bs in enumerate(BUFFERS):
        rows.append(
            Row.within(
                f"T2 RED w64K BS={bs}: BW/link (%)",
                TABLE2["bw_link"][i],
                bw_link[i],
                RED_BW_LINK_REL,
                relative=True,
                key=f"t2.red.w64k.bs{bs}.bw_link",
            )
        )
        if bs > 16:
            rows.append(
                Row.between(
                    f"T2 RED w64K BS={bs}: BW%/DROP%",
                    TABLE2["bw_drop"][i],
                    bw_drop[i],
                    *BW_DROP_BAND,
                    key=f"t2.red.w64k.bs{bs}.bw_drop",
                )
            )
    rows.append(
        Row.at_most(
            "T2 RED w64K: largest BW/link over BS (%), fair share 20",
            max(TABLE2["bw_link"]),
            max(bw_link),
            RED_BW_LINK_MAX,
            key="t2.red.w64k.bw_link_max",
        )
    )
    rows += _loss_rows("T2 RED w64K", "t2.red.w64k", TABLE2, red64)
    return rows


def _table3_rows(fred16: pd.DataFrame) -> list[Row]:
    """Table 3 against FRED at window 16 (`fred16`: our means by buffer)."""
    bw_max, fragile_loss, robust_loss = (fred16[m].tolist() for m in ("bw_max", "fragile_loss", "robust_loss"))
    rows = []
    for i, bs in enumerate(BUFFERS):
        key = f"t3.fred.w16.bs{bs}"
        rows.append(
            Row.at_least(
                f"T3 FRED w16 BS={bs}: BW/MAX (%)", TABLE3["bw_max"][i], bw_max[i], FRED_BW_MAX_MIN, key=f"{key}.bw_max"
            )
        )
        rows.append(
            Row.at_most(
                f"T3 FRED w16 BS={bs}: fragile loss (%)",
                TABLE3["fragile_loss"][i],
                fragile_loss[i],
                FRED_FRAGILE_LOSS_MAX,
                key=f"{key}.fragile_loss",
            )
        )
        rows.append(
            Row.within(
                f"T3 FRED w16 BS={bs}: robust loss (%)",
                TABLE3["robust_loss"][i],
                robust_loss[i],
                FRED_ROBUST_LOSS_REL,
                relative=True,
                key=f"{key}.robust_loss",
            )
        )
    return rows


def _table4_rows(fred64: pd.DataFrame) -> list[Row]:
    """Table 4 against FRED at window 64 KB (`fred64`: our means by buffer)."""
    bw_link, fragile_loss, robust_loss = (fred64[m].tolist() for m in ("bw_link", "fragile_loss", "robust_loss"))
    rows = []
    for i, bs in enumerate(BUFFERS):
        if bs > 16:
            rows.append(
                Row.within(
                    f"T4 FRED w64K BS={bs}: BW/link (%)",
                    TABLE4["bw_link"][i],
                    bw_link[i],
                    FRED_BW_LINK_REL,
                    relative=True,
                    key=f"t4.fred.w64k.bs{bs}.bw_link",
                )
            )
        # §5: the fragile flow's loss rates "are much less than others due to its moderate buffer consumption".
        rows.append(
            Row.ordered(
                f"ordering: T4 FRED w64K BS={bs}: fragile loss < robust loss (%)",
                f"{TABLE4['fragile_loss'][i]} < {TABLE4['robust_loss'][i]}",
                [fragile_loss[i], robust_loss[i]],
                digits=3,
                tolerance="order",
                key=f"order.t4.fred.w64k.bs{bs}.fragile_lt_robust_loss",
            )
        )
    # §5: "except when the buffer size is only 16 packets. In that case, FRED degrades to tail-dropping".
    rows.append(
        Row.ordered(
            "ordering: T4 FRED w64K BW/link lowest at BS=16",
            "6.9 lowest",
            [bw_link[0], bw_link[1:]],
            ours=f"{bw_link[0]:.1f} (others ≥ {min(bw_link[1:]):.1f})",
            tolerance="order",
            key="order.t4.fred.w64k.bw_link.lowest_at_bs16",
        )
    )
    # Table 4: the share declines at the largest buffers, 20% at BS=40 to 15% at BS=56.
    rows.append(
        Row.ordered(
            "ordering: T4 FRED w64K BW/link, BS=40 > BS=56 (%)",
            f"{TABLE4['bw_link'][3]} > {TABLE4['bw_link'][5]}",
            [bw_link[3], bw_link[5]],
            relation=">",
            digits=1,
            tolerance="order",
            key="order.t4.fred.w64k.bw_link.bs40_gt_bs56",
        )
    )
    return rows


def _loss_rows(label: str, key: str, paper: dict[str, tuple], ours: pd.DataFrame) -> list[Row]:
    """RED's loss rates (Tables 1, 2) against the paper's, within RED_LOSS_REL."""
    losses = {who: ours[f"{who}_loss"].tolist() for who in ("fragile", "robust")}
    rows = []
    for i, bs in enumerate(BUFFERS):
        for who, loss in losses.items():
            rows.append(
                Row.within(
                    f"{label} BS={bs}: {who} loss (%)",
                    paper[f"{who}_loss"][i],
                    loss[i],
                    RED_LOSS_REL,
                    relative=True,
                    key=f"{key}.bs{bs}.{who}_loss",
                )
            )
    return rows


def _fred_vs_red_rows(
    red16: pd.DataFrame, fred16: pd.DataFrame, red64: pd.DataFrame, fred64: pd.DataFrame
) -> list[Row]:
    """§5: FRED gives the fragile flow more than RED at every buffer size (Table 3 vs 1, 4 vs 2)."""
    red_bw_max, fred_bw_max = red16["bw_max"].tolist(), fred16["bw_max"].tolist()
    red_bw_link, fred_bw_link = red64["bw_link"].tolist(), fred64["bw_link"].tolist()
    rows = []
    for i, bs in enumerate(BUFFERS):
        rows.append(
            Row.ordered(
                f"ordering: w16 BS={bs}: FRED BW/MAX > RED (%)",
                f"{TABLE3['bw_max'][i]} > {TABLE1['bw_max'][i]}",
                [fred_bw_max[i], red_bw_max[i]],
                relation=">",
                digits=1,
                tolerance="order",
                key=f"order.w16.bs{bs}.fred_gt_red.bw_max",
            )
        )
        rows.append(
            Row.ordered(
                f"ordering: w64K BS={bs}: FRED BW/link > RED (%)",
                f"{TABLE4['bw_link'][i]} > {TABLE2['bw_link'][i]}",
                [fred_bw_link[i], red_bw_link[i]],
                relation=">",
                digits=1,
                tolerance="order",
                key=f"order.w64k.bs{bs}.fred_gt_red.bw_link",
            )
        )
    return rows


def _fragile_notes(settings: RunSettings, means: pd.DataFrame) -> list[str]:
    """How the runs were measured; RED's queue and drops at window 16, and the drop reasons of
    FRED at both windows (`means`: our means by mechanism, window, buffer)."""
    red16 = means.loc[("red", FRAGILE_WINDOW)]

    def by_buffer(cells: pd.DataFrame, measure: str, digits: int) -> str:
        return ", ".join(f"BS={bs} {cells.loc[bs, measure]:.{digits}f}" for bs in BUFFERS)

    notes = [
        f"{len(settings.seeds)} run(s) of {settings.duration:g} s per cell, the second half measured; "
        "ATM cells modelled (636-byte packets).",
        (
            f"BW/MAX divides by the 16-packet window's rate over 36 ms: {FRAGILE_MAX_BPS / 1e6:.3f} Mbps on the wire "
            f"= 16·512·8/0.036 s = {FRAGILE_MAX_PAYLOAD_SHARE:.2%} of 45 Mbps in payload (the paper's 4.05%)."
        ),
        "RED average queue / min_th (window 16), §3.1 'varied slightly about min_th': "
        + by_buffer(red16, "avg_over_min_th", 2),
        "Bottleneck utilisation % (RED, window 16): " + by_buffer(red16, "utilisation", 1),
        "Share of the fragile flow's drops that are tail drops (full buffer or avg ≥ max_th), % (RED, window 16): "
        + by_buffer(red16, "fragile_tail_drops", 0),
    ]
    for window, label in ((FRAGILE_WINDOW, "16"), (WINDOW_64KB, "64K")):
        cells = means.loc[("fred", window)]
        mix = ", ".join(f"BS={bs} {_drop_mix(cells.loc[bs])}" for bs in BUFFERS)
        notes.append(f"FRED w{label}, all flows' drops by reason (%): {mix}.")
        notes.append(
            f"FRED w{label}: utilisation % {by_buffer(cells, 'utilisation', 1)}; "
            f"average queue / min_th {by_buffer(cells, 'avg_over_min_th', 2)}."
        )
    return notes


def _drop_mix(cell: pd.Series) -> str:
    """A cell's drops by reason, percent of all its drops (e.g. "per_flow_limit 99, early 1")."""
    counts = {reason: cell[f"drops.{reason}"] for reason in DROP_REASONS}
    total = sum(counts.values())
    return " ".join(f"{reason} {pct(n / total):.0f}" for reason, n in counts.items() if n > 0) if total else "none"


def _failure_reasons(settings: RunSettings, means: pd.DataFrame) -> tuple[dict[str, str], dict[str, Judgement]]:
    """Why each per-buffer row would fail, measured from the runs (shown only for rows that do),
    and the verdicts that follow (by key: the Reproduction's `explain` and `judged`)."""
    runs = len(settings.seeds)
    reasons, judged = {}, {}
    tables = (("red", FRAGILE_WINDOW, TABLE1, "t1.red.w16"), ("red", WINDOW_64KB, TABLE2, "t2.red.w64k"))
    tables += (("fred", FRAGILE_WINDOW, TABLE3, "t3.fred.w16"), ("fred", WINDOW_64KB, TABLE4, "t4.fred.w64k"))
    for mechanism, window, table, key in tables:
        for i, bs in enumerate(BUFFERS):
            cell = means.loc[(mechanism, window, bs)]
            for measure, values in table.items():
                row_key = f"{key}.bs{bs}.{measure}"
                reasons[row_key], judgement = _cell_reason(mechanism, bs, cell, measure, values[i], runs)
                if judgement is not None:
                    judged[row_key] = judgement
    reasons["t1.red.w16.bs16.bw_drop_below_1"] = reasons["t1.red.w16.bs16.bw_drop"]
    if "t1.red.w16.bs16.bw_drop" in judged:
        judged["t1.red.w16.bs16.bw_drop_below_1"] = judged["t1.red.w16.bs16.bw_drop"]
    fred64 = means.loc[("fred", WINDOW_64KB)]
    reasons["order.t4.fred.w64k.bw_link.bs40_gt_bs56"] = (
        f"BW/link {fred64.loc[40, 'bw_link']:.1f}% at BS=40, {fred64.loc[56, 'bw_link']:.1f}% at BS=56; FRED's drops "
        f"(%) at BS=40: {_drop_mix(fred64.loc[40])}; at BS=56: {_drop_mix(fred64.loc[56])}. "
        + _per_flow_cap_note(fred64.loc[56])
    )
    return reasons, judged


# The paper's switch, which our FIFO of whole packets does not model (FRED §11.1).
SWITCH_NOT_MODELLED = (
    "not modelled: FRED §11.1's ATM switch (each 512-byte packet in 12 cells, early packet discard, RED/FRED "
    "deciding on a packet's first cell); here RED drops the fragile flow's window-sized bursts as a tail-drop queue"
)


def _cell_reason(
    mechanism: str, bs: int, cell: pd.Series, measure: str, paper: float, runs: int
) -> tuple[str, Judgement | None]:
    """The measured facts of one (mechanism, window, buffer) cell, and which of them explains a
    row of `measure` missing the paper's value: RED acting as a tail-drop queue (our defect:
    the paper's switch is not modelled), FRED acting only through its per-flow cap, too few
    drops for the band (a Poisson count of n drops varies by ±2/√n at two sigma: the paper's
    arithmetic), or none of these; with the verdict that follows where one does."""
    robust = measure == "robust_loss"
    fragile_drops = cell["fragile_drops"] * runs
    drops = sum(cell[f"drops.{reason}"] for reason in DROP_REASONS) * runs - fragile_drops if robust else fragile_drops
    tail = np.nan_to_num(cell["fragile_tail_drops"])
    noise = 2 / np.sqrt(drops) if drops > 0 else np.inf
    deviation = cell[measure] / paper - 1 if paper else np.inf
    facts = (
        f"ours {cell[measure]:.3g} vs {paper:g} ({deviation:+.0%}); {'robust flows' if robust else 'fragile flow'}: "
        f"{drops:.0f} drops over {runs} run(s); {tail:.0f}% of the fragile flow's drops at a full buffer or "
        f"avg ≥ max_th; link {cell['utilisation']:.1f}% utilised; drops (%) {_drop_mix(cell)}. "
    )
    if mechanism == "red" and not robust and tail >= 50:
        when = "as the paper says of BS=16, but more" if bs == 16 else "which the paper says of BS=16 only"
        return facts + (
            f"RED works as a tail-drop queue here ({when}): the fragile flow's window-sized bursts meet a full "
            "queue or avg ≥ max_th, so it loses more, and gets less, than in the paper."
        ), Judgement(Verdict.DEFECT, f"{SWITCH_NOT_MODELLED} ({tail:.0f}% of its drops)")
    if mechanism == "fred" and cell["drops.per_flow_limit"] >= 0.9 * sum(cell[f"drops.{r}"] for r in DROP_REASONS):
        return facts + _per_flow_cap_note(cell), None
    if mechanism == "red" and not robust and tail >= 25:
        return facts + (
            f"RED works partly as a tail-drop queue here ({tail:.0f}% of the fragile flow's drops; the paper says RED "
            "does so at BS=16 only), and tail drops take window-sized bursts of the fragile flow."
        ), Judgement(Verdict.DEFECT, f"{SWITCH_NOT_MODELLED} ({tail:.0f}% of its drops)")
    if abs(deviation) <= noise:
        return facts + (
            f"The deviation is within the ±{noise:.0%} sampling noise (2/√n) of {drops:.0f} drops: the band is "
            "narrower than the noise of so few drops."
        ), Judgement(
            Verdict.ARITHMETIC,
            f"the paper's band is narrower than the ±{noise:.0%} noise of the {drops:.0f} drops this cell has "
            f"({deviation:+.0%} off)",
        )
    return facts + (
        f"Beyond the ±{noise:.0%} sampling noise of {drops:.0f} drops and not from tail drops: a model difference "
        "not located (whole packets here, 53-byte cells in the paper's switch)."
    ), None


def _per_flow_cap_note(cell: pd.Series) -> str:
    """Whether FRED acted only through its per-flow cap (max_q = min_th, strikes) in this cell."""
    total = sum(cell[f"drops.{reason}"] for reason in DROP_REASONS)
    capped = pct(cell["drops.per_flow_limit"] / total) if total else 0.0
    if capped >= 90:
        return (
            f"{capped:.0f}% of FRED's drops are per-flow-limit drops (max_q = min_th = BS/4, strikes) and its average "
            f"queue stays at {cell['avg_over_min_th']:.2f}·min_th: its random-drop path, to which the paper credits "
            "the robust flows' losses, hardly acts, so the fragile flow's share follows the cap, not the paper's trend."
        )
    return f"Only {capped:.0f}% of FRED's drops are per-flow-limit drops; the cause is not located."


def _paper_vs_ours(paper: dict[str, tuple], ours: pd.DataFrame) -> pd.DataFrame:
    """A paper table in its own layout: one row per measure, 'paper' and 'ours' columns per BS."""
    table = []
    for metric, values in paper.items():
        row: dict[str, Any] = {"measure": metric}
        for bs, value in zip(BUFFERS, values, strict=True):
            row[f"BS{bs} paper"] = value
            row[f"BS{bs} ours"] = round(float(ours.loc[bs, metric]), 3)
        table.append(row)
    return pd.DataFrame(table)


COLOURS = {"red": "tab:red", "fred": "tab:blue"}


def _fragile_figure(means: pd.DataFrame) -> Any:
    fig, axes = subplots(1, 3, figsize=(15, 4.2))
    panels = [
        (
            axes[0],
            FRAGILE_WINDOW,
            "bw_max",
            {"red": TABLE1, "fred": TABLE3},
            "BW/MAX (% of the 16-packet window's rate)",
            "Window 16: Tables 1 and 3",
        ),
        (
            axes[1],
            WINDOW_64KB,
            "bw_link",
            {"red": TABLE2, "fred": TABLE4},
            "fragile flow's share of the link (%)",
            "Window 64 KB: Tables 2 and 4",
        ),
    ]
    for ax, window, metric, paper, ylabel, title in panels:
        for mechanism, table in paper.items():
            name = PAPER_NAMES[mechanism]
            ours = [means.loc[(mechanism, window, bs), metric] for bs in BUFFERS]
            ax.plot(BUFFERS, ours, "o-", color=COLOURS[mechanism], label=f"{name} ours")
            ax.plot(BUFFERS, table[metric], "s--", color=COLOURS[mechanism], alpha=0.5, label=f"{name} paper")
        ax.set(xlabel="buffer size BS (packets)", ylabel=ylabel, title=title, xticks=BUFFERS)
        ax.legend(fontsize=8)
    axes[1].axhline(20, color="gray", linestyle=":", linewidth=1)
    axes[1].annotate("fair share", (BUFFERS[0], 20), fontsize=8, color="gray", va="bottom")
    _loss_panel(axes[2], means)
    fig.suptitle("FRED §3.1/§5: a window-limited 36 ms TCP vs four 6 ms TCPs on 45 Mbps")
    fig.tight_layout()
    return fig


def _loss_panel(ax: Any, means: pd.DataFrame) -> None:
    """Window 16: both flows' loss rates under RED and FRED, ours solid, the paper's dashed."""
    for mechanism, table in (("red", TABLE1), ("fred", TABLE3)):
        for who, style in (("fragile_loss", "o-"), ("robust_loss", "^-")):
            ax.plot(
                BUFFERS,
                [means.loc[(mechanism, FRAGILE_WINDOW, bs), who] for bs in BUFFERS],
                style,
                color=COLOURS[mechanism],
                label=f"{PAPER_NAMES[mechanism]} {who.split('_')[0]} ours",
            )
            ax.plot(BUFFERS, table[who], style.replace("-", "--"), color=COLOURS[mechanism], alpha=0.4)
    ax.set(
        xlabel="buffer size BS (packets)",
        ylabel="loss rate (%)",
        title="Window 16: loss rates (dashed: paper)",
        xticks=BUFFERS,
    )
    ax.legend(fontsize=7)
