"""A validated scenario's quantities in base units: bit/s, seconds, bytes (`"10Mbps"`, `"5ms"`,
`"64KB"`, or numbers already in base units). The unit tables are the core's
(crates/aqmlab-core/src/units.rs), which has checked every value before Python reads one: the
ns-2 export reads a scenario with them, and the figures its links' rate changes.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

_RATE_UNITS = {"": 1.0, "bps": 1.0, "b/s": 1.0, "kbps": 1e3, "Kbps": 1e3, "kb/s": 1e3}
_RATE_UNITS |= {"Mbps": 1e6, "Mb/s": 1e6, "Gbps": 1e9, "Gb/s": 1e9}
_TIME_UNITS = {"": 1.0, "s": 1.0, "ms": 1e-3, "us": 1e-6, "ns": 1e-9, "min": 60.0, "h": 3600.0, "hour": 3600.0}
_SIZE_UNITS = {"": 1.0, "B": 1.0, "KB": 1e3, "kB": 1e3, "MB": 1e6, "KiB": 1024.0, "MiB": 1048576.0}
_NUMBER = re.compile(r"\s*([-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?)\s*(.*?)\s*")


def _quantity(value: Any, units: Mapping[str, float]) -> float:
    if isinstance(value, bool):
        raise TypeError(value)
    if isinstance(value, (int, float)):
        return float(value)
    number, unit = _NUMBER.fullmatch(value).groups()
    return float(number) * units[unit]


def rate(value: Any) -> float:
    """Bits per second from a scenario's rate (`"10Mbps"`, `1e7`)."""
    return _quantity(value, _RATE_UNITS)


def seconds(value: Any) -> float:
    """Seconds from a scenario's time (`"10ms"`, `0.01`)."""
    return _quantity(value, _TIME_UNITS)


def size(value: Any) -> int:
    """Bytes from a scenario's size (`"64KB"`, `1000`)."""
    return int(_quantity(value, _SIZE_UNITS))
