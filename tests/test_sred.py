"""SRED through the whole stack: its drops, P(t) in the queue samples, and the §VIII per-flow table."""

import aqmlab
import pandas as pd
import pytest
from conftest import dumbbell

# Ten TCPs and a 4 Mbps CBR on 10 Mbps: the CBR sends ~28 % of the packets, each TCP ~5 %.
SRED = {"type": "sred", "limit_bytes": "100KB"}
FLOWS = ({"type": "tcp", "count": 10}, {"type": "cbr", "rate": "4Mbps"})
CBR = 10


@pytest.fixture(scope="module")
def results():
    return aqmlab.run(dumbbell(*FLOWS, qdisc=SRED, duration="10s", warmup="3s"))


def test_drops_are_sred_or_overflow(results):
    reasons = results.summary()["drops_by_reason"]
    assert set(reasons) <= {"sred", "overflow"} and reasons["sred"] > 0


def test_per_flow_table_counts_the_windows_arrivals_and_flags_the_heavy_flow(results):
    bottleneck = results.link("L->R")
    table = results.qdisc_flows[results.qdisc_flows["link"] == bottleneck["id"]]
    assert list(table.columns) == [
        "link",
        "link_name",
        "flow",
        "flow_name",
        "direction",
        "arrivals",
        "hits",
        "repeat_hits",
        "mean_total_occurrence",
        "hit_excess_sigma",
        "candidate",
    ]
    assert set(table["direction"]) == {"data"}
    # Every data packet sent in the window reaches the bottleneck; a few are still on the
    # access links at either end of the window.
    sent = results.flows.set_index("id")["window_sent_packets"]
    arrivals = table.set_index("flow")["arrivals"]
    assert (arrivals - sent).abs().max() <= 2
    # §VIII: the CBR's packets hit far more often than the average packet; no TCP's do.
    assert table.loc[table["candidate"] == 1, "flow"].tolist() == [CBR]


def test_hit_frequency_is_sampled_and_estimates_the_sum_of_squared_shares(results):
    table = results.qdisc_flows
    shares = table["arrivals"] / table["arrivals"].sum()
    window = results.queue[results.queue["time"] >= results.warmup]
    # Eq. 3.4: E[P(t)] = Σπ². ±10 %: the EWMA (α = 1/M) of ~8 700 arrivals spans ~9 time
    # constants, σ of its mean ≈ 1.5 % of P; TCP's bursts add a bias of a few % (§VIII).
    assert window["hit_frequency"].mean() == pytest.approx((shares**2).sum(), rel=0.1)
    assert window["hit_frequency"].between(0, 1).all()


def test_the_queue_figure_plots_p_of_t_beside_the_queue_in_bytes(results):
    from aqmlab.plots import queue_figure

    fig = queue_figure(results)
    queue_axis, right = fig.axes
    assert queue_axis.get_ylabel() == "queue (bytes)"
    assert [line.get_label() for line in right.get_lines()] == ["P(t)"]


def test_the_per_flow_table_is_saved_and_reads_back(results, tmp_path):
    results.save(tmp_path)
    pd.testing.assert_frame_equal(pd.read_parquet(tmp_path / "qdisc_flows.parquet"), results.qdisc_flows)


def test_other_disciplines_have_no_hit_frequency_or_per_flow_rows():
    results = aqmlab.run(dumbbell({"type": "cbr", "rate": "1Mbps"}, duration="1s", warmup="0s"))
    assert "hit_frequency" not in results.queue.columns
    assert results.qdisc_flows.empty


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("overwrite_p", 0, r"overwrite_p: must be in \(0, 1\], got 0"),
        ("zombies", 0, r"zombies: must be > 0, got 0"),
        ("variant", "fast", r"variant: unknown variant `fast`, expected `simple` or `full`"),
    ],
)
def test_an_invalid_sred_parameter_is_named(field, value, message):
    scenario = dumbbell(*FLOWS, qdisc={**SRED, field: value})
    with pytest.raises(aqmlab.ScenarioError, match=rf"^topology\.bottleneck\.qdisc\.{message}$"):
        aqmlab.Scenario.from_dict(scenario).validate()
