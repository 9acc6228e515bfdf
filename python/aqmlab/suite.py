"""Every paper experiment at once (`aqmlab reproduce --all`).

Each experiment is one task on a local process pool or a Dask cluster (`aqmlab.workers`,
as a sweep's jobs are). Its results go to `OUT/<id>/`, as `aqmlab reproduce ID --out`
writes them, plus `wall_time.txt` and `manifest.json` (outdir.py); the folder appears whole
or not at all. Like a sweep, a rerun keeps what is done: an experiment whose folder holds
results of the same mode (quick or full) and aqmlab version that match their manifest is not
run again; one that fails the manifest runs again. An experiment that raises is kept in
`OUT/errors.json` (until it runs) and every other goes on. At the end `aqmlab.report`
writes each experiment's page and `OUT/index.html`.
"""

from __future__ import annotations

import contextlib
import json
import os
import time
import uuid
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from . import __version__, outdir
from .report.suite import ERRORS_FILE, write_suite_pages
from .workers import Cluster, run_tasks


@dataclass
class SuiteReport:
    ran: list[str]
    kept: list[str]
    errors: dict[str, str]
    written: list[Path]


def why_not_done(folder: Path, quick: bool) -> str | None:
    """Why `folder` does not hold whole results of this mode and aqmlab version (None if it does):
    no results, what fails their manifest, or another mode or version."""
    return outdir.verify(folder) or _other_run(folder, quick)


def _other_run(folder: Path, quick: bool) -> str | None:
    """What makes the whole results in `folder` those of another mode or version, if anything."""
    try:
        stored = outdir.read_json(folder / "experiment.json")
    except outdir.OutputError as e:  # listed in the manifest, so not there when it was written
        return str(e)
    if stored.get("aqmlab") != __version__:
        return f"results of aqmlab {stored.get('aqmlab')}"
    if stored.get("quick") != quick:
        return "results of the quick run" if stored.get("quick") else "results of the full run"
    return None


def pending_experiments(out_dir: str | Path, ids: Sequence[str], quick: bool) -> list[str]:
    """Those of `ids` without whole results of this mode in `out_dir`."""
    out = Path(out_dir)
    return [id for id in ids if why_not_done(out / id, quick) is not None]


def run_experiment(id: str, quick: bool, folder: str) -> float:
    """Runs experiment `id` and stores its results in `folder` with their manifest, whole or not
    at all (replacing results of another mode or version); returns its wall time. Runs in a
    worker process (local pool or Dask)."""
    from .experiments import get

    started = time.perf_counter()
    reproduction = get(id).run(quick=quick)
    wall = time.perf_counter() - started
    with outdir.atomic_folder(Path(folder), {"kind": "experiment", "experiment": id, "quick": quick}) as partial:
        reproduction.save(partial)
        (partial / "wall_time.txt").write_text(f"{wall:.3f}\n")
    return wall


class SuiteFolder:
    """The output folder of `reproduce --all`, held by this process (`open_suite`): which
    experiments must run and why; `run` runs them and writes the pages."""

    def __init__(self, out: Path, ids: Sequence[str], quick: bool):
        self.out, self.ids, self.quick = out, list(ids), quick
        damage = {id: outdir.verify(out / id) for id in ids}
        # Each experiment that must run, and why: no results, damage, or another mode or version.
        self.reasons = {id: reason for id in ids if (reason := damage[id] or _other_run(out / id, quick)) is not None}
        self.pending = [id for id in ids if id in self.reasons]
        self._damage = {id: reason for id, reason in damage.items() if reason not in (None, outdir.NO_RESULTS)}

    @property
    def total(self) -> int:
        return len(self.ids)

    def damaged(self) -> dict[str, str]:
        """Experiments whose folder fails its manifest (they run again): id → why."""
        return dict(self._damage)

    def run(
        self,
        workers: int | None = None,
        scheduler: str | Cluster | None = None,
        on_done: Callable[[str, float | None, str | None], None] | None = None,
    ) -> SuiteReport:
        """Runs the pending experiments, then writes the pages and the index (see `run_suite`)."""
        errors_path = self.out / ERRORS_FILE
        errors: dict[str, str] = outdir.read_json(errors_path) if errors_path.is_file() else {}
        ran: list[str] = []
        new_errors: dict[str, str] = {}

        def finished(id: str, wall: float | None, error: str | None) -> None:
            if error is None:
                ran.append(id)
                changed = errors.pop(id, None) is not None
            else:
                errors[id] = new_errors[id] = error
                changed = True
            if changed:
                _write_errors(errors_path, errors)
            if on_done is not None:
                on_done(id, wall, error)

        run_tasks(
            run_experiment,
            [(id, (id, self.quick, str(self.out / id))) for id in self.pending],
            finished,
            workers=workers or os.cpu_count() or 1,
            scheduler=scheduler,
            expected=(Exception,),
            dask_key=lambda id: f"aqmlab-experiment-{id}-{uuid.uuid4().hex[:8]}",
        )
        written = write_suite_pages(self.out)
        kept = [id for id in self.ids if id not in self.pending]
        return SuiteReport(sorted(ran), kept, new_errors, written)


@contextlib.contextmanager
def open_suite(
    out_dir: str | Path, ids: Sequence[str], quick: bool, wait: bool = False, say: outdir.Say | None = None
) -> Iterator[SuiteFolder]:
    """Takes `out_dir` for this suite within the block: its lock (`FolderBusy` if another process
    writes it, unless `wait`), checks it is a folder, removes what writers cut short left, and
    checks each experiment's results against their manifest."""
    out = Path(out_dir).resolve()
    with outdir.locked(out, wait, say):
        outdir.check_folder_path(out)
        outdir.remove_partials(out)
        yield SuiteFolder(out, ids, quick)


def run_suite(
    out_dir: str | Path,
    ids: Sequence[str],
    quick: bool,
    workers: int | None = None,
    scheduler: str | Cluster | None = None,
    on_done: Callable[[str, float | None, str | None], None] | None = None,
) -> SuiteReport:
    """Runs those of `ids` not done yet in `out_dir` (or whose results fail their manifest), then
    writes the pages and the index.

    `on_done(id, wall_time, error)` is called as each experiment ends. Experiments run on
    `workers` local processes (default: one per core) or on the Dask cluster at `scheduler`
    (its workers must see `out_dir` at the same path).
    """
    with open_suite(out_dir, ids, quick) as folder:
        return folder.run(workers, scheduler, on_done)


def _write_errors(path: Path, errors: dict[str, str]) -> None:
    """Keeps the experiments that raised (id → message); no file when none did."""
    if errors:
        outdir.write_text(path, json.dumps(dict(sorted(errors.items())), indent=2) + "\n")
    else:
        path.unlink(missing_ok=True)
