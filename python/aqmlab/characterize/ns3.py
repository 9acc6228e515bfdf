"""The ns-3 AQM Evaluation Suite's numbers for the cells it shares with `characterize`
(`ns3_reference.json`, recorded by tools/ns3_aqm_eval/; its header says with which ns-3, which
suite commit and which command), and how ours compare with them.

The suite runs RED, CoDel and PIE with the settings network.py gives them; a cell has an ns-3
column when its mechanism is one of those three by name and ns-3 ran its test and case.
"""

from __future__ import annotations

import functools
import json
import statistics
from pathlib import Path
from typing import Any

REFERENCE = Path(__file__).with_name("ns3_reference.json")
# The mechanisms the suite runs, by our name and its.
SUITE_AQMS = {"red": "red", "codel": "codel", "pie": "pie"}


@functools.cache
def reference() -> dict[str, Any] | None:
    """The recorded reference, None where it was not recorded."""
    return json.loads(REFERENCE.read_text()) if REFERENCE.is_file() else None


def ns3_cell(section: str, case: str, mechanism: str) -> dict[str, Any] | None:
    """ns-3's cell of this test, case and mechanism (its seeds' mean goodput on the wire, as
    ours counts it, and median queueing delay, with their spread across seeds), None where ns-3
    has none."""
    recorded = reference()
    aqm = SUITE_AQMS.get(mechanism)
    if recorded is None or aqm is None:
        return None
    for cell in recorded["cells"]:
        if cell["section"] == section and cell["aqm"] == aqm and cell["case"] in ("", case):
            return _summarised(cell, recorded)
    return None


def _spread(values: list[float]) -> float:
    return statistics.stdev(values) if len(values) > 1 else 0.0


def _summarised(cell: dict[str, Any], recorded: dict[str, Any]) -> dict[str, Any]:
    seeds = cell["seeds"]
    # ns-3 counts application payload; ours, the data packets on the wire.
    wire = cell["wire_bytes"] / cell["payload_bytes"]
    goodput = [seed["total_goodput_bps"] * wire for seed in seeds]
    delay = [seed["delay_median_ms"] for seed in seeds]
    mean_delay = [seed["delay_mean_ms"] for seed in seeds]
    return {
        "seeds": len(seeds),
        "goodput_bps": statistics.fmean(goodput),
        "goodput_sd_bps": _spread(goodput),
        "delay_median_ms": statistics.fmean(delay),
        "delay_median_sd_ms": _spread(delay),
        "delay_mean_ms": statistics.fmean(mean_delay),
        "delay_mean_sd_ms": _spread(mean_delay),
        "wall_s": sum(seed["wall_s"] for seed in seeds) / len(seeds),
        "source": f"ns-3 {recorded['ns3_version']}, {recorded['suite']}",
    }
