"""Queue disciplines written in Python (`type = "python"`, aqmlab.python_qdisc; issue 35): the same
engine as the built-in ones (a Python drop-tail and RED give their runs to the last packet), found
from a scenario file, a class, an instance or the command line, and every mistake reported."""

import json
import re
import sys
import textwrap
from pathlib import Path

import aqmlab
import pandas as pd
import pytest
from aqmlab.mechanisms import PRESETS
from conftest import aqmlab_cli, dumbbell, write_scenario

EXAMPLES = Path(__file__).resolve().parents[1] / "docs" / "examples"
sys.path.insert(0, str(EXAMPLES))
import own_qdisc  # noqa: E402


def _per_flow(results):
    return results.flows[["name", "goodput_bps", "dropped_packets", "delivered_packets"]], results.drops[
        ["flow", "link", "reason", "count"]
    ]


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_the_python_red_and_droptail_are_the_built_in_ones_packet_for_packet(seed):
    own = aqmlab.load(EXAMPLES / "own-red.toml").with_seed(seed)
    builtin = aqmlab.load(EXAMPLES / "own-red-builtin.toml").with_seed(seed)
    a, b = aqmlab.run(own), aqmlab.run(builtin)
    for mine, theirs in zip(_per_flow(a), _per_flow(b), strict=True):
        assert mine.equals(theirs)
    # Its average, sampled with the queue, is RED's to the last bit.
    assert a.queue["average"].equals(b.queue["average"])
    assert a.links.loc[0, "qdisc"] == "python" and b.links.loc[0, "qdisc"] == "red"
    fifo = builtin.with_qdisc("droptail", limit=64)
    a, b = aqmlab.run(fifo.with_qdisc(own_qdisc.DropTail(limit=64))), aqmlab.run(fifo)
    for mine, theirs in zip(_per_flow(a), _per_flow(b), strict=True):
        assert mine.equals(theirs)
    assert a.drops["count"].sum() > 100, "the buffer overflows: the comparison is not of empty queues"


def test_a_class_an_instance_and_a_name_are_the_same_mechanism_and_runs_repeat():
    scenario = aqmlab.load("csfq-fig3b").with_duration("6s", warmup="2s")
    by_instance = aqmlab.run(scenario.with_qdisc(own_qdisc.ExcessDrop(slope=0.05)))
    by_class = aqmlab.run(scenario.with_qdisc(own_qdisc.ExcessDrop, slope=0.05))
    by_name = aqmlab.run(scenario.with_qdisc(f"{EXAMPLES / 'own_qdisc.py'}:ExcessDrop", slope=0.05))
    again = aqmlab.run(scenario.with_qdisc(own_qdisc.ExcessDrop(slope=0.05)))
    assert by_instance.flows.equals(by_class.flows) and by_instance.flows.equals(again.flows)
    assert by_instance.flows["goodput_bps"].equals(by_name.flows["goodput_bps"])
    # Its own drop reason is in the drops table, and its counter in the links table.
    reasons = by_instance.drops.groupby("reason")["count"].sum()
    assert reasons["excess"] > 0
    bottleneck = by_instance.links.set_index("name").loc["L->R"]
    assert bottleneck["qdisc.excess_drops"] == reasons["excess"]
    # Another seed draws other drops from its stream.
    other = aqmlab.run(scenario.with_seed(2).with_qdisc(own_qdisc.ExcessDrop(slope=0.05)))
    assert not other.flows["goodput_bps"].equals(by_instance.flows["goodput_bps"])


def test_compare_puts_a_python_mechanism_beside_the_built_in_ones(tmp_path):
    spec = f"{EXAMPLES / 'own_qdisc.py'}:ExcessDrop"
    done = aqmlab_cli("compare", "scenarios/csfq-fig3b.toml", "-m", f"droptail,{spec}", "--json", "--out", tmp_path)
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr
    rows = {row["mechanism"]: row for row in json.loads(done.stdout)["mechanisms"]}
    assert list(rows) == ["droptail", spec] and rows[spec]["qdisc"] == "python"
    # Dropping in proportion to the excess over 20 packets holds the queue below drop-tail's, whose
    # 64 KB stands full (51 ms at 10 Mb/s): measured 30.4 ms against 49.6 ms.
    assert rows[spec]["backlog_delay_median_ms"] < 0.7 * rows["droptail"]["backlog_delay_median_ms"]
    assert rows["droptail"]["backlog_delay_median_ms"] > 45
    assert (tmp_path / "compare.png").stat().st_size > 10_000


def _user_module(tmp_path, body: str) -> Path:
    path = tmp_path / "mine.py"
    path.write_text("import collections\nimport aqmlab\n\n\n" + textwrap.dedent(body))
    return path


BROKEN = {
    "raises": (
        """
        class Broken(aqmlab.Qdisc):
            def __init__(self):
                self.fifo = collections.deque()
            def enqueue(self, packet, link):
                if link.now > 0.5:
                    return 1 / 0
                self.fifo.append(packet)
            def dequeue(self, link):
                return self.fifo.popleft() if self.fifo else None
        """,
        r"Broken\.enqueue raised ZeroDivisionError: division by zero \(the arrival: flow 0 \(flow0\), data, 1000 B\)",
    ),
    "twice": (
        """
        class Twice(aqmlab.Qdisc):
            def __init__(self):
                self.sent = None
            def enqueue(self, packet, link):
                self.sent = self.sent or packet
            def dequeue(self, link):
                return self.sent
        """,
        r"Twice\.dequeue returned packet \d+, which it does not hold",
    ),
    "silent": (
        """
        class Silent(aqmlab.Qdisc):
            def enqueue(self, packet, link):
                pass
            def dequeue(self, link):
                return None
        """,
        r"Silent\.dequeue returned None while it holds 1 packet\(s\)",
    ),
    "not_a_packet": (
        """
        class Number(aqmlab.Qdisc):
            def enqueue(self, packet, link):
                self.id = packet.id
            def dequeue(self, link):
                return self.id
        """,
        r"Number\.dequeue returned a int; it returns a packet it holds, or None",
    ),
    "reason": (
        """
        class Reason(aqmlab.Qdisc):
            def enqueue(self, packet, link):
                link.drop(packet, 3)
            def dequeue(self, link):
                return None
        """,
        r"Reason\.enqueue: drop: the reason must be a string, got int",
    ),
}


def test_a_discipline_sees_each_packets_flow_by_id_and_by_name(tmp_path):
    """`packet.flow_name` is the flows table's name (`count` expanded: `web[1]`), on every link
    the class serves: here it drops the flow it is told to by name."""
    _user_module(
        tmp_path,
        """
        class DropFlow(aqmlab.Qdisc):
            def __init__(self, victim):
                self.victim = victim
                self.victim_ids = set()
                self.fifo = collections.deque()
            def enqueue(self, packet, link):
                if packet.flow_name == self.victim:
                    self.victim_ids.add(packet.flow)
                    link.drop(packet, "victim")
                else:
                    self.fifo.append(packet)
            def dequeue(self, link):
                return self.fifo.popleft() if self.fifo else None
            def counters(self):
                return {"victim_id": sum(self.victim_ids), "victim_ids": len(self.victim_ids)}
        """,
    )
    flows = [
        {"name": "video", "type": "cbr", "rate": "1Mbps"},
        {"name": "web", "type": "cbr", "rate": "1Mbps", "count": 2},
    ]
    scenario = dumbbell(
        *flows, qdisc={"type": "python", "class": f"{tmp_path / 'mine.py'}:DropFlow", "victim": "web[1]"}
    )
    results = aqmlab.run(scenario)
    assert results.flows["name"].tolist() == ["video", "web[0]", "web[1]"]
    dropped = results.drops[results.drops["count"] > 0].groupby(["flow", "reason"])["count"].sum()
    assert dropped.index.tolist() == [(2, "victim")] and dropped.iloc[0] > 100
    assert results.flows.set_index("name").loc["web[1]", "delivered_packets"] == 0
    # The name went with the id the flows table gives it.
    bottleneck = results.links.set_index("name").loc["L->R"]
    assert (bottleneck["qdisc.victim_id"], bottleneck["qdisc.victim_ids"]) == (2, 1)


@pytest.mark.parametrize("case", sorted(BROKEN))
def test_a_discipline_that_fails_or_breaks_the_contract_stops_the_run_and_says_how(tmp_path, case):
    body, message = BROKEN[case]
    cls = body.split("class ")[1].split("(")[0]
    module = _user_module(tmp_path, body)
    scenario = write_scenario(
        tmp_path / "s.toml",
        dumbbell({"type": "cbr", "rate": "2Mbps"}, qdisc={"type": "python", "class": f"mine.py:{cls}"}),
    )
    done = aqmlab_cli("run", scenario, "--out", tmp_path / "out")
    assert done.returncode == 2, done.stderr
    assert done.stderr.startswith("error: the qdisc of link L->R at "), done.stderr
    assert re.search(message, done.stderr), done.stderr
    # Nothing half-written is left.
    assert not (tmp_path / "out").exists()
    if case == "raises":
        # The user's traceback, their frames only.
        lines = done.stderr.splitlines()
        assert lines[1] == "Raised in your code (most recent call last):"
        assert f'File "{module}", line 11, in enqueue' in done.stderr
        assert "aqmlab" not in "".join(lines[1:]).replace(str(tmp_path), ""), done.stderr
        assert lines[-1] == "ZeroDivisionError: division by zero"
    else:
        assert "Traceback" not in done.stderr
    # The same from Python: MechanismError, with the user's exception as its cause.
    with pytest.raises(aqmlab.MechanismError, match=message) as raised:
        aqmlab.run(aqmlab.load(scenario))
    assert isinstance(raised.value.__cause__, ZeroDivisionError) == (case == "raises")


@pytest.mark.parametrize(
    ("qdisc", "message"),
    [
        ({"class": "nowhere.py:X"}, r"topology\.bottleneck\.qdisc\.class: no file .*nowhere\.py"),
        (
            {"class": "mine.py:ExcesDrop"},
            r"qdisc\.class: no class 'ExcesDrop' in .*mine\.py, did you mean 'ExcessDrop'\?",
        ),
        ({"class": "mine.py:Half"}, r"qdisc\.class: Half has no dequeue method"),
        (
            {"class": "mine.py:ExcessDrop", "slop": 1},
            r"qdisc\.slop: unknown field `slop` of ExcessDrop, did you mean `slope`\?",
        ),
        ({"class": "mine.py:ExcessDrop", "slope": -1}, r"topology\.bottleneck\.qdisc\.slope: must be >= 0, got -1$"),
        ({"class": "no_such_module:X"}, r"qdisc\.class: no module 'no_such_module'"),
        ({"class": "ExcessDrop"}, r'qdisc\.class: write "file\.py:Class" or "package\.module:Class"'),
    ],
)
def test_a_class_that_cannot_be_found_or_made_is_named_before_the_run(tmp_path, qdisc, message):
    _user_module(
        tmp_path,
        """
        class ExcessDrop(aqmlab.Qdisc):
            def __init__(self, slope=0.01):
                if slope < 0:
                    raise ValueError(f"slope: must be >= 0, got {slope}")
            def enqueue(self, packet, link):
                pass
            def dequeue(self, link):
                return None

        class Half(aqmlab.Qdisc):
            def enqueue(self, packet, link):
                pass
        """,
    )
    scenario = write_scenario(
        tmp_path / "s.toml", dumbbell({"type": "cbr", "rate": "1Mbps"}, qdisc={"type": "python", **qdisc})
    )
    done = aqmlab_cli("run", scenario)
    assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr
    assert done.stderr.startswith("error: ") and re.search(message, done.stderr.strip()), done.stderr


def test_a_users_mechanism_joins_a_paper_experiment_as_a_row_of_its_own(tmp_path):
    spec = f"{EXAMPLES / 'own_qdisc.py'}:ExcessDrop"
    done = aqmlab_cli("reproduce", "demo", "--quick", "-m", spec, "--json", "--out", tmp_path / "demo")
    # The demo's CSFQ row fails as it does without it (exit 1); the user's mechanism is graded by no row.
    assert done.returncode == 1, done.stderr
    result = json.loads(done.stdout)
    assert [row["key"] for row in result["rows"] if not row["pass"] and not row["key"].endswith(".alt_rfc")] == [
        "udp.csfq"
    ]
    table = (tmp_path / "demo" / "mechanisms.csv").read_text().splitlines()
    # The header, the demo's presets (aqmlab.mechanisms.PRESETS), then the user's.
    assert table[-1].startswith(f"{spec},") and len(table) == 2 + len(PRESETS)
    assert json.loads((tmp_path / "demo" / "manifest.json").read_text())["mechanisms"] == [spec]
    refused = aqmlab_cli("reproduce", "redpd-fig11", "--quick", "-m", spec, "--out", tmp_path / "fig11")
    assert refused.returncode == 2
    assert refused.stderr.startswith("error: --mechanisms: redpd-fig11 compares no mechanisms; a mechanism can join: ")
    assert "demo" in refused.stderr and "today-tcp" in refused.stderr and not (tmp_path / "fig11").exists()


@pytest.mark.parametrize("experiment", ["fred-cbr", "redpd-fig15"])
def test_a_users_mechanism_joins_the_unresponsive_flow_experiments(tmp_path, experiment):
    """FRED's CBR and RED-PD's Fig. 15 run the user's mechanism on the paper's network: its own
    epochs / column, graded by no row. ExcessDrop only trims a long queue, so, like RED, it leaves
    the unresponsive flows most of the link (the CBR above each epoch's fair share; the 5 Mb/s
    UDP above 3 Mb/s)."""
    spec = f"{EXAMPLES / 'own_qdisc.py'}:ExcessDrop"
    done = aqmlab_cli("reproduce", experiment, "--quick", "-m", spec, "--json", "--out", tmp_path / "out")
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr
    rows = json.loads(done.stdout)["rows"]
    assert rows and all(row["pass"] for row in rows) and not any("ExcessDrop" in row["metric"] for row in rows)
    if experiment == "fred-cbr":
        epochs = pd.read_csv(tmp_path / "out" / "epochs.csv")
        own = epochs[epochs["mechanism"] == spec]
        assert len(own) == 4 and (own["cbr"] > own["fair_share"]).all(), own
    else:
        table = pd.read_csv(tmp_path / "out" / "fig15.csv")
        assert table.loc[table["kind"] == "UDP 5", spec].item() > 3.0, table


@pytest.fixture(params=["pool", "dask"])
def sweep_workers(request) -> list[str]:
    """The sweep's workers: the local process pool, or a Dask worker process of its own."""
    if request.param == "pool":
        return ["--workers", "2"]
    address, _ = request.getfixturevalue("dask_cluster")
    return ["--scheduler", address]


def test_a_sweep_runs_a_python_mechanism_over_its_parameters_on_the_workers(tmp_path, sweep_workers):
    base = aqmlab.load(EXAMPLES / "own-red.toml").with_duration("4s", warmup="1s").to_dict()
    write_scenario(tmp_path / "base.toml", base)
    (tmp_path / "sweep.toml").write_text(
        'scenario = "base.toml"\n[grid]\n"topology.bottleneck.qdisc.max_p" = [0.02, 0.5]\n"simulation.seed" = [1, 2]\n'
    )
    done = aqmlab_cli("sweep", tmp_path / "sweep.toml", "--out", tmp_path / "out", *sweep_workers)
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr
    jobs = pd.read_csv(tmp_path / "out" / "jobs.csv")
    assert len(jobs) == 4
    # Each job ran in a worker process that imported own_qdisc.py by its path: a steeper RED
    # drops more early, and each job is the run of its scenario here, to the packet.
    flows = pd.read_csv(tmp_path / "out" / "flows.csv")
    early = flows.groupby("job")["dropped_packets"].sum()
    by_max_p = jobs.assign(dropped=jobs["job"].map(early)).groupby("topology.bottleneck.qdisc.max_p")["dropped"]
    assert by_max_p.mean()[0.5] > by_max_p.mean()[0.02]
    job = jobs.iloc[-1]
    here = aqmlab.run(
        aqmlab.Scenario.from_dict(base)
        .with_qdisc({**base["topology"]["bottleneck"]["qdisc"], "max_p": float(job["topology.bottleneck.qdisc.max_p"])})
        .with_seed(int(job["simulation.seed"]))
    )
    assert flows[flows["job"] == job["job"]]["dropped_packets"].tolist() == here.flows["dropped_packets"].tolist()


def test_threads_that_load_one_file_at_once_all_get_the_whole_module(tmp_path):
    """A Dask worker runs a sweep's jobs on several threads: each must find the class, though the
    file takes a while to execute (it failed as `no class 'Red' ... (its classes: none)` when a
    second thread replaced the module the first was still executing)."""
    import threading
    import time

    from aqmlab import python_qdisc

    mine = tmp_path / "slow.py"
    mine.write_text(
        "import time\nimport aqmlab\ntime.sleep(0.3)\n\n\nclass Slow(aqmlab.Qdisc):\n"
        "    def enqueue(self, packet, link):\n        pass\n\n    def dequeue(self, link):\n        return None\n"
    )
    found, errors = [], []

    def load():
        try:
            found.append(python_qdisc.resolve(f"{mine}:Slow"))
        except aqmlab.ScenarioError as e:
            errors.append(str(e))

    threads = [threading.Thread(target=load) for _ in range(4)]
    started = time.monotonic()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == [] and len(found) == 4 and len(set(found)) == 1
    # Executed once: the threads waited for the one load, not four.
    assert time.monotonic() - started < 1.0
