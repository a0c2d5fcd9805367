"""Render: one service's files: its record, its four histories and its page.

``ServiceRenderer`` renders the services it is given into a generation
(through a ``tree.Placer``), reading their measurements from the store through
a connection of its own, so that it works alike in the building process and in
a worker process (``render.build``).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

import orjson

from statusgen import jsonout, routes
from statusgen.config import ServiceConfig
from statusgen.decide.history import COARSER, Closed, Columns, History, Span, closed_part, history, window
from statusgen.model import RANGES, Range
from statusgen.render import pages
from statusgen.render.documents import (
    as_of_service,
    incident_document,
    maintenance_document,
    notices_of,
    service_document,
    vendor_record,
)
from statusgen.render.gather import SiteData
from statusgen.render.histcache import HistoryCache, cache_path, entry_key
from statusgen.render.tree import Placer, digest
from statusgen.store import Store
from statusgen.timeutil import iso

Document = dict[str, Any]


def service_paths(slug: str) -> list[str]:
    """A service's files: its record, its histories, its page."""
    return [
        routes.service_file(slug),
        *(routes.history_file(slug, r) for r in RANGES),
        routes.service_page_url(slug).lstrip("/") + "index.html",
    ]


def service_key(data: SiteData, svc: ServiceConfig, site_key: str, last_day_count: int) -> str:
    """The key of what a service's files are made from: its configuration, state, measurements
    (their version moves with every write of its results or buckets), the results of its last day
    (with the same version, their count tells the same day: results leave it only from its old
    end), its vendor record and incidents, and the site's settings and code (``site_key``)."""
    vendor = vendor_record(data, svc)
    made_of = [
        site_key,
        repr(svc),
        data.state(svc.slug).to_json(),
        data.versions.get(svc.slug, 0),
        last_day_count,
        iso(as_of_service(data, svc)),
        vendor,
        [i.record for i in data.incidents_of(svc.slug)],
        maintenance_document(data, notices_of(data, svc, vendor)),  # moves as a window begins or ends
    ]
    return digest(jsonout.dump(made_of))


@dataclass(frozen=True)
class ServiceJob:
    """What every service of a build is rendered with (handed to a worker process as it starts)."""

    data: SiteData
    store: Path
    site_key: str
    use_keys: bool


class ServiceRenderer:
    """Renders services into a generation with a store connection and history cache of its own."""

    SAVE_EVERY = 100  # services: the cache's new entries are written in batches of this many

    def __init__(self, job: ServiceJob, placer: Placer):
        self.job, self.data, self.placer = job, job.data, placer
        self.store = Store(job.store)
        self.schema = self.store.schema_version()
        self.cache = HistoryCache(cache_path(job.store))

    def close(self) -> None:
        self.cache.save()
        self.cache.close()
        self.store.close()

    def render(self, svc: ServiceConfig) -> Document:
        """Place the service's files; what the front page shows of it (``pages.front_bar``). Its
        files are kept, not made again, when their inputs have the served files' key."""
        last_day = self.store.last_day_count(svc.slug, self.data.last_day_since)
        paths, key = service_paths(svc.slug), service_key(self.data, svc, self.job.site_key, last_day)
        if self.job.use_keys and all(self.placer.previous_key(p) == key for p in paths):
            kept = self.placer.read_served(routes.history_file(svc.slug, "90d"))
            if kept is not None:
                for path in paths:
                    self.placer.keep(path, key)
                ninety = orjson.loads(kept)
                return pages.front_bar(ninety["summary"], Columns.of(ninety["points"]))
        histories = self.histories(svc)
        record = service_document(
            self.data,
            svc,
            histories["24h"].document["summary"],
            self.store.last_day_json(svc.slug, self.data.last_day_since),
        )
        incidents = [incident_document(self.data, row) for row in self.data.incidents_of(svc.slug)]
        self.placer.put(paths[0], jsonout.dump(record), key)
        for path, made in zip(paths[1:-1], histories.values(), strict=True):
            self.placer.put(path, jsonout.dump(made.document), key)
        self.placer.put(paths[-1], pages.service_page(self.data.config, record, histories, incidents), key)
        ninety = histories["90d"]
        return pages.front_bar(ninety.document["summary"], ninety.columns)

    def histories(self, svc: ServiceConfig) -> dict[str, History]:
        """The service's four histories, by range name: the closed buckets of each from the cache
        when their inputs are unchanged, else made from the store's buckets (and kept for the next
        build); then the bucket in progress."""
        slug, as_of, spans = svc.slug, as_of_service(self.data, svc), self.data.spans_of(svc.slug)
        windows = {name: window(rng, as_of) for name, rng in RANGES.items()}
        lasts = {
            name: (rng.resolution_s, end - rng.resolution_s)
            for (name, rng), (_, end) in zip(RANGES.items(), windows.values(), strict=True)
        }
        tallies = self.store.bucket_tallies(
            slug, [(res, windows[name][0], last) for name, (res, last) in lasts.items()]
        )
        cached, now = self.cache.entries(slug), self.store.buckets_at(slug, list(lasts.values()))
        out = {}
        for (name, rng), tally in zip(RANGES.items(), tallies, strict=True):
            start, last = windows[name][0], lasts[name][1]
            key = entry_key(slug, name, (start, last), spans, tally, self.schema)
            entry = cached.get(name)
            closed = self.cache.closed(entry[1]) if entry and entry[0] == key else None
            if closed is None:
                closed = self.closed(slug, rng, as_of, spans)
                self.cache.put(slug, name, key, closed)
            out[name] = history(slug, rng, as_of, spans, closed, now.get(lasts[name]))
        return out

    def closed(self, slug: str, rng: Range, as_of: datetime, spans: list[Span]) -> Closed:
        """A range's closed buckets, made from the store's."""
        res, coarser = rng.resolution_s, COARSER[rng.resolution_s]
        start, end = window(rng, as_of)
        coarse = self.store.buckets(slug, coarser, start, end - res) if coarser else []
        return closed_part(rng, as_of, spans, self.store.buckets(slug, res, start, end - res), coarse)


def render_services(job: ServiceJob, placer: Placer, indexes: list[int]) -> dict[str, Document]:
    """Render the services at ``indexes`` of the configuration; each one's ``pages.front_bar``."""
    renderer = ServiceRenderer(job, placer)
    services = job.data.config.services
    bars = {}
    try:
        for n, i in enumerate(indexes, 1):
            bars[services[i].slug] = renderer.render(services[i])
            if n % ServiceRenderer.SAVE_EVERY == 0:
                renderer.cache.save()
    finally:
        renderer.close()
    return bars
