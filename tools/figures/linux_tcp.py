"""The linux profile's figures in docs/figures/ (docs/linux-tcp.md shows them).

`linux-cubic-cwnd.png`: one CUBIC flow whose packet 1000 is lost once, on a 100 ms path of
1 Gb/s (no queue), against RFC 9438's W(t) = C (t - K)^3 + W_max, K = cbrt(W_max (1 - beta)/C),
C = 0.4, beta = 0.7, from the end of recovery: the scenario of the Rust test
`cubic_window_follows_the_closed_form_after_one_loss` (crates/aqmlab-core/tests/tcp_linux.rs).

    PYTHONPATH=python python tools/figures/linux_tcp.py
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


if __name__ == "__main__":
    cubic_figure()
