"""Tables that fit the terminal: a DataFrame printed by the CLI is cut into column groups that
each fit the width (the key column repeated in each), and a long per-flow table is summarised
by flow group (`tcp[0-30]`: mean, then min-max), so that no cell is ever cut. `wide=True`
prints every row; the files written with `--out` always hold the whole table.
"""

from __future__ import annotations

import math
import re
from typing import Any

import pandas as pd
from rich.table import Table

# Longer tables are summarised by flow group (unless wide).
MAX_ROWS = 12
# A rich table cell's padding and border: one space either side and one rule.
CELL_FRAME = 3
# Integer columns that name a row rather than measure it: shown as ranges, never averaged.
IDENTIFIERS = ("id", "flow")
_INDEX = re.compile(r"\[(\d+)\]$")


def fmt(value: Any) -> str:
    """A cell: yes/no, large numbers with thousands separators, others to 4 significant digits."""
    if isinstance(value, bool):
        return "yes" if value else "no"
    if hasattr(value, "item"):
        value = value.item()
    if isinstance(value, float):
        return f"{value:,.0f}" if math.isfinite(value) and abs(value) >= 1e4 else f"{value:.4g}"
    return str(value)


def tables(frame: pd.DataFrame, title: str, width: int, wide: bool = False) -> list[Table]:
    """`frame` as one or more rich tables no wider than `width`, summarised by flow group when
    it has more than MAX_ROWS rows (unless `wide`)."""
    cells, note = _cells(frame, wide)
    headers = [str(c).replace("_", " ") for c in cells.columns]
    # Room for every header and cell unwrapped: rich then has no reason to shrink (and cut) a column.
    widths = [
        max(len(text) for text in [h, *cells[c]]) + CELL_FRAME for h, c in zip(headers, cells.columns, strict=True)
    ]
    groups = _column_groups(widths, width)
    out = []
    for n, columns in enumerate(groups):
        part = f" (columns {n + 1}/{len(groups)})" if len(groups) > 1 else ""
        heading = f"{title}{part}{note}"
        # At least as wide as its title (up to `width`), so that rich does not wrap the title.
        table = Table(title=heading or None, title_justify="left", min_width=min(len(heading), width))
        for i in columns:
            numeric = frame[frame.columns[i]].dtype.kind in "iuf"
            table.add_column(headers[i], justify="right" if numeric else "left")
        for row in cells.itertuples(index=False):
            table.add_row(*(row[i] for i in columns))
        out.append(table)
    return out


def _column_groups(widths: list[int], width: int) -> list[list[int]]:
    """Consecutive columns that fit `width`, each group led by column 0 (the key)."""
    groups: list[list[int]] = [[0]]
    used = widths[0] + 1
    for i in range(1, len(widths)):
        if used + widths[i] > width and len(groups[-1]) > 1:
            groups.append([0])
            used = widths[0] + 1
        groups[-1].append(i)
        used += widths[i]
    return groups


def _cells(frame: pd.DataFrame, wide: bool) -> tuple[pd.DataFrame, str]:
    """The cells as strings: every row, or (long tables, not `wide`) one mean row and one
    min-max row per group of consecutive rows of the same flow group; and a title note."""
    if wide or len(frame) <= MAX_ROWS:
        return frame.map(fmt), ""
    groups = _flow_groups(frame)
    rows: list[list[str]] = []
    for members in groups:
        part = frame.iloc[members]
        if len(members) == 1:
            rows.append([fmt(v) for v in part.iloc[0]])
            continue
        mean, spread = [], []
        for column in frame.columns:
            values = part[column]
            if column in IDENTIFIERS or values.dtype.kind not in "iuf":
                mean.append(_group_label(values))
                spread.append(f"{len(members)} rows" if not spread else "")
            else:
                mean.append(fmt(values.mean()))
                spread.append(f"{fmt(values.min())}-{fmt(values.max())}")
        rows += [mean, spread]
    if len(rows) > 2 * MAX_ROWS:
        return frame.head(MAX_ROWS).map(fmt), f" (first {MAX_ROWS} of {len(frame)} rows; --wide for all)"
    note = f" ({len(frame)} rows by flow group: mean, then min-max; --wide for all)"
    return pd.DataFrame(rows, columns=frame.columns), note


def _flow_groups(frame: pd.DataFrame) -> list[list[int]]:
    """Runs of consecutive rows of one flow group (`count` flows named `name[i]`): their text
    cells agree once the `[i]` index is removed. Rows without an index stay alone, so a table
    of other rows (a sweep, say) is never averaged."""
    text = [c for c in frame.columns if frame[c].dtype.kind not in "iufb" and c not in IDENTIFIERS]
    rows = [[str(v) for v in row] for row in frame[text].itertuples(index=False)]
    keys = [tuple(_INDEX.sub("", v) for v in row) if any(_INDEX.search(v) for v in row) else None for row in rows]
    groups: list[list[int]] = []
    for i, key in enumerate(keys):
        if groups and key is not None and keys[groups[-1][-1]] == key:
            groups[-1].append(i)
        else:
            groups.append([i])
    return groups


def _group_label(values: pd.Series) -> str:
    """A group's text or identifier cell: `tcp[0-30]` for indexed names, `1-31` for ids, else the common value."""
    first, last = str(values.iloc[0]), str(values.iloc[-1])
    if first == last:
        return first
    a, b = _INDEX.search(first), _INDEX.search(last)
    if a and b:
        return f"{first[: a.start()]}[{a.group(1)}-{b.group(1)}]"
    return f"{first}-{last}"


def rows_table(
    rows: list[Any], title: str, reference: str = "paper", ratio: bool = False, notes: list[str] | None = None
) -> Table:
    """Checked rows (`experiments.Row`) as a table: metric, the reference value (the paper's,
    or the model's for `validate`), ours, with `ratio` ours / reference (where the reference is
    not 0), tolerance, pass, and with `notes` (one per row) a note column."""
    columns = ["metric", reference, "ours", *(["ratio"] if ratio else []), "tolerance", "pass"]
    table = Table(*columns, *(["note"] if notes is not None else []), title=title, title_justify="left")
    for index, row in enumerate(rows):
        cells = [row.metric, fmt(row.paper), fmt(row.ours)]
        if ratio:
            cells.append(f"{row.ours / row.paper:.3f}" if row.paper else "-")
        verdict = "[green]pass[/]" if row.passed else "[red]FAIL[/]"
        cells += [row.tolerance, verdict if row.graded else f"info ({'pass' if row.passed else 'fail'})"]
        table.add_row(*cells, *([notes[index]] if notes is not None else []))
    return table
