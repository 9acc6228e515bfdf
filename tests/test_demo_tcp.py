"""The demo end to end (31 TCP flows + 1 UDP under every mechanism of the CSFQ comparison)."""

import json

import aqmlab
from conftest import aqmlab_cli


def test_demo_udp_takes_over_7_mbps(tmp_path):
    done = aqmlab_cli("reproduce", "demo", "--quick", "--json", "--out", tmp_path)
    assert done.stdout, done.stderr
    report = json.loads(done.stdout)
    rows = {r["metric"]: r for r in report["rows"]}
    for mechanism in ("droptail", "red"):
        udp = rows[f"UDP goodput, {mechanism} (Mbps)"]["ours"]
        assert udp > 7.0, (mechanism, udp)
    assert report["passed"] and done.returncode == 0
    assert (tmp_path / "demo.png").stat().st_size > 10_000


def test_shipped_scenarios_are_valid():
    for path in sorted(aqmlab.scenarios_dir().glob("*.toml")):
        aqmlab.load(path).validate()
