"""One table of mechanisms: each queue discipline as `aqmlab compare` and the demo run it, with
everything the front knows of it in one descriptor (`Mechanism`): its preset (the qdisc table on
the CSFQ paper's 64 KB buffer), its colour in every figure, its label (the name its paper
prints), its Linux twin in `tc qdisc add`'s words, one line of documentation and its source.

    >>> from aqmlab.mechanisms import MECHANISMS, describe
    >>> [m.name for m in MECHANISMS][:3]
    ['droptail', 'red', 'fred-1']
    >>> describe("fq-codel").colour, describe("fq-codel").label
    ('#c49c94', 'FQ-CoDel')
    >>> describe("my_aqm.py:ExcessDrop").label
    'ExcessDrop'

`MECHANISMS` is in the presets' order: the CSFQ paper's six first (their tables are
`presets.csfq_mechanisms()`, which the paper's experiments vary), then aqmlab's others on the same
buffer. Everything else reads this table: `compare.presets()` and the demo (`PRESETS`), the colour
of every figure (`plots.mechanism_colour`), the Linux reference cells (`linux.reference.CELLS`),
`aqmlab compare --help` and the README (`presets_text()`), the experiments' `PAPER_NAMES`.
`describe(name_or_class)` gives any other mechanism a descriptor too: a user's queue discipline
(`"my_aqm.py:ExcessDrop"`, `"package.module:Class"` or the class) is labelled by its class name and
coloured from `OTHER_COLOURS` by a stable hash of it. The qdisc tables' fields and defaults are the
core's (docs/scenario.md): a preset sets only what it changes.

A built-in mechanism joins with one `Mechanism(...)` in `MECHANISMS` (ARCHITECTURE.md, "A new
queue discipline").
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .presets import BUFFER, CSFQ_MECHANISMS


@dataclass(frozen=True)
class Mechanism:
    """A queue discipline as the front shows it."""

    # What `compare -m` and the figures call it.
    name: str
    # Its preset, the qdisc table it runs under `name`; None where there is none (a type at its
    # own defaults, a user's class, `scenario`).
    qdisc: dict[str, Any] | None
    # Its colour in every figure.
    colour: str
    # The name a paper or a reader prints (`FIFO`, `FQ-CoDel`; a user's class name).
    label: str
    # Its Linux twin as `tc qdisc add dev DEV ... ` continues, on the demo's 10 Mbit/s link (the
    # `validate linux` cell, read by `linux.tc.qdisc_table`); None where Linux has none.
    tc: str | None = None
    # One line of documentation (`aqmlab compare --help`, README).
    summary: str = ""
    # The paper or RFC it comes from.
    source: str = ""


# aqmlab's others on the CSFQ paper's 64 KB buffer: SRED with B = 64 KB and the SRED paper's
# other settings, RED-PD around the paper's RED, LQD on 64 KB as DRR, BRED with its paper's §5.1
# parameters (its defaults), CoDel, FQ-CoDel and PIE with their RFCs' settings, DualPI2, SFQ and SFB
# with Linux's, each with a limit of 64 packets (64 KB of 1000-byte packets; FQ-CoDel's memory limit
# 64 KB too), and CHOKe with the paper's RED counted in packets (thresholds 16 and 32 packets =
# 16 KB and 32 KB, its w_q and max_p).
_RED = CSFQ_MECHANISMS["red"]
_RED_IN_PACKETS = {"limit": 64, "min_th": 16, "max_th": 32} | {k: _RED[k] for k in ("w_q", "max_p")}
_TC_RED = "limit 64000 min 16000 max 32000 avpkt 1000 burst 100 probability 0.1 bandwidth 10mbit"
_TC_RED_IN_PACKETS = "limit 64 min 16 max 32 avpkt 1000 burst 100 probability 0.1 bandwidth 10mbit"

FRED_1 = Mechanism(
    "fred-1",
    CSFQ_MECHANISMS["fred-1"],
    "#ff7f0e",
    "FRED-1",
    summary="FRED",
    source="Lin & Morris, SIGCOMM 1997",
)
# The presets in order. Colours: the CSFQ paper's comparison first (FRED's two versions in one
# hue), then aqmlab's other disciplines. `tc`: the `validate linux` cells, recorded in
# linux/reference.json.
MECHANISMS: tuple[Mechanism, ...] = (
    Mechanism("droptail", CSFQ_MECHANISMS["droptail"], "#7f7f7f", "FIFO", tc="bfifo limit 64000", summary="FIFO"),
    Mechanism(
        "red",
        _RED,
        "#d62728",
        "RED",
        tc=f"red {_TC_RED}",
        summary="RED as ns-2 runs it, in bytes",
        source="Floyd & Jacobson, IEEE/ACM ToN 1993",
    ),
    FRED_1,
    Mechanism(
        "fred-2",
        CSFQ_MECHANISMS["fred-2"],
        "#ffbb78",
        "FRED-2",
        summary="FRED with its §6 two-packet buffer: above max_th each flow may still queue two packets, where "
        "`fred-1` drops; the two differ only when the average queue passes max_th",
        source="Lin & Morris, SIGCOMM 1997",
    ),
    Mechanism(
        "drr",
        CSFQ_MECHANISMS["drr"],
        "#1f77b4",
        "DRR",
        summary="deficit round robin, dropping from the longest queue when the buffer is full",
        source="Shreedhar & Varghese, SIGCOMM 1995",
    ),
    Mechanism(
        "csfq",
        CSFQ_MECHANISMS["csfq"],
        "#2ca02c",
        "CSFQ",
        summary="core-stateless fair queueing",
        source="Stoica, Shenker & Zhang, SIGCOMM 1998",
    ),
    Mechanism(
        "sred",
        {"type": "sred", "limit_bytes": BUFFER},
        "#9467bd",
        "SRED",
        summary="stabilized RED, its paper's settings",
        source="Ott, Lakshman & Wong, INFOCOM 1999",
    ),
    Mechanism(
        "red_pd",
        {"type": "red_pd", "red": {k: v for k, v in _RED.items() if k != "type"}},
        "#ff9896",
        "RED-PD",
        summary="RED with preferential dropping, around the `red` preset",
        source="Mahajan & Floyd, ACIRI 2000",
    ),
    Mechanism(
        "lqd",
        {"type": "lqd", "limit_bytes": BUFFER},
        "#aec7e8",
        "LQD",
        summary="longest queue drop: the flow with most packets loses its oldest",
        source="Suter, Lakshman, Stiliadis & Choudhury, INFOCOM 1998",
    ),
    Mechanism(
        "bred",
        {"type": "bred", "limit": 64},
        "#c5b0d5",
        "BRED",
        summary="balanced RED, its paper's §5.1 parameters",
        source="Anjum & Tassiulas, CSHCN TR 99-9, 1999",
    ),
    Mechanism(
        "codel",
        {"type": "codel", "limit": 64},
        "#8c564b",
        "CoDel",
        tc="codel limit 64",
        summary="controlled delay, its RFC's settings",
        source="Nichols & Jacobson, ACM Queue 2012, and RFC 8289",
    ),
    Mechanism(
        "fq_codel",
        {"type": "fq_codel", "limit": 64, "memory_limit": BUFFER},
        "#c49c94",
        "FQ-CoDel",
        tc="fq_codel limit 64",
        summary="flow-queue CoDel, its RFC's settings",
        source="Hoeiland-Joergensen et al., RFC 8290",
    ),
    Mechanism(
        "pie",
        {"type": "pie", "limit": 64},
        "#e377c2",
        "PIE",
        tc="pie limit 64",
        summary="proportional integral controller enhanced, its RFC's settings",
        source="Pan et al., RFC 8033",
    ),
    Mechanism(
        "dualpi2",
        {"type": "dualpi2", "profile": "linux", "limit": 64},
        "#ad494a",
        "DualPI2",
        tc="dualpi2 limit 64",
        summary="the DualQ Coupled AQM, L4S packets in a shallow queue coupled to the Classic one, as Linux runs it",
        source="De Schepper, Briscoe & White, RFC 9332",
    ),
    Mechanism(
        "sfq",
        {"type": "sfq", "limit": 64},
        "#17becf",
        "SFQ",
        tc="sfq limit 64",
        summary="stochastic fairness queueing, Linux's settings",
        source="McKenney, INFOCOM 1990",
    ),
    Mechanism(
        "sfb",
        {"type": "sfb", "limit": 64},
        "#bcbd22",
        "SFB",
        tc="sfb limit 64",
        summary="stochastic fair blue, Linux's settings",
        source="Feng, Kandlur, Saha & Shin, INFOCOM 2001",
    ),
    Mechanism(
        "choke",
        {"type": "choke", **_RED_IN_PACKETS},
        "#98df8a",
        "CHOKe",
        tc=f"choke {_TC_RED_IN_PACKETS}",
        summary="CHOKe over the `red` preset counted in packets",
        source="Pan, Prabhakar & Psounis, INFOCOM 2000",
    ),
)
# Names the figures draw that have no preset: compare's row that keeps the scenario's own qdisc,
# and FRED at its own defaults as the FRED paper's experiments run it (FRED-1's colour).
SCENARIO = Mechanism("scenario", None, "#000000", "scenario")
FRED = Mechanism("fred", None, FRED_1.colour, "FRED", source=FRED_1.source)
# Every preset: name -> qdisc table.
PRESETS: dict[str, dict[str, Any]] = {m.name: m.qdisc for m in MECHANISMS if m.qdisc is not None}
# Other names take one of these, by a stable hash of the name (a user's class: of its name).
OTHER_COLOURS = ("#393b79", "#637939", "#8c6d31", "#843c39", "#7b4173", "#3182bd", "#e6550d", "#31a354")


# A user's class as a scenario names it: `my_aqm.py:ExcessDrop` or `package.module:Class`.
def _spelling(name: str) -> str:
    # `FQ-CoDel`, `fq-codel` and `fq_codel` are one mechanism.
    return name.lower().replace("-", "_")


_BY_SPELLING = {_spelling(word): m for m in (*MECHANISMS, SCENARIO, FRED) for word in (m.name, m.label)}


def _hashed_colour(name: str) -> str:
    return OTHER_COLOURS[sum(map(ord, name)) % len(OTHER_COLOURS)]


def describe(mechanism: str | type | object) -> Mechanism:
    """The descriptor of any mechanism (a descriptor is its own): a name or label of the table (in any case, `-` or `_`:
    `describe("RED-PD")` is `red_pd`'s), a user's class (`"my_aqm.py:ExcessDrop"`,
    `"package.module:Class"`, the class or an instance of it: labelled by the class name, coloured by
    it, so that every way of naming the class draws it alike), or any other name (a qdisc type at
    its own defaults: labelled and coloured by the name). Only the table's mechanisms have a preset
    (`qdisc`).

        describe("fifo").name                 # 'droptail'
        describe(ExcessDrop).label            # 'ExcessDrop'
        describe("my_aqm.py:ExcessDrop").colour == describe(ExcessDrop).colour   # True
    """
    if isinstance(mechanism, Mechanism):
        return mechanism
    from .python_qdisc import class_name, is_spec, spec_of

    if not isinstance(mechanism, str):
        cls = mechanism if isinstance(mechanism, type) else type(mechanism)
        return _user_class(spec_of(cls), cls.__name__)
    if known := _BY_SPELLING.get(_spelling(mechanism)):
        return known
    if is_spec(mechanism):
        return _user_class(mechanism, class_name(mechanism))
    return Mechanism(mechanism, None, _hashed_colour(mechanism), mechanism)


def _user_class(spec: str, class_name: str) -> Mechanism:
    return Mechanism(spec, None, _hashed_colour(class_name), class_name)


def presets_text() -> str:
    """The presets in words, each with its summary and source: `aqmlab compare --help` and the
    README's compare row say this."""

    def listed(mechanisms: list[Mechanism]) -> str:
        return ", ".join(f"`{m.name}` ({'; '.join(filter(None, (m.summary, m.source)))})" for m in mechanisms)

    paper = [m for m in MECHANISMS if m.name in CSFQ_MECHANISMS]
    others = [m for m in MECHANISMS if m.name not in CSFQ_MECHANISMS]
    return (
        f"The presets put the CSFQ paper's configurations on its 64 KB buffer: {listed(paper)}; then aqmlab's "
        f"others on the same buffer (64 packets where counted in packets): {listed(others)}."
    )
