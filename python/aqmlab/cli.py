"""The `aqmlab` command: run scenarios, reproduce paper experiments, sweep parameters, benchmark."""

from __future__ import annotations

import contextlib
import functools
import json
import sys
from collections.abc import Callable
from enum import Enum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from . import __version__, reporting, scenarios_dir
from ._core import ScenarioError
from .outdir import OutputError
from .results import to_json_value
from .workers import CONNECT_TIMEOUT_S, WORKER_TIMEOUT_S

if TYPE_CHECKING:
    from rich.console import Console
    from rich.table import Table

# Start-up (issue 15): rich, pandas and the command modules are imported inside the commands that
# use them, so that `aqmlab --help` and `aqmlab run FILE --json` load neither.

app = typer.Typer(
    help=(
        "aqmlab: a fast, deterministic packet-level simulator of router queue management "
        "(drop-tail, RED, ...) and fair bandwidth allocation.\n\n"
        "Scenario files are TOML (see scenarios/ and docs/scenario.md). "
        "Every command that reads one reports a bad value by naming its field, "
        "e.g. `flows[3].rate: must be > 0, got -1`, and exits with status 2. "
        "Ctrl-C stops a command within a second and exits with status 130."
    ),
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    # Plain help: typer's rich help loads rich's markdown and traceback modules, 0.1 s of the
    # 0.15 s that `aqmlab --help` may take (issue 15).
    rich_markup_mode=None,
)


@functools.cache
def console() -> Console:
    """Everything for people goes to stderr, so stdout carries only the --json output."""
    from rich.console import Console

    return Console(stderr=True)


class Format(str, Enum):
    parquet = "parquet"
    csv = "csv"


def _fail(message: str, code: int = 2) -> typer.Exit:
    print(f"error: {message}", file=sys.stderr)
    return typer.Exit(code)


def _say(message: str) -> None:
    """A diagnostic line (waiting for a folder's lock, taking over a stale one) on stderr."""
    print(message, file=sys.stderr)


# Options of the commands that write an output folder (outdir.py).
WaitOption = Annotated[
    bool, typer.Option("--wait", help="If another aqmlab is writing the output folder, wait for it (default: stop).")
]
ForceOption = Annotated[
    bool, typer.Option("--force", help="Replace an output folder that holds another result (default: refuse).")
]
ConnectTimeoutOption = Annotated[
    float,
    typer.Option("--connect-timeout", help="With --scheduler: seconds to wait for the scheduler to answer.", min=0.1),
]
WorkerTimeoutOption = Annotated[
    float,
    typer.Option("--worker-timeout", help="With --scheduler: seconds to wait while the cluster has no worker.", min=1),
]


def _interrupted(e: KeyboardInterrupt) -> typer.Exit:
    """Ctrl-C: one line saying how far the run got (the core's message), and status 130 as a shell uses."""
    print(str(e) or "interrupted", file=sys.stderr)
    return typer.Exit(130)


def _version(value: bool) -> None:
    if value:
        print(f"aqmlab {__version__}")
        raise typer.Exit()


@app.callback()
def _options(
    version: Annotated[
        bool, typer.Option("--version", callback=_version, is_eager=True, help="Print the version and exit.")
    ] = False,
) -> None:
    pass


def _print_json(data: Any) -> None:
    sys.stdout.write(json.dumps(to_json_value(data)) + "\n")


def _rows_table(
    rows: list[Any], title: str, reference: str = "paper", ratio: bool = False, notes: list[str] | None = None
) -> Table:
    """Checked rows (`experiments.Row`) as a table: metric, the reference value (the paper's,
    or the model's for `validate`), ours, with `ratio` ours / reference (where the reference is
    not 0), tolerance, pass, and with `notes` (one per row) a note column."""
    from rich.table import Table

    from . import terminal

    columns = ["metric", reference, "ours", *(["ratio"] if ratio else []), "tolerance", "pass"]
    table = Table(*columns, *(["note"] if notes is not None else []), title=title, title_justify="left")
    for index, row in enumerate(rows):
        cells = [row.metric, terminal.fmt(row.paper), terminal.fmt(row.ours)]
        if ratio:
            cells.append(f"{row.ours / row.paper:.3f}" if row.paper else "-")
        verdict = "[green]pass[/]" if row.passed else "[red]FAIL[/]"
        cells += [row.tolerance, verdict if row.graded else f"info ({'pass' if row.passed else 'fail'})"]
        table.add_row(*cells, *([notes[index]] if notes is not None else []))
    return table


def _print_tables(frame: Any, title: str, wide: bool) -> None:
    """`frame` fitted to the terminal (terminal.tables): no cell cut, long tables summarised unless `wide`."""
    from . import terminal

    for table in terminal.tables(frame, title, console().width, wide):
        console().print(table)


@app.command(
    help=(
        "Run one scenario and print per-flow goodput against fair share, drops, the Jain index and link "
        "utilisation.\n\n"
        "With --out, also write every table (Parquet or CSV), summary.json and the plots (per-flow throughput"
        " with the fair share marked; queue length over time), and with --pcap (or simulation.pcap) a libpcap"
        " capture of each link named (`L-R.pcap`, for Wireshark or `tshark -r`). The same scenario and seed"
        " always give byte-identical files."
    )
)
def run(
    file: Annotated[Path, typer.Argument(help="Scenario file (TOML).")],
    out: Annotated[
        Path | None, typer.Option("--out", "-o", help="Write the tables, summary.json and plots to this folder.")
    ] = None,
    format: Annotated[Format, typer.Option("--format", help="File format of the tables.")] = Format.parquet,
    no_plots: Annotated[bool, typer.Option("--no-plots", help="Do not draw the plots.")] = False,
    seed: Annotated[int | None, typer.Option("--seed", help="Override simulation.seed.")] = None,
    json_output: Annotated[
        bool,
        typer.Option("--json", help="Print the summary as one JSON object on stdout (nothing else goes to stdout)."),
    ] = False,
    wide: Annotated[
        bool, typer.Option("--wide", help="Print long tables whole (default: summarised by flow group to fit).")
    ] = False,
    pcap: Annotated[
        str | None,
        typer.Option(
            "--pcap",
            help="Capture these links (comma-separated, by name `L->R` or file name `L-R`) to OUT/<link>.pcap: "
            "every packet each transmits, with IPv4 and TCP/UDP headers. Sets simulation.pcap.",
        ),
    ] = None,
    pcap_drops: Annotated[
        bool,
        typer.Option("--pcap-drops", help="Also capture what those links drop, to OUT/<link>.drops.pcap."),
    ] = False,
    force: ForceOption = False,
    wait: WaitOption = False,
) -> None:
    from . import load
    from . import run as run_scenario
    from .outdir import result_folder
    from .progress import RunProgress

    try:
        scenario = load(file)
        if seed is not None:
            scenario = scenario.with_seed(seed)
        if pcap is not None:
            scenario = scenario.with_({"simulation.pcap": [name.strip() for name in pcap.split(",") if name.strip()]})
        if pcap_drops:
            scenario = scenario.with_({"simulation.pcap_drops": True})
        scenario.validate()
        if pcap is not None and out is None:
            raise _fail("--pcap: give --out DIR, the folder the captures are written to")
        if scenario.get_or("simulation.pcap") and out is None:
            console().print("[yellow]simulation.pcap: no capture written without --out DIR[/]")
        # The folder is taken and checked before the run, written under a temporary name and
        # renamed into place last: a run folder is whole or absent (outdir.py).
        about = {"kind": "run", "name": scenario.name, "scenario_sha256": scenario.digest()}
        with result_folder(out, about, force, wait, _say) if out is not None else contextlib.nullcontext() as folder:
            with RunProgress(console) as bars:
                results = run_scenario(scenario, progress=bars, pcap_dir=folder)
            written = list(results.pcap_files)
            if folder is not None:
                written += _save_run(results, folder, format.value, not no_plots)
    except (ScenarioError, OutputError) as e:
        raise _fail(str(e)) from None
    except OSError as e:
        raise _fail(str(e), code=1) from None
    except KeyboardInterrupt as e:
        raise _interrupted(e) from None
    summary = results.summary()
    if json_output:
        _print_json(summary)
    else:
        _print_run(results, summary, wide)
    if written:
        console().print(f"wrote {len(written)} files to {out}")


def _save_run(results: Any, folder: Path, format: str, plots: bool) -> list[Path]:
    """The tables, summary and plots of a run, into `folder`."""
    try:
        written = results.save(folder, format=format)
        if plots:
            from .plots import save_run_figures

            written += save_run_figures(results, folder)
    except KeyboardInterrupt:
        raise KeyboardInterrupt("interrupted while saving the results: nothing written") from None
    return written


def _print_run(results: Any, summary: dict, wide: bool) -> None:
    flows = results.flows
    frame = flows[["id", "name", "type"]].copy()
    frame["goodput"] = flows["goodput_bps"] / 1e6
    frame["fair share"] = flows["fair_share_bps"] / 1e6
    frame["norm."] = flows["normalised_goodput"]
    frame["drops"] = flows["dropped_packets"]
    frame["loss"] = flows["loss_rate"]
    window = summary["duration"] - summary["warmup"]
    title = f"{summary['name'] or 'run'}: goodput and max-min fair share (Mbps) over the last {window:g} s"
    _print_tables(frame, title, wide)
    utilisation = ", ".join(f"{link} {u:.1%}" for link, u in summary["utilisation"].items()) or "-"
    drops = ", ".join(f"{reason} {n}" for reason, n in summary["drops_by_reason"].items()) or "none"
    console().print(f"Jain index {summary['jain_index']:.4f}   utilisation {utilisation}   drops {drops}")
    console().print(
        f"{summary['events']:,} events in {summary['wall_time_s']:.2f} s ({summary['events_per_second']:,.0f} events/s)"
    )


@app.command(
    help=(
        "Reproduce a paper experiment and compare with the paper's numbers.\n\n"
        "Prints a table of metric / paper / ours / tolerance / pass and saves a figure and the data. Exits "
        "with status 1 if any row fails. `demo` is the CSFQ Fig. 3(b) comparison (what `make demo` runs).\n\n"
        "With --all, runs every experiment (on --workers local processes or a Dask cluster at --scheduler) "
        "into OUT/<id>/ and writes OUT/index.html: one row per experiment with its rows passing and a link to "
        "its page (paper vs ours, figure, notes). Finished experiments are kept: rerunning resumes."
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
    force: ForceOption = False,
    wait: WaitOption = False,
    connect_timeout: ConnectTimeoutOption = CONNECT_TIMEOUT_S,
    worker_timeout: WorkerTimeoutOption = WORKER_TIMEOUT_S,
) -> None:
    from rich.console import Console
    from rich.table import Table

    from .experiments import get, not_reproduced_list, registry
    from .outdir import result_folder
    from .progress import RunProgress
    from .workers import Cluster

    if list_:
        experiments, missing = registry(), not_reproduced_list()
        if json_output:
            listed = [{"id": e.id, "title": e.title, "reproduced": True} for e in experiments.values()]
            _print_json(
                listed
                + [{"id": e.id, "title": e.title, "reproduced": False, "reason": e.reason} for e in missing.values()]
            )
        else:
            table = Table("id", "title", title="experiments", title_justify="left")
            for e in experiments.values():
                table.add_row(e.id, e.title)
            for e in missing.values():
                table.add_row(e.id, f"{e.title} [yellow]- not yet reproduced: {e.reason}[/]")
            Console().print(table)
        return
    if all_ or only is not None:
        if id is not None:
            raise _fail("give an experiment id or --all, not both")
        cluster = Cluster(scheduler, connect_timeout, worker_timeout) if scheduler else None
        _reproduce_all(out or Path("out") / "all", quick, only, workers, cluster, json_output, wait)
        return
    if id is None:
        raise _fail("give an experiment id, --all, or --list")
    try:
        experiment = get(id)
    except KeyError as e:
        raise _fail(e.args[0]) from None
    console().print(f"[bold]{experiment.id}[/]: {experiment.title}")
    out = out or Path("out") / experiment.id
    try:
        about = {"kind": "experiment", "experiment": experiment.id}
        with result_folder(out, about, force, wait, _say) as folder:
            with RunProgress(console) as bars, reporting(bars):
                reproduction = experiment.run(quick=quick)
            saved = reproduction.save(folder)
    except (ScenarioError, OutputError) as e:
        raise _fail(str(e)) from None
    except KeyboardInterrupt as e:
        raise _interrupted(e) from None
    written = [out / path.name for path in saved]
    if json_output:
        _print_json(reproduction.to_dict())
    else:
        for name in reproduction.show:
            _print_tables(reproduction.data[name], name, wide)
        for note in reproduction.notes:
            console().print(note)
        console().print(_rows_table(reproduction.rows, title=f"{reproduction.id}: paper vs ours"))
        for note in reproduction.failures():
            console().print(f"[red]{note}[/]")
    console().print(f"wrote {', '.join(str(p) for p in written)}")
    if not reproduction.passed:
        raise typer.Exit(1)


def _run_jobs(
    opening: contextlib.AbstractContextManager[Any],
    run: Callable[[Any, Callable[[Any, Any, Any], None]], Any],
    noun: str,
    kept_in: Path,
    failure: Callable[[Any, Any], str],
    mode: str | None = None,
) -> Any:
    """The jobs of `reproduce --all` and `sweep`: enters `opening` (suite.open_suite or
    sweep.open_sweep: the output folder taken and its results checked), says which results fail
    their manifest and how many of its `total` `noun` are already done, then `run(folder,
    on_done)`, counting the pending ones on a bar as `run` reports each with `on_done(job, wall,
    error)` (no bar when none is pending: a resumed run that only combines the results), and
    printing each failure as `failure(job, error)` words it. On a cluster fault or Ctrl-C, says
    how many finished, kept in `kept_in`, and exits with status 2 or 130."""
    from .progress import job_progress
    from .workers import ClusterError

    finished = pending = 0
    bar = task = None

    def kept() -> str:
        return f"{finished} of {pending} {noun} finished, kept in {kept_in}; run the same command again to resume"

    def done(job: Any, wall: Any, error: Any) -> None:
        nonlocal finished
        finished += 1
        if bar is not None:
            bar.advance(task)
        if error is not None:
            console().print(failure(job, error))

    try:
        with opening as folder:
            for name, reason in folder.damaged().items():
                _say(f"{name}: {reason}; running it again")
            pending = len(folder.pending)
            heading = f"{folder.total} {noun}" + (f" ({mode})" if mode else "")
            console().print(f"{heading}, {folder.total - pending} already done, running {pending}")
            with job_progress(console()) if pending else contextlib.nullcontext() as bar:
                task = bar.add_task(noun, total=pending) if bar is not None else None
                return run(folder, done)
    except (ScenarioError, OutputError) as e:
        raise _fail(str(e)) from None
    except ClusterError as e:
        raise _fail(f"{e}; {kept()}") from None
    except KeyboardInterrupt:
        print(f"interrupted: {kept()}", file=sys.stderr)
        raise typer.Exit(130) from None


def _reproduce_all(
    out: Path, quick: bool, only: str | None, workers: int | None, cluster: Any, json_output: bool, wait: bool
) -> None:
    from rich.table import Table

    from .experiments import registry
    from .suite import open_suite

    known = registry()
    ids = list(known) if only is None else [name.strip() for name in only.split(",") if name.strip()]
    unknown = [name for name in ids if name not in known]
    if unknown or not ids:
        raise _fail(f"--only: unknown experiment {', '.join(unknown) or '(none given)'} (known: {', '.join(known)})")
    report = _run_jobs(
        open_suite(out, ids, quick, wait, _say),
        lambda folder, on_done: folder.run(workers, cluster, on_done),
        "experiments",
        out,
        lambda id, error: f"[red]{id} failed to run[/]: {error}",
        mode="quick" if quick else "full",
    )
    entries = json.loads((out / "index.json").read_text())["experiments"]
    chosen = [e for e in entries if e["id"] in ids]
    if json_output:
        _print_json({"experiments": chosen})
    else:
        table = Table("experiment", "graded rows passing", "status", title="reproductions", title_justify="left")
        for e in chosen:
            status = {"passed": "[green]pass[/]", "failed": "[red]FAIL[/]"}.get(e["status"], f"[red]{e['status']}[/]")
            counts = f"{e['rows_passed']} / {e['rows_graded']}" if "rows_graded" in e else "-"
            table.add_row(e["id"], counts, status)
        console().print(table)
    console().print(f"ran {len(report.ran)}; wrote {report.written[0]} and {len(report.written) - 2} experiment pages")
    if any(e["status"] != "passed" for e in chosen):
        raise typer.Exit(1)


@app.command(
    help=(
        "Write one self-contained HTML page of an output folder: DIR/report.html for the folder of "
        "`aqmlab run`, `reproduce ID` or `sweep` (figures embedded, tables, the scenario, the summary, "
        "pass/fail marks); for the folder of `reproduce --all`, each experiment's page and DIR/index.html."
    )
)
def report(
    folder: Annotated[Path, typer.Argument(help="An output folder (--out) of run, reproduce or sweep.")],
) -> None:
    from .report import write_report

    try:
        written = write_report(folder)
    except ValueError as e:  # OutputError included: a damaged or foreign file, named
        raise _fail(str(e)) from None
    more = f" and {len(written) - 2} experiment pages" if written[0].name == "index.html" else ""
    console().print(f"wrote {written[0]}{more}")


@app.command(
    help=(
        "Run one scenario under several queue disciplines on its bottleneck and compare them.\n\n"
        "Prints one row per mechanism: goodput of each flow group (Mbps), Jain's index of goodput / fair share,"
        " the bottleneck's utilisation, the drop rate over the measurement window, and the median and 99th-"
        "percentile queueing delay (ms). A mechanism is a preset (the CSFQ paper's configurations and aqmlab's"
        " other mechanisms on its 64 KB buffer; `all` for every preset) or any qdisc type with its defaults. "
        "With --out, writes compare.csv and compare.png."
    )
)
def compare(
    file: Annotated[Path, typer.Argument(help="Scenario file (TOML).")],
    mechanisms: Annotated[
        str, typer.Option("--mechanisms", "-m", help="Comma-separated preset names or qdisc types, or `all`.")
    ] = "all",
    out: Annotated[Path | None, typer.Option("--out", "-o", help="Folder for compare.csv and compare.png.")] = None,
    json_output: Annotated[
        bool, typer.Option("--json", help='Print {"mechanisms": [{"mechanism": ..., ...}, ...]} on stdout.')
    ] = False,
) -> None:
    from . import compare as comparison
    from . import load
    from .outdir import check_folder_path, replaced_file

    names = [name.strip() for name in mechanisms.split(",") if name.strip()]
    if not names:
        raise _fail("--mechanisms: give at least one name, or all")
    try:
        scenario = load(file)
        if out is not None:
            check_folder_path(out)
        table, _ = comparison.compare(scenario, names)
    except (ScenarioError, OutputError) as e:
        raise _fail(str(e)) from None
    if out is not None:
        with replaced_file(out / "compare.csv") as partial:
            table.to_csv(partial, index=False)
        figure = comparison.compare_figure(table, title=f"{scenario.get_or('name', file.stem)}")
        with replaced_file(out / "compare.png") as partial:
            figure.savefig(partial, format="png")
    if json_output:
        _print_json({"mechanisms": table.to_dict(orient="records")})
    else:
        _print_tables(table, f"{file.name}: mechanisms compared", wide=True)
    if out is not None:
        console().print(f"wrote {out / 'compare.csv'}, {out / 'compare.png'}")


@app.command(
    help=(
        "Run every combination of a parameter grid over a base scenario.\n\n"
        "Each job's results are stored under a hash of its full scenario in OUT/jobs/, so rerunning an "
        "interrupted sweep runs only the missing jobs. The combined tables are OUT/jobs.csv (one row per job)"
        " and OUT/flows.csv (one row per job and flow).\n\n"
        'A spec names a scenario file (`scenario = "base.toml"`) or holds a [base] table, and a [grid] of '
        'dotted paths to lists, e.g. `"simulation.seed" = [1, 2, 3]` or `"topology.bottleneck.qdisc" = [{type'
        ' = "droptail", limit = 50}, {type = "red", ...}]`.'
    )
)
def sweep(
    spec: Annotated[
        Path, typer.Argument(help="Sweep spec (TOML): a base scenario and a [grid] of dotted paths to lists of values.")
    ],
    out: Annotated[Path, typer.Option("--out", "-o", help="Folder for the jobs' results and the combined tables.")],
    scheduler: Annotated[
        str | None,
        typer.Option(
            "--scheduler", help="Dask scheduler address (e.g. tcp://host:8786); default: a local process pool."
        ),
    ] = None,
    workers: Annotated[
        int | None, typer.Option("--workers", help="Local processes (default: one per core).", min=1)
    ] = None,
    wait: WaitOption = False,
    connect_timeout: ConnectTimeoutOption = CONNECT_TIMEOUT_S,
    worker_timeout: WorkerTimeoutOption = WORKER_TIMEOUT_S,
) -> None:
    from .sweep import load_spec, open_sweep
    from .workers import Cluster

    try:
        parsed = load_spec(spec)
    except ScenarioError as e:
        raise _fail(str(e)) from None
    cluster = Cluster(scheduler, connect_timeout, worker_timeout) if scheduler else None
    report = _run_jobs(
        open_sweep(parsed, out, wait, _say),
        lambda folder, on_done: folder.run(workers, cluster, on_done),
        "jobs",
        out / "jobs",
        lambda job, error: f"[red]job {job.index} failed[/] ({job.label}): {error}",
    )
    console().print(f"ran {len(report.ran)} jobs; combined tables: {', '.join(str(p) for p in report.written)}")
    if report.failed:
        raise _fail(f"{len(report.failed)} jobs failed", code=1)


SUITES = ("tcp",)


@app.command(
    help=(
        "Check the simulator against closed-form models and exact event counts.\n\n"
        "`tcp`: one long-lived flow per variant (Reno, NewReno, SACK; Tahoe for the counts) over a 100 ms path "
        "with a loss module, or a 10 Mbps drop-tail bottleneck. Rows: periodic loss at p = 0.5/1/2 % against the "
        "exact periodic-loss cycle (W/2 + 2 rounds, 1/p = 3W²/8 + 5W/4 packets, ±3 %), with delayed ACKs at "
        "p = 0.1 % (b = 2, ±3 %); p ≤ 0.1 % against the square-root law (RED-PD eq. 1, ±5 %); after warm-up, "
        "zero timeouts and one fast retransmit per loss; Reno under Bernoulli loss against PFTK with "
        "t_RTO = 4·RTT (RED-PD eq. 2, three seeds, ±10 %), NewReno and SACK at least Reno's rate; drop-tail "
        "utilisation against the fluid sawtooth 3(P+B)²/(4(P²+PB+B²)) (±3 %); scripted losses (Reno times "
        "out on two in a window, NewReno does not; a timeout in recovery sets ssthresh to FlightSize/2). "
        "Prints key, model, ours, ratio, tolerance, pass and a note explaining any failure; exits with status "
        "1 if any row fails."
    )
)
def validate(
    suite: Annotated[str, typer.Argument(help="Which suite: tcp.")],
    json_output: Annotated[
        bool,
        typer.Option(
            "--json",
            help='Print {"id", "rows": [{"key", "metric", "model", "ours", "tolerance", "pass", "note"?}]} on stdout.',
        ),
    ] = False,
) -> None:
    from rich.console import Console

    from ._core import validate_tcp
    from .experiments import Row

    if suite not in SUITES:
        raise _fail(f"unknown suite {suite!r} (known: {', '.join(SUITES)})")
    checks = json.loads(validate_tcp())
    rows = [
        Row(check["metric"], check["model"], check["ours"], check["tolerance"], check["pass"], check["key"])
        for check in checks
    ]
    notes = [check["note"] for check in checks]
    if json_output:
        _print_json(
            {
                "id": suite,
                "rows": [
                    row.to_dict(reference="model") | ({"note": note} if note else {})
                    for row, note in zip(rows, notes, strict=True)
                ],
            }
        )
    else:
        Console().print(_rows_table(rows, title=f"validate {suite}", reference="model", ratio=True, notes=notes))
        console().print(f"{sum(row.passed for row in rows)} of {len(rows)} checks pass")
    if not all(row.passed for row in rows):
        raise typer.Exit(1)


@app.command(
    help=(
        "Time whole runs and print wall time (fastest of --repeat runs), simulated events and events/second; "
        "then the scale series; with --ns3, the comparison with ns-3.\n\n"
        "Whole runs (scenarios/bench-*.toml): the demo under RED and 100 TCP flows over a 45 Mbps RED "
        "bottleneck, 100 s each; ns-3's cases (a) 31 TCP + 1 UDP on 10 Mbps and (b) 100 TCP on 45 Mbps, RED "
        "and TCP configured as ns-3's. The scale series: N NewReno flows over a RED bottleneck of N x 1 Mbps "
        "(10^4 flows: 10 Gbps), 5 s simulated, once per point, each in a fresh process: wall time, events/s "
        "and the peak memory the run added, per flow (10^5 flows take minutes). --ns3 PATH: a built ns-3 "
        "reference program (a dumbbell printing one JSON object); it runs cases (a) and (b) beside aqmlab: "
        "time in Simulator::Run against aqmlab's engine, the whole processes, and the outcomes (utilisation, "
        "bottleneck drops, TCP and UDP goodput, Jain's index of TCP goodput). With --mechanisms, each whole-run "
        "benchmark runs once per mechanism on its bottleneck (the cost of each queue discipline on the same traffic)."
    )
)
def bench(
    json_output: Annotated[
        bool, typer.Option("--json", help='Print {"runs", "scale", "ns3"} as one JSON object on stdout.')
    ] = False,
    only: Annotated[
        str | None,
        typer.Option("--only", help="Run only this: demo-red, 100tcp-45mbps, ns3-a, ns3-b or scale."),
    ] = None,
    repeat: Annotated[int, typer.Option("--repeat", help="Runs per benchmark; the fastest counts.", min=1)] = 3,
    mechanisms: Annotated[
        str | None,
        typer.Option(
            "--mechanisms",
            "-m",
            help="Comma-separated preset names or qdisc types, or `all`, as `aqmlab compare`; "
            "rows are named benchmark/mechanism.",
        ),
    ] = None,
    scale: Annotated[
        str, typer.Option("--scale", help="Flows of each point of the scale series, comma-separated (none: skip).")
    ] = "100,1000,10000,100000",
    ns3: Annotated[
        Path | None, typer.Option("--ns3", help="A built ns-3 reference program to compare with on cases (a), (b).")
    ] = None,
) -> None:
    from rich.console import Console
    from rich.table import Table

    from .bench import BENCHMARKS, ns3_comparison, run_benchmark, run_scale_point
    from .compare import mechanisms as qdisc_tables
    from .scenario import Scenario
    from .terminal import fmt

    names = [b[0] for b in BENCHMARKS] + ["scale"]
    if only not in (None, *names):
        raise _fail(f"--only: unknown benchmark {only!r} (known: {', '.join(names)})")
    try:
        points = [int(n) for n in scale.split(",") if n.strip() and n.strip() != "none"]
    except ValueError:
        raise _fail(f"--scale: expected flows separated by commas, e.g. 100,1000, got {scale!r}") from None
    if ns3 is not None and not ns3.is_file():
        raise _fail(f"--ns3: no program at {ns3} (build it with the ns-3 reference's build.sh)")
    report: dict[str, list] = {"runs": [], "scale": [], "ns3": []}
    chosen = None if mechanisms is None else [name.strip() for name in mechanisms.split(",") if name.strip()]
    if chosen == []:
        raise _fail("--mechanisms: give at least one name, or all")
    for name, file, what in BENCHMARKS:
        if only in (None, name):
            console().print(f"running {name}: {what}")
            scenario = Scenario.load(scenarios_dir() / file)
            variants = (
                {name: scenario}
                if chosen is None
                else {f"{name}/{m}": scenario.with_qdisc(table) for m, table in qdisc_tables(chosen).items()}
            )
            for label, variant in variants.items():
                try:
                    report["runs"].append(run_benchmark(label, variant, repeat=repeat))
                except ScenarioError as e:
                    raise _fail(f"{file} as {label}: {e}") from None
    for flows in points if only in (None, "scale") else []:
        console().print(f"running the scale series at {flows} flows")
        report["scale"].append(run_scale_point(flows))
    for name, file, _ in BENCHMARKS if ns3 is not None else []:
        if name.startswith("ns3-") and only in (None, name):
            console().print(f"running {name} in ns-3 and in aqmlab")
            report["ns3"].append(ns3_comparison(name, scenarios_dir() / file, ns3, repeat=repeat))
    if json_output:
        _print_json(report)
        return
    tables = []
    if report["runs"]:
        table = Table(
            "benchmark", "simulated", "wall time", "events", "events/s", "util.", "Jain", title=f"aqmlab {__version__}"
        )
        for r in report["runs"]:
            utilisation = ", ".join(f"{u:.1%}" for u in r["utilisation"].values())
            table.add_row(
                r["name"],
                f"{r['simulated_s']:g} s",
                f"{r['wall_time_s']:.3f} s",
                f"{r['events'] / 1e6:.2f} M",
                f"{r['events_per_second'] / 1e6:.2f} M",
                utilisation,
                f"{r['jain_index']:.3f}",
            )
        tables.append(table)
    if report["scale"]:
        table = Table("flows", "wall time", "events", "events/s", "peak memory", "per flow", "util.", title="scale")
        for r in report["scale"]:
            table.add_row(
                f"{r['flows']:,}",
                f"{r['wall_time_s']:.2f} s",
                f"{r['events'] / 1e6:.1f} M",
                f"{r['events_per_second'] / 1e6:.2f} M",
                f"{r['peak_memory_bytes'] / 2**20:,.0f} MiB",
                f"{r['memory_per_flow_bytes'] / 1024:.1f} KiB",
                f"{r['utilisation']['L->R']:.1%}",
            )
        tables.append(table)
    if report["ns3"]:
        table = Table(
            "case",
            "ns-3 Simulator::Run",
            "aqmlab engine",
            "ratio",
            "ns-3 process",
            "aqmlab run --json",
            "ratio",
            title="ns-3 vs aqmlab: wall time",
        )
        outcomes = Table("case", "outcome", "ns-3", "aqmlab", title="ns-3 vs aqmlab: outcomes (second half)")
        for r in report["ns3"]:
            table.add_row(
                r["name"],
                f"{r['ns3_run_s']:.3f} s",
                f"{r['aqmlab_engine_s']:.3f} s",
                f"{r['engine_ratio']:.0f}x",
                f"{r['ns3_process_s']:.2f} s",
                f"{r['aqmlab_process_s']:.2f} s",
                f"{r['process_ratio']:.1f}x",
            )
            for metric, (theirs, ours) in r["outcome"].items():
                outcomes.add_row(r["name"], metric.replace("_", " "), fmt(theirs), fmt(ours))
        tables += [table, outcomes]
    for table in tables:
        table.title_justify = "left"
        Console().print(table)


def main() -> None:
    app()
