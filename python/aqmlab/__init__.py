"""aqmlab: a fast, deterministic packet-level simulator of router queue management
and fair bandwidth allocation (Rust core, Python front).

    import aqmlab
    scenario = aqmlab.load("scenarios/csfq-fig3b.toml")
    results = aqmlab.run(scenario.with_qdisc("droptail", limit_bytes="64KB"))
    results.flows[["name", "goodput_bps", "fair_share_bps"]]
    results.summary()["jain_index"]
    results.save("out/fig3b", format="csv")
"""

from pathlib import Path

from ._core import ScenarioError, __version__
from .api import reporting, run
from .results import Results
from .scenario import Scenario, load

__all__ = ["Results", "Scenario", "ScenarioError", "__version__", "load", "reporting", "run", "scenarios_dir"]


def scenarios_dir() -> Path:
    """The scenario files shipped inside the package (package data: the examples, the paper
    setups the experiments start from, the benchmarks). In a checkout, `scenarios/` at the
    root is a link to this folder. The package holds a compiled extension, so it is always
    installed as files, never imported from a zip: the resource is a real folder."""
    from importlib import resources  # 20-40 ms: imported only here (start-up, issue 15)

    return Path(str(resources.files(__name__) / "scenarios"))
