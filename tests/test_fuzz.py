"""Fuzzing (issue 14 item 2): the shipped scenarios, mutated (fields deleted, wrong types,
extreme numbers, nan and inf, huge counts, unknown names), either run or raise ScenarioError
whose message starts with a field path; never a panic, an abort, another exception, or a run
past its wall-time bound.

Runs are cut at `SIMULATED_S` of simulated time (the duration itself is still validated as
written), so every case is short; a run still going after `WALL_BOUND_S` is stopped by an
alarm, whose handler the core runs between event slices, and fails the case.

`make test` runs the "quick" profile (`QUICK_CASES` cases); before a release run the long one:
`HYPOTHESIS_PROFILE=long python -m pytest tests/test_fuzz.py` (10 000 cases, or set
AQMLAB_FUZZ_CASES), which `make fuzz-long` does with the Rust fuzz loop (docs/scenario.md).
"""

from __future__ import annotations

import copy
import json
import os
import re
import signal
import sys
import time
import tomllib
from typing import Any

import aqmlab
from aqmlab import _core
from aqmlab.results import Results
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

QUICK_CASES = 200
LONG_CASES = int(os.environ.get("AQMLAB_FUZZ_CASES", "10000"))
settings.register_profile(
    "quick",
    max_examples=QUICK_CASES,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
settings.register_profile(
    "long",
    max_examples=LONG_CASES,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
PROFILE = os.environ.get("HYPOTHESIS_PROFILE", "quick")

# Simulated time each valid case runs; the wall-time bound no case may pass.
SIMULATED_S = 0.1
WALL_BOUND_S = 60.0

SCENARIOS = {path.name: tomllib.loads(path.read_text()) for path in sorted(aqmlab.scenarios_dir().glob("*.toml"))}
# `topology.bottleneck.qdisc.max_p: ...`, `flows[3].rate: ...`, `simulation: ...`; a key that is
# not a plain name is quoted (`flows[0]."a b": ...`).
KEY = r'([\w-]+|"(?:[^"\\]|\\.)*")'
FIELD_PATH = re.compile(rf"^{KEY}(\[\d+\]|\.{KEY})*: ")

UNKNOWN_NAMES = ["fifo", "sfq", "", "Dumbbell", "tcp ", "red-pd", "typo", "__proto__"]
EXTREME_NUMBERS = [
    float("nan"),
    float("inf"),
    float("-inf"),
    1e308,
    -1e308,
    5e-324,
    1e-300,
    0,
    -1,
    0.5,
    2**31,
    2**32,
    2**63 - 1,
    2**64,
    10**30,
    1e12,
    1e13,
    1e9,
    1e10,
    10_000,
    10_001,
    1000,
]
UNITS = ["", "s", "ms", "us", "ns", "min", "h", "hour", "bps", "Mbps", "Gbps", "b/s", "KB", "KiB", "MB", "furlongs"]


def _slots(node: Any, path: tuple = ()) -> list[tuple]:
    """Every (path to a value) in the scenario tree, tables and lists included."""
    out = [path] if path else []
    if isinstance(node, dict):
        for key, value in node.items():
            out += _slots(value, (*path, key))
    elif isinstance(node, list):
        for index, value in enumerate(node):
            out += _slots(value, (*path, index))
    return out


def _parent(data: Any, path: tuple) -> Any:
    for part in path[:-1]:
        data = data[part]
    return data


values = st.one_of(
    st.sampled_from(EXTREME_NUMBERS),
    st.floats(allow_nan=True, allow_infinity=True),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.builds(lambda x, unit: f"{x}{unit}", st.sampled_from(EXTREME_NUMBERS), st.sampled_from(UNITS)),
    st.builds(lambda x, unit: f"{x}{unit}", st.floats(allow_nan=True, allow_infinity=True), st.sampled_from(UNITS)),
    st.sampled_from(UNKNOWN_NAMES),
    st.text(max_size=8),
    st.booleans(),
    st.none(),
    st.just([]),
    st.just({}),
    st.just([1, "x"]),
    st.just({"type": "red"}),
)


FACTORS = [1e-6, 1e-3, 0.1, 0.5, 2.0, 10.0, 1e3, 1e6]
NUMBER_WITH_UNIT = re.compile(r"^([0-9.]+)(.*)$")


def _scaled(value: Any, factor: float) -> Any:
    """`value` scaled (a number, or the number of a string with a unit): mostly still valid,
    so that the engine runs extreme settings; None when it is not a quantity."""
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        return type(value)(value * factor)
    if isinstance(value, str) and (match := NUMBER_WITH_UNIT.match(value)):
        try:
            return f"{float(match[1]) * factor}{match[2]}"
        except ValueError:
            return None
    return None


@st.composite
def mutated_scenarios(draw) -> dict:
    name = draw(st.sampled_from(sorted(SCENARIOS)))
    data = copy.deepcopy(SCENARIOS[name])
    # Mostly one mutation, so that many cases stay valid and run.
    for _ in range(draw(st.sampled_from([1, 1, 1, 2, 4]))):
        slots = _slots(data)
        if not slots:
            break
        path = draw(st.sampled_from(slots))
        parent, key = _parent(data, path), path[-1]
        action = draw(st.sampled_from(["delete", "replace", "replace", "scale", "scale", "add unknown", "duplicate"]))
        if action == "scale" and (value := _scaled(parent[key], draw(st.sampled_from(FACTORS)))) is not None:
            parent[key] = value
        elif action == "delete":
            del parent[key]
        elif action == "replace":
            parent[key] = copy.deepcopy(draw(values))
        elif action == "add unknown" and isinstance(parent, dict):
            parent[draw(st.sampled_from(UNKNOWN_NAMES))] = copy.deepcopy(draw(values))
        elif action == "duplicate" and isinstance(parent, list):
            parent.append(copy.deepcopy(parent[key]))
    return data


class RunTooLong(Exception):
    pass


def _alarm(signum, frame):
    raise RunTooLong(f"still running after {WALL_BOUND_S} s")


def check(data: dict) -> str:
    """Validates and (briefly) runs one case; returns "ran" or "error", or fails the test."""
    try:
        scenario = aqmlab.Scenario.from_dict(data)
        sim = _core.Simulation(scenario.to_json())
    except aqmlab.ScenarioError as e:
        assert FIELD_PATH.match(str(e)), f"error without a field path: {e!r}\n{json.dumps(data, default=str)}"
        return "error"
    previous = signal.signal(signal.SIGALRM, _alarm)
    signal.setitimer(signal.ITIMER_REAL, WALL_BOUND_S)
    started = time.monotonic()
    try:
        sim.run_until(min(sim.duration, SIMULATED_S))
        results = Results(json.loads(sim.results()), scenario, time.monotonic() - started)
        results.summary()
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
    return "ran"


def test_mutated_shipped_scenarios_run_or_name_a_field():
    outcomes = {"ran": 0, "error": 0}
    slowest = (0.0, None)

    @given(mutated_scenarios())
    @settings(settings.get_profile(PROFILE))
    def case(data):
        nonlocal slowest
        started = time.monotonic()
        outcomes[check(data)] += 1
        wall = time.monotonic() - started
        slowest = max(slowest, (wall, data), key=lambda pair: pair[0])
        done = sum(outcomes.values())
        if PROFILE == "long" and done % 500 == 0:
            print(f"fuzz: {done} cases, {outcomes}, slowest {slowest[0]:.1f} s", file=sys.stderr, flush=True)

    case()
    # Shown with `pytest -s`: the counts a long run reports.
    print(
        f"fuzz ({PROFILE}): {sum(outcomes.values())} cases, {outcomes['ran']} ran, {outcomes['error']} field errors; "
        f"slowest {slowest[0]:.1f} s: {json.dumps(slowest[1], default=str)[:300]}"
    )
    assert outcomes["ran"] and outcomes["error"], outcomes


def test_every_shipped_scenario_runs_unmutated():
    """The fuzz's starting points are valid (so a case's error comes from its mutation)."""
    assert len(SCENARIOS) >= 5
    for data in SCENARIOS.values():
        assert check(data) == "ran"
