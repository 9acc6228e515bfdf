"""`aqmlab reproduce`: one paper experiment (paper vs ours), the list, or all of them (`--all`)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer

from .. import compare as comparison
from .. import reporting, terminal
from .._core import ScenarioError
from ..experiments import Ns2ReferenceError, get, not_reproduced_list, registry
from ..outdir import OutputError, result_folder
from ..progress import RunProgress
from ..suite import open_suite
from ..workers import CONNECT_TIMEOUT_S, WORKER_TIMEOUT_S, Cluster
from ._common import (
    ConnectTimeoutOption,
    ForceOption,
    WaitOption,
    WorkerTimeoutOption,
    command_app,
    command_help,
    console,
    fail,
    interrupted,
    print_json,
    run_jobs,
    say,
)

app = command_app()


@app.command(
    help=command_help(
        "reproduce",
        "Prints a table of metric / paper / ours / tolerance / pass and saves a figure and the data. Exits "
        "with status 1 if any row fails. `demo` is the CSFQ Fig. 3(b) comparison (what `make demo` runs).\n\n"
        "With --all, runs every experiment (on --workers local processes or a Dask cluster at --scheduler) "
        "into OUT/<id>/ and writes OUT/index.html: one row per experiment with its rows passing and a link to "
        "its page (paper vs ours, figure, notes). Finished experiments are kept: rerunning resumes.",
    )
)
def reproduce(
    id: Annotated[str | None, typer.Argument(help="Experiment id (see --list).")] = None,
    list_: Annotated[bool, typer.Option("--list", help="List the experiments and exit.")] = False,
    all_: Annotated[bool, typer.Option("--all", help="Run every experiment and write OUT/index.html.")] = False,
    only: Annotated[
        str | None, typer.Option("--only", help="With --all: run only these experiments (comma-separated ids).")
    ] = None,
    workers: Annotated[
        int | None, typer.Option("--workers", help="With --all: local processes (default: one per core).", min=1)
    ] = None,
    scheduler: Annotated[
        str | None, typer.Option("--scheduler", help="With --all: Dask scheduler address (e.g. tcp://host:8786).")
    ] = None,
    quick: Annotated[bool, typer.Option("--quick", help="Shorter runs that still check every row.")] = False,
    json_output: Annotated[
        bool,
        typer.Option("--json", help='Print {"id", "title", "passed", "rows": [...]} as one JSON object on stdout.'),
    ] = False,
    out: Annotated[
        Path | None,
        typer.Option(
            "--out", "-o", help="Folder for the figure, data and rows.json (default: out/ID; --all: out/all)."
        ),
    ] = None,
    wide: Annotated[
        bool, typer.Option("--wide", help="Print long tables whole (default: summarised by flow group to fit).")
    ] = False,
    mechanisms: Annotated[
        str | None,
        typer.Option(
            "--mechanisms",
            "-m",
            help="Comma-separated mechanisms to add to an experiment that compares mechanisms "
            "(demo, today-tcp, fred-cbr, redpd-fig15): presets, qdisc types, or your own (`my_aqm.py:ExcessDrop`), "
            "each as a row of its own beside the paper's.",
        ),
    ] = None,
    force: ForceOption = False,
    wait: WaitOption = False,
    connect_timeout: ConnectTimeoutOption = f"{CONNECT_TIMEOUT_S:g}s",
    worker_timeout: WorkerTimeoutOption = f"{WORKER_TIMEOUT_S:g}s",
) -> None:
    if list_:
        _print_list(json_output)
        return
    if all_ or only is not None:
        if id is not None:
            raise fail("give an experiment id or --all, not both")
        cluster = Cluster(scheduler, connect_timeout.seconds, worker_timeout.seconds) if scheduler else None
        _reproduce_all(out or Path("out") / "all", quick, only, workers, cluster, json_output, wait)
        return
    if id is None:
        raise fail("give an experiment id, --all, or --list")
    try:
        experiment = get(id)
    except KeyError as e:
        raise fail(e.args[0]) from None
    out = out or Path("out") / experiment.id
    names = [name.strip() for name in (mechanisms or "").split(",") if name.strip()]
    about = {"kind": "experiment", "experiment": experiment.id} | ({"mechanisms": names} if names else {})
    if names and not experiment.compares:
        raise fail(f"--mechanisms: {experiment.compares_none()}")
    try:
        added = comparison.mechanisms(names) if names else None
        # The folder is taken and checked before the run; written whole or not at all (outdir.py).
        with result_folder(out, about, force, wait, say) as folder:
            with RunProgress(console) as bars, reporting(bars):
                reproduction = experiment.run(quick=quick, mechanisms=added)
            saved = reproduction.save(folder)
    except (ScenarioError, OutputError, Ns2ReferenceError) as e:
        raise fail(str(e)) from None
    except KeyboardInterrupt as e:
        raise interrupted(e) from None
    written = [out / path.name for path in saved]
    if json_output:
        print_json(reproduction.to_dict())
    else:
        lines = [*terminal.paragraph(f"{experiment.id}: {experiment.title}", "bold"), ""]
        for name in reproduction.show:
            lines += terminal.frame_table(reproduction.data[name], name, wide=wide)
        for note in reproduction.notes:
            lines += terminal.paragraph(note)
        lines += [
            "",
            *terminal.rows_table(
                reproduction.rows,
                title=f"{reproduction.id}: paper vs ours",
                ns2=reproduction.ns2,
                not_in_ns2=reproduction.not_in_ns2,
                verdicts=reproduction.verdicts,
            ),
        ]
        if reproduction.ns2_source:
            lines += terminal.paragraph(f"ns-2 column: {reproduction.ns2_source}")
        for failure in reproduction.failures():
            lines += terminal.paragraph(failure, "red")
        terminal.show(lines)
    say(f"wrote {', '.join(str(p) for p in written)}")
    if not reproduction.passed:
        raise typer.Exit(1)


def _print_list(json_output: bool) -> None:
    experiments, missing = registry(), not_reproduced_list()
    if json_output:
        listed = [{"id": e.id, "title": e.title, "reproduced": True} for e in experiments.values()]
        print_json(
            listed + [{"id": e.id, "title": e.title, "reproduced": False, "reason": e.reason} for e in missing.values()]
        )
        return
    rows = [[e.id, e.title] for e in experiments.values()]
    rows += [[e.id, f"{e.title} - not yet reproduced: {e.reason}"] for e in missing.values()]
    terminal.show(terminal.table(["id", "title"], rows, "experiments"))


def _reproduce_all(
    out: Path,
    quick: bool,
    only: str | None,
    workers: int | None,
    cluster: Cluster | None,
    json_output: bool,
    wait: bool,
) -> None:
    known = registry()
    ids = list(known) if only is None else [name.strip() for name in only.split(",") if name.strip()]
    unknown = [name for name in ids if name not in known]
    if unknown or not ids:
        raise fail(f"--only: unknown experiment {', '.join(unknown) or '(none given)'} (known: {', '.join(known)})")
    report = run_jobs(
        open_suite(out, ids, quick, wait, say),
        lambda folder, on_done: folder.run(workers, cluster, on_done),
        "experiments",
        out,
        lambda id, error: f"{id} failed to run: {error}",
        mode="quick" if quick else "full",
    )
    entries = json.loads((out / "index.json").read_text())["experiments"]
    chosen = [e for e in entries if e["id"] in ids]
    if json_output:
        print_json({"experiments": chosen})
    else:
        failing = ("ns2", "arithmetic", "defect", "open")
        rows = [
            [
                e["id"],
                f"{e['rows_passed']} / {e['rows_graded']}" if "rows_graded" in e else "-",
                *(str(e["verdicts"][kind]) if "verdicts" in e else "-" for kind in failing),
                _status(e["status"]),
            ]
            for e in chosen
        ]
        totals = [sum(e.get("verdicts", {}).get(kind, 0) for e in chosen) for kind in failing]
        passing = sum(e.get("rows_passed", 0) for e in chosen)
        graded = sum(e.get("rows_graded", 0) for e in chosen)
        rows.append(["all", f"{passing} / {graded}", *map(str, totals), ""])
        columns = ["experiment", "graded rows passing", "as ns-2", "arithmetic", "defect", "open"]
        terminal.show(terminal.table([*columns, "status"], rows, "reproductions (failing rows by verdict)"))
    say(f"ran {len(report.ran)}; wrote {report.written[0]} and {len(report.written) - 2} experiment pages")
    if any(e["status"] != "passed" for e in chosen):
        raise typer.Exit(1)


def _status(status: str) -> str:
    """An index entry's status as a cell: pass, FAIL, or what else stopped it (e.g. error)."""
    return terminal.verdict(status == "passed") if status in ("passed", "failed") else terminal.colour(status, "red")
