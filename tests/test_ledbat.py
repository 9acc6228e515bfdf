"""LEDBAT (RFC 6817, `tcp = { profile = "linux", cc = "ledbat" }`) through `aqmlab.run`: alone it
keeps the bottleneck's standing queue at TARGET and fills the link, beside Reno it yields, and bad
parameters are refused naming the field. The paths draw from no random stream, so the bands come
from the closed form (one 1000-byte packet is 0.8 ms at 10 Mb/s; the histograms' buckets are 1 %)."""

import aqmlab
import pytest
from conftest import dumbbell

PACKET_TIME = 0.0008


def ledbat(**parameters) -> dict:
    return {"type": "tcp", "tcp": {"profile": "linux", "cc": "ledbat", "ledbat": parameters}}


def scenario(*flows: dict, limit: int, duration: str, warmup: str) -> aqmlab.Scenario:
    return aqmlab.Scenario.from_dict(
        dumbbell(
            *flows,
            delay="20ms",
            qdisc={"type": "droptail", "limit": limit},
            duration=duration,
            warmup=warmup,
            access_rate="1Gbps",
            access_delay="0ms",
        )
    )


@pytest.mark.parametrize("target", [0.025, 0.1])
def test_alone_it_holds_the_queue_at_target_and_fills_the_link(target):
    # Measured (the Rust test's path, tests/tcp_ledbat.rs): median sojourn 25.56 ms and 98.57 ms.
    results = aqmlab.run(scenario(ledbat(target=f"{target * 1e3:g}ms"), limit=2000, duration="70s", warmup="40s"))
    (row,) = results.queue_delay.itertuples()
    assert row.median == pytest.approx(target, abs=0.05 * target + PACKET_TIME)
    assert results.link("L->R")["utilisation"] >= 0.9
    assert results.link("L->R")["drops"] == 0


def test_beside_reno_it_takes_a_small_share_and_the_link_back_when_reno_stops():
    # Measured: 1.76 % of the link beside Reno (the rust test), all of it once Reno stops at 40 s.
    reno = {"type": "tcp", "stop": "40s", "tcp": {"profile": "linux", "cc": "reno"}}
    results = aqmlab.run(scenario(ledbat(target="25ms"), reno, limit=100, duration="80s", warmup="10s"))
    bins = results.throughput
    during = bins[(bins.time >= 10) & (bins.time < 40)].groupby("flow").bps.mean()
    assert during[0] / (during[0] + during[1]) < 0.05, during
    after = bins[(bins.time >= 42) & (bins.flow == 0)].bps.mean()
    assert after >= 0.95 * 10e6


@pytest.mark.parametrize(
    ("parameters", "message"),
    [
        ({"target": "150ms"}, r"^flows\[0\]\.tcp\.ledbat\.target: must be at most 100ms \(RFC 6817 §2\.5"),
        ({"gain": 2}, r"^flows\[0\]\.tcp\.ledbat\.gain: must be in \(0, 1\], got 2$"),
        ({"min_cwnd": 4}, r"^flows\[0\]\.tcp\.ledbat\.min_cwnd: must be in \[1, 2\], got 4$"),
    ],
)
def test_bad_parameters_name_the_field(parameters, message):
    with pytest.raises(aqmlab.ScenarioError, match=message):
        aqmlab.run(scenario(ledbat(**parameters), limit=100, duration="1s", warmup="0s"))


def test_same_seed_same_results():
    def run():
        reno = {"type": "tcp", "start": "1s", "stop": "5s", "tcp": {"profile": "linux", "cc": "reno"}}
        results = aqmlab.run(scenario(ledbat(target="25ms"), reno, limit=100, duration="8s", warmup="0s"))
        return results.flows.to_json(), results.throughput.to_json(), results.queue_delay.to_json()

    assert run() == run()
