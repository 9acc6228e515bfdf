"""The pieces every reproduction uses beside its rows (`aqmlab.rows`): run settings, runs over
seeds, and the papers' names of the mechanisms. Re-exported by the package (`from .. import
RunSettings, ...`)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import aqmlab

from ..mechanisms import FRED, MECHANISMS
from ..results import Results
from ..scenario import Scenario

# The mechanisms as the papers print them, their descriptors' labels (CSFQ §3: "FIFO" is drop-tail;
# "FRED" without a number is the better of FRED-1 and FRED-2; the FRED and BRED papers write RED,
# FRED, BRED).
PAPER_NAMES = {m.name: m.label for m in (*MECHANISMS, FRED)}


@dataclass(frozen=True)
class RunSettings:
    """How an experiment runs: the `seeds` whose runs it averages, the simulated `duration`
    and `warmup` (seconds, or a time such as "20s"; None where the scenario fixes them), and
    the values `sweep` of a figure's x axis where the experiment sweeps one. Each experiment
    module defines FULL (the paper's setup) and QUICK (shorter, still checking every row)."""

    seeds: tuple[int, ...] = (1,)
    duration: float | str | None = None
    warmup: float | str | None = None
    sweep: tuple[Any, ...] = ()

    def __post_init__(self) -> None:
        object.__setattr__(self, "seeds", tuple(self.seeds))
        object.__setattr__(self, "sweep", tuple(self.sweep))


def run_seeds(scenario: Scenario | Mapping[str, Any], seeds: Iterable[int]) -> list[Results]:
    """One run of `scenario` per seed, in the order of `seeds`."""
    base = scenario if isinstance(scenario, Scenario) else Scenario.from_dict(scenario)
    return [aqmlab.run(base.with_seed(seed)) for seed in seeds]
