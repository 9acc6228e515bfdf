"""The simulator against closed-form models and exact event counts (`aqmlab validate`): the
suites the core runs (crates/aqmlab-core/src/validation/), as checked rows."""

from __future__ import annotations

import json

from . import _core
from .rows import Row

SUITES = {"tcp": _core.validate_tcp}


def run_suite(name: str) -> tuple[list[Row], list[str]]:
    """The rows of suite `name` (key, metric, the model's value as `paper`, ours, tolerance,
    pass) and one note per row ("" or why it fails)."""
    checks = json.loads(SUITES[name]())
    rows = [
        Row(check["metric"], check["model"], check["ours"], check["tolerance"], check["pass"], check["key"])
        for check in checks
    ]
    return rows, [check["note"] for check in checks]
