"""Same scenario + seed = byte-identical result files, through the CLI."""

from conftest import aqmlab_cli, dumbbell, write_scenario


def files(folder):
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir())}


def test_two_runs_write_identical_files_and_another_seed_does_not(tmp_path):
    # Jittered CBR over a full drop-tail queue: every random stream matters.
    path = write_scenario(
        tmp_path / "s.toml",
        dumbbell(
            {"type": "cbr", "rate": "4Mbps", "count": 3, "jitter": True},
            {"type": "onoff", "rate": "4Mbps", "on_time": "0.2s", "off_time": "0.2s"},
        ),
    )
    for out in ("a", "b"):
        done = aqmlab_cli("run", path, "--out", tmp_path / out)
        assert done.returncode == 0, done.stderr
    a, b = files(tmp_path / "a"), files(tmp_path / "b")
    assert len(a) == 17  # 10 tables, summary, scenario (as run and as written), 3 plots, the manifest
    assert a == b
    aqmlab_cli("run", path, "--out", tmp_path / "c", "--seed", "2", "--no-plots")
    c = files(tmp_path / "c")
    assert c["throughput.parquet"] != a["throughput.parquet"]
    assert c["summary.json"] != a["summary.json"]
