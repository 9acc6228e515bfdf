"""DualPI2 (RFC 9332; Linux sch_dualpi2) and the DCTCP steps (FQ-CoDel's ce_threshold, RED's
mark_forced) end to end (issue 37): the PI controller holds Classic traffic near its 15 ms target,
tc's words become the Linux profile's table, and a bad field is named."""

import aqmlab
import pytest
from aqmlab.compare import presets
from aqmlab.linux import tc

# Within a factor of 1.5 of the 15 ms target: the controller corrects every 16 ms and eight
# Reno sawtooths spread the delay around its set point.
TARGET_BAND_MS = (10.0, 22.5)


def _scenario(qdisc: dict) -> aqmlab.Scenario:
    return aqmlab.Scenario.from_dict(
        {
            "simulation": {"duration": "40s", "warmup": "15s", "seed": 1},
            "topology": {
                "type": "dumbbell",
                "bottleneck": {"rate": "10Mbps", "delay": "20ms", "qdisc": qdisc},
                "access_delay": "2ms",
            },
            "flows": [
                {
                    "name": "reno",
                    "type": "tcp",
                    "count": 8,
                    "start_jitter": "1s",
                    "tcp": {"profile": "linux", "cc": "reno", "ecn": True},
                }
            ],
        }
    )


@pytest.mark.parametrize("qdisc", [{"type": "dualpi2", "profile": "linux"}, {"type": "dualpi2"}])
def test_the_pi_controller_holds_classic_reno_near_the_target(qdisc):
    results = aqmlab.run(_scenario(qdisc))
    link = results.link("L->R")
    delay = results.queue_delay_groups.set_index("group").loc["reno"]
    assert TARGET_BAND_MS[0] <= delay["median"] * 1000 <= TARGET_BAND_MS[1], delay["median"]
    assert link["utilisation"] > 0.9
    # ECT(0) is Classic: everything went through C, marked with p′² (the flows negotiated ECN).
    assert link["qdisc.l_packets"] == 0 and link["qdisc.c_packets"] > 0
    assert link["qdisc.c_marks"] > 0 and link["qdisc.c_marks"] == link["qdisc.ecn_marks"]
    assert 0.0 < link["qdisc.prob"] < 0.5


def test_any_ect_sends_ect0_reno_through_the_shallow_queue():
    # DCTCP-style classification (tc `any_ect`): the Renos' ECT(0) goes to L, where the 1 ms step
    # marks them long before C's target: they keep a queue of about a millisecond, not 15, and, as
    # Reno halves its window at every mark, leave most of the link idle (why L is for scalable senders).
    results = aqmlab.run(_scenario({"type": "dualpi2", "profile": "linux", "classification": "any_ect"}))
    link = results.link("L->R")
    assert link["qdisc.c_packets"] == 0 and link["qdisc.step_marks"] > 0
    assert link["utilisation"] < 0.5
    assert results.queue_delay_groups.set_index("group").loc["reno", "median"] * 1000 < 3.0


def test_fq_codel_ce_threshold_marks_above_its_step():
    plain = aqmlab.run(_scenario({"type": "fq_codel", "profile": "linux"}))
    step = aqmlab.run(_scenario({"type": "fq_codel", "profile": "linux", "ce_threshold": "1ms"}))
    marks = step.link("L->R")["qdisc.ce_mark"]
    assert marks > 0 and step.link("L->R")["qdisc.ecn_marks"] >= marks
    assert "qdisc.ce_mark" not in plain.links.columns
    # Reno halves its window at a mark: with a 1 ms step it keeps far less queue than CoDel's 5 ms target.
    median = lambda r: r.queue_delay_groups.set_index("group").loc["reno", "median"]  # noqa: E731
    assert median(step) < median(plain) / 2


def test_tc_words_become_the_linux_profiles_table():
    assert tc.qdisc_table("dualpi2 limit 64") == presets()["dualpi2"]
    assert tc.qdisc_table(
        "dualpi2 target 20ms tupdate 10ms alpha 0.2 beta 2.5 step_thresh 5p classic_protection 30 any_ect overflow"
    ) == {
        "type": "dualpi2",
        "profile": "linux",
        "target": "20000us",
        "tupdate": "10000us",
        "alpha": 0.2,
        "beta": 2.5,
        "step_thresh_packets": 5,
        "classic_protection": 30,
        "classification": "any_ect",
        "drop_on_overload": False,
    }
    assert tc.qdisc_table("dualpi2 step_thresh 1ms drop_enqueue")["step_thresh"] == "1000us"
    assert tc.qdisc_table("fq_codel ce_threshold 1ms ce_threshold_selector 0x1/0x3") == {
        "type": "fq_codel",
        "profile": "linux",
        "ce_threshold": "1000us",
        "ce_threshold_selector": 1,
        "ce_threshold_mask": 3,
    }
    with pytest.raises(tc.TcError, match="fq_codel ce_threshold_selector: '1' is not VALUE/MASK"):
        tc.qdisc_table("fq_codel ce_threshold_selector 1")


@pytest.mark.parametrize(
    ("qdisc", "message"),
    [
        (
            {"type": "dualpi2", "profile": "linux", "classic_protection": 150},
            "topology.bottleneck.qdisc.classic_protection: must be 0..=100 (percent), got 150",
        ),
        ({"type": "dualpi2", "k": 0}, "topology.bottleneck.qdisc.k: must be > 0, got 0"),
        ({"type": "dualpi2", "step_thresh": "1ms"}, "topology.bottleneck.qdisc.step_thresh: unknown field"),
        (
            {"type": "red", "min_th": 20, "max_th": 20, "ecn": True},
            "topology.bottleneck.qdisc.min_th: must be < max_th (20), got 20",
        ),
    ],
)
def test_a_bad_field_is_named(qdisc, message):
    with pytest.raises(aqmlab.ScenarioError) as error:
        aqmlab.run(_scenario(qdisc).with_duration("1s", warmup="0s"))
    assert message in str(error.value)


def test_red_marks_as_dctcp_wants_with_a_step_on_the_instantaneous_queue():
    step = {
        "type": "red",
        "limit": 100,
        "w_q": 1.0,
        "min_th": 21,
        "max_th": 21,
        "ecn": True,
        "mark_forced": True,
    }
    results = aqmlab.run(_scenario(step))
    link = results.link("L->R")
    # Every ECN-capable arrival finding more than 20 packets is marked, none dropped: the queue
    # stays near 20 packets (24 ms at 10 Mbit/s of 1500-byte packets) and never reaches the limit.
    assert link["qdisc.ecn_marks"] > 0 and results.drops.empty
    assert results.queue_delay_groups.set_index("group").loc["reno", "p99"] * 1000 < 30.0
