"""PIE (RFC 8033) end to end: 8 bulk TCPs through a 10 Mbps link with a 1000-packet buffer hold
the queueing delay near PIE's 15 ms target, at the 100 ms RTT CoDel's test uses and at 18 ms."""

import aqmlab
import pytest

RATE = 10e6
# Within a factor of 2 of the 15 ms target: the PI controller corrects every 15 ms, and 8 TCPs'
# sawtooth spreads the delay around its set point.
BAND_MS = (7.5, 30.0)


@pytest.mark.parametrize("one_way_ms", [45, 5])
def test_pie_holds_the_queueing_delay_near_its_target(one_way_ms):
    scenario = aqmlab.Scenario.from_dict(
        {
            "simulation": {"duration": "60s", "warmup": "20s", "seed": 1, "sample_interval": "10ms"},
            "topology": {
                "type": "dumbbell",
                "bottleneck": {"rate": "10Mbps", "delay": f"{one_way_ms}ms", "qdisc": {"type": "pie"}},
                "access_delay": "2ms",
            },
            "flows": [{"name": "bulk", "type": "tcp", "count": 8, "start_jitter": "1s"}],
        }
    )
    results = aqmlab.run(scenario)
    queue = results.queue[results.queue["time"] >= results.warmup]
    median = float((queue["bytes"] * 8 / RATE * 1000).median())
    assert BAND_MS[0] <= median <= BAND_MS[1], median
    assert results.link("L->R")["utilisation"] > 0.95
    assert set(results.drops["reason"]) == {"early"}
