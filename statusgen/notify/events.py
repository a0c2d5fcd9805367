"""Decision: what to tell the notifiers after a run, and how to send what waits. Pure.

``cycle_events`` takes what the run decided (the incidents before and after it, the vendors'
views before and after, the maintenance windows) and returns the events a person would want to
hear of, each with an id that names it for good:

* **incident.opened / escalated / noted / resolved**: one per update this run added to one of
  our incidents (its opening, a change of status while open, an operator's note, its end). The
  id is the incident's and the update's place in it, so deciding the same update again (a re-run)
  makes the same event, which the outbox keeps once.
* **vendor.incident**: an incident the vendor posts, the first time a fresh view of its page
  shows it. A vendor's incident is told of once, whether or not we see a problem ourselves.
* **maintenance.announced**: a window (configured, from the notes folder, or announced by the
  vendor) that readers are now told of before it begins (``decide.maintenance``: from
  ``HORIZON`` ahead). It is found again each run until it begins; its id names the window, so
  the outbox keeps it once.
* **maintenance.started**: a window (configured, or announced by the vendor) that began since
  the previous run.
* **maintenance.ended**: a configured window that ended since the previous run, or a vendor's
  in progress that a fresh view of its page no longer shows, with the status the run found its
  service in.

``queue`` says which notifier wants which event (its services, categories, events and least
severity); ``plan`` what one notifier is sent now of what waits for it:

* one message per event, in order;
* one digest of them all when more than ``digest_after`` wait (many services changed at once,
  or the notifier missed many while it was down), or when any waited past ``catch_up``: a
  person wants a summary of old news, not a burst of it;
* an event that waited past ``GIVE_UP`` is dropped: a notifier gone for a week is told nothing
  of that week.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

import orjson

from statusgen import routes
from statusgen.config import Config, NotifyConfig, ServiceConfig
from statusgen.decide.incidents import SEVERITY, Incident, IncidentUpdate
from statusgen.decide.maintenance import HORIZON, Notice, announced, ended, scheduled
from statusgen.decide.operator import manual_incident, with_notes
from statusgen.model import SEVERITIES, STATUS_WORDS, Outcome, Status
from statusgen.store import Notification
from statusgen.timeutil import iso, parse_iso, parse_time
from statusgen.vendors import VendorIncident, VendorView
from statusgen.vendors.model import VendorObservation

#: The kind of an incident's update -> the event it makes ("vendor" updates: see vendor.incident).
UPDATE_EVENTS = {
    "opened": "incident.opened",
    "severity": "incident.escalated",
    "note": "incident.noted",
    "resolved": "incident.resolved",
}
GIVE_UP = timedelta(days=7)


@dataclass(frozen=True)
class Event:
    """Something a notifier may be told of. ``title`` and ``message`` may hold a vendor's text:
    whoever writes them escapes them for the target. ``link`` is a path of the site (``/...``)
    or a vendor's page; ``incident`` our incident's record as it stood."""

    id: str
    kind: str
    service: str
    at: datetime
    status: str
    severity: str | None
    title: str
    message: str
    since: datetime | None = None
    link: str | None = None
    incident: dict[str, Any] | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "kind": self.kind,
            "service": self.service,
            "at": iso(self.at),
            "status": self.status,
            "severity": self.severity,
            "title": self.title,
            "message": self.message,
            "since": iso(self.since),
            "link": self.link,
            "incident": self.incident,
        }

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> Event:
        return cls(
            d["id"],
            d["kind"],
            d["service"],
            parse_time(d["at"]),
            d["status"],
            d["severity"],
            d["title"],
            d["message"],
            parse_iso(d["since"]),
            d["link"],
            d["incident"],
        )


# -- what happened -------------------------------------------------------------------------------


def incident_events(
    before: Mapping[str, Incident], changed: Sequence[Incident], names: Mapping[str, str]
) -> list[Event]:
    """One event per update this run added to an incident (``changed``, against ``before``: the
    open incidents as the run found them). ``names``: the services' names, by slug."""
    out = []
    for incident in changed:
        prior = before.get(incident.service)
        known = len(prior.updates) if prior is not None and prior.id == incident.id else 0
        name = names.get(incident.service, incident.service)
        for index, update in enumerate(incident.updates[known:], known):
            if update.kind in UPDATE_EVENTS:
                out.append(_incident_event(incident, index, update, name, None))
    return out


def manual_events(config: Config, now: datetime) -> list[Event]:
    """One event per update of the operator's manual incidents (the notes folder, with the notes
    on them) made in the last ``GIVE_UP`` and by ``now``. They are found again every run: the
    outbox keeps an event once (its id names it for good), so each is told once, by the first run
    that finds it in its file."""
    out = []
    for m in config.operator.incidents:
        name = config.by_slug[m.service].name  # the configuration holds only configured services' files
        incident = with_notes(manual_incident(m, name), config.operator.notes_on(m.id))
        for index, update in enumerate(incident.updates):
            if update.kind in UPDATE_EVENTS and now - GIVE_UP < update.at <= now:
                out.append(_incident_event(incident, index, update, name, incident.title))
    return out


def _incident_event(
    incident: Incident, index: int, update: IncidentUpdate, service_name: str, headline: str | None
) -> Event:
    """``headline``: the title while the incident is open (the operator's, for a manual incident);
    by default the service's name and the update's status."""
    kind = UPDATE_EVENTS[update.kind]
    status = Status(update.status)
    if kind == "incident.resolved":
        title = f"{service_name}: resolved"
    else:
        title = headline or f"{service_name}: {STATUS_WORDS[status]}"
    return Event(
        f"{incident.id}/{index}",
        kind,
        incident.service,
        update.at,
        status.value,
        incident.severity,
        title,
        update.message,
        incident.started_at,
        routes.incident_page_url(incident.service, incident.id),
        incident.to_json(),
    )


def vendor_events(
    config: Config, before: Mapping[str, dict[str, Any] | None], observations: Mapping[str, VendorObservation]
) -> list[Event]:
    """The incidents a fresh view of a vendor's page shows that its previous view (``before``,
    as published) did not."""
    out = []
    for svc in config.services:
        fresh = _fresh(observations.get(svc.slug))
        if fresh is None:
            continue
        view, at = fresh
        previous = before.get(svc.slug)
        known = {i["id"] for i in previous["incidents"]} if previous else set()
        out += [_vendor_event(svc, v, at) for v in view.incidents if v.id not in known]
    return out


def _fresh(obs: VendorObservation | None) -> tuple[VendorView, datetime] | None:
    """The view a fetch of this run read, and when: a failed fetch shows nothing new."""
    if obs is None or obs.view is None or obs.last_ok_at is None or obs.outcome is not Outcome.OK:
        return None
    return obs.view, obs.last_ok_at


def _vendor_event(svc: ServiceConfig, v: VendorIncident, now: datetime) -> Event:
    impact = Status(v.impact) if v.impact in SEVERITY else None
    return Event(
        f"vendor/{svc.slug}/{v.id}",
        "vendor.incident",
        svc.slug,
        v.started_at or now,
        impact.value if impact else Status.UNKNOWN.value,
        SEVERITY[impact] if impact else SEVERITIES[0],
        f"{svc.name}: the vendor reports an incident",
        f"{v.title} ({v.status})",
        v.started_at,
        v.url,
    )


def maintenance_events(
    config: Config,
    since: datetime,
    now: datetime,
    observations: Mapping[str, VendorObservation],
    statuses: Mapping[str, str],
) -> list[Event]:
    """The maintenance windows that began after ``since`` and by ``now``, and the configured ones
    that ended then; ``statuses``: each service's status as the run decided it (an end tells it)."""
    out = []
    for svc in config.services:
        obs = observations.get(svc.slug)
        view = obs.view.to_json() if obs is not None and obs.view is not None else None
        for notice in scheduled(svc, now) + announced(svc.slug, view):
            if since < notice.start <= now:
                out.append(_maintenance_event(svc, notice))
            elif now < notice.start <= now + HORIZON:  # as the pages tell it ahead (decide.maintenance)
                out.append(_announced_event(svc, notice, now))
        for n in ended(svc, since, now):
            assert n.end is not None  # a configured window that ended
            message, link = f"{n.title}, from {iso(n.start)}.", routes.service_page_url(svc.slug)
            out.append(_ended(svc, f"{n.source}/{iso(n.start)}", n.end, statuses, message, n.start, link))
    return out


def _maintenance_event(svc: ServiceConfig, notice: Notice) -> Event:
    until = f" until {iso(notice.end)}" if notice.end else ""
    return Event(
        f"maintenance/{svc.slug}/{notice.source}/{iso(notice.start)}",
        "maintenance.started",
        svc.slug,
        notice.start,
        Status.MAINTENANCE.value,
        None,
        f"{svc.name}: maintenance began",
        f"{notice.title}{until}.",
        notice.start,
        notice.url or routes.service_page_url(svc.slug),
    )


def _announced_event(svc: ServiceConfig, notice: Notice, now: datetime) -> Event:
    """A window readers are told of ahead (``at``: the run that first tells it)."""
    until = f" until {iso(notice.end)}" if notice.end else ""
    return Event(
        f"maintenance/{svc.slug}/{notice.source}/{iso(notice.start)}/announced",
        "maintenance.announced",
        svc.slug,
        now,
        Status.MAINTENANCE.value,
        None,
        f"{svc.name}: maintenance planned",
        f"{notice.title}, from {iso(notice.start)}{until}.",
        notice.start,
        notice.url or routes.service_page_url(svc.slug),
    )


def _ended(
    svc: ServiceConfig,
    key: str,
    at: datetime,
    statuses: Mapping[str, str],
    message: str,
    since: datetime | None,
    link: str | None,
) -> Event:
    """A maintenance of ``svc`` ended (``key`` names it among the service's), with the status the
    run found the service in."""
    return Event(
        f"maintenance/{svc.slug}/{key}/ended",
        "maintenance.ended",
        svc.slug,
        at,
        statuses.get(svc.slug, Status.UNKNOWN.value),
        None,
        f"{svc.name}: maintenance ended",
        message,
        since,
        link,
    )


def vendor_maintenance_ended(
    config: Config,
    before: Mapping[str, dict[str, Any] | None],
    observations: Mapping[str, VendorObservation],
    statuses: Mapping[str, str],
) -> list[Event]:
    """The maintenance in progress in a vendor's previous view (``before``, as published) that a
    fresh view of its page no longer shows, in progress or upcoming: its page drops it as it ends."""
    out = []
    for svc in config.services:
        fresh, previous = _fresh(observations.get(svc.slug)), before.get(svc.slug)
        if fresh is None or not previous:
            continue
        view, at = fresh
        shown = {m.id for m in (*view.maintenance_active, *view.maintenance_upcoming)}
        for m in previous["maintenance_active"]:
            if m["id"] not in shown:
                message = f"{m['title']} (the vendor's page no longer shows it)."
                out.append(_ended(svc, f"vendor/{m['id']}", at, statuses, message, parse_iso(m["starts_at"]), m["url"]))
    return out


def cycle_events(
    config: Config,
    before: Mapping[str, Incident],
    changed: Sequence[Incident],
    views_before: Mapping[str, dict[str, Any] | None],
    observations: Mapping[str, VendorObservation],
    statuses: Mapping[str, str],
    since: datetime,
    now: datetime,
) -> list[Event]:
    """Every event of a run, in the order a reader would want them; ``statuses``: each service's
    status as the run decided it."""
    found = (
        incident_events(before, changed, {s.slug: s.name for s in config.services})
        + manual_events(config, now)
        + vendor_events(config, views_before, observations)
        + maintenance_events(config, since, now, observations, statuses)
        + vendor_maintenance_ended(config, views_before, observations, statuses)
    )
    return sorted(found, key=lambda e: (e.at, e.service, e.id))


# -- who hears of it -----------------------------------------------------------------------------


def wants(notifier: NotifyConfig, event: Event, category: str | None) -> bool:
    """Whether the notifier asked for this event: its kind, its service or category, its severity."""
    if event.kind not in notifier.events:
        return False
    if notifier.services and event.service not in notifier.services:
        return False
    if notifier.categories and category not in notifier.categories:
        return False
    return severe_enough(event, notifier.min_severity)


def severe_enough(event: Event, least: str) -> bool:
    """Whether an event is of ``least`` severity or worse: maintenance (no severity) always is."""
    return event.severity is None or SEVERITIES.index(event.severity) >= SEVERITIES.index(least)


def queue(config: Config, events: Sequence[Event], now: datetime) -> list[Notification]:
    """The outbox rows of these events: one per event and notifier that wants it."""
    out = []
    for event in events:
        svc = config.by_slug.get(event.service)
        category = svc.category if svc else None
        body = orjson.dumps(event.to_json()).decode()
        out += [Notification(event.id, n.name, now, body) for n in config.notifiers if wants(n, event, category)]
    return out


# -- what is sent now ----------------------------------------------------------------------------


@dataclass(frozen=True)
class Plan:
    """What one notifier is sent in this run: each batch is one message (more than one event: a
    digest); ``dropped`` waited too long to be sent at all."""

    batches: tuple[tuple[Notification, ...], ...]
    dropped: tuple[Notification, ...]


def plan(notifier: NotifyConfig, waiting: Sequence[Notification], now: datetime) -> Plan:
    """How the events waiting for ``notifier`` (oldest first) are sent now."""
    dropped = tuple(n for n in waiting if now - n.queued_at > GIVE_UP)
    due = [n for n in waiting if now - n.queued_at <= GIVE_UP]
    if not due:
        return Plan((), dropped)
    late = any(now - n.queued_at > timedelta(seconds=notifier.catch_up) for n in due)
    if late or len(due) > notifier.digest_after:
        return Plan((tuple(due),), dropped)
    return Plan(tuple((n,) for n in due), dropped)
