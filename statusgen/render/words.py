"""How numbers, times and codes read on the pages, in a language: the filters of the templates.

``Words(language)`` holds one language's filters: pure functions of the values
in the JSON documents. Each returns plain text; the templates escape it
(autoescape), so none of them needs to. Words go through the language's
catalog (``i18n.translations``); dates, times, durations, numbers and
percentages through Babel's formatting in the same locale, as the site's
script formats them with ``Intl``. The dates of buckets are remembered: every
service of a build shows the same ones.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import UTC, datetime
from decimal import Decimal
from functools import cache, lru_cache

from babel import Locale
from babel.dates import format_skeleton
from babel.numbers import format_decimal, format_percent
from babel.units import format_unit
from markupsafe import Markup, escape

from statusgen.decide.incidents import SEVERITY
from statusgen.i18n import (
    N_,
    Language,
    date_words,
    duration_parts,
    moment_words,
    said_list,
    say_in,
    translations,
)
from statusgen.model import DESCRIPTIONS, FLAG_WORDS, STATUS_WORDS, Outcome, Status
from statusgen.text import outside_link
from statusgen.timeutil import iso, parse_iso

RANGE_LABELS = {"24h": N_("24 hours"), "7d": N_("7 days"), "30d": N_("30 days"), "90d": N_("90 days")}
IMPACT_WORDS = {"none": N_("no visible impact")}
#: An incident's severity read as the status it comes from.
SEVERITY_STATUS = {severity: status for status, severity in SEVERITY.items()}
SOURCE_WORDS = {
    "checks": N_("our own checks"),
    "vendor": N_("the vendor's status page"),
    "schedule": N_("the maintenance schedule"),
}

#: Availability bands of the bars and charts: (css class, words for the legend).
LEGEND: tuple[tuple[str, str], ...] = (
    ("a-full", N_("100%")),
    ("a-high", N_("99% to 99.999%")),
    ("a-mid", N_("95% to 98.999%")),
    ("a-low", N_("under 95%")),
    ("a-maint", N_("maintenance only")),
    ("a-none", N_("no data")),
)
#: The sentences the site's script says (``templates/static/site.js``), each with its
#: ``%(name)s`` places; the page hands them over in its language (``Words.script``).
SCRIPT = {
    "available": N_("%(percent)s available"),
    "incident_minutes": N_("%(minutes)s min of incidents"),
    "maintenance_only": N_("maintenance only"),
    "no_data": N_("no data"),
    "no_latency": N_("no latency measured"),
    "latency": N_("p50 %(p50)s, p95 %(p95)s"),
    "ms": N_("%(ms)s ms"),
    "slider_start": N_("The latest; use the arrow keys to read each one"),
    "bar_label": N_("%(name)s: availability by day, last 90 days"),
    "availability": N_("Availability"),
    "unreadable": N_("The numbers could not be read; the service page lists them."),
    "lasted": N_("(for %(duration)s)"),
    "stale": N_("This page has not been updated since %(time)s (%(duration)s ago)."),
    "stale_summary": N_("Statuses may be out of date. As of then: %(summary)s"),
    "stale_rest": N_("The statuses and figures below are as of then, and may be out of date."),
    "as_of": N_("Data as of %(time)s (%(duration)s ago)."),
    "http": N_("HTTP %(code)s"),
    "slow": N_("(slow)"),
    "not_counted": N_("not counted: %(why)s"),
    "no_result": N_("No result yet"),
    "no_fresh": N_("No fresh result"),
    "last_day": N_(
        "Last day, from %(start)s to %(end)s: %(checks)s counted, %(failed)s failed%(more)s; availability "
        "%(availability)s; latency p50 %(p50)s ms, p95 %(p95)s ms; %(minutes)s min of incidents. The counts add "
        "up: the 24-hour panel's %(closed_checks)s counted and %(closed_failed)s failed, plus "
        "%(progress_checks)s counted and %(progress_failed)s failed in the bucket in progress."
    ),
    "progress": N_(
        "In progress since %(start)s, not in the figures above: %(checks)s counted, %(failed)s failed%(more)s; "
        "availability %(availability)s; latency p50 %(p50)s ms, p95 %(p95)s ms; %(minutes)s min of incidents."
    ),
    "in_maintenance": N_("%(n)s in maintenance"),
    "set_aside": N_("%(n)s set aside"),
    "panels_changed": N_("Newer figures have been published since this page was made: reload it."),
    "chart_so_far": N_("so far"),
    "bucket_so_far": N_("%(time)s, so far"),
    "so_far": N_("So far: %(availability)s available, %(down)s minutes down; incidents: %(incidents)s."),
    "target_met": N_("Target met so far; %(left)s of %(budget)s minutes of error budget left."),
    "target_missed": N_("Target missed so far; %(left)s of %(budget)s minutes of error budget left."),
    "target_open": N_("Target not judged yet; %(left)s of %(budget)s minutes of error budget left."),
    "vendor_read": N_("Last read %(time)s: %(outcome)s."),
    "vendor_read_detail": N_("Last read %(time)s: %(outcome)s (%(detail)s)."),
    "not_read": N_("Not read yet."),
    "changed": N_("The status has changed since this page was made: reload it."),
    "front_changed": N_("The open incidents have changed since this page was made: reload it."),
    "today_so_far": N_("%(day)s, today so far"),
}
DASH = "\u2014"


def sentence(text: str) -> str:
    """The first letter upper-case, the rest as it is (Jinja's ``capitalize`` lowers the rest)."""
    return text[:1].upper() + text[1:]


def band(availability: float | None, maintenance: int = 0) -> str:
    """The css class of a bucket's availability band."""
    if availability is None:
        return "a-maint" if maintenance else "a-none"
    if availability >= 100:
        return "a-full"
    if availability >= 99:
        return "a-high"
    return "a-mid" if availability >= 95 else "a-low"


class Words:
    """One language's words and formats (``words(tag)``: made once a process)."""

    def __init__(self, language: Language):
        self.language = language
        self.locale = Locale.parse(language.locale)
        catalog = translations(language.tag)
        self.gettext, self.ngettext = catalog.gettext, catalog.ngettext
        # the same figures recur on every page and row (counts, minutes, latencies): said once each
        self.number = lru_cache(maxsize=65536, typed=True)(self._number)
        self.percent = lru_cache(maxsize=65536, typed=True)(self._percent)
        self.moment = lru_cache(maxsize=65536)(self._moment)
        self.day = lru_cache(maxsize=4096)(self._day)
        self.bucket_time = lru_cache(maxsize=4096)(self._bucket_time)
        self.unit = lru_cache(maxsize=4096)(self._unit)  # a few hundred counts of a few units

    def _number(self, value: object) -> str:
        """A number as the locale writes it, as precise as the JSON gives it; an em dash for null."""
        if value is None:
            return DASH
        if not isinstance(value, int | float) or isinstance(value, bool):  # not a number: shown as it is
            return str(value)
        return format_decimal(Decimal(str(value)), locale=self.locale, decimal_quantization=False)

    def _percent(self, value: object) -> str:
        """A percentage from the JSON (``99.95``) as the locale writes one (``99,95 %``)."""
        if value is None:
            return DASH
        if not isinstance(value, int | float) or isinstance(value, bool):
            return str(value)
        return format_percent(Decimal(str(value)) / 100, locale=self.locale, decimal_quantization=False)

    def status_word(self, status: str) -> str:
        """``partial_outage`` as ``Partial outage``; unknown words are shown as they are."""
        try:
            words = STATUS_WORDS[Status(status)]
        except ValueError:
            words = IMPACT_WORDS.get(status, status.replace("_", " "))
        return sentence(self.gettext(words))

    def outcome_word(self, outcome: str) -> str:
        """A check outcome in words (``timeout`` as ``timed out``)."""
        try:
            return self.gettext(DESCRIPTIONS[Outcome(outcome)])
        except ValueError:
            return outcome

    def severity_word(self, severity: str) -> str:
        status = SEVERITY_STATUS.get(severity)
        return self.gettext(STATUS_WORDS[status]) if status else severity

    def word(self, table: dict[str, str], key: str) -> str:
        """A code's words from one of the tables of words (``SOURCE_WORDS``...), or the code."""
        return self.gettext(table[key]) if key in table else key

    def duration(self, seconds: float | None) -> str:
        """A duration in seconds as a person says it (``i18n.duration_parts``: ``2 h 5 min``)."""
        if seconds is None:
            return DASH
        return " ".join(self.unit(count, unit) for count, unit, _ in duration_parts(seconds))

    def _unit(self, count: int, unit: str) -> str:
        return format_unit(count, unit, length="short", locale=self.locale)

    def byte_size(self, count: int) -> str:
        """A byte cap as a person reads it (``1 MiB``, ``512 KiB``, ``1500 bytes``)."""
        for unit, size in (("MiB", 1 << 20), ("KiB", 1 << 10)):
            if count % size == 0:
                return f"{self.number(count // size)} {unit}"
        return format_unit(count, "digital-byte", length="long", locale=self.locale)

    def _when(self, stamp: str) -> datetime:
        when = parse_iso(stamp)
        assert when is not None
        return when.astimezone(UTC)

    def _moment(self, stamp: str | None) -> str:
        """``2026-11-22T20:21:31Z`` as ``Nov 22, 2026, 20:21 UTC`` (in the locale's form:
        ``i18n.moment_words``, as the decisions' sentences say a time)."""
        if not stamp or parse_iso(stamp) is None:
            return ""
        return moment_words(self._when(stamp), self.language.tag)

    def _day(self, stamp: str) -> str:
        """``2026-11-22T00:00:00Z`` as ``Nov 22, 2026`` (in the locale's form)."""
        return date_words(self._when(stamp).date(), self.language.tag)

    def day_word(self, day: str) -> str:
        """A UTC day as its pages name it, ``2026-11-22``, in words."""
        return self.day(f"{day}T00:00:00Z")

    def month_word(self, month: str) -> str:
        """``2026-11`` as ``November 2026`` (in the locale's form)."""
        year, number = month.split("-")
        return format_skeleton("yMMMM", datetime(int(year), int(number), 1, tzinfo=UTC), locale=self.locale)

    def _bucket_time(self, stamp: str, resolution_s: int) -> str:
        """A bucket's start, as precise as its resolution needs."""
        if resolution_s >= 86400:
            return self.day(stamp)
        return moment_words(self._when(stamp), self.language.tag, "MMMd")

    def script(self) -> dict[str, dict[str, str]]:
        """What the site's script says, in this language: its sentences, and the words of
        statuses, check outcomes and flags (the record's codes as the pages say them)."""
        return {
            "say": {key: self.gettext(message) for key, message in SCRIPT.items()},
            "statuses": {s.value: self.status_word(s.value) for s in Status},
            "outcomes": {o.value: self.outcome_word(o.value) for o in Outcome},
            "flags": {flag: self.gettext(words) for flag, words in FLAG_WORDS.items()},
        }

    def filters(self) -> dict[str, object]:
        """The templates' filters in this language."""
        return {
            "number": self.number,
            "percent": self.percent,
            "sentence": sentence,
            "status_word": self.status_word,
            "outcome_word": self.outcome_word,
            "duration": self.duration,
            "bytes": self.byte_size,
            "outside_link": outside_link,
            "moment": self.moment,
            "day": self.day,
            "day_word": self.day_word,
            "month_word": self.month_word,
            "iso": iso,
            "range_label": lambda name: self.word(RANGE_LABELS, name),
            "source_word": lambda source: self.word(SOURCE_WORDS, source),
            "flag_word": lambda flag: self.word(FLAG_WORDS, flag),
            "severity_word": self.severity_word,
            "say": lambda value: say_in(value, self.language.tag),  # words statusgen said (i18n.Said)
            "listed": self.listed,
        }

    def listed(self, parts: Iterable[object]) -> Markup:
        """Parts as a list in this language ("a, b and c"; "a、b、c" in Japanese): the decisions'
        ``said_list``, each part escaped unless it is markup already (a link)."""
        items = [escape(part) for part in parts]
        marks = [f"\x00{n}\x00" for n in range(len(items))]  # kept as they are by every catalog's joiners
        text = escape(say_in(said_list(marks), self.language.tag))
        for mark, item in zip(marks, items, strict=True):
            text = text.replace(mark, item)
        return Markup(text)


@cache
def words(language: Language) -> Words:
    """A language's words, made once a process."""
    return Words(language)


#: The source language's words, for what is not a page: logs, tests.
ENGLISH = words(Language("en"))
