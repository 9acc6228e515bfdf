"""Scenarios: a plain dict (the TOML file's content) with helpers to load, change and validate it.

The Rust core owns the schema and its validation; this module only reads files
and edits the dict. See docs/scenario.md for the fields.

The package ships scenario files (`scenarios_dir()`; `aqmlab scenarios` lists them): a path
that is no file but names one of them (`"csfq-fig3b"` or `"csfq-fig3b.toml"`) loads it, so
`aqmlab.load("csfq-fig3b")` and `aqmlab run csfq-fig3b` work from any folder.
"""

from __future__ import annotations

import json
import math
import re
import tomllib
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from . import _core
from ._core import ScenarioError
from .outdir import OutputError, read_capped

_INDEX = re.compile(r"\[(\d+)\]")
# Where the shipped sweep specs live, in `scenarios_dir()`.
SWEEPS = "sweeps"


def scenarios_dir() -> Path:
    """The scenario files shipped inside the package (package data: the examples, the paper
    setups the experiments start from, the benchmarks; sweep specs in `sweeps/`). In a
    checkout, `scenarios/` at the root is a link to this folder. The package holds a compiled
    extension, so it is always installed as files, never imported from a zip."""
    return Path(__file__).with_name("scenarios")


def shipped() -> dict[str, Path]:
    """The shipped scenarios, then the shipped sweep specs, by name (file name without `.toml`)."""
    folder = scenarios_dir()
    files = sorted(folder.glob("*.toml")) + sorted((folder / SWEEPS).glob("*.toml"))
    return {path.stem: path for path in files}


def description(path: Path) -> str:
    """A shipped file's one-line description: its first comment line."""
    first = path.read_text().splitlines()[0]
    return first.removeprefix("#").strip()


def shipped_file(name: str, missing: str = "not a shipped scenario or sweep spec") -> Path:
    """The shipped scenario or sweep spec `name` (`csfq-fig3b` or `csfq-fig3b.toml`); else a
    ScenarioError `name: <missing> (did you mean ...? ...)`."""
    known = shipped()
    stem = name.removesuffix(".toml")
    if stem in known:
        return known[stem]
    import difflib  # here, not at the top: only a wrong name needs it (issue 21: start-up)

    close = difflib.get_close_matches(stem, known, n=3)
    hint = f"did you mean {' or '.join(close)}? " if close else ""
    raise ScenarioError(f"{name}: {missing} ({hint}`aqmlab scenarios` lists them)")


def find(path: str | Path) -> Path:
    """The file `path` names: itself when it exists or has a folder part, else the shipped
    scenario or sweep spec of that name (see `shipped_file`)."""
    path = Path(path)
    if path.exists() or path.parent != Path("."):
        return path
    return shipped_file(str(path), missing="no such file, nor a shipped scenario of that name")


# A scenario or sweep file is a few kilobytes; a larger one is refused before it fills memory
# (/dev/zero, a log given by mistake).
MAX_FILE_BYTES = 16 * 2**20
# Tables and lists nested in one another: a scenario uses 5 levels (flows[0].tcp.workload...);
# deeper is refused at its field, before Python's recursion limit would stop a copy.
MAX_NESTING = 32


def read_toml(path: Path) -> dict[str, Any]:
    """A TOML file's content; ScenarioError naming the file if it cannot be read, is larger than
    MAX_FILE_BYTES, is not UTF-8 or not TOML."""
    return read_toml_text(path)[0]


def read_toml_text(path: Path) -> tuple[dict[str, Any], str]:
    """A TOML file's content and its text, as `read_toml` reads them."""
    try:
        text = read_capped(path, MAX_FILE_BYTES).decode()
        return tomllib.loads(text), text
    except OSError as e:
        raise ScenarioError(f"{path}: {e.strerror or e}") from None
    except OutputError as e:
        raise ScenarioError(str(e)) from None
    except UnicodeDecodeError as e:
        raise ScenarioError(f"{path}: not a text file (byte {e.start} is not UTF-8)") from None
    except tomllib.TOMLDecodeError as e:
        hint = _core.toml_syntax_hint(text)
        raise ScenarioError(f"{path}: invalid TOML: {e}" + (f"; {hint}" if hint else "")) from None
    except RecursionError:
        raise ScenarioError(f"{path}: a value is nested more than {MAX_NESTING} levels deep") from None


def split_path(path: str) -> list[str | int]:
    """`"flows[0].rate"` or `"flows.0.rate"` -> `["flows", 0, "rate"]`."""
    if not path or path.startswith(".") or path.endswith(".") or ".." in path:
        raise ScenarioError(f"{path!r}: not a dotted path (e.g. topology.bottleneck.qdisc.type)")
    parts: list[str | int] = []
    for part in _INDEX.sub(r".\1", path).split("."):
        parts.append(int(part) if part.isdigit() else part)
    return parts


def get_path(data: Any, path: str) -> Any:
    """The value at a dotted path; ScenarioError naming the first missing part."""
    node = data
    walked = []
    for part in split_path(path):
        walked.append(str(part))
        try:
            node = node[part]
        except (KeyError, IndexError, TypeError):
            raise ScenarioError(f"{'.'.join(walked)}: not found in the scenario") from None
    return node


def set_path(data: dict, path: str, value: Any) -> None:
    """Sets the value at a dotted path in place, creating missing tables (dicts) on the way."""
    parts = split_path(path)
    node: Any = data
    for i, part in enumerate(parts[:-1]):
        where = ".".join(map(str, parts[: i + 1]))
        if isinstance(part, int):
            if not isinstance(node, list) or part >= len(node):
                raise ScenarioError(f"{where}: no such list element")
            node = node[part]
        else:
            if not isinstance(node, dict):
                raise ScenarioError(f"{where}: parent is not a table")
            node = node.setdefault(part, {})
    last = parts[-1]
    if isinstance(last, int):
        if not isinstance(node, list) or last >= len(node):
            raise ScenarioError(f"{path}: no such list element")
    elif not isinstance(node, dict):
        raise ScenarioError(f"{path}: parent is not a table")
    node[last] = _copied(value, [*parts])


def _copied(value: Any, where: list[str | int]) -> Any:
    """A deep copy of the scenario value at path `where`; ScenarioError naming the field where
    tables and lists nest more than MAX_NESTING levels deep."""
    if isinstance(value, (Mapping, list, tuple)):
        if len(where) >= MAX_NESTING:
            raise ScenarioError(f"{_path_text(where)}: nested more than {MAX_NESTING} levels deep")
        if isinstance(value, Mapping):
            return {key: _copied(item, [*where, str(key)]) for key, item in value.items()}
        items = [_copied(item, [*where, index]) for index, item in enumerate(value)]
        return items if isinstance(value, list) else tuple(items)
    if isinstance(value, (str, int, float, bool, type(None))):
        return value  # immutable: its deep copy is itself
    # Another value (a TOML date, a caller's object): `copy` is imported only for one, as a
    # run's start does without it (issue 21).
    import copy

    return copy.deepcopy(value)


def _path_text(parts: list[str | int]) -> str:
    """`["flows", 0, "rate"]` -> `flows[0].rate`."""
    text = ""
    for part in parts:
        text = f"{text}[{part}]" if isinstance(part, int) else _field(text, part)
    return text


_PLAIN_KEY = re.compile(r"[A-Za-z0-9_-]+")


def _field(path: str, key: str) -> str:
    """`path.key`, the key quoted when it is not a plain name, as the core writes paths."""
    key = key if _PLAIN_KEY.fullmatch(key) else json.dumps(key)
    return f"{path}.{key}" if path else key


def _require_json_values(value: Any, path: str) -> None:
    """Raises ScenarioError at the first value under `path` that JSON cannot hold."""
    if isinstance(value, float) and not math.isfinite(value):
        raise ScenarioError(f"{path}: must be a finite number, got {value}")
    if isinstance(value, Mapping):
        for key, item in value.items():
            if not isinstance(key, str):
                raise ScenarioError(f"{_field(path, str(key))}: table keys must be strings, got {key!r}")
            _require_json_values(item, _field(path, key))
    elif isinstance(value, (list, tuple)):
        for index, item in enumerate(value):
            _require_json_values(item, f"{path}[{index}]")
    elif not isinstance(value, (str, int, float, bool, type(None))):
        raise ScenarioError(f"{path}: must be a number, string, boolean, list or table, got {type(value).__name__}")


def _qdisc_tables(data: Any) -> Iterator[dict]:
    """Every table under a `qdisc` or `reverse_qdisc` key of `data`, wherever it stands."""
    if isinstance(data, dict):
        for key, value in data.items():
            if key in ("qdisc", "reverse_qdisc") and isinstance(value, dict):
                yield value
            else:
                yield from _qdisc_tables(value)
    elif isinstance(data, list):
        for value in data:
            yield from _qdisc_tables(value)


def _trace_tables(data: Any) -> Iterator[dict]:
    """Every table of `data` whose `trace` is a file (a link's capacity trace), wherever it stands."""
    if isinstance(data, dict):
        if isinstance(data.get("trace"), str):
            yield data
        for value in data.values():
            yield from _trace_tables(value)
    elif isinstance(data, list):
        for value in data:
            yield from _trace_tables(value)


class Scenario:
    """A scenario: the content of a scenario file as a dict, plus where it came from: `source`,
    the file, and `text`, the file's text as it was read (comments and all; None for a dict).
    Copies keep both, as the text the user wrote that they were made from.

    Scenarios are values: the `with_*` helpers return changed copies.
    """

    def __init__(self, data: Mapping[str, Any], source: Path | None = None, text: str | None = None):
        if not isinstance(data, Mapping):
            raise ScenarioError(f"a scenario is a table (dict), got {type(data).__name__}")
        self._data = _copied(data, [])
        self.source = source
        self.text = text

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Scenario:
        return cls(data)

    @classmethod
    def load(cls, path: str | Path) -> Scenario:
        """Reads and checks a TOML scenario file, or the shipped scenario `path` names (see
        `find`). A file is checked as a file: every quantity carries its unit (`"10ms"`; a
        bare `10` is an error saying what to write), where a dict's bare numbers are in base
        units (docs/scenario.md, "Units")."""
        from .python_qdisc import absolute

        path = find(path)
        data, text = read_toml_text(path)
        # A Python discipline's `class = "my_aqm.py:Class"` is relative to the file, and so is a
        # link's capacity trace (`trace = "cell.up"`; a flow's `trace` is a boolean).
        for table in _qdisc_tables(data):
            if table.get("type") == "python" and isinstance(table.get("class"), str):
                table["class"] = absolute(table["class"], path.parent)
        for table in _trace_tables(data):
            table["trace"] = str(path.parent / table["trace"])
        return cls(data, source=path, text=text).validate(file=True)

    def to_dict(self) -> dict[str, Any]:
        return _copied(self._data, [])

    def to_json(self) -> str:
        """Canonical JSON (sorted keys, no spaces): what the core reads and what sweeps hash.

        A value JSON cannot hold (nan, inf, a set, ...) is a ScenarioError naming its field,
        as the core names the fields of a TOML file."""
        try:
            return json.dumps(self._data, sort_keys=True, separators=(",", ":"), allow_nan=False)
        except (ValueError, TypeError, RecursionError):
            _require_json_values(self._data, "")
            raise

    def save(self, out_dir: str | Path) -> list[Path]:
        """Writes `scenario.json` (the scenario as it runs) and, when it came from a file,
        `scenario.toml` (the file's text: what `aqmlab report` shows); returns them."""
        out = Path(out_dir)
        written = [out / "scenario.json"]
        written[0].write_text(json.dumps(self._data, indent=2) + "\n")
        if self.text is not None:
            written.append(out / "scenario.toml")
            written[1].write_text(self.text)
        return written

    def digest(self) -> str:
        """SHA-256 of the canonical JSON: identical scenarios have identical digests."""
        import hashlib  # here, not at the top: OpenSSL takes milliseconds to load (issue 21)

        return hashlib.sha256(self.to_json().encode()).hexdigest()

    def validate(self, *, file: bool = False) -> Scenario:
        """Raises ScenarioError naming the first bad field; returns self when valid. `file`:
        check it as the content of a scenario file, whose quantities carry their units."""
        _core.validate(self.to_json(), file=file)
        return self

    def resolved(self) -> dict[str, Any]:
        """The scenario as the core resolves it, without building or running anything (raises
        ScenarioError as `validate`): `simulation` (its settings), `nodes`, `links` (each
        direction in the results' order: `name`, `from`, `to`, `rate`, `rate_changes`, `delay`,
        `monitored`, `qdisc` with the defaults the core fills in, `qdisc_path`) and `flows`
        (after `count` expansion: `id`, `name`, `group`, `path`, `type`, `src`, `dst`, `route`,
        `reverse_route`, `start` as the run draws it, `stop`, `packet_size`, `weight`,
        `settings`), every quantity in base units (bit/s, s, bytes); docs/scenario.md.

        >>> load("csfq-fig3b").resolved()["links"][0]["rate"]
        10000000.0
        """
        return json.loads(_core.resolve(self.to_json()))

    def get(self, path: str) -> Any:
        """The value at a dotted path, e.g. `s.get("topology.bottleneck.rate")`."""
        return _copied(get_path(self._data, path), [])

    def get_or(self, path: str, default: Any = None) -> Any:
        """The value at a dotted path, or `default` when it is absent."""
        try:
            return self.get(path)
        except ScenarioError:
            return default

    def with_(self, changes: Mapping[str, Any] | None = None, /, **more: Any) -> Scenario:
        """A copy with values set at dotted paths.

        `s.with_({"simulation.seed": 2, "flows[0].rate": "5Mbps"})` or
        `s.with_(**{"simulation.duration": "10s"})`.
        """
        data = _copied(self._data, [])
        for path, value in {**(changes or {}), **more}.items():
            set_path(data, path, value)
        return Scenario(data, source=self.source, text=self.text)

    def with_seed(self, seed: int) -> Scenario:
        return self.with_({"simulation.seed": seed})

    def with_duration(self, duration: str | float, warmup: str | float | None = None) -> Scenario:
        changes: dict[str, Any] = {"simulation.duration": duration}
        if warmup is not None:
            changes["simulation.warmup"] = warmup
        return self.with_(changes)

    def with_qdisc(self, qdisc: str | Mapping[str, Any], link: str | None = None, **params: Any) -> Scenario:
        """A copy with another queue discipline on a link.

        `qdisc` is a type name (`"red"`, with parameters as keywords), a full table
        (`{"type": "red", "min_th": 5, ...}`), or a queue discipline written in Python
        (`aqmlab.python_qdisc`): an instance (`ExcessDrop(slope=0.02)`), a class with its
        parameters as keywords, or `"my_aqm.py:ExcessDrop"`. `link` names the link's direction
        as the results do (`"A->B"`): in a graph, a link between nodes A and B; in a
        dumbbell, `"L->R"` (the bottleneck, also `None`) or `"R->L"`; in a parking lot,
        `"Ri->Ri+1"` or `None` for the congested links, which share one table
        (`topology.link.qdisc`, so changing one changes all), `"Ri+1->Ri"` for their
        reverse direction.
        """
        from . import python_qdisc

        if isinstance(qdisc, str) and python_qdisc.is_spec(qdisc) or not isinstance(qdisc, (str, Mapping)):
            table = python_qdisc.table(qdisc, **params)
        else:
            table = {"type": qdisc, **params} if isinstance(qdisc, str) else {**qdisc, **params}
        return self.with_({self._qdisc_path(link): table})

    def with_tcp(self, tcp: Mapping[str, Any]) -> Scenario:
        """A copy in which every TCP flow's `tcp` table is `tcp`, e.g. to compare profiles:
        `s.with_tcp({"profile": "ns2", "variant": "reno"})`. Its workload is kept."""
        flows = self._data.get("flows", [])
        return self.with_({f"flows[{i}].tcp": dict(tcp) for i, flow in enumerate(flows) if flow.get("type") == "tcp"})

    def qdisc(self, link: str | None = None) -> dict[str, Any]:
        """The queue discipline table of a link (see `with_qdisc` for `link`); `{}` when defaulted."""
        path = self._qdisc_path(link)
        try:
            return _copied(get_path(self._data, path), [])
        except ScenarioError:
            return {}

    def link(self, link: str) -> dict[str, Any]:
        """The table of the link that `link` names as the results do (see `with_qdisc`; both
        directions share it), e.g. its `rate_changes`; `{}` for a link the scenario does not
        write out (a host's access link)."""
        try:
            return _copied(get_path(self._data, self._qdisc_path(link).rpartition(".")[0]), [])
        except ScenarioError:
            return {}

    def monitoring(self, link: str | None) -> Scenario:
        """A copy in which `link` is monitored: sampled, and its packets' queueing delay kept. A
        dumbbell's bottleneck and a parking lot's congested links always are; a graph link's
        forward direction (`from->to`) is when its table says `monitor = true`, which this sets."""
        if link is None or self._data.get("topology", {}).get("type") != "graph":
            return self
        path = self._qdisc_path(link).rpartition(".")[0]
        table = get_path(self._data, path)
        if link != f"{table.get('from')}->{table.get('to')}":
            return self
        return self.with_({f"{path}.monitor": True})

    def qdisc_links(self) -> list[str]:
        """The names `with_qdisc` and `qdisc` take for `link`, as the results name the links:
        `["L->R", "R->L"]` for a dumbbell, `["A->B", "B->A", ...]` for a graph's links."""
        topology = self._data.get("topology", {})
        kind = topology.get("type")
        if kind == "dumbbell":
            return ["L->R", "R->L"]
        if kind == "parking_lot":
            links = topology.get("congested_links")
            hops = range(links) if isinstance(links, int) else ()
            return [name for i in hops for name in (f"R{i}->R{i + 1}", f"R{i + 1}->R{i}")]
        ends = [(spec.get("from"), spec.get("to")) for spec in topology.get("links", []) if isinstance(spec, Mapping)]
        return [name for a, b in ends for name in (f"{a}->{b}", f"{b}->{a}")]

    def _qdisc_path(self, link: str | None) -> str:
        topology = self._data.get("topology", {})
        kind = topology.get("type")
        if kind == "dumbbell" and link in (None, "bottleneck", "L->R"):
            return "topology.bottleneck.qdisc"
        if kind == "dumbbell" and link == "R->L":
            return "topology.bottleneck.reverse_qdisc"
        if kind == "parking_lot":
            return self._parking_lot_qdisc_path(topology, link)
        named = ", ".join(self.qdisc_links())
        if link is None:
            raise ScenarioError(f"topology: a graph has no one bottleneck: name the link, one of {named}")
        a, sep, b = link.partition("->")
        if not sep:
            raise ScenarioError(f'link {link!r}: expected "A->B", one of {named}')
        for i, spec in enumerate(topology.get("links", [])):
            if (spec.get("from"), spec.get("to")) == (a, b):
                return f"topology.links[{i}].qdisc"
            if (spec.get("from"), spec.get("to")) == (b, a):
                return f"topology.links[{i}].reverse_qdisc"
        raise ScenarioError(f"link {link!r}: no such link in the topology, whose links are {named}")

    @staticmethod
    def _parking_lot_qdisc_path(topology: Mapping[str, Any], link: str | None) -> str:
        """Congested link i joins routers Ri and Ri+1 (docs/scenario.md); all share `topology.link`."""
        if link is None:
            return "topology.link.qdisc"
        routers = re.fullmatch(r"R(\d+)->R(\d+)", link)
        links = topology.get("congested_links")
        if routers and isinstance(links, int):
            a, b = int(routers[1]), int(routers[2])
            if b == a + 1 and b <= links:
                return "topology.link.qdisc"
            if a == b + 1 and a <= links:
                return "topology.link.reverse_qdisc"
        raise ScenarioError(f'link {link!r}: not a congested link of the parking lot ("Ri->Ri+1", i < {links})')

    @property
    def name(self) -> str | None:
        return self._data.get("name")

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Scenario) and self._data == other._data

    def _repr_html_(self) -> str:
        """In a notebook: name, source, `[simulation]`, `[topology]`, the flow entries, and the
        file's TOML (or the JSON of a changed copy) folded."""
        from .notebook import scenario_html

        return scenario_html(self)

    def __repr__(self) -> str:
        topology = self._data.get("topology")
        kind = topology.get("type") if isinstance(topology, Mapping) else None
        flows = [flow for flow in self._data.get("flows", []) if isinstance(flow, Mapping)]
        entries = []
        for flow in flows:
            count = f", count {flow['count']}" if "count" in flow else ""
            entries.append(f"{flow['name'] + ' ' if 'name' in flow else ''}({flow.get('type', 'no type')}{count})")
        what = f": {kind or 'no topology type'}, flows {', '.join(entries) or 'none'}"
        where = f", from {self.source}" if self.source else ""
        return f"<Scenario {self.name or '(unnamed)'}{what}{where}>"


def load(path: str | Path) -> Scenario:
    """Reads a TOML scenario file, or a shipped scenario by name: `load("csfq-fig3b")`."""
    return Scenario.load(path)
