"""FRED's experiments (experiments/fred_*.py, setup in _fred.py): the setups follow the paper,
and the quick runs reproduce the paper's orderings of RED and FRED."""

import aqmlab
import pandas as pd
import pytest
from aqmlab.experiments import _fred, fred_fragile, fred_many_flows, registry

IDS = ("fred-fragile", "fred-cbr", "fred-many-flows")


@pytest.fixture(scope="module")
def quick_runs() -> dict:
    return {id: registry()[id].run(quick=True) for id in IDS}


def rows(reproduction, prefix: str = "") -> dict:
    """The rows whose key starts with `prefix`, by key."""
    return {r.key: r for r in reproduction.rows if r.key.startswith(prefix)}


def test_the_experiments_are_registered():
    for id in IDS:
        assert registry()[id].function.__module__ == f"aqmlab.experiments.{id.replace('-', '_')}"


def test_fragile_setup_matches_fig1():
    scenario = aqmlab.Scenario.from_dict(fred_fragile.fragile_scenario("fred", 24, 16, seed=1))
    qdisc = scenario.qdisc()
    assert (qdisc["limit"], qdisc["min_th"], qdisc["max_th"], qdisc["w_q"], qdisc["max_p"], qdisc["min_q"]) == (
        24,
        6,
        12,
        0.002,
        0.02,
        2,
    )
    results = aqmlab.run(scenario.with_duration(0.5, warmup=0.25))
    flows = results.flows
    # §3.1: RTTs of 36 ms and 6 ms (propagation), 45 Mbps bottleneck, 552-byte packets in 12 cells.
    assert flows["base_rtt"].tolist() == pytest.approx([0.036] + [0.006] * 4)
    assert results.links.set_index("name").loc["L->R", "rate_bps"] == 45e6
    assert _fred.WIRE_BYTES == 636 and 1 - 552 / _fred.WIRE_BYTES == pytest.approx(0.132, abs=5e-4)  # "13.2%"
    # §3.1: 16 packets of 512 bytes every 36 ms is "4.05% of the bottleneck link capacity".
    assert fred_fragile.FRAGILE_MAX_PAYLOAD_SHARE == pytest.approx(0.0405, abs=5e-5)
    assert _fred.WINDOW_64KB == 128


def test_many_flows_setup_has_a_16_packet_pipe():
    scenario = aqmlab.Scenario.from_dict(fred_many_flows.many_flows_scenario("fred-2pkt", 32))
    qdisc = scenario.qdisc("gateway->sink")
    assert (qdisc["limit"], qdisc["min_th"], qdisc["max_th"], qdisc["two_packet_buffer"]) == (32, 4, 8, True)
    assert scenario.get("flows[0].tcp.tiny_window") and scenario.get("flows[0].count") == 16
    results = aqmlab.run(scenario.with_duration(0.5, warmup=0.1))
    links = results.links.set_index("name")
    assert links.loc["source->gateway", "rate_bps"] == 10 * links.loc["gateway->sink", "rate_bps"]  # "one tenth"
    # "BS=RTT=16": the round-trip propagation delay holds 16 packets at the bottleneck rate.
    rtt = results.flows["base_rtt"].iloc[0]
    assert rtt * fred_many_flows.MANY_LINK_BPS / (_fred.WIRE_BYTES * 8) == pytest.approx(16, abs=0.5)
    # RED-32's unstated thresholds follow the paper's rules (BS/4, BS/2); FRED-32 keeps Fig. 8's.
    runs = fred_many_flows.TABLE5_RUNS
    assert runs["RED-32"] == ("red", 32, 8, 16) and runs["FRED-32"] == ("fred-2pkt", 32, 4, 8)


def test_gateway_rejects_unknown_mechanisms():
    with pytest.raises(ValueError, match="mechanism: expected red, fred or fred-2pkt, got 'sfq'"):
        _fred.gateway("sfq", 16, 4, 8)


def test_fragile_orderings_hold_in_quick_mode(quick_runs):
    reproduction = quick_runs["fred-fragile"]
    ordering = rows(reproduction, "order.")
    # FRED beats RED for the fragile flow at each of the six buffer sizes, for both windows.
    assert sum(k.endswith(".fred_gt_red.bw_max") for k in ordering) == 6
    assert sum(k.endswith(".fred_gt_red.bw_link") for k in ordering) == 6
    # All hold but Table 4's decline from BS=40 to BS=56 (paper 20 > 15 % of the link), which
    # fails since issue 9's TCP fix (a timeout in recovery sets ssthresh = max(FlightSize/2, 2),
    # RFC 5681 eq. 4): 24.2 > 21.5 -> 19.6 > 23.0 in quick mode. Its reason measures FRED acting
    # only through its per-flow cap (98-100 % per-flow-limit drops).
    failing = {k for k, r in ordering.items() if not r.passed}
    assert failing == {"order.t4.fred.w64k.bw_link.bs40_gt_bs56"}, failing
    assert "per-flow-limit" in reproduction.reasons["order.t4.fred.w64k.bw_link.bs40_gt_bs56"]
    # Table 3: under FRED the window-limited flow runs at >= 90% of its maximum at every BS.
    table3 = rows(reproduction, "t3.fred.w16.")
    assert sum(k.endswith(".bw_max") for k in table3) == sum(k.endswith(".fragile_loss") for k in table3) == 6
    assert all(r.passed for k, r in table3.items() if k.endswith(".bw_max"))
    assert all(r.passed for k, r in table3.items() if k.endswith(".fragile_loss"))


def test_cbr_rows_pass_in_quick_mode(quick_runs):
    reproduction = quick_runs["fred-cbr"]
    assert len(rows(reproduction, "order.")) == 4
    assert reproduction.passed, [r for r in reproduction.rows if not r.passed]
    epochs = reproduction.data["epochs"]
    fred_epochs = epochs[epochs["mechanism"] == "fred"]
    # FRED: the CBR's throughput falls as TCPs join; under RED it stays near its 8 Mbps.
    assert fred_epochs["cbr"].is_monotonic_decreasing
    assert (epochs.loc[epochs["mechanism"] == "red", "cbr"] > 7).all()


def test_many_flows_orderings_hold_in_quick_mode(quick_runs):
    reproduction = quick_runs["fred-many-flows"]
    checked = rows(reproduction)
    for key in (
        "order.rtos.fred32_fewest",
        "t5.fred32.rtos",
        "fred32.fastest_over_slowest",
        "order.fig11.fred32.empty_samples",
        "fig11.fred32.near_fair_samples",
        "order.utilisation.fred32_highest",
    ):
        assert checked[key].passed, checked[key]
    table = reproduction.data["table5"].set_index("measure")
    assert table.loc["utilisation", "FRED-32"] > 99.5


def test_fragile_failing_rows_are_the_known_ones_with_measured_reasons(quick_runs):
    """Quick mode (one 30-s run per cell): RED's BS=16 rows and T1 BS=24 BW/MAX fail from tail
    drops, BW%/DROP% rows from too few drops for their bands (or partial tail drops), Table 4
    BS=56 and its BS=40 > BS=56 ordering from FRED's per-flow cap."""
    reproduction = quick_runs["fred-fragile"]
    failing = {r.key for r in reproduction.rows if not r.passed}
    # The per-flow-name random streams (issue 9 item 4) re-drew every run and moved this set,
    # quick values old -> new (paper, band):
    #   newly failing: t2.red.w64k.bs48.bw_drop 0.99 -> 1.25 (0.995, [0.8, 1.2]) and bs56 0.80 ->
    #   0.74 (0.907, [0.8, 1.2]);
    #   now passing: t1.red.w16.bs32.bw_drop 0.79 -> 1.11 and bs56 0.64 -> 0.86, t2.red.w64k.bs40.bw_drop
    #   1.29 -> 1.07, t2.red.w64k.bs24.fragile_loss 0.29 -> 0.53 (0.51 ± 40 %) and bs40 0.25 ->
    #   0.31 (0.46 ± 40 %), t4.fred.w64k.bs32.bw_link 26.1 -> 22.0 (20 ± 25 %) and bs48 20.3 ->
    #   18.6 (16 ± 25 %). Still failing: the ordering 19.6 > 23.0 -> 18.2 > 21.9.
    assert failing == {
        "t1.red.w16.bs24.bw_max",
        "t1.red.w16.bs24.bw_drop",
        "t1.red.w16.bs40.bw_drop",
        "t1.red.w16.bs16.fragile_loss",
        "t2.red.w64k.bs16.bw_link",
        "t2.red.w64k.bs24.bw_drop",
        "t2.red.w64k.bs48.bw_drop",
        "t2.red.w64k.bs56.bw_drop",
        "t2.red.w64k.bs16.fragile_loss",
        "t4.fred.w64k.bs56.bw_link",
        "order.t4.fred.w64k.bw_link.bs40_gt_bs56",
    }, failing
    reasons = reproduction.reasons
    assert "tail-drop queue" in reasons["t1.red.w16.bs16.fragile_loss"]
    assert "tail-drop queue" in reasons["t1.red.w16.bs24.bw_max"]
    assert "sampling noise" in reasons["t2.red.w64k.bs48.bw_drop"]
    assert "per-flow-limit" in reasons["t4.fred.w64k.bs56.bw_link"]
    assert not any(f.endswith("no reason measured") for f in reproduction.failures())


def test_fragile_table4_is_two_sided_with_the_decline_as_an_ordering():
    rows = {r.key: r for r in fred_fragile._table4_rows(_fred_table(bw_link=[6.9, 19, 20, 20, 24, 25]))}
    assert rows["t4.fred.w64k.bs24.bw_link"].passed and not rows["t4.fred.w64k.bs48.bw_link"].passed  # 24 > 16·1.25
    assert not rows["order.t4.fred.w64k.bw_link.bs40_gt_bs56"].passed


def _fred_table(**columns) -> pd.DataFrame:
    base = {"bw_link": [10.0] * 6, "fragile_loss": [0.01] * 6, "robust_loss": [1.0] * 6}
    return pd.DataFrame({**base, **columns}, index=list(fred_fragile.BUFFERS))


def test_many_flows_red32_readings_and_the_known_failure(quick_runs):
    reproduction = quick_runs["fred-many-flows"]
    alt = {r.key: r for r in reproduction.rows if not r.graded}
    # Every row involving RED-32 again with 4/8, informative; under 4/8 RED-32's utilisation fails.
    assert set(alt) == {
        "t5.red32.rtos.alt",
        "t5.red32.utilisation.alt",
        "order.rtos.fred32_fewest.alt",
        "order.utilisation.red16_lowest.alt",
        "order.utilisation.fred32_highest.alt",
    }
    assert not alt["t5.red32.utilisation.alt"].passed
    # Goodput and share rows restated the utilisation: gone.
    assert not [r.key for r in reproduction.rows if r.key.endswith((".goodput", ".share"))]
    # The per-flow-name random streams (issue 9 item 4) re-drew the quick run: FRED-16's slowest
    # flow / fair share 0.71 -> 0.79 still fails [0.8, 1.2]; its fastest 1.12 -> 1.24 now fails
    # too (2.3 s.d. of the 16 flows' spread above 1, where the fastest of 16 is expected 1.8).
    failing = {r.key for r in reproduction.rows if r.graded and not r.passed}
    assert failing == {"fred16.long_term.slowest", "fred16.long_term.fastest"}, failing
    assert all("s.d." in reproduction.reasons[key] for key in failing)
