"""Checks that need RED (type = "red"): they fail until the RED discipline is merged."""

import re

import aqmlab
import pytest
from aqmlab.experiments.demo import MECHANISMS
from conftest import dumbbell, write_scenario


def test_red_min_th_above_max_th_names_the_field(tmp_path):
    red = {**MECHANISMS["red"], "min_th": 32000, "max_th": 16000}
    path = write_scenario(tmp_path / "bad.toml", dumbbell({"type": "cbr", "rate": "1Mbps"}, qdisc=red))
    with pytest.raises(aqmlab.ScenarioError) as info:
        aqmlab.load(path).validate()
    message = str(info.value)
    assert re.match(r"topology\.bottleneck\.qdisc\.(min_th|max_th): ", message), message
    assert "32000" in message and "16000" in message


def test_the_demo_red_configuration_is_valid():
    aqmlab.Scenario.from_dict(dumbbell({"type": "cbr", "rate": "1Mbps"}, qdisc=MECHANISMS["red"])).validate()
