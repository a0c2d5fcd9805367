"""The maintenance calendar: ``/feed/maintenance.ics`` and one per service, in iCalendar
(RFC 5545), the format every calendar application subscribes to.

Every configured, planned and vendor maintenance the site tells of (in progress, upcoming, and
ended in the last 14 days) is a VEVENT: its UID stays the same for good (the maintenance's key),
DTSTART and DTEND in UTC, SUMMARY, DESCRIPTION and a URL to its service's page. A recurring window
is told as its occurrence in progress or its next one, each occurrence an event of its own. A
maintenance of several services is one event, in the site's calendar once and in the calendar of
each of its services.

A calendar is a snapshot, not a scheduling message: it has no METHOD (RFC 5545, 3.7.2: without one
"the iCalendar object is merely being used to transport a snapshot of some calendar information",
and a METHOD would have to be repeated in the Content-Type; iTIP's PUBLISH, RFC 5546, 3.2.1, would
also want at least one VEVENT). RFC 5545 (3.6) wants at least one component in any calendar: one
with no event holds a VFREEBUSY that publishes its busy time, none (every event is
TRANSP:TRANSPARENT, and there are none), a form of calendar 3.6 names; a VTIMEZONE would publish a
time zone no time uses (every time is UTC, 3.3.5), and a placeholder event would show in every
subscriber's calendar.

A calendar client keeps what it was told: a changed event must come with a higher SEQUENCE, and
an event that will not happen as STATUS:CANCELLED. The calendar's memory is the file it served
last (each event carries a digest of what it says, ``X-STATUSGEN-DIGEST``): a changed event gets
its SEQUENCE plus one, and one that is gone while it was still to come is kept, cancelled, until
its end has passed or for ``KEEP_CANCELLED`` (when it was, ``X-STATUSGEN-CANCELLED``). An event
that ended as told stays as it was for ``HORIZON`` after its end, as the site tells ended
maintenance: the earlier occurrences of a recurring window too, which the decisions no longer
tell once a later one has ended.

A calendar is bounded whatever a vendor's page does: a page that reshuffles hundreds of windows at
every fetch would otherwise add them all, cancelled, at every run. Each source of a service (its
vendor's page, its configured windows, the notes folder) has at most the service's limit of events
told (``calendar_events``), the first to start first; the cancelled ones, whichever source they came
from, at most the sum of the limits of the calendar's services.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from datetime import datetime, timedelta

from statusgen import routes
from statusgen.decide.maintenance import HORIZON, Notice, by_maintenance

PRODID = "-//statusgen//maintenance calendar//EN"
FOLD = 75  # octets a content line holds before it is folded (RFC 5545, 3.1)
#: How long an event no longer told stays, cancelled: long enough for every client's refresh.
KEEP_CANCELLED = timedelta(days=7)


@dataclass(frozen=True)
class Event:
    """One VEVENT: what it says, and what a calendar client remembers of it."""

    uid: str
    start: datetime
    end: datetime | None  # None: the vendor gave no end
    summary: str
    description: str
    url: str
    sequence: int = 0
    cancelled: bool = False
    cancelled_at: datetime | None = None  # since when it is cancelled
    services: tuple[str, ...] = ()  # whose (not written: a file's memory is its own events)
    source: str = ""  # of which of the services' sources (not written either)

    @property
    def digest(self) -> str:
        end = self.end.isoformat() if self.end else ""
        said = "\n".join([self.start.isoformat(), end, self.summary, self.description, self.url])
        return hashlib.blake2b(said.encode(), digest_size=8).hexdigest()


def text(value: str) -> str:
    """A TEXT value escaped (RFC 5545, 3.3.11): backslash, semicolon, comma and line breaks."""
    return (
        value.replace("\\", "\\\\").replace(";", "\\;").replace(",", "\\,").replace("\r\n", "\\n").replace("\n", "\\n")
    )


def fold(line: str) -> list[str]:
    """A content line folded at 75 octets, never inside a UTF-8 character (RFC 5545, 3.1)."""
    out, current, size = [], "", 0
    for ch in line:
        width = len(ch.encode())
        if size + width > FOLD:
            out.append(current)
            current, size = " ", 1
        current += ch
        size += width
    return [*out, current]


def stamp(at: datetime) -> str:
    return at.strftime("%Y%m%dT%H%M%SZ")


def events(notices: Iterable[Notice], base_url: str, host: str) -> list[Event]:
    """The events of these maintenance notices, one per maintenance (``by_maintenance``), told as
    its first notice tells it, with every service it is about."""
    out = []
    for group in by_maintenance(notices):
        n = group[0]
        out.append(
            Event(
                uid=f"{n.key.replace('/', '-')}-{stamp(n.start)}@{host}",
                start=n.start,
                end=n.end,
                summary=n.title,
                description=n.message or n.title,
                url=n.url or base_url + routes.service_page_url(n.service),
                services=tuple(dict.fromkeys(g.service for g in group)),
                source=n.source,
            )
        )
    return sorted(out, key=lambda e: (e.start, e.uid))


@dataclass(frozen=True)
class Served:
    """What the calendar served last said of an event."""

    sequence: int
    digest: str
    event: Event


def remembered(served: bytes | None) -> dict[str, Served]:
    """The events of the file served last, by UID (an unfolded read of the lines this module writes)."""
    if not served:
        return {}
    lines: list[str] = []
    for raw in served.decode("utf-8", "replace").split("\r\n"):
        if raw.startswith(" ") and lines:
            lines[-1] += raw[1:]
        else:
            lines.append(raw)
    found: dict[str, Served] = {}
    fields: dict[str, str] = {}
    for line in lines:
        name, _, value = line.partition(":")
        if line == "BEGIN:VEVENT":
            fields = {}
        elif line == "END:VEVENT" and "UID" in fields:
            try:
                event = Event(
                    uid=fields["UID"],
                    start=_moment(fields["DTSTART"]),
                    end=_moment(fields["DTEND"]) if "DTEND" in fields else None,
                    summary=_untext(fields.get("SUMMARY", "")),
                    description=_untext(fields.get("DESCRIPTION", "")),
                    url=fields.get("URL", ""),
                    cancelled=fields.get("STATUS") == "CANCELLED",
                    cancelled_at=_moment(fields["X-STATUSGEN-CANCELLED"])
                    if "X-STATUSGEN-CANCELLED" in fields
                    else None,
                )
                found[event.uid] = Served(int(fields.get("SEQUENCE", "0")), fields.get("X-STATUSGEN-DIGEST", ""), event)
            except (KeyError, ValueError):
                continue  # not a line this module wrote: forgotten
        else:
            fields[name] = value
    return found


def _moment(value: str) -> datetime:
    return datetime.strptime(value + "+0000", "%Y%m%dT%H%M%SZ%z")


def _untext(value: str) -> str:
    out, escaped = [], False
    for ch in value:
        if escaped:
            out.append("\n" if ch in "nN" else ch)
            escaped = False
        elif ch == "\\":
            escaped = True
        else:
            out.append(ch)
    return "".join(out)


def with_memory(
    now_events: list[Event], served: dict[str, Served], now: datetime, limits: Mapping[str, int]
) -> list[Event]:
    """The events told, at most ``limits[service]`` of each source of a service (``capped``), with
    their SEQUENCE: the served one's, one more where it says something else; the served events
    that ended as told, as they were, for ``HORIZON`` after their end, the latest ended first;
    and the served events no longer told (left out by the cap is not that: they will still
    happen), cancelled, while still to come and for ``KEEP_CANCELLED`` at most, the first to
    start first; each of these two at most as many as the calendar's services may tell (the sum
    of ``limits``)."""
    out = []
    for event in capped(now_events, limits):
        before = served.get(event.uid)
        if before is None:
            out.append(event)
        else:
            changed = before.digest != event.digest or before.event.cancelled
            out.append(replace(event, sequence=before.sequence + int(changed)))
    told = {e.uid for e in now_events}
    untold = [before for uid, before in served.items() if uid not in told]
    ended = [b for b in untold if not b.event.cancelled and b.event.end is not None and b.event.end <= now]
    past = [replace(b.event, sequence=b.sequence) for b in ended if b.event.end and now - b.event.end < HORIZON]
    out += sorted(past, key=lambda e: (e.end, e.uid), reverse=True)[: sum(limits.values())]
    over = {b.event.uid for b in ended}
    gone = [_cancelled(before, now) for before in untold if before.event.uid not in over]
    kept = [e for e in gone if (e.end or e.start) > now and e.cancelled_at and now - e.cancelled_at < KEEP_CANCELLED]
    out += sorted(kept, key=lambda e: (e.start, e.uid))[: sum(limits.values())]
    return sorted(out, key=lambda e: (e.start, e.uid))


def capped(evts: list[Event], limits: Mapping[str, int]) -> list[Event]:
    """At most ``limits[service]`` events of each source of each service the calendar tells of
    (those of ``limits``), the first to start first: an event of several services is told while one
    of them has room, and counts for each."""
    counts: dict[tuple[str, str], int] = {}
    out = []
    for event in sorted(evts, key=lambda e: (e.start, e.uid)):
        mine = [(slug, event.source) for slug in event.services if slug in limits]
        if any(counts.get(m, 0) < limits[m[0]] for m in mine):
            out.append(event)
            for m in mine:
                counts[m] = counts.get(m, 0) + 1
    return out


def _cancelled(before: Served, now: datetime) -> Event:
    """A served event no longer told, as the calendar keeps it: cancelled (once: one more
    SEQUENCE), and since when (a file written before that was said: from now)."""
    gone = before.event
    if gone.cancelled:
        return replace(gone, sequence=before.sequence, cancelled_at=gone.cancelled_at or now)
    return replace(gone, sequence=before.sequence + 1, cancelled=True, cancelled_at=now)


def calendar(name: str, evts: list[Event], uid: str, since: datetime) -> bytes:
    """The iCalendar file: CRLF line ends, lines folded at 75 octets. With no event, its one
    component is a VFREEBUSY of no busy time (``uid`` names it; it holds since ``since``)."""
    lines = [
        "BEGIN:VCALENDAR",
        "VERSION:2.0",
        f"PRODID:{PRODID}",
        "CALSCALE:GREGORIAN",
        f"X-WR-CALNAME:{text(name)}",
    ]
    if not evts:
        lines += ["BEGIN:VFREEBUSY", f"UID:{uid}", f"DTSTAMP:{stamp(since)}", "END:VFREEBUSY"]
    for e in evts:
        lines += [
            "BEGIN:VEVENT",
            f"UID:{e.uid}",
            f"DTSTAMP:{stamp(e.start)}",  # when it was told: its start keeps the bytes stable
            f"DTSTART:{stamp(e.start)}",
            *([f"DTEND:{stamp(e.end)}"] if e.end else []),
            f"SEQUENCE:{e.sequence}",
            f"STATUS:{'CANCELLED' if e.cancelled else 'CONFIRMED'}",
            *([f"X-STATUSGEN-CANCELLED:{stamp(e.cancelled_at)}"] if e.cancelled and e.cancelled_at else []),
            f"SUMMARY:{text(e.summary)}",
            f"DESCRIPTION:{text(e.description)}",
            f"URL:{e.url}",
            "TRANSP:TRANSPARENT",
            f"X-STATUSGEN-DIGEST:{e.digest}",
            "END:VEVENT",
        ]
    lines.append("END:VCALENDAR")
    return ("\r\n".join(line for raw in lines for line in fold(raw)) + "\r\n").encode()
