"""The L4S senders and codepoints through `aqmlab.run` (issue 37): DCTCP (RFC 8257) and TCP Prague
under the linux profile, classic and accurate ECN feedback, ECT(0)/ECT(1) on the wire for TCP and
CBR flows, and the settings refused naming the field.

The queue is a ramp marker (RED on the instantaneous queue, `w_q = 1`, marking with probability
rising from 0 at 5 packets to 1 at 60): every flow sees a marking rate it can estimate, and the
paths draw from the RED's stream only. α's tolerance (a fifth of the marked fraction) was chosen
before the runs: α is an EWMA per round of each round's marked fraction, so its mean over 30 s is
the packet-weighted fraction but for the rounds' unequal sizes (measured: DCTCP 0.0666 against
0.0675 marked, with accurate feedback 0.0598 against 0.0596)."""

import collections

import aqmlab
import pytest
from conftest import dumbbell


class CodepointCount(aqmlab.Qdisc):
    """A FIFO that counts arrivals by flow and ECN codepoint (counters `flow<N>_<codepoint>`)."""

    def __init__(self):
        self.fifo = collections.deque()
        self.seen = collections.Counter()

    def enqueue(self, packet, link):
        self.seen[f"flow{packet.flow}_{packet.ecn}"] += 1
        self.fifo.append(packet)

    def dequeue(self, link):
        return self.fifo.popleft() if self.fifo else None

    def counters(self):
        return dict(self.seen)


RAMP = {"type": "red", "limit": 300, "min_th": 5, "max_th": 60, "max_p": 1.0, "w_q": 1.0, "ecn": True}


def tcp(cc: str, **options) -> dict:
    return {"type": "tcp", "packet_size": "1500B", "tcp": {"profile": "linux", "cc": cc, "trace": True, **options}}


def run(*flows: dict, qdisc: dict | aqmlab.Qdisc = RAMP, duration: str = "40s", warmup: str = "10s") -> aqmlab.Results:
    table = qdisc if isinstance(qdisc, dict) else None
    scenario = dumbbell(
        *flows,
        delay="20ms",
        qdisc=table,
        duration=duration,
        warmup=warmup,
        access_rate="1Gbps",
        access_delay="0ms",
    )
    scenario = aqmlab.Scenario.from_dict(scenario)
    return aqmlab.run(scenario if table else scenario.with_qdisc(qdisc))


@pytest.mark.parametrize("feedback", ["classic", "accurate"])
def test_dctcps_alpha_is_the_fraction_of_its_packets_marked(feedback):
    results = run(tcp("dctcp", ecn_feedback=feedback))
    link = results.link("L->R")
    marked = link["qdisc.ecn_marks"] / link["packets_sent"]
    traces = results.traces
    alpha = traces[(traces["var"] == "alpha") & (traces.time >= 10)].value.mean()
    assert 0.02 < marked < 0.2, marked
    assert alpha == pytest.approx(marked, rel=0.2)
    # It keeps the link full with the queue at the ramp's low end, and nothing is dropped.
    assert link["utilisation"] > 0.98 and link["drops"] == 0
    assert results.queue_delay.loc[0, "median"] < 0.015


def test_dctcp_cuts_by_alpha_over_two_where_reno_halves():
    dctcp = run(tcp("dctcp"), duration="20s")
    reno = run(tcp("reno", ecn=True), duration="20s")
    # Both see marks; Reno halves on each, so its window swings and the link idles; DCTCP's cut is
    # α/2 of the window, a few percent here.
    assert reno.link("L->R")["qdisc.ecn_marks"] > 0
    assert dctcp.link("L->R")["utilisation"] > reno.link("L->R")["utilisation"] + 0.05


def test_prague_sends_ect1_dctcp_ect0_and_a_cbr_what_it_is_told():
    flows = (
        tcp("prague"),
        tcp("dctcp"),
        {"type": "cbr", "rate": "1Mbps", "ecn": "ect1"},
        {"type": "cbr", "rate": "1Mbps"},
    )
    link = run(*flows, qdisc=CodepointCount(), duration="3s", warmup="0s").link("L->R")
    seen = {key.removeprefix("qdisc."): n for key, n in link.items() if key.startswith("qdisc.flow") and n > 0}
    # Data one way, and the ACKs (not ECN-capable) of the TCP flows; nothing is dropped, so no
    # retransmission (RFC 3168 §6.1.5: not ECN-capable) hides among the data.
    assert sorted(seen) == ["flow0_ect1", "flow1_ect", "flow2_ect1", "flow3_not-ect"], seen
    assert link["drops"] == 0


def test_prague_exits_slow_start_on_marks_and_holds_alpha_below_one():
    # Beside a DCTCP flow that fills the link, Prague's slow start meets marks and ends; α falls
    # from its initial 1 to near the marked fraction.
    results = run(tcp("prague"), tcp("dctcp"), duration="40s")
    traces = results.traces
    prague = traces[traces.flow == 0]
    ssthresh = prague[prague["var"] == "ssthresh"].value
    assert ssthresh.iloc[-1] < 2000, "slow start ended"
    alpha = prague[(prague["var"] == "alpha") & (prague.time >= 10)].value.mean()
    assert alpha < 0.3
    assert results.link("L->R")["utilisation"] > 0.95


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"cc": "dctcp", "ecn": False}, r'^flows\[0\]\.tcp\.ecn: cc = "dctcp" needs ECN \(TCP_CONG_NEEDS_ECN\)'),
        (
            {"cc": "prague", "ecn_feedback": "classic"},
            r"^flows\[0\]\.tcp\.ecn_feedback: cc = \"prague\" needs accurate",
        ),
        ({"cc": "reno", "ecn_feedback": "accurate"}, r"^flows\[0\]\.tcp\.ecn_feedback: read only when the flow is ECN"),
        ({"cc": "cubic", "ecn": "ect2"}, r"^flows\[0\]\.tcp\.ecn: unknown variant `ect2`, did you mean `ect0`\?"),
        ({"cc": "cubic", "ecn": 3}, r'^flows\[0\]\.tcp\.ecn: invalid type: integer `3`, expected true, false, "ect0"'),
    ],
)
def test_bad_ecn_settings_name_the_field(options, message):
    with pytest.raises(aqmlab.ScenarioError, match=message):
        run({"type": "tcp", "tcp": {"profile": "linux", **options}}, duration="1s", warmup="0s")


def test_dctcp_and_prague_need_the_linux_profile():
    for cc in ("dctcp", "prague"):
        with pytest.raises(aqmlab.ScenarioError, match=rf'^flows\[0\]\.tcp\.cc: "{cc}" is a module of the linux'):
            run({"type": "tcp", "tcp": {"cc": cc}}, duration="1s", warmup="0s")


def test_same_seed_same_results():
    def once():
        results = run(
            tcp("prague"), tcp("dctcp"), {"type": "cbr", "rate": "2Mbps", "ecn": "ect1"}, duration="6s", warmup="1s"
        )
        return results.flows.to_json(), results.traces.to_json()

    assert once() == once()
