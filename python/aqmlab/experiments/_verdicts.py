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
docs/ns2-reproductions.md). Agreement with ns-2 for a number: |ours − ns-2| within the range
of ns-2's own seeds (`2·spread`, spread being half the range), or within 10 % of ns-2's value
where one ns-2 run was recorded (no spread measured; 10 % is issue 21's bar for per-flow
agreement with ns-2).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from enum import StrEnum
from functools import cache
from pathlib import Path
from typing import Any

REFERENCE_DIR = Path(__file__).with_name("ns2_reference")
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

    def agrees(self, ours: Any) -> bool:
        """Whether a numeric `ours` is within ns-2's seed range of this value (module docstring)."""
        tolerance = 2 * self.spread if self.spread is not None else SINGLE_RUN_TOLERANCE * abs(self.value)
        return abs(ours - self.value) <= tolerance

    def shown(self) -> str:
        if isinstance(self.value, (int, float)):
            spread = f" ±{self.spread:.3g}" if self.spread else ""
            return f"{self.value:.4g}{spread}"
        return json.dumps(self.value)


@dataclass(frozen=True)
class Ns2Reference:
    """The recorded ns-2 values of one experiment and where they come from."""

    experiment: str
    ns2: str
    script: str
    command: str
    date: str
    seeds: tuple[int, ...]
    rows: dict[str, Ns2Value]

    @property
    def source(self) -> str:
        seeds = ", ".join(map(str, self.seeds))
        return f"{self.ns2}, {self.script}, seeds {seeds}, {self.date}; regenerate: {self.command}"


@cache
def ns2_reference(experiment_id: str) -> Ns2Reference | None:
    """The recorded ns-2 values of an experiment, or None where none were recorded."""
    path = REFERENCE_DIR / f"{experiment_id}.json"
    if not path.is_file():
        return None
    data = json.loads(path.read_text())
    rows = {
        key: Ns2Value(entry["value"], entry.get("spread"), entry.get("note", "")) for key, entry in data["rows"].items()
    }
    return Ns2Reference(
        data["experiment"], data["ns2"], data["script"], data["command"], data["date"], tuple(data["seeds"]), rows
    )


def verdict(row: Any, ns2: Ns2Value | None, judged: Judgement | None) -> tuple[Verdict, str]:
    """A graded row's verdict and why (empty for a passing row)."""
    if row.passed:
        return Verdict.PAPER, ""
    if ns2 is not None:
        ns2_meets_paper = row.meets_paper(ns2.value)
        if ns2_meets_paper:
            return Verdict.DEFECT, f"ns-2 meets the paper here ({ns2.shown()}); ours does not"
        if row.is_ordering or ns2.agrees(row.ours):
            return Verdict.NS2, f"ns-2 misses the paper too ({ns2.shown()})"
        return Verdict.DEFECT, f"ns-2 misses the paper too, but differs from ours ({ns2.shown()})"
    if judged is not None:
        return judged.verdict, judged.why
    return Verdict.OPEN, ""
