"""The page of a sweep's folder (`aqmlab sweep --out`): the grid, one row per grid point (each
metric over its seeds, `sweep.grid_summary`) and each metric drawn against each grid axis, then
one row per job."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path
from typing import Any

from .. import __version__
from .blocks import _figure, _frame_table, _heading, _json_block, _mark, _page, _read_json, _table
from .kind import PageKind


class SweepPage(PageKind):
    """A sweep's folder: `sweep.json` (the plan), `jobs.csv` and the jobs' folders."""

    marker = "sweep.json"
    command = "sweep"

    def page(self, folder: Path) -> str:
        return sweep_page(folder)


def sweep_page(folder: Path) -> str:
    """The page of an `aqmlab sweep --out` folder: the grid, each grid point's metrics over its
    seeds (`sweep.grid_summary`, as `aqmlab sweep` prints them) and drawn against each axis,
    then every job."""
    from ..sweep import grid_summary, labelled_jobs

    plan = _read_json(folder / "sweep.json")
    jobs = labelled_jobs(folder)
    total = len(plan["jobs"])
    state = _mark("pass", "complete") if len(jobs) == total else _mark("pending", "incomplete")
    body = [f"<p>{state} {len(jobs)} of {total} jobs have results</p>", "<h2>Grid</h2>"]
    grid = [[path, ", ".join(json.dumps(v, sort_keys=True) for v in values)] for path, values in plan["grid"].items()]
    body.append(_table(["path", "values"], grid))
    summary = grid_summary(folder)
    if not summary.table.empty:
        columns = [*summary.axes, "seeds", *summary.metrics]
        rows = [
            [*(summary.table[axis].iloc[i] for axis in summary.axes), summary.table["seeds"].iloc[i]]
            + [summary.spread(i, metric) for metric in summary.metrics]
            for i in range(len(summary.table))
        ]
        body += [
            "<h2>Grid points</h2>",
            "<p class=\"muted\">each metric's mean over the point's seeds, and its min-max</p>",
            _table([_heading(c) for c in columns], rows, numbers=[_heading(c) for c in summary.metrics], sortable=True),
        ]
        if summary.axes:
            body += ["<h2>Each metric against each grid axis</h2>", _figure(_grid_figure(summary), "grid points")]
    if not jobs.empty:
        body += ["<h2>Jobs</h2>", _frame_table(jobs, "jobs.csv")]
    first = plan["jobs"][0]["hash"][:16] if plan["jobs"] else None
    if first and (folder / "jobs" / first / "scenario.json").is_file():
        body += [
            "<h2>Scenario of job 0</h2>",
            '<p class="muted">the other jobs differ at the grid\'s paths</p>',
            _json_block(_read_json(folder / "jobs" / first / "scenario.json")),
        ]
    name = plan.get("name") or folder.name
    title = f"Sweep {name}" + (f" over {plan['scenario']}" if plan.get("scenario") else "")
    return _page(title, body, f"aqmlab {__version__} · {folder.name} · {total} jobs")


def _grid_figure(summary: Any) -> Any:
    """A panel per metric and grid axis: the metric's mean over seeds at each of the axis's values
    (a line per combination of the other axes' values), bars from its min to its max."""
    from matplotlib.figure import Figure

    panels = [(metric, axis) for metric in summary.metrics for axis in summary.axes]
    columns = min(len(panels), 3)
    rows = -(-len(panels) // columns)
    fig = Figure(figsize=(4.2 * columns, 3.0 * rows), layout="tight")
    axes = fig.subplots(rows, columns, squeeze=False)
    table = summary.table
    for ax, (metric, axis) in zip(axes.flat, panels, strict=False):
        values = list(dict.fromkeys(table[axis]))
        # Points of a numeric axis are joined; a table's (a qdisc's) values are categories.
        joined = all(isinstance(v, (int, float)) for v in values)
        others = [a for a in summary.axes if a != axis]
        for key, lines in table.groupby(others, sort=False) if others else [((), table)]:
            x = [values.index(v) for v in lines[axis]]
            mean = lines[metric].to_numpy()
            spread = [mean - lines[f"{metric} min"].to_numpy(), lines[f"{metric} max"].to_numpy() - mean]
            label = ", ".join(
                f"{a}={v}" for a, v in zip(others, key if isinstance(key, tuple) else (key,), strict=True)
            )
            style = "-" if joined else "none"
            ax.errorbar(x, mean, yerr=spread, marker="o", capsize=3, linewidth=1, linestyle=style, label=label or None)
        ax.set_xticks(
            range(len(values)), [textwrap.fill(str(v), 16, break_long_words=False) for v in values], fontsize=8
        )
        ax.set_xlim(-0.5, len(values) - 0.5)
        ax.set_xlabel(axis, fontsize=8)
        ax.set_title(_heading(metric), fontsize=10)
        if others:
            ax.legend(fontsize=7)
    for ax in axes.flat[len(panels) :]:
        ax.set_visible(False)
    return fig
