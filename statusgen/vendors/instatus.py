"""Instatus public status pages (``https://<page>/summary.json``, ``/v2/components.json``).

``summary.json`` holds ``page`` and, only when they are not empty,
``activeIncidents`` and ``activeMaintenances``. ``/v2/components.json`` (where
a page exposes it) holds ``components``, each with its current status and
optional ``group``. Either payload is read; a summary has no components.

Mapping to our scale:

* page status: UP -> operational, HASISSUES -> degraded (it says something is
  wrong, not how badly), UNDERMAINTENANCE -> maintenance; anything else ->
  unknown. A page can say UP while an incident is open (its status trails its
  incidents), so the view's status is the worst of the page, the open
  incidents' impacts and the active maintenance.
* component status and incident impact: OPERATIONAL -> operational (impact
  none), DEGRADEDPERFORMANCE -> degraded, PARTIALOUTAGE and MINOROUTAGE ->
  partial_outage, MAJOROUTAGE -> major_outage, UNDERMAINTENANCE ->
  maintenance (impact none); an incident without a known impact is degraded.
* incidents: RESOLVED ones are left out (the list holds active ones only).
* maintenance: INPROGRESS is active, NOTSTARTEDYET upcoming, COMPLETED left
  out. ``duration`` is in minutes; the end is the start plus it.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from statusgen.vendors._payload import Node, load_json
from statusgen.vendors.model import (
    VendorComponent,
    VendorIncident,
    VendorMaintenance,
    VendorView,
    worst_status,
)

FORMAT = "instatus"

PAGE_STATUS = {"up": "operational", "hasissues": "degraded", "undermaintenance": "maintenance"}
COMPONENT_STATUS = {
    "operational": "operational",
    "degradedperformance": "degraded",
    "partialoutage": "partial_outage",
    "minoroutage": "partial_outage",
    "majoroutage": "major_outage",
    "undermaintenance": "maintenance",
}
IMPACT = {**COMPONENT_STATUS, "operational": "none", "undermaintenance": "none"}
MAINTENANCE_STATUS = {"inprogress": "in_progress", "notstartedyet": "scheduled"}
LONGEST_WINDOW_MINUTES = 366 * 24 * 60


def parse(data: Any) -> VendorView:
    """Read an Instatus ``summary.json`` or ``/v2/components.json`` payload."""
    root = load_json(FORMAT, data)
    if root.has("components") and not root.has("page"):
        return _components_view(root)
    page = root["page"]
    incidents = tuple(_incident(n) for n in root.get("activeIncidents").items_or_none() if _is_open(n))
    windows = [_window(n) for n in root.get("activeMaintenances").items_or_none()]
    active = tuple(w for w in windows if w and w.status == "in_progress")
    said = PAGE_STATUS.get(page["status"].word(), "unknown")
    return VendorView(
        format=FORMAT,
        status=worst_status([said, *(i.impact for i in incidents if i.impact != "none"), *_busy(active)]),
        description=None,
        components=(),
        incidents=incidents,
        maintenance_active=active,
        maintenance_upcoming=tuple(w for w in windows if w and w.status == "scheduled"),
        updated_at=max((i.updated_at for i in incidents if i.updated_at), default=None),
        page_url=page.get("url").link_or_none(),
    )


def _busy(active: tuple[VendorMaintenance, ...]) -> list[str]:
    return ["maintenance"] if active else []


def _components_view(root: Node) -> VendorView:
    components = tuple(_component(n) for n in root["components"].items())
    return VendorView.of_components(FORMAT, worst_status(c.status for c in components), None, components)


def _component(node: Node) -> VendorComponent:
    group = node.get("group")
    return VendorComponent(
        id=node["id"].ident(),
        name=node["name"].text(),
        status=COMPONENT_STATUS.get(node["status"].word(), "unknown"),
        group=None if group.is_null() else group["name"].text(),
    )


def _is_open(event: Node) -> bool:
    return event.get("status").word_or_none() != "resolved"


def _incident(event: Node) -> VendorIncident:
    return VendorIncident(
        id=event["id"].ident(),
        title=event["name"].text(),
        impact=IMPACT.get(event.get("impact").word_or_none() or "", "degraded"),
        status=event.get("status").word_or_none() or "open",
        started_at=event.get("started").time_or_none(),
        updated_at=event.get("updatedAt").time_or_none(),
        url=event.get("url").link_or_none(),
        components=(),
    )


def _window(event: Node) -> VendorMaintenance | None:
    status = MAINTENANCE_STATUS.get(event.get("status").word_or_none() or "")
    if status is None:
        return None
    start = event.get("start").time_or_none()
    return VendorMaintenance(
        id=event["id"].ident(),
        title=event["name"].text(),
        status=status,
        starts_at=start,
        ends_at=_end(start, event.get("duration")),
        url=event.get("url").link_or_none(),
        components=(),
    )


def _end(start: datetime | None, duration: Node) -> datetime | None:
    """The start plus ``duration`` minutes (a number or digits); None when either is missing."""
    minutes = duration.code()
    if start is None or minutes is None or not 0 <= minutes <= LONGEST_WINDOW_MINUTES:
        return None
    try:
        return start + timedelta(minutes=minutes)
    except OverflowError:  # a start at the end of the calendar
        return None
