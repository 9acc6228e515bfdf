"""CSFQ §3.1, Fig. 3(b): one UDP flow at 10 Mbps against 31 TCPs on a 10 Mbps link, per
mechanism: the demo (its scenario, durations and rows: the full run measures the last 10 s
of 20 s, the paper's 10-s average) plus the row of "FRED" as §3 defines it.

Which row the paper's 1.8 Mbps belongs to: §3 quotes "FRED" as the better of FRED-1 and
FRED-2, so 1.8 Mbps is the better version's UDP goodput (`fred` row here). The demo
checks it against FRED-1, which is the same reading if FRED-1 was the better version in
the paper's run ("FRED-2 performs better than FRED-1 only when the number of flows is
large"); both rows are kept so that the report shows which reading holds.
"""

from __future__ import annotations

from .. import Reproduction, Row, experiment
from . import better_fred, demo

# "Under FRED the UDP flow gets almost 1.8 Mbps"; by §3's convention ("we are quoting the
# results from the version of FRED which performed better") this is the better FRED version.
# Band as for the demo's FRED-1 row (reproduction-targets: csfq-fig3b, [1.0, 2.7] Mbps).
FIG3B_FRED_BAND = (1.0, 2.7)


@experiment("csfq-fig3b", "CSFQ Fig. 3(b): 1 UDP at 10 Mbps vs 31 TCPs on a 10 Mbps link, per mechanism")
def fig3b(quick: bool) -> Reproduction:
    reproduction = demo.demo(quick)
    udp = reproduction.data["mechanisms"].set_index("mechanism")["udp_mbps"]
    better = better_fred(udp, lower_is_better=True)
    # The demo's last row is its ordering; FRED's goes before it.
    reproduction.rows.insert(
        len(reproduction.rows) - 1,
        Row.between(
            f"UDP goodput, FRED = better of FRED-1/FRED-2 ({better}) (Mbps)",
            "almost 1.8",
            udp[better],
            *FIG3B_FRED_BAND,
            key="udp.fred",
        ),
    )
    reproduction.notes.append(
        "Paper: FRED 'almost 1.8' Mbps is the better FRED version's (§3); "
        "the demo's fred-1 row assumes FRED-1 was that version."
    )
    return reproduction
