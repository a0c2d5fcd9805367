"""Render: the whole tree as bytes, written and swapped in by ``tree.py``.

A build: the writer (``tree.TreeWriter``) picks the generation to rewrite;
gather (``sitedata.gather``) reads what the whole site needs; then the files
are rendered a service at a time (documents and pages are pure functions of
the gathered data; each service's histories are read, and their closed points
kept, through ``sitedata.HistorySource``), and each is compared, compressed
and written as it comes. A file whose
inputs have the key of the previous build's (incidents pages, feeds, and the
record, histories and page of a service whose data did not change) is not
rendered. Large sites are rendered by two processes (``forked``).
"""

from __future__ import annotations

import itertools
import time
from collections import ChainMap
from collections.abc import Callable, Generator, Iterable, Iterator
from dataclasses import dataclass, replace
from datetime import datetime
from functools import lru_cache, partial
from pathlib import Path
from typing import Any

import orjson
from jinja2 import Environment, FileSystemLoader, select_autoescape

from statusgen import __version__, jsonout, routes
from statusgen.config import Config, ServiceConfig
from statusgen.gcfreeze import OldObjectsFrozen
from statusgen.model import RANGES
from statusgen.render import forked
from statusgen.render.badges import badge_files
from statusgen.render.documents import (
    Documents,
    as_of_service,
    global_documents,
    incidents_by_service,
    service_documents,
    service_incidents,
    vendor_record,
)
from statusgen.render.feeds import feeds
from statusgen.render.forked import Claims, Share
from statusgen.render.gather import HistorySource, SiteData, gather
from statusgen.render.openapi import openapi_document
from statusgen.render.pages import (
    front_bar,
    incident_pages,
    prepare,
    service_page,
    service_wide_pages,
    site_pages,
)
from statusgen.render.tree import (
    KEEP,
    NO_PREVIOUS,
    Item,
    Previous,
    StaleTree,
    TreeWriter,
    WriteStats,
    digest,
)
from statusgen.store import Store
from statusgen.timeutil import iso

TEMPLATES = Path(__file__).resolve().parents[2] / "templates"


class DocumentEnvironment(Environment):
    """Templates read JSON documents (dicts): ``x.y`` looks the key up first, without the
    exception Jinja's attribute-first lookup raises and catches for every dict field."""

    def getattr(self, obj: Any, attribute: str) -> Any:
        if type(obj) is dict and attribute in obj:
            return obj[attribute]
        return super().getattr(obj, attribute)


@lru_cache(maxsize=1)
def environment() -> Environment:
    """Jinja with autoescape on for every template (HTML and Atom alike); made once per process."""
    return DocumentEnvironment(loader=FileSystemLoader(TEMPLATES), autoescape=select_autoescape(default=True),
                       trim_blocks=False, lstrip_blocks=False, keep_trailing_newline=True,
                       auto_reload=False)   # a process renders with the templates it started with: no stat per page


def _slim(record: dict[str, Any]) -> dict[str, Any]:
    """A service record without its last day of rows: what the site-wide pages keep of it."""
    service = record["service"]
    return record | {"service": service | {"last_day": service["last_day"] | {"rows": []}}}


@lru_cache(maxsize=1)
def code_key() -> str:
    """The code and templates a page or feed is made with: a key changes when any of them does."""
    package = Path(__file__).resolve().parents[1]
    parts = [__version__.encode()]
    for path in sorted([*package.rglob("*.py"), *TEMPLATES.rglob("*")]):
        if path.is_file():
            parts += [str(path.relative_to(package.parent)).encode(), path.read_bytes()]
    return digest(b"\0".join(parts))


def _keyed(previous: Previous, site_key: str, path: str, made_of: Any,
           make: Callable[[], bytes]) -> Item:
    """A file whose inputs are known: kept from the previous generation when they are the same."""
    key = digest(site_key.encode() + jsonout.dump(made_of))
    return (path, KEEP, key) if previous.get(path) == key else (path, make(), key)


def service_key(data: SiteData, svc: ServiceConfig, site_key: str) -> str:
    """The key of what a service's record, histories and page are made from, but for its last
    day of results: its configuration, state, measurements version (moved by every write of its
    results or buckets), incidents, vendor record, and the site's settings, code and templates.
    Known without reading its results or buckets, or rendering anything. The files' key adds
    the count of its last day of results (``_files_key``)."""
    st = data.state(svc.slug)
    made_of = [repr(svc), st.to_json(), data.versions.get(svc.slug, 0), iso(as_of_service(data, svc)),
               vendor_record(data, svc), data.incidents.records_of(svc.slug)]
    return digest(site_key.encode() + jsonout.dump(made_of))


def _files_key(base: str, last_day_count: int) -> str:
    """A service's key (``service_key``) with the count of its last day of results. With the same
    measurements version, results leave the last day only from its old end, so the same count
    is the same last day. It is read only for a service whose other inputs are the previous
    build's (a rendered service's record holds it): a normal cycle reads none."""
    return f"{base}.{last_day_count}"


def _service_paths(slug: str) -> list[str]:
    """A service's files, record first: record, histories, page."""
    return [routes.service_file(slug), *(routes.history_file(slug, r) for r in RANGES),
            routes.service_page_url(slug).lstrip("/") + "index.html"]


def _kept_documents(previous: Previous, slug: str) -> tuple[dict[str, Any], dict[str, Any]] | None:
    """The previous build's record and 90-day history of a service, read back; None if unreadable."""
    try:
        record, ninety = (orjson.loads(previous.read(p) or b"") for p in
                          (routes.service_file(slug), routes.history_file(slug, "90d")))
    except orjson.JSONDecodeError:
        return None
    return record, ninety


@dataclass
class _Build:
    """What every service's files are rendered with, made once per build; ``kept`` and
    ``bars`` gather what the site-wide pages need of each service."""

    env: Environment
    data: SiteData
    previous: Previous
    site_key: str
    kept: dict[str, Any]                        # tree path -> document (site-wide ones, slim records)
    incidents_of: Callable[[str], list[dict[str, Any]]]   # slug -> its incidents' documents, newest first
    bars: dict[str, dict[str, Any]]             # slug -> what the front page shows of its 90 days


def _service_files(b: _Build, svc: ServiceConfig) -> Iterator[Item]:
    """A service's record, histories and page; kept unrendered when their inputs are the previous build's."""
    base, paths = service_key(b.data, svc, b.site_key), _service_paths(svc.slug)
    before = b.previous.get(paths[0])
    if before is not None and before.startswith(base + "."):
        key = _files_key(base, b.data.history.last_day_count(svc.slug, b.data.last_day_since))
        kept = _kept_documents(b.previous, svc.slug) if all(b.previous.get(p) == key for p in paths) else None
        if kept is not None:                        # nothing it is made from changed: keep its files
            yield from ((p, KEEP, key) for p in paths)
            b.kept[paths[0]], b.bars[svc.slug] = _slim(kept[0]), front_bar(kept[1])
            return
    own = service_documents(b.data, svc)
    key = _files_key(base, own[paths[0]]["service"]["last_day"]["count"])
    yield from ((path, jsonout.dump(own[path]), key) for path in paths[:-1])
    page = service_page(b.env, b.data.config, ChainMap(own, b.kept), svc.slug, b.incidents_of(svc.slug),
                        b.bars)
    yield paths[-1], page, key
    b.kept[paths[0]] = _slim(own[paths[0]])


def _keyed_files(b: _Build) -> Iterator[Item]:
    """The feeds, the incidents page and each service's incidents page, each kept unrendered
    when its inputs are the previous build's.

    The site feed comes first, and it is made of what all of them are made of (``feeds``):
    when it is kept, so is every other file here that has a key from the previous build,
    without dumping and digesting its inputs (some 2,000 files for 1,000 services)."""
    made = itertools.chain(feeds(b.env, b.data, b.kept), incident_pages(b.env, b.data.config, b.kept))
    site_feed = _keyed(b.previous, b.site_key, *next(made))
    yield site_feed
    nothing_changed = site_feed[1] is KEEP
    for path, made_of, make in made:
        key = b.previous.get(path) if nothing_changed else None
        yield (path, KEEP, key) if key else _keyed(b.previous, b.site_key, path, made_of, make)


def _site_files(b: _Build, site: Documents) -> Iterator[Item]:
    """The site-wide documents, the OpenAPI document, the badges, and the pages made of these
    and the configuration alone (the API and method pages, the assets): everything that needs
    nothing of the services' histories."""
    yield from ((path, jsonout.dump(doc)) for path, doc in site.items())
    yield "api/v1/openapi.json", jsonout.dump_pretty(openapi_document(b.data.config))
    for path, badge in badge_files(site["api/v1/snapshot.json"]["services"]).items():
        yield path, badge if isinstance(badge, bytes) else jsonout.dump(badge)
    yield from site_pages(b.env, b.data, site).items()


def _share_files(b: _Build, site: Documents, claims: Claims) -> Iterator[Item]:
    """In the forked process: the site-wide files, the feeds and the incidents' pages, then the
    services it claims (their results and histories read through a store connection of its
    own). The site-wide files are the child's, so that the parent's tail after the services
    is only what needs every service (the front page)."""
    b.data = replace(b.data, history=HistorySource(Store(b.data.history.store.path)))
    yield from _site_files(b, site)
    yield from _keyed_files(b)
    services = b.data.config.services
    for i in claims:
        yield from _service_files(b, services[i])
    b.data.history.flush()


def _share_result(b: _Build, claims: Claims) -> tuple[dict[str, Any], dict[str, Any]]:
    """What the site-wide pages need of the services the forked process rendered."""
    services = [b.data.config.services[i] for i in claims.taken]
    return ({p: b.kept[p] for p in (routes.service_file(s.slug) for s in services)},
            {s.slug: b.bars[s.slug] for s in services})


def render_stream(data: SiteData, previous: Previous | None = None, share: Share | None = None) -> Iterator[Item]:
    """Every file of the tree as (path, bytes), a service at a time, so a build holds one
    service's documents at once (and what the site-wide pages need of the others).

    ``previous``: the previous generation's files (``TreeWriter.previous``). A file whose
    inputs have the key it was made with is not rendered again (KEEP): incidents pages,
    feeds, and the six files of a service whose inputs did not change (the site-wide pages
    read its record and 90-day history back from the previous build).
    ``share``: a forked process renders the site-wide documents and the pages made of them
    alone, the feeds, the incidents pages and the services it claims, and places them
    itself (``forked.Share``, ``_share_files``); they are not among the files yielded here.
    """
    env = environment()
    prepare(env)
    services = data.config.services
    site_key = code_key() + repr(data.config.site) + repr(data.config.categories)

    def setup(every_incident: bool = True) -> tuple[Documents, _Build]:
        """The site-wide documents, and what every service is rendered with. Without
        ``every_incident`` (the process that leaves the site-wide files to the forked one),
        only the open incidents' list, and each service's incidents made with its page."""
        site = global_documents(data, every_incident)
        OldObjectsFrozen.also_since()     # the site-wide documents and every incident live through the build
        if every_incident:
            by_service = incidents_by_service(site)
            incidents_of: Callable[[str], list[dict[str, Any]]] = lambda slug: by_service.get(slug, [])
        else:
            incidents_of = partial(service_incidents, data)
        return site, _Build(env, data, previous or NO_PREVIOUS, site_key, dict(site), incidents_of, {})

    # What was gathered lives through the build: collections skip it, and the forked process
    # does not copy its pages to collect them.
    with OldObjectsFrozen():
        try:
            mine: Iterable[ServiceConfig] = services
            if share is not None:      # forked first: each process makes the site-wide documents, side by side
                claims = Claims(len(services))
                theirs: list[_Build] = []                   # the forked process's, made there

                def their_files() -> Iterator[Item]:
                    site, build = setup()
                    theirs.append(build)
                    return _share_files(build, site, claims)

                share.start(their_files, lambda: _share_result(theirs[0], claims))
                mine = (services[i] for i in claims)
            site, b = setup(every_incident=share is None)
            for svc in mine:
                yield from _service_files(b, svc)
            data.history.flush()
            if share is None:
                yield from _site_files(b, site)
                yield from _keyed_files(b)
            else:
                records, bars = share.join()
                b.kept.update(records)
                b.bars.update(bars)
        finally:
            if share is not None:
                share.close()
    yield from service_wide_pages(env, data, b.kept, b.bars).items()   # pages show only what the JSON documents hold


def render_files(data: SiteData) -> dict[str, bytes]:
    """Every file of the tree, by path, as bytes (the whole tree in memory: for tests and tools)."""
    return {item[0]: item[1] for item in render_stream(data)}  # type: ignore[misc]


@dataclass(frozen=True)
class BuildResult:
    stats: WriteStats
    gather_ms: float      # reading the store
    render_ms: float      # making the files' bytes
    write_ms: float       # the rest: comparing, compressing and writing the files, swapping the tree in
    keys_used: bool = True

    def line(self) -> str:
        total = (self.gather_ms + self.render_ms + self.write_ms) / 1000
        return (f"{self.stats.files} files built in {total:.2f} s (store {self.gather_ms / 1000:.2f} s, "
                f"render {self.render_ms / 1000:.2f} s, writing {self.write_ms / 1000:.2f} s), "
                f"{self.stats.written} written, {self.stats.kept} kept without rendering")


def build(store: Store, config: Config, now: datetime) -> BuildResult:
    """One build: a new generation of the output tree, swapped in.

    Should a file to keep be missing there (someone removed it), the build is made again
    with every file rendered.
    """
    try:
        return _build(store, config, now, use_keys=True)
    except StaleTree:
        return _build(store, config, now, use_keys=False)


def _build(store: Store, config: Config, now: datetime, use_keys: bool) -> BuildResult:
    t0 = time.perf_counter()
    two = forked.usable(len(config.services))
    with TreeWriter(config.site.output) as writer:
        data = gather(store, config, now)
        t1 = time.perf_counter()
        share = forked.Share(writer) if two else None
        stream = Timed(render_stream(data, writer.previous if use_keys else None, share))
        try:
            writer.write(stream)
        finally:
            stream.items.close()        # a stream stopped early still reaps the share's process
    assert writer.stats is not None
    total = time.perf_counter() - t0
    return BuildResult(writer.stats, (t1 - t0) * 1000, stream.seconds * 1000,
                       (total - (t1 - t0) - stream.seconds) * 1000, use_keys)


class Timed:
    """An iterator that adds up the time spent producing its items (the rendering of a streamed build)."""

    def __init__(self, items: Generator[Item, None, None]):
        self.items = items
        self.seconds = 0.0

    def __iter__(self) -> Iterator[Item]:
        return self

    def __next__(self) -> Item:
        start = time.perf_counter()
        try:
            return next(self.items)
        finally:
            self.seconds += time.perf_counter() - start
