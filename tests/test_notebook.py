"""aqmlab in a Jupyter notebook (issue 34 item 4): `Results` and `Scenario` show as small escaped
HTML, and docs/examples/notebook.ipynb runs in a real kernel with the inline backend, where
aqmlab's figures show and leave the backend alone, so that a plot made after them still shows."""

from __future__ import annotations

import json
from html.parser import HTMLParser

import aqmlab
import nbformat
import pytest
from aqmlab.notebook import MAX_ROWS
from aqmlab.terminal import fmt
from conftest import ROOT, dumbbell, toml_text
from nbclient import NotebookClient

NOTEBOOK = ROOT / "docs" / "examples" / "notebook.ipynb"
# What the notebook runs (its second cell).
NOTEBOOK_SCENARIO = aqmlab.load("csfq-fig3b").with_duration("6s", warmup="2s")


class _Tables(HTMLParser):
    """The text of every table cell, by table and row, and every tag that came up."""

    def __init__(self) -> None:
        super().__init__()
        self.tables: list[list[list[str]]] = []
        self.tags: set[str] = set()
        self.in_cell = False

    def handle_starttag(self, tag, attrs):
        self.tags.add(tag)
        if tag == "table":
            self.tables.append([])
        elif tag == "tr":
            self.tables[-1].append([])
        elif tag in ("td", "th"):
            self.tables[-1][-1].append("")
            self.in_cell = True

    def handle_endtag(self, tag):
        if tag in ("td", "th"):
            self.in_cell = False

    def handle_data(self, data):
        if self.in_cell:
            self.tables[-1][-1][-1] += data


def tables_of(page: str) -> _Tables:
    parser = _Tables()
    parser.feed(page)
    return parser


@pytest.fixture(scope="module")
def odd_names():
    """A run whose names hold HTML: they must show as text."""
    scenario = dumbbell({"name": '<b>video</b> & "co"', "type": "cbr", "rate": "8Mbps"}, {"type": "tcp", "count": 2})
    scenario["name"] = "<script>alert(1)</script>"
    return aqmlab.Scenario.from_dict(scenario), aqmlab.run(scenario)


def test_results_show_their_summary_and_flows_table(odd_names):
    _, results = odd_names
    page = results._repr_html_()
    parsed = tables_of(page)
    assert not parsed.tags & {"script", "style", "img", "link", "iframe"}
    assert "<script>" not in page and "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert "&lt;b&gt;video&lt;/b&gt; &amp; &quot;co&quot;" in page
    (flows,) = parsed.tables
    assert flows[0][:6] == ["id", "name", "type", "goodput (Mbps)", "fair share (Mbps)", "goodput / fair share"]
    video = results.flows.iloc[0]
    assert flows[1][:5] == [
        "0",
        '<b>video</b> & "co"',
        "cbr",
        fmt(video.goodput_bps / 1e6),
        fmt(video.fair_share_bps / 1e6),
    ]
    assert [row[1] for row in flows[1:]] == results.flows["name"].tolist()
    summary = results.summary()
    assert f"<b>Jain index</b> {summary['jain_index']:.4f}" in page
    assert f"<b>events</b> {summary['events']:,}" in page and f"L-&gt;R {summary['utilisation']['L->R']:.1%}" in page
    assert repr(results).startswith("<Results <script>alert(1)</script>: seed 1, 3 s (measured from 1 s), 3 flows, ")


def test_a_long_flows_table_shows_its_first_rows_and_says_so():
    flows = {"type": "cbr", "rate": "0.1Mbps", "count": MAX_ROWS + 10}
    results = aqmlab.run(dumbbell(flows, duration="1s", warmup="0.5s"))
    (table,) = tables_of(results._repr_html_()).tables
    assert len(table) == 1 + MAX_ROWS and table[-1][1] == f"flow{MAX_ROWS - 1}"
    assert f"first {MAX_ROWS} of {MAX_ROWS + 10} flows: results.flows has them all" in results._repr_html_()


def test_a_scenario_shows_its_parts_and_its_text(tmp_path, odd_names):
    data = dumbbell({"name": "video", "type": "cbr", "rate": "6Mbps"}, {"name": "web", "type": "tcp", "count": 4})
    path = tmp_path / "mine.toml"
    path.write_text("# mine.toml: a video & four TCPs\n" + toml_text(data))
    scenario = aqmlab.load(path)
    page = scenario._repr_html_()
    topology, flows = tables_of(page).tables
    assert ["type", "dumbbell"] in topology
    assert ["bottleneck", "{rate = 10Mbps, delay = 5ms, qdisc = {type = droptail, limit = 100}}"] in topology
    assert flows == [
        ["name", "type", "count", "other fields"],
        ["video", "cbr", "", "{rate = 6Mbps}"],
        ["web", "tcp", "4", "{}"],
    ]
    # The file as written, comments and all, folded.
    assert "<summary>TOML (mine.toml)</summary><pre># mine.toml: a video &amp; four TCPs\n" in page
    assert f"from {path}" in page
    # A changed copy is no longer what the file says: its content is shown, as JSON.
    changed = scenario.with_duration("9s")._repr_html_()
    assert "<summary>JSON</summary>" in changed and "# mine.toml" not in changed and "&quot;9s&quot;" in changed
    assert repr(scenario) == f"<Scenario test: dumbbell, flows video (cbr), web (tcp, count 4), from {path}>"
    odd, _ = odd_names
    assert "<script>" not in odd._repr_html_() and "built in Python (no file)" in odd._repr_html_()


def execute(notebook: nbformat.NotebookNode, folder, monkeypatch) -> nbformat.NotebookNode:
    """Runs every cell in a fresh kernel in `folder`, started as a user's (no MPLBACKEND), as
    `jupyter nbconvert --execute` would; a cell that raises fails the test."""
    monkeypatch.delenv("MPLBACKEND", raising=False)
    NotebookClient(
        notebook, timeout=120, kernel_name="python3", resources={"metadata": {"path": str(folder)}}
    ).execute()
    return notebook


def outputs(notebook: nbformat.NotebookNode, source: str) -> list[dict]:
    """The outputs of the one code cell whose source starts with `source`."""
    (cell,) = [c for c in notebook.cells if c.cell_type == "code" and c.source.startswith(source)]
    return cell.outputs


def test_the_example_notebook_shows_tables_and_plots_and_keeps_the_inline_backend(tmp_path, monkeypatch):
    notebook = execute(nbformat.read(NOTEBOOK, as_version=4), tmp_path, monkeypatch)
    (scenario,) = outputs(notebook, "%matplotlib inline")
    assert "<b>Scenario</b> csfq-fig3b" in scenario.data["text/html"]
    assert "<summary>JSON</summary>" in scenario.data["text/html"], "a changed copy of the shipped file"
    (shown,) = outputs(notebook, "results = aqmlab.run(scenario)")
    # The same run here gives the same page: the flows table with every flow's goodput.
    assert shown.data["text/html"] == aqmlab.run(NOTEBOOK_SCENARIO)._repr_html_()
    for plot in ("results.plot_goodput()", "results.plot_throughput()", "results.plot_queue()"):
        (figure,) = outputs(notebook, plot)
        assert figure.data["image/png"], plot
    (table,) = outputs(notebook, "results.drops")
    assert "flow_name" in table.data["text/html"] and "link_name" in table.data["text/html"]
    # Made after aqmlab's figures, with pyplot: it still shows (it did not, when aqmlab switched to Agg).
    (own,) = outputs(notebook, "import matplotlib.pyplot as plt")
    assert own.output_type == "display_data" and own.data["image/png"]
    (backend,) = outputs(notebook, "import matplotlib\n")
    assert backend.data["text/plain"] == repr("inline")


def test_a_figure_shows_before_anything_set_up_the_inline_backend(tmp_path, monkeypatch):
    # Without `%matplotlib inline` and before any pyplot figure, a plain matplotlib Figure printed
    # `<Figure size ... with 2 Axes>` as a cell's value.
    code = (
        "import aqmlab\n"
        "results = aqmlab.run(aqmlab.load('cbr-overload').with_duration('2s', warmup='1s'))\n"
        "results.plot_goodput()"
    )
    notebook = execute(nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(code)]), tmp_path, monkeypatch)
    (figure,) = notebook.cells[0].outputs
    assert figure.data["image/png"] and figure.data["text/plain"].startswith("<Figure size")


def test_the_notebook_is_stored_without_outputs():
    # What it shows is what the tests above see when they run it; stored outputs would go stale.
    cells = json.loads(NOTEBOOK.read_text())["cells"]
    assert all(not c.get("outputs") and c.get("execution_count") is None for c in cells if c["cell_type"] == "code")
