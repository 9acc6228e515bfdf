"""The page of an experiment's folder (`aqmlab reproduce ID --out`, or one of a suite's): the
paper-vs-ours rows with their verdicts, the figure, the notes and the data tables."""

from __future__ import annotations

from pathlib import Path

from .blocks import _e, _frame_table, _page, _pass_mark, _png_file, _read_json, _table
from .kind import PageKind


class ExperimentPage(PageKind):
    """`rows.json` and `experiment.json` (`Reproduction.save`); in a suite's folder (an
    `index.json` beside it) the page links back to the suite's index."""

    manifest_kinds = ("experiment",)
    marker = "rows.json"
    command = "reproduce"

    def page(self, folder: Path) -> str:
        in_suite = (folder.parent / "index.json").is_file()
        return experiment_page(folder, index="../index.html" if in_suite else None)


def is_experiment(folder: Path) -> bool:
    return (folder / "rows.json").is_file() and (folder / "experiment.json").is_file()


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
