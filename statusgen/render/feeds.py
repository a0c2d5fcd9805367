"""Render: the Atom feeds (RFC 4287) of incidents, all and per service.

One entry per incident, newest first, whose ``updated`` moves when the
incident changes; ``tag:`` ids that never change; the whole timeline as
XHTML content. The feed is a template (``feed.xml``, autoescaped) of entries
(``feed-entry.xml``), each made once a build; this module gives them their
words, from the incident documents of the API.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any
from urllib.parse import urlsplit

from markupsafe import Markup

from statusgen import __version__, routes
from statusgen.config import Config, ServiceConfig
from statusgen.render.templating import render
from statusgen.timeutil import human_duration, iso

SITE_FEED = "feed/incidents.xml"


def tag_authority(config: Config) -> str:
    return urlsplit(config.site.base_url).hostname or "localhost"


def feed_entry(base_url: str, doc: dict[str, Any], authority: str) -> dict[str, Any]:
    """What an incident's entry says, from its document (``documents.incident_document``): its
    times are the texts of the incident's record."""
    updates, started, is_open = doc["updates"], doc["started_at"], doc["open"]
    state = f"ongoing, severity {doc['severity']}" if is_open else "resolved"
    lasted = "ongoing" if is_open else human_duration(timedelta(seconds=doc["duration_s"]))
    return {
        "id": f"tag:{authority},{started[:10]}:incident/{doc['id']}",  # the day it started, in UTC: never changes
        "title": f"{doc['title']}{'' if is_open else ' (resolved)'}",
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
    }


def feed_entries(config: Config, incidents: list[dict[str, Any]]) -> dict[str, Markup]:
    """Each incident's entry (``feed-entry.xml``), by incident id: made once a build, for the site
    feed and its service's feed alike."""
    site, host = config.site, tag_authority(config)
    return {
        d["id"]: Markup(render("feed-entry.xml", e=feed_entry(site.base_url, d, host)).decode("utf-8"))
        for d in incidents
    }


def feed(
    config: Config,
    epoch: datetime,
    incidents: list[dict[str, Any]],
    entries: dict[str, Markup],
    service: ServiceConfig | None = None,
) -> bytes:
    """The feed of every incident (``service`` None) or of one service's, from their documents,
    newest first, and their entries (``feed_entries``). Its ``updated`` is that of its latest
    incident, else the site's first run."""
    site, host, since = config.site, tag_authority(config), f"{epoch:%Y-%m-%d}"
    if service is None:
        path, title, alternate = SITE_FEED, f"{site.title}: incidents", "/incidents/"
        feed_id = f"tag:{host},{since}:feed/incidents"
    else:
        path, title = routes.service_feed_file(service.slug), f"{service.name}: incidents ({site.title})"
        alternate, feed_id = routes.service_page_url(service.slug), f"tag:{host},{since}:feed/services/{service.slug}"
    head = {
        "id": feed_id,
        "title": title,
        "subtitle": f"Incidents recorded by {site.title}",
        "updated": max((d["updated_at"] for d in incidents), default=None) or iso(epoch),
        "self_url": f"{site.base_url}/{path}",
        "alternate_url": site.base_url + alternate,
    }
    told = [entries[d["id"]] for d in incidents]
    return render("feed.xml", feed=head, entries=told, site=site, version=__version__)
