"""Parameter sweeps: a base scenario and a grid of values at dotted paths.

A spec file (TOML):

    scenario = "cbr-overload"   # a file (relative to the spec) or a shipped scenario; or a [base] table
    [grid]
    "topology.bottleneck.qdisc" = [{ type = "droptail", limit = 50 }, { type = "droptail", limit = 200 }]
    "simulation.seed" = [1, 2, 3]

Every combination of grid values is one job. A job's results are stored in
`OUT/jobs/<hash>/`, where the hash covers the job's full scenario (and the
aqmlab version), so rerunning an interrupted sweep runs only what is missing.
At the end `OUT/jobs.csv` (one row per job) and `OUT/flows.csv` (one row per
job and flow) combine everything, in grid order.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import os
import shutil
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd
import tomllib

from . import _core
from ._core import ScenarioError
from .scenario import Scenario, find
from .workers import run_tasks

SPEC_FIELDS = ("scenario", "base", "grid")


@dataclass
class Job:
    index: int
    params: dict[str, Any]
    scenario: Scenario
    hash: str

    @property
    def label(self) -> str:
        return ", ".join(f"{k}={_param_text(v)}" for k, v in self.params.items())


@dataclass
class SweepSpec:
    base: Scenario
    grid: dict[str, list[Any]]
    jobs: list[Job] = field(default_factory=list)


@dataclass
class SweepReport:
    total: int
    already_done: int
    ran: list[int]
    failed: dict[int, str]
    written: list[Path]


def job_hash(scenario: Scenario) -> str:
    """SHA-256 of the job's full scenario (canonical JSON) and the aqmlab version."""
    text = json.dumps(
        {"aqmlab": _core.__version__, "scenario": json.loads(scenario.to_json())}, sort_keys=True, separators=(",", ":")
    )
    return hashlib.sha256(text.encode()).hexdigest()


def load_spec(path: str | Path) -> SweepSpec:
    """Reads and checks a sweep spec (a file, or a shipped spec by name: `droptail-buffer`);
    every error names the field, e.g. `grid."simulation.seed"`."""
    path = find(path)
    try:
        data = tomllib.loads(path.read_text())
    except OSError as e:
        raise ScenarioError(f"{path}: {e.strerror or e}") from None
    except tomllib.TOMLDecodeError as e:
        raise ScenarioError(f"{path}: invalid TOML: {e}") from None
    return parse_spec(data, path.parent)


def parse_spec(data: dict[str, Any], root: Path) -> SweepSpec:
    for key in data:
        if key not in SPEC_FIELDS:
            raise ScenarioError(f"{key}: unknown field (a sweep spec has {', '.join(SPEC_FIELDS)})")
    if ("scenario" in data) == ("base" in data):
        raise ScenarioError("scenario: give either `scenario` (a scenario file) or a [base] table, exactly one")
    if "scenario" in data:
        if not isinstance(data["scenario"], str):
            raise ScenarioError(f"scenario: must be a file name, got {data['scenario']!r}")
        # A file beside the spec, or else a shipped scenario by name (`scenario = "cbr-overload"`).
        beside = root / data["scenario"]
        base = Scenario.load(beside if beside.exists() or beside.parent != root else data["scenario"])
    else:
        if not isinstance(data["base"], dict):
            raise ScenarioError("base: must be a table (the scenario)")
        base = Scenario.from_dict(data["base"])
    grid = data.get("grid")
    if not isinstance(grid, dict) or not grid:
        raise ScenarioError("grid: required, a table of dotted paths to lists of values")
    for key, values in grid.items():
        if not isinstance(values, list) or not values:
            raise ScenarioError(f'grid."{key}": must be a non-empty list of values, got {values!r}')
    spec = SweepSpec(base, grid)
    keys = list(grid)
    for index, combination in enumerate(itertools.product(*grid.values())):
        params = dict(zip(keys, combination, strict=True))
        try:
            scenario = base.with_(params)
            scenario.validate()
        except ScenarioError as e:
            raise ScenarioError(
                f"grid: job {index} ({', '.join(f'{k}={_param_text(v)}' for k, v in params.items())}): {e}"
            ) from None
        spec.jobs.append(Job(index, params, scenario, job_hash(scenario)))
    return spec


def run_job(scenario_json: str, job_dir: str) -> float:
    """Runs one job and stores its results (and the captures its `simulation.pcap` asks for)
    in `job_dir`, atomically: all or nothing. Returns the run's wall time. Runs in a worker
    process (local pool or Dask)."""
    from .api import run

    final = Path(job_dir)
    partial = final.with_name(f"{final.name}.partial-{uuid.uuid4().hex}")
    results = run(Scenario.from_dict(json.loads(scenario_json)), pcap_dir=partial)
    results.save(partial, format="parquet")
    (partial / "wall_time.txt").write_text(f"{results.wall_time:.6f}\n")
    try:
        os.rename(partial, final)
    except OSError:  # another worker finished the same job first
        shutil.rmtree(partial, ignore_errors=True)
    return results.wall_time or 0.0


def run_sweep(
    spec: SweepSpec,
    out_dir: str | Path,
    workers: int | None = None,
    scheduler: str | None = None,
    on_done: Callable[[Job, float | None, str | None], None] | None = None,
) -> SweepReport:
    """Runs every job whose results are missing, then writes the combined tables.

    `on_done(job, wall_time, error)` is called as each job finishes. Jobs run on a
    local process pool of `workers` (default: one per core), or on the Dask cluster
    at `scheduler` (the workers must see `out_dir` at the same path).
    """
    out = Path(out_dir).resolve()
    jobs_dir = out / "jobs"
    jobs_dir.mkdir(parents=True, exist_ok=True)
    _write_manifest(spec, out)
    for stale in jobs_dir.glob("*.partial-*"):  # left by an interrupted run
        shutil.rmtree(stale, ignore_errors=True)
    pending = pending_jobs(spec, out)
    failed: dict[int, str] = {}
    ran: list[int] = []

    def finished(job: Job, wall: float | None, error: str | None) -> None:
        if error is None:
            ran.append(job.index)
            with (out / "runs.log").open("a") as log:
                when = time.strftime("%Y-%m-%dT%H:%M:%S")
                log.write(f"{when} ran job {job.index} {job.hash[:16]} in {wall:.3f} s: {job.label}\n")
        else:
            failed[job.index] = error
        if on_done is not None:
            on_done(job, wall, error)

    by_index = {job.index: job for job in pending}
    run_tasks(
        run_job,
        [(job.index, (job.scenario.to_json(), str(_job_dir(jobs_dir, job)))) for job in pending],
        lambda index, wall, error: finished(by_index[index], wall, error),
        workers=workers or os.cpu_count() or 1,
        scheduler=scheduler,
        dask_key=lambda index: f"aqmlab-job-{by_index[index].hash[:16]}",
    )
    written = _combine(spec, jobs_dir, out)
    return SweepReport(len(spec.jobs), len(spec.jobs) - len(pending), sorted(ran), failed, written)


def pending_jobs(spec: SweepSpec, out_dir: str | Path) -> list[Job]:
    """Jobs without stored results in `out_dir`."""
    jobs_dir = Path(out_dir).resolve() / "jobs"
    return [job for job in spec.jobs if not _job_dir(jobs_dir, job).is_dir()]


def _job_dir(jobs_dir: Path, job: Job) -> Path:
    return jobs_dir / job.hash[:16]


def _param_text(value: Any) -> Any:
    """Grid values as table cells: scalars as they are, tables and lists as compact JSON."""
    if isinstance(value, (dict, list)):
        return json.dumps(value, sort_keys=True, separators=(",", ":"))
    return value


def _write_manifest(spec: SweepSpec, out: Path) -> None:
    manifest = {
        "grid": spec.grid,
        "jobs": [{"job": j.index, "hash": j.hash, "params": j.params} for j in spec.jobs],
    }
    (out / "sweep.json").write_text(json.dumps(manifest, indent=2) + "\n")


def _combine(spec: SweepSpec, jobs_dir: Path, out: Path) -> list[Path]:
    """Writes jobs.csv and flows.csv from every finished job, in grid order."""
    job_rows, flow_frames = [], []
    for job in spec.jobs:
        folder = _job_dir(jobs_dir, job)
        if not folder.is_dir():
            continue
        params = {k: _param_text(v) for k, v in job.params.items()}
        summary = json.loads((folder / "summary.json").read_text())
        row = {"job": job.index, "hash": job.hash[:16], **params}
        row.update(
            {k: summary[k] for k in ("jain_index", "events", "packets_sent", "packets_delivered", "packets_dropped")}
        )
        row.update({f"utilisation.{link}": u for link, u in summary["utilisation"].items()})
        job_rows.append(row)
        flows = pd.read_parquet(folder / "flows.parquet")
        for i, (k, v) in enumerate({"job": job.index, "hash": job.hash[:16], **params}.items()):
            flows.insert(i, k, [v] * len(flows))
        flow_frames.append(flows)
    written = []
    for name, frame in (
        ("jobs", pd.DataFrame(job_rows)),
        ("flows", pd.concat(flow_frames, ignore_index=True) if flow_frames else pd.DataFrame()),
    ):
        path = out / f"{name}.csv"
        frame.to_csv(path, index=False)
        written.append(path)
    return written
