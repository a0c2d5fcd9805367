"""Uptime Kuma status pages: two URLs, read as one payload.

A page ``https://<host>/status/<slug>`` is served by two endpoints:
``/api/status-page/<slug>`` (its groups of monitors, the pinned incident and
the maintenance in force) and ``/api/status-page/heartbeat/<slug>`` (each
monitor's recent beats and its 24-hour uptime). The configured URL is the
first; ``kumapair`` derives the second, fetches both and bundles them as
``{"status_page": ..., "heartbeat": ...}``. A status-page payload read alone
(a local file) has no beats: its monitors are unknown.

Beat times carry no zone: they are in the server's local time, which the
source's ``timezone`` names (UTC by default).

Mapping to our scale:

* components are monitors, each in its group; its latest beat is its current
  status: 1 up -> operational, 0 down -> major_outage, 2 pending (retrying)
  -> degraded, 3 maintenance -> maintenance; no beat (or another code) ->
  unknown. ``uptime`` holds its 24-hour uptime as ``day``.
* page status: as Uptime Kuma sums up its monitors (``_monitors.headline``),
  and no better than the pinned incident's impact.
* the pinned incident is an open incident of the whole page; its impact
  follows its style: danger -> partial_outage, warning -> degraded, any other
  (info, primary...) -> none.
* maintenance: each listed window is in progress (the page lists those in
  force), unless its status says scheduled; ended or inactive ones are left out.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, tzinfo
from typing import Any

from statusgen.vendors import _monitors
from statusgen.vendors._payload import Node, load_json
from statusgen.vendors._text import LONG_AGO
from statusgen.vendors.model import (
    VendorComponent,
    VendorIncident,
    VendorMaintenance,
    VendorView,
    worst_status,
)

FORMAT = "uptimekuma"
BUNDLE_KEYS = ("status_page", "heartbeat")

BEAT = {0: "major_outage", 1: "operational", 2: "degraded", 3: "maintenance"}
STYLE = {"danger": "partial_outage", "warning": "degraded"}
MAINTENANCE_STATUS = {"under-maintenance": "in_progress", "scheduled": "scheduled"}
UPTIME_WINDOW = "24"


def parse(data: Any, zone: tzinfo = UTC) -> VendorView:
    """Read an Uptime Kuma bundle (or a status-page payload alone); zone-less times are in ``zone``."""
    root = load_json(FORMAT, data)
    bundled = root.has("status_page")
    page = root["status_page"] if bundled else root
    beats = root.get("heartbeat") if bundled else Node(FORMAT, "heartbeat", None)
    components = _components(page, beats, zone)
    incidents = _incident(page.get("incident"), zone)
    windows = [w for w in (_window(n, zone) for n in page.get("maintenanceList").items_or_none()) if w]
    said, words = _monitors.headline(c.status for c in components)
    return VendorView(
        format=FORMAT,
        status=worst_status([said, *(i.impact for i in incidents if i.impact != "none")]),
        description=words,
        components=components,
        incidents=incidents,
        maintenance_active=tuple(w for w in windows if w.status == "in_progress"),
        maintenance_upcoming=tuple(w for w in windows if w.status == "scheduled"),
        updated_at=_last_beat(beats, zone),
        page_url=None,
    )


# -- monitors ---------------------------------------------------------------


def _components(page: Node, beats: Node, zone: tzinfo) -> tuple[VendorComponent, ...]:
    lists = None if beats.is_null() else beats.get("heartbeatList")
    uptimes = None if beats.is_null() else beats.get("uptimeList")
    found: dict[str, VendorComponent] = {}
    for group, monitor in _monitors_of(page):
        mid = monitor["id"].ident()
        found.setdefault(mid, _component(mid, monitor, group, lists, uptimes, zone))
    return tuple(found.values())


def _monitors_of(page: Node) -> Iterator[tuple[str | None, Node]]:
    for group in page["publicGroupList"].items():
        name = group.get("name").text_or_none()
        for monitor in group.get("monitorList").items_or_none():
            yield name, monitor


def _component(
    mid: str, monitor: Node, group: str | None, lists: Node | None, uptimes: Node | None, zone: tzinfo
) -> VendorComponent:
    latest = None if lists is None or lists.is_null() else _latest(lists.get(mid), zone)
    code = None if latest is None else latest.get("status").code()
    ratio = None if uptimes is None or uptimes.is_null() else uptimes.get(f"{mid}_{UPTIME_WINDOW}").number_or_none()
    return VendorComponent(
        id=mid,
        name=monitor["name"].text(),
        status=BEAT.get(code if code is not None else -1, "unknown"),
        group=group,
        uptime=() if ratio is None or not 0 <= ratio <= 1 else (("day", round(ratio * 100, 2)),),
    )


def _dated(beats: Node, zone: tzinfo) -> list[tuple[datetime | None, int, Node]]:
    return [(b.get("time").time_or_none(zone), i, b) for i, b in enumerate(beats.items_or_none())]


def _latest(beats: Node, zone: tzinfo) -> Node | None:
    """The newest beat (on a tie, or undated, the one listed last: Kuma lists oldest first)."""
    dated = _dated(beats, zone)
    return max(dated, key=lambda d: (d[0] or LONG_AGO, d[1]))[2] if dated else None


def _last_beat(beats: Node, zone: tzinfo) -> datetime | None:
    if beats.is_null() or beats.get("heartbeatList").is_null():
        return None
    lists = beats["heartbeatList"]
    times = [t for key in lists.obj() for t, _, _ in _dated(lists.get(key), zone) if t]
    return max(times, default=None)


# -- the pinned incident and maintenance --------------------------------------


def _incident(node: Node, zone: tzinfo) -> tuple[VendorIncident, ...]:
    if node.is_null():
        return ()
    started = node.get("createdDate").time_or_none(zone)
    return (
        VendorIncident(
            id=node["id"].ident(),
            title=node.get("title").text_or_none() or node.get("content").text_or_none() or "Incident",
            impact=STYLE.get(node.get("style").word_or_none() or "", "none"),
            status="open",
            started_at=started,
            updated_at=node.get("lastUpdatedDate").time_or_none(zone) or started,
            url=None,
            components=(),
        ),
    )


def _window(node: Node, zone: tzinfo) -> VendorMaintenance | None:
    status = MAINTENANCE_STATUS.get(node.get("status").word_or_none() or "under-maintenance")
    if status is None:
        return None
    slot = next(node.get("timeslotList").items_or_none(), None)
    return VendorMaintenance(
        id=node["id"].ident(),
        title=node["title"].text(),
        status=status,
        starts_at=None if slot is None else slot.get("startDate").time_or_none(zone),
        ends_at=None if slot is None else slot.get("endDate").time_or_none(zone),
        url=None,
        components=(),
    )
