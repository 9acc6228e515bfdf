"""Every package `python/aqmlab` imports is declared in pyproject.toml (issue 34 item 2: `pip install .`
gave a package that could not start, as `cli/__init__.py` imported click, which nothing declared).

A module-level import (what runs when the module is imported) is the standard library, aqmlab itself,
or a `[project] dependencies` entry; an optional extra (`dask`) is allowed only inside a function,
where it runs when the feature that needs it does. `tests/check_wheel.py` installs the wheel without
extras and runs the README's commands, which checks the same from the other side.
"""

from __future__ import annotations

import ast
import importlib.metadata
import re
import sys
import tomllib
from dataclasses import dataclass
from pathlib import Path

from conftest import ROOT

PACKAGE = ROOT / "python" / "aqmlab"
# Import names whose distribution is named otherwise: add one when the code imports such a package.
DISTRIBUTION_OF = {"yaml": "PyYAML", "PIL": "pillow", "dateutil": "python-dateutil"}
# The extras users install; `dev` is the test and build tools, never imported by the package.
TEST_ONLY_EXTRA = "dev"


@dataclass(frozen=True)
class Import:
    name: str  # the top-level module, `dask` for `from dask.distributed import Client`
    where: str  # file:line
    in_function: bool


def imports(path: Path) -> list[Import]:
    """The absolute imports of one file, each marked as module-level or inside a function."""
    found: list[Import] = []

    def visit(node: ast.AST, in_function: bool) -> None:
        for child in ast.iter_child_nodes(node):
            where = f"{path.relative_to(ROOT)}:{getattr(child, 'lineno', 0)}"
            if isinstance(child, ast.Import):
                found.extend(Import(alias.name.partition(".")[0], where, in_function) for alias in child.names)
            elif isinstance(child, ast.ImportFrom) and child.level == 0 and child.module:
                found.append(Import(child.module.partition(".")[0], where, in_function))
            visit(child, in_function or isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda))

    visit(ast.parse(path.read_text(), str(path)), False)
    return found


def normalised(distribution: str) -> str:
    return re.sub(r"[-_.]+", "-", distribution).lower()


def requirement_names(requirements: list[str]) -> set[str]:
    """The distribution names of PEP 508 requirements (`dask[distributed]>=2024.1` -> `dask`)."""
    return {normalised(re.match(r"\s*([A-Za-z0-9][A-Za-z0-9._-]*)", r).group(1)) for r in requirements}


PROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
REQUIRED = requirement_names(PROJECT["dependencies"])
OPTIONAL = requirement_names(
    [r for extra, listed in PROJECT["optional-dependencies"].items() if extra != TEST_ONLY_EXTRA for r in listed]
)
THIRD_PARTY = [
    found
    for path in sorted(PACKAGE.rglob("*.py"))
    for found in imports(path)
    if found.name not in sys.stdlib_module_names and found.name != "aqmlab"
]


def test_every_import_is_declared() -> None:
    undeclared = []
    for found in THIRD_PARTY:
        distribution = normalised(DISTRIBUTION_OF.get(found.name, found.name))
        allowed = REQUIRED | OPTIONAL if found.in_function else REQUIRED
        if distribution not in allowed:
            where = "an extra only inside a function" if distribution in OPTIONAL else "not in [project] dependencies"
            undeclared.append(f"{found.where}: import {found.name} ({distribution}: {where})")
    assert not undeclared, "\n".join(undeclared)


def test_the_table_names_the_distribution_that_provides_each_import() -> None:
    # Where a package is installed, its metadata says which distribution provides an import name;
    # a missing or wrong `DISTRIBUTION_OF` entry shows here rather than as an undeclared name.
    provided_by = importlib.metadata.packages_distributions()
    wrong = {
        found.name: sorted(provided_by[found.name])
        for found in THIRD_PARTY
        if found.name in provided_by
        and normalised(DISTRIBUTION_OF.get(found.name, found.name)) not in map(normalised, provided_by[found.name])
    }
    assert not wrong, f"add to DISTRIBUTION_OF: {wrong}"


def test_dask_is_imported_only_where_a_sweep_uses_a_scheduler() -> None:
    # `pip install aqmlab` without the dask extra must start and run everything but `--scheduler`.
    dask = [found for found in THIRD_PARTY if found.name == "dask"]
    assert [found.where.partition(":")[0] for found in dask] == ["python/aqmlab/workers.py"]
    assert all(found.in_function for found in dask)
    assert "dask" in OPTIONAL and "dask" not in REQUIRED
