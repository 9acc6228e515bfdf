"""One scenario under several queue disciplines on its bottleneck: the demo, generalised.

`compare(scenario, ["red", "csfq", "fq_codel"])` runs the scenario once per mechanism and
returns one row per mechanism: what ran (the qdisc type and its buffer), goodput of each
flow group (the flows of one `[[flows]]` entry summed), Jain's index of goodput / fair
share, the bottleneck's utilisation, the drop rate over the measurement window, each
group's median and 99th-percentile queueing delay at the bottleneck (per packet: from its
arrival at the queue to the start of its transmission; `Results.queue_delay_groups`), and
the backlog's (the queue's bytes over the link's rate, sampled: what a packet arriving then
would wait behind a FIFO, not what any packet waits under a scheduler). A
mechanism is `scenario` (the bottleneck's qdisc as the scenario sets it, unchanged), a
preset name (`presets()`: the CSFQ paper's configurations on its 64 KB buffer, then
aqmlab's other mechanisms on the same buffer) or any qdisc `type` with its own defaults.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pandas as pd

from ._core import ScenarioError, __version__
from .mechanisms import PRESETS, SCENARIO
from .results import MBPS, Results
from .scenario import Scenario

if TYPE_CHECKING:
    from matplotlib.figure import Figure

NAN = float("nan")
# The mechanism that keeps the scenario's own bottleneck qdisc.
AS_WRITTEN = SCENARIO.name


def presets() -> dict[str, dict[str, Any]]:
    """Named qdisc tables: CSFQ §3's mechanisms, then aqmlab's others on the same 64 KB buffer
    (`mechanisms.MECHANISMS`)."""
    return dict(PRESETS)


def mechanisms(names: Sequence[str]) -> dict[str, dict[str, Any]]:
    """The qdisc table of each name: a preset, a qdisc type with its defaults, or a queue
    discipline written in Python (`"my_aqm.py:ExcessDrop"`, `"package.module:Class"`;
    `aqmlab.python_qdisc`); `["all"]` gives every preset."""
    from . import python_qdisc

    known = presets()
    if list(names) == ["all"]:
        return known
    return {
        name: python_qdisc.table(name) if python_qdisc.is_spec(name) else known.get(name, {"type": name})
        for name in names
    }


def buffer_size(qdisc: Mapping[str, Any]) -> str:
    """The buffer a qdisc table sets (its byte and packet limits; RED-PD's in its `red`
    table), or "default" when it sets none: the qdisc's own, docs/scenario.md."""
    table = {**qdisc.get("red", {}), **qdisc}
    parts = [
        f"{table[key]:,} B" if isinstance(table[key], int) else str(table[key])
        for key in ("limit_bytes", "memory_limit")
        if key in table
    ]
    if "limit" in table:
        # A Linux RED's `limit` is a size with its unit (tc's bytes); elsewhere it counts packets.
        limit = table["limit"]
        parts.append(f"{limit} packets" if isinstance(limit, int) else str(limit))
    return " / ".join(parts) or "default"


def compare(
    scenario: Scenario,
    names: Sequence[str],
    link: str | None = None,
    emulated: bool = False,
    note: Callable[[str], None] | None = None,
    progress: Callable[[float, float, str], None] | None = None,
) -> tuple[pd.DataFrame, dict[str, Results]]:
    """Runs `scenario` with each mechanism of `names` on `link` (see `Scenario.with_qdisc`;
    None: the bottleneck) and returns the table (one row per mechanism) and the runs.
    `["all"]` is `scenario` then every preset. With `emulated`, each mechanism runs in real
    time between real Linux endpoints (`aqmlab.emulate.emulate`: root; its OSError and
    KeyboardInterrupt pass through) and the table gains the forwarder's time added per pass;
    `note(text)` gets what the emulation takes differently, once, and `progress(done, total,
    label)` each emulation's seconds."""
    from . import run

    names = [AS_WRITTEN, *presets()] if list(names) == ["all"] else list(names)
    tables, variants = {}, {}
    for name in names:
        try:
            if name == AS_WRITTEN:
                tables[name], variants[name] = scenario.qdisc(link), scenario.monitoring(link).validate()
            else:
                tables[name] = mechanisms([name])[name]
                # The link is monitored, so that its packets' queueing delay is kept.
                variants[name] = scenario.with_qdisc(tables[name], link=link).monitoring(link).validate()
        except ScenarioError as e:
            raise ScenarioError(f"mechanism {name!r}: {e}") from None
    if not emulated:
        runs = {name: run(variant) for name, variant in variants.items()}
        return pd.DataFrame([_row(name, tables[name], results, link) for name, results in runs.items()]), runs
    from .emulate import emulate

    told: set[str] = set()

    def once(text: str) -> None:
        # Every mechanism's emulation says the same of the scenario's flows: say it once.
        if note is not None and text not in told:
            told.add(text)
            note(text)

    runs, rows = {}, []
    for name, variant in variants.items():
        done = emulate(variant, progress=progress and _labelled(progress, f"{name} (emulated)"), note=once)
        runs[name] = done.results
        rows.append(_row(name, tables[name], done.results, link) | {"added_mean_us": done.stats["added_mean_us"]})
    return pd.DataFrame(rows), runs


def _labelled(progress: Callable[[float, float, str], None], label: str) -> Callable[[float, float, str], None]:
    return lambda done, total, _: progress(done, total, label)


def flow_groups(results: Results) -> pd.Series:
    """Each flow's group, as the core names it: its `[[flows]]` entry's name (the flows of a
    `count` share it), or its own."""
    return results.flows["group"]


def fair_shares(results: Results) -> dict[str, float]:
    """Each flow group's max-min fair share (Mbps, its flows' shares summed): the same under every mechanism."""
    shares = results.flows.groupby(flow_groups(results), sort=False)["fair_share_bps"].sum() / MBPS
    return {str(group): float(mbps) for group, mbps in shares.items()}


def _row(name: str, qdisc: Mapping[str, Any], results: Results, link: str | None = None) -> dict[str, Any]:
    """One mechanism's row; its link figures are `link`'s (None: the busiest link's)."""
    flows = results.flows
    row: dict[str, Any] = {"mechanism": name, "qdisc": qdisc.get("type", "droptail"), "buffer": buffer_size(qdisc)}
    groups = flows.groupby(flow_groups(results), sort=False)["goodput_bps"].sum()
    row.update({f"{group}_mbps": bps / MBPS for group, bps in groups.items()})
    bottleneck = results.links.loc[results.links["utilisation"].idxmax()] if link is None else results.link(link)
    sent = flows["window_sent_packets"].sum()
    row.update(
        {
            "jain_index": results.summary(wall_time=False)["jain_index"],
            "utilisation": bottleneck["utilisation"],
            "drop_rate": flows["window_dropped_packets"].sum() / sent if sent else 0.0,
        }
    )
    delays = results.queue_delay_groups
    delays = delays[delays["link"] == bottleneck["id"]].set_index("group")
    for group in groups.index:
        # A group none of whose packets crossed the bottleneck in the window has no delay there.
        median, p99 = (delays.loc[group, ["median", "p99"]] * 1000) if group in delays.index else (NAN, NAN)
        row.update({f"{group}_delay_median_ms": median, f"{group}_delay_p99_ms": p99})
    queue = results.queue[(results.queue["link"] == bottleneck["id"]) & (results.queue["time"] >= results.warmup)]
    backlog_ms = queue["bytes"] * 8 / bottleneck["rate_bps"] * 1000
    row.update(
        {
            "backlog_delay_median_ms": backlog_ms.median() if len(backlog_ms) else 0.0,
            "backlog_delay_p99_ms": backlog_ms.quantile(0.99) if len(backlog_ms) else 0.0,
        }
    )
    return row


def save(
    table: pd.DataFrame, runs: Mapping[str, Results], scenario: Scenario, out_dir: str | Path, link: str | None = None
) -> list[Path]:
    """Of `compare(scenario, ..., link)`: writes `compare.csv` (the table), `compare.png`
    (`compare_figure`), `compare.json` (what ran: each mechanism's qdisc table, the flow
    groups' fair shares) and the scenario (`Scenario.save`): what `aqmlab report` makes a page of."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    fair = fair_shares(next(iter(runs.values())))
    name = scenario.get_or("name") or (scenario.source.stem if scenario.source else "scenario")
    table.to_csv(out / "compare.csv", index=False)
    figure = compare_figure(table, fair, title=name)
    figure.savefig(out / "compare.png", dpi=110, metadata={"Software": None})
    about = {
        "aqmlab": __version__,
        "name": name,
        "mechanisms": {m: scenario.qdisc(link) if m == AS_WRITTEN else mechanisms([m])[m] for m in runs},
        "fair_share_mbps": fair,
    }
    (out / "compare.json").write_text(json.dumps(about, indent=2) + "\n")
    return [out / "compare.csv", out / "compare.png", out / "compare.json", *scenario.save(out)]


def compare_figure(table: pd.DataFrame, fair_mbps: Mapping[str, float], title: str = "") -> Figure:
    """A row per flow group: its goodput under each mechanism, with the group's max-min fair
    share dashed across, and its packets' queueing delay at the bottleneck (bar: 99th
    percentile, black: median; one scale for all groups). Each mechanism has its colour in every figure
    (`plots.mechanism_colour`)."""
    from .mechanisms import describe
    from .plots import mechanism_colour, subplots
    from .python_qdisc import is_spec

    groups = [c.removesuffix("_mbps") for c in table.columns if c.endswith("_mbps")]
    names = table["mechanism"].tolist()
    colours = [mechanism_colour(name) for name in names]
    # A mechanism of the user's (`my_aqm.py:ExcessDrop`) is labelled by its class.
    ticks = [describe(name).label if is_spec(name) else name for name in names]
    x = list(range(len(names)))
    width = max(4.5, 0.36 * len(names) + 1.2)
    fig, axes = subplots(len(groups), 2, figsize=(width * 2, 3.3 * len(groups)), squeeze=False)
    for (goodput, delay), group in zip(axes, groups, strict=True):
        goodput.bar(x, table[f"{group}_mbps"], color=colours)
        heading = f"{group}: goodput"
        if group in fair_mbps:
            goodput.axhline(fair_mbps[group], color="black", linestyle="--", linewidth=1)
            heading += f" (dashed: fair share {fair_mbps[group]:.3g} Mbps)"
        goodput.set_title(heading, fontsize=10)
        goodput.set_ylabel("Mbps")
        delay.bar(x, table[f"{group}_delay_p99_ms"], color=colours, alpha=0.5)
        delay.scatter(x, table[f"{group}_delay_median_ms"], color="black", marker="_", s=150, zorder=3)
        delay.set_title(f"{group}: queueing delay per packet (bar: p99, black: median)", fontsize=10)
        delay.set_ylabel("ms")
        for ax in (goodput, delay):
            ax.set_xticks(x, ticks, rotation=60, ha="right", fontsize=8)
    # One delay scale for every group, so that the groups' waits compare across rows.
    top = table[[f"{group}_delay_p99_ms" for group in groups]].max().max()
    if top > 0:
        for delay in axes[:, 1]:
            delay.set_ylim(0, top * 1.05)
    fig.suptitle(title or "mechanisms compared")
    fig.tight_layout()
    return fig
