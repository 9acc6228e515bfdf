"""The ns-2 column of reproductions whose mechanism ns-2.35 lacks but whose baselines it has:
CSFQ §3's FIFO (drop-tail), RED and DRR in `demo`, `csfq-fig3b`, `csfq-fig3a` and `csfq-fig4`,
and RED in `bred-vs-red` (BRED Figs. 10–11; the BRED paper ran ns-2, §5). Each experiment's own
scenario, with the baseline's qdisc, is written for ns-2 by aqmlab's exporter
(`aqmlab.ns2.export`, what `aqmlab export ns2` writes), run in `ns`, and measured as the
experiment measures ours (the same flows, rates and window, the same statistic over seeds); the
rows of CSFQ, FRED and BRED, which ns-2.35 does not have, are recorded as such (`not_in_ns2`).
docs/ns2-reproductions.md has the format and what each run differs in.

    make ns2-baselines
    PYTHONPATH=python .venv/bin/python tools/ns2_reproductions/baselines.py [--only ID ...]

Unlike redpd.py this needs the project (it builds the scenarios and exports them), not an
ns-2 source tree.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import json
import shutil
import statistics
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import aqmlab
import numpy as np
from aqmlab.experiments import PAPER_NAMES, _bred, _csfq, bred_vs_red, csfq_fig3a, csfq_fig4
from aqmlab.experiments._csfq_figures import LINK_MBPS, demo_scenario
from aqmlab.ns2 import export, run
from aqmlab.presets import CSFQ_MECHANISMS
from aqmlab.results import MBPS
from aqmlab.scenario import Scenario

sys.path.insert(0, str(Path(__file__).resolve().parent))
from ns2runs import FULL_ONLY, OUT, REPO, combine, ns2_version, reference, shown  # noqa: E402

COMMAND = "make ns2-baselines"
DRIVER = "tools/ns2_reproductions/baselines.py"
BASELINES = ("droptail", "red", "drr")  # CSFQ §3's mechanisms that ns-2.35 has
SEEDS = (1, 2, 3, 4, 5)
NOT_CSFQ = "CSFQ is not in ns-2.35"
NOT_FRED = "FRED is not in ns-2.35"
NOT_RFC = "the RFC TCP (profile rfc) has no ns-2.35 agent"
MECHANISM = {"csfq": NOT_CSFQ, "fred-1": NOT_FRED, "fred-2": NOT_FRED, "fred": NOT_FRED}


def goodputs(scenario: Scenario, seed: int) -> list[float]:
    """Each flow's goodput (Mb/s, by flow id) in ns-2 over the scenario's window."""
    flows = sorted(run.run(export.export(scenario.with_seed(seed))).flows, key=lambda flow: flow["id"])
    return [flow["goodput_bps"] / MBPS for flow in flows]


# A measure takes one seed's runs, {(scenario, qdisc): goodputs}, and gives {row key: value}.
Measure = Callable[[dict[tuple[str, str], list[float]]], dict[str, object]]


def with_baselines(scenarios: dict[str, Scenario]) -> dict[tuple[str, str], Scenario]:
    """Each of CSFQ §3's `scenarios` under each of BASELINES (`aqmlab.presets.CSFQ_MECHANISMS`)."""
    return {(name, q): s.with_qdisc(CSFQ_MECHANISMS[q]) for name, s in scenarios.items() for q in BASELINES}


@dataclass
class Baselines:
    """One experiment's ns-2 runs (`scenarios` by (scenario, qdisc), once per seed), its rows from
    them (`measure`, or `combined` where a row is a statistic over the seeds' mean, as the
    experiment computes it), the rows ns-2 cannot measure, and the notes."""

    id: str
    scenarios: dict[tuple[str, str], Scenario]
    seeds: tuple[int, ...]
    measure: Measure
    not_in_ns2: dict[str, str]
    notes: dict[str, str]
    what: str
    ordered: frozenset[str] = frozenset()
    categories: frozenset[str] = frozenset()  # rows whose value is a category ("fair", "proportional")
    combined: Callable[[list[dict[tuple[str, str], list[float]]]], dict[str, float]] | None = None


def demo_rows(runs: dict[tuple[str, str], list[float]]) -> dict[str, object]:
    return {f"udp.{q}": runs["demo", q][0] for q in BASELINES}


def fig3a_rows(runs: dict[tuple[str, str], list[float]]) -> dict[str, object]:
    goodput = {q: np.array(runs["fig3a", q]) for q in BASELINES}
    offered = (np.arange(csfq_fig3a.FIG3A_FLOWS) + 1) * csfq_fig3a.FIG3A_FAIR_MBPS
    fairness = csfq_fig3a.fig3a_metrics(goodput, offered * LINK_MBPS / offered.sum()).set_index("mechanism")
    rows: dict[str, object] = {"drr.largest_deviation": float(fairness.loc["drr", "largest_abs_deviation"])}
    for q in BASELINES:
        fair, proportional = fairness.loc[q, "rms_to_fair_mbps"], fairness.loc[q, "rms_to_proportional_mbps"]
        rows[f"{q}.allocation"] = "fair" if fair < proportional else "proportional"
    return rows


FIG4_N = tuple(csfq_fig4.FULL.sweep)


def fig4_curve(runs: dict[tuple[str, str], list[float]], q: str) -> dict[int, float]:
    """The TCP's (flow 0's) goodput over its max-min share 10/N Mb/s (every UDP sends twice that), by N."""
    return {n: runs[f"n{n}", q][0] / (LINK_MBPS / n) for n in FIG4_N}


def fig4_statistics(curves: dict[str, dict[int, float]]) -> dict[str, float]:
    """csfq_fig4.fig4_rows' statistics of the baselines' curves."""
    few = [n for n in FIG4_N if n <= csfq_fig4.FIG4_DRR_GOOD_UP_TO]
    return {
        "drr.few_flows.min": min(curves["drr"][n] for n in few),
        "drr.most_flows": curves["drr"][FIG4_N[-1]],
        "baseline.max": max(max(curves["red"][n], curves["droptail"][n]) for n in FIG4_N),
    }


def fig4_rows(runs: dict[tuple[str, str], list[float]]) -> dict[str, object]:
    """One seed's statistics: their spread over the seeds is what the recorded `spread` gives."""
    return dict(fig4_statistics({q: fig4_curve(runs, q) for q in BASELINES}))


def fig4_combined(per_seed: list[dict[tuple[str, str], list[float]]]) -> dict[str, float]:
    """The statistics of the curves averaged over the seeds, as csfq_fig4 computes ours."""
    curves = {q: {n: statistics.fmean(fig4_curve(runs, q)[n] for runs in per_seed) for n in FIG4_N} for q in BASELINES}
    return fig4_statistics(curves)


# bred-vs-red: RED in BRED Figs. 10 (7 TCPs) and 11 (7 TCPs and 3 CBRs); flows in _bred.SOURCES order.
BRED_TCPS = [i for i, name in enumerate(_bred.SOURCES) if name in _bred.TCPS]
BRED_CBRS = [i for i, name in enumerate(_bred.SOURCES) if name in _bred.CBRS]


def bred_rows(runs: dict[tuple[str, str], list[float]]) -> dict[str, object]:
    fig11 = runs["fig11", "red"]
    return {
        "fig10.red.long_run_fairness": _bred.fairness(runs["fig10", "red"]),
        "fig11.red.tcp_total": sum(fig11[i] for i in BRED_TCPS),
        "fig11.red.cbr_min": min(fig11[i] for i in BRED_CBRS),
        "fig11.red.cbr_max": max(fig11[i] for i in BRED_CBRS),
    }


def bred_combined(per_seed: list[dict[tuple[str, str], list[float]]]) -> dict[str, float]:
    """The smallest and largest CBR of the goodputs averaged over the trials, as bred_vs_red's."""
    mean = [statistics.fmean(runs["fig11", "red"][i] for runs in per_seed) for i in BRED_CBRS]
    return {"fig11.red.cbr_min": min(mean), "fig11.red.cbr_max": max(mean)}


DEMO_NOTE = (
    "the UDP's goodput (Mb/s), the last 10 s of 20 s, as ours: the demo's scenario (scenarios/csfq-fig3b.toml, "
    "31 NewReno TCPs of the ns2 profile) exported by aqmlab.ns2.export"
)


def experiments() -> list[Baselines]:
    demo_base = aqmlab.load(aqmlab.scenarios_dir() / "csfq-fig3b.toml").with_tcp(_csfq.TCP)
    demo_absent = {"udp.csfq": NOT_CSFQ, "udp.fred-1": NOT_FRED, "order.udp": f"{NOT_CSFQ}; {NOT_FRED}"}
    rfc_rows = ("udp.droptail", "udp.red", "udp.drr", "udp.csfq", "udp.fred-1", "order.udp")
    demo_absent |= {f"{key}.alt_rfc": NOT_RFC for key in rfc_rows}
    demo_notes = {"*": DEMO_NOTE}
    fig3a_flows = [
        {"name": f"udp{i}", "type": "cbr", "rate": (i + 1) * csfq_fig3a.FIG3A_FAIR_MBPS * MBPS, "jitter": True}
        for i in range(csfq_fig3a.FIG3A_FLOWS)
    ]
    fig3a_scenario = demo_scenario("csfq-fig3a", fig3a_flows, csfq_fig3a.FULL)
    fig4_scenarios = {
        f"n{n}": demo_scenario(f"csfq-fig4-n{n}", csfq_fig4.fig4_flows(n), csfq_fig4.FULL) for n in FIG4_N
    }
    buffer10, buffer11 = _bred.buffer_packets(bred_vs_red.FIG10_LINK), _bred.buffer_packets(bred_vs_red.FIG11_LINK)
    bred_scenarios = {
        ("fig10", "red"): _bred.ten_sources_scenario(
            bred_vs_red.FIG10_LINK, _bred.red_qdisc(buffer10), tcp_only=True, sample=bred_vs_red.FIG10_SAMPLE
        ),
        ("fig11", "red"): _bred.ten_sources_scenario(
            bred_vs_red.FIG11_LINK,
            _bred.red_qdisc(buffer11),
            bred_vs_red.FIG11_CBR_RATE,
            sample=bred_vs_red.FIG11_SAMPLE,
        ),
    }
    not_bred = "BRED is not in ns-2.35"
    bred_absent = {
        "order.fig10.sample_fairness.bred_gt_red": not_bred,
        "order.fig10.worst_sample_fairness.bred_gt_red": not_bred,
        "fig11.bred.cbr_max": not_bred,
        "fig11.bred.cbr_max_5s": not_bred,
        "order.fig11.tcp_total.bred_gt_red": not_bred,
        "fig11.bred.tcp_min_share": not_bred,
    }
    bred_note = (
        "RED (min_th B/4, max_th B/2, max_p 0.1, w_q 0.002, packets) under ns-2's Tahoe (ns2 profile, window 1000), "
        "500-byte packets, 100 s trials measured over the latter half, as ours"
    )
    return [
        Baselines(
            "bred-vs-red",
            {key: Scenario.from_dict(spec) for key, spec in bred_scenarios.items()},
            tuple(bred_vs_red.FULL.seeds),
            bred_rows,
            bred_absent,
            {
                "*": bred_note,
                "fig10.red.long_run_fairness": f"{bred_note}; Fig. 10's 7 TCPs on 0.8 Mb/s: eq. 17's F of the "
                "goodputs per trial, mean over the trials",
                "fig11.red.tcp_total": f"{bred_note}; Fig. 11 (7 TCPs, 3 CBRs at 4 Mb/s, 4.5 Mb/s): the TCPs' "
                "total goodput (Mb/s), mean over the trials",
                "fig11.red.cbr_min": f"{bred_note}; Fig. 11: the smallest CBR's goodput averaged over the trials "
                "(spread: half the range of each trial's smallest)",
                "fig11.red.cbr_max": f"{bred_note}; Fig. 11: the largest CBR's goodput averaged over the trials "
                "(spread: half the range of each trial's largest)",
            },
            "bred-vs-red's scenarios (_bred.ten_sources_scenario: Figs. 10 and 11)",
            combined=bred_combined,
        ),
        Baselines(
            "demo",
            with_baselines({"demo": demo_base}),
            SEEDS,
            demo_rows,
            demo_absent,
            demo_notes,
            "the demo's scenario (scenarios/csfq-fig3b.toml)",
        ),
        Baselines(
            "csfq-fig3b",
            with_baselines({"demo": demo_base}),
            SEEDS,
            demo_rows,
            demo_absent | {"udp.fred": NOT_FRED},
            demo_notes,
            "the demo's scenario (scenarios/csfq-fig3b.toml)",
        ),
        Baselines(
            "csfq-fig3a",
            with_baselines({"fig3a": fig3a_scenario}),
            SEEDS,
            fig3a_rows,
            {
                "csfq.lowest_vs_fair": NOT_CSFQ,
                "csfq.highest_vs_fair": NOT_CSFQ,
                "order.largest_deviation": NOT_CSFQ,
                "csfq.allocation": NOT_CSFQ,
                "fred-1.allocation": NOT_FRED,
                "fred-2.allocation": NOT_FRED,
            },
            {
                "*": (
                    "32 jittered CBRs at (i+1)·0.3125 Mb/s on the demo's dumbbell, the last 10 s of 20 s, as ours; "
                    "allocation: the nearer (RMS over the flows) of the fair and the proportional shares"
                ),
                "drr.largest_deviation": (
                    "32 jittered CBRs at (i+1)·0.3125 Mb/s on the demo's dumbbell, the last 10 s of 20 s, as ours; "
                    "DRR's largest |goodput / 0.3125 Mb/s − 1| over the flows"
                ),
            },
            "csfq-fig3a's scenario (csfq_fig3a: 32 CBRs on the demo's dumbbell)",
            categories=frozenset(f"{q}.allocation" for q in BASELINES),
        ),
        Baselines(
            "csfq-fig4",
            with_baselines(fig4_scenarios),
            tuple(csfq_fig4.FULL.seeds),
            fig4_rows,
            {"crossover.csfq_gt_drr": NOT_CSFQ, "csfq_minus_fred.min": f"{NOT_CSFQ}; {NOT_FRED}"},
            {
                "*": (
                    "one NewReno TCP (ns2 profile) and N − 1 jittered CBRs at 2·10/N Mb/s, N = 2…32, the last 10 s "
                    "of 20 s; the TCP's goodput over 10/N Mb/s averaged over the seeds at each N, then the row's "
                    "statistic over N, as ours (spread: half the range of the statistic of each seed's own curve)"
                )
            },
            "csfq-fig4's scenarios (csfq_fig4: a TCP and N − 1 CBRs on the demo's dumbbell)",
            combined=fig4_combined,
        ),
    ]


def record(experiment: Baselines, per_seed: list[dict[tuple[str, str], list[float]]], version: str) -> dict:
    values: dict[str, list[object]] = {}
    for runs in per_seed:
        for key, value in experiment.measure(runs).items():
            values.setdefault(key, []).append(value)
    exact = experiment.combined(per_seed) if experiment.combined else {}
    rows: dict[str, dict[str, object]] = {}
    for key, seeds in values.items():
        note = experiment.notes.get(key, experiment.notes["*"])
        if key in experiment.categories:
            counts = {c: seeds.count(c) for c in dict.fromkeys(seeds)}
            category = max(counts, key=counts.__getitem__)
            tally = ", ".join(f"{c} in {n} of {len(seeds)} seeds" for c, n in counts.items())
            rows[key] = {"value": category, "note": f"{note}; {tally}"}
            continue
        entry = combine(seeds, key in experiment.ordered)
        if key in exact:
            entry["value"] = round(exact[key], 4)
        rows[key] = entry | {"note": f"{note}; per seed {'; '.join(shown(v) for v in seeds)}"}
    qdiscs = ", ".join(dict.fromkeys(PAPER_NAMES[q] for _, q in experiment.scenarios))
    script = (
        f"{experiment.what} with {qdiscs}, written for ns-2 by aqmlab.ns2.export (`aqmlab export ns2`), as run "
        f"by {DRIVER}"
    )
    return reference(experiment.id, version, script, experiment.seeds, FULL_ONLY, rows, experiment.not_in_ns2, COMMAND)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Runs the CSFQ and BRED baselines in ns-2 and records their rows.")
    parser.add_argument("--only", nargs="+", metavar="ID", help="experiment ids (default: all)")
    parser.add_argument("--jobs", type=int, default=2, help="ns processes at once (default 2)")
    args = parser.parse_args(argv)
    if shutil.which("ns") is None:
        print("error: ns (ns-2.35) is not on PATH; install it (Debian, Ubuntu: apt-get install ns2)", file=sys.stderr)
        return 2
    known = experiments()
    unknown = sorted(set(args.only or ()) - {e.id for e in known})
    if unknown:
        print(f"error: --only: unknown experiment(s) {unknown}; known: {[e.id for e in known]}", file=sys.stderr)
        return 2
    chosen = [e for e in known if not args.only or e.id in args.only]
    # Each (scenario, qdisc, seed) once: demo and csfq-fig3b share theirs.
    jobs = {(*key, seed): (scenario, seed) for e in chosen for key, scenario in e.scenarios.items() for seed in e.seeds}
    with concurrent.futures.ThreadPoolExecutor(max_workers=args.jobs) as pool:
        futures = {key: pool.submit(goodputs, *job) for key, job in jobs.items()}
        done = {key: future.result() for key, future in futures.items()}
    version = ns2_version()
    for e in chosen:
        per_seed = [{key: done[(*key, seed)] for key in e.scenarios} for seed in e.seeds]
        path = OUT / f"{e.id}.json"
        path.write_text(json.dumps(record(e, per_seed, version), indent=2, ensure_ascii=False) + "\n")
        print(f"ns2-baselines: wrote {path.relative_to(REPO)}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
