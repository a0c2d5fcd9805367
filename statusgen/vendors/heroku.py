"""Heroku status API v4 (``https://status.heroku.com/api/v4/current-status``).

Mapping to our scale:

* system colour: green -> operational, yellow -> degraded,
  red -> major_outage, blue -> maintenance; anything else -> unknown.
* incident impact: the production colour of its newest update (green -> none);
  status word: that update's ``update_type``. Incidents that are resolved
  (or whose state is closed) are left out. Incidents name no systems, so each
  affects the whole page.
* ``scheduled`` items (same shape as incidents) are upcoming maintenance; the
  API gives no planned window, so start and end are null.
* page status: computed from systems, open incidents and active maintenance.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from statusgen.vendors._payload import Node, load_json
from statusgen.vendors._text import LONG_AGO
from statusgen.vendors.model import (
    VendorComponent,
    VendorIncident,
    VendorMaintenance,
    VendorView,
    computed_status,
)

FORMAT = "heroku"
PAGE_URL = "https://status.heroku.com"

COLOUR = {
    "green": "operational",
    "yellow": "degraded",
    "red": "major_outage",
    "blue": "maintenance",
}
IMPACT = {"green": "none", "yellow": "degraded", "red": "major_outage", "blue": "none"}


def parse(data: Any) -> VendorView:
    """Read a Heroku ``current-status`` payload (bytes, text or decoded JSON)."""
    root = load_json(FORMAT, data)
    components = tuple(_system(n) for n in root["status"].items())
    incidents = tuple(_incident(n) for n in root.get("incidents").items_or_none() if _is_open(n))
    upcoming = tuple(_window(n) for n in root.get("scheduled").items_or_none() if _is_open(n))
    return VendorView(
        format=FORMAT,
        status=computed_status(components, incidents, ()),
        description=None,
        components=components,
        incidents=incidents,
        maintenance_active=(),
        maintenance_upcoming=upcoming,
        updated_at=max((i.updated_at for i in incidents if i.updated_at), default=None),
        page_url=PAGE_URL,
    )


def _system(node: Node) -> VendorComponent:
    name = node["system"].text()
    return VendorComponent(id=name, name=name, status=COLOUR.get(node["status"].word(), "unknown"), group=None)


def _is_open(event: Node) -> bool:
    resolved = event.get("resolved")
    if not resolved.is_null() and resolved.flag():
        return False
    return event.get("state").word_or_none() not in ("closed", "resolved")


def _updates(event: Node) -> list[tuple[datetime | None, Node]]:
    """Updates with their times, oldest first (undated ones first)."""
    dated = [(u.get("created_at").time_or_none(), u) for u in event.get("updates").items_or_none()]
    return sorted(dated, key=lambda d: d[0] or LONG_AGO)


def _incident(event: Node) -> VendorIncident:
    updates = _updates(event)
    newest = updates[-1][1] if updates else None
    colour = None if newest is None else newest.get("status_prod").word_or_none()
    stamps = [event.get("updated_at").time_or_none()]
    stamps += [u.get("updated_at").time_or_none() for _, u in updates]
    return VendorIncident(
        id=event["id"].ident(),
        title=event["title"].text(),
        impact=IMPACT.get(colour or "", "degraded"),
        status=(newest.get("update_type").word_or_none() if newest else None) or "open",
        started_at=event.get("created_at").time_or_none(),
        updated_at=max((s for s in stamps if s), default=None),
        url=event.get("full_url").link_or_none(),
        components=(),
    )


def _window(event: Node) -> VendorMaintenance:
    return VendorMaintenance(
        id=event["id"].ident(),
        title=event["title"].text(),
        status="scheduled",
        starts_at=None,
        ends_at=None,
        url=event.get("full_url").link_or_none(),
        components=(),
    )
