"""The pages of a suite's folder (`aqmlab reproduce --all --out`): each experiment's page, then
`index.html` (and `index.json`) with one row per experiment that ran (rows passing / total and a
link to its page) or failed to run, then the ids of those not run in this folder and of those not
reproduced yet, with why."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from .. import __version__, outdir
from .blocks import _e, _mark, _page, _read_json, _table
from .experiment import FAILING_VERDICTS, _row_counts, _verdict_counts, _verdict_summary, experiment_page, is_experiment
from .kind import PageKind

# The file a suite keeps its experiments' errors in (id → message).
ERRORS_FILE = "errors.json"


class SuitePage(PageKind):
    """A folder of experiment folders (no manifest of its own: each experiment has its own)."""

    command = "reproduce"

    @classmethod
    def recognises(cls, folder: Path) -> bool:
        return any(is_experiment(sub) for sub in _subfolders(folder))

    @classmethod
    def sign(cls) -> str:
        return "experiment folders"

    def write(self, folder: Path) -> list[Path]:
        return write_suite_pages(folder)


def _subfolders(folder: Path) -> list[Path]:
    return sorted(p for p in folder.iterdir() if p.is_dir())


def suite_entries(folder: Path) -> list[dict[str, Any]]:
    """One entry per registered experiment and per experiment not reproduced yet, by id:
    `status` passed, failed, error, not run or not reproduced; the rows' counts, the mode and
    wall time of one that ran; the reason of one that did not."""
    from ..experiments import not_reproduced_list, registry

    errors = _read_json(folder / ERRORS_FILE) if (folder / ERRORS_FILE).is_file() else {}
    entries = []
    for id, experiment in registry().items():
        entry: dict[str, Any] = {"id": id, "title": experiment.title}
        sub = folder / id
        damage = outdir.verify(sub) if (sub / outdir.MANIFEST).is_file() else None
        if damage is not None:
            entry |= {"status": "damaged", "reason": f"{damage}: aqmlab reproduce --all runs it again"}
        elif is_experiment(sub):
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
