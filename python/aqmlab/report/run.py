"""The page of a run's folder (`RunPage`)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from .. import __version__
from ..results import MBPS, NAMED_IDS
from ..terminal import fmt
from .blocks import _e, _frame_table, _page, _pass_mark, _png_file, _read_json, _read_table, _scenario_section, _table
from .kind import PageKind


class RunPage(PageKind):
    """`aqmlab run --out`'s folder, and a sweep's job's: the summary, the figures, the flows, the
    links (those monitored or dropping first, the others folded), the drops, the flows a qdisc
    measured, the packet captures, and the scenario as the user wrote it (`scenario.toml`; else
    `scenario.json`)."""

    manifest_kinds = ("run", "sweep job")
    marker = "summary.json"
    command = "run"
    # The page's title, and the summary's words for the clock the run ran on.
    title = "Run"
    clock = "simulated"

    def page(self, folder: Path) -> str:
        summary = _read_json(folder / "summary.json")
        name = summary.get("name") or folder.name
        own = self.sections(folder)
        conserved = summary["packets_sent"] == (
            summary["packets_delivered"] + summary["packets_dropped"] + summary["packets_in_flight"]
        )
        facts = [
            ("seed", _e(summary["seed"])),
            (self.clock, _e(f"{summary['duration']:g} s, measured from {summary['warmup']:g} s")),
            ("events", _e(f"{summary['events']:,}")),
            ("packets sent", _e(f"{summary['packets_sent']:,}")),
            ("delivered / dropped / in flight at the end", _e(_delivery(summary))),
            ("packets conserved (sent = delivered + dropped + in flight)", _pass_mark(conserved)),
            ("Jain index (goodput / fair share)", _e(fmt(summary["jain_index"]))),
            *((f"utilisation {link}", _e(f"{u:.1%}")) for link, u in summary["utilisation"].items()),
            ("drops by reason", _e(", ".join(f"{r} {n}" for r, n in summary["drops_by_reason"].items()) or "none")),
        ]
        body = ["<h2>Summary</h2>", _table(["", "value"], facts, raw=("value",)), *own]
        figures = sorted(
            folder.glob("*.png"), key=lambda p: (RUN_FIGURES.index(p.name) if p.name in RUN_FIGURES else 99, p.name)
        )
        if figures:
            body.append("<h2>Figures</h2>")
            body += [_png_file(p) for p in figures]
        flows = _read_table(folder, "flows")
        if flows is not None:
            body += ["<h2>Flows</h2>", _frame_table(_flow_columns(flows), "flows")]
        links = _read_table(folder, "links")
        if links is not None:
            body += _link_sections(links, set(summary["utilisation"]))
        drops = _read_table(folder, "drops")
        if drops is not None and not drops.empty:
            named = _named(drops).rename(columns=DROP_COLUMNS)
            body += ["<h2>Drops by flow, link and reason</h2>", _frame_table(named, "drops")]
        monitored = _read_table(folder, "qdisc_flows")
        if monitored is not None and not monitored.empty:
            body += [
                "<h2>Flows a queue discipline measured (qdisc_flows)</h2>",
                '<p class="muted">per-flow state a qdisc keeps beside its decision (e.g. SRED\'s candidates, '
                "RED-PD's monitored flows), counted from the warm-up</p>",
                _frame_table(_named(monitored), "qdisc_flows"),
            ]
        captures = sorted(folder.glob("*.pcap"))
        if captures:
            body.append("<h2>Packet captures</h2>")
            body.append(_table(["file", "bytes"], [[p.name, p.stat().st_size] for p in captures]))
            body.append(
                f'<p class="muted">Open with Wireshark, or e.g. <code>tshark -r {_e(captures[0].name)}</code>.</p>'
            )
        body += _scenario_section(folder)
        return _page(f"{self.title}: {name}", body, f"aqmlab {__version__} · {folder.name}")

    def sections(self, folder: Path) -> list[str]:
        """The sections of this kind's own, after the summary (a simulated run has none)."""
        return []


# A run's figures in the order a reader takes them: who got what, over time, and the queues.
RUN_FIGURES = ("throughput.png", "goodput.png", "queue.png")
# The drops table's columns as headers say them.
DROP_COLUMNS = {"count": "packets (whole run)", "window_count": "packets (measurement window)"}


def _link_sections(links: Any, monitored: set[str]) -> list[str]:
    """The links that carried packets: those monitored or dropping in a table, the others (a
    dumbbell's idle access links, the reverse path) folded below it with a one-line summary."""
    used = links[(links["packets_sent"] > 0) | (links["drops"] > 0)]
    shown = used["name"].isin(monitored) | (used["drops"] > 0)
    main, others = used[shown], used[~shown]
    body = ["<h2>Links</h2>"]
    if not main.empty:
        body += ['<p class="muted">monitored, or dropping packets</p>', _frame_table(_link_columns(main), "links")]
    if not others.empty:
        busiest = others["utilisation"].max()
        summary = f"{len(others)} other links carried packets without a drop (utilisation at most {busiest:.1%})" + (
            f"; {len(links) - len(used)} carried none" if len(links) > len(used) else ""
        )
        body.append(
            f"<details><summary>{_e(summary)}</summary>\n{_frame_table(_link_columns(others), 'links')}\n</details>"
        )
    return body


def _link_columns(links: Any) -> Any:
    """The links table in the page's units (Mbps, ms, %), with the qdisc counters that have a value."""
    shown = links[["id", "name", "qdisc"]].copy()
    shown["rate (Mbps)"] = links["rate_bps"] / MBPS
    shown["delay (ms)"] = links["delay"] * 1e3
    shown["utilisation (%)"] = links["utilisation"] * 100
    shown["packets sent"] = links["packets_sent"]
    shown["drops (packets)"] = links["drops"]
    counters = [c for c in links.columns if c.startswith("qdisc.") and links[c].notna().any()]
    return shown.join(links[counters])


def _named(frame: Any) -> Any:
    """`frame` with its `flow` and `link` ids replaced by the names saved beside them (`flow_name`,
    `link_name`; a folder written before they were keeps its ids)."""
    named = frame.copy()
    for column in NAMED_IDS:
        if f"{column}_name" in named:
            named[column] = named.pop(f"{column}_name")
    return named


def _delivery(summary: dict) -> str:
    return f"{summary['packets_delivered']:,} / {summary['packets_dropped']:,} / {summary['packets_in_flight']:,}"


def _flow_columns(flows: Any) -> Any:
    """The flows table in the CLI's units: Mbps, ms, packets."""
    shown = flows[["id", "name", "type", "src", "dst"]].copy()
    shown["goodput (Mbps)"] = flows["goodput_bps"] / MBPS
    shown["fair share (Mbps)"] = flows["fair_share_bps"] / MBPS
    shown["goodput / fair share"] = flows["normalised_goodput"]
    shown["sent (packets)"] = flows["sent_packets"]
    shown["dropped (packets)"] = flows["dropped_packets"]
    shown["loss rate (window)"] = flows["loss_rate"]
    shown["mean delay (ms)"] = flows["mean_delay"] * 1e3
    shown["retransmitted (packets)"] = flows["retransmitted_packets"]
    shown["timeouts"] = flows["timeouts"]
    return shown
