"""Figures a person reads at page width (issue 26 item 4): small multiples for many runs, a
profile for many flows, and one colour per mechanism in every figure. Results' plotting
methods, and figures that leave the caller's matplotlib alone (issue 34 item 4)."""

import aqmlab
import pytest
from aqmlab import experiments, report
from aqmlab.compare import compare, compare_figure, fair_shares
from aqmlab.compare import save as save_comparison
from aqmlab.plots import (
    LABELLED_FLOWS,
    goodput_over_time_figure,
    mechanism_colour,
    queue_figure,
    save_run_figures,
    throughput_figure,
    window_figure,
)
from conftest import dumbbell

MECHANISMS = ["droptail", "red", "fred-1", "drr", "csfq"]


@pytest.fixture(scope="module")
def runs():
    scenario = aqmlab.Scenario.from_dict(
        dumbbell(
            {"name": "big", "type": "cbr", "rate": "10Mbps"},
            {"name": "small", "type": "tcp", "count": 4},
            rate="5Mbps",
            duration="3s",
        )
    )
    return compare(scenario, MECHANISMS)


def test_many_runs_are_small_multiples_in_their_mechanisms_colours(runs):
    _, results = runs
    fig = throughput_figure(results)
    panels = [ax for ax in fig.axes if ax.get_visible()]
    assert [ax.get_title().split()[0] for ax in panels] == MECHANISMS
    for ax, name in zip(panels, MECHANISMS, strict=True):
        bars = ax.patches
        assert len(bars) == 5 and {bar.get_facecolor() for bar in bars} == {_rgba(mechanism_colour(name))}
    # The 10 Mb/s CBR takes more than 3x the 1 Mb/s fair share from the TCPs under drop-tail: its bar
    # is cut at the shared axis' top and labelled with its value.
    assert panels[0].texts and float(panels[0].texts[0].get_text()) > panels[0].get_ylim()[1]
    width, height = fig.get_size_inches() * 110
    assert width <= 1650 and height <= 900


def test_the_compare_figure_draws_each_groups_fair_share_and_delay(runs):
    table, results = runs
    fair = fair_shares(next(iter(results.values())))
    fig = compare_figure(table, fair)
    panels = [ax for ax in fig.axes if ax.get_visible()]
    # A row per group: its goodput, then its packets' queueing delay.
    assert [ax.get_title().split(":")[0] for ax in panels] == ["big", "big", "small", "small"]
    for (goodput, delay), group in zip(zip(panels[::2], panels[1::2], strict=True), ["big", "small"], strict=True):
        (line,) = goodput.get_lines()
        assert line.get_ydata()[0] == pytest.approx(fair[group])
        assert [bar.get_facecolor() for bar in goodput.patches] == [_rgba(mechanism_colour(m)) for m in MECHANISMS]
        assert [bar.get_facecolor()[:3] for bar in delay.patches] == [
            _rgba(mechanism_colour(m))[:3] for m in MECHANISMS
        ]
        assert [bar.get_height() for bar in delay.patches] == pytest.approx(
            table[f"{group}_delay_p99_ms"].tolist(), nan_ok=True
        )
        assert "queueing delay" in delay.get_title()
    # One scale for both groups' delays.
    assert panels[1].get_ylim() == panels[3].get_ylim()


def test_a_run_of_many_flows_draws_a_profile_of_fixed_width():
    flows = {"type": "cbr", "rate": "0.1Mbps", "count": LABELLED_FLOWS + 1}
    results = aqmlab.run(aqmlab.Scenario.from_dict(dumbbell(flows, duration="1s", warmup="0.5s")))
    fig = throughput_figure(results)
    assert fig.get_size_inches()[0] == 10.0
    assert len(fig.axes[0].get_xticklabels()) < 20, "no label per flow"


def test_a_links_rate_changes_are_marked_where_and_at_the_rate_the_core_reads_them():
    scenario = dumbbell({"type": "cbr", "rate": "8Mbps"}, rate="5Mbps", duration="2s", warmup="0.5s")
    scenario["topology"]["bottleneck"]["rate_changes"] = [{"at": "1200ms", "rate": "2500kbps"}]
    ax = goodput_over_time_figure(aqmlab.run(scenario)).axes[0]
    marks = [line for line in ax.get_lines() if line.get_label() == "rate change"]
    assert [tuple(line.get_xdata()) for line in marks] == [(1.2, 1.2)]
    assert [text.get_text() for text in ax.texts] == [" 2.5 Mbps"]


def _rgba(colour: str) -> tuple:
    from matplotlib.colors import to_rgba

    return to_rgba(colour)


@pytest.fixture(scope="module")
def traced():
    """A CBR flow and two traced TCPs: every table a figure draws has rows."""
    tcp = {"name": "small", "type": "tcp", "count": 2, "tcp": {"trace": True}}
    scenario = dumbbell({"name": "big", "type": "cbr", "rate": "8Mbps"}, tcp, rate="5Mbps", duration="3s")
    return aqmlab.Scenario.from_dict(scenario), aqmlab.run(scenario)


def test_the_plotting_methods_draw_the_runs_tables(traced):
    _, results = traced
    goodput = results.plot_goodput()
    bars = [bar.get_height() for bar in goodput.axes[0].patches]
    assert bars == pytest.approx((results.flows["goodput_bps"] / 1e6).tolist())
    over_time = results.plot_throughput().axes[0]
    lines = [line for line in over_time.get_lines() if not line.get_label().startswith("_")]
    assert [line.get_label() for line in lines] == ["big", "small (2 flows: mean, range shaded)"]
    # Each group's fair share per flow, dashed in its colour (the dumbbell's 5 Mbps: 1/3 each).
    shares = [line for line in over_time.get_lines() if line.get_linestyle() == "--"]
    assert [line.get_ydata()[0] for line in shares] == pytest.approx([5 / 3] * 2)
    # The warm-up is shaded, up to the measurement window.
    (warmup,) = [patch for patch in over_time.patches if patch.get_label().startswith("warm-up")]
    assert warmup.get_x() + warmup.get_width() == pytest.approx(results.warmup)
    big = results.throughput[results.throughput["flow_name"] == "big"]["bps"] / 1e6
    # Each bin from its start, the last one held to the run's end.
    assert lines[0].get_ydata().tolist() == pytest.approx([*big, big.iloc[-1]])
    assert lines[0].get_xdata().tolist() == [0.0, 1.0, 2.0, 3.0]
    one = results.plot_throughput("small[1]").axes[0].get_lines()[0]
    assert one.get_label() == "small[1]"
    queue = results.plot_queue()
    assert queue.axes[0].get_title() == "L->R (droptail)"
    window = results.plot_window("small[0]")
    assert [line.get_label() for line in window.axes[0].get_lines()] == ["cwnd", "ssthresh"]


def test_the_plotting_methods_say_what_they_lack(traced):
    scenario, results = traced
    with pytest.raises(ValueError, match=r"^flows: no flow named 'tcp\[0\]' in this run$"):
        results.plot_throughput(["big", "tcp[0]"])
    with pytest.raises(ValueError, match=r"^plot_window: no flow named 'nope' in this run$"):
        results.plot_window("nope")
    with pytest.raises(ValueError, match=r"^plot_window: flow 'big' was not traced \(set `tcp = \{ trace = true \}`"):
        results.plot_window("big")
    unsampled = aqmlab.run(scenario.with_({"simulation.sample_interval": 0}))
    with pytest.raises(ValueError, match=r"^plot_queue: no queue was sampled in this run"):
        unsampled.plot_queue()


def test_no_figure_changes_the_callers_backend_or_stays_in_pyplot(traced, runs, tmp_path):
    # Issue 34 item 4: a plot switched a notebook from its inline backend to Agg, so that every later
    # plot showed nothing. svg is another backend than Agg that needs no display.
    import matplotlib
    from matplotlib import pyplot
    from matplotlib.figure import Figure

    scenario, results = traced
    table, compared = runs
    before = matplotlib.get_backend()
    matplotlib.use("svg")
    try:
        mine = pyplot.figure()
        figures = [
            results.plot_goodput(),
            results.plot_throughput(),
            results.plot_queue(),
            results.plot_window(1),
            throughput_figure(compared),
            goodput_over_time_figure(results),
            queue_figure(results),
            window_figure(results, flow=1),
            compare_figure(table, fair_shares(next(iter(compared.values())))),
        ]
        save_run_figures(results, tmp_path / "run")
        results.save(tmp_path / "run")
        save_comparison(table, compared, scenario, tmp_path / "compare")
        experiments.get("redpd-fig18").run(quick=True).save(tmp_path / "fig18")
        for folder in ("run", "compare", "fig18"):
            report.write_report(tmp_path / folder)
        assert matplotlib.get_backend() == "svg"
        assert pyplot.get_fignums() == [mine.number], "aqmlab's figures are not pyplot's"
    finally:
        matplotlib.use(before)
    assert all(isinstance(fig, Figure) for fig in figures)
    # What a notebook shows when a figure is a cell's value.
    assert figures[0]._repr_png_().startswith(b"\x89PNG")
    assert (tmp_path / "fig18" / "redpd-fig18.png").read_bytes().startswith(b"\x89PNG")
