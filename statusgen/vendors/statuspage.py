"""Atlassian Statuspage v2 (and incident.io's Statuspage-compatible API).

Reads ``/api/v2/summary.json`` and also the narrower ``incidents.json``,
``scheduled-maintenances.json``, ``components.json`` and ``status.json``: they
share one shape, each with some of the top-level keys. incident.io-hosted
pages serve the same summary without ``scheduled_maintenances``, without
incident ``components`` (an incident then affects the whole page) and
without ``shortlink``/``started_at``.

Mapping to our scale:

* component status: operational, degraded_performance -> degraded,
  partial_outage, major_outage, under_maintenance -> maintenance;
  anything else -> unknown.
* page indicator: none -> operational, minor -> degraded,
  major -> partial_outage, critical -> major_outage, maintenance;
  any other indicator -> unknown. Without an indicator (incidents.json...)
  the status is computed from components, open incidents and active
  maintenance.
* incident impact: none, minor -> degraded, major -> partial_outage,
  critical -> major_outage (anything else -> degraded). It is the incident's
  worst; the ``affected_components`` of its latest update (``new_status``,
  mapped as a component status) say where each component stands now.
* open incidents: status not resolved / postmortem / completed.
* maintenance: in_progress and verifying are active, scheduled is upcoming,
  completed (or cancelled) is left out.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from datetime import datetime
from typing import Any

from statusgen.vendors._payload import Node, load_json
from statusgen.vendors._text import LONG_AGO
from statusgen.vendors.model import (
    AffectedComponent,
    VendorComponent,
    VendorIncident,
    VendorMaintenance,
    VendorView,
    computed_status,
)

FORMAT = "statuspage"

COMPONENT_STATUS = {
    "operational": "operational",
    "degraded_performance": "degraded",
    "partial_outage": "partial_outage",
    "major_outage": "major_outage",
    "under_maintenance": "maintenance",
}
INDICATOR = {
    "none": "operational",
    "minor": "degraded",
    "major": "partial_outage",
    "critical": "major_outage",
    "maintenance": "maintenance",
}
IMPACT = {
    "none": "none",
    "minor": "degraded",
    "major": "partial_outage",
    "critical": "major_outage",
}
CLOSED = frozenset({"resolved", "postmortem", "completed", "cancelled"})
MAINTENANCE_STATUS = {
    "in_progress": "in_progress",
    "verifying": "in_progress",
    "scheduled": "scheduled",
}
TOP_KEYS = ("components", "incidents", "scheduled_maintenances", "status")


def parse(data: Any) -> VendorView:
    """Read a Statuspage v2 payload (bytes, text or decoded JSON)."""
    root = load_json(FORMAT, data)
    if not any(root.has(key) for key in TOP_KEYS):
        root.fail("has none of the keys " + ", ".join(TOP_KEYS))
    page = root.get("page")
    page_url = None if page.is_null() else page.get("url").link_or_none()
    components = _components(root)
    incidents = tuple(_incidents(root.get("incidents").items_or_none(), page_url))
    active, upcoming = _maintenance(root.get("scheduled_maintenances").items_or_none(), page_url)
    status, description = _page_status(root.get("status"))
    return VendorView(
        format=FORMAT,
        status=status or computed_status(components, incidents, active),
        description=description,
        components=components,
        incidents=incidents,
        maintenance_active=active,
        maintenance_upcoming=upcoming,
        updated_at=None if page.is_null() else page.get("updated_at").time_or_none(),
        page_url=page_url,
    )


def _page_status(node: Node) -> tuple[str | None, str | None]:
    if node.is_null():
        return None, None
    indicator = node.get("indicator").word_or_none()
    status = None if indicator is None else INDICATOR.get(indicator, "unknown")
    return status, node.get("description").text_or_none()


# -- components -------------------------------------------------------------


def _components(root: Node) -> tuple[VendorComponent, ...]:
    """Leaf components, each with its group's name; groups themselves are not components.

    Without a top-level list (incidents.json...) the components are those the
    incidents and maintenances embed, which carry their current status.
    """
    nodes = list(root["components"].items()) if root.has("components") else _embedded(root)
    groups = {n["id"].ident(): n["name"].text() for n in nodes if _is_group(n)}
    leaves = (_component(n, groups) for n in nodes if not _is_group(n))
    return tuple({c.id: c for c in leaves}.values())


def _embedded(root: Node) -> list[Node]:
    found: list[Node] = []
    for key in ("incidents", "scheduled_maintenances"):
        for event in root.get(key).items_or_none():
            found.extend(event.get("components").items_or_none())
    return found


def _is_group(node: Node) -> bool:
    group = node.get("group")
    return not group.is_null() and group.flag()


def _component(node: Node, groups: dict[str, str]) -> VendorComponent:
    group_id = node.get("group_id")
    return VendorComponent(
        id=node["id"].ident(),
        name=node["name"].text(),
        status=COMPONENT_STATUS.get(node["status"].word(), "unknown"),
        group=None if group_id.is_null() else groups.get(group_id.ident()),
    )


# -- incidents and maintenance ----------------------------------------------


def _component_ids(event: Node) -> tuple[str, ...]:
    return tuple(c["id"].ident() for c in event.get("components").items_or_none())


def _event_url(event: Node, page_url: str | None) -> str | None:
    shortlink = event.get("shortlink").link_or_none()
    if shortlink or not page_url:
        return shortlink
    return f"{page_url.rstrip('/')}/incidents/{event['id'].ident()}"


def _incidents(events: Iterable[Node], page_url: str | None) -> Iterator[VendorIncident]:
    for event in events:
        status = event["status"].word()
        if status not in CLOSED:
            yield _incident(event, status, page_url)


def _incident(event: Node, status: str, page_url: str | None) -> VendorIncident:
    started = event.get("started_at").time_or_none() or event.get("created_at").time_or_none()
    return VendorIncident(
        id=event["id"].ident(),
        title=event["name"].text(),
        impact=IMPACT.get(event.get("impact").word_or_none() or "", "degraded"),
        status=status,
        started_at=started,
        updated_at=event.get("updated_at").time_or_none(),
        url=_event_url(event, page_url),
        components=_component_ids(event),
        affected=_affected(_latest_update(event)),
    )


def _latest_update(event: Node) -> Node | None:
    """The newest update (Statuspage lists them newest first: on a tie, the one listed first)."""
    updates = list(event.get("incident_updates").items_or_none())
    dated = [(_update_time(u), -i, u) for i, u in enumerate(updates)]
    return max(dated, key=lambda d: (d[0] or LONG_AGO, d[1]))[2] if dated else None


def _update_time(update: Node) -> datetime | None:
    return update.get("display_at").time_or_none() or update.get("created_at").time_or_none()


def _affected(update: Node | None) -> tuple[AffectedComponent, ...]:
    if update is None:
        return ()
    return tuple(
        AffectedComponent(
            id=a["code"].ident(),
            name=a.get("name").text_or_none(),
            status=COMPONENT_STATUS.get(a["new_status"].word(), "unknown"),
        )
        for a in update.get("affected_components").items_or_none()
    )


def _maintenance(
    events: Iterable[Node], page_url: str | None
) -> tuple[tuple[VendorMaintenance, ...], tuple[VendorMaintenance, ...]]:
    windows = [_window(e, page_url) for e in events]
    active = tuple(w for w in windows if w and w.status == "in_progress")
    upcoming = tuple(w for w in windows if w and w.status == "scheduled")
    return active, upcoming


def _window(event: Node, page_url: str | None) -> VendorMaintenance | None:
    status = MAINTENANCE_STATUS.get(event["status"].word())
    if status is None:
        return None
    return VendorMaintenance(
        id=event["id"].ident(),
        title=event["name"].text(),
        status=status,
        starts_at=event.get("scheduled_for").time_or_none(),
        ends_at=event.get("scheduled_until").time_or_none(),
        url=_event_url(event, page_url),
        components=_component_ids(event),
    )
