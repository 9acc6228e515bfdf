"""`aqmlab run FILE --json` without the CLI framework (python/aqmlab/run_summary.py, issue 21's
start-up goal): which command lines take it, that it prints what the typer path prints, and
that it imports neither typer nor click."""

import json
import subprocess
import sys

import pytest
from aqmlab.run_summary import command_line
from conftest import ROOT

SCENARIO = str(ROOT / "scenarios" / "cbr-overload.toml")


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["run", "x.toml", "--json"], ("x.toml", None)),
        (["run", "--json", "x.toml", "--seed", "7"], ("x.toml", 7)),
        (["run", "x.toml", "--json", "--out", "d"], None),  # files to write: the CLI's
        (["run", "x.toml"], None),  # the table: the CLI's
        (["run", "x.toml", "--json", "--seed", "seven"], None),  # the CLI reports the bad option
        (["run", "x.toml", "y.toml", "--json"], None),
        (["compare", "x.toml", "--json"], None),
    ],
)
def test_only_run_file_json_takes_the_short_path(args, expected):
    assert command_line(args) == expected


def aqmlab(*args: str, python_args: tuple[str, ...] = ()) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, *python_args, "-m", "aqmlab", *args], capture_output=True, text=True)


def test_the_short_path_loads_no_cli_framework():
    short = aqmlab("run", SCENARIO, "--json", "--seed", "3", python_args=("-X", "importtime"))
    assert short.returncode == 0 and "Traceback" not in short.stderr
    imported = {line.split("|")[-1].strip() for line in short.stderr.splitlines() if line.startswith("import time")}
    assert "aqmlab.api" in imported and not {"typer", "click", "pandas"} & imported
    # Nor what only other paths need (OpenSSL behind hashlib takes milliseconds to load).
    assert not {"hashlib", "difflib", "copy"} & imported


def test_the_short_path_and_the_cli_agree(tmp_path):
    short = json.loads(aqmlab("run", SCENARIO, "--json", "--seed", "3").stdout)
    through_cli = aqmlab("run", SCENARIO, "--json", "--seed", "3", "--out", str(tmp_path / "out"), "--no-plots")
    assert through_cli.returncode == 0, through_cli.stderr
    full = json.loads(through_cli.stdout)
    for summary in (short, full):
        del summary["wall_time_s"], summary["events_per_second"]
    assert short == full


def test_the_short_path_reports_a_bad_scenario_in_one_line(tmp_path):
    bad = tmp_path / "bad.toml"
    bad.write_text((ROOT / "scenarios" / "cbr-overload.toml").read_text().replace('duration = "', 'duration = "-'))
    done = aqmlab("run", str(bad), "--json")
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.startswith("error: simulation.duration") and len(done.stderr.splitlines()) == 1
