"""`aqmlab characterize MECHS`: the RFC 7928 tests for each mechanism, one summary row each."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from .. import terminal
from ..mechanisms import presets_text
from ..workers import CONNECT_TIMEOUT_S, WORKER_TIMEOUT_S, Cluster
from ._common import (
    ConnectTimeoutOption,
    WaitOption,
    WorkerTimeoutOption,
    command_app,
    command_help,
    fail,
    print_json,
    run_jobs,
    say,
)

app = command_app()


def _sections() -> str:
    from ..characterize import TESTS

    return "; ".join(f"{t.section} {t.title.lower()}" for t in TESTS)


@app.command(
    help=command_help(
        "characterize",
        "Runs each test of RFC 7928 (AQM characterization guidelines) under each mechanism, on the ns-3 AQM "
        "Evaluation Suite's network (1 Mbit/s, 48 ms bottleneck, 10 Mbit/s access links, 45-packet buffer, "
        "NewReno with IW3), and prints one row per mechanism with each test's figure of merit. "
        f"Tests: {_sections()}.\n\n"
        "A mechanism is a preset, a qdisc type with its defaults or a queue discipline of your own "
        "(`my_aqm.py:ExcessDrop`), as `aqmlab compare` takes them; each gets the network's buffer. "
        f"{presets_text()}\n\n"
        "Writes OUT/characterize.json (every test with its RFC section, every number; what --json prints), "
        "OUT/index.html (the summary) and a page per test with its table, delay-goodput ellipses, goodput and "
        "delay over time and transfer times (docs/characterize.md says how to read them). Each cell (a test "
        "case under one mechanism) is kept in OUT/cells/: a rerun runs only what is missing or damaged. Exits "
        "with status 1 if a cell failed to run.",
    )
)
def characterize(
    mechanisms: Annotated[
        str, typer.Argument(help="Comma-separated mechanisms: presets, qdisc types, or `my_aqm.py:Class`.")
    ],
    quick: Annotated[
        bool, typer.Option("--quick", help="60 s per case instead of 300 s, and fewer RTTs in §6.")
    ] = False,
    only: Annotated[
        str | None,
        typer.Option("--only", help='Comma-separated RFC 7928 sections to run, e.g. "5.1.1,6" ("8.2": all of 8.2.x).'),
    ] = None,
    out: Annotated[Path, typer.Option("--out", "-o", help="Output folder.")] = Path("out") / "characterize",
    json_output: Annotated[
        bool, typer.Option("--json", help="Print characterize.json (every test and number) on stdout.")
    ] = False,
    workers: Annotated[
        int | None, typer.Option("--workers", help="Local processes (default: one per core).", min=1)
    ] = None,
    scheduler: Annotated[
        str | None, typer.Option("--scheduler", help="Dask scheduler address (e.g. tcp://host:8786).")
    ] = None,
    wait: WaitOption = False,
    connect_timeout: ConnectTimeoutOption = f"{CONNECT_TIMEOUT_S:g}s",
    worker_timeout: WorkerTimeoutOption = f"{WORKER_TIMEOUT_S:g}s",
) -> None:
    from ..characterize import merit_text, open_folder

    names = [name.strip() for name in mechanisms.split(",") if name.strip()]
    if not names:
        raise fail("MECHANISMS: give at least one mechanism")
    if len(set(names)) != len(names):
        raise fail(f"MECHANISMS: {', '.join(sorted({n for n in names if names.count(n) > 1}))} given twice")
    sections = [s.strip() for s in only.split(",") if s.strip()] if only is not None else None
    if sections is not None and not sections:
        raise fail("--only: give at least one section")
    cluster = Cluster(scheduler, connect_timeout.seconds, worker_timeout.seconds) if scheduler else None
    done = run_jobs(
        open_folder(out, names, quick, sections, wait, say),
        lambda folder, on_done: folder.run(workers, cluster, on_done),
        "cells",
        out,
        lambda key, error: f"{key} failed to run: {error}",
        mode="quick" if quick else "full",
    )
    doc = done.to_dict()
    if json_output:
        print_json(doc)
    else:
        # One row per test, one column per mechanism: the table fits a terminal.
        by_mechanism = {row["mechanism"]: row for row in doc["summary"]}
        columns = ["test", *(m["label"] for m in doc["mechanisms"])]
        rows = [
            [f"§{t['section']}", *(merit_text(by_mechanism[m["name"]][t["section"]], "") for m in doc["mechanisms"])]
            for t in doc["tests"]
        ]
        lines = terminal.table(columns, rows, "RFC 7928: each test's figure of merit")
        for t in doc["tests"]:
            merit = t["merit"]
            lines += terminal.paragraph(
                f"§{t['section']} {t['title']}: {merit['label']} ({merit['unit']}; {merit['better']})"
            )
        terminal.show(lines)
    say(f"wrote {done.written[0]} and {len(done.written) - 1} test pages")
    if done.errors:
        raise typer.Exit(1)
