"""Decision: statusgen's own incidents, from changes of a service's status.

Pure: ``advance`` takes the service's open incident (or None), its previous
and next state, and returns the incident as it should now be (or None).

* An incident opens when the status turns degraded, partial_outage or
  major_outage; it starts when the failing streak started.
* Each change of severity while it is open adds an update.
* It resolves when the status is operational again; it ends when the good
  streak began, and the last update says how long it lasted.

Severity follows the worst status: degraded -> minor, partial_outage -> major,
major_outage -> critical.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import datetime
from functools import cached_property
from typing import Any, TypeVar

from statusgen.config import ServiceConfig
from statusgen.decide.state import ServiceState, failures
from statusgen.model import BAD, STATUS_WORDS, Status
from statusgen.timeutil import human_duration, iso, parse_iso
from statusgen.vendors import VendorView

SEVERITY = {Status.DEGRADED: "minor", Status.PARTIAL_OUTAGE: "major", Status.MAJOR_OUTAGE: "critical"}
SEVERITIES = ("minor", "major", "critical")
_T = TypeVar("_T")


@dataclass(frozen=True)
class IncidentUpdate:
    at: datetime
    kind: str  # opened | severity | vendor | resolved | note
    status: str  # the service status the update reports
    message: str
    link: str | None = None  # for "vendor": the vendor's incident page
    ref: str | None = None  # for "vendor": the vendor's incident id

    def to_json(self) -> dict[str, Any]:
        return {
            "at": iso(self.at),
            "kind": self.kind,
            "status": self.status,
            "message": self.message,
            "link": self.link,
            "ref": self.ref,
        }

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> IncidentUpdate:
        return _read(
            cls,
            at=parse_iso(d["at"]),
            kind=d["kind"],
            status=d["status"],
            message=d["message"],
            link=d.get("link"),
            ref=d.get("ref"),
        )


def _read(cls: type[_T], **fields: Any) -> _T:
    """An instance of a frozen dataclass from every one of its fields, as read from the store,
    without its ``__init__`` (which sets each field through ``object.__setattr__``): reading
    7,000 incidents and their 15,000 updates (90 days of 1,000 services) took 75 -> 53 ms
    here. Only for values the dataclass made itself."""
    made = object.__new__(cls)
    made.__dict__.update(fields)
    return made


@dataclass(frozen=True)
class Incident:
    id: str
    service: str
    title: str
    severity: str
    started_at: datetime
    ended_at: datetime | None
    updates: tuple[IncidentUpdate, ...]

    @property
    def open(self) -> bool:
        return self.ended_at is None

    @property
    def updated_at(self) -> datetime:
        return self.updates[-1].at if self.updates else self.started_at

    def duration_s(self, now: datetime) -> int:
        return int(((self.ended_at or now) - self.started_at).total_seconds())

    def to_json(self) -> dict[str, Any]:
        return dict(self._json)  # a copy: the record made once (a build asks for it several times)

    @cached_property
    def _json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "service": self.service,
            "title": self.title,
            "severity": self.severity,
            "started_at": iso(self.started_at),
            "ended_at": iso(self.ended_at),
            "updates": [u.to_json() for u in self.updates],
        }

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> Incident:
        """The incident of a record (as ``to_json`` made it); a record in that exact form is kept as
        the incident's own, so that ``to_json`` need not format its times again. (A build reads
        records without making incidents: ``sitedata.Incidents``.)"""
        inc = _read(
            cls,
            id=d["id"],
            service=d["service"],
            title=d["title"],
            severity=d["severity"],
            started_at=parse_iso(d["started_at"]),
            ended_at=parse_iso(d["ended_at"]),
            updates=tuple([IncidentUpdate.from_json(u) for u in d["updates"]]),
        )
        if _as_made(d):
            inc.__dict__["_json"] = d  # what the cached property would make
        return inc


_RECORD_KEYS = {"id", "service", "title", "severity", "started_at", "ended_at", "updates"}
_UPDATE_KEYS = {"at", "kind", "status", "message", "link", "ref"}


def current_record(d: dict[str, Any]) -> dict[str, Any]:
    """A stored record in the form ``Incident.to_json`` writes it now: as it is, or, written by an
    older version, read and written again."""
    return d if _as_made(d) else Incident.from_json(d).to_json()


def _as_made(d: dict[str, Any]) -> bool:
    """Whether a record has exactly the fields ``Incident.to_json`` makes (one written by an older
    version may lack some, such as an update's ``link``). Its times need no check: records are
    written only from ``to_json``, whose times are ``iso``'s."""
    if d.keys() != _RECORD_KEYS:
        return False
    return all(u.keys() == _UPDATE_KEYS for u in d["updates"])


def incident_id(service: str, started_at: datetime) -> str:
    """Stable and unique per service: the slug and the start, to the second."""
    return f"{service}-{started_at.strftime('%Y%m%dt%H%M%S')}"


def title_for(service_name: str, status: Status) -> str:
    return f"{service_name}: {STATUS_WORDS[status]}"


def advance(current: Incident | None, prev: ServiceState, new: ServiceState, service: ServiceConfig) -> Incident | None:
    """The incident after this decision; None when there is none (and was none)."""
    basis, before = new.incident_basis, prev.incident_basis
    if current is None:
        return _open(new, service) if basis in BAD else None
    if basis in BAD and basis is not before:
        return _escalate(current, new, service.name)
    if basis not in BAD and basis is not Status.UNKNOWN:
        return _resolve(current, new)
    return current


def _open(new: ServiceState, service: ServiceConfig) -> Incident:
    start = new.since or new.observed_at
    assert start is not None
    basis = new.incident_basis
    update = IncidentUpdate(start, "opened", basis.value, opening_message(new, service))
    return Incident(
        incident_id(service.slug, start),
        service.slug,
        title_for(service.name, basis),
        SEVERITY[basis],
        start,
        None,
        (update,),
    )


def opening_message(new: ServiceState, service: ServiceConfig) -> str:
    """ "Opened after 3 failed cycles in a row: HTTPS GET check of ... timed out (10 s)." and the like."""
    what = failures(new, service) if "checks" in new.sources else ""
    if what and new.fail_streak:
        return f"Opened after {new.fail_streak} failed cycles in a row: {what}."
    return f"Opened: {new.reason}"


def _escalate(current: Incident, new: ServiceState, service_name: str) -> Incident:
    at = new.since or new.observed_at
    assert at is not None
    basis = new.incident_basis
    update = IncidentUpdate(at, "severity", basis.value, f"Now {STATUS_WORDS[basis]}: {new.reason}")
    worst = max(current.severity, SEVERITY[basis], key=SEVERITIES.index)
    return replace(current, severity=worst, title=title_for(service_name, basis), updates=current.updates + (update,))


def _resolve(current: Incident, new: ServiceState) -> Incident:
    end = new.since or new.observed_at
    assert end is not None
    lasted = human_duration(end - current.started_at)
    message = (
        f"Closed after {lasted}: maintenance began."
        if new.incident_basis is Status.MAINTENANCE
        else f"Recovered after {lasted}."
    )
    update = IncidentUpdate(end, "resolved", new.incident_basis.value, message)
    return replace(current, ended_at=end, updates=current.updates + (update,))


def link_vendor(incident: Incident, view: VendorView, at: datetime) -> Incident:
    """Add a "vendor" update for each vendor incident not yet linked to our open incident."""
    linked = {u.ref for u in incident.updates if u.kind == "vendor"}
    new = [
        IncidentUpdate(
            at,
            "vendor",
            incident.updates[-1].status,
            f"The vendor acknowledged it: {v.title} ({v.status}).",
            v.url,
            v.id,
        )
        for v in view.incidents
        if v.id not in linked
    ]
    return replace(incident, updates=incident.updates + tuple(new)) if new else incident
