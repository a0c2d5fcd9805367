"""Time helpers: UTC only, RFC 3339 with ``Z``, seconds precision."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from functools import lru_cache


def utcnow() -> datetime:
    return datetime.now(UTC)


def iso(dt: datetime | None) -> str | None:
    """RFC 3339 in UTC with Z, whole seconds (``2026-11-22T20:02:00Z``)."""
    if dt is None:
        return None
    return dt.astimezone(UTC).replace(microsecond=0, tzinfo=None).isoformat() + "Z"


@lru_cache(maxsize=65536)
def iso_epoch(ts: int) -> str:
    """iso() of an epoch second, cached: bucket starts repeat across every service of a build."""
    return datetime.fromtimestamp(ts, UTC).replace(tzinfo=None).isoformat() + "Z"


def parse_iso(value: str | None) -> datetime | None:
    """An RFC 3339 time as an aware datetime in UTC (``Z`` or an offset; a time without one is local)."""
    if value is None:
        return None
    moment = datetime.fromisoformat(value)  # Python 3.11 reads "Z" (a build reads some 40,000)
    return moment if moment.tzinfo is UTC else moment.astimezone(UTC)


def offset_time(value: object) -> datetime | None:
    """A TOML offset date-time, or an RFC 3339 text with an offset, in UTC; None for anything else
    (a time without an offset could be anywhere: the configuration and the notes refuse it)."""
    if isinstance(value, str):
        try:
            value = datetime.fromisoformat(value.replace("Z", "+00:00"))
        except ValueError:
            return None
    if not isinstance(value, datetime) or value.tzinfo is None:
        return None
    return value.astimezone(UTC)


def parse_time(value: str) -> datetime:
    """``parse_iso`` of a value that is a time (a record's own, never null)."""
    moment = parse_iso(value)
    if moment is None:
        raise ValueError("a time was expected")
    return moment


def to_epoch(dt: datetime) -> int:
    return int(dt.timestamp())


def from_epoch(ts: float) -> datetime:
    return datetime.fromtimestamp(ts, UTC)


def floor_to(ts: int, step: int) -> int:
    return ts - ts % step


def human_duration(delta: timedelta) -> str:
    """ "14 min", "2 h 5 min", "3 d 4 h": how a person says a duration."""
    total = max(0, int(delta.total_seconds()))
    days, rest = divmod(total, 86400)
    hours, rest = divmod(rest, 3600)
    mins = rest // 60
    if days:
        return f"{days} d {hours} h" if hours else f"{days} d"
    if hours:
        return f"{hours} h {mins} min" if mins else f"{hours} h"
    return f"{mins} min" if mins else f"{total} s"


def moment(when: datetime) -> str:
    """A time as English text that must not change while nothing does: ``2026-11-22 20:21 UTC`` (a
    decision's sentence keeps a time apart, ``i18n.said_time``, and says it so in English)."""
    return f"{when.astimezone(UTC):%Y-%m-%d %H:%M} UTC"
