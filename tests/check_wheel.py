"""aqmlab installed as a user installs it (issue 14 item 7, issue 34 item 2): `make test-wheel` runs this script.

It builds the wheel (maturin, release), installs it into a fresh venv with no extras and, from a
folder outside the checkout, runs the README's commands: `aqmlab --version`, `aqmlab scenarios`,
`aqmlab run cbr-overload --json` and `--out` (a shipped scenario by name), `aqmlab compare` on it,
`aqmlab report` of the run, `aqmlab sweep droptail-buffer` on local workers (and with `--scheduler`,
which needs the dask extra: exit status 2 naming it), `aqmlab reproduce demo --quick`, which reads its
scenario file from the package data, and `aqmlab validate ns2 --json`, which reads its scenarios and
ns-2's recorded numbers from there. Each must exit with its status exactly (the demo and the ns2
suite 1 exactly when one of their graded rows fails) and print no traceback; `aqmlab characterize red
--quick --only 5.1.1 --json` shows the ns-3 suite's column from the package data.

The fresh venv gets no network: it borrows from the running venv exactly the distributions the
wheel requires without extras, and what they require in turn (each linked into a folder the venv
reads through a .pth line), so a package the code imports but pyproject.toml does not declare is
missing there as it is for a user (issue 34: click). aqmlab itself comes only from the wheel
(checked: the module's file is in the fresh venv), and dask is checked to be absent.

    python tests/check_wheel.py [--wheel WHEEL] [--keep]
"""

from __future__ import annotations

import argparse
import importlib.metadata
import json
import shutil
import subprocess
import sys
import tempfile
import time
import zipfile
from email.parser import Parser
from pathlib import Path

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

ROOT = Path(__file__).resolve().parents[1]


def run(*args: str | Path, **kwargs) -> subprocess.CompletedProcess:
    return subprocess.run([str(a) for a in args], check=True, text=True, **kwargs)


def required_distributions(wheel: Path) -> list[importlib.metadata.Distribution]:
    """The running venv's distributions that installing `wheel` without extras pulls in.

    Raises SystemExit naming a requirement the running venv lacks or holds at another version.
    """
    with zipfile.ZipFile(wheel) as archive:
        (metadata,) = [name for name in archive.namelist() if name.endswith(".dist-info/METADATA")]
        lines = Parser().parsestr(archive.read(metadata).decode()).get_all("Requires-Dist", [])
    # (requirement, the extra of the distribution that states it: its marker is read with that)
    pending = [(Requirement(line), "") for line in lines]
    found: dict[str, importlib.metadata.Distribution] = {}
    expanded: set[tuple[str, str]] = set()  # (distribution, extra) whose requirements are in `pending`
    while pending:
        requirement, stated_for = pending.pop()
        if requirement.marker and not requirement.marker.evaluate({"extra": stated_for}):
            continue
        try:
            distribution = importlib.metadata.distribution(requirement.name)
        except importlib.metadata.PackageNotFoundError:
            raise SystemExit(f"{requirement}: not in {sys.prefix}, so it cannot be lent to the fresh venv") from None
        if distribution.version not in requirement.specifier:
            raise SystemExit(f"{requirement}: {sys.prefix} has {distribution.version}")
        name = canonicalize_name(requirement.name)
        found[name] = distribution
        for extra in ("", *sorted(requirement.extras)):  # `dask[distributed]` adds what its extra requires
            if (name, extra) not in expanded:
                expanded.add((name, extra))
                pending += [(Requirement(line), extra) for line in distribution.requires or []]
    return list(found.values())


def lend(distributions: list[importlib.metadata.Distribution], folder: Path) -> None:
    """Link each distribution's top-level files (packages, modules, .dist-info) into `folder`."""
    folder.mkdir()
    for distribution in distributions:
        if distribution.files is None:
            raise SystemExit(f"{distribution.name}: installed without a RECORD, its files are unknown")
        for top in {file.parts[0] for file in distribution.files} - {"..", "__pycache__"}:
            source = Path(distribution.locate_file(top))
            if source.exists() and not (folder / top).exists():
                (folder / top).symlink_to(source)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--wheel", type=Path, help="install this wheel rather than building one")
    parser.add_argument("--keep", action="store_true", help="keep the temporary folder")
    options = parser.parse_args()
    started = time.monotonic()
    work = Path(tempfile.mkdtemp(prefix="aqmlab-wheel-"))
    try:
        if options.wheel:
            wheel = options.wheel.resolve()
        else:
            wheels = work / "wheels"
            maturin = Path(sys.executable).parent / "maturin"
            run(maturin, "build", "--release", "--quiet", "--out", wheels, cwd=ROOT)
            (wheel,) = wheels.glob("aqmlab-*.whl")
        built = time.monotonic()

        venv = work / "venv"
        run(sys.executable, "-m", "venv", "--without-pip", venv)
        python = venv / "bin" / "python"
        run(sys.executable, "-m", "pip", "--python", python, "install", "--quiet", "--no-deps", "--no-index", wheel)
        site = run(python, "-c", "import sysconfig; print(sysconfig.get_path('purelib'))", capture_output=True)
        lent = required_distributions(wheel)
        lend(lent, work / "lent")
        Path(site.stdout.strip(), "lent-dependencies.pth").write_text(f"{work / 'lent'}\n")

        outside = work / "elsewhere"
        outside.mkdir()
        where = run(python, "-c", "import aqmlab; print(aqmlab.__file__)", cwd=outside, capture_output=True)
        assert Path(where.stdout.strip()).is_relative_to(venv), f"aqmlab imported from {where.stdout}"
        no_dask = subprocess.run([python, "-c", "import dask"], cwd=outside, capture_output=True, text=True)
        assert "No module named 'dask'" in no_dask.stderr, f"dask is importable without the extra: {no_dask}"

        failures: list[str] = []
        ran: list[str] = []

        def aqmlab(*args: str | Path, status: int | None = 0) -> subprocess.CompletedProcess:
            """Run the installed command from `outside`; a status other than `status`, or a
            traceback, is a failure. `status=None`: the caller decides from the output."""
            ran.append(" ".join(map(str, args)))
            done = subprocess.run(
                [venv / "bin" / "aqmlab", *map(str, args)],
                cwd=outside,
                capture_output=True,
                text=True,
                env={"MPLBACKEND": "Agg", "PATH": "/usr/bin:/bin", "HOME": str(outside)},
            )
            if (status is not None and done.returncode != status) or "Traceback" in done.stderr:
                failures.append(f"aqmlab {' '.join(map(str, args))}: exit status {done.returncode}\n{done.stderr}")
            return done

        def expect(condition: bool, what: str, done: subprocess.CompletedProcess) -> None:
            if not condition:
                failures.append(f"aqmlab {' '.join(done.args[1:])}: {what}\n{done.stdout}\n{done.stderr}")

        version = aqmlab("--version")
        print(version.stdout.strip())
        listed = aqmlab("scenarios")
        expect("cbr-overload" in listed.stdout and "csfq-fig3b" in listed.stdout, "lists the shipped scenarios", listed)
        summary = aqmlab("run", "cbr-overload", "--json")
        expect(summary.stdout.startswith("{") and json.loads(summary.stdout)["name"] == "cbr-overload", "JSON", summary)
        aqmlab("run", "cbr-overload", "--out", outside / "run")
        report = aqmlab("report", outside / "run")
        expect((outside / "run" / "report.html").is_file(), "writes run/report.html", report)
        compared = aqmlab("compare", "cbr-overload", "-m", "scenario,fq_codel", "--out", outside / "compare")
        expect((outside / "compare" / "compare.png").is_file(), "writes compare/compare.png", compared)
        swept = aqmlab("sweep", "droptail-buffer", "--out", outside / "sweep", "--workers", "2")
        expect((outside / "sweep" / "jobs.csv").is_file(), "writes sweep/jobs.csv", swept)
        on_dask = aqmlab(
            "sweep", "droptail-buffer", "--out", outside / "dask", "--scheduler", "tcp://127.0.0.1:1", status=2
        )
        expect("pip install 'aqmlab[dask]'" in on_dask.stderr, "names the dask extra", on_dask)

        demo = aqmlab("reproduce", "demo", "--quick", "--out", outside / "demo", status=None)
        rows = outside / "demo" / "rows.json"
        # `reproduce` exits 1 exactly when a paper row fails (the demo has still run).
        expected = (0 if json.loads(rows.read_text())["passed"] else 1) if rows.is_file() else None
        expect(demo.returncode == expected, f"exit status {demo.returncode}, rows.json says {expected}", demo)
        # Exit status 1 exactly when a graded row fails (docs/ns2.md says which and why); stale
        # numbers or a file missing from the wheel would be errors.
        ns2 = aqmlab("validate", "ns2", "--json", status=None)
        printed = json.loads(ns2.stdout) if ns2.stdout.startswith("{") else {}
        failed = any(not row["pass"] and row.get("graded", True) for row in printed.get("rows", []))
        expect(printed.get("stale") == [] and ns2.returncode == int(failed), f"exit status {ns2.returncode}", ns2)

        # The ns-3 suite's recorded numbers ship in the package: quick mode shows them, ungraded.
        char = aqmlab("characterize", "red", "--quick", "--only", "5.1.1", "--json", "--out", outside / "char")
        cell = json.loads(char.stdout)["tests"][0]["cases"][0]["cells"]["red"] if char.stdout.startswith("{") else {}
        expect("ns3" in cell and (outside / "char" / "index.html").is_file(), "characterize with ns-3's column", char)

        for failure in failures:
            print(f"FAILED: {failure}", file=sys.stderr)
        if failures:
            return 1
        done = time.monotonic()
        print(
            f"wheel {wheel.name}: built in {built - started:.0f} s; installed with no extras "
            f"({len(lent)} distributions: {', '.join(sorted(d.name for d in lent))}) "
            f"and ran {len(ran)} aqmlab commands from {outside} in {done - built:.0f} s"
        )
        return 0
    finally:
        if options.keep:
            print(f"kept {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
