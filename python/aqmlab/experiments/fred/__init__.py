"""FRED (Lin & Morris, "Dynamics of Random Early Detection", SIGCOMM 1997, revised):
the paper's simulations of RED and FRED, reproduced.

- `fred-fragile` (fred/fragile.py; §3.1 and §5, Fig. 1, Tables 1–4): a window-limited
  36 ms-RTT TCP against four 6 ms-RTT TCPs on 45 Mbps, buffer 16…56 packets, RED vs FRED.
- `fred-cbr` (fred/cbr.py; §3.3 and §5, Figs. 5–7): an 8 Mbps CBR flow against TCPs
  joining every 20 s on 10 Mbps, RED vs FRED.
- `fred-many-flows` (fred/many_flows.py; §6, Figs. 8–11, Table 5): 16 TCPs through 16 or
  32 buffers, RED, FRED and FRED's two-packet-buffer extension.

This module holds their common setup. What we chose where the paper is silent:

- Packets and the ATM overhead (§3.1, §11.1): "552-byte TCP/IP packets (including IP and
  TCP headers). Each packet is carried in 12 ATM cells"; "the total ATM+AAL5 bandwidth
  overhead is 13.2%" (= 1 − 552/636). We model the overhead: a data packet occupies
  12 × 53 = 636 bytes on every link (`packet_size = 636`), and all link rates are cell
  rates, as in the paper's simulator. Throughput is measured in these wire bytes unless a
  row says "payload" (512 of the 636 bytes, the paper's "TCP goodput"). This reading makes
  the paper's numbers agree with one another: 16 TCPs sharing 10 Mbps get 10e6·512/636/16
  = 503 kbps of payload each (Table 5's FRED-32 column), and a lone 64 KB window over 36 ms
  gets 128·636·8/(45 Mbps·36 ms) = 40% of the link (§3.1 says 39%; its formula
  "64KB/(45mbps*36ms)" without the overhead would give 32.4%). Not modelled: cell
  interleaving inside the switch (we move whole packets; RED/FRED decide on a packet's
  arrival, the paper on its first cell) and ACK sizes (ours 40 bytes, one 53-byte cell
  there; the reverse path is never congested).
- TCP (§3.1, §11): NetBSD 1.2 Reno modified to New-Reno: our `newreno` (partial ACK →
  retransmit the next packet; at the end of recovery cwnd = min(ssthresh, flight + 1),
  §11.2's "packets in flight plus one"; §11.2's extra exit condition, ack + ssthresh ≥ the
  window's right edge, is not modelled). Delayed ACK on (§3.1), at most 200 ms (BSD's
  fast timer). BSD's coarse timers: 500 ms clock, 1 s minimum RTO (§3.2's "one-second
  retransmission time-out"). Receivers consume data at once (unlimited receiver buffer);
  "unlimited" windows are 64 KB = 128 packets of 512 bytes (§3.1: "up to 64 KB").
  Congestion avoidance grows the window by 1/cwnd per ACK (`congestion_avoidance =
  "per_ack"`), NetBSD 1.2's rule: its tcp_input.c (rev. 1.23.4.2 on the netbsd-1-2 branch,
  1996-12-11, as PSC's SACK patch of it ships it; mainline rev. 1.27.8.5 of 1997 alike)
  computes `incr = incr * incr / cw`, while its comment still describes 4.4BSD-Lite's
  extra "constant fraction of a packet (maxseg/8)", which the code had dropped. The
  4.4BSD-Lite reading (`"bsd44"`, +1/cwnd + 1/8 per ACK) runs beside it in `fred-fragile`
  as informative rows (`.alt_bsd44`): with it the 6 ms flows' windows grow ~6% per RTT.
  (Before this was established the runs used `"per_window"`, +1 per window of ACKs, after
  trying the maxseg/8 term and finding it far from the paper: a choice made after seeing
  results, now replaced by the source's rule.)
- The tiny-window enhancement (§11.3) is on only in `fred-many-flows`: §11.3 describes
  it as "the TCP enhancement used in the simulations at the end of Section 6", and
  Table 5's caption says all four of its runs used it.
- RED and FRED: the paper's constants w_q = 0.002, max_p = 0.02 (§3, §4.5) and the
  thresholds of each figure; FRED's min_q = 2 in every run (§5: "using FRED with min_q
  equal to two packets"). FRED's §4.5 rule min_th = MIN(BS/4, RTT) gives the same
  thresholds as the figures: the pipe of the 6 ms connections of Fig. 1 is 53 packets
  (> BS/4), and Fig. 8 states min_th = 4. Idle time is measured in 636-byte packet
  times (`mean_pktsize`). Table 5's RED-32 thresholds are unstated: we grade 8/16, what
  both of the paper's rules give for 32 buffers, and run FRED-32's 4/8 beside it: every
  row involving RED-32 is repeated with 4/8 as an informative `.alt` row.
- Topologies are not in the text (the figures are). Fig. 1 takes its links from the
  RED paper's experiment that §3.1 says it resembles (Floyd & Jacobson 1993, the
  bursty-traffic network, as we recall it): the four local hosts on 100 Mbps links of
  1 ms, the distant one on a 45 Mbps link of 16 ms, the gateway's 45 Mbps output link
  2 ms, which gives exactly §3.1's RTTs of 6 ms and 36 ms. Figs. 5/7: the same local layout on a 10 Mbps
  link (RTT 6 ms, unstated). Fig. 8: one source host on 100 Mbps ("one tenth"), 1 ms,
  gateway to sink 10 Mbps, 3 ms: an 8 ms RTT, a pipe of 16 packets ("BS=RTT=16").
  Start times where unstated (§6) are random in the first 5 s, as §3.1's.
"""

from __future__ import annotations

from typing import Any

# §11.1: a 552-byte IP packet (512 bytes of payload) in 12 ATM cells of 53 bytes.
WIRE_BYTES = 12 * 53
PAYLOAD_BYTES = 512
PAYLOAD_FRACTION = PAYLOAD_BYTES / WIRE_BYTES
# §3.1: "unlimited windows (up to 64 KB)", in 512-byte packets.
WINDOW_64KB = 65536 // PAYLOAD_BYTES

# §3.1 and §11: New-Reno with delayed ACK and BSD's timers (see the module docstring).
NETBSD_TCP: dict[str, Any] = {
    "variant": "newreno",
    "delayed_ack": True,
    "delack_timeout": "200ms",
    "min_rto": "1s",
    "timer_granularity": "500ms",
    "window": WINDOW_64KB,
    "congestion_avoidance": "per_ack",
}
# The other reading of the BSD stack (informative rows): 4.4BSD-Lite's extra maxseg/8 per ACK.
BSD44_TCP: dict[str, Any] = {**NETBSD_TCP, "congestion_avoidance": "bsd44"}

# §3, §4.5: the constants of every RED and FRED gateway in the paper.
W_Q = 0.002
MAX_P = 0.02
MIN_Q = 2  # §5


def gateway(mechanism: str, buffer: int, min_th: float, max_th: float) -> dict[str, Any]:
    """A RED, FRED or two-packet-buffer FRED ("fred-2pkt") queue with the paper's constants."""
    table: dict[str, Any] = {
        "limit": buffer,
        "min_th": min_th,
        "max_th": max_th,
        "w_q": W_Q,
        "max_p": MAX_P,
        "mean_pktsize": WIRE_BYTES,
    }
    if mechanism == "red":
        return {"type": "red", **table}
    if mechanism in ("fred", "fred-2pkt"):
        return {"type": "fred", **table, "min_q": MIN_Q, "two_packet_buffer": mechanism == "fred-2pkt"}
    raise ValueError(f"mechanism: expected red, fred or fred-2pkt, got {mechanism!r}")


def tcp_flow(tcp: dict[str, Any] = NETBSD_TCP, **options: Any) -> dict[str, Any]:
    """A flow table's TCP part: 636-byte packets, `tcp` (the graded NETBSD_TCP or the
    informative BSD44_TCP) with `options` on top."""
    return {"type": "tcp", "packet_size": WIRE_BYTES, "tcp": {**tcp, **options}}


def pct(x: float) -> float:
    return 100.0 * x
