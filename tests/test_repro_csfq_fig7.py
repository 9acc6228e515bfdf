"""CSFQ §3.3 Fig. 7 (experiments/csfq/fig7.py): three RLM sessions and a TCP on 4 Mbps."""

from types import SimpleNamespace

import aqmlab
import pandas as pd
import pytest
from aqmlab.experiments import not_reproduced_list, registry
from aqmlab.experiments.csfq import fig7 as csfq_fig7
from conftest import aqmlab_cli


@pytest.fixture(scope="module")
def quick():
    return registry()["csfq-fig7"].run(quick=True)


def rows(reproduction) -> dict:
    return {r.key: r for r in reproduction.rows}


def test_drr_gives_each_flow_its_share_and_each_receiver_five_layers(quick):
    by_key = rows(quick)
    for flow in csfq_fig7.FLOW_NAMES:
        rate = by_key[f"drr.{flow}.mbps"]
        assert rate.paper == 1.0 and rate.tolerance == "±30%" and rate.passed, rate
    for flow in csfq_fig7.FLOW_NAMES[1:]:
        assert by_key[f"drr.{flow}.layers"].passed
    # Five layers are 0.992 Mbps; DRR hands the TCP the rest of the 4 Mbps (measured 1.015–1.023).
    rates = quick.data["rates"].set_index(["order", "mechanism"])
    drr = rates.loc[("fig7", "drr")]
    assert all(0.99 <= drr[f"{flow}_mbps"] <= 1.0 for flow in ("rlm1", "rlm2", "rlm3"))
    assert drr["tcp_mbps"] == pytest.approx(4 - drr[["rlm1_mbps", "rlm2_mbps", "rlm3_mbps"]].sum(), abs=0.03)


def test_quick_run_fails_only_csfqs_rows_where_the_link_never_congests(quick):
    # Seed 1 under CSFQ: the TCP loses to CSFQ's drops while the link is still uncongested,
    # times out, and the link never fills (48 % busy, queue at most 10 of 64 KB); α stays the
    # largest label, near the receivers' four layers, so their joins to five fail. Seeds 2 and 3
    # settle fair, and the full run (their mean with seed 1's) passes every row.
    failing = {r.key for r in quick.rows if r.graded and not r.passed}
    assert failing == {f"csfq.{flow}.mbps" for flow in csfq_fig7.FLOW_NAMES} | {
        f"csfq.{flow}.layers" for flow in csfq_fig7.FLOW_NAMES[1:]
    }, failing
    reason = quick.reasons["csfq.tcp.mbps"]
    assert "48% busy" in reason and "timeouts" in reason and "4.00 layers" in reason
    assert any(note.startswith("CSFQ, Fig. 7 order, per seed: seed 1: link 48% busy") for note in quick.notes)


def test_fred_is_less_fair_than_csfq_and_leaves_an_rlm_below_its_share(quick):
    by_key = rows(quick)
    assert by_key["order.max_min.fred_gt_csfq"].passed
    assert by_key["fred.rlm_min.mbps"].passed and by_key["fred.rlm_min.mbps"].ours < 0.7
    rates = quick.data["rates"].set_index(["order", "mechanism"])
    fred = rates.loc[("fig7", "fred")]
    assert fred["max_min"] == min(rates.loc[("fig7", "fred-1"), "max_min"], rates.loc[("fig7", "fred-2"), "max_min"])


def test_footnote9_is_reported_under_every_mechanism_ungraded(quick):
    late = {r.key: r for r in quick.rows if r.key.startswith("footnote9.")}
    assert set(late) == {f"footnote9.{m}.tcp_share" for m in ("drr", "csfq", "fred", "red", "droptail")}
    assert not any(r.graded for r in late.values())
    # Under DRR a late TCP still gets its share: DRR does not remember who came first.
    assert late["footnote9.drr.tcp_share"].ours == pytest.approx(1.0, abs=0.05)
    # Before the TCP starts, CSFQ keeps the receivers on the base layer; DRR lets them climb.
    note = next(n for n in quick.notes if n.startswith("Footnote 9's order"))
    assert "CSFQ 1.0, 1.0, 1.0 layers" in note


def test_figure_data_are_the_one_second_rates_of_every_run(quick):
    series = quick.data["series"]
    assert set(series["order"]) == set(csfq_fig7.ORDERS)
    one = series[(series["order"] == "fig7") & (series["mechanism"] == "drr") & (series["flow"] == "rlm1")]
    assert (one["time"].diff().dropna() == 1.0).all()
    assert len(one) == csfq_fig7.QUICK.duration


def test_mean_layers_weights_each_level_by_its_time():
    """Subscription 1 from 0 s, 5 from 10 s, 4 from 30 s: over [5, 35], (5·1 + 20·5 + 5·4) / 30."""
    traces = pd.DataFrame({"time": [0.0, 10.0, 30.0], "flow": 1, "var": "layers", "value": [1.0, 5.0, 4.0]})
    results = SimpleNamespace(traces=pd.concat([traces, traces.assign(flow=2, value=7.0)]))
    assert csfq_fig7.mean_layers(results, 1, 5.0, 35.0) == pytest.approx(125 / 30)


def test_fig7_is_listed_and_no_longer_waiting_for_rlm():
    assert "csfq-fig7" not in not_reproduced_list()
    listed = aqmlab_cli("reproduce", "--list")
    assert listed.returncode == 0 and "csfq-fig7" in listed.stdout
    assert "needs RLM" not in listed.stdout


def test_rlm_flows_report_goodput_like_any_flow():
    """An RLM session alone on 1 Mbps: its goodput, fair share and traced layers in the tables."""
    scenario = aqmlab.Scenario.from_dict(
        {
            "simulation": {"duration": "120s", "warmup": "100s"},
            "topology": {
                "type": "dumbbell",
                "bottleneck": {"rate": "1Mbps", "delay": "1ms", "qdisc": {"type": "droptail", "limit_bytes": "64KB"}},
            },
            "flows": [{"type": "rlm", "trace": True}],
        }
    )
    results = aqmlab.run(scenario)
    flow = results.flows.iloc[0]
    # Demand 4.064 Mbps (all seven layers) on 1 Mbps: the fair share is the link.
    assert flow["type"] == "rlm" and flow["fair_share_bps"] == pytest.approx(1e6)
    assert 0.98e6 <= flow["goodput_bps"] <= 1e6
    assert set(results.traces["var"]) == {"layers"}
