"""Same scenario + seed, same bytes, across two builds (issue 15: a faster engine changes no result).

Runs every shipped scenario, the demo's scenario (csfq-fig3b) under every mechanism of the
comparison and BRED, and the smaller points of the scale series in this checkout's build and in
another one (BASELINE: the `python/` folder of another checkout, with its extension built),
each in its own interpreter, and compares the core's whole JSON result (every table) and
the summary `aqmlab run --json` prints without its wall-time fields, byte for byte. A case the
other build refuses (a qdisc it does not have) and this one runs is listed as new.

    python tests/check_same_results.py BASELINE [--scale 100,1000]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

# Queue disciplines the demo's presets leave out (but the `loss` test instrument): run with their defaults.
OTHER_QDISCS = ("bred",)

# Run in each build's interpreter: scenario texts in on stdin, digests out on stdout.
DIGEST = """
import hashlib, json, sys
from aqmlab import _core
from aqmlab.results import Results
digests = {}
for name, text in json.load(sys.stdin):
    try:
        raw = _core.run(text)
    except _core.ScenarioError as error:
        digests[name] = f"refused: {error}"
        continue
    summary = json.dumps(Results(json.loads(raw)).summary(wall_time=False))
    digests[name] = [hashlib.sha256(part.encode()).hexdigest() for part in (raw, summary)]
json.dump(digests, sys.stdout)
"""


def cases(scale: list[int]) -> list[tuple[str, str]]:
    """(name, scenario JSON) of every case, built once by this checkout's Python."""
    sys.path.insert(0, str(ROOT / "python"))
    from aqmlab import Scenario, scenarios_dir
    from aqmlab.bench import scale_scenario
    from aqmlab.compare import presets

    out = [(path.name, Scenario.load(path).to_json()) for path in sorted(scenarios_dir().glob("*.toml"))]
    demo = Scenario.load(scenarios_dir() / "csfq-fig3b.toml")
    tables = presets() | {name: {"type": name} for name in OTHER_QDISCS}
    out += [(f"csfq-fig3b.toml under {name}", demo.with_qdisc(table).to_json()) for name, table in tables.items()]
    out += [(f"scale series, {flows} flows", scale_scenario(flows).to_json()) for flows in scale]
    return out


def digests(python_dir: Path, inputs: list[tuple[str, str]]) -> dict[str, list[str]]:
    env = {**os.environ, "PYTHONPATH": str(python_dir)}
    done = subprocess.run(
        [sys.executable, "-c", DIGEST], input=json.dumps(inputs), stdout=subprocess.PIPE, text=True, env=env, check=True
    )
    return json.loads(done.stdout)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("baseline", type=Path, help="the python/ folder of the other build")
    parser.add_argument("--scale", default="100,1000", help="points of the scale series to include (flows)")
    args = parser.parse_args()
    inputs = cases([int(n) for n in args.scale.split(",") if n])
    ours, theirs = digests(ROOT / "python", inputs), digests(args.baseline, inputs)
    # A case the other build refuses and this one runs is new here (a preset of a newer qdisc).
    new = [name for name, _ in inputs if isinstance(theirs[name], str) and not isinstance(ours[name], str)]
    differ = [name for name, _ in inputs if ours[name] != theirs[name] and name not in new]
    for name, _ in inputs:
        verdict = "new" if name in new else "DIFFERENT" if name in differ else "identical"
        print(f"{verdict:9}  {name}  {hashlib.sha256(''.join(ours[name]).encode()).hexdigest()[:12]}")
    print(f"{len(inputs) - len(differ) - len(new)} identical, {len(differ)} different, {len(new)} new")
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
