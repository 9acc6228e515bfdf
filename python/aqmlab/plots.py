"""Figures of a run: per-flow goodput against fair share, goodput and queue length over time,
and a TCP flow's traced window against a model (`Results.plot_*` draws them). Every figure of
aqmlab is made by `new_figure` / `subplots`, which leave matplotlib's global state alone."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .mechanisms import describe
from .results import MBPS, Results

if TYPE_CHECKING:
    from matplotlib.figure import Figure


def mechanism_colour(name: str) -> str:
    """The colour of a mechanism in every figure (issue 26): its descriptor's (`mechanisms.describe`:
    `fred` is drawn as `fred-1`, a user's class by its name)."""
    return describe(name).colour


def new_figure(**kwargs: Any) -> Figure:
    """A matplotlib Figure that no backend holds: making, drawing and saving it changes nothing
    global, neither the caller's backend (a notebook keeps its inline plots, issue 34) nor
    pyplot's list of figures, so none is left open. `savefig` writes it with the canvas of the
    file's format (Agg for PNG); as a notebook cell's value it shows as its PNG. `kwargs` as
    Figure's (`figsize=(8, 4)`). matplotlib is imported on first use (it is slow to import)."""
    from ._figure import Figure

    return Figure(**kwargs)


def subplots(nrows: int = 1, ncols: int = 1, *, figsize: tuple[float, float] | None = None, **kwargs: Any) -> Any:
    """A `new_figure` and its axes, as `pyplot.subplots(nrows, ncols, figsize=, sharex=, squeeze=, ...)`
    gives them: `fig, ax = subplots(figsize=(6, 4))`."""
    fig = new_figure(figsize=figsize)
    return fig, fig.subplots(nrows, ncols, **kwargs)


# More runs than this are drawn as small multiples, one panel per run.
GROUPED_RUNS = 3
# Small multiples: panels per row, and how far above the largest fair share the shared axis goes.
PANEL_COLUMNS = 5
ZOOM_SHARES = 3
# Up to this many flows each has its bar and its name on the axis; more are drawn as one
# profile on a figure of fixed width (a bar and a label per flow made 3500 flows a 100 000-pixel
# wide image that took a minute to draw).
LABELLED_FLOWS = 64


def throughput_figure(results_by_label: Mapping[str, Results] | Results, title: str = "") -> Figure:
    """Per-flow goodput against each flow's max-min fair share (black ticks). Up to
    GROUPED_RUNS runs: one group of bars per flow, a bar per run (and, when some flow takes
    far more than the largest fair share, a second panel zoomed on 0 to 3x that share). More
    runs: small multiples, a panel per run on one shared axis up to ZOOM_SHARES x the largest
    fair share, a bar above it cut there and labelled with its value. Runs labelled by
    mechanism take its colour (`mechanism_colour`)."""
    runs = {"": results_by_label} if isinstance(results_by_label, Results) else dict(results_by_label)
    if len(runs) > GROUPED_RUNS:
        return _small_multiples(runs, title)
    first = next(iter(runs.values())).flows
    n_flows = len(first)
    fair = first["fair_share_bps"] / MBPS
    top = max((r.flows["goodput_bps"].max() / MBPS for r in runs.values()), default=0.0)
    zoom = n_flows > 1 and top > 4 * fair.max() > 0
    many = n_flows > LABELLED_FLOWS
    width = 10.0 if many else max(6.0, 0.28 * n_flows * max(1, len(runs) / 2) + 2)
    fig, axes = subplots(2 if zoom else 1, 1, figsize=(width, 7 if zoom else 4), sharex=True, squeeze=False)
    for ax in axes[:, 0]:
        _goodput_bars(ax, runs, fair)
    axes[0, 0].set_title(title or "Per-flow goodput over the measurement window")
    # "best" searches every point for room: fine for bars, slow for a profile of thousands of flows.
    axes[0, 0].legend(fontsize=8, loc="upper right" if many else "best")
    if zoom:
        axes[1, 0].set_ylim(0, ZOOM_SHARES * fair.max())
        axes[1, 0].set_title(f"zoom: 0 to {ZOOM_SHARES}x the largest fair share", fontsize=9)
    bottom = axes[-1, 0]
    if many:
        bottom.set_xlabel("flow (id)")
    else:
        bottom.set_xticks(range(n_flows))
        bottom.set_xticklabels(first["name"], rotation=90 if n_flows > 8 else 0, fontsize=7 if n_flows > 16 else 9)
        bottom.set_xlabel("flow")
    fig.tight_layout()
    return fig


def _small_multiples(runs: Mapping[str, Results], title: str) -> Figure:
    first = next(iter(runs.values())).flows
    fair = (first["fair_share_bps"] / MBPS).to_numpy()
    flows = range(len(first))
    top = max(r.flows["goodput_bps"].max() / MBPS for r in runs.values())
    limit = min(top, ZOOM_SHARES * fair.max()) * 1.15 if fair.max() > 0 else top * 1.15
    columns = min(PANEL_COLUMNS, len(runs))
    rows = -(-len(runs) // columns)
    fig, axes = subplots(
        rows, columns, figsize=(2.9 * columns, 2.3 * rows + 0.6), sharex=True, sharey=True, squeeze=False
    )
    for ax, (label, results) in zip(axes.flat, runs.items(), strict=False):
        goodput = (results.flows["goodput_bps"] / MBPS).to_numpy()
        ax.bar(flows, goodput.clip(max=limit), width=0.8, color=mechanism_colour(label))
        ax.hlines(fair, [f - 0.45 for f in flows], [f + 0.45 for f in flows], colors="black", linewidth=1.2)
        for flow, value in enumerate(goodput):
            if value > limit:
                ax.annotate(
                    f"{value:.3g}",
                    (flow, limit),
                    xytext=(3, -2),
                    textcoords="offset points",
                    ha="left",
                    va="top",
                    fontsize=8,
                )
        jain = results.summary(wall_time=False)["jain_index"]
        ax.set_title(f"{label}  (Jain {jain:.2f})", fontsize=10)
        ax.set_ylim(0, limit)
    for ax in axes.flat[len(runs) :]:
        ax.set_visible(False)
    for ax in axes[:, 0]:
        ax.set_ylabel("Mbps")
    for ax in axes[-1, :]:
        ax.set_xlabel("flow")
    heading = title or "Per-flow goodput over the measurement window"
    fig.suptitle(f"{heading}\nbars: goodput per flow; black: its max-min fair share; cut bars labelled", fontsize=11)
    fig.tight_layout()
    return fig


def _goodput_bars(ax: Any, runs: Mapping[str, Results], fair: Any) -> None:
    n_flows, n_runs = len(fair), len(runs)
    if n_flows > LABELLED_FLOWS:
        for label, results in runs.items():
            colour = mechanism_colour(label) if label else None
            ax.plot(
                range(n_flows), results.flows["goodput_bps"] / MBPS, ".", ms=2, label=label or "goodput", color=colour
            )
        ax.step(range(n_flows), fair, where="mid", color="black", linewidth=1.2, label="fair share")
        ax.set_ylabel("goodput (Mbps)")
        return
    width = 0.8 / n_runs
    for i, (label, results) in enumerate(runs.items()):
        x = [f + (i - (n_runs - 1) / 2) * width for f in range(n_flows)]
        colour = mechanism_colour(label) if label else None
        ax.bar(x, results.flows["goodput_bps"] / MBPS, width=width, label=label or None, color=colour)
    ax.hlines(
        fair,
        [f - 0.45 for f in range(n_flows)],
        [f + 0.45 for f in range(n_flows)],
        colors="black",
        linewidth=1.5,
        label="fair share",
    )
    ax.set_ylabel("goodput (Mbps)")


def queue_figure(results: Results, title: str = "") -> Figure | None:
    """Queue length over time for each monitored link: instantaneous (packets) and the
    qdisc's average (RED's avg) where it has one, and SRED's P(t) on a right-hand axis.
    None if nothing was sampled."""
    queue = results.queue
    if queue.empty:
        return None
    links = results.links.set_index("id")
    link_ids = list(dict.fromkeys(queue["link"]))
    fig, axes = subplots(len(link_ids), 1, figsize=(8, 2.8 * len(link_ids)), sharex=True, squeeze=False)
    for ax, link in zip(axes[:, 0], link_ids, strict=True):
        samples = queue[queue["link"] == link]
        name = links.loc[link, "name"]
        qdisc = _qdisc_table(results, name)
        # SRED's drop bands (eq. 4.3) are in bytes.
        unit = "bytes" if qdisc.get("bytes") or qdisc.get("type") == "sred" else "packets"
        ax.plot(samples["time"], samples[unit], linewidth=0.8, label=f"instantaneous ({unit})")
        if samples["average"].notna().any():
            ax.plot(samples["time"], samples["average"], linewidth=1.2, label=f"average ({unit})")
        if "hit_frequency" in samples and samples["hit_frequency"].notna().any():
            right = ax.twinx()
            right.plot(samples["time"], samples["hit_frequency"], color="tab:red", linewidth=0.8, label="P(t)")
            right.set_ylabel("SRED hit frequency P(t)")
            right.legend(fontsize=8, loc="upper left")
        for threshold in ("min_th", "max_th"):
            if isinstance(qdisc.get(threshold), (int, float)):
                ax.axhline(qdisc[threshold], color="gray", linestyle="--", linewidth=0.8)
                ax.annotate(
                    threshold,
                    (0, qdisc[threshold]),
                    xycoords=("axes fraction", "data"),
                    fontsize=7,
                    color="gray",
                    va="bottom",
                )
        ax.set_ylabel(f"queue ({unit})")
        ax.set_title(f"{name} ({links.loc[link, 'qdisc']})", fontsize=9)
        mark_measurement(ax, results, [name])
        ax.legend(**OUTSIDE_LEGEND)
    axes[-1, 0].set_xlabel("time (s)")
    if title:
        fig.suptitle(title)
    fig.tight_layout()
    return fig


# More flow groups than this are drawn as one line, all flows together.
TIME_LINES = 10
# A legend beside the axes, right of them, where it hides no line or mark.
OUTSIDE_LEGEND = {"fontsize": 8, "loc": "upper left", "bbox_to_anchor": (1.01, 1), "borderaxespad": 0}


def goodput_over_time_figure(results: Results, flows: Sequence[str] | str = (), title: str = "") -> Figure | None:
    """Goodput over time, from the `throughput` table's bins (`simulation.throughput_bin`): a
    line per flow group (the `count` flows of one `[[flows]]` entry, `tcp[0]`, `tcp[1]`, ...:
    their mean per flow, shaded from the lowest to the highest, with the group's max-min fair
    share per flow dashed in its colour; more than TIME_LINES groups: one line of all flows),
    or with `flows` (names) a line per flow named. The warm-up is shaded and the links' rate
    changes marked (`mark_measurement`). None if no bin was recorded."""
    import pandas as pd

    throughput = results.throughput
    if throughput.empty:
        return None
    named = [flows] if isinstance(flows, str) else list(flows)
    by_id = results.flows.set_index("id")
    if named:
        missing = [name for name in named if name not in set(results.flows["name"])]
        if missing:
            raise ValueError(f"flows: no flow named {', '.join(map(repr, missing))} in this run")
        line_of = throughput["flow_name"]
        labels = named
        share_of = dict(zip(results.flows["name"], results.flows["fair_share_bps"], strict=True))
    else:
        line_of = throughput["flow"].map(by_id["group"])
        labels = list(dict.fromkeys(by_id["group"]))
        share_of = (by_id.groupby("group", sort=False)["fair_share_bps"].mean()).to_dict()
        if len(labels) > TIME_LINES:
            line_of, labels, share_of = pd.Series("all flows", index=throughput.index), ["all flows"], {}
    fig, ax = subplots(figsize=(9, 4))
    for label in labels:
        rows = throughput[line_of == label]
        members = rows["flow"].nunique()
        mbps = rows.groupby("time")["bps"].agg(["mean", "min", "max"]) / MBPS
        # A bin's value holds from its start to the next one's; the last one's to the run's end.
        mbps.loc[results.duration] = mbps.iloc[-1]
        legend = label if members == 1 else f"{label} ({members} flows: mean, range shaded)"
        (line,) = ax.step(mbps.index, mbps["mean"], where="post", linewidth=1.2, label=legend)
        if members > 1:
            ax.fill_between(mbps.index, mbps["min"], mbps["max"], step="post", alpha=0.2, color=line.get_color())
        if label in share_of:
            ax.axhline(share_of[label] / MBPS, color=line.get_color(), linestyle="--", linewidth=0.8)
    mark_measurement(ax, results, list(results.links["name"]))
    ax.set_xlim(0, results.duration)
    ax.set_xlabel("time (s)")
    ax.set_ylabel("goodput (Mbps)" if named else "goodput per flow (Mbps)")
    ax.set_ylim(bottom=0)
    ax.legend(**OUTSIDE_LEGEND)
    heading = "goodput over time (dashed: max-min fair share)"
    ax.set_title(f"{title}: {heading}" if title else heading.capitalize(), fontsize=10)
    fig.tight_layout()
    return fig


def mark_measurement(ax: Any, results: Results, links: list[str]) -> None:
    """Shades the warm-up (before the measurement window) and draws a dotted line, labelled with
    the new rate, at each rate change of `links` (their scenario's `rate_changes`)."""
    if results.warmup > 0:
        ax.axvspan(0, results.warmup, color="0.92", zorder=0, label="warm-up (not measured)")
    changes = {}
    if results.scenario is not None:
        resolved = {link["name"]: link for link in results.scenario.resolved()["links"]}
        for link in links:
            for change in resolved[link]["rate_changes"]:
                changes[change["at"]] = change["rate"]
    for n, (at, bps) in enumerate(sorted(changes.items())):
        ax.axvline(at, color="tab:purple", linestyle=":", linewidth=1.2, label="rate change" if n == 0 else None)
        ax.annotate(
            f" {bps / MBPS:g} Mbps",
            (at, 1),
            xycoords=("data", "axes fraction"),
            fontsize=7,
            color="tab:purple",
            va="top",
        )


def window_figure(
    results: Results,
    flow: int = 0,
    model: tuple[Any, Any, str] | None = None,
    title: str = "",
) -> Figure:
    """A traced TCP flow's cwnd and ssthresh (packets) over time, with `model` = (times,
    windows, label) drawn over them (e.g. CUBIC's W(t)). Needs `tcp = { trace = true }`."""
    traces = results.traces
    fig, ax = subplots(figsize=(8, 4))
    for var, style in (("cwnd", {"linewidth": 1.2}), ("ssthresh", {"linewidth": 0.8, "linestyle": ":"})):
        rows = traces[(traces["flow"] == flow) & (traces["var"] == var)]
        # Only finite ssthresh: before the first loss it is the receiver window.
        ax.step(rows["time"], rows["value"], where="post", label=var, **style)
    if model is not None:
        times, windows, label = model
        ax.plot(times, windows, color="black", linestyle="--", linewidth=1.0, label=label)
    ax.set_xlabel("time (s)")
    ax.set_ylabel("packets")
    ax.legend(fontsize=8, loc="lower right")
    if title:
        ax.set_title(title, fontsize=10)
    fig.tight_layout()
    return fig


def _qdisc_table(results: Results, link_name: str) -> dict:
    """The scenario's qdisc table for a link (`{}` when unknown). Its `bytes` flag gives the
    unit of the average and the thresholds: bytes in byte mode, else packets."""
    if results.scenario is None:
        return {}
    try:
        return results.scenario.qdisc(link_name)
    except ValueError:
        return {}


def save_run_figures(results: Results, out_dir: str | Path) -> list[Path]:
    """Writes `throughput.png`, `goodput.png` (over time) and, if queues were sampled, `queue.png`."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    name = results.raw["summary"]["name"] or ""
    written = []
    for file, fig in (
        ("throughput.png", throughput_figure(results, title=name)),
        ("goodput.png", goodput_over_time_figure(results, title=name)),
        ("queue.png", queue_figure(results, title=name)),
    ):
        if fig is not None:
            fig.savefig(out / file, dpi=110, metadata={"Software": None})
            written.append(out / file)
    return written
