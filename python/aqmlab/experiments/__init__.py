"""Paper reproductions: a registry of experiments, each returning a `Reproduction`.

To add one, write a module in this package:

    from . import Reproduction, Row, experiment

    @experiment("csfq-fig3a", "CSFQ Fig. 3(a): 32 UDP flows at (i+1)x fair share")
    def fig3a(quick: bool) -> Reproduction:
        results = aqmlab.run(...)
        return Reproduction(rows=[Row.within("CSFQ worst flow (Mbps)", 0.3125, ours, 0.06)], figure=fig)

Modules are found automatically; `aqmlab reproduce --list` shows them.
`quick` asks for a shorter run (fewer seconds or seeds) that still checks the rows.
"""

from __future__ import annotations

import importlib
import json
import pkgutil
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from ..results import to_json_value
from ._toolkit import MUCH, PAPER_NAMES, RELATIONS, Row, RunSettings, run_seeds


@dataclass
class Reproduction:
    """What an experiment returns: checked rows, a figure, and its data."""

    rows: list[Row]
    figure: Any = None  # a matplotlib Figure
    data: dict[str, pd.DataFrame] = field(default_factory=dict)
    # Names in `data` that the CLI prints as tables, and lines it prints after them.
    show: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    id: str = ""
    title: str = ""

    @property
    def passed(self) -> bool:
        return all(r.passed for r in self.rows)

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "title": self.title,
            "passed": self.passed,
            "rows": to_json_value([r.to_dict() for r in self.rows]),
        }

    def save(self, out_dir: str | Path) -> list[Path]:
        """Writes `<id>.png`, each data frame as `<name>.csv`, and `rows.json`."""
        out = Path(out_dir)
        out.mkdir(parents=True, exist_ok=True)
        written = []
        if self.figure is not None:
            path = out / f"{self.id or 'figure'}.png"
            self.figure.savefig(path, dpi=110, metadata={"Software": None})
            written.append(path)
        for name, frame in self.data.items():
            path = out / f"{name}.csv"
            frame.to_csv(path, index=False)
            written.append(path)
        path = out / "rows.json"
        path.write_text(json.dumps(self.to_dict(), indent=2) + "\n")
        written.append(path)
        return written


@dataclass(frozen=True)
class Experiment:
    id: str
    title: str
    function: Callable[[bool], Reproduction]

    def run(self, quick: bool = False) -> Reproduction:
        reproduction = self.function(quick)
        reproduction.id, reproduction.title = self.id, self.title
        keys = [row.key for row in reproduction.rows]
        if not all(keys) or len(set(keys)) != len(keys):
            repeated = sorted({key for key in keys if keys.count(key) > 1})
            raise ValueError(f"experiment {self.id!r}: every row needs its own key (missing or repeated: {repeated})")
        return reproduction


@dataclass(frozen=True)
class NotReproduced:
    """A paper experiment that aqmlab cannot run yet, and why."""

    id: str
    title: str
    reason: str


_REGISTRY: dict[str, Experiment] = {}
_NOT_REPRODUCED: dict[str, NotReproduced] = {}


def experiment(id: str, title: str) -> Callable[[Callable[[bool], Reproduction]], Callable[[bool], Reproduction]]:
    """Registers `function(quick) -> Reproduction` as experiment `id`."""

    def register(function: Callable[[bool], Reproduction]) -> Callable[[bool], Reproduction]:
        if id in _REGISTRY and _REGISTRY[id].function is not function:
            raise ValueError(f"experiment {id!r} is registered twice")
        _REGISTRY[id] = Experiment(id, title, function)
        return function

    return register


def not_reproduced(id: str, title: str, reason: str) -> None:
    """Lists a paper experiment that is not reproduced yet; `aqmlab reproduce --list` shows the reason."""
    _NOT_REPRODUCED[id] = NotReproduced(id, title, reason)


def _import_modules() -> None:
    """Imports each module of this package once (their decorators fill the registries)."""
    for module in pkgutil.iter_modules(__path__):
        if not module.name.startswith("_"):
            importlib.import_module(f"{__name__}.{module.name}")


def registry() -> dict[str, Experiment]:
    """Every experiment, by id."""
    _import_modules()
    return dict(sorted(_REGISTRY.items()))


def not_reproduced_list() -> dict[str, NotReproduced]:
    """The paper experiments not reproduced yet, by id."""
    _import_modules()
    return dict(sorted(_NOT_REPRODUCED.items()))


def get(id: str) -> Experiment:
    experiments = registry()
    if id in _NOT_REPRODUCED:
        raise KeyError(f"{id} is not yet reproduced: {_NOT_REPRODUCED[id].reason}")
    if id not in experiments:
        raise KeyError(f"unknown experiment {id!r} (known: {', '.join(experiments)})")
    return experiments[id]


__all__ = [
    "MUCH",
    "PAPER_NAMES",
    "RELATIONS",
    "Experiment",
    "NotReproduced",
    "Reproduction",
    "Row",
    "RunSettings",
    "experiment",
    "get",
    "not_reproduced",
    "not_reproduced_list",
    "registry",
    "run_seeds",
]
