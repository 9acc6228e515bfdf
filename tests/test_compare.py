"""`aqmlab compare`: one scenario under several mechanisms, one row each."""

import json
import re
from pathlib import Path

import aqmlab
from aqmlab.compare import compare, mechanisms, presets
from aqmlab.mechanisms import presets_text
from conftest import aqmlab_cli, write_scenario


def test_compare_prints_one_row_per_mechanism_with_its_measures(tmp_path):
    done = aqmlab_cli(
        "compare", "scenarios/csfq-fig3b.toml", "-m", "droptail,drr,fq_codel,pie", "--json", "--out", tmp_path
    )
    assert done.returncode == 0, done.stderr
    rows = {row["mechanism"]: row for row in json.loads(done.stdout)["mechanisms"]}
    assert list(rows) == ["droptail", "drr", "fq_codel", "pie"]
    for row in rows.values():
        # Flow groups: the UDP flow and the 31 TCPs summed; with the link full they add up to 10 Mb/s.
        assert abs(row["udp_mbps"] + row["tcp_mbps"] - 10 * row["utilisation"]) < 0.5, row
        for group in ("udp", "tcp", "backlog"):
            assert 0 <= row[f"{group}_delay_median_ms"] <= row[f"{group}_delay_p99_ms"], row
    # Per-flow schedulers isolate the UDP flow; FIFO-based ones (drop-tail, PIE) do not.
    assert min(rows["drr"]["jain_index"], rows["fq_codel"]["jain_index"]) > 0.9
    assert max(rows["droptail"]["jain_index"], rows["pie"]["jain_index"]) < 0.1
    # The 64 KB drop-tail buffer (51.2 ms at 10 Mb/s) stands full: every packet waits for it.
    # PIE holds the one queue near its 15 ms target for both groups.
    assert min(rows["droptail"]["udp_delay_median_ms"], rows["droptail"]["tcp_delay_median_ms"]) > 40
    assert max(rows["pie"]["udp_delay_median_ms"], rows["pie"]["tcp_delay_median_ms"]) < 25
    # In a FIFO both groups wait what the backlog says. A per-flow scheduler keeps the flood's own
    # queue short (DRR pushes it out, FQ-CoDel's CoDel holds it near 5 ms) and serves each TCP's
    # packet after the other 31 flows' turns: the two groups part, and the backlog, full of
    # the flood's pushed-out packets' successors and the TCPs', tells neither.
    for fifo in ("droptail", "pie"):
        row = rows[fifo]
        for group in ("udp", "tcp"):
            assert abs(row[f"{group}_delay_median_ms"] / row["backlog_delay_median_ms"] - 1) < 0.1, row
    for fair in ("drr", "fq_codel"):
        row = rows[fair]
        assert row["udp_delay_median_ms"] < 10, row
        assert row["udp_delay_median_ms"] < row["tcp_delay_median_ms"] / 3 < row["backlog_delay_median_ms"] / 3, row
    # Each row says what ran: the presets put every mechanism on the CSFQ paper's 64 KB buffer.
    assert [(rows[m]["qdisc"], rows[m]["buffer"]) for m in rows] == [
        ("droptail", "64KB"),
        ("drr", "64KB"),
        ("fq_codel", "64KB / 64 packets"),
        ("pie", "64 packets"),
    ]
    assert (tmp_path / "compare.csv").read_text().startswith("mechanism,qdisc,buffer,udp_mbps,tcp_mbps,jain_index")
    assert (tmp_path / "compare.png").stat().st_size > 10_000


def test_all_is_every_preset_and_a_type_name_runs_with_its_defaults():
    scenario = aqmlab.load(aqmlab.scenarios_dir() / "csfq-fig3b.toml").with_duration("3s", warmup="1s")
    table, _ = compare(scenario, ["all"])
    assert table["mechanism"].tolist() == ["scenario", *presets()]
    # `fred` (the type; the presets are fred-1 and fred-2) has no preset: it runs with its own defaults.
    assert mechanisms(["fred", "csfq"]) == {"fred": {"type": "fred"}, "csfq": presets()["csfq"]}
    table, _ = compare(scenario, ["fred"])
    assert table["mechanism"].tolist() == ["fred"] and table.loc[0, "utilisation"] > 0.9


def test_the_scenario_row_keeps_the_scenarios_own_qdisc():
    # Issue 26 item 7: fq_codel at its default limit (10 240 packets) lets a 15 Mbps CBR overload
    # queue for seconds; the preset's 64 packets do not. Each row says which ran.
    scenario = aqmlab.load("cbr-overload").with_qdisc("fq_codel").with_duration("4s", warmup="2s")
    table, _ = compare(scenario, ["scenario", "fq_codel"])
    rows = table.set_index("mechanism")
    assert rows.loc["scenario", ["qdisc", "buffer"]].tolist() == ["fq_codel", "default"]
    assert rows.loc["fq_codel", "buffer"] == "64KB / 64 packets"
    for delay in ("cbr_delay_median_ms", "backlog_delay_median_ms"):
        assert rows.loc["scenario", delay] > 10 * rows.loc["fq_codel", delay]


def test_an_unknown_mechanism_is_named_in_the_error():
    done = aqmlab_cli("compare", "scenarios/csfq-fig3b.toml", "-m", "red,nonsense")
    assert done.returncode == 2
    assert "mechanism 'nonsense': topology.bottleneck.qdisc.type: unknown type `nonsense`" in done.stderr


def test_every_transport_on_one_link_fair_mechanisms_share_it():
    """scenarios/mixed-transports.toml: 6 TCPs, 2 TFRCs, 2 RLM sessions and a 4 Mb/s CBR on
    10 Mb/s, a max-min share of 10/11 Mb/s. Per-flow schedulers hold the CBR within 25 % of that
    share (a 64 KB buffer shared by 11 flows leaves DRR short of exact) and give a TFRC flow
    TCP's rate within 20 % (RFC 5348's equation is TCP's; RLM's whole layers leave the rest to
    them); drop-tail lets the CBR keep over three times its share."""
    scenario = aqmlab.load(aqmlab.scenarios_dir() / "mixed-transports.toml")
    table, _ = compare(scenario, ["droptail", "drr", "fq_codel"])
    rows = table.set_index("mechanism")
    share = 10 / 11
    for fair in ("drr", "fq_codel"):
        row = rows.loc[fair]
        assert abs(row["cbr_mbps"] / share - 1) < 0.25, row
        assert abs((row["tfrc_mbps"] / 2) / (row["tcp_mbps"] / 6) - 1) < 0.2, row
    assert rows.loc["droptail", "cbr_mbps"] > 3 * share


def test_a_table_too_wide_for_80_columns_is_turned_not_split():
    # Issue 34 item 7: the table was split into column groups, read across by eye; two mechanisms
    # of ten columns are now two columns of ten rows, every value beside its name and unit.
    done = aqmlab_cli("compare", "scenarios/csfq-fig3b.toml", "-m", "droptail,drr", columns=80)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert max(len(line) for line in lines) <= 80, lines
    assert lines[0] == "csfq-fig3b.toml: mechanisms compared" and "columns" not in done.stdout
    assert lines[1].split() == ["mechanism", "droptail", "drr"]
    udp = next(line for line in lines if line.startswith("udp (Mbps)"))
    assert float(udp.split()[-1]) < 1 < float(udp.split()[-2])  # DRR holds the UDP near its share


def test_the_help_and_the_readme_name_every_preset():
    # Issue 26 item 7: fred-1 and fred-2 were in neither. Both say the table's words (issue 35 goal 3).
    text = presets_text()
    assert re.findall(r"`([\w-]+)` \(", text) == list(presets())
    # Without the spaces: the help wraps lines at hyphens too.
    shown = "".join(aqmlab_cli("compare", "--help", columns=200).stdout.split())
    assert "".join(text.split()) in shown
    assert "`fred-2`(FREDwithits§6two-packetbuffer" in shown
    readme = (Path(__file__).resolve().parents[1] / "README.md").read_text()
    assert text in readme, f"README.md's compare row should say mechanisms.presets_text():\n{text}"


# Issue 34 item 3: A - B - C, a fast first link and a 10 Mb/s second one with a deep drop-tail
# buffer (200 packets, 160 ms at 10 Mb/s), two TCPs and a CBR from A to C.
CHAIN = {
    "name": "chain",
    "simulation": {"duration": "8s", "warmup": "3s"},
    "topology": {
        "type": "graph",
        "nodes": ["A", "B", "C"],
        "links": [
            {"from": "A", "to": "B", "rate": "100Mbps", "delay": "2ms"},
            {
                "from": "B",
                "to": "C",
                "rate": "10Mbps",
                "delay": "10ms",
                "qdisc": {"type": "droptail", "limit": 200},
                "monitor": True,
            },
        ],
    },
    "flows": [
        {"name": "tcp", "type": "tcp", "count": 2, "src": "A", "dst": "C"},
        {"name": "video", "type": "cbr", "rate": "6Mbps", "src": "A", "dst": "C"},
    ],
}


def test_compare_on_a_graph_puts_the_mechanisms_on_the_named_link(tmp_path):
    path = write_scenario(tmp_path / "chain.toml", CHAIN)
    done = aqmlab_cli("compare", path, "-m", "scenario,fq_codel", "--link", "B->C", "--json", "--out", tmp_path / "out")
    assert done.returncode == 0, done.stderr
    rows = {row["mechanism"]: row for row in json.loads(done.stdout)["mechanisms"]}
    # The scenario's drop-tail lets the video keep its 6 Mb/s; FQ-CoDel on B->C holds it near its
    # fair share (10/3 Mb/s) and gives the TCPs the rest.
    assert rows["scenario"]["video_mbps"] > 5.5 and rows["fq_codel"]["video_mbps"] < 3.8, rows
    assert rows["fq_codel"]["jain_index"] > 0.95 > rows["scenario"]["jain_index"], rows
    assert rows["fq_codel"]["qdisc"] == "fq_codel" and rows["scenario"]["qdisc"] == "droptail"
    ran = json.loads((tmp_path / "out" / "compare.json").read_text())["mechanisms"]
    assert ran["scenario"] == {"type": "droptail", "limit": 200}
    # The row's link figures are the named link's: A->B carries the same 10 Mb/s at a tenth of its rate.
    done = aqmlab_cli("compare", path, "-m", "fq_codel", "--link", "A->B", "--json")
    assert done.returncode == 0, done.stderr
    (row,) = json.loads(done.stdout)["mechanisms"]
    assert 0.05 < row["utilisation"] < 0.11, row
    # A->B is not monitored in the file; compare monitors the link it names, so its packets'
    # queueing delay is kept: at a tenth of its rate they hardly wait.
    assert row["video_delay_median_ms"] is not None and row["video_delay_median_ms"] < 1, row
    # On B->C the deep drop-tail makes every packet wait; FQ-CoDel serves the TCPs' short queues first.
    assert rows["fq_codel"]["tcp_delay_median_ms"] < rows["scenario"]["tcp_delay_median_ms"] / 3, rows


def test_compare_on_a_graph_without_a_link_or_with_a_wrong_one_says_which_exist(tmp_path):
    path = write_scenario(tmp_path / "chain.toml", CHAIN)
    links = "A->B, B->A, B->C, C->B"
    done = aqmlab_cli("compare", path, "-m", "scenario,fq_codel")
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr == (
        f'error: {path}: a graph topology has no one bottleneck: name the link with --link "A->B", one of {links}\n'
    )
    done = aqmlab_cli("compare", path, "-m", "fq_codel", "--link", "B->D")
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr == f"error: --link B->D: no such link in {path}; its links are {links}\n"
    # A dumbbell's bottleneck is L->R without it; its reverse direction is named.
    done = aqmlab_cli("compare", "cbr-overload", "-m", "fq_codel", "--link", "L-R")
    assert (done.returncode, done.stderr) == (
        2,
        "error: --link L-R: no such link in cbr-overload; its links are L->R, R->L\n",
    )
