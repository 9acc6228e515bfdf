"""Tables in the terminal (terminal.py): a table too wide stays one table under one header
(issue 34 item 7), headers carry units, and a missing value is "-" as on the report's pages."""

import math

from aqmlab import terminal
from aqmlab.report.blocks import _cell
from aqmlab.rows import Row


def widest(lines: list[str]) -> int:
    return max(len(line) for line in lines)


def test_a_short_table_of_many_columns_is_transposed():
    columns = ["mechanism", *(f"metric_{i}_ms" for i in range(12))]
    rows = [["red", *range(100, 112)], ["fq_codel", *range(200, 212)]]
    lines = terminal.table(columns, rows, "t", width_=60)
    assert widest(lines) <= 60
    assert lines[1].split() == ["mechanism", "red", "fq_codel"]
    # A row per column, its unit in its header, the two values beside it.
    assert lines[3].split() == ["metric", "0", "(ms)", "100", "200"]
    assert sum(line.split()[:2] == ["metric", "11"] for line in lines) == 1


def test_a_long_table_of_long_text_is_folded_under_its_first_cell():
    columns = ["metric", "paper", "ours", "tolerance", "pass"]
    rows = [
        [f"goodput of the flow number {i} under the mechanism (Mbps)", "over 8", 9.5 + i, ">= 7", "pass"]
        for i in range(20)
    ]
    lines = terminal.table(columns, rows, "t", width_=50)
    assert widest(lines) <= 50
    # One header: the first column's name, then the others' on an indented line, then a rule.
    assert lines[1:3] == ["metric", "  paper   ours  tolerance  pass"]
    first = lines.index("goodput of the flow number 3 under the mechanism")
    assert lines[first + 1] == "(Mbps)"
    assert lines[first + 2].split() == ["over", "8", "12.5", ">=", "7", "pass"]


def test_long_texts_that_recur_are_written_once_in_a_legend():
    reason = "the RFC TCP (profile rfc) has no ns-2.35 agent"
    columns = ["metric", "ns-2", "ours", "tolerance", "pass"]
    rows = [
        ["a", "9.65 ±0.02", 9.7, ">= 7", "pass"],
        ["b", reason, 7.9, ">= 7", "pass"],
        ["c", reason, 1.2, "±25%", "pass"],
    ]
    lines = terminal.table(columns, rows, "t", width_=44)
    assert widest(lines) <= 44
    assert [line.split()[:3] for line in lines[3:6]] == [
        ["a", "9.65", "±0.02"],
        ["b", "[1]", "7.9"],
        ["c", "[1]", "1.2"],
    ]
    assert lines[6:8] == ["[1] the RFC TCP (profile rfc) has no ns-2.35", "    agent"]


def test_a_long_name_is_written_once_in_a_legend_even_where_it_does_not_recur():
    # A user's mechanism named by its path (issue 35): as a row's name and as a column's.
    spec = "/home/someone/research/aqm/my_aqm.py:ExcessDrop"
    rows = [[name, 9.7 - i, 0.3 + i, 0.03 * (i + 1)] for i, name in enumerate(["droptail", "red", "fq_codel", spec])]
    rows += [[f"m{i}", 1.0, 2.0, 0.5] for i in range(12)]  # too many rows to turn the table
    lines = terminal.table(["mechanism", "udp_mbps", "tcp_total_mbps", "jain_index"], rows, "t", width_=60)
    assert widest(lines) <= 60
    assert lines[6].split() == ["[1]", "6.7", "3.3", "0.12"]
    assert lines[-2] == f"[1] {spec}"
    columns = ["flow", "red_mbps", f"{spec}_mbps"]
    lines = terminal.table(columns, [[f"tcp{i}", 1.0, 2.0] for i in range(12)], "t", width_=60)
    assert widest(lines) <= 60 and lines[1].split() == ["flow", "red", "(Mbps)", "[1]"]
    assert lines[-2] == f"[1] {spec}_mbps"  # as written, as a dotted name is (a sweep's axis)


def test_a_table_that_fits_is_left_as_it_was():
    lines = terminal.table(["flow", "goodput_mbps"], [["tcp", 1.5], ["udp", 8.25]], "t", width_=80)
    assert lines == [
        "t",
        "flow  goodput (Mbps)",
        "────  ──────────────",
        "tcp              1.5",
        "udp             8.25",
        "",
    ]


def test_headers_name_the_unit_of_the_column():
    assert terminal.heading("tcp_delay_p99_ms") == "tcp delay p99 (ms)"
    assert terminal.heading("fair_share_mbps") == "fair share (Mbps)"
    assert terminal.heading("rate_bps") == "rate (bit/s)"
    assert terminal.heading("added_mean_us") == "added mean (µs)"
    assert terminal.heading("wall_time_s") == "wall time (s)"
    assert terminal.heading("jain_index") == "jain index"
    assert terminal.heading("ms") == "ms"
    assert terminal.heading("topology.bottleneck.qdisc.max_p") == "topology.bottleneck.qdisc.max_p"


def test_a_value_that_was_not_measured_is_a_dash_in_the_terminal_and_on_the_page():
    row = Row.within("release time (s)", 10.58, math.nan, 0.3, relative=True, key="release")
    lines = terminal.rows_table([row], "t", ratio=True)
    assert lines[3].split() == ["release", "time", "(s)", "10.58", "-", "-", "±30%", "FAIL"]
    assert terminal.fmt(None) == terminal.fmt(math.nan) == "-"
    assert _cell(math.nan) == _cell(None) == '<td class="num">-</td>'
