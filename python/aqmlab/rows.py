"""Checked rows: a measured value beside its reference (a paper's number, a model's, ns-2's or
Linux's recorded one), the accepted tolerance, and whether it passes. The paper reproductions
(`aqmlab.experiments`), the core's TCP validation (`aqmlab.validation`) and the ns-2 and Linux
validations (`aqmlab.ns2.validate`, `aqmlab.linux.validate`, `aqmlab.linux.emulated`) all report
in them; a row keeps its check, so a verdict (`experiments/_verdicts.py`) can grade another
simulator's value of the same metric with it.

    Row.within("CSFQ worst flow (Mbps)", 0.3125, 0.30, 0.2, relative=True, key="csfq.worst").passed  # True
    Row.ordered("FIFO < DRR", "FIFO < DRR", [{"FIFO": 0.1}, {"DRR": 0.3}], key="order").ours  # 'FIFO 0.10 < DRR 0.30'
"""

from __future__ import annotations

import itertools
import operator
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np


def _number(x: Any) -> Any:
    """Plain Python numbers (not numpy scalars) for JSON and printing."""
    return x.item() if hasattr(x, "item") else x


# The papers' ≪ and ≫ ("<<" and ">>" in `Row.ordered`), read leniently as a factor of at least
# this: where the CSFQ paper writes ≪ its own gaps are 3x (Table 1, CSFQ vs RED) to 8x (Table 3,
# RED vs FRED).
MUCH = 2.0


def _much_less(x: float, y: float) -> bool:
    return x < y and MUCH * x <= y


def _much_greater(x: float, y: float) -> bool:
    return x > y and x >= MUCH * y


# The steps `Row.ordered` checks between consecutive groups.
RELATIONS: dict[str, Callable[[float, float], bool]] = {
    "<": operator.lt,
    "<=": operator.le,
    ">": operator.gt,
    ">=": operator.ge,
    "<<": _much_less,
    ">>": _much_greater,
}

# A group of `Row.ordered`: one value, several, or several named ones ({"DRR": 0.9, ...}).
Group = float | Sequence[float] | Mapping[str, float]


def _members(group: Group) -> list[tuple[str | None, float]]:
    """A group's (name or None, value) pairs."""
    if isinstance(group, Mapping):
        return list(group.items())
    if np.ndim(group) == 0:
        return [(None, group)]
    return [(None, value) for value in group]


def _shown(member: tuple[str | None, float], digits: int) -> str:
    label, value = member
    return f"{value:.{digits}f}" if label is None else f"{label} {value:.{digits}f}"


@dataclass
class Row:
    """One checked result: the paper's value, ours, the accepted tolerance, and whether ours is
    within it. `key` names the row for scripts and tests ("t1.red.w16.bs24.bw_max"); it stays
    when the metric's wording changes; the core's validation rows bring theirs ("cycle.reno.p1").

    A row with `graded=False` is informative: it is checked and shown (as "info"), but does not
    count towards `Reproduction.passed`. It holds the other reading of a choice the paper
    leaves open, shown beside the graded row of the reading the paper's text supports; its key
    ends in ".alt" (`Row.informative`)."""

    metric: str
    paper: Any
    ours: Any
    tolerance: str
    passed: bool
    key: str = ""
    graded: bool = True
    # The paper's check, applied to another simulator's value of the same metric (a number, or
    # for an ordering the groups): what a verdict (`experiments/_verdicts.py`) grades ns-2's value with.
    check: Callable[[Any], bool] | None = field(default=None, repr=False, compare=False)
    is_ordering: bool = False

    def meets_paper(self, value: Any) -> bool:
        """Whether `value` (the same metric measured elsewhere) passes this row's check."""
        if self.check is None:
            raise ValueError(f"row {self.key!r} has no check to grade another value with")
        return bool(self.check(value))

    @classmethod
    def within(
        cls, metric: str, paper: float, ours: float, tolerance: float, relative: bool = False, *, key: str
    ) -> Row:
        """Passes when |ours - paper| <= tolerance (a fraction of |paper| if `relative`)."""
        bound = tolerance * abs(paper) if relative else tolerance
        text = f"±{tolerance:.0%}" if relative else f"±{tolerance:g}"
        check = lambda value: abs(value - paper) <= bound  # noqa: E731
        return cls(metric, paper, ours, text, bool(check(ours)), key, check=check)

    @classmethod
    def between(cls, metric: str, paper: Any, ours: float, low: float, high: float, *, key: str) -> Row:
        check = lambda value: low <= value <= high  # noqa: E731
        return cls(metric, paper, ours, f"[{low:g}, {high:g}]", bool(check(ours)), key, check=check)

    @classmethod
    def at_least(cls, metric: str, paper: Any, ours: float, bound: float, *, key: str) -> Row:
        check = lambda value: value >= bound  # noqa: E731
        return cls(metric, paper, ours, f">= {bound:.3g}", bool(check(ours)), key, check=check)

    @classmethod
    def at_most(cls, metric: str, paper: Any, ours: float, bound: float, *, key: str) -> Row:
        check = lambda value: value <= bound  # noqa: E731
        return cls(metric, paper, ours, f"<= {bound:.3g}", bool(check(ours)), key, check=check)

    @classmethod
    def ordered(
        cls,
        metric: str,
        paper: Any,
        groups: Sequence[Group],
        *,
        key: str,
        relation: str | Sequence[str] = "<",
        slack: float | Sequence[float] = 0.0,
        digits: int = 2,
        joiner: str | None = None,
        sort: bool = False,
        ours: str | None = None,
        tolerance: str = "order exact",
    ) -> Row:
        """Checks the paper's ordering: `groups` in the paper's order, each step between two
        consecutive groups a `relation` of RELATIONS (one for all steps, or one per step)
        that every value of the first group has to every value of the second; values
        within a group may tie or come in any order. `slack` (per step, or one for all)
        lets a step miss by that much (`x >= y - slack`, `x < y + slack`).

        `ours` shows the groups in the paper's order, each value with `digits` decimals and
        its name if it has one, the steps as their relation (or `joiner`, e.g. "vs"); with
        `sort`, every value lowest first, joined by " < ". Passing `ours` replaces that text.
        """
        steps = len(groups) - 1
        relations = [relation] * steps if isinstance(relation, str) else list(relation)
        slacks = [slack] * steps if isinstance(slack, (int, float)) else list(slack)
        members = [_members(group) for group in groups]

        def check(groups: Sequence[Group]) -> bool:
            members = [_members(group) for group in groups]
            passed = True
            for (low, high), name, allowance in zip(itertools.pairwise(members), relations, slacks, strict=True):
                holds = RELATIONS[name]
                shift = -allowance if name.startswith(">") else allowance
                passed &= all(holds(x, y + shift) for _, x in low for _, y in high)
            return passed

        passed = check(groups)
        if ours is None and sort:
            flat = sorted((member for group in members for member in group), key=lambda member: member[1])
            ours = " < ".join(_shown(member, digits) for member in flat)
        elif ours is None:
            shown = [", ".join(_shown(member, digits) for member in group) for group in members]
            ours = shown[0]
            for text, name in zip(shown[1:], relations, strict=True):
                ours += f" {joiner or name} {text}"
        return cls(metric, paper, ours, tolerance, bool(passed), key, check=check, is_ordering=True)

    def informative(self, reading: str, alt: str = "alt") -> Row:
        """This row as the informative other `reading` of an open choice: not graded, its key
        `<key>.<alt>` (`alt`, or e.g. "alt_rto3s" where a choice has several readings) and
        its metric naming the reading."""
        return replace(self, metric=f"{self.metric} [{reading}]", key=f"{self.key}.{alt}", graded=False)

    def to_dict(self, reference: str = "paper") -> dict[str, Any]:
        """The row as JSON: its key (if any), metric, the reference value under `reference`
        ("paper"; the core's validation rows call it "model"), ours, tolerance, pass, and
        `"graded": false` on an informative row."""
        fields = {"key": self.key} if self.key else {}
        return (
            fields
            | {
                "metric": self.metric,
                reference: _number(self.paper),
                "ours": _number(self.ours),
                "tolerance": self.tolerance,
                "pass": self.passed,
            }
            | ({} if self.graded else {"graded": False})
        )
