"""today-tcp (issue 24, goal 5): Reno, CUBIC and BBR beside a UDP flood under the papers'
mechanisms, quick mode (one seed, 20 s from 8 s).

Margins, from seeds 1-3 of the full run (docs/linux-tcp.md): under drop-tail, RED and SRED the BBR
class takes 1.40-1.68 of its fair share and Reno and CUBIC 0.05-0.27; the five mechanisms that
restrain unresponsive flows hold the flood to 0.93-1.76 of its fair share, the others leave it
4.26-4.63."""

from __future__ import annotations

import pytest
from aqmlab.experiments import registry

LOSS_DRIVEN = ("droptail", "red", "sred")
RESTRAINING = ("red_pd", "fred-1", "bred", "csfq", "drr")


@pytest.fixture(scope="module")
def quick():
    return registry()["today-tcp"].run(quick=True)


def test_csfq_and_drr_carry_their_fairness_to_todays_tcp(quick):
    graded = [row for row in quick.rows if row.graded]
    assert {row.key for row in graded} >= {
        "flood.csfq",
        "flood.drr",
        "bbr.csfq",
        "cubic.drr",
        "droptail.bbr_over_cubic",
    }
    assert [row.key for row in graded if not row.passed] == []


def test_bbr_takes_what_loss_driven_queues_leave_and_the_restraining_ones_hold_the_flood(quick):
    classes = quick.data["classes"].set_index("mechanism")
    for name in LOSS_DRIVEN:
        assert classes.at[name, "bbr_share"] > 1.2, name
        assert max(classes.at[name, "reno_share"], classes.at[name, "cubic_share"]) < 0.5, name
        assert classes.at[name, "flood_share"] > 3.5, name
    for name in RESTRAINING:
        assert classes.at[name, "flood_share"] < 2.0, name
    # The shares are of each class's max-min fair share: DRR gives every class its own.
    assert classes.loc["drr", ["flood_share", "reno_share", "cubic_share", "bbr_share"]].tolist() == pytest.approx(
        [1.0, 1.0, 1.0, 1.0], abs=0.05
    )
