"""CHOKe end to end (issue 13's check): one UDP flow against 32 TCPs on a 1 Mb/s link, the UDP
flow's sending rate swept from half the link rate to ten times it.

Compared against: Tang, Wang and Low, "Understanding CHOKe: throughput and spatial
characteristics" (IEEE/ACM ToN 12(4), 2004; the SIGMETRICS 2003 paper "Maximum and asymptotic
UDP throughput under CHOKe" before it): with many TCP flows the UDP flow's bandwidth share
peaks at 1/(e + 1) = 0.269 when it sends slightly faster than the link, and falls to zero as
its rate grows; through a plain FIFO (RED here) it would approach 1. Tolerances: the peak
within ±0.04 of 0.269 (the theorem is for N → ∞ TCPs, here N = 32; the share is measured over
80 s), the share past the link rate strictly falling, below 0.05 at ten times the link rate.

Setup: the CHOKe paper's single-link experiment as issue 13 recalls it (32 TCPs and 1 UDP,
1 Mb/s). The paper's text was not available to us, so the buffer (300 packets) and CHOKe's RED
thresholds (100 and 200 packets) are our choice; the other RED settings are the qdisc's
defaults (max_p 0.02, w_q 0.002).
"""

import math

import aqmlab
import pytest
from conftest import dumbbell

CHOKE = {"type": "choke", "limit": 300, "min_th": 100, "max_th": 200}
RED = {"type": "red", "limit": 300, "min_th": 100, "max_th": 200, "max_p": 0.02}
UDP_MBPS = [0.5, 1.0, 1.25, 2.0, 5.0, 10.0]  # on a 1 Mb/s link
PEAK = 1 / (math.e + 1)  # Tang–Wang–Low's maximum UDP share


def udp_share(qdisc: dict, udp_mbps: float) -> float:
    """The UDP flow's share of the link's 1 Mb/s, measured after a 20 s warmup."""
    scenario = dumbbell(
        {"name": "udp", "type": "cbr", "rate": f"{udp_mbps}Mbps", "jitter": True},
        {"name": "tcp", "type": "tcp", "count": 32, "start_jitter": "1s"},
        rate="1Mbps",
        delay="10ms",
        qdisc=qdisc,
        duration="100s",
        warmup="20s",
        access_rate="100Mbps",
        access_delay="5ms",
    )
    flows = aqmlab.run(scenario).flows.set_index("name")
    return flows.loc["udp", "goodput_bps"] / 1e6


@pytest.fixture(scope="module")
def shares() -> dict[float, float]:
    return {rate: udp_share(CHOKE, rate) for rate in UDP_MBPS}


def test_the_udp_share_peaks_near_one_over_e_plus_one_at_the_link_rate(shares):
    peak_rate = max(shares, key=shares.get)
    assert 1.0 <= peak_rate <= 2.0, shares
    assert shares[peak_rate] == pytest.approx(PEAK, abs=0.04), shares


def test_the_udp_share_falls_as_its_rate_rises_past_the_link_rate(shares):
    past = [shares[rate] for rate in UDP_MBPS if rate >= 1.25]
    assert all(a > b for a, b in zip(past, past[1:], strict=False)), shares
    assert shares[10.0] < 0.05, shares
    # Through RED alone the same flow takes nearly the whole link.
    assert udp_share(RED, 10.0) > 0.9


def test_two_drop_candidates_penalise_the_udp_flow_harder(shares):
    for rate in (1.0, 2.0, 5.0):
        assert udp_share({**CHOKE, "candidates": 2}, rate) < shares[rate], rate
