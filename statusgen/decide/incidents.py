"""Decision: statusgen's own incidents, from changes of a service's status.

Pure: ``advance`` takes the service's open incident (or None), its previous
and next state, and returns the incident as it should now be (or None).

* An incident opens when the status turns degraded, partial_outage or
  major_outage; it starts when the failing streak started.
* Each change of severity while it is open adds an update.
* It resolves when the status is operational again (or maintenance begins);
  it ends when the good streak began, and the last update says how long it
  lasted.
* It follows our own state only (``incident_basis``): never a vendor's
  status alone, never a result set aside.

Severity follows the worst status: degraded -> minor, partial_outage -> major,
major_outage -> critical.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any

from statusgen.config import ServiceConfig
from statusgen.decide.state import ServiceState, failures
from statusgen.i18n import Said, Value, said, said_duration, said_plural
from statusgen.model import BAD, SEVERITIES, STATUS_WORDS, Status
from statusgen.timeutil import iso, parse_iso, parse_time
from statusgen.vendors import VendorView

SEVERITY = {Status.DEGRADED: "minor", Status.PARTIAL_OUTAGE: "major", Status.MAJOR_OUTAGE: "critical"}


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
            "message": _json(self.message),
            "link": self.link,
            "ref": self.ref,
        }

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> IncidentUpdate:
        return cls(parse_time(d["at"]), d["kind"], d["status"], _words(d["message"]), d.get("link"), d.get("ref"))


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
        return {
            "id": self.id,
            "service": self.service,
            "title": _json(self.title),
            "severity": self.severity,
            "started_at": iso(self.started_at),
            "ended_at": iso(self.ended_at),
            "updates": [u.to_json() for u in self.updates],
        }

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> Incident:
        """The incident of a record (``to_json``'s, or an older version's: missing fields are null)."""
        return cls(
            d["id"],
            d["service"],
            _words(d["title"]),
            d["severity"],
            parse_time(d["started_at"]),
            parse_iso(d["ended_at"]),
            tuple(IncidentUpdate.from_json(u) for u in d["updates"]),
        )


_RECORD_KEYS = {"id", "service", "title", "severity", "started_at", "ended_at", "updates"}
_UPDATE_KEYS = {"at", "kind", "status", "message", "link", "ref"}


def current_record(d: dict[str, Any]) -> dict[str, Any]:
    """A stored record in the form ``Incident.to_json`` writes it now: as it is (a build reads
    every record, and most are), or, written by an older version, read and written again."""
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


def title_for(service_name: str, status: Status) -> Said:
    return said("%(service)s: %(status)s", service=service_name, status=said(STATUS_WORDS[status]))


def advance(
    current: Incident | None, prev: ServiceState, new: ServiceState, service: ServiceConfig, now: datetime
) -> Incident | None:
    """The incident after this decision; None when there is none (and was none).

    It follows ``incident_basis``, our own state alone (never the vendor's, see merge.py).
    """
    basis, before = new.incident_basis, prev.incident_basis
    if current is None:
        return _open(new, service, now) if basis in BAD else None
    if basis in BAD and basis is not before:
        return _escalate(current, new, service.name, now)
    if basis not in BAD and basis is not Status.UNKNOWN:
        end = min(max(_own_since(new, now), current.started_at), now)  # never before it started
        lasted = said_duration((end - current.started_at).total_seconds())
        if basis is Status.MAINTENANCE:
            return _resolve(current, end, basis, said("Closed after %(lasted)s: maintenance began.", lasted=lasted))
        return _resolve(current, end, basis, said("Recovered after %(lasted)s.", lasted=lasted))
    if service.paused:
        return _resolve(current, now, basis, said("Closed: the operator paused the checks."))
    if not service.checks:
        # Opened by an older version from a vendor's status alone: we no longer follow one.
        closed = said("Closed: statusgen no longer opens incidents from a vendor's status.")
        return _resolve(current, now, basis, closed)
    return current


def _own_since(new: ServiceState, now: datetime) -> datetime:
    """When our own state began (the published ``since`` may be the vendor's)."""
    return new.own_since or new.observed_at or now


def _open(new: ServiceState, service: ServiceConfig, now: datetime) -> Incident:
    start = _own_since(new, now)
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


def opening_message(new: ServiceState, service: ServiceConfig) -> Said:
    """ "Opened after 3 failed cycles in a row: HTTPS GET check of ... timed out (10 s)." and the like."""
    what = failures(new, service) if "checks" in new.sources else ""
    if what and new.fail_streak:
        return said_plural(
            "Opened after %(streak)s failed cycle in a row: %(failing)s.",
            "Opened after %(streak)s failed cycles in a row: %(failing)s.",
            new.fail_streak,
            streak=new.fail_streak,
            failing=what,
        )
    return said("Opened: %(reason)s", reason=new.reason)


def _escalate(current: Incident, new: ServiceState, service_name: str, now: datetime) -> Incident:
    at = max(_own_since(new, now), current.updated_at)
    basis = new.incident_basis
    now_said = said("Now %(status)s: %(reason)s", status=said(STATUS_WORDS[basis]), reason=new.reason)
    update = IncidentUpdate(at, "severity", basis.value, now_said)
    worst = max(current.severity, SEVERITY[basis], key=SEVERITIES.index)
    return replace(current, severity=worst, title=title_for(service_name, basis), updates=current.updates + (update,))


def _resolve(current: Incident, end: datetime, status: Status, message: str) -> Incident:
    update = IncidentUpdate(end, "resolved", status.value, message)
    return replace(current, ended_at=end, updates=current.updates + (update,))


def link_vendor(incident: Incident, view: VendorView, at: datetime) -> Incident:
    """Add a "vendor" update for each vendor incident not yet linked to our open incident."""
    linked = {u.ref for u in incident.updates if u.kind == "vendor"}
    new = [
        IncidentUpdate(
            at,
            "vendor",
            incident.updates[-1].status,
            said("The vendor acknowledged it: %(title)s (%(status)s).", title=v.title, status=v.status),
            v.url,
            v.id,
        )
        for v in view.incidents
        if v.id not in linked
    ]
    return replace(incident, updates=incident.updates + tuple(new)) if new else incident


def _json(words: str) -> Any:
    """Words as the record keeps them: a ``Said`` as how it was made, so that every language can
    say it again; the operator's words as they are."""
    return words.to_json() if isinstance(words, Said) else words


def _words(kept: Value | dict[str, Any]) -> str:
    return kept if isinstance(kept, str) else Said.from_json(kept)  # type: ignore[return-value]
