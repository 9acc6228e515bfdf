"""docs/scenario.md's scenario files run as written (issue 34 items 3 and 10): every ```toml block
is a whole scenario that loads and runs, and what the text says of the graph example with flows of
different round-trip times (its `[[topology.links]]` form), and of `compare --link` on it, is what
they do."""

from __future__ import annotations

import json
import re
import shlex

import aqmlab
import pytest
from conftest import ROOT, aqmlab_cli

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


def test_the_compare_the_text_shows_runs_on_the_named_link(tmp_path):
    # "`aqmlab compare two-rtts.toml -m scenario,fq_codel --link "R1->R2"` ... the 80 ms flows then
    # get about 2.2 Mbps each and the 20 ms ones 2.7", and without --link it says so.
    (text,) = [block for block in BLOCKS if named(block) == "two-rtts.toml"]
    command = re.search(r"`aqmlab compare (two-rtts\.toml [^`]+)`", DOC.read_text())[1]
    args = shlex.split(command)
    assert args == ["two-rtts.toml", "-m", "scenario,fq_codel", "--link", "R1->R2"]
    (tmp_path / "two-rtts.toml").write_text(text)
    done = aqmlab_cli("compare", *args, "--json", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    rows = {row["mechanism"]: row for row in json.loads(done.stdout)["mechanisms"]}
    each = {group: rows["fq_codel"][f"{group}_mbps"] / 2 for group in ("rtt20", "rtt80")}
    assert each == pytest.approx({"rtt20": 2.7, "rtt80": 2.2}, abs=0.15)
    # "closer than 1.9 against 3.1": the scenario's own drop-tail row is the run above.
    assert rows["scenario"]["rtt80_mbps"] / 2 == pytest.approx(1.9, abs=0.2)
    done = aqmlab_cli("compare", *args[:3], cwd=tmp_path)
    assert done.returncode == 2
    assert done.stderr.startswith(
        "error: two-rtts.toml: a graph topology has no one bottleneck: name the link with --link"
    )
