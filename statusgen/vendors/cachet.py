"""Cachet 2.x components API (``GET /api/v1/components``).

Only components are read: Cachet serves incidents from another endpoint.
Cachet's timestamps carry no zone; they are taken to be UTC. The payload
names no groups (only ``group_id``), so components have no group. Disabled
components are left out. Only the page of results given is read.

Mapping to our scale (Cachet component status codes):
1 Operational -> operational, 2 Performance Issues -> degraded,
3 Partial Outage -> partial_outage, 4 Major Outage -> major_outage;
anything else (0 Unknown...) -> unknown. The page status is the worst
component status.
"""

from __future__ import annotations

from typing import Any

from statusgen.vendors._payload import Node, load_json
from statusgen.vendors.model import VendorComponent, VendorView, computed_status

FORMAT = "cachet"

STATUS_CODE = {1: "operational", 2: "degraded", 3: "partial_outage", 4: "major_outage"}


def parse(data: Any) -> VendorView:
    """Read a Cachet ``components`` payload (bytes, text or decoded JSON)."""
    nodes = [n for n in load_json(FORMAT, data)["data"].items() if _enabled(n)]
    components = tuple(_component(n) for n in nodes)
    stamps = [n.get("updated_at").time_or_none() for n in nodes]
    return VendorView(
        format=FORMAT,
        status=computed_status(components, (), ()),
        description=None,
        components=components,
        incidents=(),
        maintenance_active=(),
        maintenance_upcoming=(),
        updated_at=max((s for s in stamps if s), default=None),
        page_url=None,
    )


def _enabled(node: Node) -> bool:
    enabled = node.get("enabled")
    return enabled.is_null() or enabled.flag()


def _component(node: Node) -> VendorComponent:
    return VendorComponent(
        id=node["id"].ident(),
        name=node["name"].text(),
        status=STATUS_CODE.get(node["status"].code() or 0, "unknown"),
        group=None,
    )
