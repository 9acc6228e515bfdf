"""Paper reproductions: a registry of experiments, each returning a `Reproduction`.

One package per paper (`csfq/`, `fred/`, `bred/`, `redpd/`, `sred/`; `today/` for questions the
papers could not ask), one module per experiment id in it (`csfq-fig3a` -> `csfq/fig3a.py`,
`redpd-sec6.3` -> `redpd/sec6_3.py`; the demo is CSFQ Fig. 3(b)'s, `csfq/demo.py`); modules are
found automatically and `aqmlab reproduce --list` shows them. A paper's shared setup (its
topology, TCP, the choices where it is silent) is its package's `__init__.py`, which the
experiments import (`from . import TCP`), with private modules beside it where a part of the
paper shares more (`csfq/_figures.py`, `csfq/_tables.py`, `redpd/_web.py`); the CSFQ paper's
mechanisms are `aqmlab.presets`, which `aqmlab compare` offers by name. The module reads like
the paper's section:

- the docstring cites the section and says what we chose where the paper is silent;
- the paper's numbers are named constants quoting it, each tolerance beside its reason;
- `FULL` and `QUICK` are the `RunSettings` of the full and the `--quick` run (shorter, or
  fewer seeds, still checking every row);
- `*_scenario` builds a scenario, `*_metrics` measures a run, `*_rows` checks the measures;
- the experiment function (at most ~40 lines) runs, measures and assembles. Every row has a
  stable `key`, which tests and scripts select rows by (the metric text is for people).
- every tolerance is derived from the paper's number and a stated noise or reading argument,
  written beside it before our value is seen; where the paper gives a number or a trend the
  band is two-sided (or the trend is an ordering row). Rows that restate utilisation or
  conservation are left out.
- a row that fails has its measured reason: `Reproduction(..., explain=fn)`, `fn(row)` the
  reason computed from the runs (drop reasons, utilisation, sample sizes) or None, asked of the
  failing rows only (kept in `Reproduction.reasons`, by key), printed as the closing note and
  in the JSON; its test expects the failure by key, so a change either way shows up.
- every graded row gets a verdict (`_verdicts.py`): it agrees with the paper; or it fails the
  paper as ns-2 does (ns-2's values recorded in `ns2_reference/<id>.json` give the third
  column); or as the paper's own arithmetic or an open choice explains (the experiment says so
  in `Reproduction.judged`, with the arithmetic); or it is our defect; or, with neither, it
  stays open.

    import numpy as np

    from ...results import MBPS, Results
    from .. import Reproduction, Row, RunSettings, experiment, run_seeds
    from ...presets import CSFQ_MECHANISMS as MECHANISMS

    # "flow i sends i + 1 times more than its fair share of 0.3125 Mbps"
    FAIR_MBPS = 0.3125
    # "between -11% and +5% of the ideal value", from one 10-s run: we accept ±20 %.
    TOLERANCE = 0.2
    FULL = RunSettings(seeds=(1, 2, 3), duration="20s", warmup="10s")
    QUICK = RunSettings(seeds=(1,), duration="6s", warmup="2s")

    def fig3a_metrics(results: Results) -> dict[str, float]:
        goodput = results.flows["goodput_bps"] / MBPS
        return {"worst_mbps": goodput.min(), "best_mbps": goodput.max()}

    @experiment("csfq-fig3a", "CSFQ Fig. 3(a): 32 UDP flows at (i+1)x fair share")
    def fig3a(quick: bool) -> Reproduction:
        settings = QUICK if quick else FULL
        worst = {}  # the slowest flow's goodput under each mechanism, mean over the seeds
        for name, qdisc in MECHANISMS.items():
            runs = run_seeds(fig3a_scenario(settings).with_qdisc(qdisc), settings.seeds)
            worst[name] = np.mean([fig3a_metrics(results)["worst_mbps"] for results in runs])
        rows = [
            Row.within("CSFQ worst flow (Mbps)", FAIR_MBPS, worst["csfq"], TOLERANCE, relative=True, key="csfq.worst"),
            Row.ordered(
                "Worst flow (Mbps): FIFO < CSFQ < DRR",
                "FIFO < CSFQ < DRR",
                [{"FIFO": worst["droptail"]}, {"CSFQ": worst["csfq"]}, {"DRR": worst["drr"]}],
                key="order.worst",
            ),
        ]
        return Reproduction(rows=rows, figure=fig3a_figure(worst), notes=["..."])

The toolkit, re-exported here: the rows (`aqmlab.rows`, which the validations report in too):
`Row.within/between/at_least/at_most` and `Row.ordered` (a paper's ordering of groups of values,
with its ≪ and ≫), `Row.informative` (a row shown as "info" that `Reproduction.passed` ignores:
the other reading of a choice made where the paper is open, beside the graded row of the reading
its text supports; key `<key>.alt`); and `_toolkit.py`'s `RunSettings`, `run_seeds` and
`PAPER_NAMES` (the mechanisms as the papers print them). Elsewhere: `Results.link(name)`,
`Results.warmup`, `plots.subplots()` (figures that no backend holds), and `aqmlab.metrics` for the papers' closed forms.
"""

from __future__ import annotations

import importlib
import json
import pkgutil
from collections.abc import Callable, Mapping
from contextvars import ContextVar
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from .._core import __version__
from ..results import to_json_value
from ..rows import MUCH, RELATIONS, Row
from ._toolkit import PAPER_NAMES, RunSettings, run_seeds
from ._verdicts import Judgement, Ns2ReferenceError, Ns2Value, Verdict, ns2_reference, verdict


@dataclass
class Reproduction:
    """What an experiment returns: checked rows, a figure, and its data."""

    rows: list[Row]
    figure: Any = None  # a matplotlib Figure
    data: dict[str, pd.DataFrame] = field(default_factory=dict)
    # Names in `data` that the CLI prints as tables, and lines it prints after them.
    show: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    # Why a failing graded row fails, measured from the runs: `explain(row)`, or None where
    # nothing was measured for that row (give one for every row that may fail). Asked once, of
    # the graded rows that fail, when the Reproduction is made (it may run more simulations).
    explain: Callable[[Row], str | None] | None = field(default=None, repr=False)
    # What `explain` said, by key.
    reasons: dict[str, str] = field(init=False, default_factory=dict)
    # The experiment's own verdict on rows that fail by the paper's arithmetic or an open choice,
    # or by a gap in our model, by key (`_verdicts`); ns-2's recorded values take precedence.
    judged: dict[str, Judgement] = field(default_factory=dict)
    id: str = ""
    title: str = ""
    quick: bool = False
    # Filled by `Experiment.run`: ns-2's recorded values by key and where they come from, the
    # rows ns-2 cannot measure with why, and each graded row's verdict with why.
    ns2: dict[str, Ns2Value] = field(default_factory=dict)
    ns2_source: str = ""
    not_in_ns2: dict[str, str] = field(default_factory=dict)
    verdicts: dict[str, tuple[Verdict, str]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.explain is not None:
            failing = (r for r in self.rows if r.graded and not r.passed)
            self.reasons = {r.key: why for r in failing if (why := self.explain(r)) is not None}

    @property
    def passed(self) -> bool:
        """Every graded row passes (informative rows, `graded=False`, do not count)."""
        return all(r.passed for r in self.rows if r.graded)

    def failures(self) -> list[str]:
        """The closing note: each failing graded row with its measured reason and its verdict."""
        lines = []
        for r in self.rows:
            if r.graded and not r.passed:
                kind, why = self.verdicts.get(r.key, (None, ""))
                judged = f" [{kind.meaning}{': ' + why if why else ''}]" if kind else ""
                lines.append(f"FAILS {r.key}: {self.reasons.get(r.key, 'no reason measured')}{judged}")
        return lines

    def judge(self) -> None:
        """Attaches ns-2's recorded values (if any, and if they measure this run: `modes`) and
        gives every graded row its verdict. A stale recorded file raises `Ns2ReferenceError`."""
        reference = ns2_reference(self.id)
        mode = "quick" if self.quick else "full"
        grades = reference is not None and not reference.reference_only
        if reference is not None and mode in reference.modes:
            keys = {r.key for r in self.rows}
            reference.check_rows(keys)
            self.ns2 = {key: value for key, value in reference.rows.items() if key in keys}
            self.not_in_ns2 = dict(reference.not_in_ns2)
            self.ns2_source = reference.source
        elif reference is not None:
            self.ns2_source = f"not shown: ns-2's values measure the full run (aqmlab reproduce {self.id})"
        self.verdicts = {
            r.key: verdict(r, self.ns2.get(r.key) if r.check and grades else None, self.judged.get(r.key))
            for r in self.rows
            if r.graded
        }

    def verdict_counts(self) -> dict[str, int]:
        """Graded rows by verdict."""
        counts = dict.fromkeys(Verdict, 0)
        for kind, _ in self.verdicts.values():
            counts[kind] += 1
        return {str(kind): n for kind, n in counts.items()}

    def to_dict(self) -> dict[str, Any]:
        """The rows as JSON; a failing graded row carries its `reason`; a row with a recorded ns-2
        value its `ns2`, a row ns-2 cannot measure why (`ns2_absent`); every graded row its
        `verdict` (and `verdict_why` when it fails)."""
        rows = []
        for r in self.rows:
            row = r.to_dict()
            if r.key in self.ns2:
                row["ns2"] = self.ns2[r.key].value
                row["ns2_spread"] = self.ns2[r.key].spread
            elif r.key in self.not_in_ns2:
                row["ns2_absent"] = self.not_in_ns2[r.key]
            if r.graded and not r.passed:
                row["reason"] = self.reasons.get(r.key, "")
            if r.key in self.verdicts:
                kind, why = self.verdicts[r.key]
                row["verdict"] = str(kind)
                if why:
                    row["verdict_why"] = why
            rows.append(row)
        about = {"id": self.id, "title": self.title, "passed": self.passed}
        if self.verdicts:
            about["verdicts"] = self.verdict_counts()
        if self.ns2_source:
            about["ns2_source"] = self.ns2_source
        return about | {"rows": to_json_value(rows)}

    def save(self, out_dir: str | Path) -> list[Path]:
        """Writes `<id>.png`, each data frame as `<name>.csv`, `rows.json`, and `experiment.json`
        (id, title, whether it was the quick run, the aqmlab version, the notes, the tables shown),
        which with `rows.json` is what `aqmlab report` makes the experiment's page of."""
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
        about = {
            "id": self.id,
            "title": self.title,
            "quick": self.quick,
            "aqmlab": __version__,
            "notes": self.notes,
            "show": self.show,
        }
        path = out / "experiment.json"
        path.write_text(json.dumps(about, indent=2) + "\n")
        written.append(path)
        return written


@dataclass(frozen=True)
class Experiment:
    id: str
    title: str
    function: Callable[[bool], Reproduction]
    # Whether it compares mechanisms on one network, so that a user's can join (`mechanisms`).
    compares: bool = False

    def compares_none(self) -> str:
        """Why no mechanism can join this experiment, and which experiments they can join."""
        comparing = ", ".join(e.id for e in registry().values() if e.compares)
        return f"{self.id} compares no mechanisms; a mechanism can join: {comparing}"

    def run(self, quick: bool = False, mechanisms: Mapping[str, Mapping] | None = None) -> Reproduction:
        """Runs the experiment; `mechanisms` (name -> qdisc table, e.g. a user's Python
        discipline) join an experiment that `compares` as rows of its own beside the paper's."""
        if mechanisms and not self.compares:
            raise ValueError(self.compares_none())
        token = _EXTRA_MECHANISMS.set(dict(mechanisms or {}))
        try:
            reproduction = self.function(quick)
        finally:
            _EXTRA_MECHANISMS.reset(token)
        reproduction.id, reproduction.title, reproduction.quick = self.id, self.title, quick
        keys = [row.key for row in reproduction.rows]
        missing = [row.metric for row in reproduction.rows if not row.key]
        repeated = sorted({key for key in keys if key and keys.count(key) > 1})
        if missing or repeated:
            raise ValueError(
                f"experiment {self.id!r}: every row needs its own key (without: {missing}; repeated: {repeated})"
            )
        reproduction.judge()
        return reproduction


@dataclass(frozen=True)
class NotReproduced:
    """A paper experiment that aqmlab cannot run yet, and why."""

    id: str
    title: str
    reason: str


_REGISTRY: dict[str, Experiment] = {}
_NOT_REPRODUCED: dict[str, NotReproduced] = {}


def experiment(
    id: str, title: str, compares: bool = False
) -> Callable[[Callable[[bool], Reproduction]], Callable[[bool], Reproduction]]:
    """Registers `function(quick) -> Reproduction` as experiment `id`; with `compares`, it runs
    its mechanisms through `with_extra_mechanisms`, so that the user's join them."""

    def register(function: Callable[[bool], Reproduction]) -> Callable[[bool], Reproduction]:
        if id in _REGISTRY and _REGISTRY[id].function is not function:
            raise ValueError(f"experiment {id!r} is registered twice")
        _REGISTRY[id] = Experiment(id, title, function, compares)
        return function

    return register


# The mechanisms a user adds to the experiment running (`Experiment.run(mechanisms=)`).
_EXTRA_MECHANISMS: ContextVar[dict[str, Mapping] | None] = ContextVar("extra_mechanisms", default=None)


def with_extra_mechanisms(mechanisms: Mapping[str, Mapping]) -> dict[str, Mapping]:
    """An experiment's own `mechanisms`, then those the user added to this run (rows of their
    own: no paper row grades them)."""
    return {**mechanisms, **(_EXTRA_MECHANISMS.get() or {})}


def not_reproduced(id: str, title: str, reason: str) -> None:
    """Lists a paper experiment that is not reproduced yet; `aqmlab reproduce --list` shows the reason."""
    _NOT_REPRODUCED[id] = NotReproduced(id, title, reason)


def _import_modules() -> None:
    """Imports each paper's package and its experiment modules once (their decorators fill the
    registries); private modules (`_figures.py`) are imported by the experiments that use them."""
    for module in pkgutil.walk_packages(__path__, f"{__name__}."):
        if not module.name.rpartition(".")[2].startswith("_"):
            importlib.import_module(module.name)


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
    "Judgement",
    "NotReproduced",
    "Ns2ReferenceError",
    "Reproduction",
    "Row",
    "RunSettings",
    "Verdict",
    "experiment",
    "get",
    "not_reproduced",
    "not_reproduced_list",
    "registry",
    "run_seeds",
    "with_extra_mechanisms",
]
