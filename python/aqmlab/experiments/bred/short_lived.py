"""BRED §5.1, Fig. 6: short-lived TCP and CBR flows on 4.5 Mb/s, RED (a) vs BRED (b), the
schedule of FIG6_SCHEDULE, CBRs at the link rate, 5-s samples. Per period between schedule
changes: each CBR's average against eq. 14's bound for the flows then active, and the TCPs'
total under BRED and RED. The buffer is unstated: 450 packets (400 ms, as in Fig. 11 on the
same link).

Setup and the choices where the paper is silent: `bred/__init__.py`.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping
from typing import Any

import pandas as pd

from ...plots import subplots
from ...results import MBPS
from .. import PAPER_NAMES, Reproduction, Row, RunSettings, experiment, run_seeds
from . import (
    BOUND_SLACK,
    CBRS,
    DURATION,
    MECHANISMS,
    SHUT_OUT,
    SOURCES,
    TCPS,
    TRIALS,
    buffer_packets,
    cbr_bound_mbps,
    mean_series,
    rtt_style,
    ten_sources_scenario,
)

FIG6_LINK = 4.5e6
FIG6_SAMPLE = 5.0  # "with a sampling interval of 5 sec"
# §5.1: "tcp1, tcp2 and tcp3 start at time 0 while tcp6, tcp7, tcp8 and tcp9 start at 30s.
# ... cbr4 starts at 10s, cbr5 at 20s and cbr10 at 50s ... tcp7, tcp8 and tcp9 end at 50s
# while cbr 10 ends at 70s. All the other flows are still active when the simulation ends."
FIG6_SCHEDULE = {
    "tcp1": (0, 100), "tcp2": (0, 100), "tcp3": (0, 100), "cbr4": (10, 100), "cbr5": (20, 100),
    "tcp6": (30, 100), "tcp7": (30, 50), "tcp8": (30, 50), "tcp9": (30, 50), "cbr10": (50, 70),
}  # fmt: skip
FIG6_CBR_RATE = 4.5e6  # "an input rate of 4.5Mbps each which is also the same as the rate of the backbone link"
# Eq. 14's bounds the paper prints for the periods (Mb/s); the first two periods' are not printed.
PAPER_FIG6_BOUNDS = {(30, 50): 1.0174, (50, 70): 1.0263, (70, 100): 1.3295}
# While CBRs at the link rate are active: BRED leaves the TCPs at least 20 % of the link
# and RED at most 10 % (reproduction-targets' bands; the figure is the only evidence).
FIG6_BRED_TCP_SHARE, FIG6_RED_TCP_SHARE = 0.2, 0.1

# The schedule fixes the duration (100 s, §5.1); quick runs keep it and run one trial.
FULL = RunSettings(seeds=range(1, TRIALS + 1), duration=DURATION)
QUICK = RunSettings(seeds=(1,), duration=DURATION)


def periods(schedule: Mapping[str, tuple[float, float]], duration: float) -> list[tuple[float, float]]:
    """The (start, end) of each period between changes of `schedule`, up to `duration`."""
    edges = sorted({t for span in schedule.values() for t in span if 0 < t < duration} | {0.0, duration})
    return list(itertools.pairwise(edges))


@experiment("bred-short-lived", "BRED Fig. 6: short-lived TCP and CBR flows on 4.5 Mb/s, RED vs BRED, 5-s samples")
def short_lived(quick: bool) -> Reproduction:
    settings = QUICK if quick else FULL
    buffer = buffer_packets(FIG6_LINK)
    series = {}
    for mechanism, qdisc in MECHANISMS.items():
        scenario = ten_sources_scenario(
            FIG6_LINK,
            qdisc(buffer),
            FIG6_CBR_RATE,
            sample=FIG6_SAMPLE,
            schedule=FIG6_SCHEDULE,
            duration=settings.duration,
        )
        series[mechanism] = mean_series(run_seeds(scenario, settings.seeds))
    table = pd.DataFrame(period_metrics(series, settings.duration))
    notes = [
        f"{len(settings.seeds)} trial(s); buffer {buffer} packets; per-period averages of the 5-s samples "
        "(each period starts with the flows' slow start)"
    ]
    data = {"fig6_periods": table} | {
        f"fig6_{m}_samples": samples.rename_axis("time").reset_index() for m, samples in series.items()
    }
    data["fig6_summary"] = table[
        ["period", "active_cbr", "active_tcp", "bound", "bred_cbr_max", "bred_tcp_total", "red_tcp_total"]
    ]
    return Reproduction(
        rows=short_lived_rows(table), figure=_fig6_figure(series, table), data=data, show=["fig6_summary"], notes=notes
    )


def period_metrics(series: Mapping[str, pd.DataFrame], duration: float) -> list[dict[str, Any]]:
    """Per period: the active flows, eq. 14's bound for them, and per mechanism (`series`:
    its mean 5-s samples) the largest CBR average and the TCPs' total and smallest share."""
    records = []
    for start, end in periods(FIG6_SCHEDULE, duration):
        active = [s for s in SOURCES if FIG6_SCHEDULE[s][0] <= start and end <= FIG6_SCHEDULE[s][1]]
        cbrs, tcps = [s for s in active if s in CBRS], [s for s in active if s in TCPS]
        record = {
            "period": f"{start:g}-{end:g} s",
            "start": start,
            "end": end,
            "active_cbr": len(cbrs),
            "active_tcp": len(tcps),
        }
        record["bound"] = cbr_bound_mbps(FIG6_LINK, len(cbrs), len(tcps)) if cbrs else float("nan")
        for mechanism, samples in series.items():
            mean = samples[(samples.index >= start) & (samples.index < end)].mean()
            record[f"{mechanism}_cbr_max"] = mean[cbrs].max() if cbrs else float("nan")
            record[f"{mechanism}_tcp_total"] = mean[tcps].sum()
            record[f"{mechanism}_tcp_min_share"] = mean[tcps].min() / (FIG6_LINK / MBPS / len(active))
        records.append(record)
    return records


def short_lived_rows(table: pd.DataFrame) -> list[Row]:
    """Per period with CBRs (`table`: period_metrics): eq. 14's bound where the paper prints
    it, BRED's CBRs under it and its TCPs not shut out, RED's TCPs shut out."""
    rows = []
    link = FIG6_LINK / MBPS
    for span in table[table["active_cbr"] > 0].itertuples():
        key = f"p{span.start:g}_{span.end:g}"
        paper = PAPER_FIG6_BOUNDS.get((span.start, span.end))
        if paper is not None:
            rows.append(
                Row.within(
                    f"eq. 14 bound, {span.period} ({span.active_cbr} CBR + {span.active_tcp} TCP) (Mb/s)",
                    paper,
                    round(span.bound, 4),
                    0.00005,
                    key=f"eq14.bound.{key}",
                )
            )
        rows += [
            Row.at_most(
                f"BRED, {span.period}: largest CBR average (Mb/s)",
                f"<= {span.bound:.4f} (eq. 14)",
                span.bred_cbr_max,
                BOUND_SLACK * span.bound,
                key=f"bred.{key}.cbr_max",
            ),
            Row.at_least(
                f"BRED, {span.period}: TCP total (Mb/s)",
                "not shut out",
                span.bred_tcp_total,
                FIG6_BRED_TCP_SHARE * link,
                key=f"bred.{key}.tcp_total",
            ),
            Row.at_most(
                f"RED, {span.period}: TCP total (Mb/s)",
                "shut out",
                span.red_tcp_total,
                FIG6_RED_TCP_SHARE * link,
                key=f"red.{key}.tcp_total",
            ),
        ]
    rows.append(
        Row.at_least(
            "BRED: smallest active TCP / equal share, any period",
            "not shut out",
            table["bred_tcp_min_share"].min(),
            SHUT_OUT,
            key="bred.tcp_min_share",
        )
    )
    return rows


def _fig6_figure(series: Mapping[str, pd.DataFrame], table: pd.DataFrame) -> Any:
    fig, axes = subplots(1, 2, figsize=(13, 4.5), sharey=True)
    for ax, (mechanism, letter) in zip(axes, (("red", "a"), ("bred", "b")), strict=True):
        samples = series[mechanism]
        for name in SOURCES:
            ax.plot(samples.index + FIG6_SAMPLE / 2, samples[name], label=name, linewidth=0.8, **rtt_style(name))
        for span in table[table["active_cbr"] > 0].itertuples():
            ax.hlines(span.bound, span.start, span.end, colors="red", linestyles="--", linewidth=1)
        ax.set(
            title=f"({letter}) {PAPER_NAMES[mechanism]}",
            xlabel="time (s)",
            ylabel="throughput per 5-s sample (Mb/s)",
        )
    axes[1].plot([], [], "r--", label="eq. 14 bound")
    axes[1].legend(fontsize=7, ncol=2)
    fig.suptitle("BRED Fig. 6: short-lived flows, CBRs at 4.5 Mb/s over a 4.5 Mb/s link")
    fig.tight_layout()
    return fig
