"""One scenario in ns-2 and in aqmlab, measured alike (`aqmlab crosscheck FILE`).

Both simulators run the scenario for each seed, every flow starting when aqmlab starts it (the
export writes the core's start times, jittered ones included). Both are measured the same way
over the measurement window:

- per flow: goodput (in-order bytes delivered to the application) and the drops of its
  packets at the monitored links (data and ACKs, as a flow monitor counts them);
- in all: total goodput, TCP timeouts (whole run: ns-2's `nrexmit_`, timeouts that halved
  ssthresh; ours, every retransmission timeout), and per monitored link its drops and its
  utilisation (ns-2: bytes that started transmission in the window; ours: busy time).
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from ..results import MBPS, Results
from ..scenario import Scenario
from . import export as ns2_export
from . import run as ns2_run

Metrics = dict[str, float]


def aqmlab_metrics(results: Results, exported: ns2_export.Export) -> Metrics:
    """aqmlab's run measured as `ns2_metrics` measures ns-2's."""
    flows = results.flows.set_index("id")
    ids = {name: i for i, name in zip(results.links["id"], results.links["name"], strict=True)}
    monitored = [ids[link.name] for link in exported.monitored]
    at_monitored = results.drops[results.drops["link"].isin(monitored)]
    by_flow = at_monitored.groupby("flow")["window_count"].sum()
    by_link = at_monitored.groupby("link")["window_count"].sum()
    per_flow = {
        f.id: (float(flows.at[f.id, "goodput_bps"]), float(by_flow.get(f.id, 0)), float(flows.at[f.id, "timeouts"]))
        for f in exported.flows
    }
    links = {
        link.name: (float(by_link.get(ids[link.name], 0)), float(results.link(link.name)["utilisation"]))
        for link in exported.monitored
    }
    return _metrics(exported, per_flow, links)


def ns2_metrics(results: ns2_run.Ns2Results, exported: ns2_export.Export) -> Metrics:
    per_flow = {row["id"]: (row["goodput_bps"], float(row["drops"]), float(row["timeouts"])) for row in results.flows}
    links = {row["name"]: (float(row["drops"]), row["utilisation"]) for row in results.links}
    return _metrics(exported, per_flow, links)


def _metrics(
    exported: ns2_export.Export, per_flow: dict[int, tuple[float, float, float]], links: dict[str, tuple[float, float]]
) -> Metrics:
    """Named metrics from per-flow (goodput b/s, drops, timeouts) and per-link (drops, utilisation)."""
    metrics: Metrics = {}
    for f in exported.flows:
        metrics[f"goodput {f.name} (Mb/s)"] = per_flow[f.id][0] / MBPS
    for f in exported.flows:
        metrics[f"drops {f.name}"] = per_flow[f.id][1]
    metrics["total goodput (Mb/s)"] = sum(v[0] for v in per_flow.values()) / MBPS
    if any(f.type == "tcp" for f in exported.flows):
        metrics["TCP timeouts (whole run)"] = sum(per_flow[f.id][2] for f in exported.flows if f.type == "tcp")
    for name, (drops, utilisation) in links.items():
        metrics[f"drops {name}"] = drops
        metrics[f"utilisation {name}"] = utilisation
    return metrics


@dataclass
class Comparison:
    """One metric over the seeds: the values in each simulator, seed by seed."""

    metric: str
    ns2: list[float]
    aqmlab: list[float]

    @property
    def ratio(self) -> float:
        """aqmlab's mean over ns-2's (nan when ns-2's is 0)."""
        ns2 = statistics.fmean(self.ns2)
        return statistics.fmean(self.aqmlab) / ns2 if ns2 else math.nan


def run_both(
    scenario: Scenario,
    seeds: Sequence[int],
    on_seed: Callable[[int], None] | None = None,
) -> tuple[list[Comparison], ns2_export.Export]:
    """Each seed's scenario exported and run in ns-2 and in aqmlab; the metrics side by side."""
    from ..api import run

    ns2_runs: list[Metrics] = []
    aqmlab_runs: list[Metrics] = []
    exported = None
    for seed in seeds:
        if on_seed is not None:
            on_seed(seed)
        seeded = scenario.with_seed(seed)
        exported = ns2_export.export(seeded)
        ns2_runs.append(ns2_metrics(ns2_run.run(exported), exported))
        aqmlab_runs.append(aqmlab_metrics(run(seeded), exported))
    assert exported is not None, "at least one seed"
    rows = [
        Comparison(metric, [m[metric] for m in ns2_runs], [m[metric] for m in aqmlab_runs]) for metric in ns2_runs[0]
    ]
    return rows, exported


def spread(values: Sequence[float]) -> str:
    """`mean` for one value, `mean ± sd` (the seeds' sample standard deviation) for more."""
    mean = statistics.fmean(values)
    if len(values) < 2:
        return f"{mean:.4g}"
    return f"{mean:.4g} ± {statistics.stdev(values):.2g}"
