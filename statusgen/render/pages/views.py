"""Render: the web pages, each a template and the JSON documents it shows.

    index.html                   the front page: health index, counts, open incidents,
                                 every service by category with its 90-day bar
    services/{slug}/index.html   one service: state and reason, vendor view, checks,
                                 latency and availability charts, days, incidents, links
    services/{slug}/incidents/index.html
                                 every incident of one service, each told in full
                                 (an incident's URL is its part there: ``routes.incident_page_url``)
    incidents/index.html         open incidents with their timelines, the last 30 days by day,
                                 and every month
    incidents/{YYYY-MM}/index.html, incidents/{YYYY-MM-DD}/index.html
                                 a month's incidents by day, and a day's
    method/index.html            how the checks are made, from the configuration
    subscribe/index.html         every way to follow the site: email, feeds, calendars, chats
    api/index.html               every endpoint: parameters, caching, limits, examples
    _errors/404.html, 429.html   a missing page, and a browser that asked too often

One source of truth: every number a page shows is read from the JSON
documents of the build, never recomputed, so the pages and the API cannot
disagree. The configuration gives only words (title, vantage point) and, on
the method page, the settings that no JSON document carries.

Links are root-relative (``/services/acme/``), like the ``links`` of the JSON
documents: the tree works wherever it is served at the root of a host. Pages
ask for nothing outside the site: a stylesheet, an icon and one small script
under ``/static/``, no web fonts. The script only adds: without it every page
tells the same in words.
"""

from __future__ import annotations

import json
from datetime import date, datetime, timedelta
from typing import Any

from markupsafe import Markup

from statusgen import policy, routes
from statusgen.config import Config, SiteConfig
from statusgen.decide.health import FORMULA, SCORES
from statusgen.decide.history import History
from statusgen.decide.overall import summary
from statusgen.i18n import N_, SENTENCES, Language
from statusgen.mailto import SUBSCRIBE, mailto
from statusgen.model import DESCRIPTIONS, RANGES, STATUS_WORDS, STATUSES, Outcome, Status
from statusgen.render.api.documents import configured_record
from statusgen.render.api.openapi import EMPTY, TOO_MANY, openapi_document
from statusgen.render.formats.feeds import SITE_FEED
from statusgen.render.formats.statuspage_openapi import statuspage_openapi_document
from statusgen.render.pages import charts
from statusgen.render.templating import render, render_text
from statusgen.render.words import LEGEND, Words, words
from statusgen.timeutil import iso

RECENT_DAYS = 30  # the incidents page lists the past incidents of these last days, by day
DAY_ROWS = 10  # the incidents and month pages list a day's newest incidents; the day's own page all
PAST_ON_SERVICE_PAGE = 5  # a service page lists its newest past incidents; its incidents page has them all
#: Failure outcomes of a check (the vendor-only ``parse`` is not one).
CHECK_FAILURES = tuple((o.value, DESCRIPTIONS[o]) for o in Outcome if o not in (Outcome.OK, Outcome.PARSE))

Document = dict[str, Any]


def front_bar(ninety: History, lang: Language, since: datetime | None = None) -> Markup:
    """A service's bar on the front page, from its 90-day history: its cells and its summary;
    ``since``, the site's first run: a younger site's days before it are no data yet."""
    starts = [p["start"] for p in ninety.document["points"]]
    young = since is not None and bool(starts) and iso(since) > starts[0]
    return Markup(
        render_text(
            "front-bar.html",
            lang,
            cells=charts.bar(ninety.columns, starts, since),
            days=ninety.document["summary"],
            since=iso(since) if young and since else None,
        )
    )


def site_summary(snapshot: Document, lang: Language) -> str:
    """The snapshot's sentence (``decide.overall``) in a page's language, from its counts."""
    counts = {Status(s): n for s, n in snapshot["counts"]["by_status"].items()}
    w = words(lang)
    return summary(counts, w.gettext, w.ngettext)


#: The front page's headline, a few words before its sentence (``headline``).
HEADLINES = {
    "all": N_("All services operational"),
    "none": N_("No service measured yet"),
    "measured": N_("All measured services operational"),
}


def headline(snapshot: Document, lang: Language) -> tuple[str, str]:
    """The front page's first words and the status whose colour and mark they take: "All
    services operational", "Major outage: Legacy Gateway" (one service affected), "3 services
    affected" (the worst status's colour)."""
    w = words(lang)
    services = snapshot["services"]
    affected = [s for s in services if s["status"] not in (Status.OPERATIONAL.value, Status.UNKNOWN.value)]
    if not affected:
        if all(s["status"] == Status.UNKNOWN.value for s in services):
            return Status.UNKNOWN.value, w.gettext(HEADLINES["none"])
        measured = any(s["status"] == Status.UNKNOWN.value for s in services)
        return Status.OPERATIONAL.value, w.gettext(HEADLINES["measured" if measured else "all"])
    worst = snapshot["status"]
    if len(affected) == 1:
        (one,) = affected
        return worst, w.gettext("%(status)s: %(name)s") % {"status": w.status_word(one["status"]), "name": one["name"]}
    n = len(affected)
    return worst, w.ngettext("%(n)s service affected", "%(n)s services affected", n) % {"n": w.number(n)}


def front_page(
    site: SiteConfig,
    lang: Language,
    snapshot: Document,
    health: Document,
    open_incidents: Document,
    bars: dict[str, Markup],
    todays: dict[str, Document] | None = None,
) -> bytes:
    """The health index, the counts, open incidents, and every service with its 90-day bar.
    ``bars``: each service's ``front_bar``; ``todays``: each one's day so far (its record's
    bucket in progress of the 90-day history), drawn at the bar's end."""
    return render(
        "index.html",
        lang,
        site=site,
        here="/",
        nav="status",
        snapshot=snapshot,
        summary=site_summary(snapshot, lang),
        headline=headline(snapshot, lang),
        health=health,
        open_incidents=open_incidents["incidents"],
        categories=by_category(snapshot),
        bars=bars,
        todays={slug: charts.day_letter(point) for slug, point in (todays or {}).items()},
        legend=[(css, words(lang).gettext(said)) for css, said in LEGEND],
        statuses=STATUSES,
    )


def by_category(snapshot: Document) -> list[Document]:
    """The services as the front page groups them: by category, in the snapshot's order, each
    category with its counts; a category without services is left out."""
    categories = []
    for slug, counts in snapshot["counts"]["by_category"].items():
        members = [s for s in snapshot["services"] if s["category"] == slug]
        if members:
            categories.append({"slug": slug, "counts": counts, "services": members})
    return categories


#: What moves with every result: the page leaves it out (``service_page_view``), and its script
#: shows it from the record, where JavaScript runs.
LIVE_FIELDS = {
    "service": ("last_day", "in_progress", "this_month"),
    "state": ("evidence",),
    "check": ("last_result", "locations"),
    "vendor": ("outcome", "detail", "fetched_at", "last_ok_at"),
}


def _without(doc: Document, fields: tuple[str, ...]) -> Document:
    return {k: v for k, v in doc.items() if k not in fields}


def service_page_view(
    config: Config, record: Document, incidents: list[Document], reason: str | None = None
) -> Document:
    """Everything a service's page shows but its charts: its record without what moves with every
    result (``LIVE_FIELDS``), and its incidents. The page is made again only when this changes (or
    a history it draws does). ``reason`` and ``incidents``: in the page's language, when it is not
    the record's (the site's first)."""
    s = record["service"]
    service = _without(s, LIVE_FIELDS["service"])
    service["state"] = _without(s["state"], LIVE_FIELDS["state"])
    if reason is not None:
        service["state"]["reason"] = reason
        opened = next((i for i in incidents if i["open"]), None)
        if service["open_incident"] and opened:
            service["open_incident"] = service["open_incident"] | {"title": opened["title"]}
    # A certificate's figures (days left, issuer, names) change by the day at most: on the page.
    service["checks"] = [
        _without(c, LIVE_FIELDS["check"]) | {"certificate": (c["last_result"] or {}).get("certificate")}
        for c in s["checks"]
    ]
    if s["vendor"] is not None:
        service["vendor"] = _without(s["vendor"], LIVE_FIELDS["vendor"])
    past = [i for i in incidents if not i["open"]]
    return {
        "service": service,
        "category_name": config.categories.get(s["category"]) or s["category"],
        "open_incidents": [i for i in incidents if i["open"]],
        "past_count": len(past),
        "past_shown": past[:PAST_ON_SERVICE_PAGE],
        "interval_s": config.site.interval,
        "locations": list(config.location_names) if config.locations else [],
        # this month's figures move with every result (its script tells them); the month and target do not
        "month": {
            "month": s["this_month"]["month"],
            "page": s["this_month"]["links"]["page"],
            "sla": (s["this_month"]["sla"] or {}).get("target"),
        },
    }


def service_page(site: SiteConfig, lang: Language, view: Document, panels: dict[str, Markup], days: Markup) -> bytes:
    """One service (``service_page_view``): state, vendor view, checks, the panel of every range
    (``service_panel``), its days (``service_days``), incidents and links. Open incidents are told
    with their timelines; the newest past ones are listed, each linking its timeline on the
    service's incidents page, which tells them all."""
    return render(
        "service.html",
        lang,
        site=site,
        here=routes.service_page_url(view["service"]["slug"]),
        nav="status",
        view=view,
        ranges=list(panels),
        panels=list(panels.values()),
        days=days,
    )


def service_panel(slug: str, name: str, history: History, lang: Language) -> Markup:
    """A range's panel of a service page: its summary and its charts."""
    p = {
        "name": name,
        "history": history.document,
        "url": routes.history_url(slug, name),
        "record": routes.service_url(slug),
        "latency": charts.latency(history, words(lang)),
        "availability": charts.availability(history, words(lang)),
    }
    return Markup(render_text("service-panel.html", lang, p=p))


def service_days(ninety: History, lang: Language) -> Markup:
    """The rows of a service page's day-by-day table, from its 90-day history."""
    return Markup(render_text("service-days.html", lang, days=charts.day_rows(ninety.points(), words(lang))))


def service_incidents_page(site: SiteConfig, lang: Language, slug: str, name: str, incidents: list[Document]) -> bytes:
    """Every incident of one service, newest first, each told in full."""
    return render(
        "service-incidents.html",
        lang,
        site=site,
        here=routes.service_incidents_url(slug),
        nav="incidents",
        slug=slug,
        name=name,
        incidents=incidents,
    )


def incident_day(started_at: str) -> str:
    """The UTC day an incident started, as its pages are named (``2026-11-22``)."""
    return started_at[:10]


def incidents_pages(site: SiteConfig, lang: Language, lists: dict[str, Document], today: date) -> dict[str, bytes]:
    """The incidents pages: ``incidents/`` (open incidents told in full, then the past ones of the
    last RECENT_DAYS days grouped by day, then every month), one page a month and one a day. A day
    lists its newest DAY_ROWS incidents on the first two and all of them on its own, so that
    every page stays small however many services a site has."""
    past = lists[routes.incidents_file("0")]["incidents"]
    days: dict[str, list[Document]] = {}
    for incident in past:  # newest first
        days.setdefault(incident_day(incident["started_at"]), []).append(incident)
    months: dict[str, list[str]] = {}
    for day in days:
        months.setdefault(day[:7], []).append(day)
    since = (today - timedelta(days=RECENT_DAYS - 1)).isoformat()
    out = {
        "incidents/index.html": render(
            "incidents.html",
            lang,
            site=site,
            here="/incidents/",
            nav="incidents",
            open_list=lists[routes.incidents_file("1")],
            past_count=len(past),
            days=[(day, days[day]) for day in days if day >= since],
            months=[(month, sum(len(days[d]) for d in in_month)) for month, in_month in months.items()],
            rows=DAY_ROWS,
            as_of=lists[routes.incidents_file()]["as_of"],
        )
    }
    for month, in_month in months.items():
        out[routes.incidents_page_file(month)] = render(
            "incidents-month.html",
            lang,
            site=site,
            here=routes.incidents_page_url(month),
            nav="incidents",
            month=month,
            days=[(day, days[day]) for day in in_month],
            rows=DAY_ROWS,
        )
    for day, told in days.items():
        out[routes.incidents_page_file(day)] = render(
            "incidents-day.html",
            lang,
            site=site,
            here=routes.incidents_page_url(day),
            nav="incidents",
            day=day,
            incidents=told,
        )
    return out


def method_page(config: Config, lang: Language, health: Document) -> bytes:
    """How the checks are made: the health document, the fields of each service's record that its
    configuration makes (``configured_record``), what only the configuration holds, and each
    range's bucket count and size."""
    services = [{"record": configured_record(s), "config": s} for s in config.services]
    ranges = [{"name": name, "count": rng.buckets, "resolution_s": rng.resolution_s} for name, rng in RANGES.items()]
    return render(
        "method.html",
        lang,
        site=config.site,
        here="/method/",
        nav="method",
        health=health
        | {"formula": words(lang).gettext(FORMULA) % {s.value: words(lang).gettext(STATUS_WORDS[s]) for s in SCORES}},
        services=services,
        ranges=ranges,
        outcomes=[(code, words(lang).gettext(said)) for code, said in CHECK_FAILURES],
        any_vendor=any(s.vendor for s in config.services),
        any_maintenance=any(s.maintenance for s in config.services),
        locations=config.locations,
    )


def subscribe_page(config: Config, lang: Language, snapshot: Document) -> bytes:
    """Every way to follow the site: email when ``[subscriptions]`` is set (a ``mailto:`` link
    for the whole site and one for each service, in the page's language: ``statusgen.mailto``),
    the Atom feeds and maintenance calendars, the site's and each service's, and chats that
    follow a feed. Only names and slugs are read from the snapshot: the page changes when the
    services do, not with their status."""
    email = None
    if config.subscriptions:
        address = config.subscriptions.address
        email = {
            "address": address,
            "site": mailto(address, SUBSCRIBE, (), lang.tag),
            "services": {s["slug"]: mailto(address, SUBSCRIBE, (s["slug"],), lang.tag) for s in snapshot["services"]},
        }
    base = config.site.base_url.rstrip("/")
    return render(
        "subscribe.html",
        lang,
        site=config.site,
        here=routes.SUBSCRIBE_PAGE,
        nav="subscribe",
        categories=by_category(snapshot),
        email=email,
        feed=f"/{SITE_FEED}",
        feed_url=base + f"/{SITE_FEED}",  # chats and readers are given the whole URL
        calendar=f"/{routes.CALENDAR}",
        calendar_url=base + f"/{routes.CALENDAR}",
        service_calendars={s["slug"]: f"/{routes.service_calendar_file(s['slug'])}" for s in snapshot["services"]},
    )


def embed_pages(site: SiteConfig, lang: Language, snapshot: Document) -> dict[str, bytes]:
    """The embeddable status: the site's in one line (``/embed/``), and each service's
    (``/embed/{slug}/``), each linked to its page. They change only when a status does."""
    out = {
        routes.embed_file(): render(
            "embed.html",
            lang,
            json_language=site.languages[0],
            site_title=site.title,
            name=site.title,
            state=snapshot["status"],
            word=words(lang).status_word(snapshot["status"]),
            sentence=site_summary(snapshot, lang),
            link=lang.url("/"),  # a frame's links are read against its own address: the site's
            subscribe=lang.url(routes.SUBSCRIBE_PAGE),
        )
    }
    for s in snapshot["services"]:
        out[routes.embed_file(s["slug"])] = render(
            "embed.html",
            lang,
            json_language=site.languages[0],
            site_title=site.title,
            name=s["name"],
            state=s["status"],
            word=words(lang).status_word(s["status"]),
            sentence=None,
            link=lang.url(s["links"]["page"]),
            subscribe=lang.url(routes.SUBSCRIBE_PAGE),
        )
    return out


def error_pages(site: SiteConfig, lang: Language) -> dict[str, bytes]:
    """The errors told to people (a browser that asks for a missing page, or asks too often): HTML
    pages in the site's layout. The interface's errors are the JSON bodies (``errorbodies``)."""
    return {
        routes.error_page_file("404"): render("error.html", lang, site=site, nav=None, status=404),
        routes.error_page_file("429"): render(
            "error.html", lang, site=site, nav=None, status=429, per_minute=policy.PAGES_PER_MINUTE
        ),
    }


def _example_url(path: str, operation: Document, slug: str, month: str) -> str:
    """A real URL of this site for an endpoint: the first service, the build's month, the first
    value of each parameter."""
    query = [
        f"{p['name']}={p['schema']['enum'][0]}"
        for p in operation["parameters"]
        if p["in"] == "query" and p["schema"].get("enum")
    ]
    url = path.replace("{slug}", slug).replace("{month}", month)
    return url + ("?" + "&".join(query) if query else "")


#: Where an API parameter goes, in words.
PARAMETER_PLACES = {"query": N_("query"), "path": N_("path")}


def _in_words(text: str, w: Words) -> str:
    """A text of the OpenAPI documents in a page's language: each is a message of the catalog,
    but a query parameter's (its own and ``EMPTY``) and a 429's (``TOO_MANY`` and its limit)."""
    for limit in (policy.RATE_PER_MINUTE, policy.PAGES_PER_MINUTE):
        if text == TOO_MANY % {"n": limit}:
            return w.gettext(TOO_MANY) % {"n": w.number(limit)}
    if text.endswith(f" {EMPTY}"):
        return w.gettext(SENTENCES) % {"first": w.gettext(text.removesuffix(f" {EMPTY}")), "next": w.gettext(EMPTY)}
    return w.gettext(text)


def _endpoints(document: Document, slug: str, month: str, w: Words) -> list[Document]:
    return [
        {
            "path": path,
            "summary": _in_words(item["get"]["summary"], w),
            "parameters": [
                p | {"description": _in_words(p["description"], w), "where": w.gettext(PARAMETER_PLACES[p["in"]])}
                for p in item["get"]["parameters"]
            ],
            "responses": [
                (code, r | {"description": _in_words(r["description"], w)})
                for code, r in sorted(item["get"]["responses"].items())
            ],
            "example": _example_url(path, item["get"], slug, month),
        }
        for path, item in document["paths"].items()
    ]


def api_page(config: Config, lang: Language, health: Document, error: Document) -> bytes:
    """Every endpoint of the OpenAPI documents, with caching, limits and examples of this build."""
    slug = config.services[0].slug if config.services else "example"
    month = health["as_of"][:7]  # the build's month: its report is in the tree
    endpoints = _endpoints(openapi_document(config), slug, month, words(lang))
    statuspage = _endpoints(statuspage_openapi_document(config), slug, month, words(lang))
    return render(
        "api.html",
        lang,
        site=config.site,
        here="/api/",
        nav="api",
        endpoints=endpoints,
        statuspage=statuspage,
        statuspage_openapi=f"/{routes.STATUSPAGE}/openapi.json",
        example={"slug": slug, "base": config.site.base_url},
        health_json=json.dumps(health, indent=2, ensure_ascii=False),
        error_json=json.dumps(error, indent=2, ensure_ascii=False),
        max_age=policy.MAX_AGE,
        per_minute=policy.RATE_PER_MINUTE,
        pages_per_minute=policy.PAGES_PER_MINUTE,
        statuses=STATUSES,
        ranges=list(RANGES),
    )
