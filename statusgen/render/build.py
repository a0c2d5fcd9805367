"""Render: one build of the whole tree, as mkdocs builds a site.

    with TreeWriter(output) as tree:          # the generation to rewrite (``tree``)
        data = gather(store, config, now)     # what the whole site needs (``gather``)
        every service's record, histories and page (``service``; worker processes for large sites)
        the site-wide documents, the OpenAPI document, badges, assets, API, method and subscribe pages
        the incident lists, feeds and incidents pages
        the front page, with every service's bar
    # the new generation is swapped in

Every file is made from JSON documents (``api.documents``) through a template
(``pages.views``, ``formats.feeds``); the parts of service pages drawn from histories are
kept between builds in the one cache (``pages.fragments``). A file whose inputs
have the key of the served file is not made again: a service's six files
and badges, the incident lists, the feeds and the incidents pages carry such
keys, each made from the inputs its recipe declares (``keys``; the documents
of the whole site are cheap and always made). Every key holds the site's
settings and the code and templates that made the file (``site_key``), so a
new version of statusgen makes them all again.

Rendering is Python and holds the GIL: on a large site, the services are
rendered by worker processes (``concurrent.futures``, started by ``fork`` so
that they inherit the gathered data), each placing its files itself, while
this process makes the site-wide files; a small site is rendered here alone.
No worker holds the run lock (``store.lock`` closes it in every forked child):
killed with ``kill -9``, a build frees the lock at once, and its workers finish
the few chunks the pool handed them, then wait idle until the service manager
ends the run's process group (systemd's units do).
"""

from __future__ import annotations

import multiprocessing
import os
import signal
import threading
import time
from collections.abc import Iterator
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass
from datetime import datetime
from functools import cached_property
from typing import Any
from urllib.parse import urlsplit

from markupsafe import Markup

from statusgen import jsonout, routes
from statusgen.config import Config
from statusgen.decide.maintenance import Notice
from statusgen.errors import RenderError, StatusgenError
from statusgen.i18n import say_in, site_languages, translations
from statusgen.model import SLUG_RE
from statusgen.policy import GRANTS_FILE, Grant, grants_document
from statusgen.progress import Advance, Progress, quiet
from statusgen.render import keys
from statusgen.render.api.documents import (
    collection_of,
    ended_notices,
    incident_document,
    incident_lists,
    service_incident_lists,
    site_documents,
    site_notices,
)
from statusgen.render.api.openapi import openapi_document
from statusgen.render.formats import calendar
from statusgen.render.formats.badges import badge_paths, endpoint_badge, svg_badge
from statusgen.render.formats.feeds import SITE_FEED, MaintenanceEntry, feed, feed_entries, maintenance_entries
from statusgen.render.formats.metrics import metrics_text
from statusgen.render.formats.statuspage import statuspage_documents
from statusgen.render.formats.statuspage_openapi import statuspage_openapi_document
from statusgen.render.gather import SiteData, gather
from statusgen.render.pages import views
from statusgen.render.pages.fragments import Drawn, Fragments
from statusgen.render.reports import report_files
from statusgen.render.service import Rendered, ServiceJob, render_services
from statusgen.render.templating import brand_files, building, environment, static_files
from statusgen.render.tree import (
    Placed,
    Placer,
    StaleTree,
    TreeWriter,
    WriteStats,
    digest,
)
from statusgen.store import Store
from statusgen.timeutil import from_epoch

#: A site with fewer services renders them here: starting workers costs more than they save.
WORKER_SERVICES = 200
WORKERS = 2
#: Services a worker renders per task: small enough that both workers end together.
CHUNK = 50

Document = dict[str, Any]


@dataclass(frozen=True)
class BuildResult:
    stats: WriteStats
    gather_ms: float  # reading what the whole site needs from the store
    render_ms: float  # the rest: making, comparing and writing the files, swapping the tree in

    def line(self) -> str:
        total = (self.gather_ms + self.render_ms) / 1000
        return (
            f"{self.stats.files} files built in {total:.2f} s (store {self.gather_ms / 1000:.2f} s, "
            f"render {self.render_ms / 1000:.2f} s), {self.stats.written} written, "
            f"{len(self.stats.kept)} kept without rendering"
        )


def build(
    store: Store, config: Config, now: datetime, workers: int | None = None, progress: Progress = quiet
) -> BuildResult:
    """One build: a new generation of the output tree, swapped in. ``workers``: the processes that
    render the services (by default ``workers_for`` the site; 1: this process alone); ``progress``
    is told each service rendered. Should a file to keep be missing from the served generation
    (someone removed it), the build is made again with every file made anew."""
    workers = workers_for(len(config.services)) if workers is None else workers
    try:
        return _build(store, config, now, workers, True, progress)
    except StaleTree:
        return _build(store, config, now, workers, False, progress)


def _build(
    store: Store, config: Config, now: datetime, workers: int, use_keys: bool, progress: Progress
) -> BuildResult:
    t0 = time.perf_counter()
    with TreeWriter(config.site.output) as tree:
        data = gather(store, config, now)
        t1 = time.perf_counter()
        brand = {path: digest(content) for path, content in brand_files(config.site).items()}
        site_key = keys.key(keys.SiteInputs(keys.code_key(), repr(config.site), config.categories, brand))
        job = ServiceJob(data, store.path, site_key, use_keys)
        fragments = Fragments(config.site.output)
        count = len(config.services)
        with (
            _Services(job, tree, fragments, workers) as services,
            progress(f"rendering {count} services", count) as advance,
        ):
            notices = site_notices(data)  # the snapshot and the feeds tell the same maintenance
            ended = ended_notices(data)
            docs = site_documents(data, notices) | statuspage_documents(data, notices, ended)
            _site_files(tree.main, job, docs)
            _incident_files(tree.main, job, notices + ended)  # the feeds tell its end too
            _calendar_files(tree.main, job, notices + ended)
            for path, content, key in report_files(
                data, job.site_key, lambda paths, key: _kept(tree.main, job, paths, key)
            ):
                tree.main.put(path, content if isinstance(content, bytes) else jsonout.dump(content), key)
            made = services.rendered(advance)
        snapshot, health = docs[f"{routes.API}/snapshot.json"], docs[f"{routes.API}/health.json"]
        for lang in site_languages(config.site.languages):
            bars = {slug: r.bar[lang.tag] for slug, r in made.items()}
            todays = {slug: r.today for slug, r in made.items()}
            front = views.front_page(config.site, lang, *front_words(data, snapshot, health, lang.tag), bars, todays)
            tree.main.put(lang.file("index.html"), front)
        days, months = {slug: r.day for slug, r in made.items()}, {slug: r.month for slug, r in made.items()}
        tree.main.put(routes.METRICS, metrics_text(data, snapshot, health, days, months))
    fragments.save()
    assert tree.stats is not None
    return BuildResult(tree.stats, (t1 - t0) * 1000, (time.perf_counter() - t1) * 1000)


def front_words(data: SiteData, snapshot: Document, health: Document, tag: str) -> tuple[Document, Document, Document]:
    """What the front page shows in a language: the snapshot and health documents with the
    decisions' words (reasons, the state of collection) said in it, and its open incidents."""
    if tag != data.config.site.languages[0]:
        said = [s | {"reason": say_in(data.state(s["slug"]).reason, tag)} for s in snapshot["services"]]
        snapshot, health = snapshot | {"services": said}, health | {"collection": collection_of(data, tag)}
    opened = [incident_document(data.config, i, tag) for i in data.incidents if i.ended is None]
    return snapshot, health, {"incidents": opened}


class _Services:
    """Every service's files, rendered by worker processes on a large site (started on entering,
    while this process goes on with the site-wide files), else here when asked for (``bars``)."""

    def __init__(self, job: ServiceJob, tree: TreeWriter, fragments: Fragments, workers: int):
        self.job, self.tree, self.fragments, self.workers = job, tree, fragments, workers
        self.pool: ProcessPoolExecutor | None = None
        self.tasks: list[Future[tuple[Placed, dict[str, Rendered], Drawn]]] = []

    def __enter__(self) -> _Services:
        count = len(self.job.data.config.services)
        if self.workers > 1:
            for name in ("service.html", "service-vendor.html", "macros.html", "base.html"):
                environment().get_template(name)  # compiled once, here: the workers inherit them
            context = multiprocessing.get_context("fork")
            self.pool = ProcessPoolExecutor(
                self.workers,
                mp_context=context,
                initializer=_start_worker,
                initargs=(self.job, self.tree.placer()),
            )
            self.tasks = [
                self.pool.submit(_render_chunk, list(range(i, min(i + CHUNK, count)))) for i in range(0, count, CHUNK)
            ]
        return self

    def rendered(self, advance: Advance) -> dict[str, Rendered]:
        """What each service's rendering hands on (its bar, its last day), once its files are
        placed; ``advance`` is told how many more are."""
        if self.pool is None:
            every = list(range(len(self.job.data.config.services)))
            return render_services(self.job, self.tree.main, self.fragments, every, advance)
        out: dict[str, Rendered] = {}
        try:
            for task in self.tasks:
                placed, made, drawn = task.result()
                self.tree.absorb(placed)
                self.fragments.absorb(drawn)
                out.update(made)
                advance(len(made))
        except BrokenProcessPool:
            raise RenderError(
                "a process rendering the services ended unexpectedly; the last complete site is left in place"
            ) from None
        return out

    def __exit__(self, *exc: object) -> None:
        if self.pool is not None:
            self.pool.shutdown(cancel_futures=True)


def workers_for(services: int) -> int:
    """How many processes render the services of a site this large: two on a large site, on more
    than one core, in a process of one thread (a lock another thread holds at the fork, a logging
    handler's say, would stay locked in a worker); else one, this process."""
    usable = (
        services >= WORKER_SERVICES
        and (os.cpu_count() or 1) > 1
        and threading.active_count() == 1
        and "fork" in multiprocessing.get_all_start_methods()
    )
    return WORKERS if usable else 1


_worker: tuple[ServiceJob, Placer] | None = None  # a worker process's job, set as it starts


def _start_worker(job: ServiceJob, placer: Placer) -> None:
    """In a worker process, as it starts: leave the signals that stop a run to its parent, and
    keep the job."""
    global _worker
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C reaches the whole group: the parent decides
    signal.signal(signal.SIGTERM, signal.SIG_DFL)  # the handler inherited from the parent is the parent's
    _worker = (job, placer)


def _render_chunk(indexes: list[int]) -> tuple[Placed, dict[str, Rendered], Drawn]:
    """In a worker process: render these services; what was placed, their bars, and the fragments
    found live and drawn."""
    assert _worker is not None
    job, shared = _worker
    placer = Placer(shared.output, shared.served, shared.old, shared.target, shared.mine)
    fragments = Fragments(shared.output)  # read with a connection of this process's own
    try:
        made = render_services(job, placer, fragments, indexes)
    except (StatusgenError, StaleTree):
        raise  # one message each (a stale tree: a build without keys follows): they reach the parent as they are
    except Exception as exc:  # another library's may not cross to the parent (isal's does not pickle)
        raise RenderError(f"a process rendering the services failed: {type(exc).__name__}: {exc}") from None
    return placer.result(), made, fragments.drawn


def _site_files(placer: Placer, job: ServiceJob, docs: dict[str, Document]) -> None:
    """The documents of the whole site, the OpenAPI document, the badges, the assets, the API,
    method and subscribe pages: made every build (they are cheap), written only where their bytes changed; the
    badges, a pair a service, kept while their service's name and status are the same."""
    for path, doc in docs.items():
        placer.put(path, jsonout.dump(doc))
    config = job.data.config
    placer.put(f"{routes.API}/openapi.json", jsonout.dump_pretty(openapi_document(config)))
    placer.put(f"{routes.STATUSPAGE}/openapi.json", jsonout.dump_pretty(statuspage_openapi_document(config)))
    for s in docs[f"{routes.API}/snapshot.json"]["services"]:
        paths, key = badge_paths(s["slug"]), keys.key(keys.BadgeInputs(job.site_key, s["name"], s["status"]))
        if not _kept(placer, job, paths, key):
            placer.put(paths[0], jsonout.dump(endpoint_badge(s)), key)
            placer.put(paths[1], svg_badge(s), key)
    for path, asset in (static_files() | brand_files(config.site)).items():  # an ICO favicon replaces ours
        placer.put(path, asset)
    if config.grants:  # for the servers of the tree: the addresses and rates, never purpose nor contact
        placer.put(GRANTS_FILE, grants_document(Grant(g.addresses, g.per_minute) for g in config.grants))
    health, snapshot = docs[f"{routes.API}/health.json"], docs[f"{routes.API}/snapshot.json"]
    for lang in site_languages(config.site.languages):
        placer.put(
            lang.file("api/index.html"), views.api_page(config, lang, health, docs[routes.error_file("400-range")])
        )
        placer.put(lang.file("method/index.html"), views.method_page(config, lang, health))
        placer.put(lang.file(routes.subscribe_page_file()), views.subscribe_page(config, lang, snapshot))
        for path, page in views.error_pages(config.site, lang).items():
            placer.put(lang.file(path), page)
        with building(config.site):  # the embeds are given the site's title alone: their logo comes from here
            embeds = views.embed_pages(config.site, lang, snapshot)
        for path, page in embeds.items():
            placer.put(lang.file(path), page)


def _calendar_files(placer: Placer, job: ServiceJob, notices: list[Notice]) -> None:
    """The maintenance calendars, the site's and each service's, each remembering what it served
    and bounded by its services' ``calendar_events`` (``calendar.with_memory``)."""
    data = job.data
    site = data.config.site
    host = urlsplit(site.base_url).hostname or "statusgen"
    told = calendar.events(notices, site.base_url, host)
    said = translations(site.languages[0])  # the calendars speak the site's first language, as the feeds
    named = said.gettext("%(name)s: maintenance")
    limits = {svc.slug: svc.calendar_events for svc in data.config.services}
    wanted = {routes.CALENDAR: (named % {"name": site.title}, told, limits)}
    for svc in data.config.services:
        mine = [e for e in told if svc.slug in e.services]
        wanted[routes.service_calendar_file(svc.slug)] = (
            named % {"name": svc.name},
            mine,
            {svc.slug: limits[svc.slug]},
        )
    for path, (name, evts, bounds) in wanted.items():
        remembered = calendar.remembered(placer.read_served(path))
        kept = calendar.with_memory(evts, remembered, data.now, bounds)
        placer.put(path, calendar.calendar(name, kept, f"{path.replace('/', '-')}@{host}", data.epoch))


def _incident_files(placer: Placer, job: ServiceJob, notices: list[Notice]) -> None:
    """The incident lists, the site feed and incidents page, and each service's feed and incidents
    page, each kept when its incidents (their records as stored) and names are the served file's.
    ``notices``: the maintenance the feeds tell of."""
    data, config = job.data, job.data.config
    names = {s.slug: s.name for s in config.services}
    every = _Incidents(data, notices)
    today = data.time.date()  # the incidents page lists the last days
    told = every.maintenance
    records = [i.record for i in data.incidents]
    entries = [m.entry for m in told]  # the maintenance entries of the feeds
    inputs = keys.IncidentsInputs(job.site_key, records, names, data.epoch.isoformat(), today.isoformat(), entries)
    days = {from_epoch(i.started).date().isoformat() for i in data.incidents if i.ended is not None}
    langs = site_languages(config.site.languages)
    pages_ = ["incidents/index.html", *sorted({routes.incidents_page_file(p) for day in days for p in (day, day[:7])})]
    site_wide = [*(routes.incidents_file(a) for a in (None, "1", "0")), SITE_FEED]
    site_wide += [lang.file(page) for lang in langs for page in pages_]
    key = keys.key(inputs)
    if not _kept(placer, job, site_wide, key):
        lists = incident_lists(every.documents())
        for path, doc in lists.items():
            placer.put(path, jsonout.dump(doc), key)
        placer.put(SITE_FEED, feed(config, data.epoch, every.documents(), every.entries, None, told), key)
        for lang in langs:
            in_words = lists if lang.first else incident_lists(every.documents(lang.tag))
            for path, page in views.incidents_pages(config.site, lang, in_words, today).items():
                placer.put(lang.file(path), page, key)
    for slug, name in _services_with_incidents(data, names):
        rows = data.incidents_of(slug)
        service_entries = [m.entry for m in told if slug in m.services]
        own_inputs = keys.ServiceIncidentsInputs(
            job.site_key, [i.record for i in rows], name, data.epoch.isoformat(), service_entries
        )
        key = keys.key(own_inputs)
        svc = config.by_slug.get(slug)
        own_lists = [routes.incidents_file(active, slug) for active in (None, "1", "0")]
        own_pages = [lang.file(routes.service_incidents_file(slug)) for lang in langs]
        paths = [*own_pages, *own_lists, *([routes.service_feed_file(slug)] if svc else [])]
        if _kept(placer, job, paths, key):
            continue
        own = every.of(slug)
        for lang, path in zip(langs, own_pages, strict=True):
            own_words = own if lang.first else every.of(slug, lang.tag)
            placer.put(path, views.service_incidents_page(config.site, lang, slug, name, own_words), key)
        for path, doc in service_incident_lists(slug, own).items():
            placer.put(path, jsonout.dump(doc), key)
        if svc is not None:
            placer.put(paths[-1], feed(config, data.epoch, own, every.entries, svc, told), key)


def _kept(placer: Placer, job: ServiceJob, paths: list[str], key: str) -> bool:
    """Keep ``paths`` when each was made from inputs of this key; whether they were."""
    if not job.use_keys or any(placer.previous_key(p) != key for p in paths):
        return False
    for path in paths:
        placer.keep(path, key)
    return True


def _services_with_incidents(data: SiteData, names: dict[str, str]) -> Iterator[tuple[str, str]]:
    """Every configured service, and every service no longer configured that has incidents (their
    links stay good), with its name."""
    yield from names.items()
    for slug, rows in data.by_service.items():
        if slug not in names:
            if not SLUG_RE.fullmatch(slug):
                raise RenderError(f"service {slug!r} of an incident in the store cannot name a page file")
            yield slug, incident_document(data.config, rows[0])["service_name"]


class _Incidents:
    """Every incident's document, made once a build, when first asked for."""

    def __init__(self, data: SiteData, notices: list[Notice]):
        self.data, self.notices = data, notices
        self.made: dict[str | None, list[Document]] = {}
        self.by_service: dict[str | None, dict[str, list[Document]]] = {}

    def documents(self, tag: str | None = None) -> list[Document]:
        """Every incident's document, in the site's first language (or a page's, ``tag``)."""
        if tag not in self.made:
            self.made[tag] = [incident_document(self.data.config, row, tag) for row in self.data.incidents]
            for doc in self.made[tag]:
                self.by_service.setdefault(tag, {}).setdefault(doc["service"], []).append(doc)
        return self.made[tag]

    def of(self, slug: str, tag: str | None = None) -> list[Document]:
        self.documents(tag)
        return self.by_service.get(tag, {}).get(slug, [])

    @cached_property
    def entries(self) -> dict[str, Markup]:
        """Every incident's feed entry, made once for the site feed and each service's."""
        return feed_entries(self.data.config, self.documents())

    @cached_property
    def maintenance(self) -> list[MaintenanceEntry]:
        """The feeds' entry of each maintenance readers are told about."""
        data = self.data
        return maintenance_entries(data.config, data.epoch, self.notices, data.now)
