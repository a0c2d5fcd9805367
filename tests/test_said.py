"""Durations and lists are said one way: the decisions' sentences (``i18n.said_duration``,
``said_list``) and the pages (``render.words.Words.duration``, the site's sentence) walk the
same units and join the same way, in every language."""

from __future__ import annotations

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from statusgen.decide.overall import summary
from statusgen.i18n import SHIPPED, Language, duration_parts, said_duration, said_list, say_in, translations
from statusgen.model import Status
from statusgen.render.words import words


@pytest.mark.parametrize(
    ("seconds", "said"),
    [
        (0, "0 s"),
        (-5, "0 s"),
        (45, "45 s"),
        (60, "1 min"),
        (65, "1 min 5 s"),
        (3600, "1 h"),
        (7200 + 59, "2 h"),  # a zero after the largest unit is not said, nor what follows it
        (7500, "2 h 5 min"),
        (86400 * 3 + 3600 * 4 + 59, "3 d 4 h"),
        (86400 + 5, "1 d"),
    ],
)
def test_a_duration_is_said_in_its_two_largest_units(seconds: int, said: str) -> None:
    assert said_duration(seconds) == said
    assert " ".join(f"{n} {unit.removeprefix('duration-')}" for n, unit, _ in duration_parts(seconds)) == re.sub(
        r"(\d+) (d|h|min|s)\b",
        lambda m: f"{m[1]} " + {"d": "day", "h": "hour", "min": "minute", "s": "second"}[m[2]],
        said,
    )


@given(st.integers(min_value=0, max_value=400 * 86400))
def test_the_pages_and_the_sentences_say_the_same_duration(seconds: int) -> None:
    """The same counts of the same units, whatever each language calls them."""
    for tag in SHIPPED:
        page = words(Language(tag)).duration(seconds)
        sentence = say_in(said_duration(seconds), tag)
        assert re.findall(r"\d+", page.replace(",", "").replace("\u202f", "")) == re.findall(
            r"\d+", sentence.replace(",", "")
        ), (tag, page, sentence)


def test_a_list_is_joined_alike_by_the_sentences_and_the_site_summary() -> None:
    counts = {Status.MAJOR_OUTAGE: 1, Status.PARTIAL_OUTAGE: 1, Status.DEGRADED: 2}
    assert summary(counts) == (
        "1 service has a major outage, 1 service has a partial outage and 2 services have degraded performance."
    )
    assert said_list(["a", "b", "c"]) == "a, b and c"
    for tag in SHIPPED:
        catalog = translations(tag)
        told = summary(counts, catalog.gettext, catalog.ngettext)
        parts = [
            catalog.ngettext("%(n)d service has a major outage", "%(n)d services have a major outage", 1) % {"n": 1},
            catalog.ngettext("%(n)d service has a partial outage", "%(n)d services have a partial outage", 1)
            % {"n": 1},
            catalog.ngettext("%(n)d service has degraded performance", "%(n)d services have degraded performance", 2)
            % {"n": 2},
        ]
        assert told == catalog.gettext("%(sentence)s.") % {"sentence": say_in(said_list(parts), tag)}
