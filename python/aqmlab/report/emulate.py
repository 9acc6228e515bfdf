"""The page of an emulated run's folder (`aqmlab emulate --out`): a run's page (`RunPage`) with
what the forwarder cost and what the kernel's TCPs saw, from its `emulation.json`."""

from __future__ import annotations

from pathlib import Path

from .. import outdir
from ..emulate import KERNEL_TCP_COLUMNS, KERNEL_TCP_TITLE, Figures, figures
from .blocks import _e, _read_json, _table
from .run import RunPage


class EmulatePage(RunPage):
    """A run whose links ran in real time between Linux endpoints: after the summary, the
    forwarder's figures and each TCP flow as its sender's kernel saw it when it stopped."""

    manifest_kinds = ("emulate",)
    marker = "emulation.json"
    command = "emulate"
    title = "Emulated run"
    clock = "emulated in real time"

    def sections(self, folder: Path) -> list[str]:
        return _emulation_sections(_emulation(folder / "emulation.json"))


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
