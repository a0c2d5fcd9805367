"""Render: one service's files: its record, its four histories and its page.

Each file is made again only when what it says may have changed, and keeps
its bytes otherwise (``Placer.keep``), so that a normal cycle rewrites and
publishes little:

- the record carries what moves with every result (the last result of each
  check, the last day of results, the bucket in progress of each range);
- a history holds closed buckets only: it is made again when one closes or a
  closed one changes (its key: the window, the results its buckets hold, the
  service's incidents);
- the page shows what changes in meaning (status, reason, incidents, vendor
  view, closed histories); what moves every minute reaches it, where
  JavaScript runs, from the record (``static/site.js``). Its panels (but the
  24-hour one), its day table and its bar on the front page are drawn again
  only when their history changes (``pages.fragments``).

``ServiceRenderer`` reads the store through a connection of its own, so that
it works alike in the building process and in a worker process
(``render.build``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any, NamedTuple

import orjson
from markupsafe import Markup

from statusgen import jsonout, routes
from statusgen.config import ServiceConfig
from statusgen.decide.history import (
    COARSER,
    Bucket,
    History,
    day_summary,
    edges,
    history,
    in_progress,
    window,
)
from statusgen.i18n import Language, say_in, site_languages
from statusgen.model import RANGES, Range
from statusgen.progress import Advance, untold
from statusgen.render import keys
from statusgen.render.api.documents import (
    incident_document,
    maintenance_document,
    notices_of,
    service_document,
    vendor_record,
)
from statusgen.render.gather import SiteData, as_of_service
from statusgen.render.keys import RecordInputs
from statusgen.render.pages import views
from statusgen.render.pages.fragments import Fragments
from statusgen.render.reports import current_month
from statusgen.render.tree import Placer
from statusgen.store import Store
from statusgen.store.failures import DECODING, damaged
from statusgen.timeutil import from_epoch, iso

Document = dict[str, Any]

#: What a page draws from a history: its key in the cache (``pages.fragments``; None: not kept) and how
#: to draw it.
Part = tuple[str | None, Callable[[], Markup]]


def service_paths(slug: str) -> list[str]:
    """A service's files: its record, its histories, its page (in the site's first language)."""
    return [
        routes.service_file(slug),
        *(routes.history_file(slug, r) for r in RANGES),
        routes.service_page_url(slug).lstrip("/") + "index.html",
    ]


def record_inputs(data: SiteData, svc: ServiceConfig, site_key: str, last_day_count: int) -> RecordInputs:
    """What a service's record is made from (``keys.RecordInputs``)."""
    vendor = vendor_record(data, svc)
    return RecordInputs(
        site=site_key,
        config=repr(svc),
        state=data.state(svc.slug).to_json(),
        version=data.versions.get(svc.slug, 0),
        last_day_count=last_day_count,
        as_of=iso(as_of_service(data, svc)),
        vendor=vendor,
        incidents=[i.record for i in data.incidents_of(svc.slug)],
        maintenance=maintenance_document(data, notices_of(data, svc, vendor)),
        month=current_month(data, svc),
        elsewhere={
            loc: [(r.check_index, iso(r.ts), r.outcome.value, r.latency_ms, r.http_status, r.slow) for r in results]
            for loc, results in data.elsewhere.get(svc.slug, {}).items()
        },
    )


class Rendered(NamedTuple):
    """What a service's rendering hands on to the site-wide files (from a worker, pickled)."""

    bar: dict[str, Markup]  # its bar on the front page, in each language of the site (by tag)
    day: Document  # its record's last day summary
    month: Document  # its record's figures of the current month
    today: Document  # its record's day in progress (the 90-day history's bucket so far)


@dataclass(frozen=True)
class ServiceJob:
    """What every service of a build is rendered with (handed to a worker process as it starts)."""

    data: SiteData
    store: Path
    site_key: str
    use_keys: bool


class ServiceRenderer:
    """Renders services into a generation with a store connection of its own."""

    def __init__(self, job: ServiceJob, placer: Placer, fragments: Fragments):
        self.job, self.data, self.placer, self.fragments = job, job.data, placer, fragments
        self.store = Store.reader(job.store)

    def close(self) -> None:
        self.store.close()

    def render(self, svc: ServiceConfig) -> Rendered:
        """Place the service's files; its bar on the front page (``views.front_bar``), its last
        day's summary and its current month (``/metrics`` tells them)."""
        slug, as_of = svc.slug, as_of_service(self.data, svc)
        paths = service_paths(slug)
        histories = Histories(self, svc, as_of)
        record = self.record(svc, as_of, histories, paths[0])
        config, rows = self.data.config, self.data.incidents_of(slug)
        bars = {}
        for lang in site_languages(config.site.languages):
            if lang.first:  # the record's own words
                shown = views.service_page_view(config, record, [incident_document(config, row) for row in rows])
            else:
                incidents = [incident_document(config, row, lang.tag) for row in rows]
                reason = say_in(self.data.state(slug).reason, lang.tag)
                shown = views.service_page_view(config, record, incidents, reason)
            page_key = keys.key(keys.PageInputs(self.job.site_key, shown, histories.keys))
            parts = drawings(slug, histories, lang)
            self.fragments.live(key for key, _ in parts.values() if key)  # a kept page's stay too
            page_path = lang.file(paths[-1])
            page_kept = self.kept(page_path, page_key)
            drawn = self.draw({name: parts[name] for name in (["bar"] if page_kept else parts)})
            if not page_kept:
                panels = {name: drawn[name] for name in RANGES}
                page = views.service_page(config.site, lang, shown, panels, drawn["days"])
                self.placer.put(page_path, page, page_key)
            bars[lang.tag] = drawn["bar"]
        service = record["service"]
        return Rendered(bars, service["last_day"]["summary"], service["this_month"], service["in_progress"]["90d"])

    def draw(self, parts: dict[str, Part]) -> dict[str, Markup]:
        """Each part, by name: the cached one where it has a key, else drawn now."""
        cached = self.fragments.get({key: draw for key, draw in parts.values() if key})
        return {name: cached[key] if key else draw() for name, (key, draw) in parts.items()}

    def record(self, svc: ServiceConfig, as_of: datetime, histories: Histories, path: str) -> Document:
        """Place the service's record (kept when its inputs are unchanged); the record."""
        day_start = window(RANGES["24h"], as_of)[0]
        since = from_epoch(day_start)  # the last day's rows are those its summary adds up
        inputs = record_inputs(self.data, svc, self.job.site_key, self.store.last_day_count(svc.slug, since))
        key = keys.key(inputs)
        unchanged = self.job.use_keys and self.placer.previous_key(path) == key
        served = self.placer.read_served(path) if unchanged else None  # read only when it may be kept
        if served is not None and self.kept(path, key):
            kept: Document = orjson.loads(served)
            return kept
        spans = self.data.spans_of(svc.slug)
        starts = {name: (rng.resolution_s, window(rng, as_of)[1]) for name, rng in RANGES.items()}
        now = self.store.buckets_at(svc.slug, list(starts.values()))
        progress = {name: in_progress(rng, as_of, spans, now.get(starts[name])) for name, rng in RANGES.items()}
        day = self.store.last_day_json(svc.slug, since)
        period = (day_start, as_of)
        summary = histories.day_summary(now.get(starts["24h"]))
        record = service_document(self.data, svc, summary, day, period, progress, inputs.month)
        self.placer.put(path, jsonout.dump(record), key)
        return record

    def kept(self, path: str, key: str) -> bool:
        """Keep the served file at ``path`` when it was made from inputs of this key; whether it was."""
        if not self.job.use_keys or self.placer.previous_key(path) != key:
            return False
        self.placer.keep(path, key)
        return True


def drawings(slug: str, histories: Histories, lang: Language) -> dict[str, Part]:
    """What the pages draw from a service's histories, by name, in a language: the panel of each
    range and the day table (its page), and its bar (the front page). Each is kept under its
    history's key and the language's tag, but the 24-hour panel, whose history changes with nearly
    every page made."""
    keys, get, tag = histories.keys, histories.get, lang.tag

    def panel(name: str) -> Callable[[], Markup]:
        return lambda: views.service_panel(slug, name, get(name), lang)

    parts: dict[str, Part] = {
        name: (None if name == "24h" else f"{tag} panel {keys[name]}", panel(name)) for name in RANGES
    }
    parts["days"] = (f"{tag} days {keys['90d']}", lambda: views.service_days(get("90d"), lang))
    since = histories.since
    parts["bar"] = (f"{tag} bar {keys['90d']} {iso(since)}", lambda: views.front_bar(get("90d"), lang, since))
    return parts


class Histories:
    """A service's four histories, each kept when its key is the served file's, else made from the
    store's buckets and placed. A kept one is read back only when asked for."""

    def __init__(self, renderer: ServiceRenderer, svc: ServiceConfig, as_of: datetime):
        self.renderer, self.slug, self.as_of = renderer, svc.slug, as_of
        self.since = renderer.data.epoch  # the site's first run: the days before it have no data yet
        self.spans = renderer.data.spans_of(svc.slug)
        self.windows = {name: window(rng, as_of) for name, rng in RANGES.items()}
        self.by_location = self._by_location(renderer, svc)
        tallies = renderer.store.bucket_tallies(
            svc.slug, [(rng.resolution_s, *self.windows[name]) for name, rng in RANGES.items()]
        )
        site_key = renderer.job.site_key
        self.keys = {
            name: keys.key(
                keys.HistoryInputs(
                    site_key,
                    svc.slug,
                    name,
                    self.windows[name],
                    tally,
                    self.spans,
                    self.by_location if name == "24h" else [],
                )
            )
            for name, tally in zip(RANGES, tallies, strict=True)
        }
        self.made: dict[str, History] = {}
        for name, rng in RANGES.items():
            if not renderer.kept(routes.history_file(svc.slug, name), self.keys[name]):
                self.made[name] = self.make(rng)
                renderer.placer.put(
                    routes.history_file(svc.slug, name), jsonout.dump(self.made[name].document), self.keys[name]
                )

    def _by_location(self, renderer: ServiceRenderer, svc: ServiceConfig) -> list[Document]:
        """Each location's results of the 24h window: how many, failed, latency percentiles."""
        config = renderer.data.config
        if not config.locations:
            return []
        start, end = self.windows["24h"]
        day = renderer.store.location_day(svc.slug, from_epoch(start), from_epoch(end))
        return [{"location": loc, **day[loc]} for loc in config.location_names if loc in day]

    def make(self, rng: Range) -> History:
        store, res = self.renderer.store, rng.resolution_s
        start, end = self.windows[rng.name]
        coarser = COARSER[res]
        coarse = store.buckets(self.slug, coarser, start, end) if coarser else []
        made = history(self.slug, rng, self.as_of, self.spans, store.buckets(self.slug, res, start, end), coarse)
        if rng.name == "24h" and self.renderer.data.config.locations:
            made.document["locations"] = self.by_location
        return made

    def day_summary(self, progress: Bucket | None) -> Document:
        """The 24-hour summary of every result from the window's first bucket to now: its closed
        buckets' and the bucket in progress (``progress``)."""
        store, rng = self.renderer.store, RANGES["24h"]
        res, coarser = rng.resolution_s, COARSER[rng.resolution_s]
        start, end = self.windows["24h"]
        edge = [b for since, until in edges(rng, self.as_of) for b in store.buckets(self.slug, res, since, until)]
        coarse = store.buckets(self.slug, coarser, start, end) if coarser else []
        sums = store.bucket_sums(self.slug, res, start, end)
        return day_summary(rng, self.as_of, self.spans, sums, edge, coarse, progress)

    def get(self, name: str) -> History:
        if name not in self.made:
            served = self.renderer.placer.read_served(routes.history_file(self.slug, name))
            self.made[name] = History.of(orjson.loads(served)) if served is not None else self.make(RANGES[name])
        return self.made[name]


def render_services(
    job: ServiceJob, placer: Placer, fragments: Fragments, indexes: list[int], advance: Advance = untold
) -> dict[str, Rendered]:
    """Render the services at ``indexes`` of the configuration; what each hands on. ``advance``
    is told of each one done."""
    renderer = ServiceRenderer(job, placer, fragments)
    services = job.data.config.services
    made = {}
    try:
        for i in indexes:
            try:
                made[services[i].slug] = renderer.render(services[i])
                advance(1)
            except DECODING:  # a value SQLite found sound that does not decode (a latency histogram)
                raise damaged(
                    job.store, "measurements (a latency histogram of its buckets)", services[i].slug
                ) from None
        return made
    finally:
        renderer.close()
