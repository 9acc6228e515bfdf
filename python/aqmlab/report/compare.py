"""The page of a comparison's folder (`aqmlab compare --out`): the table (what ran, with its
buffer), the figure, each mechanism's qdisc table and the scenario."""

from __future__ import annotations

from pathlib import Path

from .blocks import _e, _frame_table, _json_block, _page, _png_file, _read_json, _scenario_section
from .kind import PageKind


class ComparePage(PageKind):
    """`compare.json` (what ran), `compare.csv` and `compare.png` (`compare.save`)."""

    marker = "compare.json"
    command = "compare"

    def page(self, folder: Path) -> str:
        return compare_page(folder)


def compare_page(folder: Path) -> str:
    """The page of an `aqmlab compare --out` folder."""
    import pandas as pd

    about = _read_json(folder / "compare.json")
    table = pd.read_csv(folder / "compare.csv")
    shares = ", ".join(f"{group} {mbps:.3g} Mbps" for group, mbps in about["fair_share_mbps"].items())
    body = [
        f"<p>{len(table)} mechanisms on the bottleneck; max-min fair share of each flow group: {_e(shares)}</p>",
        "<h2>Mechanisms</h2>",
        _frame_table(table, "compare.csv"),
    ]
    if (folder / "compare.png").is_file():
        body += ["<h2>Figure</h2>", _png_file(folder / "compare.png")]
    body += ["<h2>What ran</h2>", _json_block(about["mechanisms"]), *_scenario_section(folder)]
    return _page(f"Compare: {about['name']}", body, f"aqmlab {about.get('aqmlab', '?')} · {folder.name}")
