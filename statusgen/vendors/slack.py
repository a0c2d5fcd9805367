"""Slack status API v2 (``https://slack-status.com/api/v2.0.0/current``).

The payload lists only active events, not Slack's services, so the
components are Slack's published service list (``SERVICES``) plus any other
service an event names; a service is operational unless an event names it.
Slack services have no ids: the name is the id.

Mapping to our scale:

* event type: outage -> major_outage, incident -> degraded,
  notice -> none (informational); maintenance events are maintenance.
* event status: active (and anything unknown) is open, scheduled is upcoming
  maintenance, resolved / completed is left out. The API gives no planned
  window for maintenance, so its start and end are null.
* page status: computed from components, open incidents and active maintenance.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from statusgen.vendors._payload import Node, load_json
from statusgen.vendors.model import (
    AffectedComponent,
    VendorComponent,
    VendorIncident,
    VendorMaintenance,
    VendorView,
    computed_status,
    status_from_impacts,
)

FORMAT = "slack"
PAGE_URL = "https://status.slack.com"

SERVICES: tuple[str, ...] = (
    "Login/SSO",
    "Connectivity",
    "Messaging",
    "Files",
    "Notifications",
    "Calls",
    "Huddles",
    "Search",
    "Link Previews",
    "Workspace/Org Administration",
    "Apps/Integrations/APIs",
    "Workflows",
    "Canvases",
)
IMPACT = {"outage": "major_outage", "incident": "degraded", "notice": "none"}
CLOSED = frozenset({"resolved", "completed", "cancelled"})


def parse(data: Any) -> VendorView:
    """Read a Slack ``current`` payload (bytes, text or decoded JSON)."""
    root = load_json(FORMAT, data)
    root["status"].word()  # required ("ok", "active"...), though the events tell more
    events = [e for e in root.get("active_incidents").items_or_none() if _is_open(e)]
    incidents = tuple(_incident(e) for e in events if not _is_maintenance(e))
    windows = [_window(e) for e in events if _is_maintenance(e)]
    active = tuple(w for w in windows if w.status == "in_progress")
    components = _components(incidents, active)
    return VendorView(
        format=FORMAT,
        status=computed_status(components, incidents, active),
        description=None,
        components=components,
        incidents=incidents,
        maintenance_active=active,
        maintenance_upcoming=tuple(w for w in windows if w.status == "scheduled"),
        updated_at=root.get("date_updated").time_or_none(),
        page_url=PAGE_URL,
    )


def _is_open(event: Node) -> bool:
    return event["status"].word() not in CLOSED


def _is_maintenance(event: Node) -> bool:
    return event["type"].word() == "maintenance" or event["status"].word() == "scheduled"


def _services(event: Node) -> tuple[str, ...]:
    return tuple(s.text() for s in event.get("services").items_or_none())


def _incident(event: Node) -> VendorIncident:
    impact = IMPACT.get(event["type"].word(), "degraded")
    return VendorIncident(
        id=event["id"].ident(),
        title=event["title"].text(),
        impact=impact,
        status=event["status"].word(),
        started_at=event.get("date_created").time_or_none(),
        updated_at=event.get("date_updated").time_or_none(),
        url=event.get("url").link_or_none(),
        components=_services(event),
        # Slack's events carry no per-update status: their type is their current word.
        affected=tuple(AffectedComponent(s, s, status_from_impacts([impact])) for s in _services(event)),
    )


def _window(event: Node) -> VendorMaintenance:
    scheduled = event["status"].word() == "scheduled"
    return VendorMaintenance(
        id=event["id"].ident(),
        title=event["title"].text(),
        status="scheduled" if scheduled else "in_progress",
        starts_at=None,
        ends_at=None,
        url=event.get("url").link_or_none(),
        components=_services(event),
    )


def _components(
    incidents: Iterable[VendorIncident], active: Iterable[VendorMaintenance]
) -> tuple[VendorComponent, ...]:
    hit: dict[str, list[str]] = {name: [] for name in SERVICES}
    for incident in incidents:
        for name in incident.components:
            hit.setdefault(name, []).append(incident.impact)
    for window in active:
        for name in window.components:
            hit.setdefault(name, []).append("maintenance")
    return tuple(_component(name, statuses) for name, statuses in hit.items())


def _component(name: str, statuses: list[str]) -> VendorComponent:
    return VendorComponent(id=name, name=name, status=status_from_impacts(statuses), group=None)
