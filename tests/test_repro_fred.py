"""FRED's experiments (experiments/fred.py): the setups follow the paper, and the quick
runs reproduce the paper's orderings of RED and FRED."""

import aqmlab
import pytest
from aqmlab.experiments import fred, registry


@pytest.fixture(scope="module")
def quick_runs() -> dict:
    return {id: registry()[id].run(quick=True) for id in ("fred-fragile", "fred-cbr", "fred-many-flows")}


def rows(rep, prefix: str = "") -> dict:
    return {r.metric: r for r in rep.rows if r.metric.startswith(prefix)}


def test_the_experiments_are_registered():
    for id in ("fred-fragile", "fred-cbr", "fred-many-flows"):
        assert registry()[id].function.__module__ == "aqmlab.experiments.fred"


def test_fragile_setup_matches_fig1():
    scenario = aqmlab.Scenario.from_dict(fred.fragile_scenario("fred", 24, 16, seed=1))
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
    assert fred.WIRE_BYTES == 636 and 1 - 552 / fred.WIRE_BYTES == pytest.approx(0.132, abs=5e-4)  # "13.2%"
    # §3.1: 16 packets of 512 bytes every 36 ms is "4.05% of the bottleneck link capacity".
    assert fred.FRAGILE_MAX_PAYLOAD_SHARE == pytest.approx(0.0405, abs=5e-5)
    assert fred.WINDOW_64KB == 128


def test_many_flows_setup_has_a_16_packet_pipe():
    scenario = aqmlab.Scenario.from_dict(fred.many_flows_scenario("fred-2pkt", 32))
    qdisc = scenario.qdisc("gateway->sink")
    assert (qdisc["limit"], qdisc["min_th"], qdisc["max_th"], qdisc["two_packet_buffer"]) == (32, 4, 8, True)
    assert scenario.get("flows[0].tcp.tiny_window") and scenario.get("flows[0].count") == 16
    results = aqmlab.run(scenario.with_duration(0.5, warmup=0.1))
    links = results.links.set_index("name")
    assert links.loc["source->gateway", "rate_bps"] == 10 * links.loc["gateway->sink", "rate_bps"]  # "one tenth"
    # "BS=RTT=16": the round-trip propagation delay holds 16 packets at the bottleneck rate.
    rtt = results.flows["base_rtt"].iloc[0]
    assert rtt * fred.MANY_LINK_BPS / (fred.WIRE_BYTES * 8) == pytest.approx(16, abs=0.5)
    # RED-32's unstated thresholds follow the paper's rules (BS/4, BS/2); FRED-32 keeps Fig. 8's.
    assert fred.TABLE5_RUNS["RED-32"] == ("red", 32, 8, 16) and fred.TABLE5_RUNS["FRED-32"] == ("fred-2pkt", 32, 4, 8)


def test_gateway_rejects_unknown_mechanisms():
    with pytest.raises(ValueError, match="mechanism: expected red, fred or fred-2pkt, got 'sfq'"):
        fred.gateway("sfq", 16, 4, 8)


def test_fragile_orderings_hold_in_quick_mode(quick_runs):
    rep = quick_runs["fred-fragile"]
    ordering = rows(rep, "ordering:")
    # FRED beats RED for the fragile flow at each of the six buffer sizes, for both windows.
    assert (
        sum("FRED BW/MAX > RED" in m for m in ordering) == 6 and sum("FRED BW/link > RED" in m for m in ordering) == 6
    )
    assert all(r.passed for r in ordering.values()), [r for r in ordering.values() if not r.passed]
    # Table 3: under FRED the window-limited flow runs at >= 90% of its maximum at every BS.
    table3 = rows(rep, "T3 FRED w16")
    assert all(r.passed for m, r in table3.items() if "BW/MAX" in m)
    assert all(r.passed for m, r in table3.items() if "fragile loss" in m)


def test_cbr_rows_pass_in_quick_mode(quick_runs):
    rep = quick_runs["fred-cbr"]
    assert len(rows(rep, "ordering:")) == 4
    assert rep.passed, [r for r in rep.rows if not r.passed]
    epochs = rep.data["epochs"]
    fred_epochs = epochs[epochs["mechanism"] == "fred"]
    # FRED: the CBR's throughput falls as TCPs join; under RED it stays near its 8 Mbps.
    assert fred_epochs["cbr"].is_monotonic_decreasing
    assert (epochs.loc[epochs["mechanism"] == "red", "cbr"] > 7).all()


def test_many_flows_orderings_hold_in_quick_mode(quick_runs):
    rep = quick_runs["fred-many-flows"]
    checked = rows(rep)
    for metric in (
        "ordering: RTOs, FRED-32 fewest",
        "T5 FRED-32: total RTOs",
        "FRED-32: fastest / slowest flow",
        "ordering: Fig. 11 share of empty 140-ms samples, FRED-32 < half of each other",
        "Fig. 11 FRED-32: samples within 0.5-1.5× fair share",
        "ordering: utilisation, FRED-32 highest",
    ):
        assert checked[metric].passed, checked[metric]
    table = rep.data["table5"].set_index("measure")
    assert table.loc["utilisation", "FRED-32"] > 99.5
