"""RED-PD experiments of issue 11 not reproduced yet, each with what it still needs."""

from __future__ import annotations

from . import not_reproduced

_LATER = "not written yet: the mechanism, the setup (_redpd.py) and the per-flow output it needs exist"

for _id, _title, _reason in (
    ("redpd-fig9-sim", "RED-PD Fig. 9: identification probability of CBR flows against eq. 4", _LATER),
    ("redpd-sec6.4", "RED-PD §6.4: packet vs byte mode, two packet sizes at the same byte rate", _LATER),
    ("redpd-ns2-suite", "RED-PD: the six scenarios of ns-2's test-suite-red-pd.tcl", _LATER),
):
    not_reproduced(_id, _title, _reason)
