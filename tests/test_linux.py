"""Linux's qdiscs in aqmlab (issue 24): tc's words, the Linux profiles' errors, and `validate linux`
and `validate emulate` on the recorded numbers (which rows fail, and that these are the known ones)."""

from __future__ import annotations

import json
import re

import aqmlab
import pytest
from aqmlab import ScenarioError
from aqmlab.linux import emulated, reference, tc, uml, validate
from conftest import ROOT, aqmlab_cli

RED = "red limit 64000 min 16000 max 32000 avpkt 1000 burst 100 probability 0.1 bandwidth 10mbit"


def test_a_tc_line_becomes_the_linux_profiles_table():
    assert tc.qdisc_table(RED) == {
        "type": "red",
        "profile": "linux",
        "limit": "64000B",
        "min": "16000B",
        "max": "32000B",
        "avpkt": "1000B",
        "burst": 100,
        "probability": 0.1,
        "bandwidth": "10000000bps",
    }
    # tc's units: kb is 1024 bytes, a bare time is microseconds, bps is bytes per second.
    assert tc.qdisc_table("fq_codel memory_limit 32mb target 5000 noecn") == {
        "type": "fq_codel",
        "profile": "linux",
        "memory_limit": f"{32 * 1024 * 1024}B",
        "target": "5000us",
        "ecn": False,
    }
    assert tc.qdisc_table("red limit 64kb avpkt 1k bandwidth 1mbps")["bandwidth"] == "8000000bps"
    assert tc.qdisc_table("bfifo limit 64000") == {"type": "droptail", "limit_bytes": "64000B"}
    assert tc.qdisc_table("sfq limit 64 perturb 10") == {"type": "sfq", "limit": 64, "perturb": "10s"}
    with pytest.raises(tc.TcError, match=r"red: unknown word 'minimum' \(known: limit, min"):
        tc.qdisc_table("red limit 64000 minimum 10")
    with pytest.raises(tc.TcError, match="qdisc 'cake': aqmlab has no Linux twin"):
        tc.qdisc_table("cake bandwidth 10mbit")


def test_every_cell_has_a_valid_twin():
    for cell in reference.CELLS:
        validate.twin(cell, "reno", 1).validate()


def test_the_readme_names_every_cell():
    (listed,) = re.findall(r"Linux cell \(([\w, ]+) as `tc qdisc add`", (ROOT / "README.md").read_text())
    assert listed.split(", ") == list(reference.CELLS)


def _bottleneck(qdisc: str) -> str:
    return f"""
[simulation]
duration = "1s"
[topology]
type = "dumbbell"
bottleneck = {{ rate = "10Mbps", delay = "1ms", qdisc = {qdisc} }}
[[flows]]
type = "cbr"
rate = "5Mbps"
"""


def test_linux_profiles_read_tcs_words_from_files_and_name_the_field(tmp_path):
    path = tmp_path / "s.toml"
    path.write_text(
        _bottleneck(
            '{ type = "red", profile = "linux", limit = "64000B", min = "16000B", max = "32000B", '
            'avpkt = "1000B", burst = 100, probability = 0.1, bandwidth = "10mbit" }'
        )
    )
    results = aqmlab.run(aqmlab.load(path))
    assert results.link("L->R")["utilisation"] > 0.45
    cases = {
        # tc's limit is bytes: in a file it carries its unit.
        '{ type = "red", profile = "linux", limit = 64000, avpkt = "1000B" }': (
            'topology.bottleneck.qdisc.limit: a bare number; write its unit: "64000B" if you meant 64000 bytes'
        ),
        '{ type = "red", profile = "linux", limit = "64000B" }': "topology.bottleneck.qdisc.avpkt: required by tc red",
        '{ type = "red", profile = "linux", limit = "64000B", avpkt = "1000B", min_th = 5 }': (
            "topology.bottleneck.qdisc.min_th: unknown field `min_th`"
        ),
        '{ type = "choke", profile = "linux", limit = 64, min = 16, max = 80, bandwidth = "10mbit" }': (
            "topology.bottleneck.qdisc.max: must be <= limit (64), got 80"
        ),
        '{ type = "pie", profile = "linux", alpha = 0.125 }': "topology.bottleneck.qdisc.alpha:",
        '{ type = "fq_codel", profile = "linux", memory_limit = "32mb" }': (
            'tc\'s "mb" is MiB (1024-based); write "32MiB", or "32MB" for 1000s'
        ),
        '{ type = "codel", profile = "linuxx" }': "topology.bottleneck.qdisc.profile: unknown variant `linuxx`",
    }
    for qdisc, message in cases.items():
        path.write_text(_bottleneck(qdisc))
        with pytest.raises(ScenarioError) as error:
            aqmlab.load(path)
        assert message in str(error.value), (qdisc, str(error.value))


def test_validate_linux_fails_exactly_the_known_rows():
    outcome = validate.run_suite()
    cells = len(reference.CELLS) * len(reference.CCS) * len(validate.METRICS)
    l4s = sum(len(validate.l4s_rows(cell)) for cell in outcome.l4s["cells"].values())
    assert set(outcome.l4s["cells"]) == set(reference.L4S_CELLS)
    assert len(outcome.rows) == cells + len(reference.PAIRS) * len(validate.PAIR_METRICS) + l4s
    failing = {row.key for row in outcome.rows if not row.passed}
    assert failing == set(validate.KNOWN_FAILURES), (
        f"now failing, not known: {sorted(failing - set(validate.KNOWN_FAILURES))}; "
        f"known, now passing: {sorted(set(validate.KNOWN_FAILURES) - failing)}"
    )


def test_validate_emulate_fails_exactly_the_known_rows():
    outcome = emulated.run_suite()
    # Every emulated cell, every metric, two comparisons: emulated against Linux, aqmlab against emulated.
    assert len(outcome.rows) == 2 * len(emulated.load()["cells"]) * len(validate.METRICS)
    failing = {row.key for row in outcome.rows if not row.passed}
    assert failing == set(emulated.KNOWN_FAILURES), (
        f"now failing, not known: {sorted(failing - set(emulated.KNOWN_FAILURES))}; "
        f"known, now passing: {sorted(set(emulated.KNOWN_FAILURES) - failing)}"
    )


def test_where_a_difference_lies_follows_which_of_the_three_agree():
    by_key = {c.emulated_row.key.removesuffix(".emulated"): c for c in emulated.run_suite().comparisons}
    # CoDel's delay: the kernel's CUBIC and aqmlab's, both through aqmlab's CoDel twin, keep the
    # queue at 43-44 ms (the kernel's 33-55 over its three runs); Linux's CoDel in UML near 66: not a
    # matter of TCP recovery. (Reno's median under the twin moves 39-62 ms across seeds 1-6 with
    # aqmlab's TCP: no verdict there.)
    codel = by_key["codel.cubic.delay_median_ms"]
    assert codel.where == emulated.WHERE["qdisc"]
    assert codel.emulated[0] < 45 and codel.simulated_row.ours < 45 < 55 < codel.linux[0]
    # CHOKe, SFB and SFQ stood apart while the emulated TCP sent 1000-byte packets into their queues
    # of 64 packets; in 1500-byte packets, as Linux's and the simulated twin's, the three agree.
    for key in ("choke.reno.udp_mbps", "sfb.cubic.udp_mbps", "sfq.cubic.delay_median_ms"):
        assert by_key[key].where == "all three agree", key
    assert by_key["fq_codel.cubic.udp_mbps"].where == "all three agree"


def test_the_emulated_twin_is_the_twin_in_ip_packets():
    simulated, emulated_twin = validate.twin("red", "cubic", 2).to_dict(), emulated.scenario("red", "cubic", 2)
    data = emulated_twin.to_dict()
    assert data["topology"]["bottleneck"]["qdisc"] == simulated["topology"]["bottleneck"]["qdisc"]
    # htb's 10 Mbit/s of 1514-byte frames is 9.9075 Mbit/s of 1500-byte IP packets; iperf3's 849.2 datagrams a second.
    assert data["topology"]["bottleneck"]["rate"] == "9907530bps"
    udp = data["flows"][0]
    assert udp["packet_size"] == "1500B" and float(udp["rate"].removesuffix("bps")) / (1500 * 8) == pytest.approx(
        849.18, abs=0.01
    )
    assert [f.get("access_delay") for f in data["flows"]] == [f.get("access_delay") for f in simulated["flows"]]
    # Linux's TCP over a 1500-byte MTU: 1500-byte IP packets (emulate sets TCP_MAXSEG from packet_size).
    assert [f["packet_size"] for f in data["flows"][1:]] == ["1500B"] * (len(data["flows"]) - 1)


def test_validate_emulate_cli_prints_three_columns_and_fails_on_the_known_rows():
    done = aqmlab_cli("validate", "emulate", columns=160)
    assert done.returncode == (1 if emulated.KNOWN_FAILURES else 0), done.stderr
    assert "validate emulate:" in done.stdout and "≈ emulated" in done.stdout
    total = 2 * len(emulated.load()["cells"]) * len(validate.METRICS)
    assert f"{total - len(emulated.KNOWN_FAILURES)} of {total} checks pass" in done.stdout
    as_json = json.loads(aqmlab_cli("validate", "emulate", "--json").stdout)
    assert {row["key"] for row in as_json["rows"] if not row["pass"]} == set(emulated.KNOWN_FAILURES)
    assert as_json["emulated"]["command"] == "make linux-emulated"


def test_recording_resumes_and_summarises_every_cell(tmp_path):
    """`record_cells` (both recordings: Linux in UML, and emulated) measures each cell's runs
    round-robin, keeps each in the work folder and measures a kept run not again."""
    calls = []

    def measure(name, cc, run, folder):
        calls.append((name, cc, run))
        value = {"reno": 1.0, "cubic": 2.0, "bbr": 3.0}[cc] + run
        return {m: value for m in reference.METRICS} | {"load_before": 0.5, "load_after": 1.5}

    cells, loads = reference.record_cells(tmp_path, 2, ["red", "pie"], measure)
    assert calls == [(n, cc, r) for r in (1, 2) for n in ("red", "pie") for cc in reference.CCS]
    assert cells["pie/cubic"]["udp_mbps"] == {
        "mean": 3.5,
        "sd": pytest.approx(0.7071, abs=1e-4),
        "min": 3.0,
        "max": 4.0,
    }
    assert set(cells) == {f"{name}/{cc}" for name in ("red", "pie") for cc in reference.CCS} and min(loads) == 0.5
    (tmp_path / "red" / "reno" / "run2.json").unlink()
    calls.clear()
    reference.record_cells(tmp_path, 2, ["red", "pie"], measure)
    assert calls == [("red", "reno", 2)]
    with pytest.raises(SystemExit, match="unknown cell"):
        reference.record_cells(tmp_path, 1, ["cake"], measure)


def test_recorded_pairs_carry_each_flows_share(tmp_path):
    """`record_pairs` keeps each BBR-against-CUBIC run with its flows' goodputs and BBR's share, and
    summarises them per pair."""

    def measure(key, run, folder):
        bbr = {"bbr-cubic/0.5bdp": 8.0, "bbr-cubic/4bdp": 3.0}[key] + run
        return {m: 1.0 for m in reference.METRICS} | {
            "tcp_flow_mbps": [bbr, 10.0 - bbr],
            "delay_median_ms": 5.0 * run,
            "load_before": 0.5,
            "load_after": 1.5,
        }

    pairs, _ = reference.record_pairs(tmp_path, 2, measure)
    assert set(pairs) == set(reference.PAIRS)
    shallow = pairs["bbr-cubic/0.5bdp"]
    assert shallow["qdisc"] == "bfifo limit 25000" and pairs["bbr-cubic/4bdp"]["qdisc"] == "bfifo limit 200000"
    assert [run["bbr_share"] for run in shallow["runs"]] == pytest.approx([0.9, 1.0])
    assert shallow["bbr_share"]["mean"] == pytest.approx(0.95) and shallow["cubic_mbps"]["max"] == 1.0


def test_a_dumbbell_script_runs_the_flows_it_names():
    """The guest's script for a mixed dumbbell starts one client per TCP flow with its own congestion
    control and base RTT, and no UDP client when the dumbbell has none; a cell's has the UDP flood."""
    pair = uml.job_script("bfifo limit 25000", reference.PAIR_DUMBBELL, 60)
    assert "ccs=(bbr cubic)" in pair and "for rtt in 40 40; do" in pair and "-u -b" not in pair
    assert "-ge 2 ]" in pair and "for h in 11 12; do" in pair
    cell = uml.job_script("sfq limit 64", uml.Dumbbell.cell("reno"), 30)
    assert "ccs=(reno reno reno reno reno reno reno reno)" in cell
    assert "-p 5209 -B 10.1.0.20 -u -b 10M" in cell and "-ge 9 ]" in cell
    assert uml.Dumbbell.cell("cubic").headers == (52,) * 8 + (28,)
    with pytest.raises(ValueError, match="1 to 9 TCP flows, got 10"):
        uml.Dumbbell((("reno", 20),) * 10)


def test_a_run_kept_before_its_dumbbell_was_written_is_the_cells(tmp_path):
    """Runs recorded before `dumbbell.json` existed are measured again as the cells' dumbbell."""
    assert uml.Dumbbell.of_run(tmp_path).senders == (11, 12, 13, 14, 15, 16, 17, 18, 20)
    (tmp_path / "dumbbell.json").write_text(json.dumps(reference.PAIR_DUMBBELL.to_dict()))
    assert uml.Dumbbell.of_run(tmp_path) == reference.PAIR_DUMBBELL


def _bbr_beside_cubic(limit: int) -> dict[str, float]:
    """Goodput (Mbit/s) of a BBR and a CUBIC flow on 10 Mbit/s, 40 ms RTT (BDP 50 packets of
    1000 bytes), drop-tail of `limit` packets, 30 s measured from 10 s."""
    scenario = aqmlab.Scenario.from_dict(
        {
            "simulation": {"duration": "40s", "warmup": "10s"},
            "topology": {
                "type": "dumbbell",
                "access_rate": "1Gbps",
                "access_delay": 0,
                "sink_delay": 0,
                "bottleneck": {"rate": "10Mbps", "delay": "20ms", "qdisc": {"type": "droptail", "limit": limit}},
            },
            "flows": [
                {"type": "tcp", "name": "bbr", "tcp": {"profile": "linux", "cc": "bbr"}},
                {"type": "tcp", "name": "cubic", "tcp": {"profile": "linux", "cc": "cubic"}},
            ],
        }
    )
    goodput = aqmlab.run(scenario).flows.set_index("name").goodput_bps / 1e6
    return {"bbr": goodput["bbr"], "cubic": goodput["cubic"]}


def test_bbr_runs_and_shares_drop_tail_with_cubic_as_bbr_v1_does():
    """BBR v1 beside CUBIC (issue 24 goal 3): in half a BDP of buffer BBR's 2 BDP in flight
    keeps the queue full and CUBIC's losses keep it small; in 4 BDP CUBIC fills the buffer
    and the two share about evenly. Measured seeds 1-3: 8.71-8.81 against 1.00-1.11 Mbit/s,
    and 4.45-4.73 against 5.27-5.55; together 9.8 and 10.0 Mbit/s."""
    shallow = _bbr_beside_cubic(25)
    assert shallow["bbr"] > 0.8 * 10 and 0.5 < shallow["cubic"] < 2, shallow
    deep = _bbr_beside_cubic(200)
    assert 0.35 * 10 < deep["bbr"] < 0.55 * 10 and 0.45 * 10 < deep["cubic"] < 0.65 * 10, deep
    for shares in (shallow, deep):
        assert sum(shares.values()) > 0.95 * 10, shares


def test_an_l4s_dumbbell_script_loads_dualpi2_runs_l4steams_tc_and_marks_the_udp_ect1():
    """On the L4S kernel the guest loads sch_dualpi2 and sets up and samples the qdisc with the L4STeam
    tc; the UDP flood of the ECT(1) cell sends with TOS 1; Debian's kernel's script has none of it."""
    qdisc, dumbbell = reference.L4S_CELLS["dualpi2/dctcp+cubic+udp-ect1"]
    script = uml.job_script(qdisc, dumbbell, 30, uml.L4S)
    assert f"qtc={uml.L4S.tc}\n" in script and "tcp_dctcp sch_dualpi2; do" in script
    assert "ccs=(dctcp cubic)" in script and "-u -b 10M \\\n  -l 1472 -S 1 -t 30" in script
    assert "handle 10: dualpi2 any_ect || exit 3" in script
    # DCTCP's congestion control from its own route, before its SYN; its receiver DCTCP; CUBIC's neither.
    assert "rule add from 10.1.0.11 lookup $((100+0)); " in script and script.count("congctl dctcp") == 1
    assert "10.1.0.12 lookup" not in script
    assert "ip netns exec rcv sysctl -qw net.ipv4.tcp_congestion_control=dctcp\n" in script
    debian = uml.job_script("sfq limit 64", uml.Dumbbell.cell("reno"), 30)
    assert "qtc=tc\n" in debian and "sch_dualpi2" not in debian and " -S " not in debian
    assert "congctl" not in debian and "rcv sysctl -qw" not in debian
    assert dumbbell.scalable == [True, False] and uml.Dumbbell.from_dict(dumbbell.to_dict()) == dumbbell


def _l4s_run_folder(folder, qdisc: dict) -> None:
    """A DCTCP-beside-CUBIC run's files: 200 samples 0.1 s apart from 10 s on, in the i-th the backlog
    1250·i bytes (i ms at 10 Mbit/s), every counter of `qdisc` (name: per-sample step) growing
    linearly, DualPI2's delay_l (i mod 10) ms and delay_c 15 ms."""
    (folder / "dumbbell.json").write_text(json.dumps(reference.L4S_CELLS["dualpi2/dctcp+cubic"][1].to_dict()))
    (folder / "start.txt").write_text("100.0\n")
    lines = []
    for i in range(200):
        shown = {"kind": qdisc["kind"], "handle": "10:", "backlog": 1250 * i, "delay_l": 1000 * (i % 10)}
        shown |= {"delay_c": 15000} | {name: step * i for name, step in qdisc["counters"].items()}
        counters = [
            {"pref": k + 1, "options": {"actions": [{"stats": {"bytes": i, "packets": 1 + i}}]}} for k in (0, 1)
        ]
        lines.append(json.dumps({"t": 110.0 + 0.1 * i, "q": [{"kind": "htb", "handle": "1:"}, shown], "f": counters}))
    (folder / "samples.jsonl").write_text("\n".join(lines) + "\n")


def test_the_l4s_rows_of_a_run_read_each_class_dualpi2s_queues_and_its_counters(tmp_path):
    run = uml.Run(0.0, 9.5, 0.9, 1.0, [6.0, 3.5], 10.0, 200, 0.0, 0.0, 0.5, 0.0, 0.0, 45.0)
    _l4s_run_folder(tmp_path, {"kind": "dualpi2", "counters": {"drops": 2, "ecn_mark": 5, "step_marks": 3}})
    rows = uml.classes(tmp_path, run, 10, 30)
    assert rows == pytest.approx(
        {
            "scalable_mbps": 6.0,
            "classic_mbps": 3.5,
            "udp_mbps": 0.0,
            # 19.9 s between the first sample and the last: 2 x 199 drops, 5 x 199 marks, 3 x 199 of them a step's.
            "drops_per_s": 20.0,
            "marks_per_s": 50.0,
            "step_marks_per_s": 30.0,
            "delay_median_ms": 99.5,
            "delay_p99_ms": 197.01,
            "delay_l_median_ms": 4.5,
            "delay_l_p99_ms": 9.0,
            "delay_c_median_ms": 15.0,
            "delay_c_p99_ms": 15.0,
        }
    )
    _l4s_run_folder(tmp_path, {"kind": "fq_codel", "counters": {"drops": 1, "ecn_mark": 1, "ce_mark": 4}})
    rows = uml.classes(tmp_path, run, 10, 30)
    assert "delay_l_median_ms" not in rows and rows["marks_per_s"] == pytest.approx(50.0)
    assert rows["step_marks_per_s"] == pytest.approx(40.0) and rows["drops_per_s"] == pytest.approx(10.0)


def test_recorded_l4s_cells_carry_their_dumbbell_and_the_kernel_that_ran_them(tmp_path):
    calls = []

    def measure(key, folder):
        calls.append(key)
        dualpi2 = key.startswith("dualpi2")
        rows = {m: 2.0 for m in reference.L4S_METRICS if dualpi2 or not m.startswith(("delay_l", "delay_c"))}
        seen = {"tcp_mbps": 9.0, "jain": 0.9, "load_before": 0.5, "load_after": 1.5, "kernel": "6.1.192-l4s"}
        return rows | seen | {"scalable_mbps": len(calls)}

    out = tmp_path / "l4s.json"
    recorded = reference.record_l4s(tmp_path / "work", 2, out, measure)
    assert calls == list(reference.L4S_CELLS) * 2 and json.loads(out.read_text()) == recorded
    assert recorded["kernel"] == "Linux 6.1.192-l4s (User-Mode Linux, HZ=100, one CPU)"
    assert recorded["command"] == "make linux-l4s-reference" and set(recorded["cells"]) == set(reference.L4S_CELLS)
    udp = recorded["cells"]["dualpi2/dctcp+cubic+udp-ect1"]
    assert udp["qdisc"] == "dualpi2 any_ect" and udp["dumbbell"]["udp_tos"] == 1
    assert udp["scalable_mbps"]["min"] == 3 and udp["scalable_mbps"]["max"] == 7
    assert "delay_l_median_ms" not in recorded["cells"]["fq_codel-ce/dctcp+reno"]
    assert validate.l4s_rows(recorded["cells"]["fq_codel-ce/dctcp+reno"]) == [
        "scalable_mbps",
        "classic_mbps",
        "delay_median_ms",
        "delay_p99_ms",
        "marks_per_s",
        "drops_per_s",
    ]


def test_every_l4s_cell_has_a_twin_with_dctcp_and_an_ect1_udp():
    """The twins need `type = "dualpi2"` with tc's words, FQ-CoDel's `ce_threshold`, `cc = "dctcp"` and
    a CBR's `ecn = "ect1"` (issue 37)."""
    for key in reference.L4S_CELLS:
        scenario = validate.l4s_twin(key, 1).to_dict()
        flows = {flow["name"]: flow for flow in scenario["flows"]}
        assert flows["tcp0"]["tcp"]["cc"] == "dctcp", key
        assert ("udp" in flows) == key.endswith("udp-ect1"), key
    flows = validate.l4s_twin("dualpi2/dctcp+cubic+udp-ect1", 1).to_dict()["flows"]
    assert [flow.get("ecn") for flow in flows if flow["type"] == "cbr"] == ["ect1"]
