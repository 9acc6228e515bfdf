"""Sweeps: spec checking, resuming after a lost job, and the Dask path."""

import json
import re
import shutil
from pathlib import Path

import pandas as pd
import pytest
from aqmlab import ScenarioError
from aqmlab.sweep import load_spec, parse_spec, run_sweep
from aqmlab.terminal import fmt
from conftest import aqmlab_cli, dumbbell, write_scenario

GRID = """
[grid]
"simulation.seed" = [1, 2]
"topology.bottleneck.qdisc" = [{ type = "droptail", limit = 20 }, { type = "droptail", limit = 60 }]
"""


@pytest.fixture
def spec(tmp_path) -> Path:
    write_scenario(
        tmp_path / "base.toml",
        dumbbell({"type": "cbr", "rate": "4Mbps", "count": 3, "jitter": True}, duration="2s", warmup="0.5s"),
    )
    path = tmp_path / "sweep.toml"
    path.write_text('scenario = "base.toml"\n' + GRID)
    return path


def test_an_interrupted_sweep_reruns_only_the_missing_job(tmp_path, spec):
    out = tmp_path / "out"
    first = aqmlab_cli("sweep", spec, "--out", out, "--workers", "2")
    assert first.returncode == 0, first.stderr
    log = (out / "runs.log").read_text().splitlines()
    assert len(log) == 4
    combined = {name: (out / name).read_bytes() for name in ("jobs.csv", "flows.csv")}
    jobs = json.loads((out / "sweep.json").read_text())["jobs"]
    assert [j["params"] for j in jobs] == [
        {"simulation.seed": s, "topology.bottleneck.qdisc": {"type": "droptail", "limit": limit}}
        for s in (1, 2)
        for limit in (20, 60)
    ]
    assert len({j["hash"] for j in jobs}) == 4
    shutil.rmtree(out / "jobs" / jobs[2]["hash"][:16])

    second = aqmlab_cli("sweep", spec, "--out", out)
    assert second.returncode == 0, second.stderr
    assert "4 jobs, 3 already done, running 1" in second.stderr
    log = (out / "runs.log").read_text().splitlines()
    assert len(log) == 5 and f" ran job 2 {jobs[2]['hash'][:16]} " in log[4]
    assert {name: (out / name).read_bytes() for name in combined} == combined
    rows = combined["jobs.csv"].decode().splitlines()
    assert rows[0].startswith("job,hash,simulation.seed,topology.bottleneck.qdisc,jain_index,")
    assert len(rows) == 5 and len(combined["flows.csv"].decode().splitlines()) == 1 + 4 * 3

    # Nothing left to run: no empty "0/0" progress bar, the same tables.
    third = aqmlab_cli("sweep", spec, "--out", out)
    assert third.returncode == 0, third.stderr
    assert "4 jobs, 4 already done, running 0" in third.stderr
    assert "0/0" not in third.stderr and "jobs ━" not in third.stderr, third.stderr
    assert {name: (out / name).read_bytes() for name in combined} == combined


def test_a_sweep_prints_each_grid_point_over_its_seeds_and_says_where_its_tables_are(tmp_path, spec):
    # Issue 34 item 8: `aqmlab sweep` printed nothing but the paths of its tables.
    out = tmp_path / "out"
    done = aqmlab_cli("sweep", spec, "--out", out, "--workers", "2", columns=100)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == "sweep: 2 grid points, each metric's mean (min-max) over the point's seeds"
    # Too wide for 100 columns as a row per point: a column per point, a row per metric.
    assert lines[1].split() == ["topology.bottleneck.qdisc", "limit=20", "limit=60"]
    cells = {line[:27].strip(): re.split(r"\s{2,}", line[27:].strip()) for line in lines[3:] if line}
    assert list(cells) == ["seeds", "jain index", "utilisation.L->R", "flow0 (Mbps)", "flow1 (Mbps)", "flow2 (Mbps)"]
    assert cells["seeds"] == ["2", "2"]
    # The mean and range over seeds 1 and 2 of each grid point, from the jobs' own table.
    jobs = pd.read_csv(out / "jobs.csv").groupby("topology.bottleneck.qdisc", sort=False)["jain_index"]
    expected = [
        f"{fmt(mean)} ({fmt(low)}-{fmt(high)})"
        for mean, low, high in zip(jobs.mean(), jobs.min(), jobs.max(), strict=True)
    ]
    assert cells["jain index"] == expected
    # Results on stdout, where they were written on stderr.
    assert str(out / "jobs.csv") not in done.stdout and f"combined tables: {out / 'jobs.csv'}" in done.stderr


def test_dask_scheduler_gives_the_same_tables(tmp_path, spec):
    distributed = pytest.importorskip("dask.distributed")
    parsed = load_spec(spec)
    run_sweep(parsed, tmp_path / "local", workers=1)
    with distributed.LocalCluster(
        n_workers=1, threads_per_worker=2, processes=False, dashboard_address=None
    ) as cluster:
        report = run_sweep(parsed, tmp_path / "dask", scheduler=cluster.scheduler_address)
    assert report.ran == [0, 1, 2, 3] and not report.failed
    for name in ("jobs.csv", "flows.csv"):
        assert (tmp_path / "dask" / name).read_bytes() == (tmp_path / "local" / name).read_bytes()


@pytest.mark.parametrize(
    "spec, message",
    [
        ({"base": {}, "grid": {"a": [1]}, "grids": 1}, "grids: unknown field (a sweep spec has scenario, base, grid)"),
        ({"grid": {"a": [1]}}, "scenario: give either `scenario` (a scenario file) or a [base] table, exactly one"),
        ({"base": {}}, "grid: required, a table of dotted paths to lists of values"),
        (
            {"base": {}, "grid": {"simulation.seed": 3}},
            'grid."simulation.seed": must be a non-empty list of values, got 3',
        ),
        (
            {"base": {}, "grid": {"simulation.seed": []}},
            'grid."simulation.seed": must be a non-empty list of values, got []',
        ),
    ],
)
def test_spec_errors_name_the_field(spec, message, tmp_path):
    with pytest.raises(ScenarioError) as info:
        parse_spec(spec, tmp_path)
    assert str(info.value) == message


def test_an_invalid_job_is_reported_before_anything_runs(tmp_path):
    spec = {"base": dumbbell({"type": "cbr", "rate": "1Mbps"}), "grid": {"flows[0].rate": ["1Mbps", "-2Mbps"]}}
    with pytest.raises(ScenarioError) as info:
        parse_spec(spec, tmp_path)
    assert str(info.value) == "grid: job 1 (flows[0].rate=-2Mbps): flows[0].rate: must be > 0, got -2Mbps"
