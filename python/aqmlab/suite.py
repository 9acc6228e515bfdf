"""Every paper experiment at once (`aqmlab reproduce --all`).

Each experiment is one task on a local process pool or a Dask cluster (`aqmlab.workers`,
as a sweep's jobs are). Its results go to `OUT/<id>/`, as `aqmlab reproduce ID --out`
writes them, plus `wall_time.txt`; the folder appears whole or not at all. Like a sweep,
a rerun keeps what is done: an experiment whose folder holds results of the same mode
(quick or full) and aqmlab version is not run again. An experiment that raises is kept in
`OUT/errors.json` (until it runs) and every other goes on. At the end `aqmlab.report`
writes each experiment's page and `OUT/index.html`.
"""

from __future__ import annotations

import json
import os
import shutil
import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from . import __version__
from .report import ERRORS_FILE, write_suite_pages
from .workers import run_tasks


@dataclass
class SuiteReport:
    ran: list[str]
    kept: list[str]
    errors: dict[str, str]
    written: list[Path]


def is_done(folder: Path, quick: bool) -> bool:
    """Whether `folder` holds an experiment's results of this mode and aqmlab version."""
    about = folder / "experiment.json"
    if not (about.is_file() and (folder / "rows.json").is_file()):
        return False
    stored = json.loads(about.read_text())
    return stored.get("quick") == quick and stored.get("aqmlab") == __version__


def pending_experiments(out_dir: str | Path, ids: Sequence[str], quick: bool) -> list[str]:
    """Those of `ids` without results of this mode in `out_dir`."""
    out = Path(out_dir)
    return [id for id in ids if not is_done(out / id, quick)]


def run_experiment(id: str, quick: bool, folder: str) -> float:
    """Runs experiment `id` and stores its results in `folder` (replacing results of another
    mode or version); returns its wall time. Runs in a worker process (local pool or Dask)."""
    from .experiments import get

    started = time.perf_counter()
    reproduction = get(id).run(quick=quick)
    wall = time.perf_counter() - started
    final = Path(folder)
    partial = final.with_name(f"{final.name}.partial-{uuid.uuid4().hex}")
    reproduction.save(partial)
    (partial / "wall_time.txt").write_text(f"{wall:.3f}\n")
    if final.exists():
        shutil.rmtree(final)
    os.rename(partial, final)
    return wall


def run_suite(
    out_dir: str | Path,
    ids: Sequence[str],
    quick: bool,
    workers: int | None = None,
    scheduler: str | None = None,
    on_done: Callable[[str, float | None, str | None], None] | None = None,
) -> SuiteReport:
    """Runs those of `ids` not done yet in `out_dir`, then writes the pages and the index.

    `on_done(id, wall_time, error)` is called as each experiment ends. Experiments run on
    `workers` local processes (default: one per core) or on the Dask cluster at `scheduler`
    (its workers must see `out_dir` at the same path).
    """
    out = Path(out_dir).resolve()
    out.mkdir(parents=True, exist_ok=True)
    for stale in out.glob("*.partial-*"):  # left by an interrupted run
        shutil.rmtree(stale, ignore_errors=True)
    pending = pending_experiments(out, ids, quick)
    errors_path = out / ERRORS_FILE
    errors: dict[str, str] = json.loads(errors_path.read_text()) if errors_path.is_file() else {}
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
        [(id, (id, quick, str(out / id))) for id in pending],
        finished,
        workers=workers or os.cpu_count() or 1,
        scheduler=scheduler,
        expected=(Exception,),
        dask_key=lambda id: f"aqmlab-experiment-{id}-{uuid.uuid4().hex[:8]}",
    )
    written = write_suite_pages(out)
    kept = [id for id in ids if id not in pending]
    return SuiteReport(sorted(ran), kept, new_errors, written)


def _write_errors(path: Path, errors: dict[str, str]) -> None:
    """Keeps the experiments that raised (id → message); no file when none did."""
    if errors:
        path.write_text(json.dumps(dict(sorted(errors.items())), indent=2) + "\n")
    else:
        path.unlink(missing_ok=True)
