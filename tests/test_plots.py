"""Figures a person reads at page width (issue 26 item 4): small multiples for many runs, a
profile for many flows, and one colour per mechanism in every figure."""

import aqmlab
import pytest
from aqmlab.compare import compare, compare_figure, fair_shares
from aqmlab.plots import LABELLED_FLOWS, mechanism_colour, pyplot, throughput_figure
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
    pyplot().close(fig)


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
        assert [bar.get_facecolor()[:3] for bar in delay.patches] == [
            _rgba(mechanism_colour(m))[:3] for m in MECHANISMS
        ]
        assert [bar.get_height() for bar in delay.patches] == pytest.approx(
            table[f"{group}_delay_p99_ms"].tolist(), nan_ok=True
        )
        assert "queueing delay" in delay.get_title()
    # One scale for both groups' delays.
    assert panels[1].get_ylim() == panels[3].get_ylim()
    pyplot().close(fig)


def test_a_run_of_many_flows_draws_a_profile_of_fixed_width():
    flows = {"type": "cbr", "rate": "0.1Mbps", "count": LABELLED_FLOWS + 1}
    results = aqmlab.run(aqmlab.Scenario.from_dict(dumbbell(flows, duration="1s", warmup="0.5s")))
    fig = throughput_figure(results)
    assert fig.get_size_inches()[0] == 10.0
    assert len(fig.axes[0].get_xticklabels()) < 20, "no label per flow"
    pyplot().close(fig)


def _rgba(colour: str) -> tuple:
    from matplotlib.colors import to_rgba

    return to_rgba(colour)
