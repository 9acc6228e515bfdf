"""Every command README.md shows, run as a user runs it (a quick variant where the README's
takes minutes): none may print a traceback, each exits with the status it documents (0, and
1 exactly when a paper row fails), results go to stdout and `--json` prints nothing but JSON.
A command added to the README without a case here fails
`test_every_command_in_the_readme_has_a_case`, so the README cannot outgrow its tests."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from aqmlab.cli import COMMANDS
from conftest import ROOT, aqmlab_cli

README = ROOT / "README.md"
SCENARIO = "cbr-overload"


@dataclass
class Case:
    """One invocation: `args` (`{out}` is a fresh folder), and the exit status expected: 0, or
    `rows_in`: the experiment folder whose rows.json says whether a row failed (then 1), or with
    `rows_on_stdout` the `--json` rows it printed (1 when a graded row fails or a reference is
    stale)."""

    args: list[str]
    rows_in: str | None = None
    rows_on_stdout: bool = False
    # False for the commands whose result is files (sweep, report): they say where on stderr.
    prints: bool = True
    # Runs ns-2: left out where `ns` is not installed.
    needs_ns2: bool = False
    json: bool = field(init=False)

    def __post_init__(self) -> None:
        self.json = "--json" in self.args


# README command (as written there) -> what runs for it, in this order (`report` reads the
# folders the commands before it wrote).
CASES: dict[str, list[Case]] = {
    "make demo": [Case(["reproduce", "demo", "--quick", "--out", "{out}/demo"], rows_in="{out}/demo")],
    "aqmlab reproduce demo --quick": [
        Case(["reproduce", "demo", "--quick", "--json", "--out", "{out}/demo-json"], rows_in="{out}/demo-json")
    ],
    "aqmlab run FILE --out DIR [--format parquet|csv] [--no-plots] [--seed N] [--force] [--wait]": [
        Case(["run", SCENARIO, "--out", "{out}/run"]),
        Case(["run", SCENARIO, "--out", "{out}/run-csv", "--format", "csv", "--no-plots", "--seed", "2"]),
        # Another run's folder: replaced with --force.
        Case(["run", SCENARIO, "--out", "{out}/run-csv", "--seed", "3", "--force", "--wait"]),
    ],
    "aqmlab run FILE --json": [Case(["run", SCENARIO, "--json"])],
    "aqmlab run FILE > results.txt": [Case(["run", SCENARIO])],
    "aqmlab run FILE --out DIR --pcap 'L->R,src0-L' [--pcap-drops]": [
        Case(["run", SCENARIO, "--out", "{out}/pcap", "--pcap", "L->R,src0-L", "--pcap-drops"])
    ],
    "aqmlab reproduce --list": [Case(["reproduce", "--list"]), Case(["reproduce", "--list", "--json"])],
    "aqmlab reproduce ID [--quick] [-m NAMES] [--json] [--out DIR]": [
        Case(["reproduce", "redpd-fig11", "--quick", "--json", "--out", "{out}/fig11"], rows_in="{out}/fig11"),
        Case(["reproduce", "today-tcp", "--quick", "-m", "codel", "--out", "{out}/today"], rows_in="{out}/today"),
    ],
    "aqmlab reproduce --all --out DIR [--quick] [--workers N | --scheduler ADDRESS] [--only ID,ID] [--wait]": [
        Case(
            [
                "reproduce",
                "--all",
                "--out",
                "{out}/all",
                "--quick",
                "--workers",
                "1",
                "--only",
                "redpd-fig11",
                "--wait",
            ],
            rows_in="{out}/all/redpd-fig11",
        )
    ],
    "aqmlab reproduce --all --quick --out out/all": [
        Case(
            ["reproduce", "--all", "--quick", "--out", "{out}/all", "--only", "redpd-fig11"],
            rows_in="{out}/all/redpd-fig11",
        )
    ],
    "aqmlab compare FILE [-m NAMES|all] [--link 'A->B'] [--out DIR] [--json] [--emulate]": [
        Case(["compare", SCENARIO, "-m", "red,drr,fq_codel", "--out", "{out}/compare"]),
        Case(["compare", SCENARIO, "-m", "droptail", "--json"]),
        Case(["compare", "parking-lot", "-m", "scenario,fq_codel", "--link", "B->C", "--json"]),
    ],
    "aqmlab characterize MECHS [--quick] [--only SECTIONS] [--out DIR] [--json] [--workers N | --scheduler ADDR]": [
        Case(["characterize", "red,fq_codel", "--quick", "--only", "5.1.1,10", "--out", "{out}/characterize"]),
        Case(["characterize", "codel", "--quick", "--only", "6", "--json", "--out", "{out}/characterize-json"]),
    ],
    "aqmlab sweep SPEC --out DIR [--workers N] [--scheduler ADDRESS] [--wait]": [
        Case(["sweep", "droptail-buffer", "--out", "{out}/sweep", "--workers", "2", "--wait"])
    ],
    "aqmlab report DIR": [
        Case(["report", "{out}/" + folder], prints=False)
        for folder in ("run", "pcap", "fig11", "all", "sweep", "compare", "characterize")
    ],
    "aqmlab validate tcp [--json]": [Case(["validate", "tcp", "--json"])],
    "aqmlab validate ns2 [--live] [--json]": [Case(["validate", "ns2", "--json"], rows_on_stdout=True)],
    "aqmlab validate linux [--live] [--json]": [Case(["validate", "linux", "--json"], rows_on_stdout=True)],
    "aqmlab validate emulate [--live] [--json]": [Case(["validate", "emulate", "--json"], rows_on_stdout=True)],
    "aqmlab bench [--json] [--repeat N] [--only NAME] [-m NAMES|all] [--scale N,...] [--ns3 PATH] [--ns2]": [
        Case(["bench", "--only", "demo-red", "--repeat", "1"]),
        Case(["bench", "--only", "scale", "--scale", "100", "--repeat", "1", "--json"]),
        Case(["bench", "--ns2", "--only", "ns2-a", "--repeat", "1", "--json"], needs_ns2=True),
    ],
    "aqmlab export ns2 FILE [-o OUT.tcl]": [
        Case(["export", "ns2", "python/aqmlab/ns2/scenarios/tcp1-reno.toml"]),
        Case(["export", "ns2", SCENARIO]),
        Case(["export", "ns2", SCENARIO, "-o", "{out}/cbr-overload.tcl"], prints=False),
    ],
    # Root is needed (CI runs as root; tests/test_emulate.py covers the refusal without it).
    "aqmlab emulate FILE [--duration TIME] [--json] [--out DIR [--pcap 'L->R,R->L'] [--pcap-drops]]": [
        Case(["emulate", SCENARIO, "--duration", "3", "--warmup", "1", "--json"]),
        Case(["emulate", SCENARIO, "--duration", "2", "--warmup", "1", "--out", "{out}/emu", "--pcap", "L->R,R->L"]),
    ],
    "aqmlab crosscheck FILE [--seeds N] [--json]": [
        Case(["crosscheck", SCENARIO, "--seeds", "2", "--json"], needs_ns2=True)
    ],
    "make bench-qdiscs": [Case(["bench", "--only", "demo-red", "--mechanisms", "all", "--repeat", "1", "--json"])],
    "aqmlab scenarios [NAME] [--copy DEST]": [
        Case(["scenarios"]),
        Case(["scenarios", "parking-lot"]),
        Case(["scenarios", "parking-lot", "--copy", "{out}/parking-lot.toml"], prints=False),
        Case(["run", "{out}/parking-lot.toml"]),
    ],
    "aqmlab run csfq-fig3b": [Case(["run", "csfq-fig3b"])],
    "aqmlab scenarios": [Case(["scenarios"])],
    "aqmlab --help": [Case(["--help"])],
    "aqmlab COMMAND --help": [Case([command, "--help"]) for command in COMMANDS],
    "aqmlab --version": [Case(["--version"])],
}

# README commands that are the test suite itself, or take minutes by design.
NOT_RUN_HERE = {
    "make test": "the whole suite, this file included",
    "make test-wheel": "builds the wheel with cargo (tests/check_wheel.py)",
    "make fuzz-long": "the long fuzz, minutes by design (tests/test_fuzz.py runs its quick form)",
    "make linux-reference": "runs Linux in User-Mode Linux for about an hour (tests/test_linux.py reads its numbers)",
    "make linux-emulated": "emulates every Linux cell as root, about half an hour (test_linux.py reads its numbers)",
}


def readme_commands() -> set[str]:
    """The commands README.md shows: lines of its code blocks and inline code that start with
    `aqmlab ` or `make ` (a table cell's `\\|` read as `|`)."""
    text = README.read_text()
    found = set()
    for block in re.findall(r"```[a-z]*\n(.*?)```", text, re.S):
        for line in block.splitlines():
            if re.match(r"(aqmlab|make) ", line.strip()):
                found.add(line.split("#")[0].strip())
    prose = re.sub(r"```.*?```", "", text, flags=re.S)
    for span in re.findall(r"`([^`\n]+)`", prose):
        if re.match(r"(aqmlab|make) ", span):
            found.add(span.replace("\\|", "|"))
    return found


def test_every_command_in_the_readme_has_a_case():
    shown = readme_commands()
    assert shown - set(CASES) - set(NOT_RUN_HERE) == set(), "add a case for each"
    assert set(CASES) - shown == set(), "cases for commands the README no longer shows"


@pytest.fixture(scope="module")
def ran(tmp_path_factory) -> dict[str, list[tuple[Case, subprocess.CompletedProcess]]]:
    out = tmp_path_factory.mktemp("readme")
    results: dict[str, list[tuple[Case, subprocess.CompletedProcess]]] = {}
    for command, cases in CASES.items():
        for case in cases:
            if case.needs_ns2 and shutil.which("ns") is None:
                continue
            args = [arg.replace("{out}", str(out)) for arg in case.args]
            done = aqmlab_cli(*args)
            if case.rows_in is not None:
                case.rows_in = case.rows_in.replace("{out}", str(out))
            results.setdefault(command, []).append((case, done))
    return results


def expected_status(case: Case, stdout: str) -> int:
    """0, or 1 exactly when a paper row failed (by the rows.json the command wrote), or a graded
    row it printed failed or its reference is stale."""
    if case.rows_on_stdout:
        printed = json.loads(stdout)
        failed = any(not row["pass"] and row.get("graded", True) for row in printed["rows"])
        return int(failed or bool(printed.get("stale")))
    if case.rows_in is None:
        return 0
    return 0 if json.loads((Path(case.rows_in) / "rows.json").read_text())["passed"] else 1


@pytest.mark.parametrize("command", list(CASES))
def test_the_readme_command_runs_without_a_traceback_and_exits_as_documented(ran, command):
    for case, done in ran.get(command, []):
        assert "Traceback" not in done.stderr, (case.args, done.stderr)
        assert done.returncode == expected_status(case, done.stdout), (case.args, done.returncode, done.stderr[-2000:])
        assert bool(done.stdout.strip()) == case.prints, (case.args, "prints its result on stdout", done.stdout)
        if case.json:
            json.loads(done.stdout)  # nothing but one JSON value
