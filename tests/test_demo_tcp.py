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
    # The paper's CSFQ UDP row (0.361 Mbps ±25 %, so at most 0.451) passed with today's RFC TCP
    # (0.440 Mbps, quick) and fails with the paper's ns-2 TCP (issue 9 item 3: 0.504 Mbps): the
    # TCPs' timeouts keep CSFQ's fair-share estimate α above their rate, measured in the reason.
    failing = {r["key"] for r in report["rows"] if r.get("graded", True) and not r["pass"]}
    assert failing == {"udp.csfq"}, failing
    assert "timeouts" in rows["UDP goodput, csfq (Mbps)"]["reason"]
    rfc = {r["key"]: r for r in report["rows"] if r["key"].endswith(".alt_rfc")}
    assert (
        rfc["udp.csfq.alt_rfc"]["pass"] and rfc["udp.csfq.alt_rfc"]["ours"] < rows["UDP goodput, csfq (Mbps)"]["ours"]
    )
    assert not report["passed"] and done.returncode == 1
    assert (tmp_path / "demo.png").stat().st_size > 10_000


def test_shipped_scenarios_are_valid():
    for path in sorted(aqmlab.scenarios_dir().glob("*.toml")):
        aqmlab.load(path).validate()
