"""Render: the Atom feeds (RFC 4287) of incidents, all and per service.

One entry per incident, newest first, whose ``updated`` moves when the
incident changes; ``tag:`` ids that never change; the whole timeline as
XHTML content. Text goes through Jinja autoescape, once.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from datetime import datetime
from functools import partial
from typing import Any
from urllib.parse import urlsplit

from jinja2 import Environment
from markupsafe import Markup

from . import __version__, routes
from .config import Config
from .incidents import Incident
from .sitedata import SiteData
from .timeutil import human_duration, iso


def tag_authority(config: Config) -> str:
    return urlsplit(config.site.base_url).hostname or "localhost"


def entry_id(config: Config, inc: Incident) -> str:
    return f"tag:{tag_authority(config)},{inc.started_at:%Y-%m-%d}:incident/{inc.id}"


def feed_entry(data: SiteData, inc: Incident) -> dict[str, Any]:
    base = data.config.site.base_url
    svc = data.config.by_slug.get(inc.service)
    state = "resolved" if not inc.open else f"ongoing, severity {inc.severity}"
    lasted = human_duration(inc.ended_at - inc.started_at) if inc.ended_at else "ongoing"
    return {
        "id": entry_id(data.config, inc), "title": f"{inc.title}{' (resolved)' if not inc.open else ''}",
        "published": iso(inc.started_at), "updated": iso(inc.updated_at), "url": base + routes.incident_page_url(inc.id),
        "severity": inc.severity, "service": inc.service, "service_name": svc.name if svc else inc.service,
        "summary": inc.updates[-1].message if inc.updates else inc.title, "state_words": state,
        "ended": iso(inc.ended_at), "duration": lasted,
        "updates": [u.to_json() for u in inc.updates],
    }


def _feed_updated(incidents: list[Incident], fallback: datetime) -> str | None:
    return iso(max((i.updated_at for i in incidents), default=fallback))


class Entries:
    """Each incident's ``<entry>``, rendered once per build: the site feed and its service's
    feed hold the same text (7,000 incidents in 90 days of 1,000 services)."""

    def __init__(self, env: Environment, data: SiteData):
        self.template, self.data = env.get_template("feed-entry.xml"), data
        self.made: dict[str, str] = {}

    def __call__(self, incidents: list[Incident]) -> Markup:
        """The entries of ``incidents``, in order, as markup (autoescaped when rendered)."""
        made, out = self.made, []
        for inc in incidents:
            text = made.get(inc.id)
            if text is None:
                text = made[inc.id] = self.template.render(e=feed_entry(self.data, inc))
            out.append(text)
        return Markup("".join(out))


def render_feed(env: Environment, data: SiteData, incidents: list[Incident], path: str,
                title: str, alternate: str, feed_id: str, entries: Entries) -> bytes:
    site = data.config.site
    feed = {"id": feed_id, "title": title, "subtitle": f"Incidents recorded by {site.title}",
            "updated": _feed_updated(incidents, data.epoch), "self_url": f"{site.base_url}/{path}",
            "alternate_url": site.base_url + alternate}
    text = env.get_template("feed.xml").render(feed=feed, entries=entries(incidents),
                                               site=site, version=__version__)
    return text.encode("utf-8")


def feeds(env: Environment, data: SiteData) -> Iterator[tuple[str, list[Any], Callable[[], bytes]]]:
    """Each feed: its path, what it is made from (for a build's keys), and how to render it."""
    host = tag_authority(data.config)
    since = f"{data.epoch:%Y-%m-%d}"
    site = data.config.site
    entries = Entries(env, data)

    def made_of(incidents: list[Incident], names: list[str]) -> list[Any]:
        return [iso(data.epoch), [i.to_json() for i in incidents], names]   # names: of the entries' services

    yield ("feed/incidents.xml", made_of(data.incidents, [s.name for s in data.config.services]), lambda: render_feed(
        env, data, data.incidents, "feed/incidents.xml", f"{site.title}: incidents",
        "/incidents/", f"tag:{host},{since}:feed/incidents", entries))
    for svc in data.config.services:
        path, incidents = routes.service_feed_file(svc.slug), data.incidents_of(svc.slug)
        yield (path, made_of(incidents, [svc.name]), partial(
            render_feed, env, data, incidents, path, f"{svc.name}: incidents ({site.title})",
            routes.service_page_url(svc.slug), f"tag:{host},{since}:feed/services/{svc.slug}", entries))
