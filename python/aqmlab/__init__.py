"""aqmlab: a fast, deterministic packet-level simulator of router queue management
and fair bandwidth allocation (Rust core, Python front).

    import aqmlab
    scenario = aqmlab.load("csfq-fig3b")      # a shipped scenario (`aqmlab scenarios` lists them), or a file
    results = aqmlab.run(scenario.with_qdisc("droptail", limit_bytes="64KB"))
    results.flows[["name", "goodput_bps", "fair_share_bps"]]
    results.summary()["jain_index"]
    results.plot_goodput()                    # a matplotlib Figure (plot_throughput, plot_queue too)
    results.save("out/fig3b", format="csv")

    class ExcessDrop(aqmlab.Qdisc): ...       # your own queue discipline (aqmlab.python_qdisc)
    aqmlab.run(scenario.with_qdisc(ExcessDrop(slope=0.02)))
"""

from ._core import MechanismError, ScenarioError, __version__
from .api import reporting, run
from .python_qdisc import Qdisc
from .results import Results
from .scenario import Scenario, load, scenarios_dir

__all__ = [
    "MechanismError",
    "Qdisc",
    "Results",
    "Scenario",
    "ScenarioError",
    "__version__",
    "load",
    "reporting",
    "run",
    "scenarios_dir",
]
