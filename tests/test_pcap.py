"""Packet captures (`simulation.pcap`, `aqmlab run --pcap`): read back with dpkt and checked
against the run's own tables and against closed forms of the scenario."""

from __future__ import annotations

from pathlib import Path

import aqmlab
import dpkt
import pytest
from conftest import aqmlab_cli, dumbbell, write_scenario

# TCP payload of a 1000-byte data packet: the IPv4 packet is the simulated size, less 40 bytes of headers.
SEGMENT = 960
# A CBR of 1000-byte packets at 2 Mbps sends one every 4 ms from its start.
CBR_START_NS, CBR_GAP_NS = 500_000_000, 4_000_000


def capture(path: Path) -> list[tuple[int, dpkt.ip.IP]]:
    """(time in ns, IPv4 packet) of every record."""
    with path.open("rb") as f:
        reader = dpkt.pcap.Reader(f)
        assert reader.datalink() == 101  # LINKTYPE_RAW: bare IPv4 packets
        return [(int(ts * 10**9), dpkt.ip.IP(buf)) for ts, buf in reader]


def mixed_scenario() -> dict:
    """Two SACK TCPs (flow 0 with ECN) and a 2 Mbps CBR through an ECN RED bottleneck that drops and marks."""
    scenario = dumbbell(
        {"type": "tcp", "tcp": {"variant": "sack", "ecn": True}},
        {"type": "tcp", "tcp": {"variant": "sack"}},
        {"type": "cbr", "rate": "2Mbps", "start": "0.5s"},
        qdisc={"type": "red", "limit": 30, "min_th": 5, "max_th": 15, "ecn": True},
        duration="4s",
    )
    scenario["simulation"] |= {
        "pcap": ["L->R", "R->L", "src0->L", "dst0-R", "src2-L"],
        "pcap_drops": True,
        "record_drops": True,
    }
    return scenario


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    out = tmp_path_factory.mktemp("pcap")
    results = aqmlab.run(mixed_scenario(), pcap_dir=out)
    return results, out


def test_every_captured_link_holds_each_packet_it_sent_and_each_drop(run):
    results, out = run
    assert sorted(p.name for p in results.pcap_files) == sorted(
        f"{stem}{kind}.pcap" for stem in ("L-R", "R-L", "src0-L", "dst0-R", "src2-L") for kind in ("", ".drops")
    )
    links = results.links.set_index("name")
    for name, stem in [("L->R", "L-R"), ("R->L", "R-L"), ("src0->L", "src0-L"), ("dst0->R", "dst0-R")]:
        sent, dropped = capture(out / f"{stem}.pcap"), capture(out / f"{stem}.drops.pcap")
        assert len(sent) == links.loc[name, "packets_sent"] > 0, name
        assert len(dropped) == links.loc[name, "drops"], name
        times = [t for t, _ in sent]
        assert times == sorted(times), name
    assert links.loc["L->R", "drops"] > 20, "the bottleneck drops: its drop capture is not trivially empty"


def test_drops_are_stamped_at_the_drop_log_times(run):
    results, out = run
    log = results.drop_log[results.drop_log["link"] == results.link("L->R")["id"]]
    dropped = capture(out / "L-R.drops.pcap")
    assert [t for t, _ in dropped] == [round(t * 1e9) for t in log["time"]]
    assert [ip.data.sport - 10_000 for _, ip in dropped] == list(log["flow"])


def test_a_cbr_is_stamped_at_its_closed_form_send_times(run):
    _, out = run
    sent = capture(out / "src2-L.pcap")
    assert [t for t, _ in sent] == [CBR_START_NS + k * CBR_GAP_NS for k in range(len(sent))]
    assert len(sent) == (4_000_000_000 - CBR_START_NS) // CBR_GAP_NS
    ip = sent[0][1]
    assert (ip.p, ip.len, ip.data.ulen, ip.data.sport, ip.data.dport) == (dpkt.ip.IP_PROTO_UDP, 1000, 980, 10002, 10002)
    assert (ip.src, ip.dst) == (bytes([10, 0, 0, 6]), bytes([10, 0, 0, 7])), "src2 and dst2 are nodes 6 and 7"


def test_tcp_sequence_numbers_count_the_flows_sent_bytes(run):
    results, out = run
    flow = results.flows.iloc[0]
    data = [ip for _, ip in capture(out / "src0-L.pcap")]
    assert all(ip.p == dpkt.ip.IP_PROTO_TCP and ip.data.sport == 10_000 for ip in data)
    # Every data packet the sender sent crosses its access link: the bytes are the flow's sent bytes.
    assert sum(ip.len for ip in data) == flow["sent_bytes"]
    seqs = [ip.data.seq for ip in data]
    assert all(seq % SEGMENT == 0 for seq in seqs)
    first_sends = set(seqs)
    assert first_sends == {k * SEGMENT for k in range(len(first_sends))}, "packets numbered 0, 1, 2, ..."
    assert len(seqs) - len(first_sends) == flow["retransmitted_packets"] > 0


def test_ack_numbers_reach_the_flows_delivered_bytes(run):
    results, out = run
    acks = [ip.data for _, ip in capture(out / "dst0-R.pcap")]
    throughput = results.throughput[results.throughput["flow"] == 0]
    widths = throughput["time"].diff().shift(-1).fillna(results.duration - throughput["time"].iloc[-1])
    delivered_bytes = (throughput["bps"] * widths / 8).sum()  # every in-order byte handed to the application
    assert max(ack.ack for ack in acks) / SEGMENT * 1000 == pytest.approx(delivered_bytes, rel=1e-9)
    sacked = [ack for ack in acks if any(kind == dpkt.tcp.TCP_OPT_SACK for kind, _ in dpkt.tcp.parse_opts(ack.opts))]
    assert sacked, "SACK blocks travel as TCP options"


def test_ecn_marks_and_echoes_belong_to_the_ecn_flow_only(run):
    _, out = run
    marked = [ip for _, ip in capture(out / "L-R.pcap") if ip.tos & 0b11 == 0b11]
    echoed = [ip for _, ip in capture(out / "R-L.pcap") if ip.data.flags & dpkt.tcp.TH_ECE]
    assert marked and echoed
    assert {ip.data.sport for ip in marked} == {ip.data.sport for ip in echoed} == {10_000}


def test_the_marks_table_counts_the_ce_packets_on_the_wire(run):
    results, out = run
    bottleneck = results.link("L->R")
    marks = results.marks
    assert set(marks["flow"]) == {0} and set(marks["link"]) == {bottleneck["id"]}
    assert marks["count"].sum() == bottleneck["qdisc.ecn_marks"]
    # A packet marked on L->R is sent on it, dropped there (RED marks before its buffer check), or
    # still queued at the end: at most the 30-packet limit.
    on_wire = sum(ip.tos & 0b11 == 0b11 for stem in ("L-R", "L-R.drops") for _, ip in capture(out / f"{stem}.pcap"))
    assert 0 < on_wire <= marks["count"].sum() <= on_wire + 30


def test_a_run_without_marks_has_no_marks_table(tmp_path):
    results = aqmlab.run(dumbbell({"type": "tcp"}, qdisc={"type": "red", "ecn": True}, duration="2s"))
    assert "marks" not in results.raw and results.marks.empty
    assert results.link("L->R")["qdisc.ecn_marks"] == 0
    results.save(tmp_path, format="csv")
    assert not (tmp_path / "marks.csv").exists()


def test_same_scenario_same_bytes_and_the_cli_writes_the_links_asked_for(run, tmp_path):
    _, out = run
    path = write_scenario(tmp_path / "s.toml", mixed_scenario())
    done = aqmlab_cli("run", path, "--out", tmp_path / "out", "--no-plots", "--pcap", "L->R", "--pcap-drops")
    assert done.returncode == 0, done.stderr
    assert sorted(p.name for p in (tmp_path / "out").glob("*.pcap")) == ["L-R.drops.pcap", "L-R.pcap"]
    for name in ("L-R.pcap", "L-R.drops.pcap"):
        assert (tmp_path / "out" / name).read_bytes() == (out / name).read_bytes()


def test_unknown_links_are_refused_naming_the_entry(tmp_path):
    path = write_scenario(tmp_path / "s.toml", dumbbell({"type": "cbr", "rate": "1Mbps"}))
    done = aqmlab_cli("run", path, "--out", tmp_path / "out", "--pcap", "L->R,R->X")
    assert done.returncode == 2
    assert done.stderr.strip().splitlines()[-1] == (
        'error: simulation.pcap[1]: unknown link "R->X" (links: L->R, R->L, src0->L, L->src0, R->dst0, dst0->R)'
    )
    done = aqmlab_cli("run", path, "--pcap", "L->R")
    assert done.returncode == 2 and "--pcap: give --out DIR" in done.stderr
