"""HTML reports of output folders (`aqmlab report DIR`): one self-contained page each, its
figures embedded as PNG data, its tables and the scenario written out, pass/fail marked.

Each kind of output folder is one `PageKind` (kind.py), listed in `PAGE_KINDS`: the manifest's
`kind` that names its folders (outdir.py; `run`, `emulate`, `experiment`), else the file that
marks one, and its page(s):
- a run (`aqmlab run --out`, a sweep's job; run.py): `summary.json` → `report.html`;
- an emulated run (`aqmlab emulate --out`; emulate.py): a run's page and the forwarder's figures;
- an experiment (`aqmlab reproduce ID --out`; experiment.py): `rows.json` → `report.html`;
- a sweep (`aqmlab sweep --out`; sweep.py): `sweep.json` → `report.html`;
- a comparison (`aqmlab compare --out`; compare.py): `compare.json` → `report.html`;
- a suite (`aqmlab reproduce --all --out`; suite.py): experiment folders → each one's
  `report.html`, then `index.html` and `index.json`.

A new kind is one subclass of `PageKind` (where its folders' manifests name it, their files
mark it, and its `page`), added to `PAGE_KINDS`:

    class TracePage(PageKind):
        manifest_kinds = ("trace",)
        marker = "trace.json"
        command = "trace"

        def page(self, folder: Path) -> str:
            return _page("Trace", ["<p>...</p>"])

Pages are plain HTML built with `html.escape` (blocks.py); the same folder gives the same
bytes. Figures are embedded, so a page can be sent alone; each links to its PNG file beside the
page, for the full size. Every header carries its unit (`terminal.heading`: a column's unit
suffix, `_bps` shown in Mbps); a table wider than the page scrolls inside it; a click on a
header sorts the table (a few lines of inline script: no network).
"""

from __future__ import annotations

from pathlib import Path

from .. import outdir
from .compare import ComparePage
from .emulate import EmulatePage
from .experiment import ExperimentPage
from .kind import PageKind
from .run import RunPage
from .suite import SuitePage
from .sweep import SweepPage

# Every kind of page, in the order a folder whose manifest names no kind is matched by its files
# (an emulated run's folder holds a run's files too; a sweep's, its jobs' runs).
PAGE_KINDS: tuple[type[PageKind], ...] = (SweepPage, ComparePage, ExperimentPage, EmulatePage, RunPage, SuitePage)


def page_kind(folder: Path) -> type[PageKind]:
    """The kind of `folder`: the one its manifest's `kind` names, else the first whose files it
    holds; ValueError naming what was expected."""
    about = outdir.manifest_about(folder) if (folder / outdir.MANIFEST).is_file() else None
    named = [kind for kind in PAGE_KINDS if about and about.get("kind") in kind.manifest_kinds]
    if named:
        return named[0]
    marked = [kind for kind in PAGE_KINDS if kind.recognises(folder)]
    if marked:
        return marked[0]
    commands = list(dict.fromkeys(kind.command for kind in PAGE_KINDS))
    signs = [kind.sign() for kind in PAGE_KINDS]
    raise ValueError(
        f"{folder}: not an output folder of aqmlab {', '.join(commands[:-1])} or {commands[-1]} "
        f"(no {', '.join(signs[:-1])}, or {signs[-1]})"
    )


def write_report(folder: str | Path) -> list[Path]:
    """Writes the page(s) of an output folder; returns them (a suite: its index first)."""
    folder = Path(folder)
    if not folder.is_dir():
        raise ValueError(f"{folder}: no such folder")
    return page_kind(folder)().write(folder)


__all__ = ["PAGE_KINDS", "PageKind", "page_kind", "write_report"]
