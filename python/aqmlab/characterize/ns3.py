"""The ns-3 AQM Evaluation Suite's numbers for the cells it shares with `characterize`
(`ns3_reference.json`, recorded by tools/ns3_aqm_eval/ with ns-3.44: its header says which
suite commit and which command), and whether ours agree with them.

The suite runs RED, CoDel and PIE with the settings network.py gives them, in §5.1.1, §5.3.1,
§5.3.2, §6 and §8.2.2–8.2.4. It was recorded twice: as the suite runs by default, where the
bottleneck device's own 100-packet FIFO sits under the AQM and holds the queue (the AQM sees
almost none of it), and with byte queue limits (`--isBql=true`), where the AQM holds the queue as
aqmlab's bottleneck does, which has no second queue under its discipline. Agreement is graded
against the second, the like-for-like one; the first is shown beside it.

Grading (chosen before any comparison was seen): our mean over `OUR_SEEDS` and ns-3's over its
seeds agree when they differ by at most twice the standard error of the difference, and never by
less than the two measurements' resolution: 1 % of goodput (wire bytes, ns-3's 752-byte TCP
packets against our 750) and 1 ms + 2 % of delay (our histograms' 1 % buckets, ns-3's trace
timestamps).
"""

from __future__ import annotations

import functools
import json
import math
import statistics
from collections.abc import Sequence
from pathlib import Path
from typing import Any

REFERENCE = Path(__file__).with_name("ns3_reference.json")
# The mechanisms the suite runs, by our name and its.
SUITE_AQMS = {"red": "red", "codel": "codel", "pie": "pie"}
# Our seeds where ns-3 has the cell (full mode only: ns-3 ran 300 s).
OUR_SEEDS = (1, 2, 3, 4, 5)
GOODPUT_RESOLUTION = 0.01
DELAY_RESOLUTION_MS, DELAY_RESOLUTION = 1.0, 0.02
# What is compared, by our metrics' names (ns-3's are summarised under the same).
COMPARED = ("goodput_bps", "delay_median_ms", "delay_mean_ms")


@functools.cache
def reference() -> dict[str, Any] | None:
    """The recorded reference, None where it was not recorded."""
    return json.loads(REFERENCE.read_text()) if REFERENCE.is_file() else None


def _recorded(section: str, case: str, mechanism: str, bql: bool) -> dict[str, Any] | None:
    recorded = reference()
    aqm = SUITE_AQMS.get(mechanism)
    if recorded is None or aqm is None:
        return None
    for cell in recorded["cells"]:
        if (cell["section"], cell["aqm"], cell["bql"]) == (section, aqm, bql) and cell["case"] in ("", case):
            return cell
    return None


def has_cell(section: str, case: str, mechanism: str) -> bool:
    """Whether ns-3 has this test, case and mechanism."""
    return _recorded(section, case, mechanism, bql=True) is not None


def _stats(values: Sequence[float]) -> tuple[float, float]:
    """Mean and standard deviation (0 for one value)."""
    return statistics.fmean(values), statistics.stdev(values) if len(values) > 1 else 0.0


def _summarised(cell: dict[str, Any], udp: Sequence[bool]) -> dict[str, Any]:
    """ns-3's seeds of a cell whose flows are UDP where `udp` says (in the suite's order, ours):
    each compared metric's mean and standard deviation. Goodput on the wire, as ours counts it:
    ns-3 counts payload, so each flow's is scaled by its packets' wire size over their payload
    (752 B of TCP, 728 B of UDP for 698 B). Delay: the qdisc's sojourn, what the AQM controls; with
    BQL the device queue below adds `device_wait_mean_ms`."""
    seeds = cell["seeds"]
    # `wire_bytes` is the cell's one size where its flows are of one kind, the TCPs' beside UDP.
    wire = [(cell["wire_bytes_udp"] or cell["wire_bytes"]) if is_udp else cell["wire_bytes"] for is_udp in udp]
    values = {
        "goodput_bps": [
            sum(bps * size / cell["payload_bytes"] for bps, size in zip(s["goodput_bps"], wire, strict=True))
            for s in seeds
        ],
        "delay_median_ms": [s["delay_median_ms"] for s in seeds],
        "delay_mean_ms": [s["delay_mean_ms"] for s in seeds],
    }
    summary: dict[str, Any] = {
        "seeds": len(seeds),
        "wall_s": statistics.fmean(s["wall_s"] for s in seeds),
        "device_wait_mean_ms": statistics.fmean(s["device_queue_wait_mean_ms"] for s in seeds),
    }
    for name, series in values.items():
        summary[name], summary[f"{_short(name)}_sd"] = _stats(series)
    return summary


def _short(metric: str) -> str:
    return metric.removesuffix("_bps").removesuffix("_ms")


def _tolerance(metric: str, ours: tuple[float, float, int], theirs: tuple[float, float, int]) -> float:
    (our_mean, our_sd, our_n), (their_mean, their_sd, their_n) = ours, theirs
    spread = 2 * math.sqrt(our_sd**2 / our_n + their_sd**2 / their_n)
    scale = max(abs(our_mean), abs(their_mean))
    floor = GOODPUT_RESOLUTION * scale if metric == "goodput_bps" else DELAY_RESOLUTION_MS + DELAY_RESOLUTION * scale
    return max(spread, floor)


def compare(
    section: str, case: str, mechanism: str, udp: Sequence[bool], ours: Sequence[dict[str, Any] | None], quick: bool
) -> dict[str, Any] | None:
    """ns-3's cell of this test, case and mechanism (whose flows are UDP where `udp` says) beside
    ours (`ours`: our metrics for each of `OUR_SEEDS`, None where not run), graded where every
    seed of ours ran in full mode; None where ns-3 has no such cell."""
    like = _recorded(section, case, mechanism, bql=True)
    if like is None:
        return None
    recorded = reference()
    fifo = _recorded(section, case, mechanism, bql=False)
    result: dict[str, Any] = {
        "source": f"ns-3 {recorded['ns3_version']}, {recorded['suite']}",
        "bql": _summarised(like, udp),
        "device_fifo": _summarised(fifo, udp) if fifo else None,
    }
    runs = [metrics for metrics in ours if metrics is not None]
    if quick or len(runs) < len(OUR_SEEDS):
        result["graded"] = False
        result["why_not"] = "quick mode: ns-3 ran 300 s" if quick else "not every seed of ours ran"
        return result
    mine: dict[str, Any] = {"seeds": len(runs), "wall_s": statistics.fmean(m["wall_s"] for m in runs)}
    agree, tolerance = {}, {}
    for metric in COMPARED:
        values = [m[metric] for m in runs]
        if any(v is None or v != v for v in values):
            continue
        mean, sd = _stats(values)
        short = _short(metric)
        mine[metric], mine[f"{short}_sd"] = mean, sd
        theirs = (like_summary := result["bql"])[metric], like_summary[f"{short}_sd"], like_summary["seeds"]
        tolerance[metric] = _tolerance(metric, (mean, sd, len(values)), theirs)
        agree[metric] = abs(mean - theirs[0]) <= tolerance[metric]
    result.update({"graded": True, "ours": mine, "tolerance": tolerance, "agree": agree})
    result["reasons"] = _reasons(result, udp) if not all(agree.values()) else []
    return result


def _reasons(result: dict[str, Any], udp: Sequence[bool]) -> list[str]:
    """What measurably differs between the two runs where they disagree."""
    from .network import PACKET_BYTES

    reasons = []
    device = result["bql"]["device_wait_mean_ms"]
    if device >= DELAY_RESOLUTION_MS:
        reasons.append(
            f"ns-3's device queue under the AQM held each packet {device:.1f} ms on average (BQL), a queue "
            "its AQM does not see; aqmlab's discipline is the bottleneck's only queue"
        )
    if any(udp):
        recorded = reference()
        sizes = {
            cell["wire_bytes_udp"] or cell["wire_bytes"] for cell in recorded["cells"] if cell["section"] == "5.3.1"
        }
        reasons.append(
            f"ns-3's UDP packets are {min(sizes)} B on the wire, ours {PACKET_BYTES} B: a queue of as many "
            f"packets waits {PACKET_BYTES / min(sizes) - 1:.1%} longer here"
        )
    return reasons
