"""CoDel (RFC 8289) end to end: 8 bulk TCPs through a 10 Mbps link with a 1000-packet buffer.
CoDel keeps the standing queue near its 5 ms target where drop-tail lets it fill the buffer.

The band was first checked at an 18 ms RTT only, where the median came out at 14.4 ms (15.2 ms
over these runs), above it.
RFC 8289 §4.3 sets `interval` "on the order of the worst-case RTT through the bottleneck"
(100 ms): CoDel's design point. Both RTTs are asserted below: the design point inside the band,
the short RTT above it (TCPs whose RTT is far below the interval grow faster than the control
law's drop rate; the RTT, not the implementation, is what moves the median)."""

import aqmlab

RATE = 10e6
# The band: within a factor 2.5 of the 5 ms target. CoDel tolerates a sojourn above target for
# up to one interval per episode, and 8 TCPs' sawtooth spans from an empty queue to above it.
BAND_MS = (2.0, 12.5)


def bulk_tcp(qdisc: dict, one_way_ms: float) -> aqmlab.Scenario:
    return aqmlab.Scenario.from_dict(
        {
            "simulation": {"duration": "60s", "warmup": "20s", "seed": 1, "sample_interval": "10ms"},
            "topology": {
                "type": "dumbbell",
                "bottleneck": {"rate": "10Mbps", "delay": f"{one_way_ms}ms", "qdisc": qdisc},
                "access_delay": "2ms",
            },
            "flows": [{"name": "bulk", "type": "tcp", "count": 8, "start_jitter": "1s"}],
        }
    )


def median_delay_ms(results: aqmlab.Results) -> float:
    queue = results.queue[results.queue["time"] >= results.warmup]
    return float((queue["bytes"] * 8 / RATE * 1000).median())


def test_codel_holds_the_queue_near_its_target_at_its_design_rtt():
    # One-way 45 ms + 2 x 2 ms access each way: a 98 ms base RTT, RFC 8289's 100 ms interval.
    codel = aqmlab.run(bulk_tcp({"type": "codel", "limit": 1000}, 45))
    droptail = aqmlab.run(bulk_tcp({"type": "droptail", "limit": 1000}, 45))
    median = median_delay_ms(codel)
    assert BAND_MS[0] <= median <= BAND_MS[1], median
    assert codel.link("L->R")["utilisation"] > 0.9
    assert set(codel.drops["reason"]) == {"codel"}
    # Drop-tail with the same buffer: a standing queue of hundreds of ms.
    assert median_delay_ms(droptail) > 20 * median


def test_codel_standing_queue_is_above_target_when_the_rtt_is_far_below_the_interval():
    # 5 ms one way: an 18 ms base RTT. Measured 15.2 ms (design point: 4.8 ms); a shorter RTT gives a
    # longer standing queue than at the design point.
    short = median_delay_ms(aqmlab.run(bulk_tcp({"type": "codel", "limit": 1000}, 5)))
    design = median_delay_ms(aqmlab.run(bulk_tcp({"type": "codel", "limit": 1000}, 45)))
    assert short > BAND_MS[1] and short > design, (short, design)
