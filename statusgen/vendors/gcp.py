"""Google Cloud status (``https://status.cloud.google.com/incidents.json``).

The payload is the incident history; an incident without ``end`` (or with a
null one) is open. Google lists its products elsewhere, so the components
are the products the incidents name (operational unless an open incident
affects them).

Mapping to our scale:

* incident impact (``status_impact``, else its newest update's status):
  SERVICE_INFORMATION -> degraded, SERVICE_DISRUPTION -> partial_outage,
  SERVICE_OUTAGE -> major_outage, AVAILABLE -> none; anything else -> degraded.
* incident status word: its newest update's status, lowercased.
* page status: computed from products and open incidents.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from statusgen.vendors._payload import Node, load_json
from statusgen.vendors.model import (
    VendorComponent,
    VendorIncident,
    VendorView,
    computed_status,
    status_from_impacts,
)

FORMAT = "gcp"
PAGE_URL = "https://status.cloud.google.com/"

IMPACT = {
    "service_information": "degraded",
    "service_disruption": "partial_outage",
    "service_outage": "major_outage",
    "available": "none",
}


def parse(data: Any) -> VendorView:
    """Read a Google Cloud ``incidents.json`` payload (bytes, text or decoded JSON)."""
    events = list(load_json(FORMAT, data).items())
    products = {p["id"].ident(): p["title"].text() for e in events for p in _products(e)}
    incidents = tuple(_incident(e) for e in events if e.get("end").is_null())
    components = _components(products, incidents)
    stamps = [e.get("modified").time_or_none() for e in events]
    return VendorView(
        format=FORMAT,
        status=computed_status(components, incidents, ()),
        description=None,
        components=components,
        incidents=incidents,
        maintenance_active=(),
        maintenance_upcoming=(),
        updated_at=max((s for s in stamps if s), default=None),
        page_url=PAGE_URL,
    )


def _products(event: Node) -> list[Node]:
    return list(event.get("affected_products").items_or_none())


def _impact(event: Node, latest: Node) -> str:
    word = event.get("status_impact").word_or_none()
    if word is None and not latest.is_null():
        word = latest.get("status").word_or_none()
    return IMPACT.get(word or "", "degraded")


def _incident(event: Node) -> VendorIncident:
    latest = event.get("most_recent_update")
    status = None if latest.is_null() else latest.get("status").word_or_none()
    uri = event.get("uri").text_or_none()
    return VendorIncident(
        id=event["id"].ident(),
        title=event["external_desc"].text(),
        impact=_impact(event, latest),
        status=status or "open",
        started_at=event.get("begin").time_or_none(),
        updated_at=event.get("modified").time_or_none(),
        url=f"{PAGE_URL}{uri.lstrip('/')}" if uri else None,
        components=tuple(p["id"].ident() for p in _products(event)),
    )


def _components(products: dict[str, str], incidents: Iterable[VendorIncident]) -> tuple[VendorComponent, ...]:
    """Every product named in the history, by name, with the impacts of open incidents."""
    impacts: dict[str, list[str]] = {pid: [] for pid in products}
    for incident in incidents:
        for pid in incident.components:
            impacts[pid].append(incident.impact)
    ordered = sorted(products, key=lambda pid: (products[pid].casefold(), pid))
    return tuple(_component(pid, products[pid], impacts[pid]) for pid in ordered)


def _component(pid: str, name: str, impacts: list[str]) -> VendorComponent:
    return VendorComponent(id=pid, name=name, status=status_from_impacts(impacts), group=None)
