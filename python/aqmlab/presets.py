"""The CSFQ paper's §3 configuration (Stoica, Shenker, Zhang, SIGCOMM 1998): its buffer, RED/FRED
thresholds and CSFQ constant, and its mechanisms' qdisc tables (`csfq_mechanisms`), configured as
the paper states, which its experiments (experiments/csfq/*.py, the demo) grade and vary. These are
the first six presets; the table of every mechanism, aqmlab's others on the same buffer included,
is `aqmlab.mechanisms`.

CSFQ §3: "Each output link has a capacity of 10 Mbps, a latency of 1 ms, and a buffer
of 64 KB. In the RED and FRED cases the first threshold is set to 16 KB, while the
second one is set to 32 KB. The averaging constants K, K_alpha, and K_c are all set to
100 ms unless specified otherwise." The paper ran ns-2 ("All algorithms used in the
simulation, except CSFQ and FRED, were part of the standard ns-2 distribution"), so RED is
ns-2's `red.cc` (`profile = "ns2"`: its instantaneous-queue guard, first-packet rule, idle
averaging and byte-mode buffer; issue 21). RED's other settings are unstated. We configure byte
mode (the thresholds are in KB), w_q = 0.002 and max_p = 0.1 (ns-2's `q_weight_` and
1/`linterm_`), and keep our RED's defaults for the rest, which are not ns-2's: `wait = false`
(ns-2: `wait_ = true`) and `mean_pktsize = 1000` bytes for the idle decay and byte scaling
(ns-2: `mean_pktsize_ = 500`); no `gentle` (ns-2 of 1998 had none).
"FRED-2 guarantees to each flow a minimum number of buffers": FRED's two-packet-buffer
extension (FRED §6); FRED-1 is basic FRED. DRR: "when the buffer is full the packet
from the longest queue is dropped", ns-2's `Queue/DRR` (`profile = "ns2"`: drr.cc's turn rule,
which differs from Shreedhar–Varghese's only when a push-out empties the flow being served).

A mechanism joins the presets with one descriptor in `mechanisms.MECHANISMS`.
"""

from __future__ import annotations

BUFFER = "64KB"
THRESHOLDS = {"min_th": 16000, "max_th": 32000}
K = "100ms"
# Data packet size of every §3 flow: unstated; Table 3's counts imply about 1000 bytes (1 KB in §3.4).
PACKET_BYTES = 1000
PACKET = f"{PACKET_BYTES}B"


def csfq_mechanisms(buffer: str = BUFFER, k: str = K, thresholds: dict | None = None) -> dict[str, dict]:
    """The CSFQ paper's bottleneck qdisc tables by mechanism name, for a buffer size and CSFQ constant K."""
    th = thresholds or THRESHOLDS
    # FRED's byte mode scales its packet constants (min_q, the two-packet buffer) by
    # MaximumPacketSize (FRED §7): every data packet of §3 is 1000 bytes, not FRED's 1500 default.
    fred = {"type": "fred", "bytes": True, "limit_bytes": buffer, **th, "max_packet_size": PACKET}
    return {
        "droptail": {"type": "droptail", "limit_bytes": buffer},
        "red": {
            "type": "red",
            "profile": "ns2",
            "bytes": True,
            "limit_bytes": buffer,
            **th,
            "w_q": 0.002,
            "max_p": 0.1,
        },
        "fred-1": fred,
        "fred-2": {**fred, "two_packet_buffer": True},
        "drr": {"type": "drr", "profile": "ns2", "limit_bytes": buffer},
        "csfq": {"type": "csfq", "limit_bytes": buffer, "k": k, "k_alpha": k, "k_c": k},
    }


CSFQ_MECHANISMS = csfq_mechanisms()
