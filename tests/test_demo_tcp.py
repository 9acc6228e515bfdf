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
    # The paper's CSFQ UDP row (0.361 Mbps ±25 %, so at most 0.451) failed after issue 9's TCP
    # fix at 0.452 Mbps, 0.2 % over its bound; with per-flow-name random streams (issue 9 item 4)
    # it reads 0.452 -> 0.440 Mbps (quick) and passes, as does every other row.
    failing = {r["key"] for r in report["rows"] if not r["pass"]}
    assert failing == set(), failing
    assert report["passed"] and done.returncode == 0
    assert (tmp_path / "demo.png").stat().st_size > 10_000


def test_shipped_scenarios_are_valid():
    for path in sorted(aqmlab.scenarios_dir().glob("*.toml")):
        aqmlab.load(path).validate()
