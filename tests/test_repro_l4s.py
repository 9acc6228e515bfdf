"""The L4S experiments (issue 37), quick mode: DualPI2's own claims (RFC 9332) and the seed
mechanisms under Prague and CUBIC. Each failing row is expected to fail, with its measured reason.

Margins, from the full runs (seeds 1-3, docs/l4s.md): under DualPI2 on 40 Mbit/s Prague's rate per
flow is 1.05-2.0 of CUBIC's, the L queue's mean 0.17-0.48 ms and p99 0.57-1.41 ms, the C queue's
median 12.6-15.7 ms; on 10 Mbit/s Prague gets 0.39 of CUBIC's rate per flow; CSFQ, DRR and
FQ-CoDel give each class 0.97-1.03 of its fair share and hold an ECT(1) flood at 1.04-1.15 of its
share, where DualPI2 lets it send its 5 Mbit/s (2.5 shares)."""

from __future__ import annotations

import pytest
from aqmlab.experiments import registry


@pytest.fixture(scope="module")
def runs():
    return {name: registry()[name].run(quick=True) for name in ("l4s-coupling", "l4s-mix", "l4s-unresponsive")}


def test_dualpi2_couples_prague_and_cubic_and_keeps_each_queue_at_its_delay(runs):
    coupling = runs["l4s-coupling"]
    keys = {row.key.split(".")[0] for row in coupling.rows}
    assert keys == {"ratio", "l_mean", "l_p99", "c_median"}
    assert len(coupling.rows) == 2 * 2 * 4, "two RTTs, two mixes, four rows each in quick mode"
    assert [row.key for row in coupling.rows if not row.passed] == []
    cells = coupling.data["cells"]
    # Isolation: the L queue's 99th percentile stays below the C queue's median in every cell.
    assert (cells.l_p99_ms < cells.c_median_ms / 5).all(), cells


def test_fair_queues_share_between_prague_and_cubic_and_dualpi2s_step_is_above_a_packet_at_10mbps(runs):
    mix = runs["l4s-mix"]
    failing = [row.key for row in mix.rows if row.graded and not row.passed]
    assert failing == ["dualpi2.ratio"]
    # The measured reason: the step at 1 ms is shorter than one packet's 1.2 ms at 10 Mbit/s.
    assert "1.2 ms, above the L queue's 1 ms step" in mix.reasons["dualpi2.ratio"]
    classes = mix.data["classes"].set_index("mechanism")
    assert classes.at["dualpi2", "prague_marked"] > 0.2
    # Prague's packets wait less under DualPI2 than under any seed mechanism.
    assert classes["prague_delay_ms"].idxmin() == "dualpi2"


def test_an_ect1_flood_is_held_by_csfq_and_drr_not_by_dualpi2(runs):
    unresponsive = runs["l4s-unresponsive"]
    assert [row.key for row in unresponsive.rows if not row.passed] == []
    classes = unresponsive.data["classes"].set_index("mechanism")
    # DualPI2 has no queue protection: the flood sends all of its 5 Mbit/s.
    assert classes.at["dualpi2", "flood_mbps"] > 4.9


def test_the_overload_claim_fails_in_quick_mode_with_its_per_seed_goodputs():
    overload = registry()["l4s-overload"].run(quick=True)
    (row,) = overload.rows
    assert not row.passed
    assert overload.reasons[row.key].startswith("CUBIC's goodput per seed ")
    floods = overload.data["floods"].set_index("flood")
    # Either flood takes nearly the whole link (it sends 1.2 times it).
    assert (floods.flood_mbps > 38).all()
