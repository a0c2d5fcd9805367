"""Render: the Atom feeds (RFC 4287) of incidents, all and per service.

One entry per incident, newest first, whose ``updated`` moves when the
incident changes; ``tag:`` ids that never change; the whole timeline as
XHTML content. The feed's head is a template (``feed.xml``, autoescaped);
its entries, one per incident (the site feed of a site some years old holds
tens of thousands), are made here: every text passes through ``escape``
(``htmltext``: the text markupsafe's makes, as Jinja's autoescape does),
once, and the result is Markup.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator, Mapping
from datetime import datetime, timedelta
from functools import partial
from typing import Any
from urllib.parse import urlsplit

from jinja2 import Environment
from markupsafe import Markup

from statusgen import __version__, routes
from statusgen.config import Config
from statusgen.render.documents import incidents_by_service
from statusgen.render.gather import SiteData
from statusgen.render.htmltext import escape
from statusgen.timeutil import human_duration, iso


def tag_authority(config: Config) -> str:
    return urlsplit(config.site.base_url).hostname or "localhost"


def feed_entry(base_url: str, doc: dict[str, Any], authority: str) -> dict[str, Any]:
    """What an incident's entry says, from its document (``documents.incident_document``): its
    times are the texts of the incident's record."""
    updates, started, is_open = doc["updates"], doc["started_at"], doc["open"]
    state = f"ongoing, severity {doc['severity']}" if is_open else "resolved"
    lasted = "ongoing" if is_open else human_duration(timedelta(seconds=doc["duration_s"]))
    return {
        "id": f"tag:{authority},{started[:10]}:incident/{doc['id']}",    # the day it started, in UTC: never changes
        "title": f"{doc['title']}{'' if is_open else ' (resolved)'}",
        "published": started, "updated": doc["updated_at"], "url": base_url + doc["links"]["page"],
        "severity": doc["severity"], "service": doc["service"], "service_name": doc["service_name"],
        "summary": updates[-1]["message"] if updates else doc["title"], "state_words": state,
        "ended": doc["ended_at"], "duration": lasted, "updates": updates,
    }


def _feed_updated(docs: list[dict[str, Any]], fallback: datetime) -> str | None:
    """When the latest of ``docs`` was updated (their texts compare as the times), else ``fallback``."""
    return max((d["updated_at"] for d in docs), default=None) or iso(fallback)


def _update_xml(u: dict[str, Any]) -> str:
    return (f"\n          <li><strong>{escape(u['at'])}</strong> ({escape(u['kind'])}, {escape(u['status'])}): "
            f"{escape(u['message'])}</li>")


def entry_xml(e: dict[str, Any]) -> str:
    """One ``<entry>`` (a ``feed_entry``), its text escaped."""
    ended = f", resolved {escape(e['ended'])}" if e["ended"] else ""
    return (f"\n  <entry>\n    <id>{escape(e['id'])}</id>\n    <title>{escape(e['title'])}</title>\n"
            f"    <published>{escape(e['published'])}</published>\n    <updated>{escape(e['updated'])}</updated>\n"
            f'    <link rel="alternate" type="text/html" href="{escape(e["url"])}"/>\n'
            f'    <category term="{escape(e["severity"])}" label="Severity: {escape(e["severity"])}"/>\n'
            f'    <category term="{escape(e["service"])}" label="Service: {escape(e["service_name"])}"/>\n'
            f"    <summary>{escape(e['summary'])}</summary>\n"
            f'    <content type="xhtml">\n      <div xmlns="http://www.w3.org/1999/xhtml">\n'
            f"        <p>{escape(e['service_name'])}: {escape(e['state_words'])}. Started {escape(e['published'])}"
            f"{ended} ({escape(e['duration'])}).</p>\n        <ol>{''.join([_update_xml(u) for u in e['updates']])}"
            f"\n        </ol>\n      </div>\n    </content>\n  </entry>")


class Entries:
    """Each incident's ``<entry>``, made once per build: the site feed and its service's
    feed hold the same text (7,000 incidents in 90 days of 1,000 services)."""

    def __init__(self, data: SiteData):
        self.base_url, self.authority = data.config.site.base_url, tag_authority(data.config)
        self.made: dict[str, str] = {}

    def __call__(self, docs: list[dict[str, Any]]) -> Markup:
        """The entries of the incidents ``docs``, in order, as markup (each text escaped once, when made)."""
        made, out = self.made, []
        for doc in docs:
            text = made.get(doc["id"])
            if text is None:
                text = made[doc["id"]] = entry_xml(feed_entry(self.base_url, doc, self.authority))
            out.append(text)
        return Markup("".join(out))


def render_feed(env: Environment, data: SiteData, docs: list[dict[str, Any]], path: str,
                title: str, alternate: str, feed_id: str, entries: Entries) -> bytes:
    """A feed of the incidents ``docs`` (their documents, newest first)."""
    site = data.config.site
    feed = {"id": feed_id, "title": title, "subtitle": f"Incidents recorded by {site.title}",
            "updated": _feed_updated(docs, data.epoch), "self_url": f"{site.base_url}/{path}",
            "alternate_url": site.base_url + alternate}
    text = env.get_template("feed.xml").render(feed=feed, entries=entries(docs),
                                               site=site, version=__version__)
    return text.encode("utf-8")


SITE_FEED = "feed/incidents.xml"


def feeds(env: Environment, data: SiteData, docs: Mapping[str, Any]
          ) -> Iterator[tuple[str, list[Any], Callable[[], bytes]]]:
    """Each feed: its path, what it is made from (for a build's keys), and how to render it, from
    the build's incident documents (``docs``: tree path -> document).

    The site feed comes first. It is made of every incident and every service's slug and
    name: all that any feed, the incidents page or an incident's page is made of (with the
    site's settings and code, which are in every key), so a build that finds its key
    unchanged keeps all of them without keying each (``render._keyed_files``)."""
    host = tag_authority(data.config)
    since = f"{data.epoch:%Y-%m-%d}"
    site = data.config.site
    entries = Entries(data)

    def made_of(records: list[str], names: list[Any]) -> list[Any]:
        return [iso(data.epoch), records, names]   # records: the incidents' JSON as stored; names: of their services

    def render(slug: str | None, path: str, title: str, alternate: str, feed_id: str) -> bytes:
        """A feed of every incident (``slug`` None) or of one service's."""
        told = docs[routes.incidents_file()]["incidents"] if slug is None else by_service().get(slug, [])
        return render_feed(env, data, told, path, title, alternate, feed_id, entries)

    @functools.cache
    def by_service() -> dict[str, list[dict[str, Any]]]:
        return incidents_by_service(docs)    # only when a service's feed is rendered

    yield (SITE_FEED, made_of(data.incidents.records(), [(s.slug, s.name) for s in data.config.services]),
           partial(render, None, SITE_FEED, f"{site.title}: incidents", "/incidents/",
                   f"tag:{host},{since}:feed/incidents"))
    for svc in data.config.services:
        path = routes.service_feed_file(svc.slug)
        yield (path, made_of(data.incidents.records_of(svc.slug), [svc.name]), partial(
            render, svc.slug, path, f"{svc.name}: incidents ({site.title})", routes.service_page_url(svc.slug),
            f"tag:{host},{since}:feed/services/{svc.slug}"))
