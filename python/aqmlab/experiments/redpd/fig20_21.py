"""RED-PD §7.6, Figs. 20–21: TFRC against TCP, RED vs RED-PD. "we started 4*n sources, n each of
TCP and of TFRC with an RTT of 30 ms and n each of TCP and of TFRC with an RTT of 120 ms. The
target R was 60 ms." Fig. 20: the total throughput of each category "averaged over 5
simulations, as the number of flows increase"; Fig. 21: 30-ms and 120-ms TFRC throughput
normalised by the TCP's of the same RTT, and the drop rate, which rises with the number of
flows. The paper gives no numbers in its text, only the orderings quoted in `CLAIMS`.

The paper leaves the rest open. We take it, before any run, from the authors' own scripts for
these figures, ns-2's `tcl/ex/red-pd/tfrc/tfrc.sh` with the topology and traffic it runs
(`Topology/netTFRC`, `Traffic/TFRC`, `new_Tcp`, `new_TFRC` in `tcl/ex/red-pd/`), because they
are what produced the figures:

- n = 2…8 (`foreach flows ( 8 12 16 20 24 28 32 )`), five runs each (`foreach try ( 1 2 3 4 5 )`),
  500 s each (`set t1=500`); we measure from 20 s (§7.2) where the script counts from 0;
- the n flows of each kind and RTT go to destinations j = 0…n−1 of delays 1 + 0.2j ms, so their
  RTTs are 30 + 0.4j and 120 + 0.4j ms (4 and 49 ms sources, a 10 ms bottleneck); each starts
  uniformly in [0, 10) s (`[$self rnd 10]`);
- RED in packet mode with `set_red_params 1000 50 10 33 ... gentle true`: limit 50, min_th 10,
  max_th 33 (ns-2's w_q 0.002 and max_p 0.1), where `redpd.RED` (ns-2's RED-PD test suite)
  has 100, 5, 15; RED-PD with `rtt 0.060` and its defaults;
- SACK TCP with `window_ 50` and `tcpTick_ 0.01` (`new_Tcp`), otherwise `redpd.TCP` (ns-2's
  agent, an ACK per packet); TFRC with ns-2's defaults: TFRC's `profile = "ns2"`
  (`transport/tfrc_ns2.rs`, ns-2.35's `tfrc.cc` and `tfrc-sink.cc`), 1000-byte packets;
- the drop rate is the bottleneck's ambient drop rate, 20–500 s (`redpd.ambient_drop_rate`); a
  normalised throughput is the ratio of the category totals in one run, averaged over the runs
  (`tfrc.pl`: `tfrc1/tcp1` per try, then the mean).

Rows (reproduction-targets, redpd-fig20-21; qualitative orderings): the drop rate rises with n
under each mechanism; the 30-ms TFRC's normalised throughput is lower at n = 8 than at n = 2
under each; it is at least RED's under RED-PD at every n; at every n the 30-ms TCPs get less
under RED-PD, the 30-ms TFRCs lose a smaller share than they do, the 30-ms TFRCs get less
than the 30-ms TCPs under RED, and both 120-ms categories gain under RED-PD; over the sweep
TFRC gets more than TCP under RED and less under RED-PD. Quick mode: n = 2, 5, 8, two runs of
100 s.

RFC 5348's TFRC, the first reading we ran, is shown beside (keys ending `.rfc5348`, not graded:
the paper did not run it): it put the
30-ms TFRC level with the 30-ms TCP at every drop rate. ns-2's `tfrc.cc` takes t_RTO for the
equation not as 4R but as TCP's timeout, SRTT + 4·RTTVAR of RTT samples rounded to `tcp_tick_`
(0.1 s, which the scripts leave at its default): 0.3 s for both RTTs, 10R at 30 ms and 2.5R at
120 ms. The timeout term grows as p^1.5, so this lowers the short flows' rate more as the drop
rate rises, as the paper reports; the ns2 profile runs it with ns-2's other rules (its loss
detection at the first later packet, slow start, increase by a packet per RTT, reports).
"""

from __future__ import annotations

from dataclasses import replace
from types import SimpleNamespace
from typing import Any

import pandas as pd

from ...plots import subplots
from ...results import MBPS, Results
from .. import Reproduction, Row, RunSettings, experiment, run_seeds
from . import (
    BOTTLENECK_DELAY,
    PACKET,
    RED,
    SINK_DELAY,
    TCP,
    WARMUP,
    ambient_drop_rate,
    red_pd_qdisc,
    scenario,
    tcp,
)

# §7.6, quoted: the orderings the rows check (the figures' values are not in the text).
CLAIMS = {
    "drop": "An increase in the number of sources is accompanied by a corresponding increase in the ambient drop rate",
    "tfrc30": "the performance of the short RTT TFRC flow deteriorates as the drop rate increases, with "
    "both RED and RED-PD. The relative TFRC throughput is better with RED-PD.",
    "tcp30": "this improvement is largely because of the reduction in throughput of the 30-ms TCP flows "
    "with RED-PD. The drop in the absolute bandwidth obtained by the short-RTT TFRC flows is not "
    "significant (as they are already sending at a rate lower than the TCP of same RTT).",
    "gain120": "There is a bandwidth gain seen by both long-RTT TFRC and TCP flows because of RED-PD.",
    "bias": "from a mild bias towards TFRC (with RED) to a mild bias towards TCP (with RED-PD)",
}
TARGET_RTT = 0.060  # §7.6: "The target R was 60 ms"
RTTS = {"30ms": 0.030, "120ms": 0.120}  # §7.6
RTT_STEP = 0.0004  # netTFRC: destination j adds 0.2j ms each way
START_SPREAD = 10.0  # Traffic/TFRC: `[$self rnd 10]`
# Topology/netTFRC's RED: `set_red_params $redpdq_ 1000 50 10 33 false false true`.
SCRIPT_RED: dict[str, Any] = RED | {"limit": 50, "min_th": 10, "max_th": 33}
# new_Tcp: `$tcp set window_ 50`, `$tcp set tcpTick_ 0.01`.
SCRIPT_TCP: dict[str, Any] = TCP | {"window": 50, "timer_granularity": 0.01}
MECHANISMS = ("red", "red_pd")
# The two TFRC readings, by row-key suffix and TFRC profile: ns-2's, which the paper ran, and
# RFC 5348's (t_RTO = 4R, chosen first; module docstring).
READINGS: dict[str, tuple[str, str]] = {"": ("ns-2 TFRC", "ns2"), ".rfc5348": ("RFC 5348 TFRC", "rfc5348")}
CATEGORIES = ("tfrc_30ms", "tcp_30ms", "tfrc_120ms", "tcp_120ms")
FULL = RunSettings(seeds=(1, 2, 3, 4, 5), duration=500.0, warmup=WARMUP, sweep=(2, 3, 4, 5, 6, 7, 8))
QUICK = RunSettings(seeds=(1, 2), duration=100.0, warmup=WARMUP, sweep=(2, 5, 8))


def tfrc(name: str, rtt: float, profile: str) -> dict:
    """A TFRC flow of `profile` whose RTT (propagation) is `rtt`, made up as `redpd.tcp` makes a TCP's."""
    access = rtt / 2 - BOTTLENECK_DELAY - SINK_DELAY
    return {
        "name": name,
        "type": "tfrc",
        "profile": profile,
        "packet_size": PACKET,
        "access_delay": access,
        "start_jitter": START_SPREAD,
    }


def fig20_21_scenario(n: int, mechanism: str, duration: float, profile: str = "ns2") -> dict:
    """n TFRC and n TCP flows at each of 30 and 120 ms (+0.4j ms for destination j)."""
    flows = []
    for group, rtt in RTTS.items():
        for j in range(n):
            path_rtt = rtt + j * RTT_STEP
            flows += [
                tfrc(f"tfrc_{group}[{j}]", path_rtt, profile),
                tcp(f"tcp_{group}[{j}]", path_rtt, tcp=SCRIPT_TCP, start_jitter=START_SPREAD),
            ]
    qdisc = {"type": "red", **SCRIPT_RED} if mechanism == "red" else red_pd_qdisc(red=SCRIPT_RED, target_rtt=TARGET_RTT)
    return scenario(f"redpd-fig20-21-n{n}-{mechanism}", flows, qdisc, duration, WARMUP)


def fig20_21_metrics(results: Results) -> dict[str, float]:
    """Each category's total goodput (Mb/s), the normalised 30 and 120 ms TFRC, the drop rate."""
    flows = results.flows
    category = flows["name"].str.replace(r"\[\d+\]$", "", regex=True)
    total = flows.groupby(category)["goodput_bps"].sum() / MBPS
    measures = {name: float(total[name]) for name in CATEGORIES}
    for group in RTTS:
        measures[f"norm_{group}"] = measures[f"tfrc_{group}"] / measures[f"tcp_{group}"]
    measures["drop_rate"] = ambient_drop_rate(results)
    return measures


def _every_n(metric: str, claim: str, key: str, table: pd.DataFrame, holds: Any, shown: str) -> Row:
    """A row that holds when `holds(row)` is true at every n; `shown(row)` its value at one n.
    ns-2's value, the same measures per n (`ns2_reference`), is graded with the same `holds`."""
    passed = all(holds(row) for row in table.itertuples())
    ours = "; ".join(f"n={row.n}: {shown(row)}" for row in table.itertuples())
    check = lambda per_n: all(holds(SimpleNamespace(**at_n)) for at_n in per_n)  # noqa: E731
    return Row(metric, claim, ours, "at every n", bool(passed), key, check=check)


def fig20_21_rows(table: pd.DataFrame) -> list[Row]:
    """`table`: one row per n, measures of RED and RED-PD as `<measure>_<mechanism>`."""
    low, high = table.iloc[0], table.iloc[-1]
    rows = []
    for m, name in (("red", "RED"), ("red_pd", "RED-PD")):
        rows += [
            Row.ordered(
                f"{name}: drop rate as n grows",
                CLAIMS["drop"],
                [{f"n={row.n}": getattr(row, f"drop_rate_{m}")} for row in table.itertuples()],
                digits=4,
                key=f"drop.rises.{m}",
            ),
            Row.ordered(
                f"{name}: 30-ms TFRC/TCP falls as the drop rate rises",
                CLAIMS["tfrc30"],
                [{f"n={low.n:g}": low[f"norm_30ms_{m}"]}, {f"n={high.n:g}": high[f"norm_30ms_{m}"]}],
                relation=">",
                digits=3,
                key=f"tfrc30.falls.{m}",
            ),
        ]
    rows += [
        _every_n(
            "30-ms TFRC/TCP: RED-PD ≥ RED",
            CLAIMS["tfrc30"],
            "ratio30.red_pd_ge_red",
            table,
            lambda r: r.norm_30ms_red_pd >= r.norm_30ms_red,
            lambda r: f"{r.norm_30ms_red_pd:.3f} vs {r.norm_30ms_red:.3f}",
        ),
        _every_n(
            "30-ms TCPs (Mb/s): less under RED-PD",
            CLAIMS["tcp30"],
            "tcp30.less_with_red_pd",
            table,
            lambda r: r.tcp_30ms_red_pd < r.tcp_30ms_red,
            lambda r: f"{r.tcp_30ms_red_pd:.2f} vs {r.tcp_30ms_red:.2f}",
        ),
        _every_n(
            "30-ms TFRCs lose a smaller share than 30-ms TCPs under RED-PD",
            CLAIMS["tcp30"],
            "tfrc30.loses_less",
            table,
            lambda r: r.tfrc_30ms_red_pd / r.tfrc_30ms_red > r.tcp_30ms_red_pd / r.tcp_30ms_red,
            lambda r: (
                f"TFRC {r.tfrc_30ms_red_pd / r.tfrc_30ms_red:.2f}, TCP {r.tcp_30ms_red_pd / r.tcp_30ms_red:.2f} of RED"
            ),
        ),
        _every_n(
            "RED: 30-ms TFRC/TCP below 1",
            CLAIMS["tcp30"],
            "tfrc30.below_tcp30",
            table,
            lambda r: r.norm_30ms_red < 1,
            lambda r: f"{r.norm_30ms_red:.3f}",
        ),
    ]
    for kind in ("tfrc", "tcp"):
        rows.append(
            _every_n(
                f"120-ms {kind.upper()}s (Mb/s): more under RED-PD",
                CLAIMS["gain120"],
                f"gain120.{kind}",
                table,
                lambda r, kind=kind: getattr(r, f"{kind}_120ms_red_pd") > getattr(r, f"{kind}_120ms_red"),
                lambda r, kind=kind: (
                    f"{getattr(r, f'{kind}_120ms_red_pd'):.2f} vs {getattr(r, f'{kind}_120ms_red'):.2f}"
                ),
            )
        )
    for m, name, relation in (("red", "RED", ">"), ("red_pd", "RED-PD", "<")):
        tfrc = sum(table[f"tfrc_{g}_{m}"].sum() for g in RTTS)
        tcp_total = sum(table[f"tcp_{g}_{m}"].sum() for g in RTTS)
        rows.append(
            Row.ordered(
                f"{name}: TFRC vs TCP, summed over n (Mb/s)",
                CLAIMS["bias"],
                [{"TFRC": tfrc}, {"TCP": tcp_total}],
                relation=relation,
                digits=1,
                key=f"bias.{m}",
            )
        )
    return rows


@experiment("redpd-fig20-21", "RED-PD Figs. 20–21: TFRC vs TCP at 30 and 120 ms, RED vs RED-PD")
def fig20_21(quick: bool) -> Reproduction:
    settings = QUICK if quick else FULL
    rows, tables, table_of = [], {}, {}
    for suffix, (reading, profile) in READINGS.items():
        table = fig20_21_table(settings, profile)
        tables[f"fig20_21{suffix.replace('.', '_')}"] = table
        for row in fig20_21_rows(table):
            # RFC 5348's TFRC is not the one the paper ran: its rows are shown beside, not graded.
            graded = row.graded and profile == "ns2"
            rows.append(replace(row, metric=f"{row.metric} [{reading}]", key=row.key + suffix, graded=graded))
            table_of[rows[-1].key] = table
    notes = [
        f"Means over {len(settings.seeds)} runs of {settings.duration:g} s per n, measured from {WARMUP:g} s; "
        "normalised = TFRC total / TCP total of the same RTT in a run.",
        "ns-2's TFRC, the paper's, is graded; RFC 5348's (our first reading) is shown beside, not graded.",
    ]
    return Reproduction(
        rows=rows,
        figure=_figure(tables),
        data=tables,
        show=list(tables),
        notes=notes,
        explain=lambda row: _reason(row.key, table_of[row.key]),
    )


def fig20_21_table(settings: RunSettings, profile: str) -> pd.DataFrame:
    """One row per n: each measure's mean over the runs, as `<measure>_<mechanism>`."""
    records = []
    for n in settings.sweep:
        record: dict[str, float] = {"n": n}
        for m in MECHANISMS:
            runs = run_seeds(fig20_21_scenario(n, m, settings.duration, profile), settings.seeds)
            means = pd.DataFrame([fig20_21_metrics(r) for r in runs]).mean()
            record |= {f"{measure}_{m}": float(value) for measure, value in means.items()}
        records.append(record)
    return pd.DataFrame(records)


# The measures a failing row's reason shows, by the row key's first part.
REASON_MEASURES = {
    "drop": ("drop_rate",),
    "tfrc30": ("norm_30ms", "tfrc_30ms", "tcp_30ms"),
    "ratio30": ("norm_30ms", "tfrc_30ms", "tcp_30ms"),
    "tcp30": ("tfrc_30ms", "tcp_30ms"),
    "gain120": ("tfrc_120ms", "tcp_120ms"),
    "bias": CATEGORIES,
}


def _reason(key: str, table: pd.DataFrame) -> str:
    """The measures behind row `key` per n, RED → RED-PD (totals in Mb/s)."""
    measures = REASON_MEASURES[key.split(".")[0]]
    per_n = [
        f"n={row.n}: "
        + ", ".join(f"{c} {getattr(row, f'{c}_red'):.3f}→{getattr(row, f'{c}_red_pd'):.3f}" for c in measures)
        for row in table.itertuples()
    ]
    return "RED→RED-PD per n: " + "; ".join(per_n)


def _figure(tables: dict[str, pd.DataFrame]) -> Any:
    """Fig. 20 for the ns-2 reading; Fig. 21's panels for both readings."""
    fig, axes = subplots(2, 2, figsize=(10, 7), sharex=True)
    for (name, table), (reading, _) in zip(tables.items(), READINGS.values(), strict=True):
        flows = 4 * table["n"]
        for m, style in (("red", "--"), ("red_pd", "-")):
            label = f"{'RED' if m == 'red' else 'RED-PD'}, {reading}"
            if name == "fig20_21":
                for c in CATEGORIES:
                    axes[0, 0].plot(flows, table[f"{c}_{m}"], style, marker="o", label=f"{c} {label}")
            axes[0, 1].plot(flows, table[f"norm_30ms_{m}"], style, marker="o", label=label)
            axes[1, 0].plot(flows, table[f"norm_120ms_{m}"], style, marker="o", label=label)
            axes[1, 1].plot(flows, table[f"drop_rate_{m}"], style, marker="o", label=label)
    axes[0, 0].set(ylabel="total throughput (Mb/s)", title="Fig. 20")
    axes[0, 0].legend(fontsize=6)
    axes[0, 1].set(ylabel="30-ms TFRC / TCP", title="Fig. 21 (top)")
    axes[1, 0].set(xlabel="flows (4n)", ylabel="120-ms TFRC / TCP", title="Fig. 21 (middle)")
    axes[1, 1].set(xlabel="flows (4n)", ylabel="drop rate", title="Fig. 21 (bottom)")
    for ax in axes.flat[1:]:
        ax.legend(fontsize=7)
    fig.tight_layout()
    return fig
