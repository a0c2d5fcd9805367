"""Render: the Atom feeds (RFC 4287) of incidents, all and per service.

One entry per incident, newest first, whose ``updated`` moves when the
incident changes (a note of the operator's included); ``tag:`` ids that never
change; the whole timeline as HTML content, escaped (``type="html"``: the
operator's Markdown is sanitized HTML, which XHTML content could not hold).
Among them, one entry per maintenance readers are told about (configured,
planned by the operator, announced by a vendor), updated when it begins and,
when it is configured or planned, when it ends. The feed is a template
(``feed.xml``, autoescaped) of entries (``feed-entry.xml``), each made once
a build; this module gives them their words, from the documents of the API.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any, NamedTuple
from urllib.parse import urlsplit

from markupsafe import Markup

from statusgen import __version__, routes
from statusgen.config import Config, ServiceConfig
from statusgen.decide.maintenance import HORIZON, Notice, by_maintenance
from statusgen.i18n import N_, Language, said_list, say_in
from statusgen.render.templating import render
from statusgen.render.words import Words, words
from statusgen.timeutil import iso

SITE_FEED = "feed/incidents.xml"


def tag_authority(config: Config) -> str:
    return urlsplit(config.site.base_url).hostname or "localhost"


def language(config: Config) -> Language:
    """The feeds speak the site's first language, as the JSON does."""
    return Language(config.site.languages[0])


def feed_entry(base_url: str, doc: dict[str, Any], authority: str, w: Words) -> dict[str, Any]:
    """What an incident's entry says, from its document (``documents.incident_document``): its
    times are the texts of the incident's record."""
    updates, started, is_open = doc["updates"], doc["started_at"], doc["open"]
    if is_open:
        state = w.gettext("ongoing, severity %(severity)s") % {"severity": doc["severity"]}
        title = doc["title"]
    else:
        state, title = w.gettext("resolved"), w.gettext("%(title)s (resolved)") % {"title": doc["title"]}
    lasted = w.gettext("ongoing") if is_open else w.duration(doc["duration_s"])
    return {
        "id": f"tag:{authority},{started[:10]}:incident/{doc['id']}",  # the day it started, in UTC: never changes
        "title": title,
        "published": started,
        "updated": doc["updated_at"],
        "url": base_url + doc["links"]["page"],
        "severity": doc["severity"],
        "service": doc["service"],
        "service_name": doc["service_name"],
        "summary": updates[-1]["message"] if updates else doc["title"],
        "state_words": state,
        "ended": doc["ended_at"],
        "duration": lasted,
        "updates": updates,
        "operator": doc["source"] == "operator",
        "categories": [
            (doc["severity"], w.gettext("Severity: %(severity)s") % {"severity": doc["severity"]}),
            (doc["service"], w.gettext("Service: %(name)s") % {"name": doc["service_name"]}),
        ],
        "content": "feed-content.html",  # the template of its content
    }


def feed_entries(config: Config, incidents: list[dict[str, Any]]) -> dict[str, Markup]:
    """Each incident's entry (``feed-entry.xml``), by incident id: made once a build, for the site
    feed and its service's feed alike."""
    site, host, lang = config.site, tag_authority(config), language(config)
    w = words(lang)
    return {
        d["id"]: Markup(render("feed-entry.xml", lang, e=feed_entry(site.base_url, d, host, w)).decode("utf-8"))
        for d in incidents
    }


class MaintenanceEntry(NamedTuple):
    services: frozenset[str]  # the slugs of the services it is about
    published: str
    updated: str
    entry: Markup


SOURCE_WORDS = {
    "schedule": N_("Scheduled by the operator"),
    "operator": N_("Planned by the operator"),
    "vendor": N_("Announced by the vendor"),
}


def maintenance_entries(
    config: Config, epoch: datetime, notices: Sequence[Notice], now: datetime
) -> list[MaintenanceEntry]:
    """One entry per maintenance of ``notices`` (``maintenance.told``'s, then those that ended
    lately): a planned maintenance of several services is one entry. Its id names it for good
    (``Notice.key``); it is published when it is first told, updated when it begins and when it
    ends."""
    site, host, lang = config.site, tag_authority(config), language(config)
    w = words(lang)
    out = []
    for group in by_maintenance(notices):
        n, names = group[0], [config.by_slug[g.service].name for g in group]
        key = n.key
        over = n.over(now)
        if over:
            state, headline, updated = w.gettext("completed"), w.gettext("Maintenance completed"), n.end
        elif n.in_progress(now):
            state, headline, updated = w.gettext("in progress"), w.gettext("Maintenance in progress"), n.start
        else:
            state, headline, updated = w.gettext("upcoming"), w.gettext("Maintenance"), n.start - HORIZON
        m = {
            "title": n.title,
            "state_words": state,
            "start": iso(n.start),
            "end": iso(n.end),
            "service_names": names,
            "source_words": w.gettext(SOURCE_WORDS[n.source]),
            "message": n.message,
        }
        said: dict[str, object] = {"headline": headline, "title": n.title, "names": say_in(said_list(names), lang.tag)}
        said |= {"state": state, "start": m["start"], "end": m["end"]}
        e: dict[str, Any] = {
            "id": f"tag:{host},{epoch:%Y-%m-%d}:maintenance/{n.source}/{key}",
            "title": w.gettext("%(headline)s: %(title)s (%(names)s)") % said,
            "published": iso(n.start - HORIZON),
            "updated": iso(updated),
            "url": site.base_url + routes.service_page_url(n.service),
            "categories": [("maintenance", w.gettext("Maintenance"))]
            + [
                (g.service, w.gettext("Service: %(name)s") % {"name": name})
                for g, name in zip(group, names, strict=True)
            ],
            "summary": (
                w.gettext("%(title)s: %(state)s, from %(start)s to %(end)s.")
                if over
                else w.gettext("%(title)s: %(state)s, from %(start)s.")
            )
            % said,
            "content": "feed-maintenance.html",
        }
        entry = Markup(render("feed-entry.xml", lang, e=e, m=m).decode("utf-8"))
        out.append(MaintenanceEntry(frozenset(g.service for g in group), e["published"], e["updated"], entry))
    return out


def feed(
    config: Config,
    epoch: datetime,
    incidents: list[dict[str, Any]],
    entries: dict[str, Markup],
    service: ServiceConfig | None = None,
    maintenance: Sequence[MaintenanceEntry] = (),
) -> bytes:
    """The feed of every incident (``service`` None) or of one service's, from their documents,
    newest first, and their entries (``feed_entries``), after the maintenance entries about them
    (``maintenance_entries``). Its ``updated`` is that of its latest entry, else the site's first run."""
    if service is not None:
        maintenance = [m for m in maintenance if service.slug in m.services]
    site, host, since = config.site, tag_authority(config), f"{epoch:%Y-%m-%d}"
    lang = language(config)
    w = words(lang)
    if service is None:
        path, title, alternate = SITE_FEED, w.gettext("%(title)s: incidents") % {"title": site.title}, "/incidents/"
        feed_id = f"tag:{host},{since}:feed/incidents"
    else:
        said = {"name": service.name, "title": site.title}
        path, title = routes.service_feed_file(service.slug), w.gettext("%(name)s: incidents (%(title)s)") % said
        alternate, feed_id = routes.service_page_url(service.slug), f"tag:{host},{since}:feed/services/{service.slug}"
    head = {
        "id": feed_id,
        "title": title,
        "subtitle": w.gettext("Incidents recorded by %(title)s") % {"title": site.title},
        "updated": max([d["updated_at"] for d in incidents] + [m.updated for m in maintenance], default=None)
        or iso(epoch),  # the texts are iso's: they compare as the times
        "self_url": f"{site.base_url}/{path}",
        "alternate_url": site.base_url + alternate,
    }
    told = [(d["started_at"], entries[d["id"]]) for d in incidents] + [(m.published, m.entry) for m in maintenance]
    told.sort(key=lambda t: t[0], reverse=True)  # newest first (stable: the incidents' order among equals)
    return render("feed.xml", lang, feed=head, entries=[e for _, e in told], site=site, version=__version__)
