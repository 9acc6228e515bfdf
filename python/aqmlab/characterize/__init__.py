"""`aqmlab characterize`: the tests of RFC 7928 for any mechanism, built-in or your own.

    >>> from aqmlab.characterize import characterize
    >>> done = characterize(["red", "codel"], quick=True, only=["5.1.1"], out="out/char")
    >>> done.summary()[0]["5.1.1"]          # RED's median queueing delay in §5.1.1, ms

Each test of RFC 7928 is one scenario family (rfc7928.py: its section, what it tests and
varies, its settings and their sources) on the network of network.py (the ns-3 AQM Evaluation
Suite's). A cell is one test case under one mechanism; each runs as one task on local processes
or a Dask cluster (`aqmlab.workers`), its metrics (metrics.py) written to
`OUT/cells/<section>/<case>/<mechanism>/cell.json` whole or not at all, with its manifest
(outdir.py). A rerun keeps every cell whose folder matches its manifest and holds the same
scenario under the same aqmlab version, so a run cut short resumes; one writer per folder. At
the end `OUT/characterize.json` holds every test and number (what `--json` prints) and
report.py writes `OUT/index.html` and a page per test.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import time
import uuid
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from .. import outdir
from .._core import MechanismError, ScenarioError, __version__
from ..mechanisms import describe
from ..scenario import Scenario
from ..workers import Cluster, run_tasks
from . import ns3
from .network import qdisc_for
from .rfc7928 import BY_SECTION, SECTIONS, TESTS, Case, Test

SUMMARY_FILE = "characterize.json"
ERRORS_FILE = "errors.json"
CELL_FILE = "cell.json"


class CellError(RuntimeError):
    """A cell's run failed in a queue discipline written in Python (the message says where, with
    the user's own traceback)."""


def slug(name: str) -> str:
    """A mechanism's or case's name as a folder name."""
    return re.sub(r"[^A-Za-z0-9_.=-]+", "_", name).strip("_") or "_"


@dataclass(frozen=True)
class Cell:
    """One test case under one mechanism, and the scenario it runs."""

    test: Test
    case: Case
    mechanism: str
    scenario: Scenario
    # What the cell could not do as the test asks (e.g. a mechanism that cannot mark for §4.5).
    note: str = ""
    # The scenario's seed: 1, or another for the runs that measure our seed-to-seed spread where
    # ns-3 has the cell (ns3.py).
    seed: int = 1

    @property
    def key(self) -> str:
        return cell_key(self.test.section, self.case.name, self.mechanism, self.seed)

    def folder(self, out: Path) -> Path:
        name = slug(self.mechanism) + ("" if self.seed == 1 else f"@seed{self.seed}")
        return out / "cells" / self.test.section / slug(self.case.name) / name


def cell_key(section: str, case: str, mechanism: str, seed: int = 1) -> str:
    """How a cell is named in `errors` and by the progress: `5.1.1/newreno/red`, `.../red/seed2`."""
    return f"{section}/{case}/{mechanism}" + (f"/seed{seed}" if seed != 1 else "")


def select(only: Sequence[str] | None) -> list[Test]:
    """The tests of `only` (their sections, e.g. "5.1.1", or a prefix of whole parts: "8.2" is
    8.2.2–8.2.6), in the RFC's order; every test when None. ScenarioError naming an unknown one."""
    if not only:
        return list(TESTS)
    chosen = set()
    for given in only:
        matching = [s for s in SECTIONS if s == given or s.startswith(f"{given}.")]
        if not matching:
            raise ScenarioError(f"--only: no RFC 7928 test {given!r} (tests: {', '.join(SECTIONS)})")
        chosen.update(matching)
    return [test for test in TESTS if test.section in chosen]


def plan(mechanisms: Sequence[str], quick: bool, tests: Sequence[Test]) -> list[Cell]:
    """Every cell of `tests` under each of `mechanisms`, its scenario built and checked; a
    ScenarioError names the mechanism, test and case of a scenario the core refuses."""
    if not mechanisms:
        raise ScenarioError("mechanisms: give at least one")
    cells = []
    for mechanism in mechanisms:
        for test in tests:
            for case in test.cases(quick):
                try:
                    qdisc = qdisc_for(mechanism, case.buffer_packets)
                    cell = _cell(test, case, mechanism, qdisc, quick)
                except ScenarioError as e:
                    raise ScenarioError(f"mechanism {mechanism!r}, test {test.section} ({case.name}): {e}") from None
                cells.append(cell)
                # Where ns-3 has the cell, more seeds give our spread to grade agreement by.
                if not quick and ns3.has_cell(test.section, case.name, mechanism):
                    cells += [
                        replace(cell, seed=seed, scenario=cell.scenario.with_seed(seed)) for seed in ns3.OUR_SEEDS[1:]
                    ]
    return cells


def _cell(test: Test, case: Case, mechanism: str, qdisc: dict[str, Any], quick: bool) -> Cell:
    duration = test.duration(quick)
    scenario = Scenario.from_dict(case.scenario(qdisc, duration, test.section, mark=case.ecn))
    try:
        return Cell(test, case, mechanism, scenario.validate())
    except ScenarioError as e:
        if not case.ecn or "ecn" not in str(e):
            raise
    # The core refuses `ecn` for a discipline that cannot mark: it drops, as without ECN.
    plain = Scenario.from_dict(case.scenario(qdisc, duration, test.section, mark=False))
    return Cell(test, case, mechanism, plain.validate(), note="cannot mark: drops")


def run_cell(scenario_json: str, about: dict[str, Any], folder: str) -> dict[str, Any]:
    """Runs one cell's scenario and stores its metrics in `folder` (whole or not at all); returns
    them. Runs in a worker process (local pool or Dask)."""
    from .. import run
    from .metrics import cell_metrics

    started = time.perf_counter()
    try:
        results = run(Scenario.from_dict(json.loads(scenario_json)))
    except MechanismError as e:
        # A queue discipline written in Python failed: its message and the user's own traceback.
        from ..python_qdisc import failure_text

        raise CellError(failure_text(e)) from None
    metrics = cell_metrics(results, float(about["bin_s"]), about["link"], float(about["min_rtt_s"]))
    metrics["wall_s"] = round(time.perf_counter() - started, 3)
    with outdir.atomic_folder(Path(folder), {"kind": "characterize-cell", **about}) as partial:
        (partial / CELL_FILE).write_text(json.dumps({**about, "metrics": metrics}, allow_nan=True) + "\n")
        (partial / "scenario.json").write_text(scenario_json + "\n")
    return metrics


def _about(cell: Cell, quick: bool) -> dict[str, Any]:
    return {
        "aqmlab": __version__,
        "quick": quick,
        "section": cell.test.section,
        "case": cell.case.name,
        "mechanism": cell.mechanism,
        "scenario_digest": cell.scenario.digest(),
        "bin_s": cell.scenario.get("simulation.throughput_bin"),
        "link": cell.case.link,
        "min_rtt_s": cell.case.min_rtt_s,
        "note": cell.note,
    }


def _stored(folder: Path, about: Mapping[str, Any]) -> dict[str, Any] | str:
    """The metrics kept in `folder` when they are whole and of this very cell, else why not."""
    reason = outdir.verify(folder)
    if reason is not None:
        return reason
    try:
        stored = outdir.read_json(folder / CELL_FILE, required=("metrics",))
    except outdir.OutputError as e:
        return str(e)
    for key in ("aqmlab", "scenario_digest"):
        if stored.get(key) != about[key]:
            return "results of another aqmlab version" if key == "aqmlab" else "results of another scenario"
    return stored["metrics"]


class CharacterizeFolder:
    """The output folder of one `characterize`, held by this process (`open_folder`): which cells
    must run and why; `run` runs them and writes the summary and the pages."""

    def __init__(self, out: Path, mechanisms: Sequence[str], tests: Sequence[Test], quick: bool):
        self.out, self.mechanisms, self.tests, self.quick = out, list(mechanisms), list(tests), quick
        self.cells = plan(mechanisms, quick, tests)
        self.metrics: dict[str, dict[str, Any]] = {}
        self.reasons: dict[str, str] = {}
        for cell in self.cells:
            kept = _stored(cell.folder(out), _about(cell, quick))
            if isinstance(kept, str):
                self.reasons[cell.key] = kept
            else:
                self.metrics[cell.key] = kept
        self.pending = [cell for cell in self.cells if cell.key in self.reasons]

    @property
    def total(self) -> int:
        return len(self.cells)

    def damaged(self) -> dict[str, str]:
        """Cells whose folder fails its manifest (they run again): key → why."""
        return {key: why for key, why in self.reasons.items() if why != outdir.NO_RESULTS}

    def run(
        self,
        workers: int | None = None,
        scheduler: str | Cluster | None = None,
        on_done: Callable[[str, float | None, str | None], None] | None = None,
    ) -> Characterization:
        """Runs the pending cells, then writes `characterize.json` and the pages."""
        errors: dict[str, str] = {}
        by_key = {cell.key: cell for cell in self.cells}

        def finished(key: str, metrics: dict[str, Any] | None, error: str | None) -> None:
            if error is None and metrics is not None:
                self.metrics[key] = metrics
            else:
                errors[key] = error or "no result"
            if on_done is not None:
                on_done(key, metrics["wall_s"] if metrics else None, error)

        run_tasks(
            run_cell,
            [
                (cell.key, (cell.scenario.to_json(), _about(cell, self.quick), str(cell.folder(self.out))))
                for cell in self.pending
            ],
            finished,
            workers=workers or os.cpu_count() or 1,
            scheduler=scheduler,
            expected=(ScenarioError, CellError),
            dask_key=lambda key: f"aqmlab-characterize-{slug(key)}-{uuid.uuid4().hex[:8]}",
        )
        done = Characterization(self.mechanisms, self.tests, self.quick, by_key, self.metrics, errors)
        outdir.write_text(self.out / SUMMARY_FILE, json.dumps(done.to_dict(), indent=1, allow_nan=False) + "\n")
        errors_path = self.out / ERRORS_FILE
        if errors:
            outdir.write_text(errors_path, json.dumps(errors, indent=2, sort_keys=True) + "\n")
        else:
            errors_path.unlink(missing_ok=True)
        from .report import write_pages

        done.written = write_pages(self.out, done.to_dict(), workers or os.cpu_count() or 1)
        return done


@contextlib.contextmanager
def open_folder(
    out_dir: str | Path,
    mechanisms: Sequence[str],
    quick: bool,
    only: Sequence[str] | None = None,
    wait: bool = False,
    say: outdir.Say | None = None,
) -> Iterator[CharacterizeFolder]:
    """Takes `out_dir` within the block (its lock: `FolderBusy` if another process writes it,
    unless `wait`), removes what writers cut short left, and checks each cell's results."""
    out = Path(out_dir).resolve()
    tests = select(only)
    with outdir.locked(out, wait, say):
        outdir.check_folder_path(out)
        (out / "cells").mkdir(parents=True, exist_ok=True)
        # A cell's partial folder lies beside its place: in its case's folder.
        for case_folder in (out / "cells").glob("*/*"):
            outdir.remove_partials(case_folder)
        yield CharacterizeFolder(out, mechanisms, tests, quick)


def characterize(
    mechanisms: Sequence[str],
    quick: bool = False,
    only: Sequence[str] | None = None,
    out: str | Path = "out/characterize",
    workers: int | None = None,
    scheduler: str | Cluster | None = None,
) -> Characterization:
    """Runs the RFC 7928 tests (`only`: their sections; all by default) for each of `mechanisms`
    (as `aqmlab compare` takes them), keeping what `out` already holds; returns them all."""
    with open_folder(out, mechanisms, quick, only) as folder:
        return folder.run(workers, scheduler)


@dataclass
class Characterization:
    """Every cell's metrics, by test, case and mechanism, with the tests' figures of merit."""

    mechanisms: list[str]
    tests: list[Test]
    quick: bool
    cells: dict[str, Cell]
    metrics: dict[str, dict[str, Any]]
    errors: dict[str, str]
    written: list[Path] | None = None

    def merit(self, test: Test, mechanism: str) -> float | list[float] | None:
        """The test's figure of merit for `mechanism` (a number, or [goodput, delay] for a
        trade-off), None when a cell of it did not run."""
        cases = {
            case.name: self.metrics.get(cell_key(test.section, case.name, mechanism)) for case in test.cases(self.quick)
        }
        if any(metrics is None for metrics in cases.values()):
            return None
        value = test.merit.of(cases)
        return [float(v) for v in value] if isinstance(value, list) else float(value)

    def summary(self) -> list[dict[str, Any]]:
        """One row per mechanism: its figure of merit in each test, by section."""
        return [{"mechanism": m, **{test.section: self.merit(test, m) for test in self.tests}} for m in self.mechanisms]

    def to_dict(self) -> dict[str, Any]:
        """What `characterize.json` and `--json` hold: every test with its section as a string,
        its cases and their cells' numbers, and the summary."""
        tests = []
        for test in self.tests:
            cases = []
            for case in test.cases(self.quick):
                cells = {}
                for m in self.mechanisms:
                    key = cell_key(test.section, case.name, m)
                    cell = self.cells[key]
                    entry: dict[str, Any] = {"qdisc": cell.scenario.qdisc(cell.case.link), "note": cell.note}
                    if key in self.metrics:
                        entry.update(self.metrics[key])
                        seeds = [self.metrics.get(cell_key(test.section, case.name, m, n)) for n in ns3.OUR_SEEDS]
                        udp = [
                            flow["type"] == "cbr"
                            for flow in cell.scenario.get("flows")
                            for _ in range(flow.get("count", 1))
                        ]
                        if (compared := ns3.compare(test.section, case.name, m, udp, seeds, self.quick)) is not None:
                            entry["ns3"] = compared
                    else:
                        entry["error"] = self.errors.get(key, "not run")
                    cells[m] = entry
                cases.append({"name": case.name, "label": case.label, "cells": cells})
            tests.append(
                {
                    "section": test.section,
                    "title": test.title,
                    "purpose": test.purpose,
                    "varies": test.varies,
                    "settings": test.settings,
                    "duration_s": test.duration(self.quick),
                    "merit": {"label": test.merit.label, "unit": test.merit.unit, "better": test.merit.better},
                    "cases": cases,
                }
            )
        return _finite(
            {
                "aqmlab": __version__,
                "quick": self.quick,
                "mechanisms": [
                    {"name": m, "label": describe(m).label, "colour": describe(m).colour} for m in self.mechanisms
                ],
                "tests": tests,
                "summary": self.summary(),
                "errors": dict(sorted(self.errors.items())),
            }
        )


def merit_text(value: float | list[float] | None, unit: str) -> str:
    """A figure of merit as the summary shows it, with its unit unless `unit` is "" (a trade-off:
    `0.83 Mbps / 6.6 ms`)."""
    if isinstance(value, list):
        units = [u.strip() for u in unit.split(",")] if unit else ["", ""]
        return (" / " if unit else "/").join(_merit_number(v, u) for v, u in zip(value, units, strict=True))
    return _merit_number(value, unit)


def _merit_number(value: float | None, unit: str) -> str:
    if value is None or value != value:
        return "-"
    return f"{value:.3g}" if unit in ("", "ratio", "fraction") else f"{value:.3g} {unit}"


def _finite(value: Any) -> Any:
    """NaN (a figure without a sample) as null, so that the JSON is standard."""
    if isinstance(value, float):
        return value if value == value and value not in (float("inf"), float("-inf")) else None
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_finite(v) for v in value]
    return value


__all__ = ["BY_SECTION", "SECTIONS", "TESTS", "Characterization", "characterize", "open_folder", "select"]
