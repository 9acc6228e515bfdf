"""FQ-CoDel (RFC 8290) end to end: a sparse flow keeps a sub-millisecond queueing delay while 8
bulk TCPs and an unresponsive 10 Mbps UDP share a 10 Mbps link, and each of those gets its
max-min fair share (RFC 8290 §1: flow isolation and sparse-flow priority)."""

import aqmlab
import pytest
from conftest import dumbbell


def mixed(qdisc: dict) -> aqmlab.Results:
    scenario = dumbbell(
        {"name": "sparse", "type": "cbr", "rate": "64kbps", "packet_size": 200},
        {"name": "udp", "type": "cbr", "rate": "10Mbps", "packet_size": 1000},
        {"name": "bulk", "type": "tcp", "count": 8, "packet_size": 1000, "start_jitter": "1s"},
        delay="20ms",
        qdisc=qdisc,
        duration="40s",
        warmup="10s",
        seed=2,
        access_rate="1Gbps",
        access_delay="1ms",
    )
    return aqmlab.run(scenario)


def queueing_ms(results: aqmlab.Results, name: str) -> float:
    """A flow's mean one-way delay minus its propagation delay and its packets' serialization
    (200 B on two 1 Gb/s access links and the 10 Mb/s bottleneck)."""
    flow = results.flows.set_index("name").loc[name]
    serialization = 200 * 8 / 10e6 + 2 * 200 * 8 / 1e9
    return (flow["mean_delay"] - flow["base_rtt"] / 2 - serialization) * 1000


@pytest.fixture(scope="module")
def fq_codel() -> aqmlab.Results:
    return mixed({"type": "fq_codel"})


def test_the_sparse_flow_waits_less_than_a_millisecond(fq_codel):
    # At most the residual transmission of one 1000-byte packet (0.8 ms) on average half of it.
    assert queueing_ms(fq_codel, "sparse") < 1.0, queueing_ms(fq_codel, "sparse")
    # Through drop-tail with the same link the sparse flow waits behind the standing queue.
    assert queueing_ms(mixed({"type": "droptail", "limit": 1000}), "sparse") > 100


def test_tcps_and_the_unresponsive_udp_each_get_their_fair_share(fq_codel):
    flows = fq_codel.flows.set_index("name")
    # Max-min: the sparse flow's 64 kb/s, then (10 - 0.064) / 9 = 1.104 Mb/s for each other flow.
    assert flows.loc["udp", "fair_share_bps"] == pytest.approx(9.936e6 / 9, rel=1e-3)
    shares = flows.drop(index="sparse")["normalised_goodput"]
    assert shares.between(0.9, 1.1).all(), shares.to_dict()
    assert flows.loc["sparse", "normalised_goodput"] == pytest.approx(1.0, abs=0.05)
