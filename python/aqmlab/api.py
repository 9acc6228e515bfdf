"""`aqmlab.run`: run a scenario, optionally in steps that report progress."""

from __future__ import annotations

import contextlib
import contextvars
import json
import time
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path

from . import _core
from .results import Results
from .scenario import Scenario

# progress(simulated_seconds_done, simulated_seconds_total, label)
Progress = Callable[[float, float, str], None]

# Wall time one step aims for when running with a progress callback.
STEP_WALL_SECONDS = 0.25

_default_progress: contextvars.ContextVar[Progress | None] = contextvars.ContextVar("aqmlab_progress", default=None)


@contextlib.contextmanager
def reporting(progress: Progress | None) -> Iterator[None]:
    """Within the block, every `run` without its own `progress` reports to this one
    (the CLI uses it to show progress bars for experiments it does not control)."""
    token = _default_progress.set(progress)
    try:
        yield
    finally:
        _default_progress.reset(token)


def _as_scenario(scenario: Scenario | Mapping | str | Path) -> Scenario:
    if isinstance(scenario, Scenario):
        return scenario
    if isinstance(scenario, Mapping):
        return Scenario.from_dict(scenario)
    return Scenario.load(scenario)


def run(
    scenario: Scenario | Mapping | str | Path, progress: Progress | None = None, pcap_dir: str | Path | None = None
) -> Results:
    """Runs a scenario (a `Scenario`, a dict, or a path to a TOML file) to its end.

    `progress(done, total, label)` is called between steps of roughly
    `STEP_WALL_SECONDS` of wall time with the simulated seconds done and the
    duration, and once more at the end, labelled `<label>: collecting results`, while the
    core assembles the tables (seconds, with thousands of flows). With `pcap_dir`, the links
    `simulation.pcap` names are captured into that folder as the run goes (`<link>.pcap`,
    listed in `Results.pcap_files`).
    Raises `ScenarioError` (a ValueError) naming the bad field, `RuntimeError`
    ("internal error: ...") if the simulator itself breaks an invariant, `OSError` if a
    capture cannot be written, and on Ctrl-C
    `KeyboardInterrupt("interrupted at 12.3 s of 100 s simulated")`.
    """
    return _run(_as_scenario(scenario), progress, pcap_dir, summary_only=False)


def summary(scenario: Scenario | Mapping | str | Path, progress: Progress | None = None) -> dict:
    """Runs a scenario as `run` does and returns only `Results.summary()` (what `aqmlab run
    --json` prints), without the tables: the core then sends back its summary, flows and
    drop counts only, a small fraction of a whole result (issue 21's start-up goal).

        aqmlab.api.summary("csfq-fig3b")["jain_index"]
    """
    return _run(_as_scenario(scenario), progress, None, summary_only=True).summary()


def _run(scenario: Scenario, progress: Progress | None, pcap_dir: str | Path | None, summary_only: bool) -> Results:
    progress = progress or _default_progress.get()
    text = scenario.to_json()
    start = time.perf_counter()
    pcap_files: list[Path] = []
    if progress is None and pcap_dir is None:
        raw = _core.run(text, summary_only=summary_only)
    else:
        sim = _core.Simulation(text)
        if pcap_dir is not None:
            pcap_files = [Path(p) for p in sim.capture_into(Path(pcap_dir))]
        raw = _run_in_steps(sim, progress, _label(scenario), summary_only)
    wall = time.perf_counter() - start
    return Results(json.loads(raw), scenario, wall, pcap_files)


def _label(scenario: Scenario) -> str:
    """`name (qdisc)` for a dumbbell, else the name: tells runs of one setup apart."""
    name = scenario.name or (scenario.source.stem if scenario.source else "run")
    if scenario.get_or("topology.type") == "dumbbell":
        return f"{name} ({scenario.get_or('topology.bottleneck.qdisc.type', 'droptail')})"
    return name


def _run_in_steps(sim: _core.Simulation, progress: Progress | None, label: str, summary_only: bool) -> str:
    """Runs `sim` to its end, reporting to `progress` (if any) between steps."""
    total = sim.duration
    if progress is None:
        sim.run_until(total)
        return sim.results(summary_only=summary_only)
    step = total / 100
    progress(0.0, total, label)
    done = 0.0
    try:
        while done < total:
            t0 = time.perf_counter()
            done = min(done + step, total)
            sim.run_until(done)
            elapsed = time.perf_counter() - t0
            # Aim each step at STEP_WALL_SECONDS of wall time, growing at most 4x at once.
            step = min(step * 4, step * STEP_WALL_SECONDS / max(elapsed, 1e-6))
            progress(done, total, label)
    except KeyboardInterrupt as e:
        if e.args:  # the core's, which says how far the run got
            raise
        # Ctrl-C between two steps: say the same as the core does within one.
        raise KeyboardInterrupt(f"interrupted at {sim.now:.1f} s of {total:g} s simulated") from None
    # With many flows, collecting the tables takes seconds after the last event (issue 26).
    progress(total, total, f"{label}: collecting results")
    try:
        return sim.results(summary_only=summary_only)
    except KeyboardInterrupt:
        raise KeyboardInterrupt(f"interrupted while collecting the results ({total:g} s simulated)") from None
