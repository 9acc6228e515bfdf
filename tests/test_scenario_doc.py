"""docs/scenario.md's scenario files run as written (issue 34 item 10): every ```toml block is a
whole scenario that loads and runs, and what the text says of the graph example with flows of
different round-trip times (its `[[topology.links]]` form) is what it does."""

from __future__ import annotations

import re

import aqmlab
import pytest
from conftest import ROOT

DOC = ROOT / "docs" / "scenario.md"
BLOCKS = re.findall(r"```toml\n(.*?)```", DOC.read_text(), re.S)


def named(text: str) -> str:
    """A block's file name from its first line (`# two-rtts.toml: ...`), or its `name`."""
    first = re.match(r"# (\S+\.toml):", text)
    return first[1] if first else re.search(r'^name = "([^"]+)"', text, re.M)[1] + ".toml"


@pytest.fixture(scope="module")
def ran(tmp_path_factory) -> dict[str, aqmlab.Results]:
    folder = tmp_path_factory.mktemp("scenario-doc")
    results = {}
    for text in BLOCKS:
        path = folder / named(text)
        path.write_text(text)
        results[path.name] = aqmlab.run(aqmlab.load(path))
    return results


def test_every_toml_block_runs(ran):
    assert sorted(ran) == ["cbr-overload.toml", "two-rtts.toml"]
    assert all(results.summary()["flows"] for results in ran.values())


def test_flows_of_different_rtts_in_a_graph(ran):
    flows = ran["two-rtts.toml"].flows.set_index("name")
    # "a base RTT of 2 x (2 + 5 + 3) ms = 20 ms, the far hosts' 2 x (32 + 5 + 3) ms = 80 ms"
    assert flows["base_rtt"].to_dict() == pytest.approx(
        {"rtt20[0]": 0.02, "rtt20[1]": 0.02, "rtt80[0]": 0.08, "rtt80[1]": 0.08}
    )
    # "the 20 ms flows take about 3.1 Mbps each and the 80 ms flows about 1.9 Mbps, though each
    # one's fair share is 2.5 Mbps"
    near = flows.loc[["rtt20[0]", "rtt20[1]"], "goodput_bps"].mean() / 1e6
    far = flows.loc[["rtt80[0]", "rtt80[1]"], "goodput_bps"].mean() / 1e6
    assert near == pytest.approx(3.1, abs=0.2) and far == pytest.approx(1.9, abs=0.2)
    assert set(flows["fair_share_bps"]) == {2.5e6}
    assert ran["two-rtts.toml"].link("R1->R2")["utilisation"] > 0.99
