"""BRED Fig. 12 (python/aqmlab/experiments/bred_fig12.py) in quick mode: LQD dropping from the
front is less fair than BRED wherever the CBRs send well above their share; where they send
below it (or at 1.3 x with 20 flows) LQD is as fair, and those rows fail with measured reasons."""

import pytest
from aqmlab.experiments import Reproduction, registry
from conftest import failing, rows


@pytest.fixture(scope="module")
def quick() -> Reproduction:
    return registry()["bred-fig12"].run(quick=True)


def test_lqd_is_less_fair_than_bred_where_the_cbrs_push_beyond_their_share(quick):
    found = rows(quick)
    for n in (20, 50, 100):
        assert found[f"order.n{n}.cbr4500k.lqd_lt_bred"].passed
        assert found[f"order.n{n}.cbr1500k.lqd_lt_bred"].passed


def test_the_failing_rows_are_the_light_loads(quick):
    assert failing(quick) == {
        "order.n20.cbr100k.lqd_lt_bred",
        "order.n20.cbr500k.lqd_lt_bred",
        "order.n50.cbr100k.lqd_lt_bred",
    }
    assert "each CBR offers 0.27x the equal share" in quick.reasons["order.n20.cbr100k.lqd_lt_bred"]


def test_dropping_from_the_tail_is_the_informative_reading(quick):
    tail = {key: row for key, row in rows(quick).items() if key.endswith(".alt_tail")}
    assert len(tail) == 12 and not any(row.graded for row in tail.values())
    # From the tail the CBRs keep their share and LQD is as fair as BRED with 100 flows.
    assert tail["order.n100.cbr4500k.lqd_lt_bred.alt_tail"].passed is False
    table = quick.data["fig12"].set_index(["flows", "cbr_total", "mechanism"])
    assert table.loc[(100, 4.5, "lqd"), "cbr_mean"] < 0.01 < table.loc[(100, 4.5, "lqd_tail"), "cbr_mean"]
