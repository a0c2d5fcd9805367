"""The normalized view of a vendor's published status.

Every adapter turns its vendor's payload into one ``VendorView``. Statuses are
on our own scale (``STATUSES``); the vendor's own words survive only where a
field says so (``VendorIncident.status``).

A component's ``status`` is its vendor's current word for it. An incident's
``impact`` is its worst (vendors keep the peak there), and its ``affected``
components are what its latest update says of each: neither overrides a
component's own status, which is why a narrowed view (``narrow``) is the worst
current status of its components. All datetimes are timezone-aware
UTC, truncated to whole seconds, so a view compares and serializes stably.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from statusgen.model import Outcome

#: Our status scale, from best to worst; ``unknown`` stands apart.
SEVERITY: tuple[str, ...] = (
    "operational",
    "maintenance",
    "degraded",
    "partial_outage",
    "major_outage",
)
UNKNOWN = "unknown"
STATUSES: tuple[str, ...] = (*SEVERITY, UNKNOWN)

#: What an open incident does to a page, on our scale ("none": nothing visible).
IMPACTS: tuple[str, ...] = ("none", "degraded", "partial_outage", "major_outage")

MAINTENANCE_STATUSES: tuple[str, ...] = ("in_progress", "scheduled", "completed")


def worst_status(statuses: Iterable[str]) -> str:
    """The worst known status; ``unknown`` only when nothing else is known.

    An empty input is ``operational``: nothing reported means nothing wrong.
    """
    seen = list(statuses)
    known = [s for s in seen if s in SEVERITY]
    if known:
        return max(known, key=SEVERITY.index)
    return UNKNOWN if seen else "operational"


def status_from_impacts(impacts: Iterable[str]) -> str:
    """The status of a component that reports none itself, from the events that name it."""
    return worst_status(i for i in impacts if i != "none")


def rfc3339(moment: datetime | None) -> str | None:
    """``2026-11-22T20:02:00Z``: UTC, whole seconds, or None."""
    if moment is None:
        return None
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


@dataclass(frozen=True)
class VendorComponent:
    """One component (a service, feature or monitor) as the vendor lists it, with its current status.

    ``uptime`` holds the uptime percentages a monitoring page publishes for it, by window
    (``day``, ``week``, ``month``, ``year``, ``all``); pages that publish none leave it empty.
    """

    id: str
    name: str
    status: str
    group: str | None
    uptime: tuple[tuple[str, float], ...] = ()

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "name": self.name,
            "status": self.status,
            "group": self.group,
            "uptime": dict(self.uptime),
        }


@dataclass(frozen=True)
class AffectedComponent:
    """A component as an incident's latest update left it (``status`` on our scale)."""

    id: str
    name: str | None
    status: str

    def to_json(self) -> dict[str, Any]:
        return {"id": self.id, "name": self.name, "status": self.status}


@dataclass(frozen=True)
class VendorIncident:
    """An open incident. ``impact`` is its worst; ``components`` holds the ids of the components
    it names (empty, with no ``affected`` either, means the whole page); ``affected`` is what its
    latest update says of each component it touches now."""

    id: str
    title: str
    impact: str
    status: str
    started_at: datetime | None
    updated_at: datetime | None
    url: str | None
    components: tuple[str, ...]
    affected: tuple[AffectedComponent, ...] = ()

    def touches(self) -> frozenset[str]:
        """The ids of the components it names or its latest update touches (empty: the whole page)."""
        return frozenset(self.components) | {a.id for a in self.affected}

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "title": self.title,
            "impact": self.impact,
            "status": self.status,
            "started_at": rfc3339(self.started_at),
            "updated_at": rfc3339(self.updated_at),
            "url": self.url,
            "components": list(self.components),
            "affected_components": [a.to_json() for a in self.affected],
        }


@dataclass(frozen=True)
class VendorMaintenance:
    """A maintenance window. ``components`` holds component ids; empty means the whole page."""

    id: str
    title: str
    status: str
    starts_at: datetime | None
    ends_at: datetime | None
    url: str | None
    components: tuple[str, ...]

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "title": self.title,
            "status": self.status,
            "starts_at": rfc3339(self.starts_at),
            "ends_at": rfc3339(self.ends_at),
            "url": self.url,
            "components": list(self.components),
        }


@dataclass(frozen=True)
class VendorView:
    """What one vendor source says right now, on our scale."""

    format: str
    status: str
    description: str | None
    components: tuple[VendorComponent, ...]
    incidents: tuple[VendorIncident, ...]
    maintenance_active: tuple[VendorMaintenance, ...]
    maintenance_upcoming: tuple[VendorMaintenance, ...]
    updated_at: datetime | None
    page_url: str | None

    @classmethod
    def of_components(
        cls, fmt: str, status: str, description: str | None, components: tuple[VendorComponent, ...]
    ) -> VendorView:
        """A view made of components alone: no incidents, no maintenance, no times of its own."""
        return cls(fmt, status, description, components, (), (), (), None, None)

    def to_json(self) -> dict[str, Any]:
        return {
            "format": self.format,
            "status": self.status,
            "description": self.description,
            "components": [c.to_json() for c in self.components],
            "incidents": [i.to_json() for i in self.incidents],
            "maintenance_active": [m.to_json() for m in self.maintenance_active],
            "maintenance_upcoming": [m.to_json() for m in self.maintenance_upcoming],
            "updated_at": rfc3339(self.updated_at),
            "page_url": self.page_url,
        }


def computed_status(
    components: Iterable[VendorComponent],
    incidents: Iterable[VendorIncident],
    maintenance_active: Iterable[VendorMaintenance],
) -> str:
    """The status that components, open incidents and active maintenance add up to.

    An incident's impact counts only where no listed component carries its current effect (it
    names none, or none we list): its impact is its worst, and the components say where it
    stands now.
    """
    listed = list(components)
    ids = {c.id for c in listed}
    statuses = [c.status for c in listed]
    statuses += [i.impact for i in incidents if i.impact != "none" and ids.isdisjoint(i.touches())]
    statuses += ["maintenance" for _ in maintenance_active]
    return worst_status(statuses)


# -- what the vendor stage hands on: the store's row of a source, and a run's observation of it --


@dataclass(frozen=True)
class VendorRow:
    """What the store keeps per service's vendor source."""

    service: str
    url: str  # the source's public URL: no userinfo, query or fragment
    etag: str | None = None
    last_modified: str | None = None
    body: bytes | None = None  # the last body that parsed
    last_ok_at: datetime | None = None
    fetched_at: datetime | None = None
    outcome: str | None = None
    detail: str | None = None
    view_json: str | None = None  # the last good view, as published


@dataclass(frozen=True)
class VendorObservation:
    view: VendorView | None  # the last view read successfully (None: never)
    outcome: Outcome  # this cycle's fetch (or parse) outcome
    last_ok_at: datetime | None  # when a fetch last succeeded (200 or 304, and parsed)
    detail: str | None = None  # a parse error's message, for the note

    def stale(self, now: datetime, stale_after_s: float) -> bool:
        return is_stale(self.last_ok_at, now, stale_after_s)


def is_stale(last_ok_at: datetime | None, now: datetime, stale_after_s: float) -> bool:
    """Whether a vendor's view is too old to use: counted from our last successful fetch, not from
    the vendor's own last update (a quiet page may not change for months and still be true)."""
    return last_ok_at is None or now - last_ok_at > timedelta(seconds=stale_after_s)
