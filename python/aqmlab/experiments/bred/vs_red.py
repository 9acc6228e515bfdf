"""BRED §5.2, Figs. 10–11: comparison with RED. §5.2.1, Fig. 10: seven TCPs alone on
0.8 Mb/s; fairness per 2-s sample (eq. 17 across the flows in each sample, averaged over
the samples of the latter half) and over the whole half. Buffer unstated: 400 ms = 80
packets. §5.2.2, Fig. 11: the ten sources on 4.5 Mb/s, CBRs at 4 Mb/s, 450-packet buffer;
per-flow averages and 5-s samples.

Setup and the choices where the paper is silent: `bred/__init__.py`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd

from ...plots import subplots
from ...results import MBPS, Results
from .. import PAPER_NAMES, Reproduction, Row, RunSettings, experiment, run_seeds
from . import (
    BOUND_SLACK,
    CBRS,
    DURATION,
    MECHANISMS,
    QUICK_DURATION,
    SHUT_OUT,
    SOURCES,
    TCPS,
    TRIALS,
    buffer_packets,
    cbr_bound_mbps,
    fairness,
    mean_goodput,
    mean_series,
    rtt_style,
    ten_sources_scenario,
)

FIG10_LINK = 0.8e6  # "7 tcp flows ... with a backbone bandwidth of 0.8Mbps"
FIG10_SAMPLE = 2.0  # "making the bandwidth calculations every 2 seconds"
FIG11_LINK = 4.5e6
FIG11_CBR_RATE = 4e6  # "The cbr input rates are 4 Mbps each"
FIG11_SAMPLE = 5.0  # "a small time window of 5 seconds"
# "RED ensures fairness while dealing with only adaptive flows ... only over a large time
# interval": RED's long-run F of the 7 TCPs is at least 0.9 (our reading of "fair").
FIG10_LONG_RUN_F = 0.9
# Fig. 11 under RED: "TCP flows are completely shut out" (at most 5 % of the link, reproduction-
# targets) "by the cbr flows which split up the available bandwidth": each CBR within ±20 % of a third.
FIG11_RED_TCP_SHARE, FIG11_RED_SPLIT = 0.05, 0.2

FULL = RunSettings(seeds=range(1, TRIALS + 1), duration=DURATION)
QUICK = RunSettings(seeds=(1,), duration=QUICK_DURATION)


@experiment(
    "bred-vs-red",
    "BRED Figs. 10–11: RED vs BRED, 7 TCPs on 0.8 Mb/s (2-s samples); "
    "7 TCP + 3 CBR at 4 Mb/s on 4.5 Mb/s (5-s samples)",
)
def vs_red(quick: bool) -> Reproduction:
    settings = QUICK if quick else FULL
    buffer10, buffer11 = buffer_packets(FIG10_LINK), buffer_packets(FIG11_LINK)
    records, samples10, samples11 = [], {}, {}
    for mechanism, qdisc in MECHANISMS.items():
        runs10 = run_seeds(
            ten_sources_scenario(
                FIG10_LINK, qdisc(buffer10), tcp_only=True, sample=FIG10_SAMPLE, duration=settings.duration
            ),
            settings.seeds,
        )
        runs11 = run_seeds(
            ten_sources_scenario(
                FIG11_LINK, qdisc(buffer11), FIG11_CBR_RATE, sample=FIG11_SAMPLE, duration=settings.duration
            ),
            settings.seeds,
        )
        samples10[mechanism], samples11[mechanism] = mean_series(runs10), mean_series(runs11)
        records.append({"mechanism": mechanism, **fig10_metrics(runs10), **fig11_metrics(runs11)})
    table = pd.DataFrame(records).set_index("mechanism")
    notes = [
        f"{len(settings.seeds)} trial(s) of {settings.duration:g} s; "
        f"buffers {buffer10} packets (Fig. 10) and {buffer11} packets (Fig. 11)"
    ]
    data = {"vs_red": table.reset_index()} | {
        f"fig10_{m}_samples": s.rename_axis("time").reset_index() for m, s in samples10.items()
    }
    data |= {f"fig11_{m}_samples": s.rename_axis("time").reset_index() for m, s in samples11.items()}
    return Reproduction(
        rows=fig10_rows(table.loc["bred"], table.loc["red"]) + fig11_rows(table.loc["bred"], table.loc["red"]),
        figure=_vs_red_figure(samples10, samples11),
        data=data,
        show=["vs_red"],
        notes=notes,
    )


def fig10_metrics(runs: list[Results]) -> dict[str, float]:
    """Fig. 10 over the trials: F per 2-s sample (mean and worst) and over the whole measurement."""
    per_sample = [fairness(row) for results in runs for row in _measured_samples(results)]
    return {
        "fig10_F_per_2s_sample": float(np.mean(per_sample)),
        "fig10_F_worst_sample": float(np.min(per_sample)),
        "fig10_F_long_run": float(np.mean([fairness(results.flows["goodput_bps"]) for results in runs])),
    }


def fig11_metrics(runs: list[Results]) -> dict[str, float]:
    """Fig. 11 over the trials (Mb/s): the TCPs' total and smallest mean, the CBRs' smallest
    and largest mean, and the largest CBR in any 5-s sample of the measurement."""
    goodput = mean_goodput(runs)
    samples = mean_series(runs)
    measured = samples[samples.index >= runs[0].warmup]
    return {
        "fig11_tcp_total": goodput[TCPS].sum(),
        "fig11_tcp_min": goodput[TCPS].min(),
        "fig11_cbr_min": goodput[CBRS].min(),
        "fig11_cbr_max": goodput[CBRS].max(),
        "fig11_cbr_max_5s": measured[CBRS].to_numpy().max(),
    }


def _measured_samples(results: Results) -> list[np.ndarray]:
    """Each time bin of the measurement window (the latter half): the flows' goodputs."""
    table = results.throughput.pivot_table(index="time", columns="flow", values="bps", fill_value=0.0)
    return [row for row in table[table.index >= results.warmup].to_numpy()]


def fig10_rows(bred: pd.Series, red: pd.Series) -> list[Row]:
    """BRED fairer than RED over 2-s samples, RED fair only in the long run (`bred`, `red`:
    the measures of fig10_metrics)."""
    return [
        Row.ordered(
            "Fig. 10: mean F per 2-s sample, BRED vs RED",
            "BRED > RED (fair over short intervals)",
            [bred.fig10_F_per_2s_sample, red.fig10_F_per_2s_sample],
            relation=">",
            digits=3,
            joiner="vs",
            key="order.fig10.sample_fairness.bred_gt_red",
        ),
        Row.ordered(
            "Fig. 10: worst 2-s sample F, BRED vs RED",
            "BRED > RED",
            [bred.fig10_F_worst_sample, red.fig10_F_worst_sample],
            relation=">",
            digits=3,
            joiner="vs",
            key="order.fig10.worst_sample_fairness.bred_gt_red",
        ),
        Row.at_least(
            "Fig. 10: RED's F over the whole measurement",
            "fair over a large interval",
            red.fig10_F_long_run,
            FIG10_LONG_RUN_F,
            key="fig10.red.long_run_fairness",
        ),
    ]


def fig11_rows(bred: pd.Series, red: pd.Series) -> list[Row]:
    """RED's TCPs shut out by the CBRs, which split the link; BRED's CBRs held to eq. 14
    and its TCPs not shut out (`bred`, `red`: the measures of fig11_metrics)."""
    bound = cbr_bound_mbps(FIG11_LINK, len(CBRS), len(TCPS))
    link11 = FIG11_LINK / MBPS
    split = ((1 - FIG11_RED_SPLIT) * link11 / 3, (1 + FIG11_RED_SPLIT) * link11 / 3)
    return [
        Row.at_most(
            "Fig. 11: RED, TCP total (Mb/s)",
            "completely shut out",
            red.fig11_tcp_total,
            FIG11_RED_TCP_SHARE * link11,
            key="fig11.red.tcp_total",
        ),
        Row.between(
            "Fig. 11: RED, smallest CBR (Mb/s)",
            "split the link (1.5 each)",
            red.fig11_cbr_min,
            *split,
            key="fig11.red.cbr_min",
        ),
        Row.between(
            "Fig. 11: RED, largest CBR (Mb/s)",
            "split the link (1.5 each)",
            red.fig11_cbr_max,
            *split,
            key="fig11.red.cbr_max",
        ),
        Row.at_most(
            "Fig. 11: BRED, largest CBR (Mb/s)",
            f"<= {bound:.3f} (eq. 14)",
            bred.fig11_cbr_max,
            BOUND_SLACK * bound,
            key="fig11.bred.cbr_max",
        ),
        Row.at_most(
            "Fig. 11: BRED, largest CBR in any 5-s sample (Mb/s)",
            f"<= {bound:.3f} (eq. 14)",
            bred.fig11_cbr_max_5s,
            BOUND_SLACK * bound,
            key="fig11.bred.cbr_max_5s",
        ),
        Row.ordered(
            "Fig. 11: TCP total, BRED vs RED (Mb/s)",
            "BRED >> RED",
            [bred.fig11_tcp_total, red.fig11_tcp_total],
            relation=">",
            digits=3,
            joiner="vs",
            key="order.fig11.tcp_total.bred_gt_red",
        ),
        Row.at_least(
            "Fig. 11: BRED, smallest TCP / equal share",
            "not shut out",
            bred.fig11_tcp_min / (link11 / len(SOURCES)),
            SHUT_OUT,
            key="fig11.bred.tcp_min_share",
        ),
    ]


def _vs_red_figure(samples10: Mapping[str, pd.DataFrame], samples11: Mapping[str, pd.DataFrame]) -> Any:
    fig, axes = subplots(2, 2, figsize=(13, 8), sharex=True)
    figures = (
        (samples10, "Fig. 10: 7 TCPs on 0.8 Mb/s", FIG10_SAMPLE),
        (samples11, "Fig. 11: 7 TCP + 3 CBR (4 Mb/s) on 4.5 Mb/s", FIG11_SAMPLE),
    )
    for row, (samples, what, sample) in enumerate(figures):
        for col, (mechanism, letter) in enumerate((("red", "a"), ("bred", "b"))):
            ax, series = axes[row, col], samples[mechanism]
            for name in series.columns:
                ax.plot(series.index + sample / 2, series[name], label=name, linewidth=0.8, **rtt_style(name))
            ax.set(
                title=f"{what}: ({letter}) {PAPER_NAMES[mechanism]}",
                ylabel=f"throughput per {sample:g}-s sample (Mb/s)",
            )
        axes[row, 1].legend(fontsize=7, ncol=2)
    for ax in axes[1]:
        ax.set_xlabel("time (s)")
    fig.tight_layout()
    return fig
