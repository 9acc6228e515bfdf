"""The `aqmlab` command: --json output, the experiment list, errors."""

import json
import os
import subprocess
import sys

import aqmlab
import pytest
from aqmlab.results import FLOW_SUMMARY_KEYS, SUMMARY_KEYS
from conftest import aqmlab_cli, dumbbell, write_scenario


def test_run_json_prints_one_json_object_with_the_documented_keys(tmp_path):
    path = write_scenario(tmp_path / "s.toml", dumbbell({"type": "cbr", "rate": "5Mbps", "count": 3}))
    done = aqmlab_cli("run", path, "--json", "--seed", "4")
    assert done.returncode == 0, done.stderr
    summary = json.loads(done.stdout)  # the whole of stdout is one object
    assert tuple(summary) == SUMMARY_KEYS
    assert tuple(summary["flows"][0]) == FLOW_SUMMARY_KEYS
    assert summary["seed"] == 4
    assert summary["utilisation"]["L->R"] >= 0.99
    assert sum(f["goodput_bps"] for f in summary["flows"]) / 1e6 >= 9.9


def test_run_out_writes_tables_summary_and_plots(tmp_path):
    path = write_scenario(tmp_path / "s.toml", dumbbell({"type": "cbr", "rate": "5Mbps"}))
    done = aqmlab_cli("run", path, "--out", tmp_path / "out", "--format", "csv")
    assert done.returncode == 0, done.stderr
    names = sorted(p.name for p in (tmp_path / "out").iterdir())
    tables = [
        "drop_log",
        "drops",
        "flows",
        "links",
        "queue",
        "queue_delay",
        "queue_delay_groups",
        "throughput",
        "traces",
    ]
    tables += ["transfers"]
    assert names == sorted(
        [f"{t}.csv" for t in tables]
        + ["summary.json", "scenario.json", "scenario.toml", "throughput.png", "goodput.png", "queue.png"]
        + ["manifest.json"]
    )
    # The scenario as the user wrote it, beside the one that ran.
    assert (tmp_path / "out" / "scenario.toml").read_text() == path.read_text()
    manifest = json.loads((tmp_path / "out" / "manifest.json").read_text())
    assert sorted(manifest["files"]) == [name for name in names if name != "manifest.json"]
    assert manifest["scenario_sha256"] == aqmlab.load(path).digest()
    assert manifest["files"]["flows.csv"]["bytes"] == (tmp_path / "out" / "flows.csv").stat().st_size
    assert "wall_time_s" not in json.loads((tmp_path / "out" / "summary.json").read_text())
    # The table is the result: on stdout; what was written is a diagnostic, on stderr.
    assert "flow0" in done.stdout and "Jain index 1.0000" in done.stdout
    assert done.stderr == f"wrote {len(names)} files to {tmp_path / 'out'}\n"
    done = aqmlab_cli("run", path, "--out", tmp_path / "noplots", "--no-plots")
    assert not any(p.suffix == ".png" for p in (tmp_path / "noplots").iterdir())


# What `aqmlab --help` and `aqmlab run FILE [--json]` must start without (issue 15: 0.5 s of imports).
HEAVY = {"pandas", "numpy", "pyarrow", "matplotlib", "dask", "rich"}


def packages_imported_by(*args: str) -> set[str]:
    """Top-level packages in `sys.modules` after `aqmlab ARGS` ran in a fresh interpreter."""
    code = (
        "import json, sys\n"
        "from aqmlab.cli import app\n"
        "try:\n"
        "    app(sys.argv[1:])\n"
        "except SystemExit:\n"
        "    pass\n"
        "print(json.dumps(sorted({name.partition('.')[0] for name in sys.modules})), file=sys.stderr)\n"
    )
    env = {**os.environ, "MPLBACKEND": "Agg"}
    done = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, env=env, timeout=60)
    return set(json.loads(done.stderr.splitlines()[-1]))


def test_help_and_run_json_import_no_heavy_library(tmp_path):
    path = write_scenario(tmp_path / "s.toml", dumbbell({"type": "cbr", "rate": "5Mbps"}))
    # The terminal table is plain Python (issue 26 item 9): printing it loads none of them either.
    for args in (["--help"], ["run", str(path), "--json"], ["run", str(path)]):
        packages = packages_imported_by(*args)
        assert "aqmlab" in packages and "typer" in packages, args  # it did run
        assert packages & HEAVY == set(), args
    # The check can fail: writing the tables needs pandas and pyarrow.
    assert {"pandas", "pyarrow"} <= packages_imported_by("run", str(path), "--out", str(tmp_path / "out"))


def test_version_prints_the_package_version():
    result = aqmlab_cli("--version")
    assert result.returncode == 0, result.stderr
    assert result.stdout == f"aqmlab {aqmlab.__version__}\n"


def test_reproduce_list_shows_demo():
    done = aqmlab_cli("reproduce", "--list", "--json")
    assert done.returncode == 0, done.stderr
    experiments = {e["id"]: e["title"] for e in json.loads(done.stdout)}
    assert experiments["demo"].startswith("CSFQ Fig. 3(b)")
    assert "demo" in aqmlab_cli("reproduce", "--list").stdout


def test_reproduce_unknown_id_is_an_error():
    done = aqmlab_cli("reproduce", "nope")
    assert done.returncode == 2
    last = done.stderr.strip().splitlines()[-1]
    assert last.startswith("error: unknown experiment 'nope' (known: ") and "demo" in last, last


def test_help_explains_each_command():
    done = aqmlab_cli("--help")
    assert done.returncode == 0
    for command in ("run", "reproduce", "sweep", "validate", "bench"):
        assert f"\n  {command} " in done.stdout, command


def test_validate_tcp_json_rows_and_exit_status():
    done = aqmlab_cli("validate", "tcp", "--json")
    report = json.loads(done.stdout)
    assert report["id"] == "tcp"
    rows = {r["key"]: r for r in report["rows"]}
    assert len(rows) == len(report["rows"]) >= 24
    fields = {"key", "metric", "model", "ours", "tolerance", "pass"}
    assert all(set(r) - {"note"} == fields for r in rows.values())
    assert rows["cycle.newreno.p2"]["pass"] and rows["fr_per_loss.sack.p1"]["ours"] == 1
    # Every row passes (a timeout in recovery halves FlightSize: 20 of a 40-packet window), so
    # no row needs a note and the exit status is 0.
    assert rows["scripted.newreno.timeout_in_recovery.ssthresh"]["ours"] == 20
    assert [key for key, r in rows.items() if not r["pass"]] == []
    assert all("note" not in r for r in rows.values())
    assert done.returncode == 0


def test_validate_unknown_suite_is_an_error():
    done = aqmlab_cli("validate", "udp")
    assert done.returncode == 2 and "unknown suite 'udp' (known: tcp, ns2, linux, emulate)" in done.stderr
    live = aqmlab_cli("validate", "tcp", "--live")
    assert (live.returncode, live.stderr) == (2, "error: --live: only for the ns2 suite\n")


def test_tables_fit_80_columns_without_cutting_a_cell(tmp_path):
    # Issue 14 item 4: the demo's 32-flow x 16-column table used to print one character per cell.
    for args in (("reproduce", "demo", "--quick", "--out", tmp_path), ("run", "scenarios/csfq-fig3b.toml")):
        done = aqmlab_cli(*args, columns=80)
        lines = done.stdout.splitlines()
        assert "…" not in done.stdout, [line for line in lines if "…" in line]
        assert max(len(line) for line in lines) <= 80, [line for line in lines if len(line) > 80]
        # Summarised by flow group: the 31 TCPs in one mean row and one min-max row.
        assert "tcp[0-30]" in done.stdout and "31 rows" in done.stdout
    wide = aqmlab_cli("run", "scenarios/csfq-fig3b.toml", "--wide", columns=80)
    assert "tcp[30]" in wide.stdout and "…" not in wide.stdout


@pytest.mark.parametrize("columns", [80, None], ids=["80 columns", "piped"])
def test_each_table_of_the_demo_is_one_block_at_80_columns(tmp_path, columns):
    # Issue 34 item 7: the per-flow table came in 8 column blocks and paper vs ours in 3, rows
    # matched across them by eye. Each table now has one header, and a row's cells stay together.
    done = aqmlab_cli("reproduce", "demo", "--quick", "--out", tmp_path, columns=columns)
    assert done.returncode == 1, done.stderr  # the CSFQ row fails the paper (experiments/csfq/demo.py)
    lines = done.stdout.splitlines()
    assert max(len(line) for line in lines) <= 80, [line for line in lines if len(line) > 80]
    assert "(columns" not in done.stdout
    titles = ("per_flow (", "mechanisms (", "mechanisms_alt_rfc (", "demo: paper vs ours")
    assert [sum(line.startswith(title) for line in lines) for title in titles] == [1, 1, 1, 1]
    # Per flow: a row per mechanism's goodput, the UDP (flow 0) and the TCPs' mean beside it.
    header = next(i for i, line in enumerate(lines) if line.startswith("per_flow ("))
    assert lines[header + 1].split() == ["flow", "0", "1-31", "31", "rows"]
    drr = next(line for line in lines[header:] if line.startswith("drr (Mbps)"))
    assert float(drr.split()[2]) < 1 and float(drr.split()[3]) < 1  # DRR gives every flow about its share
    # Paper vs ours: each metric's line is followed by its paper value, ours and the verdict.
    csfq = lines.index("UDP goodput, csfq (Mbps)")
    assert lines[csfq + 1].split()[0] == "0.361" and "FAIL" in lines[csfq + 1].split()


def test_a_value_that_could_not_be_measured_is_printed_as_a_dash(tmp_path):
    # Issue 34 item 7: redpd-fig11's ns-2-engine release time is NaN in a quick run (the flow is
    # not released within it); the terminal printed `nan` where the report shows "-".
    done = aqmlab_cli("reproduce", "redpd-fig11", "--quick", "--out", tmp_path)
    assert done.returncode == 0, done.stderr
    assert "nan" not in done.stdout.split()
    rows = json.loads((tmp_path / "rows.json").read_text())["rows"]
    assert [row["key"] for row in rows if row["ours"] is None] == ["release.ns2"]
    # Its line: paper 10.58, ns-2's value, ours "-", the tolerance ±30%, informative.
    line = next(line for line in done.stdout.splitlines() if "±30%" in line and "info" in line)
    assert line.split()[-4:] == ["-", "±30%", "info", "(fail)"], line


def test_results_go_to_stdout_and_diagnostics_to_stderr(tmp_path):
    # Issue 26 item 2: `aqmlab run X > results.txt` gave an empty file (the table went to stderr).
    table = aqmlab_cli("run", "scenarios/cbr-overload.toml")
    assert (table.returncode, table.stderr) == (0, "")
    assert table.stdout.startswith("cbr-overload: goodput and max-min fair share (Mbps)")
    assert [line.split()[1] for line in table.stdout.splitlines()[3:6]] == ["cbr[0]", "cbr[1]", "cbr[2]"]
    compared = aqmlab_cli("compare", "scenarios/cbr-overload.toml", "-m", "red", "--out", tmp_path)
    assert compared.returncode == 0 and compared.stdout.startswith("cbr-overload.toml: mechanisms compared")
    assert any(line.split()[:1] == ["red"] or line.split()[-1:] == ["red"] for line in compared.stdout.splitlines())
    written = ", ".join(
        str(tmp_path / name)
        for name in ("compare.csv", "compare.png", "compare.json", "scenario.json", "scenario.toml")
    )
    assert compared.stderr == f"wrote {written}\n"
    listed = aqmlab_cli("reproduce", "--list")
    assert listed.stderr == "" and "csfq-fig3b" in listed.stdout


def test_bench_scale_reports_progress_on_stderr_and_the_point_on_stdout():
    from aqmlab.bench import scale_scenario

    done = aqmlab_cli("bench", "--only", "scale", "--scale", "100", "--json")
    assert done.returncode == 0, done.stderr
    (point,) = json.loads(done.stdout)["scale"]
    progress = [line for line in done.stderr.splitlines() if "simulated" in line]
    assert [line.split(", ")[0] for line in progress] == [
        f"100 flows: {t / 2:g} of 5 s simulated" for t in range(1, 11)
    ]
    # Run in slices for the progress, the point is the same run as a whole one.
    assert point["events"] == aqmlab.run(scale_scenario(100)).summary()["events"]
    assert point["flows"] == 100 and point["utilisation"]["L->R"] > 0.85
    assert 0 < point["cpu_time_s"] < 2 * point["wall_time_s"]


def test_bench_refuses_a_scale_point_larger_than_the_memory_before_running_anything():
    done = aqmlab_cli("bench", "--only", "scale", "--scale", "100,1000000000")
    assert done.returncode == 2 and done.stdout == ""
    (line,) = done.stderr.splitlines()
    assert line.startswith("error: --scale: 1,000,000,000 flows would take about ") and line.endswith(
        "give fewer flows"
    )
    estimate_gib = float(line.split("about ")[1].split(" GiB")[0])
    # A few KiB per flow: terabytes, more than any machine this runs on.
    assert 1e9 * 4 * 1024 < estimate_gib * 2**30 < 1e9 * 16 * 1024
    done = aqmlab_cli("bench", "--only", "scale", "--scale", "0")
    assert done.returncode == 2 and done.stderr == "error: --scale: every point needs at least 1 flow, got '0'\n"


def test_bench_runs_a_benchmark_once_per_mechanism():
    done = aqmlab_cli("bench", "--only", "demo-red", "--mechanisms", "droptail,sfb", "--repeat", "1", "--json")
    rows = {row["name"]: row for row in json.loads(done.stdout)["runs"]}
    assert list(rows) == ["demo-red/droptail", "demo-red/sfb"]
    # The same traffic under different disciplines: different events, each a full link.
    assert rows["demo-red/droptail"]["events"] != rows["demo-red/sfb"]["events"]
    assert all(row["utilisation"]["L->R"] > 0.95 for row in rows.values())
    done = aqmlab_cli("bench", "--only", "demo-red", "--mechanisms", "nosuch", "--repeat", "1")
    assert done.returncode == 2 and "demo-red/nosuch" in done.stderr and "nosuch" in done.stderr
