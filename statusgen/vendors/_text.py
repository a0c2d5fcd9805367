"""Vendor text and timestamps, made safe to carry around.

Vendor text is untrusted: it is made one line by the rule every edge applies
(``statusgen.text.one_line``: no control character, no bidirectional control,
single spaces) and its length is capped. Nothing is HTML-escaped here; escaping
happens where text lands.
"""

from __future__ import annotations

import html
import re
from datetime import UTC, datetime, tzinfo
from email.utils import parsedate_to_datetime

from dateutil.parser import isoparse

from statusgen.text import one_line

TEXT_LIMIT = 500
ID_LIMIT = 200
WORD_LIMIT = 64

#: Sorts before any real timestamp.
LONG_AGO = datetime.min.replace(tzinfo=UTC)

_TAG = re.compile(r"<[^<>]{0,2000}>")


def clean_text(raw: str, limit: int = TEXT_LIMIT) -> str:
    """One line of plain text: no control characters, single spaces, at most ``limit`` chars."""
    kept = one_line(raw[: limit * 4])
    if len(kept) <= limit:
        return kept
    return kept[: limit - 1].rstrip() + "\u2026"


def html_to_text(markup: str) -> str:
    """Plain text of a fragment of vendor HTML (tags dropped, entities decoded)."""
    return html.unescape(_TAG.sub(" ", markup))


def utc(moment: datetime) -> datetime:
    """Aware UTC at whole seconds; a naive time is taken to be UTC already.

    Raises OverflowError or ValueError when the moment has no UTC equivalent.
    """
    if moment.tzinfo is None or moment.utcoffset() is None:
        moment = moment.replace(tzinfo=UTC)
    return moment.astimezone(UTC).replace(microsecond=0)


def parse_iso(raw: str, zone: tzinfo = UTC) -> datetime | None:
    """An ISO 8601 / RFC 3339 timestamp in UTC, or None if it is not one. A time written
    without an offset is taken to be in ``zone``."""
    if len(raw) > WORD_LIMIT:
        return None
    try:
        moment = isoparse(raw.strip())
        if moment.tzinfo is None:
            moment = moment.replace(tzinfo=zone)
        return utc(moment)
    except (ValueError, OverflowError, TypeError):
        return None


def parse_rfc822(raw: str) -> datetime | None:
    """An RFC 822 date (RSS ``pubDate``) in UTC, or None if it is not one."""
    if len(raw) > WORD_LIMIT:
        return None
    try:
        return utc(parsedate_to_datetime(raw.strip()))
    except (ValueError, OverflowError, TypeError, IndexError):
        return None
