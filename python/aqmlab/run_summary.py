"""`aqmlab run FILE --json`: run a scenario and print its summary as one JSON object on stdout.

The `aqmlab` entry point (`aqmlab.__main__`) calls `command_line` first: when the command line
is only `run FILE --json [--seed N]`, the run needs none of the CLI framework, so it is done
here without importing typer or click (issue 21: a script that runs many short scenarios, and
the whole-process comparison with ns-2, pay for the simulation and little else). Anything else
goes to the typer CLI, whose `run --json` calls `print_summary` too, so both print the same.
"""

from __future__ import annotations

import json
import sys
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from rich.console import Console


def command_line(args: list[str]) -> tuple[str, int | None] | None:
    """(FILE, seed) when `args` are exactly `run FILE --json [--seed N]` in any order after
    `run`; None for any other command line (the typer CLI handles it, errors included)."""
    if len(args) < 3 or args[0] != "run" or "--json" not in args:
        return None
    rest = [a for a in args[1:] if a != "--json"]
    seed = None
    if "--seed" in rest:
        at = rest.index("--seed")
        if at + 1 >= len(rest) or not rest[at + 1].lstrip("-").isdigit():
            return None
        seed = int(rest[at + 1])
        del rest[at : at + 2]
    if len(rest) != 1 or rest[0].startswith("-"):
        return None
    return rest[0], seed


@cache
def _console() -> Console:
    from rich.console import Console

    return Console(stderr=True)


def print_summary(file: str | Path, seed: int | None) -> int:
    """Runs the scenario FILE (a path or a shipped scenario's name), prints `Results.summary()`
    as JSON on stdout, and returns the exit status: 0, 2 with one line `error: ...` on stderr
    for a bad scenario, 1 for a file that cannot be read, 130 on Ctrl-C."""
    from ._core import MechanismError, ScenarioError
    from .api import summary
    from .progress import RunProgress
    from .results import to_json_value
    from .scenario import load

    try:
        scenario = load(file)
        if seed is not None:
            scenario = scenario.with_seed(seed)
        scenario.validate()
        with RunProgress(_console) as bars:
            result: Any = summary(scenario, progress=bars)
    except ScenarioError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    except MechanismError as e:
        from .python_qdisc import failure_text

        print(f"error: {failure_text(e)}", file=sys.stderr)
        return 2
    except OSError as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    except KeyboardInterrupt as e:
        print(str(e) or "interrupted", file=sys.stderr)
        return 130
    sys.stdout.write(json.dumps(to_json_value(result)) + "\n")
    return 0
