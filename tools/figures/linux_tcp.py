"""The linux profile's figures in docs/figures/ (docs/linux-tcp.md shows them).

`linux-cubic-cwnd.png`: one CUBIC flow whose packet 1000 is lost once, on a 100 ms path of
1 Gb/s (no queue), against RFC 9438's W(t) = C (t - K)^3 + W_max, K = cbrt(W_max (1 - beta)/C),
C = 0.4, beta = 0.7, from the end of recovery: the scenario of the Rust test
`cubic_window_follows_the_closed_form_after_one_loss` (crates/aqmlab-core/tests/tcp_linux.rs).

`bbr-trace.png`: one BBR flow alone on 10 Mbit/s, 40 ms RTT (BDP 50 packets of 1000 bytes),
drop-tail buffer 100 packets: its cwnd and pacing rate over 30 s (STARTUP, DRAIN, the PROBE_BW
gain cycle, PROBE_RTT every 10 s), the bottleneck queue beneath; the scenario of the Rust test
`one_bbr_flow_fills_a_10_mbit_link_with_a_queue_near_zero`.

    PYTHONPATH=python python tools/figures/linux_tcp.py [cubic|bbr]
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "python"))

from aqmlab import Scenario, run  # noqa: E402
from aqmlab.plots import window_figure  # noqa: E402

OUT = REPO / "docs" / "figures"
C, BETA = 0.4, 0.7


def cubic_scenario() -> Scenario:
    return Scenario.from_dict(
        {
            "name": "linux-cubic-one-loss",
            "simulation": {"duration": "30s", "sample_interval": 0},
            "topology": {
                "type": "dumbbell",
                "access_rate": "1Gbps",
                "access_delay": 0,
                "sink_delay": 0,
                "bottleneck": {
                    "rate": "1Gbps",
                    "delay": "50ms",
                    "qdisc": {"type": "loss", "model": "scripted", "flow": 0, "seqs": [1000]},
                },
            },
            "flows": [{"type": "tcp", "tcp": {"profile": "linux", "cc": "cubic", "window": 5000, "trace": True}}],
        }
    )


def cubic_figure() -> Path:
    results = run(cubic_scenario())
    traces = results.traces
    cwnd = traces[traces["var"] == "cwnd"]
    ssthresh = traces[(traces["var"] == "ssthresh") & (traces["value"] < 5000)]
    loss_at, cut = ssthresh.iloc[0][["time", "value"]]
    w_max = cwnd[cwnd["time"] < loss_at]["value"].iloc[-1]
    # The epoch starts when recovery ends, the fast retransmission's round trip (100 ms) after the loss.
    t0 = loss_at + 0.1
    k = (w_max * (1 - BETA) / C) ** (1 / 3)
    t = np.linspace(t0, t0 + 2 * k, 400)
    model = (t, C * (t - t0 - k) ** 3 + w_max, f"W(t) = C(t-K)^3 + W_max, W_max {w_max:.0f}, K {k:.1f} s")
    title = "CUBIC (linux profile) after one loss, 100 ms RTT: cwnd against RFC 9438's closed form"
    fig = window_figure(results, model=model, title=title)
    OUT.mkdir(parents=True, exist_ok=True)
    path = OUT / "linux-cubic-cwnd.png"
    fig.savefig(path, dpi=110)
    model_at = C * (cwnd["time"] - t0 - k) ** 3 + w_max
    window = (cwnd["time"] > t0 + 0.1) & (cwnd["time"] < t0 + 2 * k)
    worst = ((cwnd["value"] - model_at).abs() / model_at)[window].max()
    print(f"{path.relative_to(REPO)}: W_max {w_max:.0f}, ssthresh {cut:.0f}, K {k:.2f} s, worst error {worst:.4f}")
    return path


def bbr_scenario() -> Scenario:
    return Scenario.from_dict(
        {
            "name": "linux-bbr-alone",
            "simulation": {"duration": "30s", "sample_interval": "10ms"},
            "topology": {
                "type": "dumbbell",
                "access_rate": "1Gbps",
                "access_delay": 0,
                "sink_delay": 0,
                "bottleneck": {"rate": "10Mbps", "delay": "20ms", "qdisc": {"type": "droptail", "limit": 100}},
            },
            "flows": [{"type": "tcp", "tcp": {"profile": "linux", "cc": "bbr", "trace": True}}],
        }
    )


def bbr_figure() -> Path:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    results = run(bbr_scenario())
    traces = results.traces
    cwnd = traces[traces["var"] == "cwnd"]
    pacing = traces[traces["var"] == "pacing_rate"]
    queue = results.queue[results.queue["link"] == 0]
    bdp = 10e6 * 0.040 / (1000 * 8)
    fig, (ax_cwnd, ax_rate, ax_queue) = plt.subplots(3, 1, figsize=(10, 8), sharex=True)
    ax_cwnd.step(cwnd["time"], cwnd["value"], where="post", lw=0.9, label="cwnd")
    ax_cwnd.axhline(bdp, color="grey", ls="--", lw=0.8, label=f"BDP {bdp:.0f} packets")
    ax_cwnd.axhline(2 * bdp, color="grey", ls=":", lw=0.8, label="2 BDP")
    ax_cwnd.set_ylabel("cwnd (packets)")
    ax_cwnd.legend(loc="upper right")
    ax_rate.step(pacing["time"], pacing["value"] * 8 / 1e6, where="post", lw=0.9, color="C1", label="pacing rate")
    ax_rate.axhline(10, color="grey", ls="--", lw=0.8, label="link 10 Mbit/s")
    ax_rate.set_ylabel("pacing rate (Mbit/s)")
    ax_rate.set_ylim(0, 32)
    ax_rate.legend(loc="upper right")
    ax_queue.plot(queue["time"], queue["packets"], lw=0.8, color="C2")
    ax_queue.set_ylabel("bottleneck queue (packets)")
    ax_queue.set_xlabel("time (s)")
    fig.suptitle("BBR (linux profile) alone on 10 Mbit/s, 40 ms RTT, drop-tail 100 packets")
    fig.tight_layout()
    OUT.mkdir(parents=True, exist_ok=True)
    path = OUT / "bbr-trace.png"
    fig.savefig(path, dpi=110)
    flow = results.flows.iloc[0]
    goodput, median_queue = flow["goodput_bps"] / 1e6, queue["packets"].median()
    print(f"{path.relative_to(REPO)}: goodput {goodput:.2f} Mbit/s, median queue {median_queue:.0f} packets")
    return path


if __name__ == "__main__":
    which = sys.argv[1:] or ["cubic", "bbr"]
    for name in which:
        {"cubic": cubic_figure, "bbr": bbr_figure}[name]()
