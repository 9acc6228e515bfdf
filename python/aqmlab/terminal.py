"""Tables for the terminal, as plain text on stdout (results go to stdout, progress and
diagnostics to stderr). Pure Python: printing a table loads neither pandas nor rich, so a
command starts as fast with its table as with `--json` (issue 26).

A table wider than the terminal is fitted, never cut: long text cells wrap, and what is
still too wide is split into column groups that each fit (the key column repeated in each).
A long per-flow table is summarised by flow group (`tcp[0-30]`: mean, then min-max) unless
`wide`; the files written with `--out` always hold the whole table.
"""

from __future__ import annotations

import math
import numbers
import os
import re
import shutil
import sys
import textwrap
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

# Longer tables are summarised by flow group (unless wide).
MAX_ROWS = 12
# Space between two columns.
GAP = 2
# A text cell wider than this share of the terminal wraps (at least WRAP_MIN characters).
WRAP_SHARE = 3
WRAP_MIN = 20
# Integer columns that name a row rather than measure it: shown as ranges, never averaged.
IDENTIFIERS = ("id", "flow")
_INDEX = re.compile(r"\[(\d+)\]$")
_ANSI = re.compile(r"\x1b\[[0-9;]*m")
_COLOURS = {"red": 31, "green": 32, "yellow": 33, "bold": 1}


def fmt(value: Any) -> str:
    """A cell: yes/no, large numbers with thousands separators, others to 4 significant digits."""
    if isinstance(value, bool):
        return "yes" if value else "no"
    if hasattr(value, "item"):  # a numpy scalar
        value = value.item()
    if isinstance(value, float):
        return f"{value:,.0f}" if math.isfinite(value) and abs(value) >= 1e4 else f"{value:.4g}"
    return str(value)


def width() -> int:
    """The terminal's width in characters (COLUMNS when set; 80 when stdout is not a terminal)."""
    return shutil.get_terminal_size().columns


def colour(text: str, name: str) -> str:
    """`text` in a colour (red, green, yellow, bold) when stdout is a terminal and NO_COLOR is unset."""
    if not sys.stdout.isatty() or "NO_COLOR" in os.environ:
        return text
    return f"\x1b[{_COLOURS[name]}m{text}\x1b[0m"


def verdict(passed: bool) -> str:
    return colour("pass", "green") if passed else colour("FAIL", "red")


def paragraph(text: str, style: str | None = None) -> list[str]:
    """Prose wrapped to the terminal's width (in a colour, see `colour`)."""
    lines = textwrap.wrap(text, width()) or [""]
    return [colour(line, style) for line in lines] if style else lines


def show(lines: Iterable[str]) -> None:
    """Prints results on stdout."""
    for line in lines:
        print(line)


def table(
    columns: Sequence[str], rows: Iterable[Sequence[Any]], title: str = "", width_: int | None = None
) -> list[str]:
    """`rows` under `columns` as text lines no wider than `width_` (default: the terminal's):
    numbers right-aligned, long text wrapped, and column groups when still too wide."""
    cells = [[fmt(v) for v in row] for row in rows]
    numeric = [_is_numeric(row[i] for row in cells) for i in range(len(columns))]
    return _render(list(columns), cells, numeric, title, width_ or width())


def frame_table(frame: Any, title: str = "", width_: int | None = None, wide: bool = False) -> list[str]:
    """A pandas DataFrame as `table` does it, with more than MAX_ROWS rows summarised by flow
    group (unless `wide`)."""
    return records_table([str(c) for c in frame.columns], list(frame.itertuples(index=False)), title, width_, wide)


def records_table(
    columns: Sequence[str],
    rows: Sequence[Sequence[Any]],
    title: str = "",
    width_: int | None = None,
    wide: bool = False,
) -> list[str]:
    """Rows of values (numbers stay numbers) as `table` does it, with more than MAX_ROWS rows
    summarised by flow group (unless `wide`)."""
    numeric = [c not in IDENTIFIERS and _is_numeric(row[i] for row in rows) for i, c in enumerate(columns)]
    cells, note = _summarised(list(columns), rows, numeric, wide)
    shown_numeric = [n or c in IDENTIFIERS for n, c in zip(numeric, columns, strict=True)]
    return _render(list(columns), cells, shown_numeric, title, width_ or width(), note)


def _is_numeric(values: Iterable[Any]) -> bool:
    """Whether every value is a number (cells as text: every cell parses as one, or is "-")."""
    seen = False
    for value in values:
        if value == "-":  # no value (a ratio to 0, say)
            continue
        if isinstance(value, str):
            try:
                float(value.replace(",", ""))
            except ValueError:
                return False
        elif isinstance(value, bool) or not isinstance(value, numbers.Number):
            return False
        seen = True
    return seen


def _summarised(
    columns: list[str], rows: Sequence[Sequence[Any]], numeric: list[bool], wide: bool
) -> tuple[list[list[str]], str]:
    """The cells: every row, or (long tables, not `wide`) one mean row and one min-max row per
    run of rows of the same flow group; and a title note."""
    if wide or len(rows) <= MAX_ROWS:
        return [[fmt(v) for v in row] for row in rows], ""
    groups = _flow_groups(columns, rows, numeric)
    out: list[list[str]] = []
    for members in groups:
        part = [rows[i] for i in members]
        if len(members) == 1:
            out.append([fmt(v) for v in part[0]])
            continue
        mean, spread = [], []
        for i in range(len(columns)):
            values = [row[i] for row in part]
            if numeric[i]:
                low, high = fmt(min(values)), fmt(max(values))
                mean.append(fmt(sum(values) / len(values)))
                spread.append(low if low == high else f"{low}-{high}")
            else:
                mean.append(_group_label([str(v) for v in values]))
                spread.append(f"{len(members)} rows" if not spread else "")
        out += [mean, spread]
    if len(out) > 2 * MAX_ROWS:
        shown = [[fmt(v) for v in row] for row in rows[:MAX_ROWS]]
        return shown, f" (first {MAX_ROWS} of {len(rows)} rows; --wide for all)"
    return out, f" ({len(rows)} rows by flow group: mean, then min-max; --wide for all)"


def _flow_groups(columns: list[str], rows: Sequence[Sequence[Any]], numeric: list[bool]) -> list[list[int]]:
    """Runs of consecutive rows of one flow group (`count` flows named `name[i]`): their text
    cells agree once the `[i]` index is removed. Rows without an index stay alone, so a table
    of other rows (a sweep, say) is never averaged."""
    text = [i for i, c in enumerate(columns) if not numeric[i] and c not in IDENTIFIERS]
    keys = []
    for row in rows:
        values = [str(row[i]) for i in text]
        indexed = any(_INDEX.search(v) for v in values)
        keys.append(tuple(_INDEX.sub("", v) for v in values) if indexed else None)
    groups: list[list[int]] = []
    for i, key in enumerate(keys):
        if groups and key is not None and keys[groups[-1][-1]] == key:
            groups[-1].append(i)
        else:
            groups.append([i])
    return groups


def _group_label(values: list[str]) -> str:
    """A group's text or identifier cell: `tcp[0-30]` for indexed names, `1-31` for ids, else the common value."""
    first, last = values[0], values[-1]
    if first == last:
        return first
    a, b = _INDEX.search(first), _INDEX.search(last)
    if a and b:
        return f"{first[: a.start()]}[{a.group(1)}-{b.group(1)}]"
    return f"{first}-{last}"


def _visible(text: str) -> int:
    return len(_ANSI.sub("", text))


def _render(
    columns: list[str], cells: list[list[str]], numeric: list[bool], title: str, width_: int, note: str = ""
) -> list[str]:
    """The lines of a table: per column group its title (then `note`), header, rule and rows."""
    headers = [c.replace("_", " ") for c in columns]
    widths = [max(_visible(text) for text in [h, *(row[i] for row in cells)]) for i, h in enumerate(headers)]
    widths = _wrapped_widths(widths, numeric, [len(h) for h in headers], width_)
    groups = _column_groups(widths, width_)
    lines: list[str] = []
    for n, group in enumerate(groups):
        part = f" (columns {n + 1}/{len(groups)})" if len(groups) > 1 else ""
        lines += textwrap.wrap(f"{title}{part}{note}", width_)
        lines.append(_line([headers[i] for i in group], [widths[i] for i in group], [numeric[i] for i in group]))
        lines.append("  ".join("─" * widths[i] for i in group))
        for row in cells:
            lines += _row_lines([row[i] for i in group], [widths[i] for i in group], [numeric[i] for i in group])
        lines.append("")
    return lines


def _wrapped_widths(widths: list[int], numeric: list[bool], least: list[int], width_: int) -> list[int]:
    """Column widths that fit `width_` by wrapping long text columns (wider than a third of
    it), which share the room the others leave; never narrower than WRAP_MIN or their header."""
    gaps = GAP * (len(widths) - 1)
    limit = max(WRAP_MIN, width_ // WRAP_SHARE)
    long = sorted((i for i, w in enumerate(widths) if not numeric[i] and w > limit), key=lambda i: widths[i])
    if sum(widths) + gaps <= width_ or not long:
        return widths
    fitted = list(widths)
    room = width_ - gaps - sum(w for i, w in enumerate(widths) if i not in long)
    for k, i in enumerate(long):  # the narrowest first: what it leaves goes to the wider ones
        fitted[i] = max(min(widths[i], room // (len(long) - k)), WRAP_MIN, least[i])
        room -= fitted[i]
    return fitted


def _row_lines(cells: list[str], widths: list[int], numeric: list[bool]) -> list[str]:
    """One row, text cells wider than their column wrapped onto more lines."""
    wrapped = [[c] if _visible(c) <= w else textwrap.wrap(c, w) or [""] for c, w in zip(cells, widths, strict=True)]
    height = max(len(parts) for parts in wrapped)
    return [_line([parts[k] if k < len(parts) else "" for parts in wrapped], widths, numeric) for k in range(height)]


def _line(cells: list[str], widths: list[int], numeric: list[bool]) -> str:
    padded = []
    for text, w, right in zip(cells, widths, numeric, strict=True):
        space = " " * (w - _visible(text))
        padded.append(space + text if right else text + space)
    return (" " * GAP).join(padded).rstrip()


def _column_groups(widths: list[int], width_: int) -> list[list[int]]:
    """Consecutive columns that fit `width_`, each group led by column 0 (the key)."""
    groups: list[list[int]] = [[0]]
    used = widths[0]
    for i in range(1, len(widths)):
        if used + GAP + widths[i] > width_ and len(groups[-1]) > 1:
            groups.append([0])
            used = widths[0]
        groups[-1].append(i)
        used += GAP + widths[i]
    return groups


def rows_table(
    rows: Sequence[Any],
    title: str,
    reference: str = "paper",
    ratio: bool = False,
    notes: list[str] | None = None,
    ns2: Mapping[str, Any] | None = None,
    verdicts: Mapping[str, tuple[Any, str]] | None = None,
    not_in_ns2: Mapping[str, str] | None = None,
) -> list[str]:
    """Checked rows (`experiments.Row`) as a table: metric, the reference value (the paper's,
    or the model's for `validate`), with `ns2` (recorded ns-2 values by key; `not_in_ns2`, why
    ns-2 cannot measure a row, by key) ns-2's, ours, with
    `ratio` ours / reference (where the reference is not 0), tolerance, pass, with `verdicts`
    (by key) the verdict of each failing graded row, and with `notes` (one per row) a note column."""
    ns2, not_in_ns2 = ns2 or {}, not_in_ns2 or {}
    with_ns2 = bool(ns2) or bool(not_in_ns2)
    judged = {key: kind for key, (kind, _) in (verdicts or {}).items() if str(kind) != "paper"}
    columns = ["metric", reference, *(["ns-2"] if with_ns2 else []), "ours", *(["ratio"] if ratio else [])]
    columns += ["tolerance", "pass", *(["verdict"] if judged else [])]
    cells = []
    for index, row in enumerate(rows):
        line = [row.metric, fmt(row.paper)]
        if with_ns2:
            line.append(ns2[row.key].shown() if row.key in ns2 else not_in_ns2.get(row.key, ""))
        line.append(fmt(row.ours))
        if ratio:
            line.append(f"{row.ours / row.paper:.3f}" if row.paper else "-")
        mark = verdict(row.passed) if row.graded else f"info ({'pass' if row.passed else 'fail'})"
        line += [row.tolerance, mark, *([str(judged.get(row.key, ""))] if judged else [])]
        cells.append(line + ([notes[index]] if notes is not None else []))
    columns += ["note"] if notes is not None else []
    return table(columns, cells, title)
