"""What every page is built of: the page itself (its style and the script that sorts tables),
marks, cells and tables (numbers right-aligned, headers with units, rates in Mbps), embedded PNGs,
the output folder's JSON and tables as a page reads them, and the scenario section."""

from __future__ import annotations

import base64
import html
import io
import json
import tomllib
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from .. import outdir
from ..results import CORE_SUMMARY_KEYS, MBPS
from ..terminal import fmt, heading

# Rows of a data table shown on a page; the files hold every row.
MAX_TABLE_ROWS = 200
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
