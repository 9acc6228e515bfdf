"""RED-PD §5.2 and §7 reproductions (python/aqmlab/experiments/redpd/*.py, setup in
redpd/__init__.py) in quick mode: the closed forms the rows compare with, the rows that hold, and the
rows that fail, by key, with their measured reason."""

import math

import aqmlab
import pytest
from aqmlab.experiments import Reproduction, not_reproduced_list, registry
from aqmlab.experiments import redpd as r
from aqmlab.experiments._verdicts import ns2_reference
from aqmlab.experiments.redpd import DURATION
from aqmlab.experiments.redpd import fig9_sim as redpd_fig9_sim
from aqmlab.experiments.redpd._web import web_scenario
from conftest import failing, rows

IDS = [
    "redpd-fig11",
    "redpd-fig12",
    "redpd-fig13",
    "redpd-fig14",
    "redpd-fig15",
    "redpd-fig16",
    "redpd-fig22",
    "redpd-sec6.3",
    "redpd-fig17",
    "redpd-fig18",
    "redpd-fig19",
    "redpd-fig8",
    "redpd-fig9-sim",
    "redpd-sec6.4",
    "redpd-ns2-suite",
]
# Issue 11's ids: every one is either an experiment or listed as not reproduced.
ISSUE_IDS = IDS + ["redpd-fig20-21"]


@pytest.fixture(scope="module")
def quick() -> dict[str, Reproduction]:
    experiments = registry()
    return {id: experiments[id].run(quick=True) for id in IDS}


def test_every_issue_id_is_listed():
    listed = set(registry()) | set(not_reproduced_list())
    assert set(ISSUE_IDS) <= listed, set(ISSUE_IDS) - listed


def test_closed_forms_are_the_papers():
    # Eq. 1 at R = 40 ms, p = 1 %: √1.5 / 0.004 = 306.2 packets/s.
    assert r.reference_rate(0.01) == pytest.approx(306.19, abs=0.01)
    # Eq. 6 (derived in reproduction-targets): 19.6, 39.2, 49.0 s at α = 3, 2, 1.5.
    assert [round(r.cutdown_time(4, a, 0.01), 1) for a in (3, 2, 1.5)] == [19.6, 39.2, 49.0]
    # Eq. 7, §5.2's worked example: P = 0.75, p = 1 % → 10.58 s.
    assert round(r.release_time(0.75, 0.01), 2) == 10.58
    # Eq. 4 at γ = 1, p = 1 %: 60 packets per interval, P(1) = 1 − 0.99^60 = 0.4528, and at
    # least 3 of 5: 10·P²(1−P)²·P + 5·P⁴(1 − P) + P⁵ = 0.412 (targets 1.B, redpd-eq4).
    p1 = 1 - 0.99**60
    by_hand = 10 * p1**3 * (1 - p1) ** 2 + 5 * p1**4 * (1 - p1) + p1**5
    assert redpd_fig9_sim.identification_probability(1.0, 0.01) == pytest.approx(by_hand, rel=1e-12)
    assert round(by_hand, 3) == 0.412
    # §7.2: 1000-byte packets, SACK without delayed ACK, R = 40 ms.
    assert (r.PACKET, r.TCP["variant"], r.TCP["delayed_ack"], r.TARGET_RTT) == (1000, "sack", False, 0.040)


def test_fig11_cutdown_follows_eq6_and_release_eq7(quick):
    reproduction = quick["redpd-fig11"]
    assert failing(reproduction) == set()
    ours = {key: row.ours for key, row in rows(reproduction).items()}
    # Slower the lower the target: 19 < 39 < 52 s (eq. 6: 19.6, 39.2, 49.0).
    assert ours["cutdown.alpha_3"] < ours["cutdown.alpha_2"] < ours["cutdown.alpha_1.5"]
    assert ours["release"] == pytest.approx(10.58, rel=0.3)
    # The text's engine is graded (eqs. 6, 7 are its rules); ns-2's is shown beside it and cuts
    # faster: α = 3, 2, 1.5 in 13, 32, 44 s against 19, 39, 52 s (ns-2 itself: 14.8 ± 4, 32.2 ± 6,
    # 44.2 ± 9), and does not release the flow within the 20 s after the cut (ns-2 releases it
    # 15–27 s after); a release before the cut is not counted.
    assert not rows(reproduction)["cutdown.alpha_3.ns2"].graded
    assert ours["cutdown.alpha_3.ns2"] < ours["cutdown.alpha_3"]
    assert math.isnan(ours["release.ns2"])


def test_fig12_larger_quantum_for_the_higher_sender(quick):
    reproduction = quick["redpd-fig12"]
    # ns-2's engine, 5 seeds: the 4× flow reaches 2·f(R,p) in 29.0 s on average with the 2×
    # companion (25–36) against 29.6 s alone (26–33), the paper's order in 3 of 5 seeds and one
    # tie (ns-2: 26.8 against 32.2 s, 4 of 5; the text's engine, one seed: 42 against 39 s, failing).
    assert failing(reproduction) == set()
    table = reproduction.data["fig12"]
    assert list(table["seed"]) == [1, 2, 3, 4, 5]
    assert (table["time_2_flows_s"] < table["time_1_flow_s"]).sum() == 3
    assert (table["2x"] < table["4x"]).all()


def test_fig13_received_rate_levels_off_above_f(quick):
    reproduction = quick["redpd-fig13"]
    # ns-2's engine (FRp mode: the fixed loss in front of RED, pre-filter drops spaced) holds
    # the plateau under f(R,p) in the script's 50–990 s window: 0.99, 0.92, 0.91, 0.90 at
    # γ = 1.5, 2, 3, 4 (slope −0.03; ns-2 there: 0.895, 0.908, 0.899, 0.937); in our 100–200 s
    # window (informative) 0.96, 0.82, 0.93, 0.93. Seeds 1–5 spread 0.88–0.99 (means 0.93,
    # 0.91, 0.94, 0.93).
    assert failing(reproduction) == set()
    table = reproduction.data["fig13"].set_index("gamma")
    assert table.loc[[1.5, 2.0, 3.0, 4.0], "received_over_f"].between(0.85, 1.0).all()
    window = [row for row in reproduction.rows if row.key.endswith(".ours_window")]
    assert len(window) == 7 and all(row.passed and not row.graded for row in window)
    # Still far below the sending rate above γ = 1 (a 4·f flow gets 30 % of its rate).
    assert (table.loc[[2.0, 3.0, 4.0], "received_over_f"] < 0.5 * table.loc[[2.0, 3.0, 4.0]].index).all()
    # Low senders lose only about p: within 10 % of γ(1 − p).
    assert table.loc[0.25, "received_over_f"] == pytest.approx(0.25 * 0.99, rel=0.1)


def test_the_ns2_column_is_shown_where_it_measures_the_run(quick):
    """Issue 27: ns-2's recorded values stand beside the rows they measure alike. fig11, fig12,
    fig13 and fig16's quick runs are their full runs, so every recorded row is shown; fig13's
    graded rows are ns-2's in the script's 50–990 s window, its `.ours_window` rows in 100–200 s.
    fig14's quick run is 40 s, not the recorded 100 s: no column, and it says why."""
    for id in ("redpd-fig11", "redpd-fig12", "redpd-fig13", "redpd-fig16"):
        reproduction, recorded = quick[id], ns2_reference(id)
        assert reproduction.ns2.keys() == recorded.rows.keys(), id
        shown = {row["key"] for row in reproduction.to_dict()["rows"] if "ns2" in row}
        assert shown == recorded.rows.keys(), id
    fig13 = quick["redpd-fig13"].ns2
    assert {"plateau.gamma_3", "plateau.gamma_3.ours_window", "slope", "slope.ours_window"} <= fig13.keys()
    assert "50–990 s" in fig13["plateau.gamma_3"].note and "100–200 s" in fig13["plateau.gamma_3.ours_window"].note
    fig14 = quick["redpd-fig14"]
    assert fig14.ns2 == {} and fig14.ns2_source.startswith("not shown: ns-2's values measure the full run")


def test_fig14_red_pd_approaches_max_min_and_cuts_the_ambient_drop_rate(quick):
    reproduction = quick["redpd-fig14"]
    # ns-2's engine with §6.2's test off (the authors' allUDP.sh, graded): flow 3 (1 Mb/s, just
    # under its 1.05 Mb/s share) gets 0.93 of its rate (ns-2 0.906 ± 0.032); every flow above
    # its share gets 0.91–1.19 Mb/s. The ambient drop rate over the window (20–40 s) is 0.025
    # (ns-2, 20–100 s: 0.0235); over the whole run it was 0.143, as RED drops 61 % before the
    # engine starts at 10.1 s. With the test on 0.017 (ns-2: 0.012), under the paper's "roughly
    # 4 %" band in both.
    assert failing(reproduction) == set()
    # The test on, informative: flow 3 gets 0.86 of its rate, flow 6 (2.5 Mb/s) 1.46 Mb/s.
    info = {row.key for row in reproduction.rows if not row.graded and not row.passed}
    assert info == {"red_pd.protected3.test_on", "red_pd.flow6.test_on", "drop.red_pd.test_on"}
    table = reproduction.data["fig14"]
    ambient = rows(reproduction)
    assert ambient["drop.red_pd"].ours < ambient["drop.red"].ours / 4
    # The two smallest flows are protected: at least 90 % of their rate (RED: about 37 %).
    assert (table["red_pd"][:2] >= 0.9 * table["rate"][:2]).all()
    assert (table["red"][:2] < 0.5 * table["rate"][:2]).all()


def test_the_ambient_drop_rate_is_the_measurement_windows():
    """§7.2 measures "not before 20 seconds": the queue is plain RED until the engine starts at
    10.1 s (61 % drops in fig14's mix), which the window leaves out and the whole run does not."""
    from aqmlab.experiments.redpd.fig14 import fig14_scenario

    results = aqmlab.run(fig14_scenario("red_pd", 40.0))
    link, drops = results.link("L->R"), results.drops
    red = drops[(drops["link"] == link["id"]) & drops["reason"].isin(("early", "forced", "overflow"))]
    whole_run = red["count"].sum() / (link["packets_sent"] + red["count"].sum())
    assert whole_run > 0.1 and r.ambient_drop_rate(results) < 0.04
    # Arrivals are what the sources sent in the window less the pre-filter's drops.
    prefilter = drops.loc[drops["reason"] == "pre_filter", "window_count"].sum()
    arrivals = results.flows["window_sent_packets"].sum() - prefilter
    assert r.ambient_drop_rate(results) == red["window_count"].sum() / arrivals


def test_fig15_red_pd_holds_the_udps_near_the_equal_share(quick):
    reproduction = quick["redpd-fig15"]
    # In the 40 s quick run the 5 and 3 Mb/s UDPs keep 0.92 and 1.00 Mb/s (the paper: 0.83 ± 40 %),
    # and the 70 ms TCPs get 0.64 Mb/s each against the 30 and 50 ms ones' 0.75 and 0.77.
    assert failing(reproduction) == set()
    table = reproduction.data["fig15"]
    udp = table["kind"].str.startswith("UDP")
    # RED lets the UDPs through at 8.1 Mb/s in all, ns-2's RED-PD at 2.8 (2.9×).
    assert table.loc[udp, "red"].sum() > 2 * table.loc[udp, "red_pd"].sum()
    # Every TCP gains under RED-PD.
    assert (table.loc[~udp, "red_pd"] > table.loc[~udp, "red"]).all()


def test_fig16_unresponsive_test_cuts_sooner_and_releases_later(quick):
    reproduction = quick["redpd-fig16"]
    # In the 40 s quick run the test declares the UDP unresponsive at 2.1 s and cuts it down in
    # 2 s against 3 s without the test (the alternative measure: 8 s against 11 s; ns-2: 2.2 s
    # against 3.8 s, 7 s against 15 s).
    assert failing(reproduction) == set()
    table = reproduction.data["fig16"].set_index("test")
    assert 1.0 <= table.loc["on", "declared"] <= 6.0
    # Released 11.2 s after the fall with the test off, 28.7 s with it on (ns-2: 22.3 and 25.5).
    assert table.loc["off", "release"] < table.loc["on", "release"]


def test_fig22_larger_target_cuts_the_ambient_drop_rate(quick):
    reproduction = quick["redpd-fig22"]
    # ns-2's engine monitors the 40 ms TCPs more than 10 % of the run from R = 10 ms (11 %) and
    # the 80 ms ones from R = 30 ms (17 %; ns-2 14 and 24 ms). In the 40 s quick run the 40 ms
    # flows' bandwidth at R = 40, 100, 170 ms is 1.41, 0.91, 1.04 and the 160 ms flows' 0.41,
    # 0.56, 0.50: neither monotone (the 100 s runs hold both orders: 1.30 > 0.90 > 0.82 and
    # 0.44 < 0.54 < 0.57; ns-2: 1.12, 0.87, 0.91 and 0.52, 0.60, 0.62).
    assert failing(reproduction) == {"first.40ms", "first.80ms", "order.bw_40ms", "order.bw_160ms"}
    table = reproduction.data["fig22"].set_index("target")
    # The 40 ms TCPs are monitored most of the run from R = 40 ms on (0.61), the 80 ms ones
    # from 60 ms (0.55; 0.35 at 50 ms).
    assert (table.loc[40:, "monitored_40ms"] > 0.5).all()
    assert (table.loc[60:, "monitored_80ms"] > 0.5).all()
    assert table.loc[10, "ambient"] > table.loc[170, "ambient"]


def test_sec6_3_a_bursty_flow_evades_identification(quick):
    reproduction = quick["redpd-sec6.3"]
    assert failing(reproduction) == set()
    table = reproduction.data["sec6_3"].set_index("flow")
    # The on/off flow keeps most of its 9.8 Mb/s; the CBR flow is held near f(R,p) = 2.45 Mb/s.
    assert table.loc["onoff", "received_mbps"] > 2 * table.loc["cbr", "received_mbps"]


def test_fig17_18_web_traffic_gains_and_the_udp_and_20ms_tcps_lose(quick):
    web, long = quick["redpd-fig17"], quick["redpd-fig18"]
    assert failing(web) == set() and failing(long) == set()
    table = web.data["fig17"].set_index("mechanism")
    # The tail gains most: the 90th percentile drops by 23 % (0.83 -> 0.63 s), the median by 1 %.
    assert table.loc["red_pd", "p90_s"] < 0.95 * table.loc["red", "p90_s"]
    groups = long.data["fig18"].set_index("group")
    # RED gives the 2 Mb/s UDP nearly all it sends (1.95 Mb/s); RED-PD less, 1.09 in the 40 s
    # quick run, whose engine starts at 10.1 s. Over the 100 s runs less than half: 0.53–0.86,
    # mean 0.71, over seeds 1–8 (ns-2, with its own web traffic: 0.61).
    assert groups.loc["udp", "red_pd"] < 0.6 * groups.loc["udp", "red"]
    udp = []
    for seed in (1, 2, 3):
        scenario = web_scenario("red_pd", DURATION)
        scenario["simulation"]["seed"] = seed
        udp.append(float(aqmlab.run(scenario).flows.set_index("name").at["udp", "goodput_bps"]) / 1e6)
    assert sum(udp) / len(udp) < 0.5 * groups.loc["udp", "red"]


def test_fig19_red_pd_helps_the_through_flow_across_several_links(quick):
    reproduction = quick["redpd-fig19"]
    # At one link the 1 Mb/s UDP (above its 0.91 Mb/s share there) gets 0.88 Mb/s under RED-PD
    # against RED's 0.83 (ns-2, with the script's 4 Mb/s cross UDPs: 0.88 against 0.89).
    assert failing(reproduction) == set()
    # With the script's 4 Mb/s cross UDPs (informative) every row holds but that one: 0.90 against 0.91.
    script = [row for row in reproduction.rows if row.key.endswith(".script")]
    assert len(script) == 10 and not any(row.graded for row in script)
    assert {row.key for row in script if not row.passed} == {"udp.links1.script"}
    table = reproduction.data["fig19"].set_index(["through", "mechanism", "links"])["mbps"]
    # The TCP through flow gains most: at 5 links RED starves it, RED-PD does not.
    assert table["tcp", "red_pd", 5] > 0.05 > table["tcp", "red", 5]


def test_fig8_single_list_identifies_long_rtt_tcps_the_multiple_lists_spare(quick):
    reproduction = quick["redpd-fig8"]
    # ns-2's engine: in the 40 s quick run the 60 ms TCPs are monitored 36 % of it under the
    # multiple lists and 64 % under the single list (the text's engine: 61 % and 55 %, failing).
    assert failing(reproduction) == set()
    table = reproduction.data["fig8"].set_index("rtt_ms")
    # Both schemes identify less the longer the RTT, from 20 to 160 ms.
    for scheme in ("single", "multiple"):
        assert table.loc[20, scheme] > table.loc[160, scheme]
    # From 80 ms the single list monitors the flows at least twice as long as the multiple lists
    # (0.45, 0.37, 0.32 against 0.11, 0.09, 0 at 80, 120, 160 ms; §4.3: losses rather than loss events).
    assert (table.loc[80:, "single"] > 2 * table.loc[80:, "multiple"]).all()


def test_fig9_cbr_identified_as_often_as_eq4(quick):
    reproduction = quick["redpd-fig9-sim"]
    assert failing(reproduction) == set()
    table = reproduction.data["fig9"]
    # 5000 overlapping rounds per point, eq. 3's intervals exactly (10 %: 62 ms, not ns-2's 80 ms floor).
    assert (table["rounds"] == 5000).all()
    # Identified below f(R,p) too (eq. 4: 0.41–0.44 at γ = 1), and almost always at 4·f.
    assert (table.loc[table["gamma"] == 1.0, "identified"] > 0.3).all()
    assert (table.loc[table["gamma"] == 4.0, "identified"] > 0.98).all()


def test_sec6_4_byte_mode_counting_eq5_in_bytes_favours_small_packets(quick):
    reproduction = quick["redpd-sec6.4"]
    # Eq. 5 in bytes under byte-mode RED (the paper's reading), ns-2's engine: the 500-byte
    # group gets 1.01×, 1.12× and 1.33× the 1000-byte group's bytes at p = 1, 5, 10 % (the
    # text's engine: 1.18× and 1.16× at 5 and 10 %), the 1000-byte flows pre-filtered more.
    assert failing(reproduction) == {"bytes.p10"}
    table = reproduction.data["sec6_4"].set_index(["mode", "p"])
    for p in (0.05, 0.10):
        assert table.loc[("bytes", p), "large_prefiltered"] > table.loc[("bytes", p), "small_prefiltered"]
    # Counting eq. 5's drops in packets brings every p within 15 % (informative rows; 1.00,
    # 1.04, 1.05).
    alt = {row.key: row.passed for row in reproduction.rows if row.key.endswith(".alt")}
    assert alt == {"bytes.p1.alt": True, "bytes.p5.alt": True, "bytes.p10.alt": True}
    # Packet mode: the small-packet group, above f(R,p) in packets/s, gets at most 0.7 of the other's bytes.
    assert (table.xs("packets")["ratio"] < 0.75).all()


# ns-2.35 (Debian's ns2) running test-suite-red-pd.tcl, whose traces match the suite's stored
# reference outputs byte for byte: `cbrs` and `cbrs-noidle` print the link utilisation, and the
# 0.1 Mb/s CBRs' and the 0.5 Mb/s CBR's goodput over the 30 s come from its packet trace. The
# utilisation with its spread, three standard deviations over 101 seeds (`cbrs`: 0.926–1.000;
# `validate ns2` compares the means over 20 seeds); `cbrs-noidle` is always 1.000.
NS2_UTILISATION = {"cbrs": (0.985, 3 * 0.0133), "cbrs-noidle": (1.000, 0.005)}
NS2_CBRS_MBPS = {"cbr1": 0.0903, "cbr2": 0.0880, "cbr": 0.3134}


def test_ns2_suite_scenarios_behave_as_scripted(quick):
    reproduction = quick["redpd-ns2-suite"]
    # `unresponsive`: 13.5 % of the CBR's arrivals from 10 to 20 s are pre-filtered where P spaced
    # with the gate open as measured gives 16.7 ± 2.1 % (the first band, 9–20 %, holds).
    assert failing(reproduction) == {"unresponsive.during"}
    # ns-2's own suite misses the band too (20 seeds: 11.5 %, 7.8-15.0 %), with ours inside its range.
    assert reproduction.verdicts["unresponsive.during"][0] == "ns2"
    ours = {key: row.ours for key, row in rows(reproduction).items()}
    # The scripted times hold to the nanosecond.
    assert (ours["unresponsive.monitored_at"], ours["unresponsive.declared_at"]) == (10.0, 20.0)
    table = reproduction.data["ns2_suite"].set_index(["scenario", "flow"])
    # RED-PD's profile ns2: the engine starts at 10.1 s, so the three CBRs of `cbrs`, dropped in
    # every interval, are monitored when the third list closes, 10.1 + 2 × 2R = 10.26 s, as in ns-2.
    for flow, mbps in NS2_CBRS_MBPS.items():
        assert table.loc[("cbrs", flow), "monitored_at"] == pytest.approx(10.26, abs=1e-9)
        assert table.loc[("cbrs", flow), "mbps"] == pytest.approx(mbps, rel=0.1)
    # The 0.1 Mb/s CBRs are never declared unresponsive (ns-2 neither).
    assert math.isnan(table.loc[("cbrs", "cbr1"), "unresponsive_at"])
    assert math.isnan(table.loc[("cbrs", "cbr2"), "unresponsive_at"])
    utilisation = table.groupby("scenario")["utilisation"].first()
    for scenario, (expected, spread) in NS2_UTILISATION.items():
        assert utilisation[scenario] == pytest.approx(expected, abs=spread)
