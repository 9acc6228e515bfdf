"""How `Results` and `Scenario` show in a notebook (Jupyter's `_repr_html_`): a summary and a
table, as small HTML fragments built with `html.escape`, with no script, style sheet or
network access. Numbers are formatted as the terminal's tables format them (`terminal.fmt`).
"""

from __future__ import annotations

import html
import json
import math
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from .results import MBPS, TABLES
from .terminal import fmt

if TYPE_CHECKING:
    from .results import Results
    from .scenario import Scenario

# Rows of a table shown; `results.flows` (or the scenario's text) holds the rest.
MAX_ROWS = 40
# A scenario value longer than this is cut (its whole text is in the folded source).
MAX_VALUE_CHARS = 160


def _e(value: Any) -> str:
    return html.escape(str(value), quote=True)


def _cell(value: Any) -> str:
    if isinstance(value, float) and math.isnan(value):
        return '<td style="text-align: right">-</td>'
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return f'<td style="text-align: right">{_e(fmt(value))}</td>'
    return f'<td style="text-align: left">{_e(fmt(value))}</td>'


def _table(columns: Sequence[str], rows: Sequence[Sequence[Any]], what: str) -> str:
    """A table of its first MAX_ROWS rows (numbers right-aligned), then how many `what` it left out."""
    head = "".join(f'<th style="text-align: left">{_e(c)}</th>' for c in columns)
    body = "".join("<tr>" + "".join(_cell(v) for v in row) + "</tr>" for row in rows[:MAX_ROWS])
    table = f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"
    if len(rows) > MAX_ROWS:
        table += f"<p>first {MAX_ROWS} of {len(rows)} {_e(what)}</p>"
    return table


def _facts(pairs: Iterable[tuple[str, Any]]) -> str:
    """`label: value` pairs on one line, the labels in bold."""
    return "<p>" + " &middot; ".join(f"<b>{_e(label)}</b> {_e(value)}" for label, value in pairs) + "</p>"


def results_html(results: Results) -> str:
    """The run's summary (name, seed, duration and warm-up, events, Jain index, utilisation,
    drops) and its flows table over the measurement window (goodput and fair share in Mbps,
    one-way delay in ms, drops, loss rate), from the core's JSON alone (no pandas)."""
    summary = results.summary(wall_time=False)
    core = results.raw["summary"]
    utilisation = ", ".join(f"{link} {value:.1%}" for link, value in summary["utilisation"].items()) or "-"
    drops = ", ".join(f"{reason} {n:,}" for reason, n in summary["drops_by_reason"].items()) or "none"
    facts = _facts(
        [
            ("seed", summary["seed"]),
            ("simulated", f"{summary['duration']:g} s, measured from {summary['warmup']:g} s"),
            ("events", f"{summary['events']:,}"),
            ("Jain index", f"{summary['jain_index']:.4f}"),
            ("utilisation", utilisation),
            ("drops", drops),
        ]
    )
    columns = [
        "id",
        "name",
        "type",
        "goodput (Mbps)",
        "fair share (Mbps)",
        "goodput / fair share",
        "mean one-way delay (ms)",
        "drops",
        "loss rate",
    ]
    rows = [
        [
            flow["id"],
            flow["name"],
            flow["type"],
            flow["goodput_bps"] / MBPS,
            flow["fair_share_bps"] / MBPS,
            flow["normalised_goodput"],
            # The core writes 0 for a flow that delivered nothing in the window: no delay to show.
            flow["mean_delay"] * 1e3 if flow["goodput_bps"] > 0 else math.nan,
            flow["window_dropped_packets"],
            flow["loss_rate"],
        ]
        for flow in results.raw["flows"]
    ]
    window = core["duration"] - core["warmup"]
    tables = ", ".join(f"<code>{_e(name)}</code>" for name in TABLES)
    return (
        f'<div class="aqmlab-results"><p><b>Results</b> {_e(core["name"] or "(unnamed)")}</p>{facts}'
        f"<p>Per flow over the measurement window (the last {window:g} s):</p>"
        + _table(columns, rows, "flows: results.flows has them all")
        + f"<p>Tables (pandas DataFrames): {tables}; figures: <code>plot_goodput()</code>, "
        "<code>plot_throughput()</code>, <code>plot_queue()</code>, <code>plot_window(flow)</code>.</p></div>"
    )


def _inline(value: Any) -> str:
    """A scenario value on one line, as a TOML inline table is written (strings unquoted)."""
    if isinstance(value, Mapping):
        return "{" + ", ".join(f"{key} = {_inline(item)}" for key, item in value.items()) + "}"
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_inline(item) for item in value) + "]"
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _short(value: Any) -> str:
    text = _inline(value)
    return text if len(text) <= MAX_VALUE_CHARS else text[: MAX_VALUE_CHARS - 1] + "…"


def scenario_html(scenario: Scenario) -> str:
    """The scenario's name and source, its `[simulation]` and `[topology]` as written (a value
    per line), its flow entries (name, type, count and the rest of each), and its text folded:
    the file's TOML with its comments while the scenario is what the file holds, else JSON."""
    data = scenario.to_dict()
    source = f"from {scenario.source}" if scenario.source else "built in Python (no file)"
    simulation = data.get("simulation", {})
    topology = data.get("topology", {})
    parts = [f'<div class="aqmlab-scenario"><p><b>Scenario</b> {_e(scenario.name or "(unnamed)")} ({_e(source)})</p>']
    if isinstance(simulation, Mapping) and simulation:
        parts.append(_facts([("simulation", _short(simulation))]))
    if isinstance(topology, Mapping) and topology:
        rows = [[key, _short(value)] for key, value in topology.items()]
        parts.append("<p><b>topology</b></p>" + _table(["field", "value"], rows, "fields"))
    flows = [flow for flow in data.get("flows", []) if isinstance(flow, Mapping)]
    if flows:
        shown = ("name", "type", "count")
        rows = [
            [*(flow.get(key, "") for key in shown), _short({k: v for k, v in flow.items() if k not in shown})]
            for flow in flows
        ]
        parts.append("<p><b>flows</b></p>" + _table([*shown, "other fields"], rows, "flow entries"))
    language, text = scenario_text(scenario)
    parts.append(f"<details><summary>{_e(language)}</summary><pre>{_e(text)}</pre></details></div>")
    return "".join(parts)


def scenario_text(scenario: Scenario) -> tuple[str, str]:
    """("TOML", the file's text) while the scenario holds what its file does (comments kept);
    else ("JSON", its content as JSON): a changed copy (`with_`) or one built from a dict."""
    from .scenario import read_toml

    data = scenario.to_dict()
    if scenario.source is not None:
        try:
            if read_toml(scenario.source) == data:
                return f"TOML ({scenario.source.name})", scenario.source.read_text()
        except (OSError, ValueError):  # gone or changed since: its content is shown instead
            pass
    return "JSON", json.dumps(data, indent=2, default=str)
