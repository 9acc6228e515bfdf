"""SFQ end to end (issue 13's check): 32 CBR flows, each at twice its 0.3125 Mb/s fair share,
on a 10 Mb/s link. With 1024 buckets each flow that has a bucket to itself gets its share;
with 8 buckets the flows collide and share buckets' round-robin turns."""

import aqmlab
from conftest import dumbbell


def cbr_flows(divisor: int) -> aqmlab.Results:
    scenario = dumbbell(
        {"name": "cbr", "type": "cbr", "rate": "625kbps", "jitter": True, "count": 32},
        delay="1ms",
        qdisc={"type": "sfq", "divisor": divisor},
        duration="12s",
        warmup="2s",
        seed=4,
        access_rate="100Mbps",
    )
    return aqmlab.run(scenario)


def test_flows_alone_in_their_bucket_get_their_share_and_colliding_flows_split_one():
    results = cbr_flows(1024)
    colliding = int(results.link("L->R")["qdisc.colliding_flows"])
    shares = results.flows["normalised_goodput"].sort_values(ascending=False)
    # The flows with a bucket of their own: one turn each among 32 - colliding/2 busy buckets
    # (collisions here are pairs), i.e. 32 / (32 - colliding/2) of the 1/32 share, ±5 %.
    alone = shares.iloc[: 32 - colliding]
    expected = 32 / (32 - colliding / 2)
    assert ((alone / expected - 1).abs() < 0.05).all(), (colliding, alone.to_list())
    # A colliding pair splits one bucket's turn: about half a share each.
    assert ((shares.iloc[32 - colliding :] * 2 / expected - 1).abs() < 0.1).all()


def test_eight_buckets_make_the_collisions_show():
    wide, narrow = cbr_flows(1024), cbr_flows(8)
    assert narrow.link("L->R")["qdisc.colliding_flows"] >= 27
    assert narrow.summary()["jain_index"] < wide.summary()["jain_index"] - 0.05
