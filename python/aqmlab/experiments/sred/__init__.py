"""SRED (Ott, Lakshman, Wong, "SRED: Stabilized RED", INFOCOM 1999), §VI–§VIII: the setup
shared by the paper's simulations, one module per experiment: `sred-fig2-8`, `sred-fig9-11`,
`sred-fig12-14`, `sred-fig15-16`, `sred-fig17-21`, `sred-fig22-24`, `sred-table1`,
`sred-table2` and `sred-pmax` (sred/*.py). Runs that serve several experiments (the N-sweep
of Figs. 2–14, the 2000-source web run of Figs. 17–22, the run of Tables I and II) are made
once per process by the cached `persistent_run`, `web_run` and `misbehaving_run`.

The network (§VI, Fig. 1), as the dumbbell with per-flow access delays:

- two routers joined by a DS3 link, 45 Mb/s, 1 ms; Router 1's buffer ".5 Mbytes ... a
  buffer drain time of 88.8 msec", i.e. B = 500 000 bytes (`BUFFER`);
- host–router links also DS3; symmetrical runs: every host link 10 ms (minimal RTT 42 ms);
  asymmetrical runs: 1 ms for the pair H1–H1*, rising linearly to 20 ms for the last pair
  (RTT 6 → 82 ms; the paper's sentence begins "For the symmetrical runs" but describes
  these);
- MSS 536 bytes, packets of 576 bytes; the buffer sampled every 10 ms (§VI-A);
- SRED with the paper's settings, the qdisc's defaults (M = 1000, p = 0.25, α = 1/M, K = 1,
  p_max = 0.15, Full SRED of eq. 5.1); RED of §VI-A: "w = 1/500", "p_max = .075", drop
  probability from 0 at B/6 to p_max at B/3 (byte mode over the same 500 000-byte buffer;
  otherwise Floyd–Jacobson's RED as our `red` implements it, count-based spacing included).

Values the paper leaves unstated, and our choices (made before any run):

- TCP (`TCP`, every experiment): the paper names no variant, delayed-ACK policy or timer
  granularity. Its §VII connection reset ("ssthresh ... 64KBytes, cwnd ... 1 MSS, ...
  the estimated RTT is reset to 3 sec, with an estimated standard deviation of 0 sec")
  is a BSD-derived stack's opening state (4.4BSD: TCPTV_SRTTDFLT 3 s, ssthresh = the
  64 KB maximum window), so we run one of that lineage: Reno (fast recovery, the BSD of
  the paper's time; NewReno's RFC 2582 is from 1999), congestion avoidance +1/cwnd per ACK
  (BSD's maxseg²/cwnd, RFC 2581), delayed ACKs (BSD acknowledges every second segment;
  our 100 ms timer is the mean of BSD's 200 ms fast timer), and BSD's coarse RTT timer:
  the `ns2` profile, whose estimator is a port of BSD's tcp_xmit_timer (one segment timed
  per RTT, integer SRTT/RTTVAR in ticks, RTO at least two ticks) with BSD's 500 ms tick
  (PR_SLOWHZ = 2), so the RTO is at least 1 s. Initial RTO 3 s and ssthresh 64 KB =
  65 536 / 536 = 122 segments at the start of every flow and every file (§VII). Receiver
  window 10 000 segments: §VI's "advertised windows ... large enough not to be a
  constraint" (a 64 KB window would be one: 10 flows share about 740 KB of pipe and buffer).
- Durations: 100 s for every run, the only length the paper states (§VIII: "The
  simulation was done for 100 seconds"); measurements after the first 10 s, the initial
  transient the paper names for Figs. 2–11 ("an initial transient period of 10 seconds"),
  and after 15 s for Tables I–II as §VIII says. One run per point (the paper averages
  nothing). Quick mode: 30 s, same warm-up.
- Persistent sources all start at exactly t = 0 (§VI-A). Web-like sources (§VII) start
  their first file uniformly within the first 3.1 s (the paper's "actual mean think time
  about 3.1 seconds", as if each had just finished a think time; a start at exactly 0 for
  2000 sources is a surge the paper does not describe). Issue 27 found, after seeing
  results, that this start is itself a surge: every source starts a file within 3.1 s, and
  the heavy-tailed think times keep the file rate above the stationary rate for the whole
  run. So the web experiments also run the other reading, `start = "stationary"`: each
  source's first file at the residual of a think-time renewal process begun long before
  t = 0 (the equilibrium of eq. 7.2, transfers taken as instantaneous), and both are graded.

The paper's own arithmetic (`web_offer`): eq. 7.1's mean file is 14 954 B, 16 365 B on the
wire in 576-byte packets; eq. 7.2's mean think time after the 50 ms re-draw is 4.1 s (the
paper prints "about 3.1 seconds"). With a mean transfer time T, n sources offer
n·16 365·8/(4.1 + T) bit/s and n·T/(4.1 + T) of them are active.
- The §VIII UDP source sends evenly every 4 ms ("exactly once every 4 msec"), from t = 0.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import cache
from typing import Any

import numpy as np
import pandas as pd

import aqmlab

from ...results import Results
from .. import RunSettings

LINK_RATE = 45e6  # §VI: DS3, 45 Mbit/s, bottleneck and host links
BOTTLENECK_DELAY = 0.001  # §VI: "a link propagation delay of 1 msec"
BUFFER = 500_000  # bytes: §VI's ".5 Mbytes ... drain time of 88.8 msec"
MSS = 536  # §VI: "an MSS ... of 536 bytes"
PACKET = MSS + 40  # §VI: "576 bytes long with 40 bytes being the typical header length"
SYMMETRIC_HOST_DELAY = 0.010  # §VI: "all links between a host and a router ... 10 msec"
ASYMMETRIC_HOST_DELAY = (0.001, 0.020)  # §VI: "1 msec ... increase linearly to 20 msec"
SAMPLE = 0.01  # §VI-A: "The buffer state is plotted using 10 msec samples"
LOW_BAND, HIGH_BAND = BUFFER / 6, BUFFER / 3  # eq. 4.3's band edges (83 333 and 166 667 bytes)
P_MAX = 0.15  # §IV: "a parameter which in this paper we always choose equal to .15"

# The one TCP of every experiment (module docstring): a BSD-derived Reno stack.
TCP: dict[str, Any] = {
    "profile": "ns2",
    "variant": "reno",
    "congestion_avoidance": "per_ack",
    "delayed_ack": True,
    "timer_granularity": 0.5,
    "initial_rto": 3.0,
    "initial_ssthresh": 65536 // MSS,
    "window": 10_000,
}

DURATION = 100.0  # s (§VIII, the only duration the paper states)
WARMUP = 10.0  # s (§VI-A: "an initial transient period of 10 seconds")
TABLE_WARMUP = 15.0  # s (§VIII: "the first 15 seconds are not used for statistics collection")
QUICK_DURATION = 30.0
WEB_START_SPREAD = 3.1  # s (§VII: "The resulting actual mean think time was about 3.1 seconds")
# Eq. 7.1: P{F > f} = 1/(1 + (f/median)^shape) bytes; eq. 7.2: think times, a mixture of two
# such laws as (weight, median s, shape), drawn again while below 50 ms (§VII).
FILE_MEDIAN, FILE_SHAPE = 2190.0, 1.15066
THINK = ((0.4953916, 1.0, 1.243437), (0.5046084, 0.0245032, 3.252665))
THINK_MIN = 0.05
WEB_STARTS = ("surge", "stationary")  # the two readings of the sources' start (module docstring)
# How long before t = 0 the stationary start's renewal process begins: ~2 400 mean think
# times; a think time longer than this has probability 6e-6.
STATIONARY_HISTORY = 1e4
UDP_INTERVAL = 0.004  # s (§VIII: "sends a packet exactly once every 4 msec")

# §VI-A: Figs. 2–8's numbers of persistent sources; Figs. 9–11 and 12–14 use three of them.
SWEEP = (10, 50, 100, 200, 300, 500, 1000)
FIGURE_N = (10, 100, 1000)
FULL = RunSettings(duration=DURATION, warmup=WARMUP, sweep=SWEEP)
QUICK = RunSettings(duration=QUICK_DURATION, warmup=WARMUP, sweep=SWEEP)


def sred_qdisc(variant: str = "full", p_max: float = P_MAX) -> dict:
    """SRED with the paper's settings (the qdisc's defaults, written out where they matter)."""
    return {"type": "sred", "limit_bytes": BUFFER, "variant": variant, "p_max": p_max}


def red_qdisc() -> dict:
    """§VI-A's RED: "w = 1/500", "p_max = .075", linear from B/6 to B/3, in bytes."""
    return {
        "type": "red",
        "bytes": True,
        "limit_bytes": BUFFER,
        "min_th": LOW_BAND,
        "max_th": HIGH_BAND,
        "w_q": 1 / 500,
        "max_p": 0.075,
        "mean_pktsize": PACKET,
    }


def host_delays(n: int, asymmetric: bool) -> list[float]:
    """Each pair's host–router delay (both ends): 10 ms, or 1 → 20 ms linearly over the pairs."""
    if not asymmetric:
        return [SYMMETRIC_HOST_DELAY] * n
    low, high = ASYMMETRIC_HOST_DELAY
    return list(np.linspace(low, high, n)) if n > 1 else [low]


def tcp_flows(n: int, asymmetric: bool = False, name: str = "tcp", **extra: Any) -> list[dict]:
    """`n` TCP sources with 576-byte packets on the symmetrical or asymmetrical network."""
    base = {"type": "tcp", "packet_size": PACKET, "tcp": TCP, **extra}
    if not asymmetric:
        return [{"name": name, "count": n, **base}]
    return [
        {"name": f"{name}{i}", "access_delay": delay, "sink_delay": delay, **base}
        for i, delay in enumerate(host_delays(n, asymmetric))
    ]


def network_scenario(
    name: str, flows: list[dict], qdisc: Mapping[str, Any], duration: float, warmup: float, seed: int = 1
) -> dict:
    """The two-router network of Fig. 1 with `flows` and the bottleneck discipline `qdisc`."""
    return {
        "name": name,
        "simulation": {"duration": duration, "warmup": warmup, "seed": seed, "sample_interval": SAMPLE},
        "topology": {
            "type": "dumbbell",
            "access_rate": LINK_RATE,
            "access_delay": SYMMETRIC_HOST_DELAY,
            "sink_delay": SYMMETRIC_HOST_DELAY,
            "bottleneck": {"rate": LINK_RATE, "delay": BOTTLENECK_DELAY, "qdisc": dict(qdisc)},
        },
        "flows": flows,
    }


def persistent_scenario(
    n: int, qdisc: Mapping[str, Any], duration: float, warmup: float = WARMUP, asymmetric: bool = False
) -> dict:
    """§VI: `n` persistent TCP sources, all starting at t = 0."""
    kind = "asym" if asymmetric else "sym"
    return network_scenario(f"sred-{kind}-{n}", tcp_flows(n, asymmetric), qdisc, duration, warmup)


def web_scenario(
    n: int, qdisc: Mapping[str, Any], duration: float, warmup: float = WARMUP, start: str = "surge"
) -> dict:
    """§VII: `n` web-like sources (eq. 7.1 files, eq. 7.2 think times) on the symmetrical
    network, starting as a surge within 3.1 s or "stationary" (module docstring)."""
    workload = {"type": "neidhardt", "segment": MSS}
    if start == "surge":
        flows = tcp_flows(n, name="web", workload=workload, start_jitter=WEB_START_SPREAD)
        return network_scenario(f"sred-web-{n}", flows, qdisc, duration, warmup)
    # A source whose first file comes after the run sends nothing in it: it is left out.
    starts = stationary_starts(n, np.random.default_rng(n))
    (base,) = tcp_flows(1, name="web", workload=workload)
    common = {k: v for k, v in base.items() if k != "count"}
    flows = [{**common, "name": f"web{i}", "start": t} for i, t in enumerate(starts) if t < duration]
    return network_scenario(f"sred-web-{n}-stationary", flows, qdisc, duration, warmup)


def think_times(rng: np.random.Generator, size: int) -> np.ndarray:
    """Eq. 7.2's think times: the mixture, drawn again while below 50 ms (inverse CDF)."""
    out = np.empty(size)
    todo = np.arange(size)
    weights = np.array([w for w, _, _ in THINK])
    while todo.size:
        component = rng.choice(len(THINK), size=todo.size, p=weights / weights.sum())
        u = rng.random(todo.size)
        medians = np.array([m for _, m, _ in THINK])[component]
        shapes = np.array([a for _, _, a in THINK])[component]
        draw = medians * (u / (1 - u)) ** (1 / shapes)
        keep = draw >= THINK_MIN
        out[todo[keep]] = draw[keep]
        todo = todo[~keep]
    return out


def stationary_starts(n: int, rng: np.random.Generator) -> np.ndarray:
    """Each source's first file time: the first renewal after t = 0 of think times begun at
    −STATIONARY_HISTORY (the residual think time in equilibrium, transfers instantaneous)."""
    clock = np.full(n, -STATIONARY_HISTORY)
    while (pending := clock < 0).any():
        clock[pending] += think_times(rng, int(pending.sum()))
    return clock


def _survival(t: np.ndarray, median: float, shape: float) -> np.ndarray:
    return 1 / (1 + (t / median) ** shape)


def web_offer() -> dict[str, float]:
    """The paper's own means (module docstring): a file's bytes on the wire (E[⌈F/MSS⌉]·576,
    E[⌈F/MSS⌉] = Σ_k P{F > k·MSS} plus the tail's integral) and the mean think time after the
    re-draw (E[Z | Z ≥ 50 ms] = 50 ms + ∫ S / S(50 ms), with the tail's integral in closed form)."""
    k = np.arange(10**6)
    horizon = MSS * 10**6
    tail = FILE_MEDIAN**FILE_SHAPE * horizon ** (1 - FILE_SHAPE) / (FILE_SHAPE - 1) / MSS
    segments = _survival(MSS * k, FILE_MEDIAN, FILE_SHAPE).sum() + tail
    t = np.logspace(np.log10(THINK_MIN), 9, 400_001)
    survival = sum(w * _survival(t, m, a) for w, m, a in THINK)
    beyond = sum(w * m**a * t[-1] ** (1 - a) / (a - 1) for w, m, a in THINK)
    think = THINK_MIN + (np.trapezoid(survival, t) + beyond) / survival[0]
    return {"wire_bytes": float(segments * PACKET), "think_s": float(think)}


def offered_mbps(sources: int, transfer_s: float) -> float:
    """What `sources` web-like sources offer with a mean transfer time `transfer_s` (Mb/s)."""
    offer = web_offer()
    return sources * offer["wire_bytes"] * 8 / (offer["think_s"] + transfer_s) / 1e6


def misbehaving_scenario(duration: float, warmup: float = TABLE_WARMUP) -> dict:
    """§VIII: one UDP sending a 576-byte packet every 4 ms and 100 persistent TCPs, Full SRED."""
    udp = {"name": "udp", "type": "cbr", "rate": PACKET * 8 / UDP_INTERVAL, "packet_size": PACKET}
    return network_scenario("sred-misbehaving", [udp, *tcp_flows(100)], sred_qdisc(), duration, warmup)


@cache
def persistent_run(n: int, mechanism: str, duration: float, asymmetric: bool = False, p_max: float = P_MAX) -> Results:
    """One run of `n` persistent sources under "full" or "simple" SRED (with `p_max`) or "red"."""
    qdisc = red_qdisc() if mechanism == "red" else sred_qdisc(mechanism, p_max)
    return aqmlab.run(persistent_scenario(n, qdisc, duration, asymmetric=asymmetric))


@cache
def web_run(n: int, mechanism: str, duration: float, start: str = "surge") -> Results:
    """One run of `n` web-like sources under Full SRED ("full") or RED ("red"), with either start."""
    qdisc = red_qdisc() if mechanism == "red" else sred_qdisc(mechanism)
    return aqmlab.run(web_scenario(n, qdisc, duration, start=start))


@cache
def misbehaving_run(duration: float) -> Results:
    """The run of Tables I and II."""
    return aqmlab.run(misbehaving_scenario(duration))


def bottleneck_queue(results: Results, after: float | None = None) -> pd.DataFrame:
    """The bottleneck's 10 ms queue samples (bytes, P(t) under SRED), from `after` (default: the warm-up)."""
    queue = results.queue[results.queue["link"] == results.link("L->R")["id"]]
    return queue[queue["time"] >= (results.warmup if after is None else after)]


def window_drops(results: Results, reason: str) -> int:
    """Drops of `reason` at the bottleneck in the measurement window."""
    drops = results.drops
    at = drops[(drops["link"] == results.link("L->R")["id"]) & (drops["reason"] == reason)]
    return int(at["window_count"].sum())


def occupancy_metrics(results: Results) -> dict[str, float]:
    """The measures of Figs. 2–16 after the warm-up: mean occupancy (KB), the fractions of
    10 ms samples below B/6 and at or above B/3, overflow and SRED/RED drops, utilisation,
    timeouts (whole run), and under SRED the mean P(t) before and after the warm-up."""
    queue = bottleneck_queue(results)
    measures = {
        "mean_kb": queue["bytes"].mean() / 1000,
        "below_b6": (queue["bytes"] < LOW_BAND).mean(),
        "above_b3": (queue["bytes"] >= HIGH_BAND).mean(),
        "overflow_drops": window_drops(results, "overflow"),
        "aqm_drops": sum(window_drops(results, reason) for reason in ("sred", "early", "forced")),
        "utilisation": results.link("L->R")["utilisation"],
        "timeouts": int(results.flows["timeouts"].sum()),
    }
    if "hit_frequency" in queue:
        transient = bottleneck_queue(results, after=0.0)
        transient = transient[transient["time"] < results.warmup]
        measures |= {"p_transient": transient["hit_frequency"].mean(), "p_mean": queue["hit_frequency"].mean()}
    return measures


def occupancy_table(runs: Mapping[Any, Results], key: str = "n") -> pd.DataFrame:
    """`occupancy_metrics` of each run, one row per key of `runs` (a column named `key`)."""
    return pd.DataFrame([{key: k, **occupancy_metrics(results)} for k, results in runs.items()])


def occupancy_figure(axes: Any, results: Results, title: str) -> None:
    """One buffer-occupancy panel like Figs. 2–8: bytes against time, eq. 4.3's band edges dashed."""
    queue = bottleneck_queue(results, after=0.0)
    axes.plot(queue["time"], queue["bytes"] / 1000, linewidth=0.4)
    for edge in (LOW_BAND, HIGH_BAND):
        axes.axhline(edge / 1000, color="grey", linestyle="--", linewidth=0.7)
    axes.set(title=title, xlabel="time (s)", ylabel="buffer (KB)", ylim=(0, BUFFER / 1000))
