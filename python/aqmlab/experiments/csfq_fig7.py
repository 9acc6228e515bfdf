"""CSFQ §3.3, Fig. 7: not reproduced yet. §3.3: "a 4 Mbps link traversed by one TCP and
three RLM flows", each RLM source a seven-layer encoding whose receivers join and leave
layers by their losses."""

from __future__ import annotations

from . import not_reproduced

not_reproduced(
    "csfq-fig7",
    "CSFQ Fig. 7: 3 RLM layered-multicast flows and 1 TCP on a 4 Mbps link",
    "needs RLM (receiver-driven layered multicast), which aqmlab does not implement",
)
