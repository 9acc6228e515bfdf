"""A characterize folder's pages (`aqmlab characterize --out DIR`): written again from its
`characterize.json` by `aqmlab.characterize.report`."""

from __future__ import annotations

from pathlib import Path

from .. import outdir
from .kind import PageKind


class CharacterizePage(PageKind):
    """`aqmlab report DIR` on a characterize folder: its index and one page per RFC 7928 test."""

    manifest_kinds = ("characterize",)
    marker = "characterize.json"
    command = "characterize"
    subpages = "test pages"

    def write(self, folder: Path) -> list[Path]:
        from ..characterize.report import write_pages

        return write_pages(folder, outdir.read_json(folder / self.marker, required=("tests", "summary")))
