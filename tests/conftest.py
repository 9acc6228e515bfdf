"""Shared helpers: small scenarios built in code, and running the `aqmlab` command."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def dumbbell(
    *flows: dict,
    rate: str = "10Mbps",
    delay: str = "5ms",
    qdisc: dict | None = None,
    duration: str = "3s",
    warmup: str = "1s",
    seed: int = 1,
    access_rate: str | None = None,
    access_delay: str | None = None,
) -> dict:
    """A dumbbell scenario dict with the given flow tables (the access links' defaults unless given)."""
    access = {"access_rate": access_rate, "access_delay": access_delay}
    return {
        "name": "test",
        "simulation": {"duration": duration, "warmup": warmup, "seed": seed},
        "topology": {
            "type": "dumbbell",
            "bottleneck": {"rate": rate, "delay": delay, "qdisc": qdisc or {"type": "droptail", "limit": 100}},
            **{key: value for key, value in access.items() if value is not None},
        },
        "flows": list(flows),
    }


# An hour of 100 CBR flows on a 1 Gbps link: billions of events, minutes of wall time, so only
# an interrupt (or a kill) ends it in a test.
LONG = dumbbell({"type": "cbr", "rate": "10Mbps", "count": 100}, rate="1Gbps", duration="1h")


def toml_text(data: dict) -> str:
    """A scenario dict as TOML (enough for test scenarios: tables, lists of tables, scalars)."""

    def value(v) -> str:
        if isinstance(v, bool):
            return "true" if v else "false"
        if isinstance(v, str):
            return json.dumps(v)
        if isinstance(v, dict):
            return "{ " + ", ".join(f"{k} = {value(x)}" for k, x in v.items()) + " }"
        if isinstance(v, list):
            return "[" + ", ".join(value(x) for x in v) + "]"
        return repr(v)

    lines = [f"{k} = {value(v)}" for k, v in data.items() if not isinstance(v, (dict, list))]
    for k, v in data.items():
        if isinstance(v, dict):
            lines += [f"[{k}]"] + [f"{kk} = {value(vv)}" for kk, vv in v.items()]
        elif isinstance(v, list):
            for item in v:
                lines += [f"[[{k}]]"] + [f"{kk} = {value(vv)}" for kk, vv in item.items()]
    return "\n".join(lines) + "\n"


def write_scenario(path: Path, data: dict) -> Path:
    path.write_text(toml_text(data))
    return path


def aqmlab_cli(*args: str, cwd: Path | None = None, columns: int | None = 120) -> subprocess.CompletedProcess:
    """Runs `python -m aqmlab ARGS` in a terminal `columns` wide (None: piped, as `| less` runs
    it, with no COLUMNS) and returns the finished process (stdout and stderr as text). Every CLI
    invocation of the suite goes through here, and none may print a traceback, whatever its exit
    status (issue 22)."""
    env = {k: v for k, v in os.environ.items() if k != "COLUMNS"} | {"MPLBACKEND": "Agg"}
    if columns is not None:
        env["COLUMNS"] = str(columns)
    done = subprocess.run(
        [sys.executable, "-m", "aqmlab", *map(str, args)],
        capture_output=True,
        text=True,
        cwd=cwd or ROOT,
        env=env,
        timeout=300,
    )
    assert "Traceback" not in done.stderr, f"aqmlab {' '.join(map(str, args))}:\n{done.stderr}"
    return done


def aqmlab_process(*args: str, **popen) -> subprocess.Popen:
    """Starts `python -m aqmlab ARGS` (stdout and stderr piped, as text) and returns the process."""
    env = {**os.environ, "MPLBACKEND": "Agg"}
    return subprocess.Popen(
        [sys.executable, "-m", "aqmlab", *map(str, args)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=ROOT,
        env=env,
        **popen,
    )


@pytest.fixture
def cbr_scenario() -> dict:
    return dumbbell({"type": "cbr", "rate": "5Mbps", "jitter": True})


def failing(reproduction) -> set[str]:
    """Keys of a reproduction's graded rows that fail; each must carry a measured reason."""
    keys = {row.key for row in reproduction.rows if row.graded and not row.passed}
    assert all(reproduction.reasons.get(key) for key in keys), reproduction.reasons
    return keys


def rows(reproduction) -> dict:
    """A reproduction's rows by key."""
    return {row.key: row for row in reproduction.rows}


# Generous bounds for a shared machine; what they catch takes minutes (LONG) or forever.
WITHIN_S = 30.0


def wait_for(condition: Callable[[], bool], what: str, within: float = WITHIN_S) -> None:
    deadline = time.monotonic() + within
    while not condition():
        assert time.monotonic() < deadline, f"waited {within} s for {what}"
        time.sleep(0.05)


@pytest.fixture
def dask_cluster(tmp_path):
    """A Dask scheduler and one worker of two threads, each its own process (for the tests to
    kill); yields the address and the processes."""
    pytest.importorskip("distributed")
    file = tmp_path / "scheduler.json"
    quiet = {"stdout": subprocess.DEVNULL, "stderr": subprocess.DEVNULL}
    scheduler = subprocess.Popen(
        [sys.executable, "-m", "distributed.cli.dask_scheduler", "--host", "127.0.0.1", "--port", "0"]
        + ["--no-dashboard", "--scheduler-file", str(file)],
        **quiet,
    )
    worker = subprocess.Popen(
        [sys.executable, "-m", "distributed.cli.dask_worker", "--scheduler-file", str(file)]
        + ["--nthreads", "2", "--no-nanny", "--no-dashboard"],
        env={**os.environ, "MPLBACKEND": "Agg"},
        **quiet,
    )
    try:
        wait_for(lambda: file.is_file() and file.stat().st_size > 0, "the scheduler")
        yield json.loads(file.read_text())["address"], {"scheduler": scheduler, "worker": worker}
    finally:
        for process in (worker, scheduler):
            process.kill()
            process.wait()
