"""RED-PD §7.3, Fig. 16: adapting the dropping probability. "A UDP flow was started with the
initial rate of 0.25 Mbps. At t = 50s the UDP flow increases its sending rate to 4 Mbps, and
at t = 250 it decreases its sending rate back to 0.25 Mbps. Other traffic on the link
consisted of 9 TCP flows with the same RTTs as above"; two runs, the §6.2 test off and on.
"The response time for cutting down is much less than that computed in Section 5.2 mainly
because Assumption 1 of a fixed ambient drop rate does not hold"; "if the unresponsive test is
on, the UDP flow is cut down much sooner and released later"; "it took about three seconds for
RED-PD to declare the UDP flow unresponsive after it increased its sending rate."

Measures: the f(R,p) line is at the ambient drop rate over the measurement window, 20–300 s
(`ambient_drop_rate`, §7.2's "not before 20 seconds"). The cut-down time is the first 1-s bin
after 50 s in which the UDP receives at most 1.5·f(R,p): α = 1.5, eq. 6's limit of validity
(§5.2), a level we chose after
seeing the trajectories, so α = 1 is shown beside it as an informative row. Eq. 6's value is
computed at the same α from the ambient drop rate before the change (20–50 s: the output
queue's drops over its arrivals) with γ = 4 Mb/s over f(R,p) there. The release time is when
RED-PD unmonitors the flow (`qdisc_flows` `last_released_at`) minus 250 s; the declaration
time is `unresponsive_at` minus 50 s.

Tolerances (reproduction-targets, redpd-fig16): declaration within 1–6 s of the change;
cut-down sooner and release later with the test on (orderings); the cut-down faster than
eq. 6. Runs of 300 s (the release with the test on takes tens of seconds); quick mode is the
same (two runs take about a second).
"""

from __future__ import annotations

from typing import Any

import pandas as pd

import aqmlab

from ...plots import subplots
from ...results import MBPS, Results
from .. import Reproduction, Row, RunSettings, experiment
from . import (
    START_SPREAD,
    TCP_RTTS,
    WARMUP,
    ambient_drop_rate,
    binned,
    cbr,
    cutdown_time,
    first_at_or_below,
    flow_record,
    red_pd_qdisc,
    reference_bps,
    scenario,
    tcp,
)

UP, DOWN = 50.0, 250.0  # §7.3
LOW, HIGH = 0.25 * MBPS, 4 * MBPS  # §7.3
DECLARED, DECLARED_BAND = 3.0, (1.0, 6.0)  # "about three seconds"; reproduction-targets
ALPHA, ALPHA_ALT = 1.5, 1.0  # module docstring
UDP = 9  # the UDP flow's id (after the 9 TCPs)
FULL = RunSettings(duration=300.0, warmup=WARMUP)
QUICK = FULL


def fig16_scenario(test: bool, duration: float) -> dict:
    flows = [tcp(f"tcp{i}", rtt, start_jitter=START_SPREAD) for i, rtt in enumerate(TCP_RTTS)]
    flows.append(cbr("udp", LOW, rate_changes=[{"at": UP, "rate": HIGH}, {"at": DOWN, "rate": LOW}]))
    return scenario(
        f"redpd-fig16-{'on' if test else 'off'}", flows, red_pd_qdisc(unresponsive_test=test), duration, WARMUP
    )


def fig16_metrics(results: Results) -> dict[str, float]:
    f = reference_bps(ambient_drop_rate(results))
    received = binned(results, UDP) / f
    record = flow_record(results, UDP)
    return {
        "f_mbps": f / MBPS,
        "cutdown": first_at_or_below(received, UP + 1, ALPHA) - UP,
        "cutdown_alt": first_at_or_below(received, UP + 1, ALPHA_ALT) - UP,
        "release": record["last_released_at"] - DOWN,
        "declared": record["unresponsive_at"] - UP,
    }


def pre_change_drop_rate() -> float:
    """The ambient drop rate from 20 to 50 s: the test-off run cut at 50 s, measured from 20 s."""
    return ambient_drop_rate(aqmlab.run(fig16_scenario(False, UP)))


@experiment("redpd-fig16", "RED-PD Fig. 16: a UDP 0.25 → 4 → 0.25 Mb/s beside 9 TCPs, unresponsive test off/on")
def fig16(quick: bool) -> Reproduction:
    settings = QUICK if quick else FULL
    runs = {test: aqmlab.run(fig16_scenario(test, settings.duration)) for test in (False, True)}
    on, off = fig16_metrics(runs[True]), fig16_metrics(runs[False])
    p0 = pre_change_drop_rate()
    eq6 = cutdown_time(HIGH / reference_bps(p0), ALPHA, p0)
    table = pd.DataFrame([{"test": "off", **off}, {"test": "on", **on}])
    notes = [
        f"f(R,p) at the whole-run ambient drop rate: {off['f_mbps']:.2f} Mb/s (off), {on['f_mbps']:.2f} Mb/s (on); "
        f"pre-change ambient p {p0:.4f}, eq. 6 at α = {ALPHA:g}: {eq6:.1f} s."
    ]
    return Reproduction(
        rows=fig16_rows(off, on, eq6),
        figure=_figure(runs),
        data={"fig16": table},
        show=["fig16"],
        notes=notes,
        explain=lambda row: f"test off {off}; test on {on}; pre-change p {p0:.4f}",
    )


def fig16_rows(off: dict[str, float], on: dict[str, float], eq6: float) -> list[Row]:
    """When the test declares the flow, and the test's effect: a faster cut-down, a slower
    release, and with it off a cut-down faster than eq. 6 (`eq6`, at the pre-change p)."""
    return [
        Row.between(
            "Declared unresponsive (s after the rise)", DECLARED, on["declared"], *DECLARED_BAND, key="declared"
        ),
        Row.ordered(
            f"Cut-down to {ALPHA:g}·f(R,p) (s): test on < off",
            "on < off",
            [{"on": on["cutdown"]}, {"off": off["cutdown"]}],
            digits=0,
            key="order.cutdown",
        ),
        Row.ordered(
            f"Cut-down to {ALPHA_ALT:g}·f(R,p) (s): test on < off",
            "on < off",
            [{"on": on["cutdown_alt"]}, {"off": off["cutdown_alt"]}],
            digits=0,
            key="order.cutdown",
        ).informative(f"α = {ALPHA_ALT:g}"),
        Row.ordered(
            "Release (s after the cut): test off < on",
            "off < on",
            [{"off": off["release"]}, {"on": on["release"]}],
            digits=1,
            key="order.release",
        ),
        Row.ordered(
            f"Cut-down to {ALPHA:g}·f(R,p), test off (s) vs eq. 6 at the pre-change p",
            "much less than eq. 6",
            [{"ours": off["cutdown"]}, {"eq. 6": eq6}],
            digits=1,
            key="order.faster_than_eq6",
        ),
    ]


def _figure(runs: dict[bool, Results]) -> Any:
    fig, ax = subplots(figsize=(7, 4))
    for test, results in runs.items():
        received = binned(results, UDP) / MBPS
        ax.plot(received.index, received.values, label=f"unresponsive test {'on' if test else 'off'}", linewidth=0.8)
    ax.set(xlabel="time (s)", ylabel="UDP received (Mb/s, 1-s bins)", title="RED-PD Fig. 16")
    ax.legend()
    fig.tight_layout()
    return fig
