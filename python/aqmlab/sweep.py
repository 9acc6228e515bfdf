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
job and flow) combine everything, in grid order. `grid_summary(OUT)` takes the
seeds together: one row per grid point, each metric's mean and range over the
point's seeds (what `aqmlab sweep` prints and `aqmlab report` draws).
"""

from __future__ import annotations

import contextlib
import hashlib
import itertools
import json
import os
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from . import _core, outdir
from ._core import ScenarioError
from .results import MBPS, SCHEMA
from .scenario import Scenario, find, read_toml
from .workers import Cluster, run_tasks

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
    # The spec file's name without `.toml` ("" for a spec given as a dict).
    name: str = ""


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
    every error names the file, then the field, e.g. `sweep.toml: grid."simulation.seed": ...`."""
    path = find(path)
    data = read_toml(path)
    try:
        spec = parse_spec(data, path.parent)
    except ScenarioError as e:
        raise ScenarioError(f"{path}: {e}") from None
    spec.name = path.stem
    return spec


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
            # A spec is a file: its grid's quantities carry their units, as a scenario file's do.
            scenario.validate(file=True)
        except ScenarioError as e:
            raise ScenarioError(
                f"grid: job {index} ({', '.join(f'{k}={_param_text(v)}' for k, v in params.items())}): {e}"
            ) from None
        spec.jobs.append(Job(index, params, scenario, job_hash(scenario)))
    return spec


def run_job(scenario_json: str, job_dir: str) -> float:
    """Runs one job and stores its results (and the captures its `simulation.pcap` asks for)
    in `job_dir`, whole or not at all, with their manifest (outdir.py). Returns the run's wall
    time. Runs in a worker process (local pool or Dask)."""
    from .api import run

    scenario = Scenario.from_dict(json.loads(scenario_json))
    final = Path(job_dir)
    with outdir.atomic_folder(final, {"kind": "sweep job", "scenario_sha256": scenario.digest()}) as folder:
        results = run(scenario, pcap_dir=folder)
        results.save(folder, format="parquet")
        (folder / "wall_time.txt").write_text(f"{results.wall_time:.6f}\n")
    return results.wall_time or 0.0


class SweepFolder:
    """A sweep's output folder, held by this process (`open_sweep`): which jobs have whole
    results, which must run and why; `run` runs those and writes the combined tables."""

    def __init__(self, spec: SweepSpec, out: Path):
        self.spec = spec
        self.out = out
        self.jobs_dir = out / "jobs"
        # Each job that must run (by index), and why: no results yet, or what fails its manifest.
        self.reasons = {
            job.index: reason
            for job in spec.jobs
            if (reason := outdir.verify(_job_dir(self.jobs_dir, job))) is not None
        }
        self.pending = [job for job in spec.jobs if job.index in self.reasons]

    @property
    def total(self) -> int:
        return len(self.spec.jobs)

    def damaged(self) -> dict[str, str]:
        """Jobs whose folder is there but fails its manifest (they run again): `job 3 (its
        parameters)` → why."""
        return {
            f"job {job.index} ({job.label})": self.reasons[job.index]
            for job in self.pending
            if self.reasons[job.index] != outdir.NO_RESULTS
        }

    def run(
        self,
        workers: int | None = None,
        scheduler: str | Cluster | None = None,
        on_done: Callable[[Job, float | None, str | None], None] | None = None,
    ) -> SweepReport:
        """Runs the pending jobs, then writes the combined tables (see `run_sweep`)."""
        out, failed, ran = self.out, {}, []

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

        by_index = {job.index: job for job in self.pending}
        run_tasks(
            run_job,
            [(job.index, (job.scenario.to_json(), str(_job_dir(self.jobs_dir, job)))) for job in self.pending],
            lambda index, wall, error: finished(by_index[index], wall, error),
            workers=workers or os.cpu_count() or 1,
            scheduler=scheduler,
            dask_key=lambda index: f"aqmlab-job-{by_index[index].hash[:16]}",
        )
        # Whole results: those that passed their manifest at the start, and those just written.
        whole = {job.index for job in self.spec.jobs if job.index not in self.reasons} | set(ran)
        written = _combine(self.spec, self.jobs_dir, out, whole)
        return SweepReport(self.total, self.total - len(self.pending), sorted(ran), failed, written)


@contextlib.contextmanager
def open_sweep(
    spec: SweepSpec, out_dir: str | Path, wait: bool = False, say: outdir.Say | None = None
) -> Iterator[SweepFolder]:
    """Takes `out_dir` for this sweep within the block: its lock (outdir.locked: `FolderBusy` if
    another process writes it, unless `wait`), checks it is a folder that is no run's result,
    removes what writers cut short left, writes `sweep.json`, and checks every job's results
    against their manifest."""
    out = Path(out_dir).resolve()
    with outdir.locked(out, wait, say):
        outdir.check_folder_path(out)
        if (out / outdir.MANIFEST).is_file():
            raise outdir.OutputError(f"{out}: holds the results of a run or an experiment; give the sweep its own")
        jobs_dir = out / "jobs"
        jobs_dir.mkdir(exist_ok=True)
        outdir.remove_partials(jobs_dir)
        _write_plan(spec, out)
        yield SweepFolder(spec, out)


def run_sweep(
    spec: SweepSpec,
    out_dir: str | Path,
    workers: int | None = None,
    scheduler: str | Cluster | None = None,
    on_done: Callable[[Job, float | None, str | None], None] | None = None,
) -> SweepReport:
    """Runs every job whose results are missing or fail their manifest, then writes the combined
    tables.

    `on_done(job, wall_time, error)` is called as each job finishes. Jobs run on a
    local process pool of `workers` (default: one per core), or on the Dask cluster at
    `scheduler` (the workers must see `out_dir` at the same path). Raises `outdir.FolderBusy`
    if another process is writing `out_dir`, `workers.ClusterError` if the cluster fails (the
    finished jobs are kept).
    """
    with open_sweep(spec, out_dir) as folder:
        return folder.run(workers, scheduler, on_done)


def pending_jobs(spec: SweepSpec, out_dir: str | Path) -> list[Job]:
    """Jobs without whole results in `out_dir`: none yet, or failing their manifest."""
    jobs_dir = Path(out_dir).resolve() / "jobs"
    return [job for job in spec.jobs if outdir.verify(_job_dir(jobs_dir, job)) is not None]


def _job_dir(jobs_dir: Path, job: Job) -> Path:
    return jobs_dir / job.hash[:16]


def _param_text(value: Any) -> Any:
    """Grid values as table cells: scalars as they are, tables and lists as compact JSON."""
    if isinstance(value, (dict, list)):
        return json.dumps(value, sort_keys=True, separators=(",", ":"))
    return value


def _write_plan(spec: SweepSpec, out: Path) -> None:
    """`sweep.json`: the spec's and the base scenario's names, the grid and every job's hash and
    parameters (what `aqmlab report` shows)."""
    plan = {
        "name": spec.name,
        "scenario": spec.base.name or (spec.base.source.stem if spec.base.source else ""),
        "grid": spec.grid,
        "jobs": [{"job": j.index, "hash": j.hash, "params": j.params} for j in spec.jobs],
    }
    outdir.write_text(out / "sweep.json", json.dumps(plan, indent=2) + "\n")


# Columns of the combined tables that come from the results; a grid path with one of these names
# (`name`, the scenario's) is written `grid.<path>` in both tables.
RESULT_COLUMNS = frozenset(
    ("job", "hash", "jain_index", "events", "packets_sent", "packets_delivered", "packets_dropped", *SCHEMA["flows"])
)


def _grid_columns(params: dict[str, Any]) -> dict[str, Any]:
    """A job's grid values by column name, as table cells."""
    return {(f"grid.{k}" if k in RESULT_COLUMNS else k): _param_text(v) for k, v in params.items()}


def _combine(spec: SweepSpec, jobs_dir: Path, out: Path, whole: set[int]) -> list[Path]:
    """Writes jobs.csv and flows.csv from the jobs with whole results (indices `whole`), in grid order."""
    job_rows, flow_frames = [], []
    for job in spec.jobs:
        if job.index not in whole:
            continue
        folder = _job_dir(jobs_dir, job)
        key = {"job": job.index, "hash": job.hash[:16], **_grid_columns(job.params)}
        summary = json.loads((folder / "summary.json").read_text())
        row = dict(key)
        row.update(
            {k: summary[k] for k in ("jain_index", "events", "packets_sent", "packets_delivered", "packets_dropped")}
        )
        row.update({f"utilisation.{link}": u for link, u in summary["utilisation"].items()})
        job_rows.append(row)
        flows = pd.read_parquet(folder / "flows.parquet")
        for i, (column, value) in enumerate(key.items()):
            flows.insert(i, column, [value] * len(flows))
        flow_frames.append(flows)
    written = []
    for name, frame in (
        ("jobs", pd.DataFrame(job_rows)),
        ("flows", pd.concat(flow_frames, ignore_index=True) if flow_frames else pd.DataFrame()),
    ):
        path = out / f"{name}.csv"
        with outdir.replaced_file(path) as partial:
            frame.to_csv(partial, index=False)
        written.append(path)
    return written


# ---------------------------------------------------------------- the seeds taken together

# The grid path whose values are seeds: the jobs of one grid point differ only there.
SEED_PATH = "simulation.seed"


@dataclass
class GridSummary:
    """A sweep's jobs by grid point (the grid's values but the seed's): `table` has a row per
    point, in grid order: a column per axis (the value's label, `axis_labels`), `seeds` (jobs
    with results), then per metric (`metrics`: `jain_index`, `utilisation.<link>` of each
    monitored link, `<group>_mbps`, each flow group's goodput) its mean over the seeds, and
    `<metric> min`, `<metric> max`, `<metric> std` (0 for one seed)."""

    axes: list[str]
    metrics: list[str]
    table: pd.DataFrame

    def spread(self, point: int, metric: str) -> str:
        """`mean (min-max)` of a metric at a grid point (row), as `aqmlab sweep` and the report
        show it; the mean alone when every seed gives the same."""
        from .terminal import fmt

        row = self.table.iloc[point]
        low, high = fmt(row[f"{metric} min"]), fmt(row[f"{metric} max"])
        return fmt(row[metric]) + ("" if low == high else f" ({low}-{high})")


def grid_summary(out_dir: str | Path) -> GridSummary:
    """The jobs of a sweep's folder (its `sweep.json`, `jobs.csv`, `flows.csv`) taken together by
    grid point; the points without a finished job are left out. E.g.
    `grid_summary("out/sweep").table`."""
    out = Path(out_dir)
    plan = outdir.read_json(out / "sweep.json", ("grid", "jobs"))
    axes = [path for path in plan["grid"] if path != SEED_PATH]
    labels = _job_labels(plan)
    jobs = _read_or_empty(out / "jobs.csv")
    if jobs.empty:
        return GridSummary(axes, [], pd.DataFrame())
    flows = _read_or_empty(out / "flows.csv")
    per_job = jobs[["job", "jain_index", *(c for c in jobs.columns if c.startswith("utilisation."))]].copy()
    if not flows.empty:
        # Each flow's group as the core named it (the flows table's `group`).
        by_group = flows.pivot_table(index="job", columns="group", values="goodput_bps", aggfunc="sum", sort=False)
        per_job = per_job.join(by_group.div(MBPS).add_suffix("_mbps"), on="job")
    metrics = [c for c in per_job.columns if c != "job"]
    point_of = {job: tuple(label[path] for path in axes) for job, label in labels.items()}
    per_job["point"] = per_job["job"].map(point_of)
    rows = []
    for point in dict.fromkeys(point_of.values()):
        seeds = per_job[per_job["point"] == point]
        if seeds.empty:
            continue
        row: dict[str, Any] = dict(zip(axes, point, strict=True))
        row["seeds"] = len(seeds)
        for metric in metrics:
            values = seeds[metric]
            row[metric] = values.mean()
            row |= {f"{metric} min": values.min(), f"{metric} max": values.max(), f"{metric} std": values.std(ddof=0)}
        rows.append(row)
    return GridSummary(axes, metrics, pd.DataFrame(rows))


def labelled_jobs(out_dir: str | Path) -> pd.DataFrame:
    """`jobs.csv` of a sweep's folder with each grid value by its label (`axis_labels`), the hash
    last: the jobs as `aqmlab report` lists them."""
    out = Path(out_dir)
    plan = outdir.read_json(out / "sweep.json", ("grid", "jobs"))
    jobs = _read_or_empty(out / "jobs.csv")
    if jobs.empty:
        return jobs
    labels = _job_labels(plan)
    for path in plan["grid"]:
        column = f"grid.{path}" if path in RESULT_COLUMNS else path
        jobs[column] = [labels[job][path] for job in jobs["job"]]
    return jobs[[c for c in jobs.columns if c != "hash"] + ["hash"]]


def _job_labels(plan: dict[str, Any]) -> dict[int, dict[str, Any]]:
    """Each job's grid values by their labels (`axis_labels`), from `sweep.json`: job -> path -> label."""
    labels = {
        path: dict(zip(map(_canonical, values), axis_labels(values), strict=True))
        for path, values in plan["grid"].items()
    }
    return {
        job["job"]: {path: labels[path][_canonical(value)] for path, value in job["params"].items()}
        for job in plan["jobs"]
    }


def axis_labels(values: list[Any]) -> list[Any]:
    """Short labels of one grid axis's values: numbers and text as they are; tables by what
    differs between them (`limit_bytes=30KB`, a `type` by its name: `red min_th=5`); their
    compact JSON when that does not tell them apart."""
    if not all(isinstance(v, dict) for v in values) or len(values) < 2:
        return [_param_text(v) for v in values]
    keys = dict.fromkeys(k for v in values for k in v)
    differing = [k for k in keys if len({_canonical(v.get(k)) for v in values}) > 1]
    labels = [
        " ".join(str(v[k]) if k == "type" else f"{k}={_param_text(v[k])}" for k in differing if k in v) for v in values
    ]
    return labels if len(set(labels)) == len(labels) else [_param_text(v) for v in values]


def _canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True)


def _read_or_empty(path: Path) -> pd.DataFrame:
    """A combined table of a sweep (empty when no job has finished)."""
    try:
        return pd.read_csv(path)
    except (FileNotFoundError, pd.errors.EmptyDataError):
        return pd.DataFrame()
