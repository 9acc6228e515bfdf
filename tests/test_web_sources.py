"""SRED §VII's web-like sources (`workload = { type = "neidhardt" }`) run end to end: files of
eq. 7.1's size, think times of eq. 7.2 starting when a file is acknowledged, and the count of
active sources over time."""

import math

import aqmlab
import numpy as np
import pandas as pd
import pytest

SEGMENT = 536
MEDIAN, SHAPE = 2190.0, 1.15066


def web_scenario(count: int = 20, duration: str = "200s", workload: dict | None = None) -> aqmlab.Scenario:
    return aqmlab.Scenario.from_dict(
        {
            "simulation": {"duration": duration, "seed": 3},
            "topology": {"type": "dumbbell", "bottleneck": {"rate": "45Mbps", "delay": "1ms"}},
            "flows": [
                {
                    "name": "web",
                    "type": "tcp",
                    "count": count,
                    "packet_size": SEGMENT + 40,
                    "workload": workload or {"type": "neidhardt"},
                }
            ],
        }
    )


@pytest.fixture(scope="module")
def web_run() -> aqmlab.Results:
    return aqmlab.run(web_scenario())


def test_think_time_starts_after_the_last_ack_and_is_at_least_50_ms(web_run):
    transfers = web_run.transfers.sort_values(["flow", "start"])
    for _, flow in transfers.groupby("flow"):
        done = flow.dropna(subset=["end"])
        gaps = flow["start"].to_numpy()[1:] - done["end"].to_numpy()[: len(flow) - 1]
        assert (gaps >= 0.05 - 1e-9).all(), gaps.min()


def test_file_sizes_follow_eq_7_1_in_whole_segments(web_run):
    packets = web_run.transfers["packets"]
    assert len(packets) > 1000
    # P{packets <= 4} = P{F <= 4 segments} = 1 - (1 + (2144/2190)^α)^-1; band: 3σ of a binomial proportion.
    expected = 1 - 1 / (1 + (4 * SEGMENT / MEDIAN) ** SHAPE)
    measured = (packets <= 4).mean()
    assert abs(measured - expected) < 3 * math.sqrt(expected * (1 - expected) / len(packets)), (measured, expected)


def test_active_sources_counts_open_transfers():
    results = aqmlab.run(web_scenario(count=1, duration="3s"))
    results.transfers = pd.DataFrame({"flow": [0, 1, 2], "start": [0.0, 0.5, 1.5], "end": [1.0, 2.0, np.nan]})
    active = results.active_sources(0.5)
    # At 0: one open; 0.5: two; 1.0: the first ended; 1.5: two; 2.0: the second ended; 2.5: the open one.
    assert active.tolist() == [1, 2, 1, 2, 1, 1]
    assert active.index.tolist() == [0.0, 0.5, 1.0, 1.5, 2.0, 2.5]


def test_think_weights_must_sum_to_one():
    bad = web_scenario(workload={"type": "neidhardt", "think": [{"weight": 0.5, "median": "1s", "shape": 1.2}]})
    with pytest.raises(aqmlab.ScenarioError, match=r"^flows\[0\]\.workload\.think: weights must sum to 1, got 0\.5$"):
        bad.validate()
