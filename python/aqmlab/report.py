"""HTML reports of output folders (`aqmlab report DIR`): one self-contained page each, its
figures embedded as PNG data, its tables and the scenario written out, pass/fail marked.

The folder's files tell what it holds:
- a run (`aqmlab run --out`): `summary.json` → `report.html` with the summary, the figures,
  the flows, the links (those monitored or dropping first, the others folded), the drops, the
  packet captures, the scenario as the user wrote it (`scenario.toml`; else `scenario.json`);
- an experiment (`aqmlab reproduce ID --out`): `rows.json` → `report.html` with the
  paper-vs-ours rows, the figure, the notes and the data tables;
- a sweep (`aqmlab sweep --out`): `sweep.json` → `report.html` with the grid, one row per grid
  point (each metric over its seeds, `sweep.grid_summary`) and each metric drawn against each
  grid axis, then one row per job;
- a comparison (`aqmlab compare --out`): `compare.json` → `report.html` with the table (what
  ran, with its buffer), the figure, each mechanism's qdisc table and the scenario;
- a suite (`aqmlab reproduce --all --out`): experiment folders → each one's `report.html`,
  then `index.html` (and `index.json`) with one row per experiment that ran (rows passing /
  total and a link to its page) or failed to run, then the ids of those not run in this folder
  and of those not reproduced yet, with why.

Pages are plain HTML built with `html.escape`; the same folder gives the same bytes. Figures
are embedded, so a page can be sent alone; each links to its PNG file beside the page, for
the full size. Every header carries its unit (`terminal.heading`: a column's unit suffix,
`_bps` shown in Mbps); a table wider than the page scrolls inside it; a click on a header
sorts the table (a few lines of inline script: no network).
"""

from __future__ import annotations

import base64
import html
import io
import json
import textwrap
import tomllib
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from . import __version__, outdir
from .emulate import KERNEL_TCP_COLUMNS, KERNEL_TCP_TITLE, Figures, figures
from .results import CORE_SUMMARY_KEYS, MBPS, NAMED_IDS
from .terminal import fmt, heading

# Rows of a data table shown on a page; the files hold every row.
MAX_TABLE_ROWS = 200
# The file a suite keeps its experiments' errors in (id → message).
ERRORS_FILE = "errors.json"

STYLE = """
body { font-family: system-ui, sans-serif; max-width: 72rem; margin: 2rem auto; padding: 0 1rem; color: #222; }
h1 { font-size: 1.5rem; } h2 { font-size: 1.2rem; margin-top: 2rem; } h3 { font-size: 1rem; }
table { border-collapse: collapse; margin: 0.5rem 0 1rem; font-size: 0.85rem; }
th, td { border: 1px solid #ccc; padding: 0.2rem 0.5rem; text-align: left; vertical-align: top; }
th { background: #f0f0f0; } td.num { text-align: right; font-variant-numeric: tabular-nums; }
.mark { color: #fff; padding: 0 0.4rem; border-radius: 0.2rem; font-weight: 600; white-space: nowrap; }
.pass { background: #2a7d2a; } .fail { background: #b3261e; } .info { background: #777; }
.pending { background: #b07800; } .missing { background: #555; }
img { max-width: 100%; border: 1px solid #ddd; }
pre { background: #f6f6f6; padding: 0.8rem; overflow: auto; font-size: 0.8rem; }
.muted { color: #666; font-size: 0.85rem; }
.scroll { overflow-x: auto; max-width: 100%; }
table.sortable th { cursor: pointer; }
table.sortable th[data-order="up"]::after { content: " \\25B2"; }
table.sortable th[data-order="down"]::after { content: " \\25BC"; }
details > summary { cursor: pointer; margin: 0.5rem 0; }
"""

# Sorts a table.sortable by the column whose header is clicked (again: the other way): numbers
# (td.num) as numbers, a "-" last, text as text.
SORT_SCRIPT = """
document.querySelectorAll("table.sortable").forEach(function (table) {
  var heads = table.tHead.rows[0].cells;
  Array.prototype.forEach.call(heads, function (th, column) {
    th.addEventListener("click", function () {
      var up = th.dataset.order !== "up";
      Array.prototype.forEach.call(heads, function (other) { delete other.dataset.order; });
      th.dataset.order = up ? "up" : "down";
      var body = table.tBodies[0];
      var rows = Array.prototype.slice.call(body.rows);
      var key = function (row) {
        var cell = row.cells[column], text = cell ? cell.textContent.trim() : "";
        if (cell && cell.classList.contains("num")) {
          var number = parseFloat(text.replace(/,/g, ""));
          return isNaN(number) ? null : number;
        }
        return text === "" || text === "-" ? null : text;
      };
      rows.sort(function (a, b) {
        var x = key(a), y = key(b);
        if (x === null || y === null) { return (x === null) - (y === null); }
        var order = typeof x === "number" && typeof y === "number" ? x - y : String(x).localeCompare(String(y));
        return up ? order : -order;
      });
      rows.forEach(function (row) { body.appendChild(row); });
    });
  });
});
"""


def folder_kind(folder: Path) -> str:
    """`run`, `experiment`, `sweep`, `compare` or `suite`; ValueError naming what was expected."""
    if (folder / "sweep.json").is_file():
        return "sweep"
    if (folder / "compare.json").is_file():
        return "compare"
    if (folder / "rows.json").is_file():
        return "experiment"
    if (folder / "summary.json").is_file():
        return "run"
    if any(_is_experiment(sub) for sub in _subfolders(folder)):
        return "suite"
    raise ValueError(
        f"{folder}: not an output folder of aqmlab run, reproduce, sweep or compare "
        "(no summary.json, rows.json, sweep.json, compare.json, or experiment folders)"
    )


def write_report(folder: str | Path) -> list[Path]:
    """Writes the page(s) of an output folder; returns them (a suite: its index first)."""
    folder = Path(folder)
    if not folder.is_dir():
        raise ValueError(f"{folder}: no such folder")
    kind = folder_kind(folder)
    if kind == "suite":
        return write_suite_pages(folder)
    damage = outdir.verify(folder) if (folder / outdir.MANIFEST).is_file() else None
    if damage is not None:
        raise ValueError(f"{folder}: {damage}; the results are damaged, run them again")
    if kind == "experiment" and (folder.parent / "index.json").is_file():  # one experiment of a suite
        page = experiment_page(folder, index="../index.html")
    else:
        pages = {"run": run_page, "experiment": experiment_page, "sweep": sweep_page, "compare": compare_page}
        page = pages[kind](folder)
    path = folder / "report.html"
    outdir.write_text(path, page)
    return [path]


# ---------------------------------------------------------------- building blocks


def _e(text: Any) -> str:
    return html.escape(str(text), quote=True)


def _page(title: str, body: Iterable[str], subtitle: str = "") -> str:
    sub = f'<p class="muted">{_e(subtitle)}</p>\n' if subtitle else ""
    return (
        '<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        f"<title>{_e(title)}</title>\n<style>{STYLE}</style>\n</head>\n<body>\n"
        f"<h1>{_e(title)}</h1>\n{sub}" + "\n".join(body) + f"\n<script>{SORT_SCRIPT}</script>\n</body>\n</html>\n"
    )


def _mark(state: str, text: str | None = None) -> str:
    """A coloured label: state `pass`, `fail`, `info`, `pending` or `missing`."""
    return f'<span class="mark {state}">{_e(text or state)}</span>'


def _pass_mark(passed: bool, graded: bool = True) -> str:
    if not graded:
        return _mark("info", f"info ({'pass' if passed else 'fail'})")
    return _mark("pass") if passed else _mark("fail", "FAIL")


def _cell(value: Any, raw: bool = False, number: bool = False) -> str:
    """A table cell: `raw` HTML as it is, others formatted as the CLI does (`terminal.fmt`: no
    value is "-"), numbers right-aligned (`number`: a number formatted already)."""
    if raw:
        return f"<td>{value}</td>"
    if hasattr(value, "item"):  # a numpy scalar
        value = value.item()
    text = fmt(value)
    number = number or text == "-" or (isinstance(value, (int, float)) and not isinstance(value, bool))
    return f'<td class="num">{_e(text)}</td>' if number else f"<td>{_e(text)}</td>"


def _table(
    columns: Sequence[str],
    rows: Iterable[Sequence[Any]],
    raw: Sequence[str] = (),
    numbers: Sequence[str] = (),
    sortable: bool = False,
) -> str:
    """A table, in a box that scrolls sideways should it be wider than the page; cells of the
    columns named in `raw` are HTML already, of those in `numbers` numbers as text (right-aligned
    as numbers are); `sortable`: a click on a header sorts the rows."""
    head = "".join(f"<th>{_e(c)}</th>" for c in columns)
    body = "\n".join(
        "<tr>" + "".join(_cell(v, c in raw, c in numbers) for c, v in zip(columns, row, strict=True)) + "</tr>"
        for row in rows
    )
    kind = ' class="sortable"' if sortable else ""
    return (
        f'<div class="scroll"><table{kind}>\n<thead><tr>{head}</tr></thead>\n<tbody>\n{body}\n</tbody>\n</table></div>'
    )


def _heading(column: str) -> str:
    """A results column's header: its words and unit (`terminal.heading`), a qdisc's counter
    (`qdisc.<name>`) named as one."""
    if column.startswith("qdisc."):
        return f"qdisc: {heading(column.removeprefix('qdisc.'))}"
    return heading(column)


def _in_mbps(frame: Any) -> Any:
    """`frame` with each `<name>_bps` column in Mbps, as `<name>_mbps`."""
    rates = [c for c in frame.columns if str(c).endswith("_bps")]
    if not rates:
        return frame
    shown = frame.copy()
    for column in rates:
        shown[column] = shown[column] / MBPS
    return shown.rename(columns={c: f"{str(c).removesuffix('_bps')}_mbps" for c in rates})


def _frame_table(frame: Any, source: str = "") -> str:
    """A DataFrame as a sortable table, its first MAX_TABLE_ROWS rows (the rest named, with the
    file); rates in Mbps, each header with its unit (`_heading`)."""
    frame = _in_mbps(frame)
    shown = frame.head(MAX_TABLE_ROWS)
    rows = [[v.item() if hasattr(v, "item") else v for v in row] for row in shown.itertuples(index=False)]
    table = _table([_heading(str(c)) for c in frame.columns], rows, sortable=len(rows) > 1)
    if len(frame) > MAX_TABLE_ROWS:
        where = f" (all of them in {_e(source)})" if source else ""
        table += f'\n<p class="muted">first {MAX_TABLE_ROWS} of {len(frame)} rows{where}</p>'
    return table


def _png(data: bytes, alt: str) -> str:
    return f'<img alt="{_e(alt)}" src="data:image/png;base64,{base64.b64encode(data).decode()}">'


def _png_file(path: Path) -> str:
    """A PNG of the folder embedded in the page, linking to the file for its full size."""
    return f'<a href="{_e(path.name)}">{_png(path.read_bytes(), path.stem)}</a>'


def _figure(fig: Any, alt: str) -> str:
    """A matplotlib Figure (made by `plots.subplots`, not pyplot) embedded in the page."""
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=100, metadata={"Software": None})
    return _png(buffer.getvalue(), alt)


def _json_block(data: Any) -> str:
    return f"<pre>{_e(json.dumps(data, indent=2))}</pre>"


def _read_table(folder: Path, name: str) -> Any:
    """`<name>.parquet` or `<name>.csv` of a run folder (None when neither is there)."""
    import pandas as pd

    if (folder / f"{name}.parquet").is_file():
        return pd.read_parquet(folder / f"{name}.parquet")
    if (folder / f"{name}.csv").is_file():
        return pd.read_csv(folder / f"{name}.csv")
    return None


# Keys each JSON file of an output folder must have for its page.
REQUIRED_KEYS = {
    "summary.json": (*CORE_SUMMARY_KEYS, "utilisation", "drops_by_reason"),
    "rows.json": ("id", "title", "passed", "rows"),
    "sweep.json": ("grid", "jobs"),
    "compare.json": ("name", "mechanisms", "fair_share_mbps"),
}


def _read_json(path: Path) -> Any:
    """A JSON object of an output folder (OutputError, a ValueError, naming the file if it is not
    one, or lacks a key its page needs)."""
    return outdir.read_json(path, REQUIRED_KEYS.get(path.name, ()))


def _subfolders(folder: Path) -> list[Path]:
    return sorted(p for p in folder.iterdir() if p.is_dir())


def _is_experiment(folder: Path) -> bool:
    return (folder / "rows.json").is_file() and (folder / "experiment.json").is_file()


# ---------------------------------------------------------------- a run


def run_page(folder: Path) -> str:
    """The page of a run's folder: `aqmlab run --out`'s, or `aqmlab emulate --out`'s (its
    `emulation.json` adds what the forwarder cost and what the kernel's TCPs saw)."""
    summary = _read_json(folder / "summary.json")
    name = summary.get("name") or folder.name
    emulation = _emulation(folder / "emulation.json") if (folder / "emulation.json").is_file() else None
    conserved = summary["packets_sent"] == (
        summary["packets_delivered"] + summary["packets_dropped"] + summary["packets_in_flight"]
    )
    facts = [
        ("seed", _e(summary["seed"])),
        (
            "emulated in real time" if emulation else "simulated",
            _e(f"{summary['duration']:g} s, measured from {summary['warmup']:g} s"),
        ),
        ("events", _e(f"{summary['events']:,}")),
        ("packets sent", _e(f"{summary['packets_sent']:,}")),
        ("delivered / dropped / in flight at the end", _e(_delivery(summary))),
        ("packets conserved (sent = delivered + dropped + in flight)", _pass_mark(conserved)),
        ("Jain index (goodput / fair share)", _e(fmt(summary["jain_index"]))),
        *((f"utilisation {link}", _e(f"{u:.1%}")) for link, u in summary["utilisation"].items()),
        ("drops by reason", _e(", ".join(f"{r} {n}" for r, n in summary["drops_by_reason"].items()) or "none")),
    ]
    body = ["<h2>Summary</h2>", _table(["", "value"], facts, raw=("value",))]
    if emulation is not None:
        body += _emulation_sections(emulation)
    figures = sorted(
        folder.glob("*.png"), key=lambda p: (RUN_FIGURES.index(p.name) if p.name in RUN_FIGURES else 99, p.name)
    )
    if figures:
        body.append("<h2>Figures</h2>")
        body += [_png_file(p) for p in figures]
    flows = _read_table(folder, "flows")
    if flows is not None:
        body += ["<h2>Flows</h2>", _frame_table(_flow_columns(flows), "flows")]
    links = _read_table(folder, "links")
    if links is not None:
        body += _link_sections(links, set(summary["utilisation"]))
    drops = _read_table(folder, "drops")
    if drops is not None and not drops.empty:
        named = _named(drops).rename(columns=DROP_COLUMNS)
        body += ["<h2>Drops by flow, link and reason</h2>", _frame_table(named, "drops")]
    monitored = _read_table(folder, "qdisc_flows")
    if monitored is not None and not monitored.empty:
        body += [
            "<h2>Flows a queue discipline measured (qdisc_flows)</h2>",
            '<p class="muted">per-flow state a qdisc keeps beside its decision (e.g. SRED\'s candidates, '
            "RED-PD's monitored flows), counted from the warm-up</p>",
            _frame_table(_named(monitored), "qdisc_flows"),
        ]
    captures = sorted(folder.glob("*.pcap"))
    if captures:
        body.append("<h2>Packet captures</h2>")
        body.append(_table(["file", "bytes"], [[p.name, p.stat().st_size] for p in captures]))
        body.append(f'<p class="muted">Open with Wireshark, or e.g. <code>tshark -r {_e(captures[0].name)}</code>.</p>')
    body += _scenario_section(folder)
    kind = "Emulated run" if emulation else "Run"
    return _page(f"{kind}: {name}", body, f"aqmlab {__version__} · {folder.name}")


# A run's figures in the order a reader takes them: who got what, over time, and the queues.
RUN_FIGURES = ("throughput.png", "goodput.png", "queue.png")
# The drops table's columns as headers say them.
DROP_COLUMNS = {"count": "packets (whole run)", "window_count": "packets (measurement window)"}


def _link_sections(links: Any, monitored: set[str]) -> list[str]:
    """The links that carried packets: those monitored or dropping in a table, the others (a
    dumbbell's idle access links, the reverse path) folded below it with a one-line summary."""
    used = links[(links["packets_sent"] > 0) | (links["drops"] > 0)]
    shown = used["name"].isin(monitored) | (used["drops"] > 0)
    main, others = used[shown], used[~shown]
    body = ["<h2>Links</h2>"]
    if not main.empty:
        body += ['<p class="muted">monitored, or dropping packets</p>', _frame_table(_link_columns(main), "links")]
    if not others.empty:
        busiest = others["utilisation"].max()
        summary = f"{len(others)} other links carried packets without a drop (utilisation at most {busiest:.1%})" + (
            f"; {len(links) - len(used)} carried none" if len(links) > len(used) else ""
        )
        body.append(
            f"<details><summary>{_e(summary)}</summary>\n{_frame_table(_link_columns(others), 'links')}\n</details>"
        )
    return body


def _link_columns(links: Any) -> Any:
    """The links table in the page's units (Mbps, ms, %), with the qdisc counters that have a value."""
    shown = links[["id", "name", "qdisc"]].copy()
    shown["rate (Mbps)"] = links["rate_bps"] / MBPS
    shown["delay (ms)"] = links["delay"] * 1e3
    shown["utilisation (%)"] = links["utilisation"] * 100
    shown["packets sent"] = links["packets_sent"]
    shown["drops (packets)"] = links["drops"]
    counters = [c for c in links.columns if c.startswith("qdisc.") and links[c].notna().any()]
    return shown.join(links[counters])


def _scenario_section(folder: Path) -> list[str]:
    """The scenario as the user wrote it (`scenario.toml`, comments and all), else as it ran
    (`scenario.json`); with both, the fields the run changed (`--seed`, `--pcap`), and then the
    scenario as it ran."""
    ran = _read_json(folder / "scenario.json") if (folder / "scenario.json").is_file() else None
    written = folder / "scenario.toml"
    if not written.is_file():
        return [] if ran is None else ["<h2>Scenario</h2>", _json_block(ran)]
    text = outdir.read_capped(written, outdir.MAX_JSON_BYTES).decode(errors="replace")
    body = ["<h2>Scenario</h2>", f'<p class="muted">as written ({_e(written.name)})</p>', f"<pre>{_e(text)}</pre>"]
    if ran is None:
        return body
    try:
        changes = _changed_fields(tomllib.loads(text), ran)
    except tomllib.TOMLDecodeError:
        changes = ["(scenario.toml is not TOML)"]
    if changes:
        body.append(
            f"<p>The run changed {_e(', '.join(changes))} (an option of the command, such as --seed or --pcap).</p>"
            f"<details><summary>the scenario as it ran (scenario.json)</summary>\n{_json_block(ran)}\n</details>"
        )
    return body


def _changed_fields(written: Any, ran: Any, path: str = "") -> list[str]:
    """`path = value` of each field where `ran` differs from `written` (tables compared key by key)."""
    if not (isinstance(written, dict) and isinstance(ran, dict)):
        return [] if written == ran else [f"{path} = {json.dumps(ran)}" if ran is not None else f"{path} removed"]
    changes = []
    for key in dict.fromkeys([*written, *ran]):
        changes += _changed_fields(written.get(key), ran.get(key), f"{path}.{key}" if path else key)
    return changes


def _emulation(path: Path) -> Figures:
    """An emulated run's `emulation.json` as `aqmlab emulate` shows it (OutputError naming the file
    and every key it lacks)."""
    stats = _read_json(path)
    try:
        return figures(stats)
    except ValueError as e:
        raise outdir.OutputError(f"{path}: {e} (not written by this aqmlab, or edited)") from None


def _emulation_sections(emulation: Figures) -> list[str]:
    """The forwarder's cost, and each TCP flow as its sender's kernel saw it when it stopped."""
    body = ["<h2>Emulation: the forwarder</h2>", _table(["", "value"], emulation.forwarder)]
    if emulation.kernel_tcp:
        body += [
            f"<h2>{_e(KERNEL_TCP_TITLE)}</h2>",
            _table(KERNEL_TCP_COLUMNS, emulation.kernel_tcp, numbers=KERNEL_TCP_COLUMNS[1:]),
        ]
    body += [f'<p class="muted">{_e(error)}</p>' for error in emulation.errors]
    return body


def _named(frame: Any) -> Any:
    """`frame` with its `flow` and `link` ids replaced by the names saved beside them (`flow_name`,
    `link_name`; a folder written before they were keeps its ids)."""
    named = frame.copy()
    for column in NAMED_IDS:
        if f"{column}_name" in named:
            named[column] = named.pop(f"{column}_name")
    return named


def _delivery(summary: dict) -> str:
    return f"{summary['packets_delivered']:,} / {summary['packets_dropped']:,} / {summary['packets_in_flight']:,}"


def _flow_columns(flows: Any) -> Any:
    """The flows table in the CLI's units: Mbps, ms, packets."""
    shown = flows[["id", "name", "type", "src", "dst"]].copy()
    shown["goodput (Mbps)"] = flows["goodput_bps"] / MBPS
    shown["fair share (Mbps)"] = flows["fair_share_bps"] / MBPS
    shown["goodput / fair share"] = flows["normalised_goodput"]
    shown["sent (packets)"] = flows["sent_packets"]
    shown["dropped (packets)"] = flows["dropped_packets"]
    shown["loss rate (window)"] = flows["loss_rate"]
    shown["mean delay (ms)"] = flows["mean_delay"] * 1e3
    shown["retransmitted (packets)"] = flows["retransmitted_packets"]
    shown["timeouts"] = flows["timeouts"]
    return shown


# ---------------------------------------------------------------- an experiment


def experiment_page(folder: Path, index: str | None = None) -> str:
    """The page of a `reproduce` folder; `index`: the link back to the suite's index."""
    reproduction = _read_json(folder / "rows.json")
    about = _read_json(folder / "experiment.json") if (folder / "experiment.json").is_file() else {}
    rows = reproduction["rows"]
    passing, graded = _row_counts(rows)
    body = [f'<p><a href="{_e(index)}">&larr; every experiment</a></p>'] if index else []
    mode = "quick run" if about.get("quick") else "full run"
    body.append(f"<p>{_pass_mark(reproduction['passed'])} {passing} of {graded} graded rows pass · {mode}</p>")
    body.append("<h2>Paper vs ours</h2>")
    reasons = any("reason" in r for r in rows)
    with_ns2 = any("ns2" in r or "ns2_absent" in r for r in rows)
    columns = ["key", "metric", "paper", *(["ns-2"] if with_ns2 else []), "ours", "tolerance", "pass"]
    columns += ["why it fails", "verdict"] if reasons else []
    cells = [
        [r.get("key", ""), r["metric"], r["paper"]]
        + ([_ns2_value(r)] if with_ns2 else [])
        + [r["ours"], r["tolerance"], _pass_mark(r["pass"], r.get("graded", True))]
        + ([r.get("reason", ""), _verdict_text(r)] if reasons else [])
        for r in rows
    ]
    counts = _verdict_counts(rows)
    if any(counts[kind] for kind in FAILING_VERDICTS):
        body.append(f"<p>{_e(_verdict_summary(counts))}</p>")
    body.append(_table(columns, cells, raw=("pass",)))
    if reproduction.get("ns2_source"):
        body.append(f'<p class="muted">ns-2 column: {_e(reproduction["ns2_source"])}</p>')
    figure = folder / f"{reproduction['id'] or 'figure'}.png"
    if figure.is_file():
        body += ["<h2>Figure</h2>", _png_file(figure)]
    if about.get("notes"):
        body += ["<h2>Notes</h2>", "<ul>" + "".join(f"<li>{_e(n)}</li>" for n in about["notes"]) + "</ul>"]
    data = sorted(folder.glob("*.csv"))
    if data:
        import pandas as pd

        body.append("<h2>Data</h2>")
        shown = set(about.get("show", []))
        for path in data:
            opened = " open" if path.stem in shown else ""
            table = _frame_table(pd.read_csv(path), path.name)
            body.append(f"<details{opened}><summary>{_e(path.name)}</summary>\n{table}\n</details>")
    version = about.get("aqmlab", "?")
    return _page(f"{reproduction['id']}: {reproduction['title']}", body, f"aqmlab {version} · {folder.name}")


# Verdicts of failing graded rows (experiments/_verdicts.py), in the order a reader weighs them.
FAILING_VERDICTS = {
    "ns2": "fail as ns-2 does",
    "arithmetic": "fail by the paper's own arithmetic or an open choice",
    "defect": "our defect",
    "open": "no independent reference yet",
}


def _ns2_value(row: dict) -> str:
    if "ns2" not in row:
        return row.get("ns2_absent", "")
    value, spread = row["ns2"], row.get("ns2_spread")
    return f"{value:.4g}" + (f" ±{spread:.3g}" if spread else "") if isinstance(value, (int, float)) else str(value)


def _verdict_text(row: dict) -> str:
    kind = row.get("verdict")
    if kind in (None, "paper"):
        return ""
    why = row.get("verdict_why", "")
    return FAILING_VERDICTS.get(kind, kind) + (f": {why}" if why else "")


def _verdict_counts(rows: list[dict]) -> dict[str, int]:
    """Graded rows by verdict (rows written before verdicts existed count as failing and open)."""
    counts = dict.fromkeys(["paper", *FAILING_VERDICTS], 0)
    for row in rows:
        if row.get("graded", True):
            counts[row.get("verdict") or ("paper" if row["pass"] else "open")] += 1
    return counts


def _verdict_summary(counts: dict[str, int]) -> str:
    failing = ", ".join(f"{counts[kind]} {text}" for kind, text in FAILING_VERDICTS.items() if counts[kind])
    return f"{counts['paper']} graded rows agree with the paper; of those that fail: {failing or 'none'}."


def _row_counts(rows: list[dict]) -> tuple[int, int]:
    """(graded rows that pass, graded rows): informative rows do not count."""
    graded = [r for r in rows if r.get("graded", True)]
    return sum(bool(r["pass"]) for r in graded), len(graded)


# ---------------------------------------------------------------- a sweep


def sweep_page(folder: Path) -> str:
    """The page of an `aqmlab sweep --out` folder: the grid, each grid point's metrics over its
    seeds (`sweep.grid_summary`, as `aqmlab sweep` prints them) and drawn against each axis,
    then every job."""
    from .sweep import grid_summary, labelled_jobs

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


# ---------------------------------------------------------------- a comparison


def compare_page(folder: Path) -> str:
    """The page of an `aqmlab compare --out` folder."""
    import pandas as pd

    about = _read_json(folder / "compare.json")
    table = pd.read_csv(folder / "compare.csv")
    shares = ", ".join(f"{group} {mbps:.3g} Mbps" for group, mbps in about["fair_share_mbps"].items())
    body = [
        f"<p>{len(table)} mechanisms on the bottleneck; max-min fair share of each flow group: {_e(shares)}</p>",
        "<h2>Mechanisms</h2>",
        _frame_table(table, "compare.csv"),
    ]
    if (folder / "compare.png").is_file():
        body += ["<h2>Figure</h2>", _png_file(folder / "compare.png")]
    body += ["<h2>What ran</h2>", _json_block(about["mechanisms"]), *_scenario_section(folder)]
    return _page(f"Compare: {about['name']}", body, f"aqmlab {about.get('aqmlab', '?')} · {folder.name}")


# ---------------------------------------------------------------- a suite


def suite_entries(folder: Path) -> list[dict[str, Any]]:
    """One entry per registered experiment and per experiment not reproduced yet, by id:
    `status` passed, failed, error, not run or not reproduced; the rows' counts, the mode and
    wall time of one that ran; the reason of one that did not."""
    from .experiments import not_reproduced_list, registry

    errors = _read_json(folder / ERRORS_FILE) if (folder / ERRORS_FILE).is_file() else {}
    entries = []
    for id, experiment in registry().items():
        entry: dict[str, Any] = {"id": id, "title": experiment.title}
        sub = folder / id
        damage = outdir.verify(sub) if (sub / outdir.MANIFEST).is_file() else None
        if damage is not None:
            entry |= {"status": "damaged", "reason": f"{damage}: aqmlab reproduce --all runs it again"}
        elif _is_experiment(sub):
            reproduction = _read_json(sub / "rows.json")
            passing, graded = _row_counts(reproduction["rows"])
            entry |= {
                "status": "passed" if reproduction["passed"] else "failed",
                "rows_passed": passing,
                "rows_graded": graded,
                "verdicts": _verdict_counts(reproduction["rows"]),
                "quick": bool(_read_json(sub / "experiment.json").get("quick")),
                "wall_time_s": _wall_time(sub / "wall_time.txt"),
                "page": f"{id}/report.html",
            }
        elif id in errors:
            entry |= {"status": "error", "reason": errors[id]}
        else:
            entry |= {"status": "not run", "reason": f"not in this folder: aqmlab reproduce --all --only {id}"}
        entries.append(entry)
    for id, missing in not_reproduced_list().items():
        entries.append({"id": id, "title": missing.title, "status": "not reproduced", "reason": missing.reason})
    return sorted(entries, key=lambda entry: entry["id"])


def _wall_time(path: Path) -> float | None:
    """The seconds an experiment took, when recorded."""
    try:
        return float(path.read_text())
    except (OSError, ValueError):
        return None


def write_suite_pages(folder: Path) -> list[Path]:
    """Each experiment's page, then `index.html` and `index.json`; returns the index first."""
    pages = []
    entries = suite_entries(folder)
    for entry in entries:
        if "page" in entry:
            page = folder / entry["page"]
            outdir.write_text(page, experiment_page(page.parent, index="../index.html"))
            pages.append(page)
    index = folder / "index.html"
    outdir.write_text(index, index_page(entries))
    listing = folder / "index.json"
    outdir.write_text(listing, json.dumps({"aqmlab": __version__, "experiments": entries}, indent=2) + "\n")
    return [index, listing, *pages]


STATUS_MARKS = {
    "passed": ("pass", "pass"),
    "failed": ("fail", "FAIL"),
    "error": ("fail", "error"),
    "damaged": ("fail", "damaged"),
    "not run": ("pending", "not run"),
    "not reproduced": ("missing", "not reproduced yet"),
}


def index_page(entries: list[dict[str, Any]]) -> str:
    """One row per experiment that ran, failed to run or is damaged; the ids of those not run in this
    folder on one line; those not reproduced yet in a table of their own, with why."""
    ran = [e for e in entries if "page" in e]
    shown = [e for e in entries if e["status"] in ("passed", "failed", "error", "damaged")]
    not_run = [e["id"] for e in entries if e["status"] == "not run"]
    missing = [e for e in entries if e["status"] == "not reproduced"]
    passed = sum(e["status"] == "passed" for e in ran)
    rows_passed, rows_graded = sum(e["rows_passed"] for e in ran), sum(e["rows_graded"] for e in ran)
    modes = sorted({"quick" if e["quick"] else "full" for e in ran})
    headline = (
        f"{len(ran)} of {len(entries) - len(missing)} experiments ran ({' and '.join(modes) or 'none'}); "
        f"{passed} pass every graded row; {rows_passed} of {rows_graded} graded rows pass."
    )
    totals = {kind: sum(e["verdicts"][kind] for e in ran) for kind in ("paper", *FAILING_VERDICTS)}
    cells = []
    for e in shown:
        link = f'<a href="{_e(e["page"])}">{_e(e["id"])}</a>' if "page" in e else _e(e["id"])
        counts = f"{e['rows_passed']} / {e['rows_graded']}" if "page" in e else ""
        if "page" in e:
            wall = f", {e['wall_time_s']:.1f} s" if e["wall_time_s"] is not None else ""
            note = ("quick run" if e["quick"] else "full run") + wall
        else:
            note = e.get("reason", "")
        cells.append([link, e["title"], counts, _mark(*STATUS_MARKS[e["status"]]), note])
    body = [
        f"<p>{_e(headline)}</p>",
        f"<p>{_e(_verdict_summary(totals))}</p>",
        '<p class="muted">Rows passing counts the graded rows (the paper\'s numbers and orderings); informative '
        "rows, the other reading of a choice the paper leaves open, are on each page.</p>",
        _table(["experiment", "title", "graded rows passing", "status", "note"], cells, raw=("experiment", "status")),
    ]
    if not_run:
        body.append(
            f'<p class="muted">Not run in this folder ({len(not_run)}): {_e(", ".join(not_run))}. '
            f"<code>aqmlab reproduce --all --out DIR</code> runs every one (<code>--only ID,ID</code> some).</p>"
        )
    if missing:
        body += [
            f"<h2>Not reproduced yet ({len(missing)})</h2>",
            _table(["experiment", "title", "why"], [[e["id"], e["title"], e["reason"]] for e in missing]),
        ]
    return _page("aqmlab: paper reproductions", body, f"aqmlab {__version__}")
