"""RFC 7928 §2's metrics of one run, as `characterize` keeps them for a cell (a test's case under
one mechanism). Every number covers the measurement window [warmup, duration] and says whose it
is: `groups` per flow group (a `[[flows]]` entry), the rest all flows together.

- goodput (§2.5): data bytes delivered in the window, per second;
- loss rate (§2.3): packets dropped of those sent in the window, by every link; ECN marks
  (§4.5) at the bottleneck in the window;
- queueing delay (§2.2): each packet's sojourn in the bottleneck's queue (arrival to start of
  transmission, the core's per-packet measurement; docs/scenario.md "Queueing delay"): per
  group its median, 99th percentile and mean; for all flows the mean (weighted by packets) and,
  with one group, its quantiles;
- jitter (§2.4): the 99th percentile less the median of that delay, per group;
- flow completion time (§2.1): each finished transfer's end less its start, per group;
- loss synchronisation (§2.6), where the case records drops: the bottleneck's drops in the window
  fall into congestion events (a drop within one minimum RTT of the previous one is in the same
  event); the synchronisation rate is the mean, over events, of the fraction of the flows that
  lost a packet in it (Hassayoun and Ros's global synchronisation rate: 1/N when each event hits
  one flow of N, 1 when every event hits all);
- §2.7's delay–goodput trade-off: all flows' goodput and mean queueing delay in each interval
  of K × the minimum RTT that lies in the window (the throughput bins), and their 1-σ ellipse.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pandas as pd

from ..results import Results


def _ms(seconds: float) -> float:
    return float(seconds) * 1000.0


def cell_metrics(results: Results, bin_s: float, link: str = "L->R", min_rtt: float = 0.1) -> dict[str, Any]:
    """The metrics of one run whose throughput bins are `bin_s` long, its queueing delay and
    utilisation those of `link` (the results' name of the link: see the module's
    docstring), as JSON-ready numbers; NaN where a figure has no sample (a group with no packet
    through the bottleneck in the window)."""
    flows = results.flows
    bottleneck = results.link(link)
    delays = results.queue_delay_groups
    delays = delays[delays["link"] == bottleneck["id"]].set_index("group")
    transfers = results.transfers.merge(flows[["id", "group"]], left_on="flow", right_on="id")
    done = transfers.dropna(subset=["end"])
    # Transfers that finished in the window (started after the warm-up).
    done = done[done["start"] >= results.warmup]
    groups: dict[str, dict[str, Any]] = {}
    for group, members in flows.groupby("group", sort=False):
        sent = members["window_sent_packets"].sum()
        row = delays.loc[group] if group in delays.index else None
        times = (done.loc[done["group"] == group, "end"] - done.loc[done["group"] == group, "start"]).tolist()
        groups[str(group)] = {
            "flows": len(members),
            "goodput_bps": float(members["goodput_bps"].sum()),
            "fair_share_bps": float(members["fair_share_bps"].sum()),
            "loss_rate": float(members["window_dropped_packets"].sum() / sent) if sent else math.nan,
            "packets": int(row["packets"]) if row is not None else 0,
            "delay_median_ms": _ms(row["median"]) if row is not None else math.nan,
            "delay_p99_ms": _ms(row["p99"]) if row is not None else math.nan,
            "delay_mean_ms": _ms(row["mean"]) if row is not None else math.nan,
            "jitter_ms": _ms(row["p99"] - row["median"]) if row is not None else math.nan,
            "fct_s": [round(float(t), 6) for t in times],
        }
    packets = delays["packets"].sum()
    marks = results.marks
    sent = flows["window_sent_packets"].sum()
    one = next(iter(groups.values())) if len(groups) == 1 else None
    all_fct = [t for g in groups.values() for t in g["fct_s"]]
    series = delay_goodput_series(results, bottleneck["id"], bin_s)
    return {
        "window_s": [results.warmup, results.duration],
        "goodput_bps": float(flows["goodput_bps"].sum()),
        "utilisation": float(bottleneck["utilisation"]),
        "loss_rate": float(flows["window_dropped_packets"].sum() / sent) if sent else math.nan,
        "ecn_marks": int(marks.loc[marks["link"] == bottleneck["id"], "window_count"].sum()),
        "delay_mean_ms": _ms((delays["mean"] * delays["packets"]).sum() / packets) if packets else math.nan,
        "delay_median_ms": one["delay_median_ms"] if one else math.nan,
        "delay_p99_ms": one["delay_p99_ms"] if one else math.nan,
        "fct_median_s": float(np.median(all_fct)) if all_fct else math.nan,
        "transfers_done": len(all_fct),
        "jain_index": float(results.summary(wall_time=False)["jain_index"]),
        "synchronisation": synchronisation(results, bottleneck["id"], min_rtt),
        "groups": groups,
        "series": series,
        "ellipse": ellipse(series["delay_ms"], series["goodput_bps"]),
    }


def synchronisation(results: Results, link: int, min_rtt: float) -> dict[str, Any] | None:
    """The loss synchronisation of the flows at `link` (see the module's docstring): the number of
    congestion events and the synchronisation rate; None without recorded drops or flows."""
    drops = results.drop_log
    drops = drops[(drops["link"] == link) & (drops["time"] >= results.warmup)].sort_values("time", kind="stable")
    flows = len(results.flows)
    if drops.empty or flows == 0:
        return None
    # A new event starts where the gap to the previous drop exceeds one minimum RTT.
    event = (drops["time"].diff().fillna(math.inf) > min_rtt).cumsum()
    hit = drops.groupby(event)["flow"].nunique() / flows
    return {"events": int(len(hit)), "rate": float(hit.mean())}


def delay_goodput_series(results: Results, link: int, bin_s: float) -> dict[str, list[float]]:
    """All flows' goodput (bit/s) and packets' mean queueing delay at `link` (ms) in each
    throughput bin (K × min RTT) within the window that carried a packet through it."""
    throughput = results.throughput
    goodput = throughput.groupby("time")["bps"].sum()
    series = results.queue_delay_series
    series = series[series["link"] == link]
    weighted = (series["mean"] * series["packets"]).groupby(series["time"]).sum()
    packets = series.groupby("time")["packets"].sum()
    delay = weighted / packets
    # Whole bins inside the window only.
    times = [t for t in delay.index if t >= results.warmup - 1e-9 and t + bin_s <= results.duration + 1e-9]
    joined = pd.DataFrame({"delay": delay.reindex(times), "goodput": goodput.reindex(times).fillna(0.0)})
    return {
        "time_s": [round(float(t), 6) for t in joined.index],
        "delay_ms": [round(_ms(d), 6) for d in joined["delay"]],
        "goodput_bps": [round(float(g), 3) for g in joined["goodput"]],
    }


def ellipse(delay_ms: list[float], goodput_bps: list[float]) -> dict[str, Any] | None:
    """The 1-σ ellipse of the (delay, goodput) samples (RFC 7928 §2.7, as the ns-3 suite draws it
    from np.cov): the centre, the semi-axes √λ of the covariance's eigenvalues λ (goodput in
    Mbit/s) and the angle of the first axis (degrees, from the delay axis). None under 3 samples."""
    if len(delay_ms) < 3:
        return None
    points = np.array([delay_ms, np.asarray(goodput_bps) / 1e6])
    cov = np.cov(points)
    values, vectors = np.linalg.eigh(cov)
    order = values.argsort()[::-1]
    values, vectors = values[order], vectors[:, order]
    return {
        "delay_ms": float(points[0].mean()),
        "goodput_mbps": float(points[1].mean()),
        "semi_axes": [float(math.sqrt(max(v, 0.0))) for v in values],
        "angle_deg": float(math.degrees(math.atan2(vectors[1, 0], vectors[0, 0]))),
    }
