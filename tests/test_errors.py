"""Bad scenario files: each error names the field and the reason, from the Python API and the CLI."""

import copy
import time

import aqmlab
import pytest
from aqmlab.experiments.csfq.demo import MECHANISMS
from conftest import aqmlab_cli, dumbbell, write_scenario

GRAPH = {
    "simulation": {"duration": "2s"},
    "topology": {
        "type": "graph",
        "nodes": ["A", "B"],
        "links": [{"from": "A", "to": "B", "rate": "10Mbps", "delay": "1ms"}],
    },
    "flows": [{"type": "cbr", "rate": "1Mbps", "src": "A", "dst": "B"}],
}


def error_of(tmp_path, data: dict) -> str:
    path = write_scenario(tmp_path / "bad.toml", data)
    with pytest.raises(aqmlab.ScenarioError) as info:
        aqmlab.load(path).validate()
    assert isinstance(info.value, ValueError)
    return str(info.value)


def test_missing_field(tmp_path):
    data = dumbbell({"type": "cbr", "rate": "1Mbps"})
    del data["simulation"]["duration"]
    assert error_of(tmp_path, data) == "simulation: missing field `duration`"


def test_negative_rate(tmp_path):
    flows = [{"type": "cbr", "rate": "1Mbps"}] * 3 + [{"type": "cbr", "rate": "-1Mbps"}]
    assert error_of(tmp_path, dumbbell(*flows)) == "flows[3].rate: must be > 0, got -1Mbps"


def test_unknown_qdisc(tmp_path):
    message = error_of(tmp_path, dumbbell({"type": "cbr", "rate": "1Mbps"}, qdisc={"type": "fifo"}))
    # The list of known names grows as disciplines are added; drop-tail and RED are always in it.
    assert message.startswith("topology.bottleneck.qdisc.type: unknown type `fifo`, expected one of droptail, red, "), (
        message
    )


def test_min_th_above_max_th(tmp_path):
    red = {**MECHANISMS["red"], "min_th": 32000, "max_th": 16000}
    message = error_of(tmp_path, dumbbell({"type": "cbr", "rate": "1Mbps"}, qdisc=red))
    assert message == "topology.bottleneck.qdisc.min_th: must be < max_th (16000), got 32000"


def test_the_demo_red_configuration_is_valid():
    aqmlab.Scenario.from_dict(dumbbell({"type": "cbr", "rate": "1Mbps"}, qdisc=MECHANISMS["red"])).validate()


def test_unknown_node_in_a_flow(tmp_path):
    data = copy.deepcopy(GRAPH)
    data["flows"][0]["dst"] = "Z"
    assert error_of(tmp_path, data) == 'flows[0].dst: unknown node "Z"'


def test_unknown_node_in_a_link(tmp_path):
    data = copy.deepcopy(GRAPH)
    data["topology"]["links"][0]["to"] = "C"
    assert error_of(tmp_path, data) == 'topology.links[0].to: unknown node "C"'


def test_invalid_toml_names_the_file(tmp_path):
    path = tmp_path / "broken.toml"
    path.write_text("[simulation\nduration = 1\n")
    with pytest.raises(aqmlab.ScenarioError, match=r"broken\.toml: invalid TOML: "):
        aqmlab.load(path)


# Issue 34 item 10: what a newcomer wrote, and the line that says what to write instead.
def test_an_inline_table_over_lines_says_to_write_a_table(tmp_path):
    text = write_scenario(tmp_path / "s.toml", dumbbell({"type": "cbr", "rate": "1Mbps"})).read_text()
    one_line = 'bottleneck = { rate = "10Mbps", delay = "5ms", qdisc = { type = "droptail", limit = 100 } }'
    assert text.splitlines()[7] == one_line
    path = tmp_path / "spread.toml"
    path.write_text(text.replace('delay = "5ms", ', 'delay = "5ms",\n    '))
    done = aqmlab_cli("run", path)
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr == (
        f"error: {path}: invalid TOML: Invalid initial character for a key part (at line 8, column 47); "
        "TOML's inline tables { ... } are one line; over several lines, write it as the table "
        "[topology.bottleneck], one `key = value` a line\n"
    )
    # A list of tables: each becomes [[topology.links]] (docs/scenario.md shows that form).
    graph = write_scenario(tmp_path / "g.toml", GRAPH).read_text()
    spread = graph.replace('links = [{ from = "A", ', 'links = [{ from = "A",\n ')
    assert spread != graph
    path.write_text(spread)
    with pytest.raises(aqmlab.ScenarioError, match=r"write each table of the list as \[\[topology\.links\]\], one"):
        aqmlab.load(path)


def test_udp_is_answered_with_aqmlab_s_udp_sources(tmp_path):
    path = write_scenario(tmp_path / "s.toml", dumbbell({"type": "udp", "rate": "1Mbps"}))
    done = aqmlab_cli("run", path)
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr == (
        "error: flows[0].type: unknown type `udp`: aqmlab's UDP sources are `cbr` (constant bit rate, `rate`) and "
        "`onoff` (`rate` in ON periods of mean `on_time`, silent for `off_time`)\n"
    )


def test_a_name_is_printed_as_written(tmp_path):
    # Issue 34 item 10: "My-scenario" was reported; aqmlab writes the name as the file has it
    # (what capitalised it was the viewer of the output, which the bytes here rule out).
    data = {**dumbbell({"type": "cbr", "rate": "1Mbps"}, duration="2s"), "name": "my-scenario"}
    path = tmp_path / "my-scenario.toml"
    path.write_text("# my-scenario.toml: a CBR flow.\n" + write_scenario(path, data).read_text())
    done = aqmlab_cli("run", path, "--out", tmp_path / "out")
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("my-scenario: goodput and max-min fair share (Mbps) over the last 1 s\n")
    assert aqmlab_cli("report", tmp_path / "out").returncode == 0
    assert "<h1>Run: my-scenario</h1>" in (tmp_path / "out" / "report.html").read_text()


def test_run_rejects_a_bad_dict_without_crashing():
    with pytest.raises(aqmlab.ScenarioError, match=r"^flows\[0\]\.rate: must be > 0, got 0$"):
        aqmlab.run(dumbbell({"type": "cbr", "rate": 0}))


def test_cli_prints_the_error_and_exits_2(tmp_path):
    path = write_scenario(tmp_path / "bad.toml", dumbbell({"type": "cbr", "rate": "-1Mbps"}))
    done = aqmlab_cli("run", path, "--json")
    assert done.returncode == 2
    assert done.stdout == ""
    assert done.stderr.strip() == "error: flows[0].rate: must be > 0, got -1Mbps"


# Issue 26 item 5: in a file every quantity carries its unit; from Python a bare number is in
# base units. Issue 26 item 6: errors say what was meant, and show a quantity in its unit.
FILE_MISTAKES = [
    ("topology.access_delay", 10, 'topology.access_delay: a bare number; write its unit: "10s" if you meant 10 s'),
    # Issue 34 item 5: the number read in base units keeps its meaning (not "6000000Mbps").
    (
        "topology.bottleneck.rate",
        6000000,
        'topology.bottleneck.rate: a bare number; write its unit: "6Mbps" if you meant 6000000 bit/s',
    ),
    # 10 bit/s is no rate (below 1kbps): the usual unit is suggested.
    ("topology.bottleneck.rate", 10, 'topology.bottleneck.rate: a bare number; write its unit, e.g. "10Mbps"'),
    ("simulation.duration", "60", 'simulation.duration: "60" has no unit; write it: "60s" if you meant 60 s'),
    ("topology.bottleneck.delay", "-5ms", "topology.bottleneck.delay: must be >= 0, got -5ms"),
    (
        "topology.bottleneck.delay",
        "200s",
        "topology.bottleneck.delay: must be at most 100s (a one-way propagation delay), got 200s",
    ),
    (
        "topology.bottleneck.rate",
        "10mbps",
        'topology.bottleneck.rate: invalid rate "10mbps": unknown unit "mbps", did you mean "Mbps"? '
        "(use one of bps, b/s, kbps, Kbps, kb/s, Mbps, Mb/s, Gbps, Gb/s, kbit, mbit, gbit)",
    ),
    (
        "topology.bottleneck.qdisc",
        {"type": "fq-codel"},
        "topology.bottleneck.qdisc.type: unknown type `fq-codel`, did you mean `fq_codel`?",
    ),
    ("topology.type", "dumbell", "topology.type: unknown type `dumbell`, did you mean `dumbbell`?"),
    (
        "flows[0]",
        {"type": "tcp", "acess_delay": "2ms"},
        "flows[0].acess_delay: unknown field `acess_delay`, did you mean `access_delay`?",
    ),
    (
        "topology.bottleneck.rate_changes",
        [{"at": "1s", "rate": "5Mbps"}, {"at": "1s", "rate": "2Mbps"}],
        "topology.bottleneck.rate_changes[1].at: must be later than the change before (1s), got 1s",
    ),
]


@pytest.mark.parametrize(("path", "value", "message"), FILE_MISTAKES)
def test_a_file_s_mistake_is_one_line_saying_what_to_write(tmp_path, path, value, message):
    data = aqmlab.Scenario.from_dict(dumbbell({"type": "cbr", "rate": "1Mbps"})).with_({path: value}).to_dict()
    scenario_file = write_scenario(tmp_path / "s.toml", data)
    with pytest.raises(aqmlab.ScenarioError) as info:
        aqmlab.load(scenario_file)
    assert str(info.value) == message
    done = aqmlab_cli("run", scenario_file)
    assert (done.returncode, done.stdout, done.stderr) == (2, "", f"error: {message}\n")


def test_a_dict_s_bare_numbers_are_base_units():
    data = dumbbell({"type": "cbr", "rate": 1e6}, rate=10e6, delay=0.005, duration=2, warmup=1)
    goodput = aqmlab.run(data).flows.loc[0, "goodput_bps"]
    assert goodput == pytest.approx(1e6, rel=0.01)
    # The space SI writes before a unit is allowed.
    spaced = dumbbell({"type": "cbr", "rate": "1 Mbps"}, rate="10 Mbps", duration="2 s", warmup="1 s")
    assert aqmlab.run(spaced).raw == aqmlab.run(data).raw
    # Implausible values are refused from Python too: 10 is 10 bit/s, 1000 s of delay is not a link.
    with pytest.raises(aqmlab.ScenarioError) as info:
        aqmlab.run(dumbbell({"type": "cbr", "rate": 10}))
    assert str(info.value) == "flows[0].rate: must be 0 or at least 1000 bit/s (1kbps), got 10"
    with pytest.raises(aqmlab.ScenarioError) as info:
        aqmlab.run(dumbbell({"type": "cbr", "rate": "1Mbps"}, delay=1000))
    assert str(info.value) == "topology.bottleneck.delay: must be at most 100s (a one-way propagation delay), got 1000s"
    # A string still needs its unit.
    with pytest.raises(aqmlab.ScenarioError) as info:
        aqmlab.run(dumbbell({"type": "cbr", "rate": "1Mbps"}, duration="60"))
    assert str(info.value) == 'simulation.duration: "60" has no unit; write it: "60s" if you meant 60 s'


def test_a_sweep_spec_s_grid_values_carry_their_units(tmp_path):
    write_scenario(tmp_path / "base.toml", dumbbell({"type": "cbr", "rate": "1Mbps"}))
    spec = tmp_path / "spec.toml"
    spec.write_text('scenario = "base.toml"\n[grid]\n"topology.bottleneck.delay" = ["5ms", 0.01]\n')
    done = aqmlab_cli("sweep", spec, "--out", tmp_path / "out")
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr.endswith(
        'topology.bottleneck.delay: a bare number; write its unit: "10ms" if you meant 0.01 s\n'
    ), done.stderr
    assert "Traceback" not in done.stderr


# Issue 14: inputs that once aborted the process or printed a traceback. The same text
# comes from a TOML file (read by Python's tomllib, where 1e400 is inf) and from a dict.
NUMBERS_THAT_ARE_NOT = [
    ("nan", float("nan"), "flows[0].rate: must be a finite number, got nan"),
    ("inf", float("inf"), "flows[0].rate: must be a finite number, got inf"),
    ("-inf", float("-inf"), "flows[0].rate: must be a finite number, got -inf"),
    ("1e400", float("1e400"), "flows[0].rate: must be a finite number, got inf"),
    ('"1e400Mbps"', "1e400Mbps", 'flows[0].rate: must be a finite number, got "1e400Mbps"'),
]


@pytest.mark.parametrize(("toml_value", "value", "message"), NUMBERS_THAT_ARE_NOT)
def test_a_number_that_is_not_finite_names_its_field(tmp_path, toml_value, value, message):
    path = write_scenario(tmp_path / "bad.toml", dumbbell({"type": "cbr", "rate": "1Mbps"}))
    path.write_text(path.read_text().replace('rate = "1Mbps"', f"rate = {toml_value}"))
    result = aqmlab_cli("run", path)
    assert (result.returncode, result.stderr) == (2, f"error: {message}\n")
    with pytest.raises(aqmlab.ScenarioError) as info:
        aqmlab.run(dumbbell({"type": "cbr", "rate": value}))
    assert str(info.value) == message


@pytest.mark.parametrize(
    ("simulation", "message"),
    [
        ({"duration": 9223372036854775807}, "simulation.duration: must be at most 1e9 s, got 9223372036854775807"),
        (
            {"duration": "1000000000s", "throughput_bin": "1us"},
            "simulation.throughput_bin: 0.000001 s over a 1000000000 s run makes 1000000000000000 rows of throughput "
            "(1000000000000000 bins x 1 flows); at most 10000000 are kept, use a wider bin",
        ),
    ],
)
def test_a_run_too_large_to_hold_is_refused_before_it_allocates(simulation, message):
    data = dumbbell({"type": "cbr", "rate": "1Mbps"})
    data["simulation"] = {**simulation, "seed": 1}
    with pytest.raises(aqmlab.ScenarioError) as info:
        aqmlab.run(data)
    assert str(info.value) == message


def test_a_dict_value_json_cannot_hold_names_its_field():
    for value, message in [
        ({1, 2}, "flows[0].rate: must be a number, string, boolean, list or table, got set"),
        (object(), "flows[0].rate: must be a number, string, boolean, list or table, got object"),
    ]:
        with pytest.raises(aqmlab.ScenarioError) as info:
            aqmlab.Scenario.from_dict(dumbbell({"type": "cbr", "rate": value})).validate()
        assert str(info.value) == message
    with pytest.raises(aqmlab.ScenarioError, match=r"^flows\[0\]\.1: table keys must be strings, got 1$"):
        aqmlab.run(dumbbell({"type": "cbr", "rate": "1Mbps", 1: 2}))


# Issue 22, item 7: inputs that still crashed.
def nested(depth: int) -> object:
    value: object = 1
    for _ in range(depth):
        value = [value]
    return value


def test_a_value_nested_too_deep_is_a_field_error_from_a_dict():
    # 40: past the limit; 1000: past Python's recursion limit, where copying the dict raised RecursionError.
    for depth in (40, 1000):
        with pytest.raises(aqmlab.ScenarioError) as info:
            aqmlab.run(dumbbell({"type": "cbr", "rate": "1Mbps", "extra": nested(depth)}))
        # flows, flows[0], extra and 29 lists inside it: 32 levels.
        assert str(info.value) == "flows[0].extra" + "[0]" * 29 + ": nested more than 32 levels deep"
    # Within the limit the value reaches the core, which names the unknown field.
    with pytest.raises(aqmlab.ScenarioError, match=r"^flows\[0\]\.extra: unknown field `extra`"):
        aqmlab.run(dumbbell({"type": "cbr", "rate": "1Mbps", "extra": nested(28)}))


@pytest.mark.parametrize(
    ("depth", "message"),
    [
        (40, "deep" + "[0]" * 31 + ": nested more than 32 levels deep"),
        # tomllib itself recurses too deep to parse this one: the file is named.
        (600, "{path}: a value is nested more than 32 levels deep"),
    ],
)
def test_a_value_nested_too_deep_in_a_file_is_one_line(tmp_path, depth, message):
    path = write_scenario(tmp_path / "deep.toml", dumbbell({"type": "cbr", "rate": "1Mbps"}))
    path.write_text(f"deep = {'[' * depth}1{']' * depth}\n" + path.read_text())
    done = aqmlab_cli("run", path)
    assert (done.returncode, done.stderr) == (2, f"error: {message.format(path=path)}\n")


def test_a_scenario_path_that_never_ends_or_is_not_text_is_refused_at_once(tmp_path):
    started = time.monotonic()
    done = aqmlab_cli("run", "/dev/zero")
    assert (done.returncode, done.stderr) == (2, "error: /dev/zero: larger than 16 MiB (aqmlab reads at most that)\n")
    assert time.monotonic() - started < 20, "read until memory ran out before"
    binary = tmp_path / "binary.toml"
    binary.write_bytes(b"name = 1\n\xff\xfe")
    done = aqmlab_cli("sweep", binary, "--out", tmp_path / "out")
    assert (done.returncode, done.stderr) == (2, f"error: {binary}: not a text file (byte 9 is not UTF-8)\n")


@pytest.mark.parametrize(
    ("tcp", "expected"),
    [
        ({"profile": "linux", "cc": "cubc"}, "flows[0].tcp.cc: unknown variant `cubc`, did you mean `cubic`?"),
        ({"profile": "linx"}, "flows[0].tcp.profile: unknown variant `linx`, did you mean `linux`?"),
        ({"profile": "linux", "ccc": "cubic"}, "flows[0].tcp.ccc: unknown field `ccc`, did you mean `cc`?"),
        (
            {"profile": "linux", "variant": "reno"},
            "flows[0].tcp.variant: the linux profile runs Linux's SACK recovery: "
            'write variant = "sack" or leave it out, got "reno"',
        ),
        (
            {"profile": "linux", "congestion_avoidance": "per_ack"},
            "flows[0].tcp.congestion_avoidance: not used by the linux profile "
            "(growth is the `cc` module's): leave it out",
        ),
    ],
)
def test_linux_tcp_options(tmp_path, tcp, expected):
    assert error_of(tmp_path, dumbbell({"type": "tcp", "tcp": tcp})) == expected


def test_linux_tcp_runs():
    flows = [{"type": "tcp", "tcp": {"profile": "linux", "cc": cc}} for cc in ("cubic", "reno")]
    results = aqmlab.run(aqmlab.Scenario.from_dict(dumbbell(*flows)))
    assert (results.flows["goodput_bps"] > 0).all()
