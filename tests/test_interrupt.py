"""Ctrl-C stops a run within a second (issue 14 item 3): the API raises KeyboardInterrupt,
the CLI prints one line and exits 130, and an interrupted sweep keeps its finished jobs.

These are behaviour tests with generous bounds, not speed benchmarks: a run that ignored
Ctrl-C would go on for minutes, far past them."""

import os
import re
import signal
import subprocess
import threading
import time

import aqmlab
import pytest
from aqmlab.sweep import load_spec, pending_jobs
from conftest import LONG, aqmlab_process, write_scenario

# From Ctrl-C to the process's exit: the core checks for it every ~65 000 events (milliseconds),
# so this covers a slow, shared machine.
STOP_WITHIN_S = 5.0
INTERRUPTED = re.compile(r"^interrupted at (\d+\.\d) s of 3600 s simulated$")


def _interrupt(process: subprocess.Popen, after_s: float, group: bool = False) -> tuple[float, str]:
    """Sends SIGINT (to the process group, as a terminal's Ctrl-C does, with `group`) after
    `after_s`; returns the seconds until the process exited, and its stderr."""
    time.sleep(after_s)
    assert process.poll() is None, process.communicate()
    sent = time.monotonic()
    if group:
        os.killpg(process.pid, signal.SIGINT)
    else:
        process.send_signal(signal.SIGINT)
    _, stderr = process.communicate(timeout=60)
    return time.monotonic() - sent, stderr


def test_ctrl_c_stops_aqmlab_run_with_one_line_and_status_130(tmp_path):
    process = aqmlab_process("run", write_scenario(tmp_path / "long.toml", LONG))
    waited, stderr = _interrupt(process, after_s=3.0)
    assert process.returncode == 130, stderr
    assert "Traceback" not in stderr
    last = stderr.strip().splitlines()[-1]
    match = INTERRUPTED.match(last)
    assert match, stderr
    assert 0 < float(match[1]) < 3600
    assert waited < STOP_WITHIN_S


def test_ctrl_c_stops_a_sweep_and_it_resumes_with_the_finished_jobs(tmp_path):
    base = write_scenario(tmp_path / "base.toml", LONG)
    spec = tmp_path / "sweep.toml"
    # Two short jobs finish at once; the long one is still running at Ctrl-C.
    spec.write_text(f'scenario = "{base}"\n[grid]\n"simulation.duration" = ["2s", "3s", "1h"]\n')
    out = tmp_path / "out"
    process = aqmlab_process("sweep", spec, "--out", out, "--workers", "2", start_new_session=True)
    waited, stderr = _interrupt(process, after_s=8.0, group=True)
    assert process.returncode == 130, stderr
    assert "Traceback" not in stderr
    assert stderr.strip().splitlines()[-1].startswith("interrupted: 2 of 3 jobs finished, kept in "), stderr
    assert waited < STOP_WITHIN_S
    # Rerunning the same command runs only the cut job.
    assert [job.params["simulation.duration"] for job in pending_jobs(load_spec(spec), out)] == ["1h"]


def test_the_api_raises_keyboard_interrupt_and_says_how_far_it_got():
    timer = threading.Timer(1.0, os.kill, (os.getpid(), signal.SIGINT))
    timer.start()
    started = time.monotonic()
    try:
        with pytest.raises(KeyboardInterrupt, match=INTERRUPTED.pattern):
            aqmlab.run(LONG)
    finally:
        timer.cancel()
    assert time.monotonic() - started < 1.0 + STOP_WITHIN_S
