"""The scenarios shipped in the package, as a user outside the checkout finds them (issue 26
item 3): `aqmlab scenarios` lists them, every command and `aqmlab.load` take one by name,
and `aqmlab scenarios NAME --copy DEST` writes one out to edit."""

import json

import aqmlab
import pytest
from aqmlab.scenario import description, shipped
from conftest import aqmlab_cli


def test_every_shipped_file_opens_with_a_one_line_description():
    files = shipped()
    assert {"cbr-overload", "csfq-fig3b", "droptail-buffer"} <= set(files)
    for name, path in files.items():
        first = path.read_text().splitlines()[0]
        assert first.startswith("# ") and first.endswith(".") and len(first) <= 100, (name, first)


def test_the_listing_names_each_shipped_file_with_its_description(tmp_path):
    done = aqmlab_cli("scenarios", cwd=tmp_path, columns=200)
    assert (done.returncode, done.stderr) == (0, "")
    lines = done.stdout.splitlines()
    for name, path in shipped().items():
        assert any(line.split()[:1] == [name] and line.endswith(description(path)) for line in lines), name


def test_a_shipped_scenario_runs_by_name_from_any_folder(tmp_path):
    for name in ("cbr-overload", "cbr-overload.toml"):
        done = aqmlab_cli("run", name, "--json", cwd=tmp_path)
        assert done.returncode == 0, done.stderr
        assert json.loads(done.stdout)["name"] == "cbr-overload"
    assert aqmlab.load("csfq-fig3b") == aqmlab.load(aqmlab.scenarios_dir() / "csfq-fig3b.toml")


def test_a_file_of_that_name_wins_over_the_shipped_one(tmp_path, monkeypatch):
    shipped = (aqmlab.scenarios_dir() / "cbr-overload.toml").read_text()
    (tmp_path / "cbr-overload.toml").write_text(shipped.replace('name = "cbr-overload"', 'name = "mine"'))
    monkeypatch.chdir(tmp_path)
    assert aqmlab.load("cbr-overload.toml").name == "mine"
    assert aqmlab.load("cbr-overload").name == "cbr-overload"  # no file is named that


def test_an_unknown_name_says_what_it_might_have_meant(tmp_path):
    done = aqmlab_cli("run", "csfq-fig3x", cwd=tmp_path)
    assert done.returncode == 2
    assert done.stderr == (
        "error: csfq-fig3x: no such file, nor a shipped scenario of that name "
        "(did you mean csfq-fig3b? `aqmlab scenarios` lists them)\n"
    )
    with pytest.raises(aqmlab.ScenarioError, match="no such file, nor a shipped scenario"):
        aqmlab.load("nothing-like-it")


def test_a_copied_scenario_and_sweep_spec_run_where_they_were_copied(tmp_path):
    shown = aqmlab_cli("scenarios", "cbr-overload", cwd=tmp_path)
    assert shown.stdout == shipped()["cbr-overload"].read_text()
    done = aqmlab_cli("scenarios", "cbr-overload", "--copy", "mine.toml", cwd=tmp_path)
    assert done.returncode == 0 and (tmp_path / "mine.toml").read_text() == shown.stdout
    again = aqmlab_cli("scenarios", "cbr-overload", "--copy", "mine.toml", cwd=tmp_path)
    assert again.returncode == 2
    assert again.stderr == "error: --copy: mine.toml exists; give another name (nothing was overwritten)\n"
    # A copied sweep spec names its base scenario by name, so it runs from its new folder.
    assert aqmlab_cli("scenarios", "droptail-buffer", "--copy", ".", cwd=tmp_path).returncode == 0
    sweep = aqmlab_cli("sweep", "droptail-buffer.toml", "--out", "sweep", "--workers", "1", cwd=tmp_path)
    assert sweep.returncode == 0, sweep.stderr
    assert len((tmp_path / "sweep" / "jobs.csv").read_text().splitlines()) == 1 + 6
