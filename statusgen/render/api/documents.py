"""Render: every JSON document of the API, as pure functions of ``SiteData``.

The shapes built here are described once, as JSON Schema, in ``shapes.py``;
the OpenAPI document is made from those, and the tests validate every file
of a build against them. The pages and feeds are made from these documents.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime, timedelta
from typing import Any

import orjson

from statusgen import routes
from statusgen.config import CheckConfig, Config, MaintenanceWindow, ServiceConfig, VendorConfig
from statusgen.config.secrets import public_url
from statusgen.decide.health import FORMULA, SCORES, collection_state, health_index
from statusgen.decide.incidents import current_record
from statusgen.decide.maintenance import HORIZON, Notice, announced, ended, scheduled, told
from statusgen.decide.overall import overall
from statusgen.decide.state import ServiceState, evidence_for
from statusgen.i18n import Said, say_in, translations
from statusgen.model import STATUSES, Status
from statusgen.render.api.errorbodies import error_documents
from statusgen.render.gather import IncidentRow, SiteData, as_of_service
from statusgen.store.failures import DECODING, damaged
from statusgen.store.locations import BatchRecord, InboxListing
from statusgen.timeutil import from_epoch, iso
from statusgen.vendors.model import is_stale

Documents = dict[str, Any]  # tree path -> JSON-ready object
NOTIFICATION_COUNTS = ("sent", "failed", "pending", "uncertain")


def _links(slug: str) -> dict[str, str]:
    return {
        "self": routes.service_url(slug),
        "history": routes.history_url(slug),
        "feed": routes.service_feed_url(slug),
        "page": routes.service_page_url(slug),
        "incidents": routes.service_incidents_list_url(slug),
    }


def service_summary(data: SiteData, svc: ServiceConfig) -> dict[str, Any]:
    st = data.state(svc.slug)
    return {
        "slug": svc.slug,
        "name": svc.name,
        "category": svc.category,
        "description": svc.description,
        "url": svc.url,
        "status": st.status.value,
        "since": iso(st.since),
        "reason": say_in(st.reason, data.config.site.languages[0]),
        "sources": list(st.sources),
        "links": _links(svc.slug),
    }


def _thresholds(svc: ServiceConfig) -> dict[str, int]:
    return {"failures_to_open": svc.failures_to_open, "successes_to_resolve": svc.successes_to_resolve}


def configured_record(svc: ServiceConfig) -> dict[str, Any]:
    """The fields of a service's record (``service_document``) that its configuration alone
    makes: name, links, thresholds and checks, without their last results. The method page
    shows them, and is made before any service's record."""
    return {
        "name": svc.name,
        "links": _links(svc.slug),
        "thresholds": _thresholds(svc),
        "checks": [_check_doc(i, c) for i, c in enumerate(svc.checks)],
        "vendor": _vendor_source(svc.vendor) if svc.vendor else None,
    }


def _vendor_source(vendor: VendorConfig) -> dict[str, Any]:
    """The fields of a vendor record that the configuration makes."""
    return {
        "source": public_url(vendor.url),
        "format": vendor.format,
        "components": list(vendor.components),
        "timeout_s": vendor.timeout,
        "stale_after_s": vendor.stale_after,
    }


def _check_doc(index: int, check: CheckConfig) -> dict[str, Any]:
    return {
        "check": index + 1,
        "label": check.name,
        "method": check.method,
        "url": check.public_url,
        "expect_status": list(check.expect_status),
        "keyword": check.keyword,
        "timeout_s": check.timeout,
        "degraded_ms": check.degraded_ms,
        "max_bytes": check.max_bytes,
        "kind": check.kind,
        "conditions": [c.text() for c in check.conditions],
        "follow_redirects": check.follow_redirects,
        "cert_expiry_days": check.cert_expiry_days,
        "expect": check.expect,
        "resolver": check.resolver,
    }


LAST_DAY_COLUMNS = ["at", "check", "outcome", "latency_ms", "http_status", "slow", "flag"]


def _last_day(last_day: tuple[int, str], period: tuple[int, datetime], day_summary: dict[str, Any]) -> dict[str, Any]:
    """The raw results of the last day and what they add up to, over ``period`` (from the 24h
    window's first bucket to the record's time). ``last_day``: their count and the JSON array of
    their rows, as the store keeps them (``Store.last_day_json``): a day of results at one check a
    minute is some 1,440 rows a service, written into the record as they are."""
    count, rows = last_day
    return {
        "from": iso(from_epoch(period[0])),
        "to": iso(period[1]),
        "columns": LAST_DAY_COLUMNS,
        "count": count,
        "rows": orjson.Fragment(rows),
        "summary": day_summary,
    }


def service_document(
    data: SiteData,
    svc: ServiceConfig,
    day_summary: dict[str, Any],
    last_day: tuple[int, str],
    period: tuple[int, datetime],
    progress: dict[str, dict[str, Any]],
    this_month: dict[str, Any],
) -> dict[str, Any]:
    """A service's record: its state, checks, vendor view, open incident, last day of results,
    the bucket in progress of each history range (``progress``: their points, by range) and its
    figures of the current month (``reports.current_month``)."""
    st = data.state(svc.slug)
    open_inc = next((i for i in data.incidents_of(svc.slug) if i.ended is None), None)
    checks = [_check_doc(i, c) | {"last_result": _last_result(st, i)} for i, c in enumerate(svc.checks)]
    if data.config.locations:
        for i, check in enumerate(checks):
            check["locations"] = _by_location(data, svc, st, i)
    vendor = vendor_record(data, svc)
    as_of = as_of_service(data, svc)
    return {
        "as_of": iso(as_of),
        "stale_after": stale_after(data, as_of),
        "service": service_summary(data, svc)
        | {
            "state": {
                "status": st.status.value,
                "since": iso(st.since),
                "reason": say_in(st.reason, data.config.site.languages[0]),
                "sources": list(st.sources),
                "own_checks": st.own_status.value,
                "evidence": [e.to_json() for e in st.evidence],
            },
            "thresholds": _thresholds(svc),
            "maintenance": [_window_doc(w) for w in svc.maintenance if w.source == "schedule"],
            "checks": checks,
            "vendor": vendor,
            "open_incident": _incident_ref(open_inc, data.config.site.languages[0]),
            "upcoming_maintenance": maintenance_document(data, notices_of(data, svc, vendor)),
            "last_day": _last_day(last_day, period, day_summary),
            "in_progress": progress,
            "this_month": this_month,
        },
    }


def vendor_record(data: SiteData, svc: ServiceConfig) -> dict[str, Any] | None:
    """The vendor source of a service: where, how the last fetch went, and the last good view."""
    if svc.vendor is None:
        return None
    row = data.vendors.get(svc.slug)
    if row is not None and row.url != public_url(svc.vendor.url):  # the store keeps the public form
        row = None
    stale = is_stale(row.last_ok_at if row else None, data.now, svc.vendor.stale_after)
    return _vendor_source(svc.vendor) | {
        "outcome": row.outcome if row else None,
        "detail": row.detail if row else None,
        "fetched_at": iso(row.fetched_at) if row else None,
        "last_ok_at": iso(row.last_ok_at) if row else None,
        "stale": stale,
        "view": data.vendor_views.get(svc.slug) if row else None,
    }


def _window_doc(w: MaintenanceWindow) -> dict[str, Any]:
    return {
        "title": w.title,
        "start": iso(w.start),
        "end": iso(w.end),
        "schedule": w.schedule,
        "duration_s": w.duration,
    }


def _last_result(st: ServiceState, index: int) -> dict[str, Any] | None:
    found = next((e for e in st.evidence if e.check == index + 1), None)
    return found.to_json() if found else None


def _by_location(data: SiteData, svc: ServiceConfig, st: ServiceState, index: int) -> list[dict[str, Any]]:
    """A check's latest result from each location (this host first); null where it has none fresh."""
    here = next((e for e in st.evidence if e.check == index + 1 and e.location is None), None)
    out = [{"location": data.config.site.location, "last_result": here.to_json() if here else None}]
    for loc in data.config.locations:
        seen = [r for r in data.elsewhere.get(svc.slug, {}).get(loc.name, []) if r.check_index == index]
        latest = evidence_for(svc, [replace(seen[-1], location=loc.name)])[0].to_json() if seen else None
        out.append({"location": loc.name, "last_result": latest})
    return out


def _incident_ref(row: IncidentRow | None, data_language: str) -> dict[str, Any] | None:
    if row is None:
        return None
    record = orjson.loads(row.record)
    return {
        "id": record["id"],
        "title": say_in(Said.from_json(record["title"]), data_language),
        "severity": record["severity"],
        "started_at": record["started_at"],
        "page": routes.incident_page_url(row.service, record["id"]),
    }


def _list_as_of(data: SiteData, services: list[ServiceConfig]) -> str | None:
    times = [since for s in services if (since := data.state(s.slug).since) is not None]
    return iso(max(times)) if times else None


def services_document(
    data: SiteData, category: str | None, status: str | None, summaries: dict[str, dict[str, Any]]
) -> dict[str, Any]:
    chosen = [
        s
        for s in data.config.services
        if (category is None or s.category == category) and (status is None or summaries[s.slug]["status"] == status)
    ]
    return {
        "as_of": _list_as_of(data, chosen),
        "stale_after": stale_after(data, data.time),  # its as_of is the latest change of status, not the data's time
        "filters": {"category": category, "status": status},
        "count": len(chosen),
        "services": [summaries[s.slug] for s in chosen],
    }


def counts_by_status(data: SiteData) -> dict[str, int]:
    counts = dict.fromkeys(STATUSES, 0)
    for s in data.config.services:
        counts[data.state(s.slug).status.value] += 1
    return counts


def counts_by_category(data: SiteData) -> dict[str, dict[str, Any]]:
    out: dict[str, dict[str, Any]] = {}
    for cat, name in data.config.categories.items():
        members = [s for s in data.config.services if s.category == cat]
        by_status = dict.fromkeys(STATUSES, 0)
        for s in members:
            by_status[data.state(s.slug).status.value] += 1
        out[cat] = {"name": name, "total": len(members), "by_status": by_status}
    return out


def index_of(data: SiteData) -> float | None:
    return health_index(data.state(s.slug).status for s in data.config.services)


def notices_of(data: SiteData, svc: ServiceConfig, vendor: dict[str, Any] | None) -> list[Notice]:
    """The maintenance a service's readers are told about: configured, or announced by its vendor
    (``vendor``, its ``vendor_record``; unless its view is set aside as stale)."""
    view = vendor["view"] if vendor and not vendor["stale"] else None
    return told(scheduled(svc, data.now) + announced(svc.slug, view), data.now)


def site_notices(data: SiteData) -> list[Notice]:
    """The maintenance readers of the whole site are told about: every service's."""
    return told((n for s in data.config.services for n in notices_of(data, s, vendor_record(data, s))), data.now)


def ended_notices(data: SiteData) -> list[Notice]:
    """The configured maintenance that ended within ``HORIZON``, the latest end first: the feeds
    tell it completed."""
    found = [n for s in data.config.services for n in ended(s, data.now - HORIZON, data.now)]
    found.sort(key=lambda n: (n.service, n.title))
    return sorted(found, key=lambda n: n.end or n.start, reverse=True)  # stable: by service among equal ends


def maintenance_document(data: SiteData, notices: list[Notice]) -> list[dict[str, Any]]:
    return [n.to_json(data.now, data.service(n.service).name) for n in notices]


def overall_of(data: SiteData) -> dict[str, str]:
    """The site's status in a word and a sentence (the front page's first line), the sentence in
    the site's first language, as the whole JSON API."""
    said = translations(data.config.site.languages[0])
    found = overall((data.state(s.slug).status for s in data.config.services), said.gettext, said.ngettext)
    return {"status": found.status.value, "summary": found.summary}


def collection_of(data: SiteData, tag: str | None = None) -> dict[str, Any]:
    """The state of our own collection, its reason in the site's first language (or ``tag``'s)."""
    site = data.config.site
    found = collection_state(data.last_run, site.interval, site.stale_after_s, data.now)
    since = iso(data.epoch) if data.last_run else None  # the site's first run: no data before it
    return found | {"reason": say_in(found["reason"], tag or site.languages[0]), "collecting_since": since}


def stale_after(data: SiteData, as_of: datetime) -> str | None:
    """When a document of the present made of data ``as_of`` is out of date (``site.stale_after``):
    a reader past it should not take what the document says as current."""
    return iso(as_of + timedelta(seconds=data.config.site.stale_after_s))


def snapshot_document(data: SiteData, summaries: dict[str, dict[str, Any]], notices: list[Notice]) -> dict[str, Any]:
    return {
        "as_of": iso(data.time),
        "stale_after": stale_after(data, data.time),
        "title": data.config.site.title,
        **overall_of(data),
        "last_collection": collection_of(data)["last_run"],
        "health_index": index_of(data),
        "counts": {"by_status": counts_by_status(data), "by_category": counts_by_category(data)},
        "open_incidents": sum(1 for i in data.incidents if i.ended is None),
        "upcoming_maintenance": maintenance_document(data, notices),
        "count": len(data.config.services),
        "services": list(summaries.values()),
    }


def health_document(data: SiteData) -> dict[str, Any]:
    counted = [
        s
        for s in data.config.services
        if data.state(s.slug).status
        in (Status.OPERATIONAL, Status.DEGRADED, Status.PARTIAL_OUTAGE, Status.MAJOR_OUTAGE)
    ]
    return {
        "as_of": iso(data.time),
        "stale_after": stale_after(data, data.time),
        **overall_of(data),
        "health_index": index_of(data),
        "formula": translations(data.config.site.languages[0]).gettext(FORMULA) % {s.value: s.value for s in SCORES},
        "services_counted": len(counted),
        "services_total": len(data.config.services),
        "languages": list(data.config.site.languages),  # of the pages; the JSON speaks the first
        "collection": collection_of(data),
        "notifications": {k: data.notifications.get(k, 0) for k in NOTIFICATION_COUNTS},
        **({"locations": _locations(data)} if data.config.locations else {}),
        **({"inbox": _inbox(data.inbox)} if data.config.locations and data.inbox else {}),
    }


def _inbox(listing: InboxListing) -> dict[str, Any]:
    return {
        "listed_at": iso(listing.listed_at),
        "not_batches": listing.not_batches,
        "left_for_next": listing.left_for_next,
    }


def _locations(data: SiteData) -> list[dict[str, Any]]:
    """A site with [[locations]]: each location, this host first, with its last data and whether
    it is fresh (within site.stale_after of the data's time); one that is not is set aside."""
    site, run = data.config.site, data.last_run
    cut = data.time - timedelta(seconds=site.stale_after_s)
    here = run.finished_at if run else None
    out = [_location(site.location, True, here, run.checks_attempted if run else 0, None, cut)]
    for loc in data.config.locations:
        taken, refused = data.batches.get(loc.name), data.refused.get(loc.name)
        last = taken.sent_at if taken else None
        out.append(_location(loc.name, False, last, taken.results if taken else 0, refused, cut))
        out[-1]["refused_24h"] = data.refusals.get(loc.name, 0)
    return out


def _location(
    name: str, here: bool, last: datetime | None, results: int, refused: BatchRecord | None, cut: datetime
) -> dict[str, Any]:
    return {
        "name": name,
        "this_host": here,
        "last_at": iso(last),
        "results": results,
        "fresh": last is not None and last >= cut,
        "last_refused": None if refused is None else {"at": iso(refused.received_at), "reason": refused.refused},
        "refused_24h": 0,
    }


def incident_document(config: Config, row: IncidentRow, tag: str | None = None) -> dict[str, Any]:
    """An incident as the API tells it (in the site's first language; a page's in ``tag``): its
    record and what follows from it. Its times are the record's texts (the last update's is when
    it was updated)."""
    try:
        record = said_record(current_record(orjson.loads(row.record)), tag or config.site.languages[0])
    except DECODING:
        raise damaged(None, "incident", row.service, row.started) from None
    service, updates = row.service, record["updates"]
    svc = config.by_slug.get(service)
    return record | {
        "service_name": svc.name if svc else service,
        "open": row.ended is None,
        "updated_at": updates[-1]["at"] if updates else record["started_at"],
        "duration_s": None if row.ended is None else row.ended - row.started,
        "source": row.source,
        "links": {"page": routes.incident_page_url(service, record["id"]), "service": routes.service_url(service)},
    }


def said_record(record: dict[str, Any], tag: str) -> dict[str, Any]:
    """A stored incident record's words in a language: its title and its updates' messages, as
    the decisions made them (said again), the operator's and vendors' as they were written."""
    updates = [u | {"message": say_in(Said.from_json(u["message"]), tag)} for u in record["updates"]]
    return record | {"title": say_in(Said.from_json(record["title"]), tag), "updates": updates}


def incidents_document(made: list[dict[str, Any]], active: str | None, service: str | None = None) -> dict[str, Any]:
    """The incidents list (all, open or closed; of one service's, or every service's) of the
    incident documents ``made``. Its time is that of the latest update (the texts compare as the
    times)."""
    chosen = [d for d in made if active is None or d["open"] == (active == "1")]
    return {
        "as_of": max((d["updated_at"] for d in chosen), default=None),
        "filters": {"active": active, "service": service},
        "count": len(chosen),
        "incidents": chosen,
    }


def site_documents(data: SiteData, notices: list[Notice]) -> Documents:
    """The documents about the whole site but its incidents: snapshot, health, every list of
    services, error bodies. ``notices``: the maintenance readers are told about (``site_notices``)."""
    summaries = {s.slug: service_summary(data, s) for s in data.config.services}
    docs: Documents = {
        f"{routes.API}/snapshot.json": snapshot_document(data, summaries, notices),
        f"{routes.API}/health.json": health_document(data),
    }
    for cat in [None, *data.config.categories]:
        for status in [None, *STATUSES]:
            docs[routes.services_file(cat, status)] = services_document(data, cat, status, summaries)
    docs.update(error_documents(data.config))
    return docs


def incident_lists(made: list[dict[str, Any]]) -> Documents:
    """The three lists of incidents (all, open, closed) of every incident's document."""
    return {routes.incidents_file(active): incidents_document(made, active) for active in (None, "1", "0")}


def service_incident_lists(slug: str, made: list[dict[str, Any]]) -> Documents:
    """One service's three lists of incidents (all, open, closed), of its incidents' documents."""
    return {routes.incidents_file(active, slug): incidents_document(made, active, slug) for active in (None, "1", "0")}
