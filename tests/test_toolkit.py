"""Checked rows (python/aqmlab/rows.py), the experiments toolkit (python/aqmlab/experiments/_toolkit.py)
and aqmlab.metrics: ordering rows, run settings, runs over seeds, row keys, where experiments live."""

import json

import aqmlab
import pytest
from aqmlab.experiments import (
    Experiment,
    Judgement,
    Ns2ReferenceError,
    Reproduction,
    RunSettings,
    Verdict,
    registry,
    run_seeds,
)
from aqmlab.experiments._verdicts import Ns2Value, verdict
from aqmlab.metrics import bred_cbr_bound, jain_index
from aqmlab.rows import Row


def ordered(groups, **options) -> Row:
    return Row.ordered("m", "p", groups, key="k", **options)


def test_ordered_checks_every_value_of_a_group_against_the_next():
    assert ordered([1.0, [2.0, 3.0], 4.0]).passed
    assert not ordered([1.0, [2.0, 5.0], 4.0]).passed
    assert ordered([[2.0, 1.0], 3.0]).ours == "2.00, 1.00 < 3.00"  # ties and order within a group are free
    row = ordered([{"DRR": 0.9}, {"CSFQ": 0.85, "FRED": 0.8}], relation=">", digits=1)
    assert (row.ours, row.tolerance, row.passed) == ("DRR 0.9 > CSFQ 0.8, FRED 0.8", "order exact", True)


def test_ordered_relations_per_step_with_slack():
    assert ordered([3.0, 3.0, 2.0], relation=[">=", ">"]).passed
    assert not ordered([3.0, 3.0, 2.0], relation=">").passed
    assert ordered([0.95, 0.96], relation=">=", slack=0.02).passed
    assert not ordered([0.95, 0.98], relation=">=", slack=0.02).passed
    # "<<" and ">>": strictly ordered and at least a factor of 2 apart.
    assert ordered([1.0, 2.0], relation="<<").passed and not ordered([1.0, 1.9], relation="<<").passed
    assert ordered([4.0, 2.0], relation=">>").passed and not ordered([0.0, 0.0], relation=">>").passed


def test_ordered_text():
    assert ordered([0.5, 0.25], relation=">", digits=3, joiner="vs").ours == "0.500 vs 0.250"
    assert ordered([{"B": 2.0}, {"A": 1.0}], sort=True, digits=0).ours == "A 1 < B 2"  # lowest first
    assert ordered([1.0, 2.0], ours="text", tolerance="rule").ours == "text"
    assert ordered([1.0, 2.0], tolerance="rule").tolerance == "rule"


def test_rows_carry_their_key_into_json():
    row = Row.within("metric", 1.0, 1.1, 0.2, key="a.b")
    assert list(row.to_dict()) == ["key", "metric", "paper", "ours", "tolerance", "pass"]
    # The core's validation rows have no key and name their reference value "model".
    assert Row("check", 2.0, 2.1, "±15%", True).to_dict(reference="model") == {
        "metric": "check",
        "model": 2.0,
        "ours": 2.1,
        "tolerance": "±15%",
        "pass": True,
    }


def test_each_experiment_lives_in_its_papers_package():
    # `csfq-fig3a` is experiments/csfq/fig3a.py, `redpd-sec6.3` redpd/sec6_3.py; the demo is CSFQ
    # Fig. 3(b)'s comparison, in csfq/.
    def expected(id: str) -> str:
        paper, _, rest = id.partition("-")
        return "csfq.demo" if id == "demo" else f"{paper}.{rest.replace('-', '_').replace('.', '_')}"

    modules = {id: e.function.__module__.removeprefix("aqmlab.experiments.") for id, e in registry().items()}
    assert {id: m for id, m in modules.items() if m != expected(id)} == {}
    assert {m.partition(".")[0] for m in modules.values()} == {"bred", "csfq", "fred", "l4s", "redpd", "sred", "today"}


def test_an_experiment_needs_one_key_per_row():
    def rows(*keys: str) -> Reproduction:
        return Reproduction(rows=[Row.at_least("m", "p", 1.0, 0.0, key=key) for key in keys])

    assert Experiment("ok", "", lambda quick: rows("a", "b")).run().id == "ok"
    with pytest.raises(ValueError, match=r"experiment 'twice': every row needs its own key .*\['a'\]"):
        Experiment("twice", "", lambda quick: rows("a", "a")).run()
    with pytest.raises(ValueError, match="experiment 'none': every row needs its own key"):
        Experiment("none", "", lambda quick: rows("a", "")).run()


def test_run_settings_and_run_seeds(cbr_scenario):
    settings = RunSettings(seeds=range(1, 4), duration=10.0, sweep=[1, 2])
    assert (settings.seeds, settings.sweep, settings.warmup) == ((1, 2, 3), (1, 2), None)
    runs = run_seeds(cbr_scenario, [2, 1])
    assert [r.scenario.get("simulation.seed") for r in runs] == [2, 1]
    assert runs[1].summary(wall_time=False) == aqmlab.run(cbr_scenario).summary(wall_time=False)
    assert runs[0].summary(wall_time=False) != runs[1].summary(wall_time=False)


def test_metrics():
    assert jain_index([1, 1, 1, 1]) == 1.0 and jain_index([3, 0, 0]) == pytest.approx(1 / 3)
    # BRED eq. 14: α / (α·n_c + 0.5·β·n_t); §5.1 prints 0.2766 Mb/s for 3 CBR + 7 TCP on 1.5 Mb/s.
    assert bred_cbr_bound(1.3, 0.9, 3, 7) * 1.5 == pytest.approx(0.2766, abs=5e-5)


def test_informative_rows_are_shown_but_not_graded():
    graded = Row.within("RED-32 utilisation (%)", 99.7, 99.6, 3.0, key="t5.red32.utilisation")
    other = Row.within("RED-32 utilisation (%)", 99.7, 96.3, 3.0, key="t5.red32.utilisation").informative("4/8")
    assert (other.key, other.metric, other.passed, other.graded) == (
        "t5.red32.utilisation.alt",
        "RED-32 utilisation (%) [4/8]",
        False,
        False,
    )
    reproduction = Reproduction(rows=[graded, other])
    assert reproduction.passed and reproduction.failures() == []
    assert reproduction.to_dict()["rows"][1]["graded"] is False and "graded" not in reproduction.to_dict()["rows"][0]


def test_failing_rows_carry_their_reason():
    rows = [Row.at_least("a", 1, 0.5, 1.0, key="a"), Row.at_least("b", 1, 0.5, 1.0, key="b")]
    asked = []

    def explain(row: Row) -> str | None:
        asked.append(row.key)
        return "measured 0.5 because of x" if row.key == "a" else None

    reproduction = Reproduction(rows=rows + [Row.at_least("c", 1, 2.0, 1.0, key="c")], explain=explain)
    assert asked == ["a", "b"], "explain is asked once, of the failing rows only"
    assert not reproduction.passed
    assert reproduction.failures() == ["FAILS a: measured 0.5 because of x", "FAILS b: no reason measured"]
    assert [r.get("reason") for r in reproduction.to_dict()["rows"]] == ["measured 0.5 because of x", "", None]


# ---------------------------------------------------------------- verdicts (issue 27)


def test_a_failing_row_that_ns2_fails_alike_is_the_papers_own_simulator_not_ours():
    row = Row.within("x", 1.0, 0.5, 0.1, key="x")
    assert verdict(row, Ns2Value(0.55, spread=0.05), None)[0] == Verdict.NS2
    # ns-2 misses the paper as well, but 0.2 away from ours with a seed range of ±0.05: ours differs.
    assert verdict(row, Ns2Value(0.7, spread=0.05), None)[0] == Verdict.DEFECT
    # One ns-2 run: agreement within 10 % of its value.
    assert verdict(row, Ns2Value(0.54), None)[0] == Verdict.NS2
    assert verdict(row, Ns2Value(0.6), None)[0] == Verdict.DEFECT
    kind, why = verdict(row, Ns2Value(0.95, spread=0.01), None)
    assert kind == Verdict.DEFECT and "ns-2 meets the paper" in why


def test_an_ordering_is_graded_by_whether_ns2_meets_it():
    row = Row.ordered("two faster", "two < one", [{"two": 42.0}, {"one": 39.0}], key="order")
    assert not row.passed
    assert verdict(row, Ns2Value([28.0, 30.4]), None)[0] == Verdict.DEFECT
    assert verdict(row, Ns2Value([31.0, 30.4]), None)[0] == Verdict.NS2


def test_without_ns2_a_failing_row_takes_the_experiments_judgement_or_stays_open():
    row = Row.at_most("x", 1.0, 2.0, 1.0, key="x")
    arithmetic = Judgement(Verdict.ARITHMETIC, "the paper's distributions offer 50-58 Mb/s")
    assert verdict(row, None, arithmetic) == (Verdict.ARITHMETIC, arithmetic.why)
    assert verdict(row, None, None)[0] == Verdict.OPEN
    assert verdict(Row.at_most("y", 1.0, 0.5, 1.0, key="y"), None, None)[0] == Verdict.PAPER
    with pytest.raises(ValueError, match="arithmetic or defect"):
        Judgement(Verdict.NS2, "not the experiment's to say")


TOY_REFERENCE = {
    "experiment": "toy",
    "ns2": "ns-2.35",
    "script": "toy.tcl",
    "command": "make ns2-reproductions",
    "date": "2026-11-25",
    "seeds": [1, 2],
    "modes": ["full"],
    "rows": {"fails": {"value": 0.52, "spread": 0.03}},
    "not_in_ns2": {"csfq": "CSFQ is not in ns-2.35"},
}


@pytest.fixture
def reference_dir(tmp_path, monkeypatch):
    """An empty ns2_reference directory in place of the recorded one; write `<id>.json` into it."""
    from aqmlab.experiments import _verdicts

    monkeypatch.setattr(_verdicts, "REFERENCE_DIR", tmp_path)
    _verdicts.ns2_reference.cache_clear()
    yield tmp_path
    _verdicts.ns2_reference.cache_clear()


def toy_reproduction(quick: bool = False) -> Reproduction:
    rows = [
        Row.within("a", 1.0, 0.5, 0.1, key="fails"),
        Row.within("b", 1.0, 1.0, 0.1, key="passes"),
        Row.within("c", 1.0, 0.2, 0.1, key="csfq"),
    ]
    return Reproduction(rows=rows, explain=lambda row: "measured", id="toy", quick=quick)


def test_recorded_ns2_values_reach_the_rows_json_and_the_failure_lines(reference_dir):
    (reference_dir / "toy.json").write_text(json.dumps(TOY_REFERENCE))
    reproduction = toy_reproduction()
    reproduction.judge()
    data = reproduction.to_dict()
    assert data["verdicts"] == {"paper": 1, "ns2": 1, "arithmetic": 0, "defect": 0, "open": 1}
    assert data["rows"][0]["ns2"] == 0.52 and data["rows"][0]["verdict"] == "ns2"
    assert "ns2" not in data["rows"][1] and data["rows"][1]["verdict"] == "paper"
    # A row of a mechanism ns-2 lacks says so in the column, and has no ns-2 verdict.
    assert data["rows"][2]["ns2_absent"] == "CSFQ is not in ns-2.35" and data["rows"][2]["verdict"] == "open"
    assert "ns-2.35, toy.tcl, seeds 1, 2" in data["ns2_source"]
    assert reproduction.failures()[0] == (
        "FAILS fails: measured [fails the paper as ns-2 does (the paper's own simulator gives the same): "
        "ns-2 misses the paper too (0.52 ±0.03)]"
    )
    from aqmlab import terminal

    table = "\n".join(
        terminal.rows_table(reproduction.rows, "t", ns2=reproduction.ns2, not_in_ns2=reproduction.not_in_ns2)
    )
    assert "ns-2" in table and "0.52 ±0.03" in table and "CSFQ is not in ns-2.35" in table


def test_ns2_values_of_the_full_run_are_not_shown_beside_a_different_quick_run(reference_dir):
    (reference_dir / "toy.json").write_text(json.dumps(TOY_REFERENCE))
    reproduction = toy_reproduction(quick=True)
    reproduction.judge()
    assert reproduction.ns2 == {} and reproduction.not_in_ns2 == {}
    assert reproduction.ns2_source.startswith("not shown: ns-2's values measure the full run")
    assert reproduction.verdicts["fails"][0] == Verdict.OPEN
    # Where the quick run is the full run, the file says so and the column is shown.
    (reference_dir / "toy.json").write_text(json.dumps(TOY_REFERENCE | {"modes": ["full", "quick"]}))
    from aqmlab.experiments import _verdicts

    _verdicts.ns2_reference.cache_clear()
    reproduction = toy_reproduction(quick=True)
    reproduction.judge()
    assert reproduction.verdicts["fails"][0] == Verdict.NS2


def test_a_reference_only_file_is_shown_but_gives_no_verdict(reference_dir):
    """Where ns-2 was not the paper's simulator (FRED's), its values are a column beside ours and
    the failing row keeps the experiment's judgement (here none: open), not `ns2`."""
    why = "the paper did not run ns-2"
    (reference_dir / "toy.json").write_text(json.dumps(TOY_REFERENCE | {"reference_only": why}))
    reproduction = toy_reproduction()
    reproduction.judge()
    assert reproduction.ns2["fails"].value == 0.52
    assert reproduction.verdicts["fails"][0] == Verdict.OPEN
    assert reproduction.ns2_source.endswith(f"a reference only, no verdict from it: {why}")


def test_a_stale_ns2_reference_is_refused_naming_its_rows(reference_dir):
    stale = TOY_REFERENCE | {"rows": {"fails": {"value": 0.52, "spread": 0.03}, "renamed": {"value": 1.0}}}
    (reference_dir / "toy.json").write_text(json.dumps(stale))
    with pytest.raises(
        Ns2ReferenceError,
        match=r"toy.json: stale: rows renamed are no longer the experiment's; "
        r"regenerate it: make ns2-reproductions",
    ):
        toy_reproduction().judge()


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("{not json", "not a recorded ns-2 reference (Expecting property name"),
        (json.dumps({k: v for k, v in TOY_REFERENCE.items() if k != "modes"}), "missing field 'modes'"),
        (json.dumps(TOY_REFERENCE | {"experiment": "other"}), "it records 'other', not 'toy'"),
        (json.dumps(TOY_REFERENCE | {"modes": ["quick"]}), "the full run and optionally the quick one"),
        (json.dumps(TOY_REFERENCE | {"rows": {"fails": {"value": None}}}), "row 'fails': value None is not"),
        (json.dumps(TOY_REFERENCE | {"rows": {"fails": {"value": 1.0, "spread": "x"}}}), "spread 'x' is not"),
        (json.dumps(TOY_REFERENCE | {"not_in_ns2": {"fails": "no"}}), "both recorded and not in ns-2"),
        (json.dumps(TOY_REFERENCE | {"not_in_ns2": {"csfq": ""}}), "every row needs its reason"),
        (json.dumps(TOY_REFERENCE | {"reference_only": True}), "reference_only True is not the reason"),
    ],
)
def test_a_malformed_ns2_reference_is_an_error_naming_the_file(reference_dir, text, says):
    (reference_dir / "toy.json").write_text(text)
    with pytest.raises(Ns2ReferenceError) as raised:
        toy_reproduction().judge()
    assert str(raised.value).startswith(f"{reference_dir / 'toy.json'}: ")
    assert says in str(raised.value)


def test_a_category_row_is_graded_against_ns2s_category():
    row = Row("allocation", "fair", "proportional (RMS ...)", "nearer", False, key="a", check=lambda v: v == "fair")
    assert verdict(row, Ns2Value("proportional"), None)[0] == Verdict.NS2
    assert verdict(row, Ns2Value("fair"), None)[0] == Verdict.DEFECT


def test_a_reproduction_leaves_no_figure_open_and_still_saves_it(tmp_path):
    # Issue 26 item 10: a process running many experiments warned "More than 20 figures have been opened".
    # Experiments draw on `plots.subplots`, whose figures pyplot never holds (issue 34 item 4).
    import warnings

    from aqmlab.plots import subplots
    from matplotlib import pyplot

    before = pyplot.get_fignums()  # other tests in the same process may leave theirs open
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for _ in range(pyplot.rcParams["figure.max_open_warning"] + 1):
            fig, ax = subplots()
            ax.plot([0, 1], [0, 1])
            reproduction = Reproduction(rows=[Row("x", 1.0, 1.0, "exact", True, "x")], figure=fig, id="t")
    assert pyplot.get_fignums() == before
    reproduction.save(tmp_path)
    assert (tmp_path / "t.png").read_bytes().startswith(b"\x89PNG")
