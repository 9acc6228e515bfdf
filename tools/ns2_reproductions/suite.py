"""The ns-2 column of `redpd-ns2-suite`: the rows that grade how much of a monitored flow's
arrivals the pre-filter dropped from 10 to 20 s (`simple.during`, `unresponsive.during`), measured
in ns-2.35's own RED-PD suite (`tcl/test/test-suite-red-pd.tcl`, run by `aqmlab.ns2.redpd_suite`
as `validate ns2` runs it), over 20 seeds: the pre-filter's drops ("m" events of the RED/PD link)
over the flow's arrivals at it ("+"), both from 10 to 20 s, as the experiment measures ours.

    NS2_SRC=/path/to/ns-2.35 PYTHONPATH=python .venv/bin/python tools/ns2_reproductions/suite.py

(`make ns2-reproductions` runs it.)
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from aqmlab.ns2.redpd_scenarios import MONITOR_AT, UNMONITOR_AT
from aqmlab.ns2.redpd_suite import R1, R2, flow_names, run_ns2, source_tree

sys.path.insert(0, str(Path(__file__).parent))
from ns2runs import OUT, ns2_version, reference, rows_of  # noqa: E402

SEEDS = tuple(range(1, 21))
# Row key -> (suite test, flow): the flow monitored at P from 10 to 20 s.
ROWS = {"simple.during": ("simple", "tcp1"), "unresponsive.during": ("unresponsive", "cbr")}


def prefiltered_fraction(flow: str):
    """The measure of `run_ns2`: `flow`'s pre-filter drops over its arrivals at the RED/PD link, 10–20 s."""

    def measures(test: str, trace: str, log: str) -> dict[str, float]:
        fid = str(flow_names(test).index(flow) + 1)
        arrived = dropped = 0
        for line in trace.splitlines():
            event, time, src, dst, _, _, _, flow_id = line.split()[:8]
            if flow_id == fid and (src, dst) == (R1, R2) and MONITOR_AT <= float(time) < UNMONITOR_AT:
                arrived += event == "+"
                dropped += event == "m"
        return {"fraction": dropped / arrived}

    return measures


def main() -> int:
    source = source_tree()
    per_seed = {
        key: [run_ns2(test, seed, source, measures=prefiltered_fraction(flow))["fraction"] for seed in SEEDS]
        for key, (test, flow) in ROWS.items()
    }
    notes = {
        "*": (
            "ns-2.35's own suite test (the RED-PD authors'), this row's flow monitored with probability 0.1 "
            "from 10 to 20 s by the script; pre-filter drops over the flow's arrivals at the RED/PD link, 10–20 s"
        )
    }
    data = reference(
        "redpd-ns2-suite",
        ns2_version(),
        "tcl/test/test-suite-red-pd.tcl (the RED-PD authors' suite), run as `validate ns2` runs it "
        "(aqmlab.ns2.redpd_suite), by tools/ns2_reproductions/suite.py",
        SEEDS,
        ("full", "quick"),
        rows_of(per_seed, notes, frozenset(), "redpd-ns2-suite"),
    )
    path = OUT / "redpd-ns2-suite.json"
    path.write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n")
    print(f"ns2-reproductions: wrote {path}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
