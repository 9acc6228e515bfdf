"""Queue disciplines written in Python (issue 35): a class of yours runs wherever a built-in
one does, on the engine's packets, deterministically.

    import collections
    import aqmlab

    class ExcessDrop(aqmlab.Qdisc):
        '''Drops an arrival with probability slope × (packets queued − threshold).'''

        def __init__(self, slope: float = 0.01, threshold: int = 20):
            if slope < 0:
                raise ValueError("slope: must be >= 0")
            self.slope, self.threshold = slope, threshold
            self.fifo = collections.deque()

        def enqueue(self, packet, link):
            excess = link.backlog_packets - self.threshold
            if excess > 0 and link.random() < self.slope * excess:
                link.drop(packet, "excess")
            else:
                self.fifo.append(packet)

        def dequeue(self, link):
            return self.fifo.popleft() if self.fifo else None

In a scenario file: `qdisc = { type = "python", class = "my_aqm.py:ExcessDrop", slope = 0.02 }`
(a path relative to the file, or `package.module:Class` on the import path); from Python:
`scenario.with_qdisc(ExcessDrop(slope=0.02))`; on the command line: `aqmlab compare FILE -m
droptail,my_aqm.py:ExcessDrop`.

The engine calls `enqueue(packet, link)` for each arrival and `dequeue(link)` when the link is
free. A `packet` is a view of the engine's packet (`id`, `flow` and `flow_name`, `size`, `kind`, `ecn`, `label`,
`enqueued_at`): hold it to queue it, return it from `dequeue` to send it. `link` tells `now`,
`backlog_packets`, `backlog_bytes` (as the link counts them), `rate_bps`, `delay`, draws
`random()` from the discipline's own stream, and takes the verbs `drop(packet, reason)` (the
arrival or a held packet; a built-in reason or one of your own naming) and `mark(packet)` (ECN
CE, an ECN-capable packet). Optional: `gauges()` -> {"average": x} (sampled with the queue),
`counters()` -> {name: value} (at the end), `set_link_rate(rate_bps)`, `can_mark = True`.

Parameters are the constructor's keyword arguments, from the scenario's qdisc table; a
ValueError whose message starts with a parameter's name (`"slope: must be >= 0"`) is reported
as that field's error. See docs/tutorial.md, "Your own queue discipline".
"""

from __future__ import annotations

import json
import sys
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import inspect

from ._core import ScenarioError

# The qdisc `type` of a discipline written in Python (the core's registry name).
TYPE = "python"


class Qdisc:
    """Base of a queue discipline written in Python (optional: any class with `enqueue` and
    `dequeue` will do). It records the parameters it was made with, so that an instance can be
    put in a scenario (`scenario.with_qdisc(ExcessDrop(slope=0.02))`)."""

    # Whether it may mark ECN-capable packets: the link then reports `qdisc.ecn_marks`.
    can_mark = False

    def __new__(cls, *args: Any, **kwargs: Any) -> Qdisc:
        # Imported here, as below: `import aqmlab` (and `aqmlab run --json`) loads none of them.
        import inspect

        self = super().__new__(cls)
        given = dict(inspect.signature(cls.__init__).bind(None, *args, **kwargs).arguments)
        given.pop(next(iter(given)))  # `self`
        self._aqmlab_params = given
        return self

    def enqueue(self, packet: Any, link: Any) -> None:
        raise NotImplementedError(f"{type(self).__name__}.enqueue")

    def dequeue(self, link: Any) -> Any:
        raise NotImplementedError(f"{type(self).__name__}.dequeue")

    def gauges(self) -> dict[str, float]:
        return {}

    def counters(self) -> dict[str, float]:
        return {}


def is_spec(name: str) -> bool:
    """Whether `name` names a Python discipline (`file.py:Class`, `package.module:Class`)
    rather than a qdisc type or preset."""
    module, _, cls = name.rpartition(":")
    return bool(module) and not any(c.isspace() for c in module) and all(p.isidentifier() for p in cls.split("."))


def class_name(spec: str) -> str:
    """The class's own name in `spec` (`"my_aqm.py:Outer.ExcessDrop"` -> `"ExcessDrop"`)."""
    return spec.rpartition(":")[2].rpartition(".")[2]


def absolute(spec: str, base: Path) -> str:
    """`spec` with a relative `file.py` made absolute against `base` (a scenario file's folder,
    or the working directory for the command line)."""
    module, _, cls = spec.rpartition(":")
    if module.endswith(".py") and not Path(module).is_absolute():
        return f"{(base / module).resolve()}:{cls}"
    return spec


def table(qdisc: Any, **params: Any) -> dict[str, Any]:
    """The qdisc table of a Python discipline given as a class (with `params`), an instance of
    an `aqmlab.Qdisc` (its own parameters), or a `"file.py:Class"` string."""
    if isinstance(qdisc, str):
        return {"type": TYPE, "class": absolute(qdisc, Path.cwd()), **params}
    cls = qdisc if isinstance(qdisc, type) else type(qdisc)
    own = {} if isinstance(qdisc, type) else dict(getattr(qdisc, "_aqmlab_params", {}))
    if not isinstance(qdisc, type) and not hasattr(qdisc, "_aqmlab_params"):
        raise ScenarioError(
            f"qdisc: an instance of {cls.__name__} does not say its parameters; subclass aqmlab.Qdisc, "
            f"or give the class and its parameters: with_qdisc({cls.__name__}, slope=...)"
        )
    return {"type": TYPE, "class": spec_of(cls), **own, **params}


def spec_of(cls: type) -> str:
    """How the engine finds `cls` again: `module:Class` when its module can be imported, the
    file's path when it was loaded from one, `__main__:Class` for a script's or notebook's own
    (found in this process only)."""
    module = sys.modules.get(cls.__module__)
    path = getattr(module, "__file__", None)
    if cls.__module__ in _LOADED_FROM_FILE.values() and path:
        return f"{path}:{cls.__qualname__}"
    return f"{cls.__module__}:{cls.__qualname__}"


# Modules loaded from a file path, by path: a file is loaded once per process. The lock makes
# the check and the load one step: a Dask worker runs jobs on several threads, and a second
# thread must not see (or replace) a module the first is still executing.
_LOADED_FROM_FILE: dict[str, str] = {}
# Re-entrant: a user's module may itself name another file's class while it loads.
_LOADING = threading.RLock()


def _module(name: str, path: str) -> Any:
    """The module `name` (`package.module`) or the file at `path` (`my_aqm.py`), imported."""
    import importlib

    if not name.endswith(".py"):
        return importlib.import_module(name)
    file = Path(name)
    if not file.is_file():
        raise ScenarioError(f"{path}.class: no file {name}")
    key = str(file.resolve())
    with _LOADING:
        return _loaded(key, file)


def _loaded(key: str, file: Path) -> Any:
    """The module of the file at `key` (its resolved path), executed once (under `_LOADING`)."""
    import hashlib
    import importlib.util

    if key not in _LOADED_FROM_FILE:
        module_name = f"aqmlab_user_{hashlib.sha256(key.encode()).hexdigest()[:12]}_{file.stem}"
        spec = importlib.util.spec_from_file_location(module_name, key)
        module = importlib.util.module_from_spec(spec)
        sys.modules[module_name] = module
        try:
            spec.loader.exec_module(module)
        except BaseException:
            del sys.modules[module_name]
            raise
        _LOADED_FROM_FILE[key] = module_name
    return sys.modules[_LOADED_FROM_FILE[key]]


def resolve(spec: str, path: str = "qdisc") -> type:
    """The class `spec` names (`file.py:Class`, `package.module:Class`); ScenarioError naming
    `path.class` when it cannot be found or lacks `enqueue` / `dequeue`."""
    import difflib

    module_name, _, cls_name = spec.rpartition(":")
    if not module_name or not cls_name:
        raise ScenarioError(f'{path}.class: write "file.py:Class" or "package.module:Class", got {spec!r}')
    try:
        module = _module(module_name, path)
    except ModuleNotFoundError as e:
        raise ScenarioError(f"{path}.class: no module {e.name!r} (for {spec!r})") from None
    except ScenarioError:
        raise
    except Exception as e:
        raise ScenarioError(f"{path}.class: importing {module_name} raised {type(e).__name__}: {e}") from e
    cls = module
    for part in cls_name.split("."):
        cls = getattr(cls, part, None)
    if not isinstance(cls, type):
        names = [n for n, v in vars(module).items() if isinstance(v, type) and not n.startswith("_")]
        near = difflib.get_close_matches(cls_name, names, n=1)
        hint = f", did you mean {near[0]!r}?" if near else f" (its classes: {', '.join(sorted(names)) or 'none'})"
        raise ScenarioError(f"{path}.class: no class {cls_name!r} in {module_name}{hint}")
    # A method it lacks, or one it leaves to the base class (which has none of its own).
    lacking = [
        m for m in ("enqueue", "dequeue") if not callable(getattr(cls, m, None)) or getattr(cls, m) is getattr(Qdisc, m)
    ]
    if lacking:
        raise ScenarioError(f"{path}.class: {cls.__name__} has no {' or '.join(lacking)} method")
    return cls


def _parameters(cls: type) -> dict[str, inspect.Parameter]:
    import inspect

    signature = inspect.signature(cls.__init__)
    return {n: p for n, p in list(signature.parameters.items())[1:] if p.kind not in (p.VAR_POSITIONAL,)}


def _make(cls: type, params: dict[str, Any], path: str) -> Any:
    import difflib

    accepted = _parameters(cls)
    takes_any = any(p.kind is p.VAR_KEYWORD for p in accepted.values())
    named = [n for n, p in accepted.items() if p.kind is not p.VAR_KEYWORD]
    for key in params:
        if key not in accepted and not takes_any:
            near = difflib.get_close_matches(key, named, n=1)
            expected = (
                f"did you mean `{near[0]}`?" if near else f"expected {', '.join(f'`{n}`' for n in named) or 'none'}"
            )
            raise ScenarioError(f"{path}.{key}: unknown field `{key}` of {cls.__name__}, {expected}")
    required = [n for n, p in accepted.items() if p.default is p.empty and p.kind is p.POSITIONAL_OR_KEYWORD]
    for key in required:
        if key not in params:
            raise ScenarioError(f"{path}.{key}: {cls.__name__} needs `{key}`")
    try:
        return cls(**params)
    except (ValueError, TypeError) as e:
        message = str(e)
        field, sep, rest = message.partition(":")
        if sep and field.strip() in accepted:
            raise ScenarioError(f"{path}.{field.strip()}:{rest}") from None
        raise ScenarioError(f"{path}: {cls.__name__}({_call(params)}) raised {type(e).__name__}: {message}") from None


def _call(params: dict[str, Any]) -> str:
    return ", ".join(f"{k}={v!r}" for k, v in params.items())


def validate(spec: str, params_json: str, path: str) -> None:
    """Called by the core for a `type = "python"` table: the class is found and takes its
    parameters (it is made once, its constructor's checks run); ScenarioError naming the field."""
    _make(resolve(spec, path), json.loads(params_json), path)


def build(spec: str, params_json: str) -> Any:
    """Called by the core for each link: a new instance (validate() was called before)."""
    return _make(resolve(spec), json.loads(params_json), "qdisc")


def failure_text(error: BaseException) -> str:
    """What a command prints when a Python discipline failed (`MechanismError`): the engine's
    message (class, method, link, simulated time, packet), then the traceback of the exception
    the user's code raised, its own frames only (none of aqmlab's)."""
    import traceback

    cause = error.__cause__
    if cause is None or cause.__traceback__ is None:
        return str(error)
    package = str(Path(__file__).resolve().parent)
    frames = [
        frame
        for frame in traceback.extract_tb(cause.__traceback__)
        if not str(Path(frame.filename).resolve()).startswith(package)
    ]
    # Not "Traceback": what follows is the user's own code, none of aqmlab's.
    lines = ["Raised in your code (most recent call last):\n", *traceback.format_list(frames)]
    lines += traceback.format_exception_only(type(cause), cause)
    return f"{error}\n{''.join(lines).rstrip()}"
