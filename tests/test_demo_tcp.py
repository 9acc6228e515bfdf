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
    # The paper's CSFQ UDP row (0.361 Mbps ±25 %) fails since issue 9's TCP fix (a timeout in
    # recovery sets ssthresh = max(FlightSize/2, 2), RFC 5681 eq. 4): 0.422 -> 0.452 Mbps (full
    # and quick). It was already +9-23 % above the paper over 8 seeds (CSFQ review §4.3); the
    # reason measures CSFQ's α above the TCPs' mean and their timeouts. Every other row passes.
    failing = {r["key"] for r in report["rows"] if not r["pass"]}
    assert failing == {"udp.csfq"}, failing
    assert "fair-share estimate α" in rows["UDP goodput, csfq (Mbps)"]["reason"]
    assert not report["passed"] and done.returncode == 1
    assert (tmp_path / "demo.png").stat().st_size > 10_000


def test_shipped_scenarios_are_valid():
    for path in sorted(aqmlab.scenarios_dir().glob("*.toml")):
        aqmlab.load(path).validate()
