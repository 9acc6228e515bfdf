"""The table of mechanisms (issue 35 goal 3): one descriptor per mechanism, read by the presets,
the figures' colours, the Linux reference cells and the docs; any other name, and a user's class,
described too."""

import pytest
from aqmlab.linux import tc
from aqmlab.mechanisms import MECHANISMS, OTHER_COLOURS, PRESETS, describe
from aqmlab.presets import CSFQ_MECHANISMS


def test_every_mechanism_has_its_own_colour_and_spelling():
    colours = [m.colour for m in MECHANISMS]
    assert len(set(colours)) == len(colours)
    # A name, its label and their other spellings are one mechanism; no two mechanisms share one.
    for m in MECHANISMS:
        for spelling in (m.name, m.label, m.label.upper(), m.name.replace("_", "-")):
            assert describe(spelling) is m, (spelling, m.name)
    for name in ("FIFO", "fifo", "DropTail"):
        assert describe(name).name == "droptail", name
    assert describe("RED-PD") is describe("red_pd") and describe("FQ-CoDel").name == "fq_codel"
    # FRED at its own defaults is drawn in FRED-1's hue, but has no preset of its own.
    assert describe("FRED").colour == describe("fred-1").colour and describe("fred").qdisc is None
    assert describe("scenario").colour == "#000000"
    assert describe(describe("red")) is describe("red")


def test_the_csfq_papers_six_come_first_as_the_paper_configures_them():
    assert list(PRESETS)[: len(CSFQ_MECHANISMS)] == list(CSFQ_MECHANISMS)
    assert {name: PRESETS[name] for name in CSFQ_MECHANISMS} == CSFQ_MECHANISMS
    assert len(PRESETS) == len(MECHANISMS)


def test_a_linux_twin_is_the_same_discipline_as_its_preset():
    twins = [m for m in MECHANISMS if m.tc is not None]
    assert [m.name for m in twins] == ["droptail", "red", "codel", "fq_codel", "pie", "dualpi2", "sfq", "sfb", "choke"]
    for m in twins:
        assert tc.qdisc_table(m.tc)["type"] == m.qdisc["type"], m.name


class ExcessDrop:
    """A user's queue discipline, as far as the table sees it."""


def test_a_users_class_is_labelled_and_coloured_by_its_name_however_it_is_named():
    ways = [
        describe("my_aqm.py:ExcessDrop"),
        describe("lab.aqm:ExcessDrop"),
        describe(ExcessDrop),
        describe(ExcessDrop()),
    ]
    assert {(m.label, m.colour, m.qdisc) for m in ways} == {("ExcessDrop", ways[0].colour, None)}
    assert ways[0].name == "my_aqm.py:ExcessDrop" and ways[2].name == f"{__name__}:ExcessDrop"
    assert ways[0].colour in OTHER_COLOURS
    # Another class name may take another colour of the palette; a name the table does not know
    # (a qdisc type at its defaults) is its own label.
    assert len({describe(f"x.py:{name}").colour for name in ("A", "B", "C", "D")}) == 4
    other = describe("nonsense")
    assert (other.name, other.label, other.qdisc, other.colour in OTHER_COLOURS) == ("nonsense", "nonsense", None, True)


@pytest.mark.parametrize("spec", ["my aqm.py:ExcessDrop", "my_aqm.py:", "my_aqm.py:1Drop"])
def test_a_string_that_is_no_class_spec_is_a_plain_name(spec):
    assert describe(spec).label == spec
