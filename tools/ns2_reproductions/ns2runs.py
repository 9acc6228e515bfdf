"""Running ns-2 scripts copied from an ns-2.35 source tree and recording rows for the toolkit
(python/aqmlab/experiments/ns2_reference/<id>.json; docs/ns2-reproductions.md).

Nothing of ns-2 is kept in this repository: the scripts are copied from $NS2_SRC into a work
directory and changed there by a driver's patches (each states why). Every ns run is a `Job`
with its own directory; a job whose directory records the same command as done is not run
again, so `--work DIR` resumes an interrupted regeneration. At most `--jobs` ns processes run at once. Standard
library only: this runs where ns-2 is installed, without the project's environment.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import datetime
import json
import math
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
OUT = REPO / "python" / "aqmlab" / "experiments" / "ns2_reference"
COMMAND = "make ns2-reproductions NS2_SRC=/path/to/ns-2.35-source"
# The runs of ours a reference measures alike: an experiment's full run, and its quick run too
# where that is the same run (same window, rates and flows).
FULL_ONLY = ("full",)
FULL_AND_QUICK = ("full", "quick")


@dataclass(frozen=True)
class Patch:
    """Our edit to a copied script: `old` (which must occur) becomes `new`, for `why`."""

    file: str
    old: str
    new: str
    why: str


@dataclass(frozen=True)
class Job:
    """One ns run of the script with `args` and `seed` (and `env`, variables a patch reads)."""

    name: str
    args: tuple[str, ...]
    seed: int
    env: tuple[tuple[str, str], ...] = ()

    @property
    def directory(self) -> str:
        return f"{self.name}.seed{self.seed}"


EVENT = re.compile(
    r"(?P<time>[\d.e+-]+) \(\d+\) \{Monitor: (?P<event>Monitoring|Unmonitoring|Declaring)"
    r"(?: unresponsive flow)? _o\d+ (?P<fid>\d+)"
)


@dataclass
class Run:
    """A finished job's outputs: the flows file (cumulative bytes that left the monitored link,
    per flow id, at each dump time) and ns's stdout (the RED-PD engine's log)."""

    flows: dict[float, dict[int, int]]
    log: list[str]

    def bytes_at(self, fid: int, time: float) -> int:
        if time == 0:
            return 0
        at = self.flows.get(round(time, 6))
        if at is None:
            raise ValueError(f"no flow dump at t = {time:g} s")
        return at.get(fid, 0)  # the scripts print only flows with bytes > 0

    def mbps(self, fid: int, start: float, end: float) -> float:
        """Flow `fid`'s bytes leaving the link in [start, end], in Mb/s."""
        return (self.bytes_at(fid, end) - self.bytes_at(fid, start)) * 8 / (end - start) / 1e6

    def binned_bps(self, fid: int, start: float, end: float) -> list[tuple[float, float]]:
        """(bin start, b/s) for each dump interval in [start, end]."""
        times = sorted(t for t in self.flows if start <= t <= end)
        return [
            (a, (self.bytes_at(fid, b) - self.bytes_at(fid, a)) * 8 / (b - a))
            for a, b in zip(times, times[1:], strict=False)
        ]

    def ambient_drop_rate(self, start: float = 0.0, end: float = math.inf) -> float:
        """The output queue's drops over its arrivals in the engine's intervals ending in
        (start, end]: their `bdrops` and `barrivals` (pre-filter drops taken out of both)
        summed, as the authors' allTCP.pl computes its drop rate over a run."""
        dropped = arrived = 0
        for line in self.log:
            if "currDropRate:" in line:
                fields = line.replace("}", " ").split()
                if not start < float(fields[0]) <= end:
                    continue
                dropped += int(fields[fields.index("bdrops:") + 1])
                arrived += int(fields[fields.index("barrivals:") + 1])
        return dropped / arrived

    def events(self, fid: int) -> list[tuple[float, str]]:
        """(time, "Monitoring" | "Unmonitoring" | "Declaring") of flow `fid`, in log order."""
        found = []
        for line in self.log:
            match = EVENT.match(line)
            if match and int(match["fid"]) == fid:
                found.append((float(match["time"]), match["event"]))
        return found

    def monitored_seconds(self, fid: int, end: float) -> float:
        """Seconds in [0, end] that flow `fid` spent monitored."""
        total, since = 0.0, None
        for time, event in self.events(fid):
            if time > end:
                break
            if event == "Monitoring" and since is None:
                since = time
            elif event == "Unmonitoring" and since is not None:
                total, since = total + time - since, None
        return total + (end - since if since is not None else 0.0)


def read_run(directory: Path) -> Run:
    flows: dict[float, dict[int, int]] = {}
    (path,) = directory.glob("*.flows")
    for line in path.read_text().splitlines():
        _, time, _, fid, _, count, _ = line.split()
        flows.setdefault(round(float(time), 6), {})[int(fid)] = int(count)
    return Run(flows, (directory / "stdout").read_text().splitlines())


Rows = Callable[[dict[str, Run]], dict[str, object]]


@dataclass
class Experiment:
    """A reproduction's jobs (name -> args, run once per seed) and its rows. `rows` gets one
    seed's runs by job name and returns {row key: value}; a key "<row key>|<label>" is another
    reading of that row (the script's window or setting), reported in the row's note."""

    id: str
    script: str
    changes: str
    seeds: tuple[int, ...]
    jobs: dict[str, tuple[str, ...]]
    rows: Rows
    notes: dict[str, str]
    ordered: frozenset[str] = frozenset()
    env: dict[str, dict[str, str]] = field(default_factory=dict)  # by job name, for a patch to read
    modes: tuple[str, ...] = FULL_ONLY

    def job(self, name: str, seed: int) -> Job:
        return Job(name, self.jobs[name], seed, tuple(sorted(self.env.get(name, {}).items())))


def combine(values: list[object], ordered: bool) -> dict[str, object]:
    """A row's value over seeds: the mean (entry-wise for an ordered row's groups), with half the
    range as `spread` for a numeric row of more than one seed."""
    if ordered:
        groups: list[object] = []
        for parts in zip(*values, strict=True):  # type: ignore[call-overload]
            if isinstance(parts[0], dict):
                groups.append({name: round(statistics.fmean(p[name] for p in parts), 4) for name in parts[0]})
            else:
                groups.append(round(statistics.fmean(float(p) for p in parts), 4))
        return {"value": groups}
    numbers = [float(v) for v in values]  # type: ignore[arg-type]
    entry: dict[str, object] = {"value": round(statistics.fmean(numbers), 4)}
    if len(numbers) > 1:
        entry["spread"] = round((max(numbers) - min(numbers)) / 2, 4)
    return entry


def shown(value: object) -> str:
    if isinstance(value, list):
        return " / ".join(shown(v) for v in value)
    if isinstance(value, dict):
        return " / ".join(f"{name} {shown(v)}" for name, v in value.items())
    return f"{float(value):.3g}"  # type: ignore[arg-type]


def summary(values: list[object], ordered: bool) -> str:
    entry = combine(values, ordered)
    text = shown(entry["value"])
    return f"{text} ± {entry['spread']:.2g}" if "spread" in entry else text


def record(experiment: Experiment, work: Path, version: str, driver: str) -> dict[str, object]:
    per_seed: dict[str, list[object]] = {}
    for seed in experiment.seeds:
        runs = {name: read_run(work / experiment.job(name, seed).directory) for name in experiment.jobs}
        for key, value in experiment.rows(runs).items():
            per_seed.setdefault(key, []).append(value)
    return reference(
        experiment.id,
        version,
        f"{experiment.script} (the RED-PD authors'), as run by {driver}: {experiment.changes}",
        experiment.seeds,
        experiment.modes,
        rows_of(per_seed, experiment.notes, experiment.ordered, experiment.id),
    )


def rows_of(
    per_seed: dict[str, list[object]], notes: dict[str, str], ordered_keys: frozenset[str], id: str
) -> dict[str, dict[str, object]]:
    """The recorded rows from each row's per-seed values: the combined value and a note (the row's
    own or "*", the per-seed values, and each other reading "<key>|<label>" of the row)."""
    rows: dict[str, dict[str, object]] = {}
    for key, values in per_seed.items():
        if "|" in key:
            continue
        ordered = key in ordered_keys
        if not ordered and not all(math.isfinite(float(v)) for v in values):  # type: ignore[arg-type]
            print(f"ns2-reproductions: {id} {key}: not reached in every seed {values}; not recorded", file=sys.stderr)
            continue
        parts = [notes.get(key, notes.get("*", ""))]
        if len(values) > 1:
            parts.append(f"per seed {'; '.join(shown(v) for v in values)}")
        parts += [
            f"{other.split('|', 1)[1]}: {summary(others, ordered)}"
            for other, others in per_seed.items()
            if other.startswith(f"{key}|")
        ]
        rows[key] = {**combine(values, ordered), "note": "; ".join(p for p in parts if p)}
    return rows


def reference(
    id: str,
    version: str,
    script: str,
    seeds: Sequence[int],
    modes: Sequence[str],
    rows: dict[str, dict[str, object]],
    not_in_ns2: dict[str, str] | None = None,
    command: str = COMMAND,
) -> dict[str, object]:
    """An experiment's recorded file (docs/ns2-reproductions.md): `rows` by key, and the rows
    ns-2 cannot measure with why (`not_in_ns2`, e.g. a mechanism ns-2.35 lacks)."""
    data: dict[str, object] = {
        "experiment": id,
        "ns2": version,
        "script": script,
        "command": command,
        "date": datetime.date.today().isoformat(),
        "seeds": list(seeds),
        "modes": list(modes),
        "rows": rows,
    }
    return data | ({"not_in_ns2": not_in_ns2} if not_in_ns2 else {})


def prepare(source: Path, scripts_dir: Path, patches: Sequence[Patch], work: Path) -> Path:
    """Copies the scripts (source/scripts_dir/*.tcl) into work/scripts and applies `patches`."""
    scripts = work / "scripts"
    scripts.mkdir(parents=True, exist_ok=True)
    for tcl in (source / scripts_dir).glob("*.tcl"):
        shutil.copy(tcl, scripts / tcl.name)
    for patch in patches:
        path = scripts / patch.file
        text = path.read_text()
        if patch.old not in text:
            raise SystemExit(f"error: {path}: the text our patch replaces is not there (not ns-2.35's scripts?)")
        path.write_text(text.replace(patch.old, patch.new))
    return scripts


def run_job(job: Job, script: str, scripts: Path, work: Path) -> None:
    directory = work / job.directory
    command = ["ns", script, *job.args, "seed", str(job.seed)]
    line = " ".join([*(f"{k}={v}" for k, v in job.env), *command])
    done = directory / "done"  # the command line of a run that exited 0
    if done.exists() and done.read_text() == line:
        return
    directory.mkdir(parents=True, exist_ok=True)
    for tcl in scripts.glob("*.tcl"):
        target = directory / tcl.name
        if not target.exists():
            target.symlink_to(tcl)
    print(f"ns2-reproductions: {job.directory}: {line}", file=sys.stderr)
    env = {**os.environ, **dict(job.env)}
    with open(directory / "stdout", "w") as out, open(directory / "stderr", "w") as err:
        status = subprocess.run(command, cwd=directory, env=env, stdout=out, stderr=err, check=False).returncode
    if status != 0:
        raise RuntimeError(f"{job.directory}: ns exited {status}; see {directory / 'stderr'}")
    done.write_text(line)


def ns2_version() -> str:
    try:
        package = subprocess.run(
            ["dpkg-query", "-W", "-f", "${Version}", "ns2"], capture_output=True, text=True, check=True
        ).stdout
    except (OSError, subprocess.CalledProcessError):
        return "ns-2.35"
    return f"ns-2.35 (Debian package ns2 {package})"


def main(
    experiments: Sequence[Experiment],
    scripts_dir: Path,
    script: str,
    patches: Sequence[Patch],
    driver: str,
    argv: Sequence[str] | None = None,
) -> int:
    parser = argparse.ArgumentParser(description=f"Runs {scripts_dir} in ns-2 and records the rows ns-2 measures.")
    parser.add_argument("--only", nargs="+", metavar="ID", help="experiment ids (default: all)")
    parser.add_argument("--work", type=Path, help="work directory to keep and resume (default: a temporary one)")
    parser.add_argument("--jobs", type=int, default=2, help="ns processes at once (default 2)")
    parser.add_argument("--run-only", action="store_true", help="run the jobs, write nothing")
    args = parser.parse_args(argv)
    source = os.environ.get("NS2_SRC", "")
    if not source or not (Path(source) / scripts_dir / script).is_file():
        print(
            f"error: NS2_SRC must name an ns-2.35 source tree with {scripts_dir / script}; got {source!r}",
            file=sys.stderr,
        )
        return 2
    if shutil.which("ns") is None:
        print("error: ns (ns-2.35) is not on PATH; install it (Debian, Ubuntu: apt-get install ns2)", file=sys.stderr)
        return 2
    known = {e.id for e in experiments}
    unknown = sorted(set(args.only or ()) - known)
    if unknown:
        print(f"error: --only: unknown experiment(s) {unknown}; known: {sorted(known)}", file=sys.stderr)
        return 2
    chosen = [e for e in experiments if not args.only or e.id in args.only]
    work = args.work or Path(tempfile.mkdtemp(prefix="ns2-reproductions-"))
    scripts = prepare(Path(source), scripts_dir, patches, work)
    # In the experiments' order (the cheap ones first), each job once.
    jobs = dict.fromkeys(e.job(name, seed) for e in chosen for seed in e.seeds for name in e.jobs)
    with concurrent.futures.ThreadPoolExecutor(max_workers=args.jobs) as pool:
        futures = [pool.submit(run_job, job, script, scripts, work) for job in jobs]
        for future in concurrent.futures.as_completed(futures):
            future.result()
    if args.run_only:
        return 0
    version = ns2_version()
    OUT.mkdir(parents=True, exist_ok=True)
    for experiment in chosen:
        path = OUT / f"{experiment.id}.json"
        path.write_text(json.dumps(record(experiment, work, version, driver), indent=2, ensure_ascii=False) + "\n")
        print(f"ns2-reproductions: wrote {path.relative_to(REPO)}", file=sys.stderr)
    return 0
