"""A verdict for every graded row (issue 27): does ours agree with the paper; if not, does the
paper's own simulator (ns-2.35, recorded in `ns2_reference/<id>.json`) or the paper's own
arithmetic give the same, or is it our defect?

- `paper`: the row passes.
- `ns2`: it fails the paper, and ns-2 running the same setup fails it too, with a value within
  ns-2's seed-to-seed range of ours (or, for an ordering, the same ordering fails in ns-2).
- `arithmetic`: it fails the paper, and the paper's own numbers or a choice the paper leaves
  open explain it; the experiment states the arithmetic (`Reproduction.judged`).
- `defect`: it fails the paper, and ns-2 meets the paper or differs from ours; or the
  experiment names a gap in our model (`Reproduction.judged`).
- `open`: it fails the paper, and there is no independent reference for it yet.

The ns-2 values are data (`ns2_reference/<experiment id>.json`, with ns-2's version, the
script, the seeds and the command that regenerates them; the format is in
docs/ns2-reproductions.md). They measure what our run measures (same window, rates, flows)
in the runs the file's `modes` name: the full run, and the quick run where it is the same; a
row of a mechanism ns-2 lacks is named in `not_in_ns2` with why, and its ns-2 cell says so. A
file with `reference_only` (why) is shown but gives no verdict: ns-2 was not the paper's
simulator there, or cannot run the paper's TCP (FRED's). A
file that cannot be read, or whose rows are no longer the experiment's, is an error naming the
file and how to regenerate it (`Ns2ReferenceError`). Agreement with ns-2 for a number: |ours −
ns-2| within the range of ns-2's own seeds (`2·spread`, spread being half the range), or within
10 % of ns-2's value where one ns-2 run was recorded (no spread measured; 10 % is issue 21's bar
for per-flow agreement with ns-2). For a category (e.g. "fair" or "proportional"), ns-2 failing
the paper's category agrees with ours failing it.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from enum import StrEnum
from functools import cache
from pathlib import Path
from typing import Any

REFERENCE_DIR = Path(__file__).with_name("ns2_reference")
MODES = ("full", "quick")
# Where one ns-2 run was recorded: agreement within 10 % of its value (module docstring).
SINGLE_RUN_TOLERANCE = 0.10


class Verdict(StrEnum):
    PAPER = "paper"
    NS2 = "ns2"
    ARITHMETIC = "arithmetic"
    DEFECT = "defect"
    OPEN = "open"

    @property
    def meaning(self) -> str:
        return VERDICT_MEANINGS[self]


VERDICT_MEANINGS = {
    Verdict.PAPER: "agrees with the paper",
    Verdict.NS2: "fails the paper as ns-2 does (the paper's own simulator gives the same)",
    Verdict.ARITHMETIC: "fails the paper as the paper's own numbers or an open choice explain",
    Verdict.DEFECT: "our defect",
    Verdict.OPEN: "fails the paper; no independent reference yet",
}


@dataclass(frozen=True)
class Judgement:
    """An experiment's own verdict on a failing row, with the arithmetic or gap behind it."""

    verdict: Verdict
    why: str

    def __post_init__(self) -> None:
        if self.verdict not in (Verdict.ARITHMETIC, Verdict.DEFECT):
            raise ValueError(f"an experiment judges a row as arithmetic or defect, not {self.verdict}")


@dataclass(frozen=True)
class Ns2Value:
    """ns-2's value of one row: a number, or for an ordering the groups in the paper's order."""

    value: Any
    spread: float | None = None
    note: str = ""

    @property
    def is_number(self) -> bool:
        return isinstance(self.value, (int, float))

    def agrees(self, ours: Any) -> bool:
        """Whether a numeric `ours` is within ns-2's seed range of this value (module docstring)."""
        tolerance = 2 * self.spread if self.spread is not None else SINGLE_RUN_TOLERANCE * abs(self.value)
        return abs(ours - self.value) <= tolerance

    def shown(self) -> str:
        if self.is_number:
            spread = f" ±{self.spread:.3g}" if self.spread else ""
            return f"{self.value:.4g}{spread}"
        return _compact(self.value)


def _compact(value: Any) -> str:
    """An ordering's groups or a per-n record as a reader scans it: "RED 0.82; RED-PD 0.89"."""
    if isinstance(value, list):
        return "; ".join(map(_compact, value))
    if isinstance(value, dict):
        return ", ".join(f"{name} {_compact(part)}" for name, part in value.items())
    return f"{value:.4g}" if isinstance(value, float) else str(value)


class Ns2ReferenceError(ValueError):
    """A recorded ns-2 file that cannot be used: unreadable, malformed, or stale."""


@dataclass(frozen=True)
class Ns2Reference:
    """The recorded ns-2 values of one experiment and where they come from: `rows` by key, the
    runs of ours they measure alike (`modes`), and the rows ns-2 cannot measure, with why
    (`not_in_ns2`)."""

    experiment: str
    ns2: str
    script: str
    command: str
    date: str
    seeds: tuple[int, ...]
    modes: tuple[str, ...]
    rows: dict[str, Ns2Value]
    not_in_ns2: dict[str, str] = field(default_factory=dict)
    # Why the values are a reference only and give no verdict (the paper did not run ns-2, or ran
    # another TCP than ns-2's, e.g. FRED's NetBSD stack); empty where they grade.
    reference_only: str = ""

    @property
    def source(self) -> str:
        seeds = ", ".join(map(str, self.seeds))
        source = f"{self.ns2}, {self.script}, seeds {seeds}, {self.date}; regenerate: {self.command}"
        if self.reference_only:
            return f"{source}; a reference only, no verdict from it: {self.reference_only}"
        return source

    def keys(self) -> set[str]:
        return set(self.rows) | set(self.not_in_ns2)

    def check_rows(self, keys: set[str]) -> None:
        """Refuses a stale file: every recorded key must be one of the experiment's rows `keys`."""
        stale = sorted(self.keys() - keys)
        if stale:
            raise Ns2ReferenceError(
                f"{_path(self.experiment)}: stale: rows {', '.join(stale)} are no longer the experiment's; "
                f"regenerate it: {self.command}"
            )


def _path(experiment_id: str) -> Path:
    return REFERENCE_DIR / f"{experiment_id}.json"


@cache
def ns2_reference(experiment_id: str) -> Ns2Reference | None:
    """The recorded ns-2 values of an experiment, or None where none were recorded; a file that
    is there but malformed raises `Ns2ReferenceError` saying what is wrong with it."""
    path = _path(experiment_id)
    if not path.is_file():
        return None
    try:
        return _parse(json.loads(path.read_text()), experiment_id)
    except (json.JSONDecodeError, UnicodeDecodeError, KeyError, TypeError, ValueError) as e:
        what = f"missing field {e}" if isinstance(e, KeyError) else str(e)
        raise Ns2ReferenceError(
            f"{path}: not a recorded ns-2 reference ({what}); regenerate it (docs/ns2-reproductions.md)"
        ) from None


def _parse(data: dict, experiment_id: str) -> Ns2Reference:
    if data["experiment"] != experiment_id:
        raise ValueError(f"it records {data['experiment']!r}, not {experiment_id!r}")
    modes = tuple(data["modes"])
    if "full" not in modes or not set(modes) <= set(MODES):
        raise ValueError(f"modes {list(modes)}: the full run and optionally the quick one")
    rows = {}
    for key, entry in data["rows"].items():
        value, spread = entry["value"], entry.get("spread")
        if not isinstance(value, (int, float, str, list)) or isinstance(value, bool):
            raise ValueError(f"row {key!r}: value {value!r} is not a number, a category or an ordering's groups")
        if spread is not None and (not isinstance(spread, (int, float)) or spread < 0):
            raise ValueError(f"row {key!r}: spread {spread!r} is not a number ≥ 0")
        rows[key] = Ns2Value(value, spread, entry.get("note", ""))
    not_in_ns2 = dict(data.get("not_in_ns2", {}))
    if not all(isinstance(why, str) and why for why in not_in_ns2.values()):
        raise ValueError("not_in_ns2: every row needs its reason")
    both = sorted(set(rows) & set(not_in_ns2))
    if both:
        raise ValueError(f"rows {both} are both recorded and not in ns-2")
    reference_only = data.get("reference_only", "")
    if not isinstance(reference_only, str):
        raise ValueError(f"reference_only {reference_only!r} is not the reason the values give no verdict")
    return Ns2Reference(
        data["experiment"],
        data["ns2"],
        data["script"],
        data["command"],
        data["date"],
        tuple(data["seeds"]),
        modes,
        rows,
        not_in_ns2,
        reference_only,
    )


def verdict(row: Any, ns2: Ns2Value | None, judged: Judgement | None) -> tuple[Verdict, str]:
    """A graded row's verdict and why (empty for a passing row)."""
    if row.passed:
        return Verdict.PAPER, ""
    if ns2 is not None:
        ns2_meets_paper = row.meets_paper(ns2.value)
        if ns2_meets_paper:
            return Verdict.DEFECT, f"ns-2 meets the paper here ({ns2.shown()}); ours does not"
        if row.is_ordering or not ns2.is_number or ns2.agrees(row.ours):
            return Verdict.NS2, f"ns-2 misses the paper too ({ns2.shown()})"
        return Verdict.DEFECT, f"ns-2 misses the paper too, but differs from ours ({ns2.shown()})"
    if judged is not None:
        return judged.verdict, judged.why
    return Verdict.OPEN, ""
