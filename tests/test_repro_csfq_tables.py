"""CSFQ §3.4–§3.6 Tables 1–4 (experiments/csfq/table*.py) in quick mode, and their workload builders."""

import numpy as np
import pytest
from aqmlab.experiments import Row, registry
from aqmlab.experiments._verdicts import ns2_reference
from aqmlab.experiments.csfq import table4 as csfq_table4
from aqmlab.experiments.csfq._tables import ORDERING, paper_groups
from aqmlab.experiments.csfq.table2 import web_flows
from aqmlab.experiments.csfq.table4 import relabel_scenario
from aqmlab.presets import PACKET_BYTES


@pytest.fixture(scope="module")
def quick():
    """Each table's quick reproduction, run once for the module."""
    experiments = registry()
    return {id: experiments[id].run(quick=True) for id in ("csfq-table1", "csfq-table2", "csfq-table3", "csfq-table4")}


# Table 1's CSFQ row: the paper's 1680 delivered packets, +40 %.
TABLE1_CSFQ_UPPER = 1680 * 1.4


def test_table1_onoff_source(quick):
    reproduction = quick["csfq-table1"]
    rows = {row.key: row for row in reproduction.rows}
    ordering = rows["order.delivered"]
    assert ordering.passed, ordering.ours  # DRR < CSFQ ≪ RED ≈ FIFO
    fred = rows["fred.delivered"]
    assert fred.passed, fred.ours
    # Headline counts: DRR within ±40 % of the paper, RED and FIFO pass >= 70 % of what was sent.
    # CSFQ's (1680 ±40 %) passed with the RFC TCP (1755) and fails with the paper's ns-2 TCP
    # (issue 9 item 3: 2381): the TCPs' timeouts keep CSFQ's α above their rate (the reason).
    failing = {r.key for r in reproduction.rows if not r.passed}
    assert failing == {"csfq.delivered"}, failing
    assert rows["csfq.delivered"].ours > TABLE1_CSFQ_UPPER
    assert "timeouts" in reproduction.reasons["csfq.delivered"]
    # Unscaled, every packet the source sent is delivered, dropped, or still in the network at the
    # end: at most one 64 KB bottleneck buffer of 1000-byte packets (measured: 0 in every run).
    # A drop counted twice or lost from the table breaks this.
    runs = reproduction.data["table1_runs"]
    in_network = runs["sent"] - runs["delivered"] - runs["dropped"]
    assert in_network.between(0, 64).all(), runs


def test_table2_short_transfers(quick):
    reproduction = quick["csfq-table2"]
    ordering = next(row for row in reproduction.rows if row.key == "order.mean_time")
    assert ordering.passed, ordering.ours  # FRED < CSFQ ≪ RED < FIFO
    # The paper's FIFO 840 ms fails (±50%), graded with the 0.05 s inter-arrival reading and
    # ns-2's 6 s initial RTO; the reason names the transfers' timeouts. RED (592 ms) failed too
    # until issue 9's TCP fix (a timeout in recovery sets ssthresh = max(FlightSize/2, 2), RFC
    # 5681 eq. 4): quick 949 -> 798 ms, now inside [296, 888]; FIFO stays at 2238 ms.
    failing = {r.key for r in reproduction.rows if r.graded and not r.passed}
    assert failing == {"droptail.mean_time"}
    assert all("retransmission timeout" in reproduction.reasons[key] for key in failing)
    runs = reproduction.data["table2_runs"]
    assert set(runs["mechanism"]) == {"drr", "csfq", "fred-1", "fred-2", "red", "droptail"}
    # Every run moves the same 60 transfers for all mechanisms: same total size per seed.
    assert runs.groupby("seed")["packets"].nunique().eq(1).all()
    # Issue 9, item 14: FRED-1 and FRED-2 coincide run for run because FRED's average never reaches
    # max_th (32 KB), the only place FRED-2's two-packet buffer acts (measured quick: peak 19 KB).
    fred = runs[runs["mechanism"].isin(["fred-1", "fred-2"])].pivot(index="seed", columns="mechanism")
    assert (fred["mean_ms"]["fred-1"] == fred["mean_ms"]["fred-2"]).all()
    assert (fred["peak_average_bytes"] < 32_000).all().all()
    assert any(
        note.startswith("FRED-1 = FRED-2 in 4 of 4 runs, and not by a configuration slip")
        for note in reproduction.notes
    )


def test_table3_large_latency(quick):
    reproduction = quick["csfq-table3"]
    failed = [(row.metric, row.ours) for row in reproduction.rows if row.graded and not row.passed]
    assert not failed  # ordering exact, DRR/CSFQ/FRED within their bands, RED and FIFO starved
    # Today's RFC TCP (informative rows): its exact RTT samples and 10 ms granularity let CSFQ's
    # queue swings (0-205 ms) cause spurious timeouts; CSFQ falls out of its band and below FRED.
    rfc_failing = {r.key for r in reproduction.rows if not r.graded and not r.passed}
    assert rfc_failing == {"csfq.tcp_packets.alt_rfc", "order.tcp_packets.alt_rfc"}, rfc_failing
    table = reproduction.data["table3"].set_index("mechanism")
    # Fair allocation: DRR gives the always-backlogged UDP flow at least its max-min share, 10 Mbps
    # / 20 flows = 0.5 Mbps (DRR's deviation is one quantum + one packet per round, nothing over
    # 30 s; 0.49 allows for the packets in flight at the window's edges), and more only from the
    # share TCPs leave unused while their queues are empty (work conservation: at most 10 Mbps
    # minus the TCPs' goodput). This replaces `approx(0.5, abs=0.05)`, whose ±0.05 had no stated
    # basis: since issue 9's TCP fix (a timeout in recovery sets ssthresh = max(FlightSize/2, 2),
    # RFC 5681 eq. 4) the TCPs under DRR take 2-11 timeouts each in quick mode (mean 6233 -> 6064
    # packets per 100 s, std 60 -> 397) and the UDP flow gets 0.50 -> 0.58 Mbps of what they leave.
    tcp_unused_mbps = 19 * (6250 - table.loc["DRR", "mean"]) * 8 * PACKET_BYTES / 100 / 1e6
    assert 0.49 <= table.loc["DRR", "udp_mbps"] <= 0.5 + tcp_unused_mbps, (table.loc["DRR"], tcp_unused_mbps)
    assert table.loc["FIFO", "udp_mbps"] > 9


def test_table4_relabelling(quick):
    reproduction = quick["csfq-table4"]
    # Every flow near 3.33 Mbps and the derived no-relabel split 2.5 / 2.5 / 5. TCP flow 1 (paper
    # 3.43 ± 0.5) failed with the RFC TCP after issue 9's timeout-in-recovery fix (2.78 Mbps over
    # seeds 1-2); with the paper's ns-2 TCP (issue 9 item 3) it gets 3.24 and every row passes.
    assert reproduction.passed, reproduction.failures()
    assert len(reproduction.rows) == 9


def test_web_flows_draw_the_papers_workload():
    flows = web_flows(seed=7, gap=0.05)
    assert flows[0] == {"name": "udp", "type": "cbr", "rate": "10Mbps", "jitter": True}
    transfers = flows[1:]
    assert len(transfers) == 60 and {f["type"] for f in transfers} == {"tcp"}
    starts = [f["start"] for f in transfers]
    assert starts == sorted(starts) and starts[0] > 0
    assert web_flows(seed=7, gap=0.05) == flows and web_flows(seed=8, gap=0.05) != flows
    sizes = np.array([f["workload"]["packets"] for s in range(100) for f in web_flows(s, 0.05)[1:]])
    gaps = np.concatenate([np.diff([0.0] + [f["start"] for f in web_flows(s, 0.05)[1:]]) for s in range(100)])
    # Pareto with mean 20 and shape 1.06 has scale 1.13 and median 1.13 x 2^(1/1.06) = 2.18.
    assert sizes.min() == 1 and np.median(sizes) == 2
    assert np.mean(sizes <= 2) == pytest.approx(1 - (1.132 / 2.5) ** 1.06, abs=0.02)
    assert gaps.mean() == pytest.approx(0.05, rel=0.05)


def test_relabel_scenario():
    tcp = relabel_scenario("tcp", relabel=False)
    assert [f["type"] for f in tcp.get("flows")] == ["tcp"] * 3
    assert [(f["src"], f["dst"]) for f in tcp.get("flows")] == [("S1", "D1"), ("S2", "D2"), ("S3", "D3")]
    for link in csfq_table4.CSFQ_LINKS:
        assert tcp.qdisc(link) == {"type": "csfq", "relabel": False}
        assert relabel_scenario("udp").qdisc(link)["relabel"] is True
    assert relabel_scenario("udp").get("flows[2].rate") == "10Mbps"


def test_ordering_row():
    def ordering(values, groups, much=False):
        relation = ["<", "<<"] if much else "<"
        groups = paper_groups(values, groups)
        return Row.ordered("x", "", groups, relation=relation, digits=0, sort=True, tolerance=ORDERING, key="x")

    values = {"drr": 600, "csfq": 1700, "red": 5300, "droptail": 5400}
    assert ordering(values, [["drr"], ["csfq"], ["red", "droptail"]], much=True).passed
    assert (
        ordering(values, [["drr"], ["csfq"], ["droptail", "red"]]).ours == "DRR 600 < CSFQ 1700 < RED 5300 < FIFO 5400"
    )
    # ≪ needs a factor of 2: 1700 vs 3000 is ordered but not "much" smaller.
    assert not ordering({**values, "red": 3000}, [["drr"], ["csfq"], ["red", "droptail"]], much=True).passed
    assert not ordering(values, [["csfq"], ["drr"]]).passed


def test_table2_grades_one_reading_and_shows_the_others(quick):
    reproduction = quick["csfq-table2"]
    keys = [r.key for r in reproduction.rows]
    graded = [r.key for r in reproduction.rows if r.graded]
    assert graded == ["red.mean_time", "droptail.mean_time", "csfq.mean_time", "order.mean_time"]
    for alt in ("alt_printed_gap", "alt_rto3s"):
        assert [k for k in keys if k.endswith(alt)] == [f"{k}.{alt}" for k in graded]


@pytest.mark.parametrize("id", ["csfq-table1", "csfq-table2", "csfq-table3"])
def test_the_ns2_column_covers_every_graded_row_with_a_value_or_why_not(quick, id):
    """Issue 27: FIFO's, RED's and DRR's rows have ns-2's values (the experiment's scenario exported);
    CSFQ's and FRED's say ns-2.35 lacks them. A quick run has the full run's rows, so its keys
    check the file (a renamed row makes it stale)."""
    keys = {row.key for row in quick[id].rows}
    recorded = ns2_reference(id)
    recorded.check_rows(keys)
    assert {row.key for row in quick[id].rows if row.graded} <= recorded.keys()
    assert all(key.split(".")[0] in ("drr", "red", "droptail") for key in recorded.rows), recorded.rows.keys()
    assert all("not in ns-2.35" in why or "no ns-2.35 agent" in why for why in recorded.not_in_ns2.values())
