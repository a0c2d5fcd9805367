"""Atlassian Statuspage's public v2 API, as documents: what aggregators, chat integrations,
dashboards and our own vendor adapter (``vendors.statuspage``) read.

Field names, types and enumerations are those real Statuspage pages publish. Our words become
theirs as follows (docs/api.md, "Statuspage v2"):

    categories             component groups; services their components
    a service's status     operational, degraded_performance, partial_outage, major_outage,
                           under_maintenance; unknown (not measured, paused) degraded_performance:
                           Statuspage has no word for "we cannot tell", and that is the mildest
                           status that claims nothing is wrong with it
    the site's status      indicator none, minor, major, critical or maintenance
    our incidents          incidents: investigating when opened, identified as they change
                           (a change of severity, an operator's note), monitoring while the
                           service is back (our checks answer again, short of the good cycles
                           that close it) but the incident not yet closed, resolved
    maintenance            scheduled maintenances (configured, planned and the vendors'):
                           scheduled, in_progress, completed; one of several services is
                           one, its components theirs
    a vendor's incident    not an incident of this page (the vendor's own page tells it): it
                           shows in its service's component status

Ids are twelve letters and digits, derived from what names the thing for good (a slug, an
incident's id, a maintenance's key), so they stay across builds and releases.
"""

from __future__ import annotations

import base64
import hashlib
from datetime import datetime
from typing import Any

from statusgen import routes
from statusgen.decide.maintenance import HORIZON, Notice, by_maintenance
from statusgen.decide.overall import overall
from statusgen.model import Status
from statusgen.render.api.documents import incident_document, stale_after
from statusgen.render.gather import IncidentRow, SiteData
from statusgen.timeutil import iso

Document = dict[str, Any]

COMPONENT_STATUS = {
    Status.OPERATIONAL: "operational",
    Status.DEGRADED: "degraded_performance",
    Status.PARTIAL_OUTAGE: "partial_outage",
    Status.MAJOR_OUTAGE: "major_outage",
    Status.MAINTENANCE: "under_maintenance",
    Status.UNKNOWN: "degraded_performance",
}
INDICATOR = {
    Status.OPERATIONAL: ("none", "All Systems Operational"),
    Status.DEGRADED: ("minor", "Partially Degraded Service"),
    Status.PARTIAL_OUTAGE: ("major", "Partial System Outage"),
    Status.MAJOR_OUTAGE: ("critical", "Major System Outage"),
    Status.MAINTENANCE: ("maintenance", "Service Under Maintenance"),
    Status.UNKNOWN: ("minor", "Status Unknown"),
}
RECENT = 50  # the incidents incidents.json lists, newest first, as Statuspage's does
STATUS_WORDS = frozenset(s.value for s in Status)


def ident(kind: str, key: str) -> str:
    """A Statuspage-like id (twelve lowercase letters and digits), the same for the same thing."""
    digest = hashlib.blake2b(f"{kind}:{key}".encode(), digest_size=10).digest()
    return base64.b32encode(digest).decode().lower()[:12]


class Page:
    """What every document of one build shares: the page, its components, and how to name them."""

    def __init__(self, data: SiteData):
        self.data = data
        self.site = data.config.site
        self.id = ident("page", self.site.base_url)
        self.groups = {c: ident("group", c) for c in data.config.categories}
        self.components = {s.slug: ident("component", s.slug) for s in data.config.services}
        self.positions = {s.slug: n for n, s in enumerate(data.config.services, 1)}
        self.updated = iso(data.epoch)  # the page's updated_at: its latest change (``statuspage_documents``)

    def url(self, path: str) -> str:
        return self.site.base_url + path

    def status_of(self, slug: str) -> str:
        return COMPONENT_STATUS[self.data.state(slug).status]

    def component(self, slug: str) -> Document:
        svc, state = self.data.service(slug), self.data.state(slug)
        return {
            "id": self.components[slug],
            "name": svc.name,
            "status": self.status_of(slug),
            "created_at": iso(self.data.epoch),
            "updated_at": iso(state.since or self.data.epoch),
            "position": self.positions[slug],
            "description": svc.description,
            "showcase": True,
            "start_date": None,
            "group_id": self.groups[svc.category],
            "page_id": self.id,
            "group": False,
            "only_show_if_degraded": False,
        }

    def group(self, category: str, position: int, members: list[Document]) -> Document:
        worst = max(members, key=lambda c: list(COMPONENT_STATUS.values()).index(c["status"]), default=None)
        return {
            "id": self.groups[category],
            "name": self.data.config.categories[category],
            "status": worst["status"] if worst else "operational",
            "created_at": iso(self.data.epoch),
            "updated_at": max((c["updated_at"] for c in members), default=iso(self.data.epoch)),
            "position": position,
            "description": None,
            "showcase": False,
            "start_date": None,
            "group_id": None,
            "page_id": self.id,
            "group": True,
            "only_show_if_degraded": False,
            "components": [c["id"] for c in members],
        }

    def all_components(self) -> list[Document]:
        """The groups, each followed by its components, in the site's order."""
        out: list[Document] = []
        for category in self.data.config.categories:
            members = [self.component(s.slug) for s in self.data.config.services if s.category == category]
            out += [self.group(category, len(out) + 1, members), *members]
        return out

    def affected(self, slug: str, old: str, new: str) -> Document:
        return {
            "code": self.components[slug],
            "name": self.data.service(slug).name,
            "old_status": old,
            "new_status": new,
        }

    def document(self, present: bool = True, **parts: Any) -> Document:
        """A document of the page; ``present``: it describes the present, and carries our
        ``stale_after`` (readers that do not know it ignore it: docs/api.md)."""
        page = {"id": self.id, "name": self.site.title, "url": self.site.base_url, "time_zone": "Etc/UTC"}
        stale = {"stale_after": stale_after(self.data, self.data.time)} if present else {}
        return {"page": page | {"updated_at": self.updated}, **parts, **stale}


def status_document(page: Page) -> Document:
    services = page.data.config.services
    found = overall(page.data.state(s.slug).status for s in services).status if services else Status.OPERATIONAL
    indicator, description = INDICATOR[found]
    return {"indicator": indicator, "description": description}


def incident(page: Page, row: IncidentRow) -> Document:
    """One of our incidents as Statuspage tells one."""
    doc = incident_document(page.data.config, row)
    iid = ident("incident", doc["id"])
    known = row.service in page.components  # else a service no longer configured: no component tells it
    state = page.data.state(row.service) if known else None
    # Back while not yet closed: our checks answer again, short of the good cycles that resolve it
    # (the service's status holds until then); an operator's incident is open until its file says not.
    recovering = state is not None and doc["source"] == "checks" and state.good_streak > 0
    back = not doc["open"] or recovering or (state is not None and state.status is Status.OPERATIONAL)
    updates, old = [], "operational"
    for n, u in enumerate(doc["updates"]):
        word = "resolved" if u["kind"] == "resolved" else "investigating" if n == 0 else "identified"
        new = COMPONENT_STATUS[Status(u["status"])] if u["status"] in STATUS_WORDS else old
        updates.append(
            {
                "id": ident("update", f"{doc['id']}:{n}"),
                "status": word,
                "body": u["message"],
                "incident_id": iid,
                "created_at": u["at"],
                "updated_at": u["at"],
                "display_at": u["at"],
                "affected_components": [page.affected(row.service, old, new)] if known else [],
                "deliver_notifications": True,
                "custom_tweet": None,
                "tweet_id": None,
            }
        )
        old = new
    status = "resolved" if not doc["open"] else "monitoring" if back else updates[-1]["status"]
    came_back = state.streak_since if recovering and state is not None else None  # the good streak's start
    monitoring_at = iso(came_back) if came_back else doc["updated_at"]
    return {
        "id": iid,
        "name": doc["title"],
        "status": status,
        "created_at": doc["started_at"],
        "updated_at": doc["updated_at"],
        "monitoring_at": monitoring_at if status == "monitoring" else None,
        "resolved_at": doc["ended_at"],
        "impact": doc["severity"],
        "shortlink": page.url(doc["links"]["page"]),
        "started_at": doc["started_at"],
        "page_id": page.id,
        "incident_updates": updates[::-1],  # newest first, as Statuspage lists them
        "components": [page.component(row.service)] if known else [],
        "reminder_intervals": None,
    }


#: A maintenance's updates as Statuspage writes them: each status it has reached, and what it did
#: to its components (``old_status``, ``new_status``): announced with no change, in progress from
#: operational to under maintenance, completed back to operational.
MAINTENANCE_STEPS = (
    ("scheduled", "operational", "operational"),
    ("in_progress", "operational", "under_maintenance"),
    ("completed", "under_maintenance", "operational"),
)


def maintenance(page: Page, notices: tuple[Notice, ...], now: datetime) -> Document:
    """A configured, planned or vendor maintenance as a Statuspage scheduled maintenance: once,
    with a component for each of its services (``notices``, one a service: ``by_maintenance``), and
    an update for each status it has reached, newest first. It is announced (created, and its
    first update) ``HORIZON`` before it starts, as the feeds publish it."""
    notice = notices[0]
    mid = ident("maintenance", f"{notice.source}:{notice.key}:{notice.title}")
    status = "completed" if notice.over(now) else "in_progress" if notice.in_progress(now) else "scheduled"
    slugs = list(dict.fromkeys(n.service for n in notices))
    reached = MAINTENANCE_STEPS[: [word for word, _, _ in MAINTENANCE_STEPS].index(status) + 1]
    when = {"scheduled": notice.start - HORIZON, "in_progress": notice.start, "completed": notice.end}
    updates = [
        {
            "id": ident("update", f"{mid}:{word}"),
            "status": word,
            "body": notice.message or notice.title,
            "incident_id": mid,
            "created_at": iso(when[word]),
            "updated_at": iso(when[word]),
            "display_at": iso(when[word]),
            "affected_components": [page.affected(slug, old, new) for slug in slugs],
            "deliver_notifications": True,
            "custom_tweet": None,
            "tweet_id": None,
        }
        for word, old, new in reached
    ]
    announced = iso(when["scheduled"])
    return {
        "id": mid,
        "name": notice.title,
        "status": status,
        "created_at": announced,
        "updated_at": updates[-1]["updated_at"],
        "monitoring_at": None,
        "resolved_at": iso(notice.end) if status == "completed" else None,
        "impact": "maintenance",
        "shortlink": notice.url or page.url(routes.service_page_url(notice.service)),
        "started_at": announced,
        "page_id": page.id,
        "incident_updates": updates[::-1],  # newest first, as Statuspage lists them
        "components": [page.component(slug) for slug in slugs],
        "scheduled_for": iso(notice.start),
        "scheduled_until": iso(notice.end),
    }


def statuspage_documents(data: SiteData, notices: list[Notice], ended: list[Notice]) -> dict[str, Document]:
    """Every Statuspage v2 document of the site, by its file in the tree. ``notices``: the
    maintenance in progress or upcoming; ``ended``: that which ended lately (completed)."""
    page = Page(data)
    recent = [incident(page, row) for row in data.incidents[:RECENT]]
    unresolved = [incident(page, row) for row in data.incidents if row.ended is None]
    active = [maintenance(page, m, data.now) for m in by_maintenance(notices) if m[0].in_progress(data.now)]
    upcoming = [maintenance(page, m, data.now) for m in by_maintenance(notices) if not m[0].in_progress(data.now)]
    completed = [maintenance(page, m, data.now) for m in by_maintenance(ended)]
    changes = [iso(s.since) for s in data.states.values() if s.since] + [i["updated_at"] for i in recent]
    page.updated = max([page.updated, *(c for c in changes if c)])  # the texts compare as the times
    components, status = page.all_components(), status_document(page)
    files = routes.STATUSPAGE_FILES
    return {
        files["summary"]: page.document(
            components=components, incidents=unresolved, scheduled_maintenances=active + upcoming, status=status
        ),
        files["status"]: page.document(status=status),
        files["components"]: page.document(components=components),
        files["incidents"]: page.document(False, incidents=recent),  # the past too: never out of date
        files["unresolved"]: page.document(incidents=unresolved),
        files["maintenances"]: page.document(False, scheduled_maintenances=active + upcoming + completed),
        files["upcoming"]: page.document(scheduled_maintenances=upcoming),
        files["active"]: page.document(scheduled_maintenances=active),
    }
