"""The pages of a `characterize` folder: `index.html`, the summary (one row per mechanism, one
column per test: the figure of merit the test names), and `<section>.html` per test (what it
tests, one table of its cells, the delay–goodput ellipses, goodput and delay over time and, where
transfers ran, their completion times). Figures are PNG files beside the pages and embedded in
them; the same `characterize.json` gives the same bytes.

How to read the ellipse plot (RFC 7928 §2.7, drawn as the ns-3 AQM Evaluation Suite draws it):
each dot is one interval of K × min RTT (K = 10), at all flows' mean queueing delay (x) and
goodput (y) in it; the ellipse around a mechanism's dots is their 1-σ contour (covariance's
eigenvectors, semi-axes √λ). The delay axis runs from high to low, so better lies up and right.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from .. import outdir
from ..plots import subplots
from ..report.blocks import _e, _mark, _page, _png_file, _table
from . import merit_text

INDEX = "index.html"


def _page_name(section: str) -> str:
    return f"rfc7928-{section}.html"


def _mbps(bps: float | None) -> float | None:
    return None if bps is None else bps / 1e6


def write_pages(out: Path, doc: Mapping[str, Any], workers: int = 1) -> list[Path]:
    """Writes every test's page and figures (on `workers` local processes: drawing is most of a
    characterization's time) and the index; returns the pages (index first)."""
    from ..workers import run_tasks

    pages: dict[str, Path] = {}
    tasks = [(test["section"], (str(out), test, doc)) for test in doc["tests"]]
    # No error is expected: one raised in a worker is raised here.
    run_tasks(_write_test_page, tasks, lambda section, page, _: pages.__setitem__(section, page), workers, expected=())
    index = out / INDEX
    outdir.write_text(index, _index_page(doc))
    return [index, *(pages[test["section"]] for test in doc["tests"])]


def _write_test_page(out: str, test: Mapping[str, Any], doc: Mapping[str, Any]) -> Path:
    folder = Path(out)
    figures = _figures(folder, test, doc["mechanisms"])
    path = folder / _page_name(test["section"])
    outdir.write_text(path, _test_page(test, doc, figures))
    return path


def _index_page(doc: Mapping[str, Any]) -> str:
    tests = doc["tests"]
    # Sections only in the headers, so that the table fits the page; the list below names them.
    columns = ["mechanism", *(f"§{t['section']}" for t in tests)]
    rows = []
    for row in doc["summary"]:
        cells = [_e(_label(doc, row["mechanism"]))]
        cells += [_e(merit_text(row[t["section"]], t["merit"]["unit"])) for t in tests]
        rows.append(cells)
    merits = "".join(
        f'<li><a href="{_page_name(t["section"])}">§{_e(t["section"])} {_e(t["title"])}</a>: '
        f"{_e(t['merit']['label'])} ({_e(t['merit']['unit'])}, {_e(t['merit']['better'])} is better)</li>"
        for t in tests
    )
    mode = "quick mode (60 s per case)" if doc["quick"] else "full mode (300 s per case)"
    body = [
        f'<p class="muted">aqmlab {_e(doc["aqmlab"])}, {mode}; every number covers the measurement window '
        "from 10 s to the end, all flows unless a column says which.</p>",
        "<h2>Summary: each test's figure of merit</h2>",
        _table(columns, rows, raw=columns, sortable=True),
        f"<ul>{merits}</ul>",
    ]
    body += _ns3_section(doc)
    if doc["errors"]:
        body += ["<h2>Cells that did not run</h2>", _table(["cell", "error"], sorted(doc["errors"].items()))]
    return _page("RFC 7928 characterization", body)


def _ns3_section(doc: Mapping[str, Any]) -> list[str]:
    """The cells ns-3's AQM Evaluation Suite shares with ours: both runs' numbers, whether they
    agree within their seeds' spread, and why not where they do not (ns3.py)."""
    columns = [
        "test",
        "case",
        "mechanism",
        "goodput ours / ns-3 (Mbps)",
        "delay mean ours / ns-3 (ms)",
        "delay median ours / ns-3 (ms)",
        "agree",
        "wall s per run ours / ns-3",
        "why they differ",
    ]
    rows, graded, agreeing, source = [], 0, 0, ""
    for test in doc["tests"]:
        for case in test["cases"]:
            for mechanism, cell in case["cells"].items():
                ns3 = cell.get("ns3")
                if not ns3:
                    continue
                source = ns3["source"]
                theirs, ours = ns3["bql"], ns3.get("ours", {})

                def pair(metric: str, scale: float = 1.0, ours=ours, theirs=theirs) -> str:
                    mine = f"{ours[metric] / scale:.3g}" if metric in ours else "-"
                    return f"{mine} / {theirs[metric] / scale:.3g}"

                agree = ns3.get("agree", {})
                graded += len(agree)
                agreeing += sum(agree.values())
                marks = " ".join(
                    _mark("pass" if ok else "fail", name.split("_")[0 if name.startswith("goodput") else 1])
                    for name, ok in agree.items()
                ) or _mark("info", ns3.get("why_not", "not graded"))
                wall = (
                    f"{ours['wall_s']:.2f} / {theirs['wall_s']:.1f}"
                    if "wall_s" in ours
                    else f"- / {theirs['wall_s']:.1f}"
                )
                rows.append(
                    [
                        f"§{test['section']}",
                        case["label"],
                        _label(doc, mechanism),
                        pair("goodput_bps", 1e6),
                        pair("delay_mean_ms"),
                        pair("delay_median_ms"),
                        marks,
                        wall,
                        "; ".join(ns3.get("reasons", [])),
                    ]
                )
    if not rows:
        return []
    return [
        "<h2>Against the ns-3 AQM Evaluation Suite</h2>",
        f'<p class="muted">{_e(source)}, with byte queue limits so that the AQM holds the queue (its default run, '
        "where the device's own 100-packet FIFO holds it, is in characterize.json as <code>device_fifo</code>). "
        "Ours: the mean of 5 seeds; ns-3: of its seeds. They agree within twice the standard error of the "
        f"difference or the measurements' resolution (docs/characterize.md). {agreeing} of {graded} agree.</p>",
        _table(columns, rows, raw=("agree",), sortable=True),
    ]


def _label(doc: Mapping[str, Any], mechanism: str) -> str:
    return next((m["label"] for m in doc["mechanisms"] if m["name"] == mechanism), mechanism)


def _test_page(test: Mapping[str, Any], doc: Mapping[str, Any], figures: Sequence[Path]) -> str:
    columns = [
        "case",
        "mechanism",
        "goodput (Mbps)",
        "utilisation",
        "loss rate",
        "delay median (ms)",
        "delay p99 (ms)",
        "delay mean (ms)",
        "transfers done",
        "transfer time median (s)",
        "Jain index",
        "loss sync",
        "note",
    ]
    rows = []
    for case in test["cases"]:
        for mechanism, cell in case["cells"].items():
            if "error" in cell:
                rows.append([case["label"], _label(doc, mechanism), *["-"] * 10, cell["error"]])
                continue
            rows.append(
                [
                    case["label"],
                    _label(doc, mechanism),
                    _mbps(cell["goodput_bps"]),
                    cell["utilisation"],
                    cell["loss_rate"],
                    cell["delay_median_ms"],
                    cell["delay_p99_ms"],
                    cell["delay_mean_ms"],
                    cell["transfers_done"],
                    cell["fct_median_s"],
                    cell["jain_index"],
                    (cell["synchronisation"] or {}).get("rate"),
                    cell["note"],
                ]
            )
    groups = _group_table(test, doc)
    body = [
        f"<p>{_e(test['purpose'])}</p>",
        f"<p><b>Varies:</b> {_e(test['varies'])}. <b>Settings:</b> {_e(test['settings'])}. "
        f"<b>Figure of merit:</b> {_e(test['merit']['label'])} ({_e(test['merit']['unit'])}, "
        f"{_e(test['merit']['better'])} is better). {test['duration_s']:g} s per case, measured from 10 s.</p>",
        "<h2>All flows</h2>",
        _table(columns, rows, sortable=True),
        "<p class=\"muted\">Delay: each packet's sojourn in the bottleneck's queue. The median and p99 "
        "of all flows are shown where the case has one flow group; the mean is always over every packet. "
        "Loss sync: the mean fraction of the flows that lose a packet in each congestion event (RFC 7928 §2.6).</p>",
        "<h2>Figures</h2>",
        *(_png_file(path) for path in figures),
        "<h2>Per flow group</h2>",
        f"<details><summary>each flow group's goodput, loss, delay and transfers</summary>{groups}</details>",
        f'<p><a href="{INDEX}">back to the summary</a></p>',
    ]
    return _page(f"RFC 7928 §{test['section']}: {test['title']}", body)


def _group_table(test: Mapping[str, Any], doc: Mapping[str, Any]) -> str:
    columns = [
        "case",
        "mechanism",
        "group",
        "flows",
        "goodput (Mbps)",
        "loss rate",
        "delay median (ms)",
        "delay p99 (ms)",
        "jitter p99 - median (ms)",
        "transfers done",
    ]
    rows = []
    for case in test["cases"]:
        for mechanism, cell in case["cells"].items():
            for group, g in (cell.get("groups") or {}).items():
                rows.append(
                    [
                        case["label"],
                        _label(doc, mechanism),
                        group,
                        g["flows"],
                        _mbps(g["goodput_bps"]),
                        g["loss_rate"],
                        g["delay_median_ms"],
                        g["delay_p99_ms"],
                        g["jitter_ms"],
                        len(g["fct_s"]),
                    ]
                )
    return _table(columns, rows, sortable=True)


def _figures(out: Path, test: Mapping[str, Any], mechanisms: Sequence[Mapping[str, Any]]) -> list[Path]:
    """The test's figures, written beside the pages: the ellipses of each case, goodput and delay
    over time, and transfer times where transfers finished."""
    colours = {m["name"]: m["colour"] for m in mechanisms}
    labels = {m["name"]: m["label"] for m in mechanisms}
    section = test["section"]
    cases = test["cases"]
    written = []
    columns = min(len(cases), 3)
    rows = math.ceil(len(cases) / columns)
    fig, axes = subplots(rows, columns, figsize=(max(4.6 * columns, 8.0), 3.8 * rows + 0.4), squeeze=False)
    for ax, case in zip(axes.flat, cases, strict=False):
        for name, cell in case["cells"].items():
            series = cell.get("series")
            if not series:
                continue
            ax.scatter(series["delay_ms"], _scaled(series["goodput_bps"]), s=4, alpha=0.35, color=colours[name])
            if (e := cell.get("ellipse")) is not None:
                _draw_ellipse(ax, e, colours[name], labels[name])
        ax.invert_xaxis()
        ax.set_title(case["label"], fontsize=10)
        ax.set_xlabel("queueing delay, mean per interval (ms; reversed)")
        ax.set_ylabel("goodput (Mbps)")
        ax.legend(fontsize=7, loc="lower left")
    for ax in list(axes.flat)[len(cases) :]:
        ax.set_visible(False)
    fig.suptitle(f"§{section} {test['title']}: delay and goodput per interval of 10 min RTT, 1-σ ellipses", fontsize=11)
    fig.tight_layout()
    written.append(_save(fig, out / f"rfc7928-{section}-ellipses.png"))

    fig, (goodput, delay) = subplots(2, 1, figsize=(9, 6), sharex=True)
    case = cases[0]
    for name, cell in case["cells"].items():
        if series := cell.get("series"):
            goodput.plot(
                series["time_s"], _scaled(series["goodput_bps"]), color=colours[name], label=labels[name], lw=1
            )
            delay.plot(series["time_s"], series["delay_ms"], color=colours[name], lw=1)
    goodput.set_ylabel("goodput (Mbps)")
    goodput.legend(fontsize=7, loc="lower right")
    delay.set_ylabel("queueing delay (ms)")
    delay.set_xlabel("time (s)")
    fig.suptitle(f"§{section} {case['label']}: all flows over time")
    fig.tight_layout()
    written.append(_save(fig, out / f"rfc7928-{section}-time.png"))

    transfers = [
        (case["label"], name, [t for g in cell["groups"].values() for t in g["fct_s"]])
        for case in cases
        for name, cell in case["cells"].items()
        if cell.get("groups")
    ]
    transfers = [entry for entry in transfers if entry[2]]
    if transfers:
        fig, ax = subplots(figsize=(9, 3.8))
        for label, name, times in transfers:
            ordered = sorted(times)
            ax.step(
                ordered,
                [(i + 1) / len(ordered) for i in range(len(ordered))],
                where="post",
                color=colours[name],
                label=f"{labels[name]} ({label})" if len(cases) > 1 else labels[name],
            )
        ax.set_xscale("log")
        ax.set_xlabel("transfer completion time (s)")
        ax.set_ylabel("fraction of transfers")
        ax.legend(fontsize=7)
        ax.set_title(f"§{section} {test['title']}: transfer completion times", fontsize=10)
        fig.tight_layout()
        written.append(_save(fig, out / f"rfc7928-{section}-transfers.png"))
    return written


def _scaled(bps: Sequence[float]) -> list[float]:
    return [b / 1e6 for b in bps]


def _draw_ellipse(ax: Any, e: Mapping[str, Any], colour: str, label: str) -> None:
    from matplotlib.patches import Ellipse

    width, height = (2 * axis for axis in e["semi_axes"])
    ax.add_patch(
        Ellipse(
            (e["delay_ms"], e["goodput_mbps"]), width, height, angle=e["angle_deg"], fill=False, color=colour, lw=1.5
        )
    )
    ax.scatter([e["delay_ms"]], [e["goodput_mbps"]], color=colour, marker="x", s=40, label=label)


def _save(fig: Any, path: Path) -> Path:
    with outdir.replaced_file(path) as partial:
        fig.savefig(partial, dpi=100, metadata={"Software": None}, format="png")
    return path
