"""The update log a status feed entry carries in its HTML.

Statuspage (and pages like it) write each entry as a list of updates, newest
first::

    <small>May 7, 06:14 UTC</small><br><strong>Monitoring</strong> - text...

``latest_status`` finds the newest update's status word; ``first_update``
the time of the oldest update. Entries that do not follow this layout fall
back to the first status word their text uses.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta, timezone

from statusgen.vendors._text import html_to_text

#: Status words of incidents and maintenance, as feeds print them (lowercased).
STATUS_WORDS = (
    "investigating",
    "identified",
    "monitoring",
    "update",
    "resolved",
    "postmortem",
    "scheduled",
    "in progress",
    "verifying",
    "completed",
)
#: Labels that tell of an update but carry no status of their own.
NOT_A_STATUS = frozenset({"update", "postmortem"})

_WORDS = "|".join(w.replace(" ", r"\s+") for w in STATUS_WORDS)
_LABEL = re.compile(r"<strong>\s*(" + _WORDS + r")\s*</strong>", re.IGNORECASE)
_KEYWORD = re.compile(r"\b(" + _WORDS + r")\b", re.IGNORECASE)
_SMALL = re.compile(r"<small>(.{0,300}?)</small>", re.IGNORECASE | re.DOTALL)
_TAG = re.compile(r"<[^<>]{0,300}>")
_STAMP = re.compile(r"([A-Za-z]{3})[a-z]*\.?\s+(\d{1,2}),?\s+(?:(\d{4})\s*[,-]?\s*)?(\d{1,2}):(\d{2})\s*([A-Z]{2,5})$")
_MONTHS = ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec")
_ZONES = {
    "UTC": 0, "GMT": 0, "Z": 0,
    "EST": -5, "EDT": -4, "CST": -6, "CDT": -5, "MST": -7, "MDT": -6, "PST": -8, "PDT": -7,
    "BST": 1, "CET": 1, "CEST": 2, "EET": 2, "EEST": 3, "JST": 9, "AEST": 10, "AEDT": 11,
}  # fmt: skip


def _normal(word: str) -> str:
    return "_".join(word.lower().split())


def latest_status(title: str, markup: str) -> str | None:
    """The newest update's status word (``in_progress`` style), or None if none is found."""
    labels = [_normal(w) for w in _LABEL.findall(markup)]
    real = [w for w in labels if w not in NOT_A_STATUS]
    if real or labels:
        return (real or labels)[0]
    found = _KEYWORD.search(f"{title} {html_to_text(markup)}")
    return _normal(found.group(1)) if found else None


def first_update(markup: str, entry_time: datetime | None) -> datetime | None:
    """When the oldest dated update was posted (the year taken from ``entry_time``)."""
    if entry_time is None:
        return None
    stamps = (_stamp(_TAG.sub("", s).strip(), entry_time) for s in _SMALL.findall(markup))
    return min((s for s in stamps if s), default=None)


def _stamp(text: str, entry_time: datetime) -> datetime | None:
    match = _STAMP.search(text)
    if not match or match.group(1).lower() not in _MONTHS or match.group(6) not in _ZONES:
        return None
    month, day, year, hour, minute, zone = match.groups()
    try:
        offset = timezone(timedelta(hours=_ZONES[zone]))
        moment = datetime(int(year or entry_time.year), _MONTHS.index(month.lower()) + 1,
                          int(day), int(hour), int(minute), tzinfo=offset)  # fmt: skip
        if not year and moment > entry_time + timedelta(days=2):
            moment = moment.replace(year=moment.year - 1)
        return moment.astimezone(UTC)
    except (ValueError, OverflowError):
        return None
