"""docs/tutorial.md runs as written (issue 26 item 12): its blocks in order, in an empty
folder: a ```toml block is saved under the name its first line gives, each line of a ```sh
block runs as a command (no traceback, exit status 0), a ```python block runs in one
namespace, or is saved as the module its first line names (`# my_aqm.py: ...`). Its claims
in prose and its pictures are checked against what the commands wrote."""

from __future__ import annotations

import json
import os
import re
import shlex
from pathlib import Path

import pandas as pd
import pytest
from conftest import ROOT, aqmlab_cli

TUTORIAL = ROOT / "docs" / "tutorial.md"
# `aqmlab emulate` needs root and /dev/net/tun (as tests/test_emulate.py): its lines run where
# this process has both, and are checked then.
CAN_EMULATE = os.geteuid() == 0 and Path("/dev/net/tun").exists()
BLOCK = re.compile(r"```(\w*)\n(.*?)```", re.S)


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    """The folder the tutorial ran in, block by block; the python blocks' printed lines."""
    folder = tmp_path_factory.mktemp("tutorial")
    printed: list[str] = []
    namespace = {"print": lambda *args: printed.append(" ".join(map(str, args)))}
    with pytest.MonkeyPatch.context() as patch:
        patch.chdir(folder)
        for language, text in BLOCK.findall(TUTORIAL.read_text()):
            if language == "toml":
                name = re.match(r"# (\S+\.toml):", text)
                assert name, f"a toml block starts with `# FILE.toml: ...`: {text[:60]!r}"
                (folder / name[1]).write_text(text)
            elif language == "sh":
                for line in text.splitlines():
                    args = shlex.split(line.split("#")[0])
                    assert args[0] == "aqmlab", line
                    if args[1] == "emulate" and not CAN_EMULATE:
                        continue
                    done = aqmlab_cli(*args[1:], cwd=folder)
                    assert "Traceback" not in done.stderr, (line, done.stderr)
                    assert done.returncode == 0, (line, done.returncode, done.stderr)
            elif language == "python" and re.match(r"# (\S+\.py):", text):
                # A module of the reader's (`# my_aqm.py: ...`): saved, and importable as the
                # reader's own would be from the folder they work in.
                (folder / re.match(r"# (\S+\.py):", text)[1]).write_text(text)
                patch.syspath_prepend(str(folder))
            elif language == "python":
                exec(compile(text, str(TUTORIAL), "exec"), namespace)
            else:
                pytest.fail(f"a block the test cannot run: ```{language}")
    return folder, printed


def test_every_block_runs_and_the_reports_are_written(folder):
    out, printed = folder
    assert [line.split(":")[0] for line in printed] == [
        "drop-tail 30KB",
        "drop-tail 100KB",
        "drop-tail 300KB",
        "slope 0.005",
        "slope 0.05",
    ]
    for name in ("mine", "compare", "sweep"):
        assert (out / "out" / name / "report.html").is_file(), name
    assert json.loads((out / "out" / "fig11" / "rows.json").read_text())["passed"], "the text says it passes"
    assert len(pd.read_csv(out / "out" / "sweep" / "jobs.csv")) == 4


def test_the_numbers_the_text_gives_are_what_ran(folder):
    out, _ = folder
    summary = json.loads((out / "out" / "mine" / "summary.json").read_text())
    video = next(f for f in summary["flows"] if f["name"] == "video")
    # "The video stream takes about 5.8 Mbps, nearly three times its 2 Mbps fair share ... (Jain index about 0.52)"
    assert video["goodput_bps"] / 1e6 == pytest.approx(5.8, abs=0.15) and video["fair_share_bps"] == 2e6
    assert summary["jain_index"] == pytest.approx(0.52, abs=0.02)
    compared = pd.read_csv(out / "out" / "compare" / "compare.csv").set_index("mechanism")
    # "FQ-CoDel, DRR and CSFQ hold the video near its fair share and give the TCPs about 7.5 to 8 Mbps;
    # drop-tail and RED do not."
    for fair in ("fq_codel", "drr", "csfq"):
        assert compared.loc[fair, "video_mbps"] < 2.6 and 7.4 < compared.loc[fair, "tcp_mbps"] <= 8.0, fair
    for unfair in ("scenario", "droptail"):
        assert compared.loc[unfair, "video_mbps"] > 5.5, unfair
    # "Drop-tail's full 64 KB buffer makes every packet wait about 40 ms; FQ-CoDel ... the TCPs' packets
    # wait about 6 ms and the video's about 49 ms ... FQ-CoDel's backlog says 35 ms"
    for group in ("tcp", "video"):
        assert compared.loc["droptail", f"{group}_delay_median_ms"] == pytest.approx(40, abs=1.5), group
    fq = compared.loc["fq_codel"]
    assert fq["tcp_delay_median_ms"] == pytest.approx(6, abs=1) and fq["video_delay_median_ms"] == pytest.approx(
        49, abs=2
    )
    assert fq["backlog_delay_median_ms"] == pytest.approx(35, abs=1.5)


def test_its_own_queue_discipline_does_what_the_text_says(folder):
    out, printed = folder
    drops = pd.read_parquet(out / "out" / "my-aqm" / "drops.parquet")
    assert drops.groupby("reason")["count"].sum()["excess"] > 100
    compared = pd.read_csv(out / "out" / "my-aqm-compare" / "compare.csv").set_index("mechanism")
    mine = compared.loc["my_aqm.py:ExcessDrop"]
    # "its packets wait about 18 ms where drop-tail's wait 40"
    for group in ("tcp", "video"):
        assert mine[f"{group}_delay_median_ms"] == pytest.approx(18, abs=2), group
    # "RED-PD, CSFQ and FQ-CoDel hold the video near its 2 Mbps share, ExcessDrop leaves it 5.8 Mbps"
    for fair in ("red_pd", "csfq", "fq_codel"):
        assert compared.loc[fair, "video_mbps"] < 2.6, fair
    assert mine["video_mbps"] == pytest.approx(5.8, abs=0.15)
    # A steeper slope drops more of everything, the video's too.
    video = {line.split()[1].rstrip(":"): float(line.split()[3]) for line in printed if line.startswith("slope")}
    assert video["0.05"] < video["0.005"]
    today = json.loads((out / "out" / "my-aqm-today" / "manifest.json").read_text())
    assert today["mechanisms"] == ["my_aqm.py:ExcessDrop"]
    if CAN_EMULATE:
        # In front of Linux TCP, real time: the same class drops for its own reason there too.
        emulated = pd.read_parquet(out / "out" / "my-aqm-emulated" / "drops.parquet")
        assert emulated.groupby("reason")["count"].sum()["excess"] > 10


def test_its_pictures_are_what_its_commands_draw(folder):
    out, _ = folder
    pictures = re.findall(r"\]\((tutorial/[^)]+\.png)\)", TUTORIAL.read_text())
    drawn = {"tutorial/throughput.png": out / "out" / "mine" / "throughput.png"}
    drawn["tutorial/compare.png"] = out / "out" / "compare" / "compare.png"
    assert sorted(pictures) == sorted(drawn)
    for picture, path in drawn.items():
        # Byte for byte (the figures are deterministic): regenerate the picture when this fails.
        assert (TUTORIAL.parent / picture).read_bytes() == path.read_bytes(), picture


def test_its_characterization_says_what_the_text_says(folder):
    """Chapter 10: ExcessDrop fills the 1 Mbit/s link at a mean delay many times CoDel's."""
    out, _ = folder
    doc = json.loads((out / "out" / "my-aqm-rfc7928" / "characterize.json").read_text())
    summary = {row["mechanism"]: row for row in doc["summary"]}
    (ours,) = [name for name in summary if name.endswith(":ExcessDrop")]
    goodput, delay = summary[ours]["5.1.1"]
    codel_goodput, codel_delay = summary["codel"]["5.1.1"]
    assert goodput > 0.98 and 70 < delay < 90 and codel_delay < 6 and 0.75 < codel_goodput < 0.82
    assert (out / "out" / "my-aqm-rfc7928" / "rfc7928-5.1.1-ellipses.png").stat().st_size > 10_000


def test_its_l4s_chapter_says_what_the_text_says(folder):
    """Chapter 11: ExcessDrop leaves the ECT(1) flood its rate, CSFQ and DRR hold it, and DualPI2
    keeps Prague's packets near a millisecond where ExcessDrop keeps them near 21."""
    out, _ = folder
    classes = pd.read_csv(out / "out" / "l4s" / "classes.csv").set_index("mechanism")
    (ours,) = [name for name in classes.index if name.endswith(":ExcessDrop")]
    assert classes.at[ours, "flood_mbps"] > 4.8 and 2.3 < classes.at[ours, "flood_share"] < 2.5
    assert round(classes.at["csfq", "flood_share"], 1) == 1.2 and round(classes.at["drr", "flood_share"], 1) == 1.0
    assert classes.at["dualpi2", "prague_delay_ms"] < 1.5 and 18 < classes.at[ours, "prague_delay_ms"] < 24
