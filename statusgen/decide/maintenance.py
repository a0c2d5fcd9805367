"""Decision: which maintenance readers are told about, in progress or upcoming. Pure.

Two sources: the windows the operator configured (one-off, or the next
occurrence of a recurring one) and what a vendor announces on its status
page. A window in progress is told until it ends; an upcoming one from
``HORIZON`` before it starts. A configured window that ended is told in the
feeds as completed for ``HORIZON`` after its end (``ended``); a vendor's is
gone from its page once it ends, and from the feeds with it.

A notice is one service's: a planned maintenance of several services is a
notice for each, all with the maintenance's ``key``. Readers are told of the
maintenance once, listing its services (``by_maintenance``).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from statusgen.config import ServiceConfig
from statusgen.config.cron import last_fire, next_fire
from statusgen.timeutil import iso, parse_iso

HORIZON = timedelta(days=14)  # how far ahead a window is announced


@dataclass(frozen=True)
class Notice:
    service: str
    title: str
    start: datetime
    end: datetime | None  # None: the vendor gave no end
    source: str  # "schedule" (configured), "operator" (a file of the notes folder) or "vendor" (on its page)
    url: str | None = None  # the vendor's page about it
    message: str | None = None  # the operator's words about it (Markdown)
    ref: str | None = None  # the file of the notes folder it comes from

    @property
    def key(self) -> str:
        """Names the maintenance for good (feed entries): the operator's file, else its service and start."""
        return self.ref.removesuffix(".md") if self.ref else f"{self.service}/{self.start:%Y%m%dt%H%M%S}"

    def in_progress(self, now: datetime) -> bool:
        return self.start <= now

    def over(self, now: datetime) -> bool:
        return self.end is not None and self.end <= now

    def to_json(self, now: datetime, service_name: str) -> dict[str, Any]:
        return {
            "service": self.service,
            "service_name": service_name,
            "title": self.title,
            "status": "in_progress" if self.in_progress(now) else "upcoming",
            "start": iso(self.start),
            "end": iso(self.end),
            "source": self.source,
            "url": self.url,
            "message": self.message,
        }


def scheduled(svc: ServiceConfig, now: datetime) -> list[Notice]:
    """The configured windows in progress or starting within ``HORIZON``."""
    out = []
    for window in svc.maintenance:
        occurrence = window.occurrence(now)
        if occurrence is None and window.start is not None and window.end is not None and window.start > now:
            occurrence = (window.start, window.end)
        elif occurrence is None and window.schedule is not None and window.duration is not None:
            began = next_fire(window.schedule, now, HORIZON.total_seconds())
            occurrence = (began, began + timedelta(seconds=window.duration)) if began else None
        if occurrence is not None:
            start, end = occurrence
            out.append(Notice(svc.slug, window.title, start, end, window.source, None, window.message, window.ref))
    return out


def ended(svc: ServiceConfig, since: datetime, now: datetime) -> list[Notice]:
    """The configured windows that ended after ``since`` and by ``now``: a one-off window, or the
    last occurrence of a recurring one to have ended."""
    out = []
    for window in svc.maintenance:
        occurrence = None
        if window.start is not None and window.end is not None:
            occurrence = (window.start, window.end)
        elif window.schedule is not None and window.duration is not None:
            span = timedelta(seconds=window.duration)
            began = last_fire(window.schedule, now - span, (now - since).total_seconds())
            occurrence = (began, began + span) if began else None
        if occurrence is not None and since < occurrence[1] <= now:
            start, end = occurrence
            out.append(Notice(svc.slug, window.title, start, end, window.source, None, window.message, window.ref))
    return out


def announced(service: str, view: dict[str, Any] | None) -> list[Notice]:
    """What a vendor's view (as published in the service record) announces: in progress or upcoming."""
    if not view:
        return []
    out = []
    for m in view["maintenance_active"] + view["maintenance_upcoming"]:
        start = parse_iso(m["starts_at"])
        if start is not None:  # a window with no start cannot be placed in time
            out.append(Notice(service, m["title"], start, parse_iso(m["ends_at"]), "vendor", m["url"]))
    return out


def by_maintenance(notices: Iterable[Notice]) -> list[tuple[Notice, ...]]:
    """The notices of each maintenance (those of one ``key``), in the order the first of each is
    told: a planned maintenance of several services is one maintenance, with a notice per service."""
    found: dict[str, list[Notice]] = {}
    for n in notices:
        found.setdefault(n.key, []).append(n)
    return [tuple(group) for group in found.values()]


def told(notices: Iterable[Notice], now: datetime) -> list[Notice]:
    """The notices readers see: not over, starting within ``HORIZON``; in progress first, then by start."""
    shown = [n for n in notices if (n.end is None or n.end > now) and n.start <= now + HORIZON]
    return sorted(shown, key=lambda n: (not n.in_progress(now), n.start, n.service, n.title))
