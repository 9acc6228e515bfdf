"""`aqmlab emulate`: what it refuses (no root needed), and short real-time runs (root and
/dev/net/tun needed: skipped otherwise, saying why). Each run is a few seconds of real time."""

from __future__ import annotations

import json
import os
import resource
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import aqmlab
import dpkt
import pandas as pd
import pytest
from aqmlab.emulate import emulate, figures
from conftest import ROOT, aqmlab_cli, dumbbell, write_scenario

CAN_EMULATE = os.geteuid() == 0 and Path("/dev/net/tun").exists()
needs_root = pytest.mark.skipif(
    not CAN_EMULATE, reason="emulation needs root (network namespaces) and /dev/net/tun; this process has not both"
)


# Packets a UDP sender sent that had not reached the forwarder when the run ended.
LATE = 5


def cbr_and_reno(cbr: str, rate: str, duration: str, warmup: str) -> dict:
    """A jittered CBR flow named `cbr` at `rate` and a Reno TCP flow `tcp` through a 10 Mbit/s
    drop-tail of 30 packets."""
    return dumbbell(
        {"name": cbr, "type": "cbr", "rate": rate, "jitter": True},
        {"name": "tcp", "type": "tcp", "tcp": {"cc": "reno"}},
        qdisc={"type": "droptail", "limit": 30},
        duration=duration,
        warmup=warmup,
    )


def our_traces() -> tuple[str, str]:
    """What an emulation could leave in the machine's own namespace: named namespaces and
    `aqmlab0` devices (ours are anonymous and live in namespaces of their own)."""
    netns = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout
    links = subprocess.run(["ip", "-o", "link"], capture_output=True, text=True).stdout
    return netns, "\n".join(line for line in links.splitlines() if "aqmlab" in line)


def wait_for_tun(pid: int, timeout: float = 60.0) -> None:
    """Returns once process `pid` holds /dev/net/tun open."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        fds = Path(f"/proc/{pid}/fd")
        for fd in fds.iterdir() if fds.exists() else ():
            try:
                if os.readlink(fd) == "/dev/net/tun":
                    return
            except OSError:  # closed meanwhile
                continue
        time.sleep(0.05)
    raise AssertionError(f"emulate (pid {pid}) did not open /dev/net/tun within {timeout:g} s")


def can_run_real_time() -> bool:
    """Whether a thread of this process's kind may enter SCHED_FIFO 10 (root may, unless a
    container withholds CAP_SYS_NICE), asked of a child so this process keeps its class."""
    probe = "import os; os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(10))"
    return subprocess.run([sys.executable, "-c", probe], capture_output=True).returncode == 0


def open_fds() -> int:
    return len(os.listdir("/proc/self/fd"))


def test_run_refuses_a_linux_only_congestion_control():
    scenario = dumbbell({"type": "tcp", "tcp": {"cc": "cubic"}}, duration="1s", warmup="0s")
    with pytest.raises(aqmlab.ScenarioError, match=r"^flows\[0\]\.tcp\.cc: \"cubic\" is Linux's: write profile"):
        aqmlab.run(scenario)
    bbr = dumbbell({"type": "tcp", "tcp": {"cc": "bbr"}}, duration="1s", warmup="0s")
    with pytest.raises(aqmlab.ScenarioError, match=r"^flows\[0\]\.tcp\.cc: \"bbr\" is Linux's: write profile"):
        aqmlab.run(bbr)
    bbr = dumbbell({"type": "tcp", "tcp": {"profile": "linux", "cc": "bbr"}}, duration="1s", warmup="0s")
    assert aqmlab.run(bbr).flows.goodput_bps[0] > 0
    reno = dumbbell({"type": "tcp", "tcp": {"cc": "reno"}}, duration="1s", warmup="0s")
    assert aqmlab.run(reno).flows.goodput_bps[0] > 0


def test_an_unknown_congestion_control_is_refused_naming_the_field():
    scenario = dumbbell({"type": "tcp", "tcp": {"cc": "vegas"}}, duration="1s", warmup="0s")
    with pytest.raises(aqmlab.ScenarioError, match=r"flows\[0\]\.tcp\.cc"):
        aqmlab.Scenario.from_dict(scenario).validate()


def test_emulate_refuses_what_it_cannot_express_before_touching_the_machine(tmp_path):
    tfrc = dumbbell({"type": "tfrc"})
    done = aqmlab_cli("emulate", write_scenario(tmp_path / "tfrc.toml", tfrc))
    assert done.returncode == 2
    assert done.stderr.startswith("error: flows[0].type: emulation runs tcp, cbr and onoff flows"), done.stderr
    done = aqmlab_cli("emulate", "parking-lot")
    assert done.returncode == 2
    assert "topology.type: emulation runs dumbbell topologies only" in done.stderr
    # L4S: the kernel here has no DCTCP or Prague, and its UDP sockets send Not-ECT.
    l4s = {
        "dctcp.toml": (dumbbell({"type": "tcp", "tcp": {"profile": "linux", "cc": "dctcp"}}), "flows[0].tcp.cc: "),
        "ect1.toml": (dumbbell({"type": "cbr", "rate": "1Mbps", "ecn": "ect1"}), "flows[0].ecn: "),
    }
    for name, (scenario, field) in l4s.items():
        done = aqmlab_cli("emulate", write_scenario(tmp_path / name, scenario))
        assert (done.returncode, done.stdout) == (2, ""), name
        assert done.stderr.startswith(f"error: {field}") and "Traceback" not in done.stderr, done.stderr


def test_emulate_times_take_units_and_their_errors_name_the_option(tmp_path):
    # Issue 34 item 9: `--duration 10s` was "'10s' is not a valid float", and a duration the
    # warm-up refused did not say that the option set it. None of these starts an emulation.
    path = write_scenario(tmp_path / "s.toml", dumbbell({"type": "cbr", "rate": "1Mbps"}, duration="20s", warmup="10s"))
    refused = {
        ("--duration", "10s"): "error: --duration 10s: simulation.warmup: must be < duration (10s), got 10s\n",
        # A bare number is seconds, as before the option took units.
        ("--duration", "10"): "error: --duration 10: simulation.warmup: must be < duration (10s), got 10s\n",
        ("--warmup", "25s"): "error: --warmup 25s: simulation.warmup: must be < duration (20s), got 25s\n",
        ("--duration", "11min"): (
            "error: --duration 11min: simulation.duration: emulation runs in real time: at most 600 s, got 660s "
            "(aqmlab emulate, docs/emulate.md)\n"
        ),
    }
    for args, message in refused.items():
        done = aqmlab_cli("emulate", path, *args)
        assert (done.returncode, done.stdout, done.stderr) == (2, "", message), args
    for args, reason in {
        ("--duration", "10x"): 'invalid time "10x": unknown unit "x" (use one of s, ms, us, ns, min, h, hour)',
        ("--warmup", "nan"): 'must be a finite number, got "nan"',
    }.items():
        done = aqmlab_cli("emulate", path, *args)
        assert (done.returncode, done.stdout) == (2, ""), args
        assert done.stderr.endswith(f"Error: Invalid value for '{args[0]}': {reason}\n"), done.stderr


# An emulation.json that `aqmlab emulate --out` wrote (the 3-s CBR-and-Reno run of
# test_emulate_out_writes_runs_files_and_captures_the_real_packets, 2026-11-27), with an
# endpoint's error added.
RECORDED_STATS = {
    "wall_time_s": 3.000011057,
    "packets_read": 5272,
    "packets_written": 5182,
    "packets_unmatched": 0,
    "write_failures": 0,
    "added_mean_us": 55.51549942107294,
    "added_p99_us": 614.0,
    "added_max_us": 3403.906,
    "driver_cpu": 0.14137084895417437,
    "process_cpu": 0.19897857163131116,
    "cpu_us_per_packet": 81.84371092242377,
    "endpoint_errors": [["cbr", "connection refused"]],
    "kernel_tcp": [{"flow": "tcp", "srtt_ms": 29.105, "rttvar_ms": 1.477, "cwnd_segments": 28, "retransmits": 51}],
}


def test_the_emulation_figures_are_shown_as_recorded():
    """The one presenter of an emulation's figures, which `emulate` prints and `report` shows."""
    shown = figures(RECORDED_STATS)
    assert shown.forwarder == [
        ("packets forwarded", "5,182"),
        ("wall time", "3.00 s"),
        ("time added per pass", "56 µs mean, 614 µs p99"),
        ("forwarder CPU", "14.1% of a core (81.8 µs/packet), process 19.9%"),
    ]
    assert shown.line == (
        "forwarded 5,182 packets in 3.00 s; added per pass 56 µs mean, 614 µs p99; "
        "forwarder CPU 14.1% of a core (81.8 µs/packet), process 19.9%"
    )
    assert shown.kernel_tcp == [["tcp", "29.1", "1.5", "28", "51"]]
    assert shown.errors == ["flow cbr: connection refused"]
    lines = shown.lines(width=80)
    assert lines == [
        "Linux's TCP when each flow stopped (TCP_INFO)",
        "flow  srtt ms  rttvar ms  cwnd  retransmits",
        "────  ───────  ─────────  ────  ───────────",
        "tcp      29.1        1.5    28           51",
        "",
        shown.line,
    ]
    # Without TCP flows (or errors), no table.
    udp_only = figures({**RECORDED_STATS, "kernel_tcp": [], "endpoint_errors": []})
    assert udp_only.lines(width=80) == [shown.line] and udp_only.errors == []
    # Since the forwarder runs at real-time priority, emulation.json says whether it did.
    real_time = figures({**RECORDED_STATS, "driver_real_time": True})
    assert real_time.forwarder[-1] == ("forwarder priority", "real-time (SCHED_FIFO)")
    assert real_time.line == shown.line + "; priority real-time (SCHED_FIFO)"
    assert figures({**RECORDED_STATS, "driver_real_time": False}).line.endswith(
        "; priority ordinary (real-time refused)"
    )


def test_damaged_emulation_figures_name_every_missing_key():
    damaged = {k: v for k, v in RECORDED_STATS.items() if k not in ("added_p99_us", "driver_cpu")}
    damaged["kernel_tcp"] = [{"flow": "tcp", "srtt_ms": 29.1, "cwnd_segments": 28}]
    with pytest.raises(
        ValueError, match=r"^no added_p99_us, driver_cpu, kernel_tcp\[0\]\.rttvar_ms, kernel_tcp\[0\]\.retransmits$"
    ):
        figures(damaged)
    nulls = {
        **RECORDED_STATS,
        "added_mean_us": None,
        "kernel_tcp": [{**RECORDED_STATS["kernel_tcp"][0], "cwnd_segments": "28"}],
    }
    with pytest.raises(ValueError, match=r"^not a number: added_mean_us, kernel_tcp\[0\]\.cwnd_segments$"):
        figures(nulls)
    with pytest.raises(ValueError, match=r"^driver_real_time is not true or false$"):
        figures({**RECORDED_STATS, "driver_real_time": [1]})
    with pytest.raises(ValueError, match=r"^kernel_tcp is not a list of objects$"):
        figures({**RECORDED_STATS, "kernel_tcp": None})


@pytest.mark.skipif(os.geteuid() != 0 or not shutil.which("setpriv"), reason="drops root's capabilities with setpriv")
def test_without_root_emulate_says_it_needs_root(tmp_path):
    """As root without any capability (setpriv), as an ordinary user would be."""
    path = write_scenario(tmp_path / "s.toml", dumbbell({"type": "cbr", "rate": "1Mbps"}))
    env = {**os.environ, "PYTHONPATH": str(ROOT / "python")}
    done = subprocess.run(
        ["setpriv", "--bounding-set=-all", "--inh-caps=-all", sys.executable, "-m", "aqmlab", "emulate", str(path)],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
    )
    assert done.returncode == 1, done.stderr
    assert "aqmlab emulate needs root" in done.stderr
    assert "Traceback" not in done.stderr


@needs_root
@pytest.mark.skipif(not shutil.which("setpriv"), reason="drops CAP_SYS_NICE with setpriv")
def test_without_real_time_priority_emulate_runs_and_says_so(tmp_path):
    """Root without CAP_SYS_NICE (a container may withhold it), and without an RLIMIT_RTPRIO
    that would allow it anyway, cannot put the forwarder in the real-time class: the run goes on
    at ordinary priority, with a note saying why."""
    path = write_scenario(tmp_path / "s.toml", dumbbell({"type": "cbr", "rate": "1Mbps"}, duration="2s", warmup="0.5s"))
    env = {**os.environ, "PYTHONPATH": str(ROOT / "python")}
    done = subprocess.run(
        ["setpriv", "--bounding-set=-sys_nice", "--inh-caps=-sys_nice"]
        + [sys.executable, "-m", "aqmlab", "emulate", str(path), "--json"],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
        preexec_fn=lambda: resource.setrlimit(resource.RLIMIT_RTPRIO, (0, 0)),
    )
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr
    assert "note: the forwarder runs at ordinary priority: real-time priority (SCHED_FIFO 10) was refused" in (
        done.stderr
    )
    stats = json.loads(done.stdout)["emulation"]
    assert stats["driver_real_time"] is False and stats["packets_written"] > 50


@needs_root
def test_tcp_and_cbr_through_a_real_time_drop_tail():
    """A 10 Mbit/s drop-tail of 30 packets, a 3 Mbit/s CBR flow and a Reno TCP flow for 4 s:
    the link is full, the CBR flow gets nearly its rate, TCP the rest, and the queue drops.
    Nothing is left behind: no descriptor, namespace or device."""
    before = (open_fds(), our_traces())
    scenario = cbr_and_reno("cbr", "3Mbps", duration="4s", warmup="1.5s")
    emulated = emulate(scenario)
    flows = emulated.results.flows.set_index("name")
    summary = emulated.results.summary()
    # Measured over five runs on 2 shared cores: utilisation 0.95-0.99, CBR 2.8-3.0 Mbit/s.
    assert summary["utilisation"]["L->R"] > 0.9
    assert 2.5e6 < flows.goodput_bps["cbr"] < 3.1e6
    assert flows.goodput_bps["tcp"] > 5e6
    assert summary["drops_by_reason"].get("overflow", 0) > 0
    assert emulated.stats["packets_written"] > 2000
    assert emulated.stats["endpoint_errors"] == []
    assert emulated.stats["driver_real_time"] is can_run_real_time()
    # The kernel's own view (TCP_INFO): its smoothed RTT lies between the base RTT, 2·(1 + 5 + 1)
    # ms, and that plus a full queue, 30 packets of 1.2 ms; its retransmissions are the table's.
    (kernel,) = emulated.stats["kernel_tcp"]
    assert kernel["flow"] == "tcp" and 14 <= kernel["srtt_ms"] <= 14 + 36 + 10
    assert kernel["retransmits"] == flows.retransmitted_packets["tcp"] and kernel["cwnd_segments"] >= 1
    assert (open_fds(), our_traces()) == before


def capture(path: Path) -> list[tuple[int, dpkt.ip.IP]]:
    """(time in ns, IPv4 packet) of every record of a libpcap file of bare IPv4 packets."""
    with path.open("rb") as f:
        reader = dpkt.pcap.Reader(f)
        assert reader.datalink() == 101  # LINKTYPE_RAW
        return [(round(ts * 10**9), dpkt.ip.IP(buf)) for ts, buf in reader]


@needs_root
def test_emulate_out_writes_runs_files_and_captures_the_real_packets(tmp_path):
    """`aqmlab emulate --out --pcap --pcap-drops`: the files `run --out` writes, emulation.json,
    and a capture per link and direction holding, as under `run`, one record per packet the link
    sent (drops: per packet its queue dropped), in time order within the run; here each record
    is the real packet's headers (the kernel's addresses, ports, options and sequence numbers)."""
    scenario = cbr_and_reno("cbr", "3Mbps", duration="3s", warmup="1s")
    out = tmp_path / "out"
    path = write_scenario(tmp_path / "s.toml", scenario)
    done = aqmlab_cli("emulate", path, "--out", out, "--pcap", "L->R,R->L", "--pcap-drops", "--format", "csv")
    assert done.returncode == 0, done.stderr
    files = {p.name for p in out.iterdir()}
    assert {"flows.csv", "links.csv", "drops.csv", "queue.csv", "summary.json", "emulation.json"} <= files
    assert {"L-R.pcap", "L-R.drops.pcap", "R-L.pcap", "R-L.drops.pcap", "queue.png"} <= files
    links = pd.read_csv(out / "links.csv").set_index("name")
    sent, dropped, acks = (capture(out / name) for name in ("L-R.pcap", "L-R.drops.pcap", "R-L.pcap"))
    assert len(sent) == links.loc["L->R", "packets_sent"] > 1000
    assert len(dropped) == links.loc["L->R", "drops"] > 0
    assert len(acks) == links.loc["R->L", "packets_sent"] > 100
    times = [t for t, _ in sent]
    assert times == sorted(times) and 0 <= times[0] and times[-1] < 3 * 10**9
    # Flow 0 (UDP) and flow 1 (TCP) from the senders' namespace; their ACKs the other way.
    assert {(ip.p, ip.data.sport, ip.data.dport) for _, ip in sent} == {(17, 20000, 30000), (6, 20001, 30001)}
    assert {(ip.src, ip.dst) for _, ip in sent} == {(bytes([198, 18, 1, 1]), bytes([198, 18, 2, 1]))}
    assert {(ip.src, ip.dst) for _, ip in acks} == {(bytes([198, 18, 2, 1]), bytes([198, 18, 1, 1]))}
    # Headers only, with the packet's own length: the CBR's 1000-byte datagrams; TCP's data
    # segments at most its 1000-byte packet size (a few shorter: the ends of the sender's writes),
    # each with the kernel's timestamp option (12 bytes of options), after the SYN.
    assert {ip.len for _, ip in sent if ip.p == 17} == {1000}
    tcp = [ip for _, ip in sorted(sent + dropped, key=lambda r: r[0]) if ip.p == 6]
    assert tcp[0].data.flags & dpkt.tcp.TH_SYN
    segments = [ip for ip in tcp[1:] if ip.len > 52]
    assert max(ip.len for ip in segments) == 1000 and {len(ip.data.opts) for ip in segments} == {12}
    assert sum(ip.len == 1000 for ip in segments) > 0.9 * len(segments)
    # The kernel's sequence numbers: a segment sent again is one the sender's kernel retransmitted.
    # Measured in 7 runs (45-62 retransmissions): the repeats on the bottleneck were the kernel's
    # count (TCP_INFO) exactly; a retransmission still on its access link at the end would be missing.
    repeats = len(segments) - len({ip.data.seq for ip in segments})
    retransmitted = pd.read_csv(out / "flows.csv").set_index("name").loc["tcp", "retransmitted_packets"]
    assert retransmitted - 2 <= repeats <= retransmitted
    emulation = json.loads((out / "emulation.json").read_text())
    assert emulation["packets_written"] > 2000
    # `aqmlab report` makes the folder a page that says it was emulated, with the forwarder's
    # figures and what the TCP sender's kernel saw.
    assert aqmlab_cli("report", out).returncode == 0
    page = (out / "report.html").read_text()
    assert "Emulated run: " in page and "emulated in real time" in page and ">simulated<" not in page
    assert f"{emulation['packets_written']:,}" in page
    kernel = emulation["kernel_tcp"][0]
    row = f'<td>{kernel["flow"]}</td><td class="num">{kernel["srtt_ms"]:.1f}</td>'
    assert "TCP_INFO" in page and row in page


@needs_root
def test_an_emulated_run_has_runs_tables_red_pds_flow_table_included():
    """Every table of `run`, the same columns, and RED-PD's per-flow table (`qdisc_flows`) filled
    as in a simulation: an 8 Mbit/s flood beside a Reno TCP on 10 Mbit/s is monitored from RED-PD's
    first round of identification and identified in more rounds than the TCP (measured, 3 runs: the
    flood in 3-14 rounds, the TCP in 1-2; simulated, seed 1: 15 and 10)."""
    scenario = cbr_and_reno("flood", "8Mbps", duration="3s", warmup="1s")
    scenario["topology"]["bottleneck"]["qdisc"] = {"type": "red_pd"}
    emulated, simulated = emulate(scenario).results, aqmlab.run(scenario)
    for name, table in simulated.tables().items():
        assert list(emulated.tables()[name].columns) == list(table.columns), name
    rows = emulated.qdisc_flows.set_index("flow")
    assert set(rows.direction) == {"data"} and rows.loc[0, "monitored"] == 1
    tcp_rounds = rows.identified_rounds.get(1, 0)
    assert rows.loc[0, "identified_rounds"] > tcp_rounds


@needs_root
def test_udp_senders_follow_the_simulated_sources_schedule():
    """A CBR flow whose rate goes from 2 to 6 Mbit/s at 1.5 s and a jittered ON-OFF flow, alone on
    an uncongested 10 Mbit/s link: the emulated senders are driven by the simulator's own sources,
    so each sends as many packets as in the simulation of the same seed (less the few still on
    their way at the end: measured 0-1 over 3 runs), and the CBR's goodput follows its rate."""
    scenario = dumbbell(
        {"name": "cbr", "type": "cbr", "rate": "2Mbps", "rate_changes": [{"at": "1.5s", "rate": "6Mbps"}]},
        {"name": "onoff", "type": "onoff", "rate": "2Mbps", "on_time": "0.2s", "off_time": "0.2s"},
        duration="3s",
        warmup="0.5s",
    )
    emulated, simulated = emulate(scenario).results, aqmlab.run(scenario)
    sent = emulated.flows.set_index("name").sent_packets
    expected = simulated.flows.set_index("name").sent_packets
    for name in ("cbr", "onoff"):
        assert expected[name] - LATE <= sent[name] <= expected[name], name
    # Goodput per 1-s bin: 2, then 2 and 6 half a second each, then 6 Mbit/s; measured (3 runs)
    # within 0.4 % of the simulated bins (the emulated receiver reads each packet a little later).
    bins = [run.throughput[run.throughput.flow == 0].bps.to_numpy() for run in (emulated, simulated)]
    assert bins[0] == pytest.approx(bins[1], rel=0.01)
    assert bins[1] == pytest.approx([2e6, 4e6, 6e6], rel=0.05)


@needs_root
def test_ctrl_c_stops_emulation_and_leaves_nothing(tmp_path):
    path = write_scenario(
        tmp_path / "s.toml", dumbbell({"type": "tcp", "count": 2}, {"type": "cbr", "rate": "2Mbps"}, duration="30s")
    )
    before = our_traces()
    env = {**os.environ, "PYTHONPATH": str(ROOT / "python")}
    process = subprocess.Popen(
        [sys.executable, "-m", "aqmlab", "emulate", str(path)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    # Interrupt once the devices are open (a fixed wait fails when imports are slow on a busy machine).
    wait_for_tun(process.pid)
    time.sleep(0.5)
    process.send_signal(signal.SIGINT)
    sent = time.monotonic()
    _, stderr = process.communicate(timeout=10)
    assert process.returncode == 130, stderr
    assert time.monotonic() - sent < 2.0
    assert "interrupted at" in stderr and "of 30 s emulated" in stderr
    assert our_traces() == before


@needs_root
def test_compare_emulate_runs_each_mechanism_in_real_time(tmp_path):
    """`compare --emulate`: an 8 Mbit/s CBR flood and a Reno TCP on 10 Mbit/s, 3 s each under
    drop-tail and DRR: DRR keeps the TCP's fair half where drop-tail lets the flood take most."""
    scenario = cbr_and_reno("flood", "8Mbps", duration="3s", warmup="1s")
    path = write_scenario(tmp_path / "flood.toml", scenario)
    done = aqmlab_cli("compare", path, "-m", "droptail,drr", "--emulate", "--json")
    assert done.returncode == 0, done.stderr
    rows = {row["mechanism"]: row for row in json.loads(done.stdout)["mechanisms"]}
    # Measured, four runs on 2 shared cores at load 3-4.5: TCP 1.96-2.05 Mbit/s under drop-tail, 5.00-5.16 under
    # DRR; the forwarder added 35-341 us per pass on average.
    assert rows["drr"]["tcp_mbps"] > 1.5 * rows["droptail"]["tcp_mbps"]
    assert rows["drr"]["tcp_mbps"] > 3.5
    assert all(0 < row["added_mean_us"] < 5000 for row in rows.values())


def test_the_cubic_bbr_example_runs_simulated_too():
    """docs/examples/cubic-bbr-flood.toml (issue 25 goal 5): 4 CUBIC and 4 BBR flows beside a
    flood; the simulator runs its BBR flows too (the linux profile's BBR), each getting some goodput
    (seed 1, 20 s measured: 0.33-3.7 Mbit/s; in 4 s two of them had none yet)."""
    example = ROOT / "docs" / "examples" / "cubic-bbr-flood.toml"
    scenario = aqmlab.load(example)
    assert [f["tcp"]["cc"] for f in scenario.to_dict()["flows"][1:]] == ["cubic"] * 4 + ["bbr"] * 4
    goodput = aqmlab.run(scenario.with_duration("30s", "10s")).flows.set_index("name").goodput_bps
    bbr = goodput[[f"bbr{rtt}" for rtt in (20, 40, 60, 80)]]
    assert (bbr > 0).all(), goodput


def test_the_cubic_reno_example_simulated_holds_the_flood_under_csfq_not_drop_tail():
    """docs/examples/cubic-reno-flood.toml (the simulated side of the emulated study): the 5 Mbit/s
    flood keeps nearly its rate through drop-tail, CSFQ holds it near its 1.11 Mbit/s share and
    shares the rest between the CUBIC and Reno flows alike (seed 1: 4.99 against 1.27 Mbit/s,
    CUBIC 4.44 and Reno 4.27, Jain 0.99)."""
    done = aqmlab_cli("compare", ROOT / "docs" / "examples" / "cubic-reno-flood.toml", "-m", "droptail,csfq", "--json")
    assert done.returncode == 0, done.stderr
    rows = {row["mechanism"]: row for row in json.loads(done.stdout)["mechanisms"]}
    assert rows["droptail"]["flood_mbps"] > 4.5 and rows["csfq"]["flood_mbps"] < 1.6
    cubic, reno = (sum(rows["csfq"][f"{cc}{rtt}_mbps"] for rtt in (20, 40, 60, 80)) for cc in ("cubic", "reno"))
    assert 0.9 < cubic / reno < 1.1 and rows["csfq"]["jain_index"] > 0.95


def test_the_100_mbit_demo_keeps_the_demos_drop_tail_verdict():
    """docs/examples/demo-100mbit.toml, issue 25's 100 Mbit/s test of the emulator, is the demo
    with every rate ×10: simulated, drop-tail still lets the UDP flow take nearly the whole link
    (seeds 1-3: 96.0-96.1 of 100 Mbit/s, the 31 TCPs 3.9-4.0; emulated on an idle machine,
    97.1-97.4 and 2.6-2.9: BENCHMARKS.md)."""
    results = aqmlab.run(aqmlab.load(ROOT / "docs" / "examples" / "demo-100mbit.toml"))
    goodput = results.flows.set_index("name").goodput_bps
    udp, tcp = goodput["udp"], goodput.drop("udp").sum()
    assert results.summary()["utilisation"]["L->R"] > 0.99
    assert udp > 90e6 and 2e6 < tcp < 10e6, goodput


@needs_root
def test_a_queue_discipline_written_in_python_runs_in_front_of_linux_tcp():
    # Issue 35: the same class as in a simulation, on the forwarder's thread (which takes the GIL
    # for each call while the caller waits without it). ExcessDrop's own drop reason shows.
    sys.path.insert(0, str(ROOT / "docs" / "examples"))
    import own_qdisc

    scenario = aqmlab.Scenario.from_dict(cbr_and_reno("cbr", "3Mbps", duration="3s", warmup="1s"))
    scenario = scenario.with_qdisc(own_qdisc.ExcessDrop(slope=0.05, threshold=5))
    emulated = emulate(scenario)
    summary = emulated.results.summary()
    assert summary["drops_by_reason"].get("excess", 0) > 0, summary["drops_by_reason"]
    assert summary["utilisation"]["L->R"] > 0.8
    assert emulated.results.links.set_index("name").loc["L->R", "qdisc"] == "python"
