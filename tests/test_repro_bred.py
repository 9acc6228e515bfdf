"""BRED §5 reproductions (python/aqmlab/experiments/bred/*.py, setup in bred/__init__.py) in quick
mode: the setups follow the paper, and the rows that check the paper's orderings (BRED
fairer than RED, the CBRs held near eq. 14's bound, F growing with the number of flows) pass."""

import pandas as pd
import pytest
from aqmlab.experiments import Reproduction, registry
from aqmlab.experiments import bred as b
from aqmlab.experiments._verdicts import ns2_reference
from aqmlab.experiments.bred import buffer as bred_buffer
from aqmlab.experiments.bred import many_flows as bred_many_flows
from aqmlab.experiments.bred import short_lived as bred_short_lived

IDS = ["bred-fig5", "bred-short-lived", "bred-buffer", "bred-many-flows", "bred-vs-red"]


@pytest.fixture(scope="module")
def quick() -> dict[str, Reproduction]:
    experiments = registry()
    return {id: experiments[id].run(quick=True) for id in IDS}


def rows(reproduction: Reproduction, *starts: str) -> dict:
    """The rows whose key starts with one of `starts` (at least one each), by key."""
    found = {r.key: r for r in reproduction.rows if r.key.startswith(starts)}
    for start in starts:
        assert any(k.startswith(start) for k in found), f"{reproduction.id}: no row {start!r}"
    return found


def assert_pass(found: dict) -> None:
    failed = [f"{r.metric}: ours {r.ours}, {r.tolerance}" for r in found.values() if not r.passed]
    assert not failed, failed


def test_eq14_bounds_are_the_papers_printed_values():
    # §5.1 prints 0.2766 (1.5 Mb/s, 3 CBR + 7 TCP), 1.0174 (4.5 Mb/s, 2 + 7), 1.0263 (3 + 4), 1.3295 (2 + 4).
    for link, n_c, n_t, printed in [
        (1.5e6, 3, 7, 0.2766),
        (4.5e6, 2, 7, 1.0174),
        (4.5e6, 3, 4, 1.0263),
        (4.5e6, 2, 4, 1.3295),
    ]:
        assert b.cbr_bound_mbps(link, n_c, n_t) == pytest.approx(printed, abs=5e-5)
    assert b.fairness([1, 1, 1, 1]) == 1.0 and b.fairness([3, 0, 0]) == pytest.approx(1 / 3)


def test_setups_follow_the_paper():
    # 400 ms of the backbone in 500-byte packets: §5.1's 150 packets at 1.5 Mb/s, §5.2.2's 450 at 4.5 Mb/s.
    assert (b.buffer_packets(1.5e6), b.buffer_packets(4.5e6)) == (150, 450)
    scenario = b.ten_sources_scenario(1.5e6, b.bred_qdisc(150), 1e6)
    flows = {f["name"]: f for f in scenario["flows"]}
    assert list(flows) == b.SOURCES and [n for n, f in flows.items() if f["type"] == "cbr"] == ["cbr4", "cbr5", "cbr10"]
    for name, rtt in {
        "tcp1": 0.04,
        "tcp2": 0.1,
        "tcp3": 0.06,
        "tcp6": 0.04,
        "tcp7": 0.1,
        "tcp8": 0.06,
        "tcp9": 0.04,
    }.items():
        assert 2 * (flows[name]["access_delay"] + b.BACKBONE_DELAY + b.SINK_DELAY) == pytest.approx(rtt)
        assert flows[name]["tcp"]["variant"] == "tahoe" and flows[name]["packet_size"] == 500
    assert scenario["simulation"]["warmup"] == scenario["simulation"]["duration"] / 2 == 50
    assert b.red_qdisc(80) == {
        "type": "red",
        "profile": "ns2",
        "limit": 80,
        "min_th": 20,
        "max_th": 40,
        "max_p": 0.1,
        "w_q": 0.002,
        "mean_pktsize": 500,
    }
    # Fig. 8: one flow in four is CBR; RTTs 2 x (10..100 + 6 + 4) ms = 40..220 ms.
    many = bred_many_flows.many_flows_scenario(100, 3e6, b.bred_qdisc(150))
    cbr = [f for f in many["flows"] if f["type"] == "cbr"]
    assert len(cbr) == 25 and sum(f["rate"] for f in cbr) == pytest.approx(3e6)
    rtts = [2 * (f["access_delay"] + 0.004 + 0.006) for f in many["flows"]]
    assert 0.04 <= min(rtts) < 0.06 and 0.2 < max(rtts) <= 0.22
    # Fig. 6: the periods between schedule changes.
    assert bred_short_lived.periods(bred_short_lived.FIG6_SCHEDULE, 100.0) == [
        (0, 10),
        (10, 20),
        (20, 30),
        (30, 50),
        (50, 70),
        (70, 100),
    ]


def test_fig5_cbr_held_under_eq14_and_tcp_not_shut_out(quick):
    reproduction = quick["bred-fig5"]
    assert_pass(
        rows(
            reproduction,
            "eq14.",
            "bred.b150.",
            "bred.b50.",
            "order.cbr_at_top_rate.",
            "order.tcp_total_at_top_rate.",
        )
    )
    assert reproduction.figure is not None and set(reproduction.data["fig5"]["mechanism"]) == {"bred", "red"}


def test_fig6_short_lived_bred_keeps_tcps_red_shuts_them_out(quick):
    reproduction = quick["bred-short-lived"]
    assert_pass(rows(reproduction, "eq14.bound.", "bred.p", "red.p", "bred.tcp_min_share"))
    assert len(reproduction.data["fig6_periods"]) == 6


def test_fig7_tcps_gain_with_the_buffer_and_red_shuts_them_out(quick):
    reproduction = quick["bred-buffer"]
    # The orderings; the magnitudes (x1.3 from 50 to 100 ms, flat beyond) are reported, not asserted.
    assert_pass(rows(reproduction, "bred.50ms.tcp_total", "red.50ms.tcp_total", "order.bred.tcp_total.50ms_lt_100ms"))
    # The gain from 50 to 100 ms fails (no knee at 100 ms), with N̂ and l2 measured in the reason;
    # with ns-2's Tahoe (issue 9 item 3) the gain from 100 to 200 ms, 1.235 -> 1.191, is inside
    # "no dramatic change" [0.8, 1.2] and passes.
    failing = {r.key for r in reproduction.rows if not r.passed}
    assert failing == {"bred.gain_50_100ms"}
    assert all("N̂" in reproduction.reasons[key] for key in failing)


def test_fig9_fairness_grows_with_the_number_of_flows(quick):
    reproduction = quick["bred-many-flows"]
    assert_pass(
        rows(reproduction, "fairness.n100.cbr", "order.fairness.", "fairness.n20.rise_then_fall", "fairness.n100.taper")
    )


def test_fig10_11_bred_fairer_than_red(quick):
    reproduction = quick["bred-vs-red"]
    assert_pass(rows(reproduction, "fig10.", "order.fig10.", "fig11.", "order.fig11."))
    table = reproduction.data["vs_red"].set_index("mechanism")
    assert table.loc["bred", "fig10_F_per_2s_sample"] > table.loc["red", "fig10_F_per_2s_sample"]


def test_fig10_11_ns2_column_records_reds_rows_and_says_bred_is_not_in_ns2(quick):
    """Issue 27: ns-2's values of RED's rows (the recorded file's keys are rows of the experiment,
    every other row says ns-2.35 has no BRED); a quick run (one 40 s trial) shows none of them."""
    reproduction = quick["bred-vs-red"]
    recorded = ns2_reference("bred-vs-red")
    keys = {row.key for row in reproduction.rows}
    recorded.check_rows(keys)
    assert recorded.keys() == keys
    assert reproduction.ns2 == {} and reproduction.ns2_source.startswith("not shown")


def test_buffer_and_short_lived_ns2_columns_record_reds_rows_and_say_bred_is_not_in_ns2(quick):
    """Issue 27: RED's rows of Figs. 6 and 7 have ns-2's values, every other row says why not. The
    short-lived schedule is the same in quick and full runs; bred-buffer's file measures the full
    sweep of buffers, so its keys are checked against rows built on it (from any values: a key
    does not depend on them)."""
    short_lived = ns2_reference("bred-short-lived")
    keys = {row.key for row in quick["bred-short-lived"].rows}
    short_lived.check_rows(keys)
    assert short_lived.keys() == keys
    assert short_lived.rows.keys() == {key for key in keys if key.startswith("red.")}
    buffer = ns2_reference("bred-buffer")
    sweep = bred_buffer.FULL.sweep
    full = pd.DataFrame([{"buffer_s": s, "mechanism": m, "tcp_total": 1.0} for s in sweep for m in b.MECHANISMS])
    keys = {row.key for row in bred_buffer.buffer_rows(full, sweep)}
    buffer.check_rows(keys)
    assert buffer.keys() == keys and buffer.rows.keys() == {"red.50ms.tcp_total"}
    assert all(why == "BRED is not in ns-2.35" for why in buffer.not_in_ns2.values())
