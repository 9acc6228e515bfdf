"""CSFQ §3.1–§3.3 figures (experiments/csfq/fig*.py): quick runs keep the paper's orderings."""

import aqmlab
import pandas as pd
import pytest
from aqmlab.experiments import PAPER_NAMES, registry
from aqmlab.experiments._verdicts import ns2_reference
from aqmlab.experiments.csfq import fig3a as csfq_fig3a
from aqmlab.experiments.csfq import fig4 as csfq_fig4
from aqmlab.experiments.csfq import fig6 as csfq_fig6
from aqmlab.presets import CSFQ_MECHANISMS as MECHANISMS


@pytest.fixture(scope="module")
def quick():
    """Each experiment's quick run, computed once for the module."""
    cache = {}

    def run(id: str):
        if id not in cache:
            cache[id] = registry()[id].run(quick=True)
        return cache[id]

    return run


def rows(reproduction) -> dict:
    return {r.key: r for r in reproduction.rows}


def test_fig3a_orders_mechanisms_and_keeps_csfq_in_the_band(quick):
    reproduction = quick("csfq-fig3a")
    by_key = rows(reproduction)
    ordering = by_key["order.largest_deviation"]
    assert ordering.metric == "Largest |deviation|: DRR < CSFQ < FIFO, RED, FRED-1" and ordering.passed
    # FIFO, RED, FRED-1 proportional to the input; DRR, CSFQ, FRED-2 (less precisely) fair.
    for name, allocation in csfq_fig3a.FIG3A_ALLOCATION.items():
        row = by_key[f"{name}.allocation"]
        assert row.metric == f"{PAPER_NAMES[name]} allocation nearer to"
        assert row.paper == allocation and row.passed, row
    # Quick runs keep the paper's 10-s window, so the CSFQ band is checked as in full runs.
    fairness = reproduction.data["fairness"].set_index("mechanism")
    assert -0.20 <= fairness.loc["csfq", "lowest_vs_fair"] and fairness.loc["csfq", "highest_vs_fair"] <= 0.15
    # "DRR is extremely effective" (every flow within 5 % of its share) fails since the
    # per-flow-name random streams (issue 9 item 4): DRR's largest |deviation| 0.045 -> 0.058,
    # flow 0 (offered exactly its share) losing 21 packets to pushout. Every other row passes.
    failing = {r.key for r in reproduction.rows if not r.passed}
    assert failing == {"drr.largest_deviation"}, failing
    assert "pushout" in reproduction.reasons["drr.largest_deviation"]
    per_flow = reproduction.data["per_flow"]
    assert per_flow["offered_mbps"].tolist() == pytest.approx([(i + 1) * 0.3125 for i in range(32)])
    assert per_flow["proportional_mbps"].sum() == pytest.approx(10.0)


def test_fig3b_is_the_demo_plus_the_better_fred(quick):
    reproduction = quick("csfq-fig3b")
    udp = reproduction.data["mechanisms"].set_index("mechanism")["udp_mbps"]
    fred = [r for r in reproduction.rows if r.key == "udp.fred"]
    assert len(fred) == 1 and fred[0].paper == "almost 1.8"
    assert fred[0].metric.startswith("UDP goodput, FRED = better of")
    # With one UDP among 32 flows FRED-1 (basic) holds the UDP lowest: the row quotes it. FRED-2's
    # two-packet buffer lets the UDP keep two packets whenever avg >= max_th, so it must get
    # clearly more (measured quick: FRED-1 1.21, FRED-2 3.11 Mbps); a FRED-2 that never engaged
    # its extension would equal FRED-1 (issue 9, item 14).
    assert "(fred-1)" in fred[0].metric and fred[0].ours == udp["fred-1"]
    assert udp["fred-2"] > udp["fred-1"] + 0.5
    assert rows(reproduction)["order.udp"].passed
    assert udp["csfq"] < 0.6 and udp["drr"] < 0.6 and udp["droptail"] > 7
    # CSFQ's UDP row (0.361 Mbps ±25 %) fails with the paper's ns-2 TCP (issue 9 item 3), as in
    # the demo: 0.440 (RFC TCP, informative row) -> 0.504 Mbps; every other graded row passes.
    failing = {r.key for r in reproduction.rows if r.graded and not r.passed}
    assert failing == {"udp.csfq"}, failing
    reason = reproduction.reasons["udp.csfq"]
    assert "timeouts" in reason
    # CSFQ's UDP gets what the 31 TCPs leave of the link. The paper's 0.361 Mbps leaves each
    # (10 - 0.361)/31 = 0.311 Mbps, 0.86 of the UDP's share; ours take less (issue 27 item 4:
    # 0.56 over 10 seeds), less than DRR gives them (paper's DRR: (10 - 0.396)/31/0.396 = 0.78).
    assert "the paper's 0.361 Mbps leaves each TCP 0.86 of it" in reason
    mechanisms = reproduction.data["mechanisms"].set_index("mechanism")
    share = {m: mechanisms.at[m, "tcp_total_mbps"] / 31 / mechanisms.at[m, "udp_mbps"] for m in ("csfq", "drr")}
    assert f"each {share['csfq']:.2f} of flow 0's share" in reason and share["csfq"] < 0.7, reason
    assert f"Under DRR each TCP gets {share['drr']:.2f} of the UDP's share (paper's DRR: 0.78)" in reason


@pytest.mark.parametrize("id", ["csfq-fig3a", "csfq-fig3b", "csfq-fig4"])
def test_the_ns2_column_covers_every_row_with_a_value_or_why_not(quick, id):
    """Issue 27: each row has ns-2's value (FIFO, RED, DRR) or says which mechanism ns-2.35 lacks;
    the file's keys are the experiment's rows (a renamed row makes it stale)."""
    keys = {row.key for row in quick(id).rows}
    recorded = ns2_reference(id)
    recorded.check_rows(keys)
    graded = {row.key for row in quick(id).rows if row.graded}
    assert graded <= recorded.keys(), graded - recorded.keys()
    assert all("not in ns-2.35" in why or "no ns-2.35 agent" in why for why in recorded.not_in_ns2.values())


def test_fig6_ns2_column_covers_every_full_row_with_a_value_or_why_not(quick):
    """Issue 27: the file measures the full run (links 1…5), so its keys are checked against the
    rows of the full sweep (built from any values: a row's key does not depend on them); the quick
    run's graded rows are among them. Rows of RED and FIFO alone have ns-2's values, the rest name
    the mechanism ns-2.35 lacks."""
    recorded = ns2_reference("csfq-fig6")
    assert recorded.modes == ("full",)
    full = pd.DataFrame({"x": list(csfq_fig6.FULL.sweep), **dict.fromkeys([*MECHANISMS, "fred"], 0.5)})
    rows = csfq_fig6.fig6a_rows(full) + csfq_fig6.fig6b_rows(full)
    recorded.check_rows({row.key for row in rows})
    assert {row.key for row in rows if row.graded} == recorded.keys()
    assert {row.key for row in quick("csfq-fig6").rows if row.graded} <= recorded.keys()
    near_zero = {row.key for row in rows if row.key.startswith("fig6b.red_fifo_near_zero.")}
    assert recorded.rows.keys() == near_zero
    assert all("not in ns-2.35" in why for why in recorded.not_in_ns2.values())


def test_fig4_drr_fails_only_for_many_flows_and_csfq_keeps_up_with_fred(quick):
    reproduction = quick("csfq-fig4")
    table = reproduction.data["tcp_normalised"]
    assert table["n"].tolist() == list(csfq_fig4.QUICK.sweep)
    assert (table["fred"] == table[["fred-1", "fred-2"]].max(axis=1)).all()
    # DRR good up to 20, CSFQ > DRR from some N in [22, 32], RED/FIFO low, and "CSFQ similar or
    # better than FRED" (CSFQ >= FRED - 0.1): all pass with the paper's ns-2 TCP (issue 9 item 3).
    # With today's RFC TCP the last failed in quick mode (lowest margin -0.256, at N = 4).
    assert reproduction.passed, reproduction.failures()
    margin = rows(reproduction)["csfq_minus_fred.min"].ours
    assert -0.1 <= margin < 0.1, margin


def test_fig6_orderings_at_every_number_of_links(quick):
    reproduction = quick("csfq-fig6")
    forwarded, normalised = reproduction.data["udp0_forwarded"], reproduction.data["tcp_normalised"]
    assert forwarded["links"].tolist() == normalised["links"].tolist() == list(csfq_fig6.QUICK.sweep)
    # Quick mode's known failures, each with its measured reason: with the paper's ns-2 TCP (issue
    # 9 item 3) CSFQ's TCP stays > 20% below DRR's at every number of links (CSFQ/DRR 0.67-0.68,
    # with the RFC TCP 0.85, 0.90, 0.62 at 1, 3, 5 links): CSFQ's drops cost it timeouts (8 at 1
    # link, DRR's 0); and at 5 links FRED's TCP (0.08) misses "much better" than the 0.05
    # reading of RED/FIFO ≈ 0.
    failing = {r.key for r in reproduction.rows if not r.passed}
    assert failing == {"fig6b.csfq_vs_drr.k1", "fig6b.csfq_vs_drr.k3", "fig6b.csfq_vs_drr.k5", "order.fig6b.k5"}
    assert all("timeouts" in reproduction.reasons[key] for key in failing)
    # Rate-proportional FIFO forwards about 10/20.9 of UDP-0 per link, compounding over the links.
    assert forwarded["droptail"].iloc[0] == pytest.approx(10 / 20.91, abs=0.08)
    assert forwarded["droptail"].is_monotonic_decreasing


def test_fig6b_fred1_collapse_is_block_c_not_a_setting(quick):
    # Issue 9, item 14: FRED-1's TCP gets ~0 of its share from 2 links on. Without the TCP the
    # ten 2 Mbps UDPs per link keep FRED's average at or above max_th ~39 % of the time (basic
    # FRED's block C drops every arrival then); a TCP that survives its start at 1 link brings
    # that down (measured quick: 10 %, full: 3 %), at 2 links its retransmissions are dropped
    # by block C, it backs off and the links stay at ~38 %.
    collapse = quick("csfq-fig6").data["fred1_block_c"].set_index(["links", "tcp"])
    assert collapse.loc[(1, False), "above_max_th"] > 0.3 and collapse.loc[(2, False), "above_max_th"] > 0.3
    assert collapse.loc[(1, True), "above_max_th"] < 0.2 and collapse.loc[(1, True), "normalised"] > 0.4
    assert collapse.loc[(2, True), "above_max_th"] > 0.3 and collapse.loc[(2, True), "normalised"] < 0.05
    assert collapse.loc[(2, True), "timeouts"] >= 3
    assert any(note.startswith("FRED-1's TCP:") for note in quick("csfq-fig6").notes)


def test_fig6_parking_lot_setup():
    scenario = csfq_fig6.parking_lot_scenario("t", 3, csfq_fig6.UDP0, csfq_fig6.QUICK)
    results = aqmlab.run(scenario.with_qdisc(MECHANISMS["drr"]))
    assert len(results.flows) == 31
    # Every link: 11 flows, 10 Mbps: UDP-0's max-min share is its own rate 10/11 Mbps.
    assert results.flows["fair_share_bps"].iloc[0] == pytest.approx(10e6 / 11)
    # "this will result in all links between routers being congested"
    links = results.links.set_index("name")
    assert [links.loc[f"R{i}->R{i + 1}", "utilisation"] > 0.98 for i in range(3)] == [True] * 3
    assert set(links["qdisc"]) >= {"drr"}


def test_fig4_rows_fail_without_a_crossover():
    n = [4, 12, 20, 26, 32]
    table = pd.DataFrame(
        {"n": n, "drr": [1.0] * 5, "csfq": [0.7] * 5, "fred": [0.75] * 5, "red": [0.0] * 5, "droptail": [0.0] * 5}
    )
    by_key = {r.key: r for r in csfq_fig4.fig4_rows(table)}
    assert not by_key["crossover.csfq_gt_drr"].passed
    assert by_key["drr.most_flows"].metric == "DRR at N = 32" and not by_key["drr.most_flows"].passed
    assert by_key["csfq_minus_fred.min"].metric == "CSFQ - FRED, lowest over N (at N = 4)"
    assert by_key["csfq_minus_fred.min"].ours == pytest.approx(-0.05)


def test_fig6b_rows_fail_when_fred_beats_csfq():
    table = pd.DataFrame({"x": [1], "drr": [1.0], "csfq": [0.6], "fred": [0.7], "red": [0.0], "droptail": [0.0]})
    ordering, csfq_vs_drr, near_zero, ratio = csfq_fig6.fig6b_rows(table)
    assert not ordering.passed and not ratio.passed and ratio.ours == pytest.approx(0.7 / 0.6)
    assert not csfq_vs_drr.passed and near_zero.passed  # CSFQ 0.6 is 40% below DRR


def test_fig6b_much_better_than_zero_needs_fred_above_the_reading():
    """RED and FIFO at 0 do not make any FRED "much better": FRED needs 2 x the 0.05 reading."""
    table = pd.DataFrame({"x": [1], "drr": [1.0], "csfq": [0.9], "fred": [0.08], "red": [0.0], "droptail": [0.0]})
    ordering, csfq_vs_drr, near_zero, _ = csfq_fig6.fig6b_rows(table)
    assert not ordering.passed and csfq_vs_drr.passed and near_zero.passed
    table["fred"], table["red"] = 0.5, 0.06  # RED no longer ≈ 0
    ordering, _, near_zero, _ = csfq_fig6.fig6b_rows(table)
    assert ordering.passed and not near_zero.passed
