"""ns-2.35's RED-PD validation suite beside aqmlab's, for `validate ns2` (issue 21, goal 5).

The RED-PD authors' suite (`tcl/test/test-suite-red-pd.tcl`, with `misc_simple.tcl` and their
engine `tcl/ex/red-pd/monitoring.tcl`, `helper.tcl`) cannot be exported: its engine is their
OTcl, which ns-2's library does not hold. So ns-2 runs the suite itself, from an ns-2.35 source
tree named by `NS2_SRC`, and aqmlab runs the same six tests as the experiment `redpd-ns2-suite`
builds them (`redpd_scenarios.py`). The suite is copied into a temporary folder
and its last line, `TestSuite runTest`, replaced by `HARNESS`, our lines: they seed ns-2's
default RNG, skip the suite's graphs, log the engine's decisions and trace RED's early drops and
the pre-filter's apart. Nothing of ns-2 is kept in this repository.

Measured alike in both, over the whole 30-s run: each flow's goodput (in-order bytes delivered:
ns-2's all.tr receptions at the sinks, TCP up to its first missing packet) and its pre-filter
drops; where the engine runs, when it first monitored the CBR and when it declared it
unresponsive (ns-2's log at verbosity 2; a run where it never did counts the run's end); in
`cbrs` and `cbrs-noidle` the bottleneck's utilisation (ns-2's own print; aqmlab's busy time).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from collections.abc import Callable
from pathlib import Path

from .crosscheck import Metrics
from .export import ns2_seed
from .redpd_scenarios import DURATION, SCENARIOS, Run
from .run import TIMEOUT_S, Ns2Error, ns_command

SUITE = Path("tcl/test/test-suite-red-pd.tcl")
# What the suite reads besides itself (relative to the source tree).
FILES = (
    SUITE,
    Path("tcl/test/misc_simple.tcl"),
    Path("tcl/ex/red-pd/monitoring.tcl"),
    Path("tcl/ex/red-pd/helper.tcl"),
)
LAST_LINE = "TestSuite runTest"
ENGINE_TESTS = ("complete", "cbrs", "cbrs-noidle")
# The tests that print the bottleneck's utilisation (`printall`: departures × 200 bytes over 30 s).
UTILISATION_TESTS = ("cbrs", "cbrs-noidle")
# net2's nodes: r2 is 3, the sinks s3 and s4 are 4 and 5; the RED/PD link is r1 (2) -> r2 (3).
R1, R2, SINKS = "2", "3", ("4", "5")

HARNESS = """\
# aqmlab (validate ns2): ns-2's default RNG seeded; no graphs at the end; the engine's decisions
# logged (verbosity 2); RED's early drops traced as "e" and the pre-filter's as "m".
global defaultRNG
$defaultRNG seed {seed}
set verbosity_ 2
TestSuite instproc finish file {{ $self instvar ns_; $ns_ halt }}
Queue/RED/PD instproc trace-type {{}} {{ return EDrop }}
Queue/RED/PD instproc mon-trace-type {{}} {{ return MEDrop }}
TestSuite runTest
"""


def harness(seed: int) -> str:
    """Our lines in place of the suite's last, for aqmlab's seed `seed` (ns-2's `ns2_seed`)."""
    return HARNESS.format(seed=ns2_seed(seed))


def source_tree() -> Path:
    """The ns-2.35 source tree in `NS2_SRC`; `Ns2Error` when it is unset or lacks the suite."""
    source = Path(os.environ.get("NS2_SRC", ""))
    missing = [str(f) for f in FILES if not (source / f).is_file()]
    if not os.environ.get("NS2_SRC") or missing:
        raise Ns2Error(f"NS2_SRC must name an ns-2.35 source tree with {', '.join(missing or map(str, FILES))}")
    return source


def run_ns2(
    test: str,
    seed: int,
    source: Path,
    timeout: float = TIMEOUT_S,
    measures: Callable[[str, str, str], Metrics] | None = None,
) -> Metrics:
    """ns-2's measures of one suite test at aqmlab's seed `seed`: `measures(test, trace, log)`
    of its all.tr and the engine's log, by default `ns2_measures`."""
    command = ns_command()
    with tempfile.TemporaryDirectory(prefix="aqmlab-redpd-suite-") as folder:
        for f in FILES:
            (Path(folder) / f).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(source / f, Path(folder) / f)
        suite = Path(folder) / SUITE
        text = suite.read_text()
        if text.rstrip().splitlines()[-1] != LAST_LINE:
            raise Ns2Error(f"{SUITE} does not end with `{LAST_LINE}`: not ns-2.35's suite")
        suite.write_text(text.rstrip()[: -len(LAST_LINE)] + harness(seed))
        try:
            done = subprocess.run(
                [command, SUITE.name, test, "QUIET"],
                cwd=suite.parent,
                capture_output=True,
                text=True,
                timeout=timeout,
                check=False,
            )
        except subprocess.TimeoutExpired:
            raise Ns2Error(f"ns-2 did not finish {test} within {timeout:g} s") from None
        trace = suite.parent / "all.tr"
        if done.returncode != 0 or not trace.is_file():
            last = (done.stderr.strip() or done.stdout.strip()).splitlines()[-1:] or ["no output"]
            raise Ns2Error(f"ns-2 failed on {test} (status {done.returncode}): {last[0]}")
        return (measures or ns2_measures)(test, trace.read_text(), done.stdout)


def ns2_measures(test: str, trace: str, log: str) -> Metrics:
    """The measures from ns-2's all.tr and the engine's log (flows by fid: 1, 2, 3)."""
    received: dict[str, dict[int, int]] = {}  # fid -> {seqno: bytes}
    kinds: dict[str, str] = {}
    prefiltered: dict[str, int] = {}
    for line in trace.splitlines():
        event, time, src, dst, kind, size, _, fid, _, _, seqno = line.split()[:11]
        if kind not in ("tcp", "cbr") or float(time) >= DURATION:
            continue
        kinds[fid] = kind
        if event == "r" and src == R2 and dst in SINKS:
            received.setdefault(fid, {})[int(seqno)] = int(size)
        elif event == "m" and (src, dst) == (R1, R2):
            prefiltered[fid] = prefiltered.get(fid, 0) + 1
    goodput = {}
    for fid, packets in received.items():
        if kinds[fid] == "tcp":
            # In order: up to the first missing packet (TCPSink's cumulative ACK).
            upto = next(n for n in range(len(packets) + 1) if n not in packets)
            packets = {n: packets[n] for n in range(upto)}
        goodput[fid] = sum(packets.values()) * 8 / DURATION / 1e6
    names = flow_names(test)
    metrics = {f"goodput {name} (Mb/s)": goodput.get(str(i + 1), 0.0) for i, name in enumerate(names)}
    metrics |= {f"pre-filter drops {name}": float(prefiltered.get(str(i + 1), 0)) for i, name in enumerate(names)}
    if test in ENGINE_TESTS:
        cbr = str(names.index("cbr") + 1)
        metrics["cbr monitored at (s)"] = _first(log, "Monitor: Monitoring", cbr)
        metrics["cbr declared unresponsive at (s)"] = _first(log, "Monitor: Declaring unresponsive flow", cbr)
    if test in UTILISATION_TESTS:
        printed = [line.split()[-1] for line in log.splitlines() if line.startswith("link utilization ")]
        metrics["utilisation L->R"] = float(printed[-1])
    return metrics


def _first(log: str, decision: str, fid: str) -> float:
    """The time of the engine's first `decision` on flow `fid` (`TIME (0) {DECISION OBJECT FID`),
    or the run's end."""
    for line in log.splitlines():
        time, _, rest = line.partition(" (0) {")
        words = rest.removeprefix(decision).rstrip("}").split()
        if rest.startswith(decision) and len(words) >= 2 and words[1] == fid:
            return float(time)
    return DURATION


def flow_names(test: str) -> list[str]:
    return [flow["name"] for flow in SCENARIOS[test]()["flows"]]


def run_aqmlab(test: str, seed: int) -> Metrics:
    """aqmlab's measures of the same test (the experiment's scenario) at `seed`."""
    from .. import run

    scenario = SCENARIOS[test]()
    scenario["simulation"]["seed"] = seed
    measured = Run(run(scenario))
    flows = measured.results.flows
    metrics = {f"goodput {f.name} (Mb/s)": f.goodput_bps / 1e6 for f in flows.itertuples()}
    metrics |= {
        f"pre-filter drops {f.name}": float(measured.dropped(int(f.id), 0.0, DURATION, ("pre_filter",)))
        for f in flows.itertuples()
    }
    if test in ENGINE_TESTS:
        record = measured.record(int(flows.set_index("name").at["cbr", "id"]))
        for metric, column in (
            ("cbr monitored at (s)", "first_monitored_at"),
            ("cbr declared unresponsive at (s)", "unresponsive_at"),
        ):
            value = record.get(column, DURATION)
            metrics[metric] = DURATION if value != value else float(value)
    if test in UTILISATION_TESTS:
        metrics["utilisation L->R"] = float(measured.link["utilisation"])
    return metrics
