"""Durations, lists and times are said one way: the decisions' sentences (``i18n.said_duration``,
``said_list``, ``said_time``) and the pages (``render.words.Words.duration`` and ``moment``, the
site's sentence) walk the same units, join the same way and write a time alike, in every language."""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime

import pytest
from babel.lists import format_list
from hypothesis import given
from hypothesis import strategies as st
from markupsafe import Markup

from statusgen.decide.overall import summary
from statusgen.i18n import (
    SHIPPED,
    Language,
    Said,
    duration_parts,
    locale_name,
    said,
    said_duration,
    said_list,
    said_time,
    say_in,
    translations,
)
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


def test_a_time_in_a_sentence_is_said_in_each_language_as_its_pages_write_one() -> None:
    """A time is a value of its own in a sentence: its English text is the one the store, the logs
    and the notifications read; each language says it as its pages' ``moment`` filter writes a
    time (Babel's day and 24-hour clock, in UTC); the store keeps it as RFC 3339."""
    since = datetime(2026, 11, 29, 3, 53, 12, tzinfo=UTC)
    reason = said("%(failing)s; failing since %(since)s.", failing="api timed out", since=said_time(since))
    assert reason == "api timed out; failing since 2026-11-29 03:53 UTC."
    kept = reason.to_json()
    assert kept["values"]["since"] == {"time": "2026-11-29T03:53:12Z"}
    back = Said.from_json(json.loads(json.dumps(kept)))
    assert back == reason
    for tag in SHIPPED:
        time_words = words(Language(tag)).moment("2026-11-29T03:53:12Z")
        assert time_words in say_in(back, tag) and time_words in say_in(reason, tag), tag
    assert "29. Nov. 2026, 03:53 UTC" in say_in(back, "de") and "2026年11月29日 3:53 UTC" in say_in(back, "ja")
    # a sentence an older version kept, its time a plain string, is read and said as it was kept
    older = Said.from_json(
        {"said": reason.message, "values": {"failing": "api timed out", "since": "2026-11-29 03:53 UTC"}}
    )
    assert "2026-11-29 03:53 UTC" in say_in(older, "de")


def test_the_catalogs_join_a_list_as_babel_writes_one_in_their_locale() -> None:
    """The list messages of each catalog say what Babel's list patterns say for its locale
    (Japanese joins with "、"); English, the source, keeps its own words ("a, b and c")."""
    for tag in SHIPPED[1:]:
        for parts in (["a", "b"], ["a", "b", "c"], ["a", "b", "c", "d"]):
            assert say_in(said_list(parts), tag) == format_list(parts, locale=locale_name(tag)), (tag, parts)
    assert say_in(said_list(["a", "b", "c"]), "ja") == "a、b、c"


def test_the_pages_lists_are_the_decisions_in_each_language_and_keep_links() -> None:
    """The templates' ``listed`` filter: the open incidents' links, a maintenance's services, a
    vendor's components joined as each language joins a list, never ", " alone (issue 54)."""
    link = Markup('<a href="/incidents/#a">A &amp; B</a>')
    assert words(Language("en")).listed([link, "<b>", "C"]) == f"{link}, &lt;b&gt; and C"
    assert words(Language("ja")).listed([link, "<b>", "C"]) == f"{link}、&lt;b&gt;、C"
    assert words(Language("de")).listed(["x", "y"]) == "x und y"
    assert words(Language("fr")).listed(["x"]) == "x" and words(Language("fr")).listed([]) == ""
