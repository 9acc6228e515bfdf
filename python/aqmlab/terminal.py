"""Tables for the terminal, as plain text on stdout (results go to stdout, progress and
diagnostics to stderr). Pure Python: printing a table loads neither pandas nor rich, so a
command starts as fast with its table as with `--json` (issue 26).

A table wider than the terminal is fitted, never cut, and stays one table under one header
(issue 34): headers and long text cells wrap; long texts that recur are written `[n]` with a
legend below; a table of few rows and many columns is transposed; else each row is folded
under its first cell. Headers carry the unit of the column's name (`delay_p99_ms` ->
`delay p99 (ms)`). A long per-flow table is summarised by flow group (`tcp[0-30]`: mean,
then min-max) unless `wide`; the files written with `--out` always hold the whole table.
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
# A folded row's continuation lines: their indent, and how narrow a text column may wrap there.
INDENT = 2
FOLD_WRAP_MIN = 12
# Text cells longer than this that recur in a column are written `[n]` when the table is too wide,
# and so are headers and cells with a word longer than LONG_WORD, which cannot wrap (a user's
# mechanism named by its path, `/home/me/aqm/my_aqm.py:ExcessDrop`).
LEGEND_MIN = 20
LONG_WORD = 32
# Unit suffixes of column names (longest first, `_ms` before `_s`) and the unit a header shows.
UNIT_SUFFIXES = (
    ("_mbps", "Mbps"),
    ("_bps", "bit/s"),
    ("_ms", "ms"),
    ("_us", "µs"),
    ("_s", "s"),
    ("_bytes", "bytes"),
)
# Integer columns that name a row rather than measure it: shown as ranges, never averaged.
IDENTIFIERS = ("id", "flow")
_INDEX = re.compile(r"\[(\d+)\]$")
_ANSI = re.compile(r"\x1b\[[0-9;]*m")
_COLOURS = {"red": 31, "green": 32, "yellow": 33, "bold": 1}


def fmt(value: Any) -> str:
    """A cell, in the terminal and on the report's pages: yes/no, `-` for no value (None, NaN),
    large numbers with thousands separators, others to 4 significant digits."""
    if isinstance(value, bool):
        return "yes" if value else "no"
    if hasattr(value, "item"):  # a numpy scalar
        value = value.item()
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "-"
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


def heading(column: str) -> str:
    """A column's name as a header: words for its underscores, its unit suffix in parentheses
    (`delay_p99_ms` -> `delay p99 (ms)`, `tcp_mbps` -> `tcp (Mbps)`), so that a column the
    tables gain later (a flow group's, a counter's) shows its unit too. A dotted path (a
    sweep's grid axis, `utilisation.L->R`) is shown as it is written."""
    if "." in column:
        return column
    for suffix, unit in UNIT_SUFFIXES:
        if column.endswith(suffix) and len(column) > len(suffix):
            return f"{column.removesuffix(suffix).replace('_', ' ')} ({unit})"
    return column.replace("_", " ")


def _render(
    columns: list[str], cells: list[list[str]], numeric: list[bool], title: str, width_: int, note: str = ""
) -> list[str]:
    """The lines of a table no wider than `width_`, in the first layout that fits: a line per
    row (long text and headers wrapped); the same with long repeated cells replaced by `[n]`
    and a legend below; transposed (a column per row: a short table of many columns); or each
    row folded under its first cell (the others on indented lines)."""
    headers = [heading(c) for c in columns]
    lines = textwrap.wrap(f"{title}{note}", width_)
    flat = _line_widths(list(range(len(headers))), headers, cells, numeric, width_)
    if flat is not None:
        return lines + _flat_lines(headers, cells, numeric, flat) + [""]
    short_headers, shortened, legend = _legend(headers, cells, numeric)
    flat = _line_widths(list(range(len(headers))), short_headers, shortened, numeric, width_)
    if flat is not None:
        return lines + _flat_lines(short_headers, shortened, numeric, flat) + _legend_lines(legend, width_) + [""]
    t_headers, t_cells, t_numeric = _transposed(headers, cells, numeric)
    turned = _line_widths(list(range(len(t_headers))), t_headers, t_cells, t_numeric, width_)
    if turned is not None:
        return lines + _flat_lines(t_headers, t_cells, t_numeric, turned) + [""]
    return lines + _folded_lines(short_headers, shortened, numeric, width_) + _legend_lines(legend, width_) + [""]


def _cell_width(cells: list[list[str]], i: int) -> int:
    return max((_visible(row[i]) for row in cells), default=0)


def _line_widths(
    group: list[int],
    headers: list[str],
    cells: list[list[str]],
    numeric: list[bool],
    room: int,
    wrap_min: int | None = None,
) -> list[int] | None:
    """Widths of the columns `group` on one line of `room` characters, or None if they cannot fit.
    Headers wrap at their spaces first, then text columns wider than `wrap_min` wrap (default:
    wider than a third of the room, and WRAP_MIN), sharing what the others leave; no column is
    narrower than its longest word, nor a wrapped text column narrower than `wrap_min`."""
    natural = [max(_cell_width(cells, i), len(headers[i])) for i in group]
    gaps = GAP * (len(group) - 1)
    if sum(natural) + gaps <= room:
        return natural
    # Headers wrapped: each column as wide as its cells, or its header's longest word.
    least = [_longest_word([headers[i]]) for i in group]
    base = [max(_cell_width(cells, i), least[k]) for k, i in enumerate(group)]
    if sum(base) + gaps <= room:
        return _widened([headers[i] for i in group], base, natural, room - gaps)
    limit = wrap_min if wrap_min is not None else max(WRAP_MIN, room // WRAP_SHARE)
    long = sorted((k for k, i in enumerate(group) if not numeric[i] and base[k] > limit), key=lambda k: base[k])
    for k in long:
        least[k] = max(least[k], min(limit, base[k]), _longest_word(row[group[k]] for row in cells))
    fitted = list(base)
    left = room - gaps - sum(w for k, w in enumerate(base) if k not in long)
    for n, k in enumerate(long):  # the narrowest first: what it leaves goes to the wider ones
        fitted[k] = max(min(base[k], left // (len(long) - n)), least[k])
        left -= fitted[k]
    return fitted if sum(fitted) + gaps <= room else None


def _longest_word(texts: Iterable[str]) -> int:
    return max((_visible(word) for text in texts for word in text.split()), default=0)


def _widened(headers: list[str], widths: list[int], natural: list[int], room: int) -> list[int]:
    """`widths` given what `room` has left: the headers that need least first are unwrapped
    (widened to `natural`); one that cannot be is widened only as far as saves it a line."""
    widths = list(widths)
    spare = room - sum(widths)
    for k in sorted(range(len(widths)), key=lambda k: natural[k] - widths[k]):
        if natural[k] - widths[k] <= spare:
            spare -= natural[k] - widths[k]
            widths[k] = natural[k]
            continue
        fewest = min(range(widths[k], widths[k] + spare + 1), key=lambda w: (len(textwrap.wrap(headers[k], w)), w))
        spare -= fewest - widths[k]
        widths[k] = fewest
    return widths


def _header_lines(texts: list[str], widths: list[int], numeric: list[bool], indent: int = 0) -> list[str]:
    """Headers wrapped to their columns' widths, aligned at the bottom (on the rule)."""
    wrapped = [textwrap.wrap(text, w) or [""] for text, w in zip(texts, widths, strict=True)]
    height = max(len(parts) for parts in wrapped)
    padded = [[""] * (height - len(parts)) + parts for parts in wrapped]
    return [" " * indent + _line([p[k] for p in padded], widths, numeric) for k in range(height)]


def _flat_lines(headers: list[str], cells: list[list[str]], numeric: list[bool], widths: list[int]) -> list[str]:
    """Header, rule and a line per row (more where a cell wraps)."""
    lines = _header_lines(headers, widths, numeric)
    lines.append("  ".join("─" * w for w in widths))
    for row in cells:
        lines += _row_lines(row, widths, numeric)
    return lines


def _folded_lines(headers: list[str], cells: list[list[str]], numeric: list[bool], width_: int) -> list[str]:
    """Each row's first cell on a line of its own, its other cells on indented lines below,
    packed as the headers are, so that every row reads as one record under one header."""
    room = width_ - INDENT
    packs: list[list[int]] = []
    for i in range(1, len(headers)):
        # A column joins the line while the line fits.
        if packs and _line_widths([*packs[-1], i], headers, cells, numeric, room, FOLD_WRAP_MIN) is not None:
            packs[-1].append(i)
        else:
            packs.append([i])
    # A line of one column may still not fit (a number wider than the terminal): it overflows.
    sized = [
        _line_widths(pack, headers, cells, numeric, room, FOLD_WRAP_MIN) or [_cell_width(cells, i) for i in pack]
        for pack in packs
    ]
    lines = [headers[0]]
    for pack, w in zip(packs, sized, strict=True):
        lines += _header_lines([headers[i] for i in pack], w, [numeric[i] for i in pack], INDENT)
    lines.append("─" * max(_visible(line) for line in lines))
    for row in cells:
        lines += textwrap.wrap(row[0], width_) or [""]
        for pack, w in zip(packs, sized, strict=True):
            parts = _row_lines([row[i] for i in pack], w, [numeric[i] for i in pack])
            lines += [" " * INDENT + part for part in parts]
    return lines


def _transposed(
    headers: list[str], cells: list[list[str]], numeric: list[bool]
) -> tuple[list[str], list[list[str]], list[bool]]:
    """The table turned: a row per column (its header first), a column per row (headed by the
    row's first cell); right-aligned when most of the columns were numbers."""
    turned = [[headers[i], *(row[i] for row in cells)] for i in range(1, len(headers))]
    mostly_numbers = sum(numeric[1:]) * 2 > len(numeric) - 1
    return [headers[0], *(row[0] for row in cells)], turned, [False] + [mostly_numbers] * len(cells)


def _legend(
    headers: list[str], cells: list[list[str]], numeric: list[bool]
) -> tuple[list[str], list[list[str]], list[str]]:
    """`headers` and text `cells` with a word longer than LONG_WORD, and the cells longer than
    LEGEND_MIN that recur in a column, replaced by `[n]`; and the legend's texts (n - 1 in the list)."""
    counts: dict[tuple[int, str], int] = {}
    for row in cells:
        for i, text in enumerate(row):
            if not numeric[i] and _visible(text) > LEGEND_MIN:
                counts[i, text] = counts.get((i, text), 0) + 1
    legend: list[str] = []

    def mark(text: str) -> str:
        if text not in legend:
            legend.append(text)
        return f"[{legend.index(text) + 1}]"

    short_headers = [mark(text) if _longest_word([text]) > LONG_WORD else text for text in headers]

    def long(i: int, text: str) -> bool:
        return counts.get((i, text), 0) > 1 or (not numeric[i] and _longest_word([text]) > LONG_WORD)

    shortened = [[mark(text) if long(i, text) else text for i, text in enumerate(row)] for row in cells]
    return short_headers, shortened, legend


def _legend_lines(legend: list[str], width_: int) -> list[str]:
    lines = []
    for n, text in enumerate(legend, 1):
        mark = f"[{n}] "
        lines += textwrap.wrap(text, width_, initial_indent=mark, subsequent_indent=" " * len(mark))
    return lines


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
            quotient = row.ours / row.paper if row.paper else math.nan
            line.append(f"{quotient:.3f}" if math.isfinite(quotient) else "-")
        mark = verdict(row.passed) if row.graded else f"info ({'pass' if row.passed else 'fail'})"
        line += [row.tolerance, mark, *([str(judged.get(row.key, ""))] if judged else [])]
        cells.append(line + ([notes[index]] if notes is not None else []))
    columns += ["note"] if notes is not None else []
    return table(columns, cells, title)
