"""Traffic for RFC 7928's characterization (issue 38) from the front: a link's capacity trace is
read relative to its scenario file, the example in docs/examples runs, and a bad pause or trace
is a ScenarioError naming the field (the behaviour itself: crates/aqmlab-core/tests/traffic.rs)."""

from __future__ import annotations

import shutil

import aqmlab
import pytest
from conftest import ROOT, aqmlab_cli

TRACES = ROOT / "docs" / "examples" / "traces"

SCENARIO = """
[simulation]
duration = "4s"
[topology]
type = "dumbbell"
bottleneck = { trace = "traces/const-12mbps.up", delay = "5ms" }
[[flows]]
type = "cbr"
rate = "15Mbps"
packet_size = "1500B"
"""


def test_a_trace_is_read_relative_to_the_scenario_file(tmp_path):
    (tmp_path / "traces").mkdir()
    shutil.copy(TRACES / "const-12mbps.up", tmp_path / "traces")
    (tmp_path / "lte.toml").write_text(SCENARIO)
    # From another working directory: the path is the file's folder's.
    done = aqmlab_cli("run", tmp_path / "lte.toml", "--json", cwd=ROOT / "docs")
    assert done.returncode == 0, done.stderr
    results = aqmlab.run(aqmlab.load(tmp_path / "lte.toml"))
    # A line per millisecond, 1504 bytes each (Mahimahi's PACKET_SIZE): 3999 in [0, 4 s).
    assert results.link("L->R")["rate_bps"] == pytest.approx(3999 * 1504 * 8 / 4, rel=1e-12)


def test_the_trace_example_runs():
    results = aqmlab.run(aqmlab.load(ROOT / "docs" / "examples" / "trace-link.toml"))
    # The link's rate is the opportunities of the window [5 s, 30 s), the trace looping every 10 s.
    times = [int(line) for line in (TRACES / "stepped-12-3mbps.up").read_text().split()]
    window = [lap * times[-1] + t for lap in range(3) for t in times if 5000 <= lap * times[-1] + t < 30000]
    assert results.link("L->R")["rate_bps"] == pytest.approx(len(window) * 1504 * 8 / 25, rel=1e-12)
    assert results.flows["goodput_bps"].sum() > 0.9 * results.link("L->R")["rate_bps"]


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (
            {"flows[0].pauses": [{"at": "2s", "until": "1s"}]},
            r"^flows\[0\]\.pauses\[0\]\.until: must be > at \(2s\), got 1s$",
        ),
        ({"topology.bottleneck.trace": "no-such.up"}, r"^topology\.bottleneck\.trace: no-such\.up: No such file"),
    ],
)
def test_bad_pauses_and_traces_name_the_field(change, message):
    scenario = aqmlab.Scenario(
        {
            "simulation": {"duration": "4s"},
            "topology": {"type": "dumbbell", "bottleneck": {"delay": "5ms"}},
            "flows": [{"type": "cbr", "rate": "1Mbps"}],
        }
    )
    if "topology.bottleneck.trace" not in change:
        change = change | {"topology.bottleneck.rate": "10Mbps"}
    with pytest.raises(aqmlab.ScenarioError, match=message):
        scenario.with_(change).validate()
