"""The demo comparison (CSFQ Fig. 3(b)) on a stand-in without TCP, and its checks."""

import aqmlab
import pytest
from aqmlab.experiments import Row, registry
from aqmlab.experiments.csfq.demo import MECHANISMS, compare, udp_ordering_row


def stand_in() -> aqmlab.Scenario:
    """The demo's scenario with the 31 TCP flows replaced by 31 jittered CBR flows at 50 kbps."""
    scenario = aqmlab.load(aqmlab.scenarios_dir() / "csfq-fig3b.toml")
    assert scenario.get("flows[1]")["type"] == "tcp" and scenario.get("flows[1].count") == 31
    return scenario.with_(
        {
            "flows[1]": {
                "name": "small",
                "type": "cbr",
                "rate": "50kbps",
                "count": 31,
                "jitter": True,
                "start_jitter": "0.2s",
            }
        }
    ).with_duration("4s", warmup="2s")


def test_demo_setup_matches_the_paper():
    scenario = aqmlab.load(aqmlab.scenarios_dir() / "csfq-fig3b.toml")
    assert scenario.get("topology.bottleneck.rate") == "10Mbps" and scenario.get("topology.bottleneck.delay") == "1ms"
    assert scenario.get("topology.access_delay") == scenario.get("topology.sink_delay") == "1ms"
    assert scenario.get("flows[0]") == {"name": "udp", "type": "cbr", "rate": "10Mbps", "jitter": True}
    # §3's 64 KB buffer everywhere: the paper's mechanisms, SRED and LQD in bytes, RED-PD in its
    # RED, BRED, CoDel, FQ-CoDel, PIE, DualPI2, SFQ, SFB and CHOKe as 64 packets of 1000 bytes.
    in_packets = ("bred", "codel", "fq_codel", "pie", "dualpi2", "sfq", "sfb", "choke")
    others = {"red_pd", *in_packets}
    assert {m["limit_bytes"] for name, m in MECHANISMS.items() if name not in others} == {"64KB"}
    assert MECHANISMS["red_pd"]["red"]["limit_bytes"] == "64KB"
    assert {MECHANISMS[m]["limit"] for m in in_packets} == {64}
    for name in ("red", "fred-1", "fred-2"):
        assert (MECHANISMS[name]["min_th"], MECHANISMS[name]["max_th"]) == (16000, 32000)
    # CHOKe's RED is the demo's, its thresholds in 1000-byte packets.
    assert (MECHANISMS["choke"]["min_th"], MECHANISMS["choke"]["max_th"]) == (16, 32)
    assert {k: MECHANISMS["choke"][k] for k in ("w_q", "max_p")} == {"w_q": 0.002, "max_p": 0.1}
    assert MECHANISMS["fred-2"]["two_packet_buffer"] and not MECHANISMS["fred-1"].get("two_packet_buffer")
    assert {MECHANISMS["csfq"][k] for k in ("k", "k_alpha", "k_c")} == {"100ms"}


def test_compare_tables_and_rows_on_a_cbr_stand_in():
    reproduction = compare(stand_in(), {"droptail": MECHANISMS["droptail"]})
    per_flow = reproduction.data["per_flow"]
    assert len(per_flow) == 32
    # Max-min shares: each small flow its 50 kbps demand, the UDP flow the remaining 8.45 Mbps.
    assert per_flow["fair_share_mbps"].tolist() == pytest.approx([8.45] + [0.05] * 31)
    udp = per_flow.loc[0, "droptail_mbps"]
    others = per_flow.loc[1:, "droptail_mbps"].sum()
    # Drop-tail shares in proportion to the offered load: 10 of 11.55 Mbps offered is the UDP flow's.
    assert udp == pytest.approx(10 * 10 / 11.55, rel=0.05)
    assert udp + others == pytest.approx(10.0, rel=0.02)  # the drop-tail link stays full
    assert per_flow["droptail_norm"].tolist() == pytest.approx(
        (per_flow["droptail_mbps"] / per_flow["fair_share_mbps"]).tolist()
    )
    # One row: the UDP flow's goodput (the TCPs' total is the rest of a full link, not checked).
    (udp_row,) = reproduction.rows
    assert (udp_row.metric, udp_row.ours, udp_row.passed) == ("UDP goodput, droptail (Mbps)", pytest.approx(udp), True)
    assert udp_row.key == "udp.droptail"
    assert reproduction.data["mechanisms"].iloc[0]["tcp_total_mbps"] == pytest.approx(others)
    overview = reproduction.data["mechanisms"].iloc[0]
    assert overview["utilisation"] >= 0.99
    assert reproduction.notes == [f"Jain index of goodput / fair share: droptail {overview['jain_index']:.3f}"]
    assert reproduction.figure is not None and reproduction.passed


def test_demo_is_registered():
    assert registry()["demo"].function.__module__ == "aqmlab.experiments.csfq.demo"


def test_row_tolerances():
    assert Row.within("x", 0.361, 0.44, 0.25, relative=True, key="k").passed  # 0.44 <= 0.361 * 1.25
    assert not Row.within("x", 0.361, 0.46, 0.25, relative=True, key="k").passed
    assert Row.between("x", "almost 1.8", 2.7, 1.0, 2.7, key="k").passed
    assert not Row.between("x", "", 0.99, 1.0, 2.7, key="k").passed
    assert Row.at_least("x", "over 8", 7.0, 7.0, key="k").to_dict() == {
        "key": "k",
        "metric": "x",
        "paper": "over 8",
        "ours": 7.0,
        "tolerance": ">= 7",
        "pass": True,
    }


def test_udp_ordering_row():
    assert udp_ordering_row({"droptail": 9.0, "red": 8.5}) is None  # one group: nothing to order
    good = udp_ordering_row({"droptail": 9.0, "red": 8.5, "csfq": 0.36, "drr": 0.40, "fred-1": 1.8})
    assert good.passed and good.ours == "csfq 0.36 < drr 0.40 < fred-1 1.80 < red 8.50 < droptail 9.00"
    assert good.tolerance == "order exact (ties within a group free)" and good.key == "order.udp"
    assert not udp_ordering_row({"droptail": 9.0, "fred-1": 9.5}).passed
