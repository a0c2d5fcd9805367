"""How numbers, times and codes read on the pages: the filters of the templates.

Pure functions of the values in the JSON documents. Each returns plain text;
the templates escape it (autoescape), so none of them needs to. The dates of
buckets are remembered: every service of a build shows the same ones.
"""

from __future__ import annotations

from datetime import timedelta
from functools import lru_cache
from urllib.parse import urlsplit

from statusgen import timeutil
from statusgen.decide.incidents import SEVERITY
from statusgen.model import DESCRIPTIONS, FLAG_WORDS, STATUS_WORDS, Outcome, Status
from statusgen.timeutil import human_duration, iso, parse_iso

MONTH_NAMES = (
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
)
MONTHS = tuple(name[:3] for name in MONTH_NAMES)
RANGE_LABELS = {"24h": "24 hours", "7d": "7 days", "30d": "30 days", "90d": "90 days"}
IMPACT_WORDS = {"none": "no visible impact"}
#: An incident's severity read as the status it comes from.
SEVERITY_STATUS = {severity: status for status, severity in SEVERITY.items()}
SOURCE_WORDS = {
    "checks": "our own checks",
    "vendor": "the vendor's status page",
    "schedule": "the maintenance schedule",
}

#: Availability bands of the bars and charts: (css class, words for the legend).
LEGEND: tuple[tuple[str, str], ...] = (
    ("a-full", "100%"),
    ("a-high", "99% to 99.999%"),
    ("a-mid", "95% to 98.999%"),
    ("a-low", "under 95%"),
    ("a-maint", "maintenance only"),
    ("a-none", "no data"),
)


def number(value: float | None) -> str:
    """A number as the JSON gives it, without a trailing ``.0``; an em dash for null."""
    if value is None:
        return "\u2014"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def sentence(text: str) -> str:
    """The first letter upper-case, the rest as it is (Jinja's ``capitalize`` lowers the rest)."""
    return text[:1].upper() + text[1:]


def status_word(status: str) -> str:
    """``partial_outage`` as ``Partial outage``; unknown words are shown as they are."""
    try:
        words = STATUS_WORDS[Status(status)]
    except ValueError:
        words = IMPACT_WORDS.get(status, status.replace("_", " "))
    return sentence(words)


def outcome_word(outcome: str) -> str:
    """A check outcome in words (``timeout`` as ``timed out``)."""
    try:
        return DESCRIPTIONS[Outcome(outcome)]
    except ValueError:
        return outcome


def duration(seconds: int | None) -> str:
    """A duration in seconds as a person says it (``2 h 5 min``)."""
    return "\u2014" if seconds is None else human_duration(timedelta(seconds=seconds))


def byte_size(count: int) -> str:
    """A byte cap as a person reads it (``1 MiB``, ``512 KiB``, ``1500 bytes``)."""
    for unit, size in (("MiB", 1 << 20), ("KiB", 1 << 10)):
        if count % size == 0:
            return f"{count // size} {unit}"
    return f"{count} bytes"


def outside_link(url: str | None) -> str | None:
    """An untrusted URL, kept only when it is http(s): never ``javascript:`` or ``data:``."""
    if not url:
        return None
    try:
        parts = urlsplit(url)
    except ValueError:
        return None
    return url if parts.scheme in ("http", "https") and parts.netloc else None


@lru_cache(maxsize=65536)
def moment(stamp: str | None) -> str:
    """``2026-11-22T20:21:31Z`` as ``2026-11-22 20:21 UTC``."""
    when = parse_iso(stamp)
    return "" if when is None else timeutil.moment(when)


@lru_cache(maxsize=4096)
def day(stamp: str) -> str:
    """``2026-11-22T00:00:00Z`` as ``22 Nov 2026``."""
    when = parse_iso(stamp)
    assert when is not None
    return f"{when.day} {MONTHS[when.month - 1]} {when.year}"


@lru_cache(maxsize=4096)
def day_word(day_: str) -> str:
    """A UTC day as its pages name it, ``2026-11-22``, in words: ``22 Nov 2026``."""
    return day(f"{day_}T00:00:00Z")


def month_word(month: str) -> str:
    """``2026-11`` as ``November 2026``."""
    year, number_ = month.split("-")
    return f"{MONTH_NAMES[int(number_) - 1]} {year}"


@lru_cache(maxsize=4096)
def bucket_time(stamp: str, resolution_s: int) -> str:
    """A bucket's start, as precise as its resolution needs."""
    when = parse_iso(stamp)
    assert when is not None
    return day(stamp) if resolution_s >= 86400 else f"{when.day} {MONTHS[when.month - 1]} {when:%H:%M} UTC"


def band(availability: float | None, maintenance: int = 0) -> str:
    """The css class of a bucket's availability band."""
    if availability is None:
        return "a-maint" if maintenance else "a-none"
    if availability >= 100:
        return "a-full"
    if availability >= 99:
        return "a-high"
    return "a-mid" if availability >= 95 else "a-low"


FILTERS = {
    "number": number,
    "sentence": sentence,
    "status_word": status_word,
    "outcome_word": outcome_word,
    "duration": duration,
    "bytes": byte_size,
    "outside_link": outside_link,
    "moment": moment,
    "day": day,
    "day_word": day_word,
    "month_word": month_word,
    "iso": iso,
    "range_label": lambda name: RANGE_LABELS.get(name, name),
    "source_word": lambda source: SOURCE_WORDS.get(source, source),
    "flag_word": lambda flag: FLAG_WORDS.get(flag, flag),
    "severity_word": lambda severity: (
        STATUS_WORDS[SEVERITY_STATUS[severity]] if severity in SEVERITY_STATUS else severity
    ),
}
