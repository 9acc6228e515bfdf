"""ns-2's DRR queues a packet by a hash of its source node (queue/drr.cc): the export picks the
fewest buckets (`buckets_`) that keep every flow crossing a link in a queue of its own, as
aqmlab's DRR keeps each flow."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING

from .._core import ScenarioError

if TYPE_CHECKING:
    from .export import Flow


def node_hash(address: int) -> int:
    """ns-2 drr.cc hash() of a source node address (flat addressing: the node's index), before
    the modulo by `buckets_`: `((i + (i >> 8) + ~(i >> 4)) % ((2 << 23) - 1)) + 1`, C's `%`."""
    k = address + (address >> 8) + ~(address >> 4)
    return int(math.fmod(k, (2 << 23) - 1)) + 1


def keys(link: int, flows: Sequence[Flow]) -> dict[int, list[int]]:
    """Hash key -> the flows whose packets on link `link` it stands for: a flow's data is hashed
    by its source, its ACKs by its sink."""
    found: dict[int, list[int]] = {}
    for f in flows:
        for node, route in ((f.src, f.route), (f.dst, f.reverse_route)):
            key = node_hash(node)
            if link in route and f.id not in found.setdefault(key, []):
                found[key].append(f.id)
    return found


def buckets(found: dict[int, list[int]], path: str) -> int:
    """The fewest buckets (at least 16, ns-2's default) in which no two flows' hash keys share a
    bucket; `found` maps each distinct hash key to the flows it stands for (`keys`)."""
    shared = next((flows for flows in found.values() if len(flows) > 1), None)
    if shared is not None:
        raise ScenarioError(f"{path}: ns-2 hashes flows {shared[0]} and {shared[1]} to one queue (source node)")
    values = list(found)
    count = max(16, len(values))
    while len({v % count for v in values}) < len(values):
        count += 1
    return count
