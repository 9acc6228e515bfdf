"""Results of a run as pandas DataFrames, a summary dict, and files.

The core returns plain JSON (crates/aqmlab-core/src/metrics/mod.rs); this
module turns each list in it into a DataFrame with fixed column types, so that
empty tables still have their columns and saved files are byte-identical for
the same scenario and seed. A table is built when first used, and pandas is
imported only then: `summary()` needs neither (so `aqmlab run --json` starts
without loading pandas, issue 15).
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pandas as pd
    from matplotlib.figure import Figure

    from .scenario import Scenario

_DELAY_STATS = {
    "packets": "int64",
    "mean": "float64",
    "median": "float64",
    "p90": "float64",
    "p99": "float64",
    "max": "float64",
}

# Column types of each table, in the core's field order. Fields the core adds
# later still come through (after these, with inferred types).
SCHEMA: dict[str, dict[str, str]] = {
    "flows": {
        "id": "int64",
        "name": "string",
        # Its `[[flows]]` entry's name (the flows of one `count` share it), or its own name.
        "group": "string",
        "type": "string",
        "src": "string",
        "dst": "string",
        "base_rtt": "float64",
        "sent_packets": "int64",
        "sent_bytes": "int64",
        "delivered_packets": "int64",
        "dropped_packets": "int64",
        "window_sent_packets": "int64",
        "window_dropped_packets": "int64",
        "loss_rate": "float64",
        "goodput_bps": "float64",
        "fair_share_bps": "float64",
        "normalised_goodput": "float64",
        "mean_delay": "float64",
        "max_delay": "float64",
        "timeouts": "int64",
        "fast_retransmits": "int64",
        "retransmitted_packets": "int64",
    },
    # Qdisc-specific counters follow as columns named `qdisc.<counter>`.
    "links": {
        "id": "int64",
        "name": "string",
        "qdisc": "string",
        "rate_bps": "float64",
        "delay": "float64",
        "utilisation": "float64",
        "packets_sent": "int64",
        "drops": "int64",
    },
    "drops": {"flow": "int64", "link": "int64", "reason": "string", "count": "int64", "window_count": "int64"},
    # ECN marks (set CE by a link's qdisc) by flow and link, as `drops` without a reason; only the
    # pairs with a mark.
    "marks": {"flow": "int64", "link": "int64", "count": "int64", "window_count": "int64"},
    "throughput": {"time": "float64", "flow": "int64", "bps": "float64"},
    # `average` is the qdisc's averaged queue (RED's avg) in its own unit; NaN when it has none.
    # SRED adds `hit_frequency` (its P(t)) when a sampled link runs it.
    "queue": {"time": "float64", "link": "int64", "packets": "int64", "bytes": "int64", "average": "float64"},
    # Per-packet queueing delay (sojourn: arrival at the link's queue to the start of its
    # transmission) on monitored links over the window, per (flow, link) and per (group, link),
    # seconds (metrics/queue_delay.rs; `simulation.queue_delay` says which are kept).
    "queue_delay": {"flow": "int64", "link": "int64", **_DELAY_STATS},
    "queue_delay_groups": {"group": "string", "link": "int64", "flows": "int64", **_DELAY_STATS},
    # With `simulation.queue_delay_series`: each group's packets sent in a throughput bin, their
    # mean and largest delay (s); bins without a packet left out.
    "queue_delay_series": {
        "time": "float64",
        "link": "int64",
        "group": "string",
        "packets": "int64",
        "mean": "float64",
        "max": "float64",
    },
    "drop_log": {"time": "float64", "flow": "int64", "link": "int64", "reason": "string"},
    "traces": {"time": "float64", "flow": "int64", "var": "string", "value": "float64"},
    # `end` is NaN for a transfer that did not complete.
    "transfers": {"flow": "int64", "start": "float64", "end": "float64", "packets": "int64"},
    # Per-flow measurement of a link's qdisc (SRED's §VIII candidate statistics); its counters
    # follow as columns named after them.
    "qdisc_flows": {"link": "int64", "flow": "int64", "direction": "string"},
}

TABLES = tuple(SCHEMA)

# Id columns and the table (`id`, `name`) that names their ids: every table with such a column
# gets `<column>_name` beside it (`flow` -> `flow_name`), so that no one joins them by hand.
NAMED_IDS = {"flow": "flows", "link": "links"}

MBPS = 1e6

# Keys of `Results.summary()`: copied from the core's summary, then computed here, then
# the two that differ between runs (left out of saved files).
CORE_SUMMARY_KEYS = (
    "name",
    "seed",
    "duration",
    "warmup",
    "events",
    "packets_sent",
    "packets_delivered",
    "packets_dropped",
    "packets_in_flight",
    "jain_index",
)
SUMMARY_KEYS = CORE_SUMMARY_KEYS + ("utilisation", "drops_by_reason", "flows", "wall_time_s", "events_per_second")
FLOW_SUMMARY_KEYS = (
    "id",
    "name",
    "type",
    "goodput_bps",
    "fair_share_bps",
    "normalised_goodput",
    "dropped_packets",
    "loss_rate",
)


def _frame(rows: list[dict[str, Any]], schema: dict[str, str]) -> pd.DataFrame:
    import pandas as pd

    # Fields beyond the schema come in any row's order of first appearance (some rows may lack them).
    extra = dict.fromkeys(k for r in rows for k in r if k not in schema)
    columns = list(schema) + list(extra)
    frame = pd.DataFrame({c: [r.get(c) for r in rows] for c in columns}, columns=columns)
    return frame.astype({c: t for c, t in schema.items()})


def _counters_frame(rows: list[dict[str, Any]], schema: dict[str, str], prefix: str) -> pd.DataFrame:
    """A table whose rows carry `counters` (name, value) pairs: one float column `<prefix><name>` per counter."""
    import pandas as pd

    counters: dict[str, list[float]] = {}
    for i, row in enumerate(rows):
        for name, value in row.get("counters", []):
            counters.setdefault(f"{prefix}{name}", [float("nan")] * len(rows))[i] = value
    frame = _frame([{k: v for k, v in r.items() if k != "counters"} for r in rows], schema)
    for column, values in counters.items():
        frame[column] = pd.Series(values, dtype="float64")
    return frame


def _with_names(frame: pd.DataFrame, raw: Mapping[str, Any]) -> pd.DataFrame:
    """`frame` with a `<column>_name` column after each id column of NAMED_IDS: the name the
    core's `flows` or `links` gives that id (missing for an id it does not list)."""
    import pandas as pd

    for column, table in NAMED_IDS.items():
        if column in frame.columns:
            rows = raw.get(table, [])
            names = pd.Series([r["name"] for r in rows], index=[r["id"] for r in rows], dtype="string")
            position = frame.columns.get_loc(column) + 1
            frame.insert(position, f"{column}_name", frame[column].map(names).astype("string"))
    return frame


# Tables whose counters become columns, and the prefix of those columns.
COUNTER_PREFIX = {"links": "qdisc.", "qdisc_flows": ""}

# Tables `save()` writes only when they have rows (only some disciplines fill them).
SAVED_IF_FILLED = ("marks", "qdisc_flows", "queue_delay_series")


class Results:
    """What one run produced: DataFrames (`flows`, `links`, `drops`, `marks`, `throughput`,
    `queue`, `queue_delay`, `queue_delay_groups`, `queue_delay_series`, `drop_log`, `traces`, `transfers`,
    `qdisc_flows`; a table with `flow` or `link` ids has their names beside them, `flow_name`,
    `link_name`), `summary()`, `save()`, the figures `plot_goodput()`, `plot_throughput()`,
    `plot_queue()`, `plot_window()`, and `pcap_files`: the packet captures written while it
    ran (`aqmlab.run(..., pcap_dir=)`). In a notebook a Results shows as its summary and flows table."""

    flows: pd.DataFrame
    links: pd.DataFrame
    drops: pd.DataFrame
    marks: pd.DataFrame
    throughput: pd.DataFrame
    queue: pd.DataFrame
    queue_delay: pd.DataFrame
    queue_delay_groups: pd.DataFrame
    queue_delay_series: pd.DataFrame
    drop_log: pd.DataFrame
    traces: pd.DataFrame
    transfers: pd.DataFrame
    qdisc_flows: pd.DataFrame

    def __init__(
        self,
        raw: dict[str, Any],
        scenario: Scenario | None = None,
        wall_time: float | None = None,
        pcap_files: list[Path] | None = None,
    ):
        self.raw = raw
        self.scenario = scenario
        self.wall_time = wall_time
        self.pcap_files = pcap_files or []

    def __getattr__(self, name: str) -> pd.DataFrame:
        """A table, built on first use and kept (only names absent from the instance get here)."""
        if name not in TABLES:
            raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")
        rows = self.raw.get(name, [])
        if name in COUNTER_PREFIX:
            frame = _counters_frame(rows, SCHEMA[name], COUNTER_PREFIX[name])
        else:
            frame = _frame(rows, SCHEMA[name])
        frame = _with_names(frame, self.raw)
        setattr(self, name, frame)
        return frame

    @classmethod
    def from_json(cls, text: str, scenario: Scenario | None = None, wall_time: float | None = None) -> Results:
        return cls(json.loads(text), scenario, wall_time)

    @property
    def duration(self) -> float:
        """The simulated duration (s)."""
        return self.raw["summary"]["duration"]

    @property
    def warmup(self) -> float:
        """When the measurement window starts (s): goodput, loss rates and window counts cover
        [warmup, duration)."""
        return self.raw["summary"]["warmup"]

    def link(self, name: str) -> pd.Series:
        """The row of `links` for the monitored link `name` (e.g. "L->R", a dumbbell's bottleneck)."""
        rows = self.links[self.links["name"] == name]
        if rows.empty:
            raise KeyError(f"link {name!r}: not monitored in this run (links: {', '.join(self.links['name'])})")
        return rows.iloc[0]

    def tables(self) -> dict[str, pd.DataFrame]:
        return {t: getattr(self, t) for t in TABLES}

    def active_sources(self, step: float = 0.1) -> pd.Series:
        """How many flows are in a transfer at each multiple of `step` seconds (SRED §VII:
        "active" = sending a file whose last byte is not yet acknowledged), from `transfers`;
        a transfer still open at the end counts until the end. E.g.
        `results.active_sources(1.0).median()`."""
        import numpy as np
        import pandas as pd

        times = np.arange(0.0, self.duration, step)
        starts = np.sort(self.transfers["start"].to_numpy())
        ends = np.sort(self.transfers["end"].fillna(np.inf).to_numpy())
        started = np.searchsorted(starts, times, side="right")
        ended = np.searchsorted(ends, times, side="right")
        return pd.Series(started - ended, index=pd.Index(times, name="time"), name="active")

    def summary(self, wall_time: bool = True) -> dict[str, Any]:
        """Per-flow goodput and drops, Jain index, utilisation of monitored links, events;
        with `wall_time`, also the run's wall time and events per second."""
        s = self.raw["summary"]
        out = {k: s[k] for k in CORE_SUMMARY_KEYS}
        out["utilisation"] = {name: value for name, value in s["utilisation"]}
        by_reason: dict[str, int] = {}
        for d in self.raw["drops"]:
            by_reason[d["reason"]] = by_reason.get(d["reason"], 0) + d["count"]
        out["drops_by_reason"] = dict(sorted(by_reason.items()))
        out["flows"] = [{k: f[k] for k in FLOW_SUMMARY_KEYS} for f in self.raw["flows"]]
        if wall_time and self.wall_time is not None:
            out["wall_time_s"] = self.wall_time
            out["events_per_second"] = s["events"] / self.wall_time if self.wall_time > 0 else None
        return out

    def save(self, out_dir: str | Path, format: str = "parquet") -> list[Path]:
        """Writes every table (`<table>.parquet` or `.csv`; `marks` and `qdisc_flows` only when
        they have rows), `summary.json` (without wall time) and, when known, the scenario
        (`Scenario.save`: `scenario.json`, and `scenario.toml` when it came from a file).
        Same scenario + seed = identical bytes."""
        if format not in ("parquet", "csv"):
            raise ValueError(f"format: must be parquet or csv, got {format!r}")
        out = Path(out_dir)
        out.mkdir(parents=True, exist_ok=True)
        written = []
        for name, frame in self.tables().items():
            if name in SAVED_IF_FILLED and frame.empty:
                continue
            path = out / f"{name}.{format}"
            if format == "parquet":
                frame.to_parquet(path, index=False)
            else:
                frame.to_csv(path, index=False)
            written.append(path)
        written.append(_write_json(out / "summary.json", self.summary(wall_time=False)))
        if self.scenario is not None:
            written += self.scenario.save(out)
        return written

    def plot_goodput(self, title: str = "") -> Figure:
        """Each flow's goodput over the measurement window against its max-min fair share
        (black ticks), as `aqmlab run --out` draws `throughput.png`. A matplotlib Figure: a
        notebook cell shows it, `fig.savefig("goodput.png")` writes it.

            fig = results.plot_goodput(title="drop-tail, 64 KB")
        """
        from .plots import throughput_figure

        return throughput_figure(self, title=title)

    def plot_throughput(self, flows: Sequence[str] | str = (), title: str = "") -> Figure:
        """Goodput over time (the `throughput` table), as `aqmlab run --out` draws `goodput.png`:
        a line per flow group, its mean per flow shaded from its lowest to its highest flow, or a
        line per flow named in `flows`; each with its max-min fair share dashed, the warm-up
        shaded, rate changes marked. A matplotlib Figure; ValueError when no bin was recorded.

            results.plot_throughput()                      # udp, tcp (31 flows: mean, range)
            results.plot_throughput(["udp", "tcp[0]"])     # two flows
        """
        from .plots import goodput_over_time_figure

        fig = goodput_over_time_figure(self, flows=flows, title=title)
        if fig is None:
            raise ValueError("plot_throughput: no goodput was binned in this run (simulation.throughput_bin)")
        return fig

    def plot_queue(self, title: str = "") -> Figure:
        """The queue of each monitored link over time (packets, or bytes in byte mode; the
        discipline's average and RED's thresholds where it has them), as `aqmlab run --out`
        draws `queue.png`. A matplotlib Figure; ValueError when no queue was sampled.

            results.plot_queue()
        """
        from .plots import queue_figure

        fig = queue_figure(self, title=title)
        if fig is None:
            raise ValueError(
                "plot_queue: no queue was sampled in this run (a link's queue is sampled every "
                "simulation.sample_interval, 0 = never, when it is monitored: `monitor = true`; a dumbbell's "
                "bottleneck always is)"
            )
        return fig

    def plot_window(self, flow: int | str = 0, title: str = "") -> Figure:
        """A traced TCP flow's cwnd and ssthresh (packets) over time; `flow` by id or name. The
        flow needs `tcp = { trace = true }`. A matplotlib Figure.

            results.plot_window("tcp[0]")
        """
        from .plots import window_figure

        names = dict(zip(self.flows["name"], self.flows["id"], strict=True))
        if isinstance(flow, str) and flow not in names:
            raise ValueError(f"plot_window: no flow named {flow!r} in this run")
        flow_id = names[flow] if isinstance(flow, str) else flow
        if not (self.traces["flow"] == flow_id).any():
            raise ValueError(f"plot_window: flow {flow!r} was not traced (set `tcp = {{ trace = true }}` on it)")
        return window_figure(self, flow=flow_id, title=title)

    def _repr_html_(self) -> str:
        from .notebook import results_html

        return results_html(self)

    def __repr__(self) -> str:
        summary = self.raw["summary"]
        name = summary["name"] or "(unnamed)"
        utilisation = "".join(f", {link} {value:.1%} utilised" for link, value in summary["utilisation"])
        return (
            f"<Results {name}: seed {summary['seed']}, {summary['duration']:g} s (measured from "
            f"{summary['warmup']:g} s), {len(self.raw['flows'])} flows, {summary['events']:,} events, "
            f"Jain index {summary['jain_index']:.4f}{utilisation}>"
        )


def to_json_value(data: Any) -> Any:
    """`data` with NaN and infinities replaced by None, so that it is strict JSON."""
    if isinstance(data, float):
        return data if math.isfinite(data) else None
    if isinstance(data, dict):
        return {k: to_json_value(v) for k, v in data.items()}
    if isinstance(data, (list, tuple)):
        return [to_json_value(v) for v in data]
    return data


def _write_json(path: Path, data: Any) -> Path:
    path.write_text(json.dumps(to_json_value(data), indent=2) + "\n")
    return path


def goodput_table(results_by_label: Mapping[str, Results]) -> pd.DataFrame:
    """One row per flow: fair share (Mbps), then for each run its goodput (`<label>_mbps`) and
    goodput / fair share (`<label>_norm`)."""
    import pandas as pd

    first = next(iter(results_by_label.values())).flows
    table = pd.DataFrame(
        {
            "flow": first["id"],
            "name": first["name"],
            "type": first["type"],
            "fair_share_mbps": first["fair_share_bps"] / MBPS,
        }
    )
    for label, results in results_by_label.items():
        table[f"{label}_mbps"] = results.flows["goodput_bps"].to_numpy() / MBPS
        table[f"{label}_norm"] = results.flows["normalised_goodput"].to_numpy()
    return table
