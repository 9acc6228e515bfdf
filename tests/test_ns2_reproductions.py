"""The ns-2 reproductions' driver (tools/ns2_reproductions): what it reads from ns-2's outputs, how
it combines seeds, its refusal without ns-2, and the recorded files' format
(docs/ns2-reproductions.md). ns-2 itself is not run here."""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
TOOLS = ROOT / "tools" / "ns2_reproductions"
RECORDED = ROOT / "python" / "aqmlab" / "experiments" / "ns2_reference"
sys.path.insert(0, str(TOOLS))

import ns2runs  # noqa: E402
from aqmlab.experiments._verdicts import ns2_reference  # noqa: E402

# The scripts' output formats: `linkDumpFlows` (cumulative departures per flow id, 0 the total)
# and REDPDSim's log lines at verbosity 2.
FLOWS = """time: 10 class: 1 bytes: 100000 10
time: 10 class: 0 bytes: 100000 10
time: 20 class: 1 bytes: 350000 10
time: 20 class: 2 bytes: 50000 10
time: 20 class: 0 bytes: 400000 10
"""
LOG = """10.1 (0) {currDropRate: 0.5 avgDropRate: 0.5 avg_drop_count: -1 0 bdrops: 9000 barrivals: 20000 mon_drops: 0}
10.26 (0) {Monitor: Monitoring _o114 3 0.68360352965629301}
12.0 (0) {currDropRate: 0 avgDropRate: 0 avg_drop_count: disabled disabled bdrops: 1000 barrivals: 80000}
14.5 (0) {Monitor: Declaring unresponsive flow _o114 3}
30.26 (0) {Monitor: Unmonitoring unresponsive flow _o114 3 }
40.0 (0) {Monitor: Monitoring _o114 3 0.9}
"""


@pytest.fixture
def run(tmp_path: Path) -> ns2runs.Run:
    (tmp_path / "one.netX.Y.1.flows").write_text(FLOWS)
    (tmp_path / "stdout").write_text(LOG)
    return ns2runs.read_run(tmp_path)


def test_throughput_from_cumulative_departures(run: ns2runs.Run) -> None:
    assert run.mbps(1, 10, 20) == pytest.approx(250000 * 8 / 10 / 1e6)
    # A flow the dump does not list at a time had sent nothing by then.
    assert run.mbps(2, 10, 20) == pytest.approx(0.04)
    assert run.binned_bps(1, 10, 20) == [(10.0, pytest.approx(200000.0))]
    with pytest.raises(ValueError, match="no flow dump at t = 30 s"):
        run.mbps(1, 20, 30)


def test_ambient_drop_rate_sums_the_engine_intervals(run: ns2runs.Run) -> None:
    assert run.ambient_drop_rate() == pytest.approx(10000 / 100000)
    assert run.ambient_drop_rate(end=11.0) == pytest.approx(9000 / 20000)
    assert run.ambient_drop_rate(11.0, 20.0) == pytest.approx(1000 / 80000)


def test_monitored_time_from_the_engine_events(run: ns2runs.Run) -> None:
    assert run.events(3) == [(10.26, "Monitoring"), (14.5, "Declaring"), (30.26, "Unmonitoring"), (40.0, "Monitoring")]
    assert run.monitored_seconds(3, 50.0) == pytest.approx(20.0 + 10.0)
    assert run.monitored_seconds(3, 35.0) == pytest.approx(20.0)
    assert run.monitored_seconds(4, 50.0) == 0.0


def test_seeds_combine_to_mean_and_half_range() -> None:
    assert ns2runs.combine([1.0, 2.0, 4.0], ordered=False) == {"value": pytest.approx(7 / 3, abs=1e-4), "spread": 1.5}
    assert ns2runs.combine([3.0], ordered=False) == {"value": 3.0}
    groups = [[{"a": 1.0}, {"b": 4.0}], [{"a": 3.0}, {"b": 6.0}]]
    assert ns2runs.combine(groups, ordered=True) == {"value": [{"a": 2.0}, {"b": 5.0}]}


def test_patch_must_find_its_text(tmp_path: Path) -> None:
    scripts = tmp_path / "src" / "ex"
    scripts.mkdir(parents=True)
    (scripts / "a.tcl").write_text("ns-random 0\n")
    patch = ns2runs.Patch("a.tcl", "ns-random 0", "ns-random $::seed_", "seed")
    copied = ns2runs.prepare(tmp_path / "src", Path("ex"), [patch], tmp_path / "work")
    assert (copied / "a.tcl").read_text() == "ns-random $::seed_\n"
    with pytest.raises(SystemExit, match="the text our patch replaces is not there"):
        ns2runs.prepare(tmp_path / "src", Path("ex"), [ns2runs.Patch("a.tcl", "absent", "", "")], tmp_path / "w2")


def test_jobs_run_once_per_command_with_their_environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A stand-in `ns` records each call; a job is rerun only when its command or environment changes."""
    bin_dir, scripts, calls = tmp_path / "bin", tmp_path / "scripts", tmp_path / "calls"
    bin_dir.mkdir()
    scripts.mkdir()
    (scripts / "red-pd.tcl").write_text("")
    fake = bin_dir / "ns"
    fake.write_text(f'#!/bin/sh\necho "$* floor=${{REDPD_MIN_INTERVAL:-none}}" >> {calls}\n')
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    job = ns2runs.Job("a", ("one", "x"), 3, (("REDPD_MIN_INTERVAL", "0.000001"),))
    for _ in range(2):
        ns2runs.run_job(job, "red-pd.tcl", scripts, tmp_path)
    ns2runs.run_job(ns2runs.Job("a", ("one", "x"), 3), "red-pd.tcl", scripts, tmp_path)
    assert calls.read_text().splitlines() == [
        "red-pd.tcl one x seed 3 floor=0.000001",
        "red-pd.tcl one x seed 3 floor=none",
    ]
    assert (tmp_path / "a.seed3" / "done").read_text() == "ns red-pd.tcl one x seed 3"


def test_driver_refuses_without_an_ns2_source_tree(tmp_path: Path) -> None:
    env = {**os.environ, "NS2_SRC": str(tmp_path)}
    done = subprocess.run(
        [sys.executable, str(TOOLS / "redpd.py")], env=env, capture_output=True, text=True, timeout=60, check=False
    )
    assert done.returncode == 2
    assert done.stderr.startswith("error: NS2_SRC must name an ns-2.35 source tree with tcl/ex/red-pd/red-pd.tcl")
    assert "Traceback" not in done.stderr


def test_recorded_files_follow_the_format() -> None:
    files = sorted(RECORDED.glob("*.json"))
    assert files, "no recorded ns-2 values"
    for path in files:
        data = json.loads(path.read_text())
        assert data["experiment"] == path.stem
        assert data["ns2"].startswith("ns-2.35")
        assert data["command"].startswith("make ns2-"), path.name
        assert data["seeds"] and all(isinstance(s, int) for s in data["seeds"])
        assert data["modes"] in (["full"], ["full", "quick"]), path.name
        assert data["rows"], path.name
        assert all(isinstance(why, str) and why for why in data.get("not_in_ns2", {}).values()), path.name
        for key, row in data["rows"].items():
            assert isinstance(row["note"], str) and row["note"], f"{path.name} {key}"
            value = row["value"]
            if isinstance(value, str):  # a category, e.g. csfq-fig3a's nearer allocation
                assert "spread" not in row and value in ("fair", "proportional"), f"{path.name} {key}"
                continue
            if isinstance(value, list):
                assert "spread" not in row, f"{path.name} {key}"
                numbers = [v for g in value for v in (g.values() if isinstance(g, dict) else [g])]
            else:
                numbers = [value] + ([row["spread"]] if "spread" in row else [])
                assert ("spread" in row) == (len(data["seeds"]) > 1), f"{path.name} {key}"
            assert all(isinstance(v, float | int) and math.isfinite(v) for v in numbers), f"{path.name} {key}"
        # The project's reader takes it.
        assert ns2_reference(path.stem).rows.keys() == data["rows"].keys()


def test_csfq_baselines_are_recorded_and_the_mechanisms_ns2_lacks_said_so() -> None:
    """Issue 27: the CSFQ experiments' FIFO, RED and DRR rows and bred-vs-red's RED rows have
    ns-2's values (written by aqmlab's exporter); their CSFQ, FRED and BRED rows say ns-2.35 has
    no such mechanism."""
    demo, fig3a, fig4 = (ns2_reference(id) for id in ("demo", "csfq-fig3a", "csfq-fig4"))
    assert {"udp.droptail", "udp.red", "udp.drr"} <= demo.rows.keys()
    assert demo.not_in_ns2["udp.csfq"] == "CSFQ is not in ns-2.35"
    assert demo.not_in_ns2["udp.fred-1"] == "FRED is not in ns-2.35"
    assert "aqmlab.ns2.export" in demo.script and demo.command == "make ns2-baselines"
    assert ns2_reference("csfq-fig3b").not_in_ns2["udp.fred"] == "FRED is not in ns-2.35"
    assert {"drr.largest_deviation", "droptail.allocation", "red.allocation", "drr.allocation"} <= fig3a.rows.keys()
    assert {"drr.few_flows.min", "drr.most_flows", "baseline.max"} <= fig4.rows.keys()
    assert "crossover.csfq_gt_drr" in fig4.not_in_ns2
    bred = ns2_reference("bred-vs-red")
    assert {"fig10.red.long_run_fairness", "fig11.red.tcp_total", "fig11.red.cbr_min"} <= bred.rows.keys()
    assert bred.not_in_ns2["fig11.bred.cbr_max"] == "BRED is not in ns-2.35"
