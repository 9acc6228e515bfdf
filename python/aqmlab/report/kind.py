"""A kind of output folder and its page(s): `PageKind`, one subclass per kind (`report/__init__.py`
lists them)."""

from __future__ import annotations

from pathlib import Path
from typing import ClassVar

from .. import outdir


class PageKind:
    """One kind of output folder: how `aqmlab report` recognises it and what it writes of it.

    A folder is this kind's when its manifest's `kind` (outdir.py: what the command that wrote it
    says it holds) is one of `manifest_kinds`; a folder without one (a command that writes no
    manifest, `Results.save`, or one written before manifests) when it holds `marker`
    (`recognises`). `page(folder)` is the page's HTML; `write` checks the folder against its
    manifest and writes it as `report.html`."""

    # The manifest's `kind` values of this kind's folders.
    manifest_kinds: ClassVar[tuple[str, ...]] = ()
    # The file that marks this kind's folder where no manifest names its kind.
    marker: ClassVar[str] = ""
    # The aqmlab command that writes such folders, for the error naming what a folder is not.
    command: ClassVar[str] = ""

    @classmethod
    def recognises(cls, folder: Path) -> bool:
        """Whether `folder`, whose manifest names no kind, is this kind's (it holds `marker`)."""
        return bool(cls.marker) and (folder / cls.marker).is_file()

    @classmethod
    def sign(cls) -> str:
        """What marks this kind's folder, as the error naming what a folder is not says it."""
        return cls.marker

    def write(self, folder: Path) -> list[Path]:
        """Writes the folder's page; returns the pages written. Refuses damaged results (a folder
        whose files differ from its manifest's list)."""
        damage = outdir.verify(folder) if (folder / outdir.MANIFEST).is_file() else None
        if damage is not None:
            raise ValueError(f"{folder}: {damage}; the results are damaged, run them again")
        path = folder / "report.html"
        outdir.write_text(path, self.page(folder))
        return [path]

    def page(self, folder: Path) -> str:
        raise NotImplementedError
