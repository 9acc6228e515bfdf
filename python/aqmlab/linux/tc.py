"""A `tc qdisc add` command line as an aqmlab qdisc table (issue 24).

`qdisc_table("red limit 64000 min 16000 max 32000 avpkt 1000 burst 100 probability 0.1
bandwidth 10mbit")` gives `{"type": "red", "profile": "linux", "limit": "64000B", "min": "16000B",
...}`: the same words, each value in aqmlab's units as tc reads it (iproute2's get_size: a bare
number is bytes, `k`/`kb` 1024 bytes, `m`/`mb` 1024² bytes; get_rate: `kbit`, `mbit` in 1000s of
bits, `bps` in *bytes* per second; get_time: a bare number is microseconds). Disciplines whose
aqmlab default is already Linux's (bfifo, pfifo, sfq, sfb) get no profile; the others
`profile = "linux"`. docs/linux.md lists the words of each.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

_SIZE_SCALE = {"": 1, "b": 1, "k": 1024, "kb": 1024, "m": 1024**2, "mb": 1024**2, "g": 1024**3, "gb": 1024**3}
_SIZE_SCALE |= {"kbit": 1024 // 8, "mbit": 1024**2 // 8, "gbit": 1024**3 // 8}
_RATE_SCALE = {"bit": 1, "kbit": 1e3, "mbit": 1e6, "gbit": 1e9, "kibit": 1024, "mibit": 1024**2, "gibit": 1024**3}
_RATE_SCALE |= {"bps": 8, "kbps": 8e3, "mbps": 8e6, "gbps": 8e9, "kibps": 8 * 1024, "mibps": 8 * 1024**2}
_TIME_SCALE = {"": 1, "us": 1, "usec": 1, "usecs": 1, "ms": 1e3, "msec": 1e3, "msecs": 1e3}
_TIME_SCALE |= {"s": 1e6, "sec": 1e6, "secs": 1e6}


class TcError(ValueError):
    """A word or value tc would refuse, or one aqmlab does not model."""


def _split(value: str) -> tuple[float, str]:
    number = value.rstrip("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ")
    try:
        return float(number), value[len(number) :].lower()
    except ValueError:
        raise TcError(f"{value!r} is not a number") from None


def _scaled(value: str, scales: dict[str, float], what: str) -> float:
    number, unit = _split(value)
    if unit not in scales:
        raise TcError(f"{value!r}: unknown {what} unit {unit!r}")
    return number * scales[unit]


def size(value: str) -> str:
    """tc's get_size: bytes."""
    return f"{int(_scaled(value, _SIZE_SCALE, 'size'))}B"


def rate(value: str) -> str:
    """tc's get_rate: bit/s (tc's `bps` is bytes per second)."""
    bps = _scaled(value, _RATE_SCALE, "rate")
    return f"{int(bps)}bps" if bps.is_integer() else f"{bps}bps"


def time(value: str) -> str:
    """tc's get_time: microseconds without a unit."""
    us = _scaled(value, _TIME_SCALE, "time")
    return f"{int(us)}us" if us.is_integer() else f"{us}us"


def count(value: str) -> int:
    try:
        return int(value)
    except ValueError:
        raise TcError(f"{value!r} is not a whole number") from None


def seconds(value: str) -> str:
    """A whole number of seconds (sfq's `perturb`)."""
    return f"{count(value)}s"


def milliseconds(value: str) -> str:
    """A whole number of milliseconds (sfb's `rehash`, `db`)."""
    return f"{count(value)}ms"


def step_threshold(value: str) -> dict[str, Any]:
    """dualpi2's `step_thresh`: a time, or packets with a `p` (`5p`, as tc dualpi2 prints them)."""
    if value.lower().endswith("p"):
        return {"step_thresh_packets": count(value[:-1])}
    return {"step_thresh": time(value)}


def selector(value: str) -> dict[str, Any]:
    """fq_codel's and codel's `ce_threshold_selector VALUE/MASK` (each a byte, decimal or 0x hex)."""
    try:
        selected, mask = (int(part, 0) for part in value.split("/"))
    except ValueError:
        raise TcError(f"{value!r} is not VALUE/MASK") from None
    if not (0 <= selected <= 255 and 0 <= mask <= 255):
        raise TcError(f"{value!r}: VALUE and MASK are bytes (0 to 255)")
    return {"ce_threshold_selector": selected, "ce_threshold_mask": mask}


# A reader returns the field's value, or a table of fields (a word that sets two).
Reader = Callable[[str], Any]
# Each discipline's words: a value reader, or a flag's (field, value).
_RED_WORDS: dict[str, Reader | tuple[str, Any]] = {
    "limit": size,
    "min": size,
    "max": size,
    "avpkt": size,
    "burst": count,
    "probability": float,
    "bandwidth": rate,
    "ecn": ("ecn", True),
    "harddrop": ("harddrop", True),
}
_CODEL_WORDS: dict[str, Reader | tuple[str, Any]] = {
    "limit": count,
    "target": time,
    "interval": time,
    "ecn": ("ecn", True),
    "noecn": ("ecn", False),
    "ce_threshold": time,
    "ce_threshold_selector": selector,
}
WORDS: dict[str, dict[str, Reader | tuple[str, Any]]] = {
    "bfifo": {"limit": size},
    "pfifo": {"limit": count},
    "red": _RED_WORDS,
    "choke": {**_RED_WORDS, "limit": count, "min": count, "max": count},
    "codel": _CODEL_WORDS,
    "fq_codel": {**_CODEL_WORDS, "flows": count, "quantum": size, "memory_limit": size, "drop_batch": count},
    "pie": {
        "limit": count,
        "target": time,
        "tupdate": time,
        "alpha": count,
        "beta": count,
        "ecn": ("ecn", True),
        "noecn": ("ecn", False),
        "bytemode": ("bytemode", True),
        "nobytemode": ("bytemode", False),
    },
    "dualpi2": {
        "limit": count,
        "memlimit": size,
        "target": time,
        "tupdate": time,
        "alpha": float,
        "beta": float,
        "step_thresh": step_threshold,
        "min_qlen_step": count,
        "coupling_factor": count,
        "drop_on_overload": ("drop_on_overload", True),
        "overflow": ("drop_on_overload", False),
        "drop_enqueue": ("drop_enqueue", True),
        "drop_dequeue": ("drop_enqueue", False),
        "l4s_ect": ("classification", "l4s_ect"),
        "any_ect": ("classification", "any_ect"),
        "classic_protection": count,
    },
    "sfq": {"limit": count, "perturb": seconds, "quantum": size, "divisor": count, "flows": count},
    "sfb": {
        "limit": count,
        "max": count,
        "target": count,
        "increment": float,
        "decrement": float,
        "penalty_rate": count,
        "penalty_burst": count,
        "rehash": milliseconds,
        "db": milliseconds,
    },
}
# The discipline and the field a FIFO's limit becomes.
_FIFOS = {"bfifo": "limit_bytes", "pfifo": "limit"}
# Disciplines whose aqmlab default already runs as Linux's.
_LINUX_BY_DEFAULT = {"sfq", "sfb"}


def qdisc_table(command: str) -> dict[str, Any]:
    """The qdisc table of `tc qdisc add dev DEV ... COMMAND` (the part from the qdisc's kind on)."""
    kind, *args = command.split()
    if kind not in WORDS:
        raise TcError(f"qdisc {kind!r}: aqmlab has no Linux twin of it (known: {', '.join(WORDS)})")
    words = WORDS[kind]
    if kind in _FIFOS:
        table: dict[str, Any] = {"type": "droptail"}
    elif kind in _LINUX_BY_DEFAULT:
        table = {"type": kind}
    else:
        table = {"type": kind, "profile": "linux"}
    while args:
        word = args.pop(0)
        if word not in words:
            raise TcError(f"{kind}: unknown word {word!r} (known: {', '.join(words)})")
        reader = words[word]
        if isinstance(reader, tuple):
            field, flag = reader
            table[field] = flag
            continue
        if not args:
            raise TcError(f"{kind} {word}: a value is missing")
        value = args.pop(0)
        try:
            read = reader(value)
        except TcError as e:
            raise TcError(f"{kind} {word}: {e}") from None
        if isinstance(read, dict):
            table |= read
        else:
            table[_FIFOS.get(kind, word) if word == "limit" else word] = read
    return table
