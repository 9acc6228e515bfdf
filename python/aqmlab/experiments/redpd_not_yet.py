"""RED-PD experiments of issue 11 not reproduced yet, each with what it still needs."""

from __future__ import annotations

from . import not_reproduced

not_reproduced(
    "redpd-fig20-21",
    "RED-PD Figs. 20–21: TFRC vs TCP at 30 and 120 ms, RED vs RED-PD",
    "needs TFRC (equation-based congestion control), which aqmlab does not implement yet",
)
