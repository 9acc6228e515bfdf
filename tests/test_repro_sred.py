"""SRED §VI–§VIII reproductions (python/aqmlab/experiments/sred/*.py, setup in sred/__init__.py) in
quick mode (30 s runs): the setup is the paper's network, and the rows that hold pass; the
rows that fail, fail by key with their measured reason."""

import math
import re

import aqmlab
import numpy as np
import pytest
from aqmlab.experiments import Reproduction, Verdict, registry
from aqmlab.experiments import sred as s
from aqmlab.experiments.sred.fig17_21 import zap_factor
from aqmlab.experiments.sred.table2 import paper_total_occurrence
from conftest import ROOT, failing, rows

IDS = [
    "sred-fig2-8",
    "sred-fig9-11",
    "sred-fig12-14",
    "sred-fig15-16",
    "sred-fig17-21",
    "sred-fig22-24",
    "sred-table1",
    "sred-table2",
    "sred-pmax",
]


@pytest.fixture(scope="module")
def quick() -> dict[str, Reproduction]:
    experiments = registry()
    return {id: experiments[id].run(quick=True) for id in IDS}


def test_network_is_the_papers_two_router_network():
    # §VI: buffer drain time 88.8 ms at 45 Mb/s; minimal RTT 42 ms symmetric, 6 -> 82 ms asymmetric.
    assert s.BUFFER * 8 / s.LINK_RATE == pytest.approx(0.0888, abs=2e-4)
    symmetric = s.persistent_scenario(3, s.sred_qdisc(), 10.0)
    topology = symmetric["topology"]
    assert 2 * (topology["access_delay"] + topology["bottleneck"]["delay"] + topology["sink_delay"]) == pytest.approx(
        0.042
    )
    asymmetric = s.persistent_scenario(100, s.sred_qdisc(), 10.0, asymmetric=True)["flows"]
    rtts = [2 * (f["access_delay"] + s.BOTTLENECK_DELAY + f["sink_delay"]) for f in asymmetric]
    assert rtts[0] == pytest.approx(0.006) and rtts[-1] == pytest.approx(0.082)
    assert all(b > a for a, b in zip(rtts, rtts[1:], strict=False))
    assert {f["packet_size"] for f in asymmetric} == {576}
    # §VII: ssthresh 64 KB in 536-byte segments, initial RTO 3 s.
    assert s.TCP["initial_ssthresh"] == 122 and s.TCP["initial_rto"] == 3.0
    # §VI-A's RED: linear from B/6 to B/3 with w = 1/500 and p_max = .075.
    red = s.red_qdisc()
    assert (red["min_th"], red["max_th"], red["w_q"], red["max_p"]) == pytest.approx((83333.3, 166666.7, 0.002, 0.075))
    # §VIII: one 576-byte packet every 4 ms = 1.152 Mb/s.
    udp = s.misbehaving_scenario(10.0)["flows"][0]
    assert udp["rate"] == pytest.approx(1.152e6)


def test_table2_paper_means_over_all_counts():
    # Hits-weighted means of Table II: UDP (452·27.9 + 38·28.2 + 3·27 + 29) / 494, TCP likewise.
    assert paper_total_occurrence(0) == pytest.approx(27.92, abs=0.01)
    assert paper_total_occurrence(2) == pytest.approx(17.05, abs=0.01)


def test_fig2_8_sred_holds_the_buffer_between_b6_and_b3_for_every_n(quick):
    reproduction = quick["sred-fig2-8"]
    assert failing(reproduction) == set()
    table = reproduction.data["fig2_8"].set_index("n")
    # Means from 10 to 1000 flows all between B/6 and B/3 (quick: 128–163 KB).
    assert table["mean_kb"].between(s.LOW_BAND / 1000, s.HIGH_BAND / 1000).all(), table["mean_kb"]


def test_fig9_11_p_estimates_the_flow_count_from_above(quick):
    reproduction = quick["sred-fig9-11"]
    assert failing(reproduction) == set()
    # N = 100: the paper's .012 (quick: 0.0132).
    assert rows(reproduction)["n100.p_mean"].ours == pytest.approx(0.012, abs=0.003)


def test_fig12_14_red_occupancy_grows_with_n_sreds_does_not(quick):
    assert failing(quick["sred-fig12-14"]) == set()


def test_fig15_16_full_sred_narrows_the_rtt_advantage(quick):
    reproduction = quick["sred-fig15-16"]
    # Quick: CoV² Simple 0.120, Full 0.066 (paper .1039, .0522). The full run fails
    # `order.cov2_ratio.few_lt_many` (Full/Simple 0.706 with 20 connections vs 0.553 with 100:
    # the ratio of two CoV² of 20 throughputs from one run); quick passes it (0.227).
    assert failing(reproduction) == set()
    assert rows(reproduction)["cov2_ratio"].ours < 0.75


def test_fig17_21_web_sources(quick):
    reproduction = quick["sred-fig17-21"]
    found = rows(reproduction)
    # Surge start: the 5 s fraction (paper 3.4 %) and 1/P(t) below the active count hold; the
    # active count (about 540 against 200–400) and the p_max band (0.3 % of samples) fail with
    # measured reasons. Stationary start (graded too): 163 active and 0.1 % of files over 5 s.
    assert found["files.over_5s"].passed and found["order.inverse_p_below_active"].passed
    assert found["band.top.stationary"].passed and found["order.inverse_p_below_active.stationary"].passed
    assert failing(reproduction) == {
        "active.median",
        "band.top",
        "active.median.stationary",
        "files.over_5s.stationary",
    }
    assert "T/(T + Z)" in reproduction.reasons["active.median"]
    assert "p_max/4 band" in reproduction.reasons["band.top"]
    assert not found["files.total.alt_uncalibrated"].graded
    # The paper's own distributions cannot have 200–400 active sources in a steady state.
    for key in ("active.median", "active.median.stationary"):
        verdict, why = reproduction.verdicts[key]
        assert verdict == Verdict.ARITHMETIC and "no steady state" in why
    # The other two failures meet the paper under the other start (an open choice): the surge
    # keeps more sources active, so 1/P(t) and eq. 4.4's factor min(1, (1/(256·P))²) are larger
    # (quick: 266 vs 30, factor 1.00 vs 0.01), the p_max/4 band holds the queue below B/3, and
    # the larger load costs more timeouts and slow files.
    assert found["files.over_5s"].passed and found["band.top.stationary"].passed
    for key in ("band.top", "files.over_5s.stationary"):
        verdict, why = reproduction.verdicts[key]
        assert verdict == Verdict.ARITHMETIC and "leaves open" in why and "after seeing results" in why
    m = reproduction.data["fig17_21"].set_index("start")
    surge, stationary = m.loc["surge"], m.loc["stationary"]
    assert surge["active_median"] > stationary["active_median"]
    assert zap_factor(surge["inverse_p_median"]) > 2 * zap_factor(stationary["inverse_p_median"])
    assert surge["middle_band"] > stationary["middle_band"] and surge["top_band"] < stationary["top_band"]
    assert surge["timeouts"] > stationary["timeouts"] and surge["slow_fraction"] > stationary["slow_fraction"]


def test_the_papers_own_web_distributions():
    # Eq. 7.1's mean file in closed form, median·(π/a)/sin(π/a) = 14 954 B; on the wire, whole
    # 536-byte segments of 576 bytes. Eq. 7.2 with the 50 ms re-draw: 4.1 s, not "about 3.1".
    median, shape = s.FILE_MEDIAN, s.FILE_SHAPE
    assert median * (math.pi / shape) / math.sin(math.pi / shape) == pytest.approx(14954, abs=1)
    offer = s.web_offer()
    assert offer["wire_bytes"] == pytest.approx(14954 / s.MSS * s.PACKET + 0.5 * s.PACKET, rel=0.03)
    assert offer["think_s"] == pytest.approx(np.mean(s.think_times(np.random.default_rng(1), 2_000_000)), rel=0.03)
    # 2000 sources with instant transfers offer 2000 · 16 365 · 8 / 4.11 s = 64 Mb/s.
    assert s.offered_mbps(2000, 0.0) == pytest.approx(2000 * offer["wire_bytes"] * 8 / offer["think_s"] / 1e6)


def test_stationary_starts_are_the_residual_think_times():
    # The residual of a renewal process has mean E[Z²]/(2E[Z]) (infinite here: the tail is
    # heavy), but P(residual ≤ x) = ∫₀ˣ S(z) dz / E[Z]: check it at 3.1 s against the samples.
    starts = s.stationary_starts(20_000, np.random.default_rng(7))
    draws = s.think_times(np.random.default_rng(8), 2_000_000)
    expected = np.minimum(draws, 3.1).mean() / draws.mean()
    assert (starts <= 3.1).mean() == pytest.approx(expected, abs=0.015)
    assert (starts >= 0).all()


def test_fig22_24_red_nearer_empty_than_sred(quick):
    reproduction = quick["sred-fig22-24"]
    found = rows(reproduction)
    # With 3500 sources neither buffer falls below 5 KB: the ordering fails, its reason the saturated link;
    # the informative reading "below B/6" orders RED below SRED at both loads.
    assert failing(reproduction) == {"order.n3500.nearly_empty"}
    assert "saturated" in reproduction.reasons["order.n3500.nearly_empty"]
    verdict, why = reproduction.verdicts["order.n3500.nearly_empty"]
    assert verdict == Verdict.ARITHMETIC and "2088 sources active" in why
    assert found["order.n2000.nearly_empty.alt_below_b6"].passed
    assert found["order.n3500.nearly_empty.alt_below_b6"].passed


def test_tables_1_2_the_udp_source_hits_more(quick):
    assert failing(quick["sred-table1"]) == set()
    assert failing(quick["sred-table2"]) == set()
    table = quick["sred-table1"].data["table1"].set_index("source")
    # Hits per packet of load: the paper's .0237 (UDP) and .0136 (TCP), within ±30 %.
    assert table.loc["UDP", "hits_per_packet"] == pytest.approx(0.0237, rel=0.3)
    assert table.loc["TCP", "hits_per_packet"] == pytest.approx(0.0136, rel=0.3)


def test_pmax_has_no_significant_impact(quick):
    assert failing(quick["sred-pmax"]) == set()


def in_base_units(value):
    """A scenario file's content with each quantity written in its base unit (`"0.01s"`,
    `"45000000bps"`, `"576B"`) as the bare number an experiment's dict holds."""
    if isinstance(value, dict):
        return {key: in_base_units(item) for key, item in value.items()}
    if isinstance(value, list):
        return [in_base_units(item) for item in value]
    quantity = re.fullmatch(r"(-?[0-9.e+]+)(s|bps|B)", value) if isinstance(value, str) else None
    return float(quantity[1]) if quantity else value


@pytest.mark.parametrize("sources", [2000, 3500])
def test_benchmark_scenario_files_are_the_experiments_runs(sources):
    # scenarios/sred-web-*.toml (BENCHMARKS.md) must stay the scenario sred-fig17-21 / fig22-24 run;
    # a file writes each quantity with its unit, the base one, so that it is the same number.
    path = ROOT / "scenarios" / f"sred-web-{sources}.toml"
    experiment = s.web_scenario(sources, s.sred_qdisc(), s.DURATION)
    assert in_base_units(aqmlab.load(path).to_dict()) == experiment
