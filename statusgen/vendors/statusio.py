"""status.io public status API (``https://api.status.io/1.0/status/<page_id>``).

Mapping to our scale (status.io status codes):

* 100 Operational -> operational, 200 Planned Maintenance -> maintenance,
  300 Degraded Performance -> degraded, 400 Partial Service Disruption ->
  partial_outage, 500 Service Disruption -> major_outage,
  600 Security Event -> partial_outage; any other code -> unknown.
* page status: ``status_overall.status_code``, mapped as above.
* incident impact: the status code of its latest message, mapped as above
  except 100 and 200 -> none (no message, or another code -> degraded).
  Incident status word: the state of its latest message (100 investigating,
  200 identified, 300 monitoring; otherwise "open"). Every incident in the
  payload is open. The impact is what the newest message says, which may
  lag the components: each component's own ``status_code`` is its current
  status, and the incident's ``affected`` components carry the newest
  message's code as what that update said of them.
* maintenance: ``maintenance.active`` is in progress, ``maintenance.upcoming``
  is scheduled.
"""

from __future__ import annotations

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
)

FORMAT = "statusio"

STATUS_CODE = {
    100: "operational",
    200: "maintenance",
    300: "degraded",
    400: "partial_outage",
    500: "major_outage",
    600: "partial_outage",
}
IMPACT_CODE = {
    100: "none",
    200: "none",
    300: "degraded",
    400: "partial_outage",
    500: "major_outage",
    600: "partial_outage",
}
STATE_CODE = {100: "investigating", 200: "identified", 300: "monitoring"}


def parse(data: Any) -> VendorView:
    """Read a status.io status payload (bytes, text or decoded JSON)."""
    result = load_json(FORMAT, data)["result"]
    overall = result["status_overall"]
    maintenance = result.get("maintenance")
    empty = maintenance.is_null()
    return VendorView(
        format=FORMAT,
        status=_status(overall["status_code"]),
        description=overall.get("status").text_or_none(),
        components=tuple(_component(n) for n in result["status"].items()),
        incidents=tuple(_incident(n) for n in result.get("incidents").items_or_none()),
        maintenance_active=() if empty else _windows(maintenance.get("active"), "in_progress"),
        maintenance_upcoming=() if empty else _windows(maintenance.get("upcoming"), "scheduled"),
        updated_at=overall.get("updated").time_or_none(),
        page_url=None,
    )


def _status(node: Node) -> str:
    return STATUS_CODE.get(node.code() or 0, "unknown")


def _component(node: Node) -> VendorComponent:
    return VendorComponent(
        id=node["id"].ident(),
        name=node["name"].text(),
        status=_status(node["status_code"]),
        group=None,
    )


def _affected(event: Node) -> tuple[str, ...]:
    return tuple(c["_id"].ident() for c in event.get("components_affected").items_or_none())


def _latest_message(event: Node) -> tuple[Node | None, datetime | None]:
    """The newest message of an event and its time (ties and undated: the later one listed)."""
    dated = [(m.get("datetime").time_or_none(), i, m) for i, m in enumerate(event.get("messages").items_or_none())]
    if not dated:
        return None, None
    when, _, message = max(dated, key=lambda d: (d[0] or LONG_AGO, d[1]))
    return message, when


def _impact_and_state(message: Node | None) -> tuple[str, str]:
    """What the newest message says: impact on our scale, and the incident's status word."""
    if message is None:
        return "degraded", "open"
    impact = IMPACT_CODE.get(message.get("status").code() or 0, "degraded")
    return impact, STATE_CODE.get(message.get("state").code() or 0, "open")


def _incident(event: Node) -> VendorIncident:
    message, when = _latest_message(event)
    impact, state = _impact_and_state(message)
    return VendorIncident(
        id=event["_id"].ident(),
        title=event["name"].text(),
        impact=impact,
        status=state,
        started_at=event.get("datetime_open").time_or_none(),
        updated_at=when,
        url=None,
        components=_affected(event),
        affected=_said_of(event, message),
    )


def _said_of(event: Node, message: Node | None) -> tuple[AffectedComponent, ...]:
    """The components the incident names, as its newest message left them."""
    if message is None:
        return ()
    status = _status(message.get("status"))
    return tuple(
        AffectedComponent(id=c["_id"].ident(), name=c.get("name").text_or_none(), status=status)
        for c in event.get("components_affected").items_or_none()
    )


def _windows(node: Node, status: str) -> tuple[VendorMaintenance, ...]:
    return tuple(_window(event, status) for event in node.items_or_none())


def _window(event: Node, status: str) -> VendorMaintenance:
    return VendorMaintenance(
        id=event["_id"].ident(),
        title=event["name"].text(),
        status=status,
        starts_at=event.get("datetime_planned_start").time_or_none(),
        ends_at=event.get("datetime_planned_end").time_or_none(),
        url=None,
        components=_affected(event),
    )
