"""Render: the whole tree as bytes, then written and swapped in (``tree.py``).

A build is two phases, like mkdocs: gather (``sitedata.gather``, the only
read) and render (pure functions of the gathered data), then one write.
"""

from __future__ import annotations

import time
from collections import ChainMap
from collections.abc import Iterator
from functools import lru_cache
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from jinja2 import Environment, FileSystemLoader, select_autoescape

from . import jsonout, routes
from .badges import badge_files
from .config import Config
from .documents import global_documents, service_documents
from .feeds import feed_files
from .openapi import openapi_document
from .pages import incidents_by_service, prepare, service_page, site_pages
from .sitedata import SiteData, gather
from .store import Store
from .tree import WriteStats, write_tree

TEMPLATES = Path(__file__).resolve().parent.parent / "templates"


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
                       trim_blocks=False, lstrip_blocks=False, keep_trailing_newline=True)


def _slim(record: dict[str, Any]) -> dict[str, Any]:
    """A service record without its last day of rows: what the site-wide pages keep of it."""
    service = record["service"]
    return record | {"service": service | {"last_day": service["last_day"] | {"rows": []}}}


def render_stream(data: SiteData) -> Iterator[tuple[str, bytes]]:
    """Every file of the tree as (path, bytes), a service at a time, so a build holds one
    service's documents at once (and what the site-wide pages need of the others)."""
    env = environment()
    prepare(env)
    site = global_documents(data)
    kept: dict[str, Any] = dict(site)
    by_service = incidents_by_service(site)
    ninety: dict[str, dict[str, Any]] = {}
    for svc in data.config.services:
        own = service_documents(data, svc)
        yield from ((path, jsonout.dump(doc)) for path, doc in own.items())
        page = service_page(env, data.config, ChainMap(own, kept), svc.slug, by_service.get(svc.slug, []), ninety)
        yield routes.service_page_url(svc.slug).lstrip("/") + "index.html", page
        kept[routes.service_file(svc.slug)] = _slim(own[routes.service_file(svc.slug)])
        if svc is data.config.services[0]:      # the method page reads the ranges off one service's histories
            kept.update((p, d) for p, d in own.items() if "/history/" in p)
    yield from ((path, jsonout.dump(doc)) for path, doc in site.items())
    yield "api/v1/openapi.json", jsonout.dump_pretty(openapi_document(data.config))
    for path, badge in badge_files(site["api/v1/snapshot.json"]["services"]).items():
        yield path, badge if isinstance(badge, bytes) else jsonout.dump(badge)
    yield from feed_files(env, data).items()
    yield from site_pages(env, data, kept, ninety).items()   # pages show only what the JSON documents hold


def render_files(data: SiteData) -> dict[str, bytes]:
    """Every file of the tree, by path, as bytes (the whole tree in memory: for tests and tools)."""
    return dict(render_stream(data))


@dataclass(frozen=True)
class BuildResult:
    stats: WriteStats
    render_ms: float
    write_ms: float


def build(store: Store, config: Config, now: datetime) -> BuildResult:
    t0 = time.perf_counter()
    stream = Timed(render_stream(gather(store, config, now)))
    stats = write_tree(config.site.output, stream)
    t2 = time.perf_counter()
    return BuildResult(stats, stream.seconds * 1000, ((t2 - t0) - stream.seconds) * 1000)


class Timed:
    """An iterator that adds up the time spent producing its items (the rendering of a streamed build)."""

    def __init__(self, items: Iterator[tuple[str, bytes]]):
        self.items = items
        self.seconds = 0.0

    def __iter__(self) -> Iterator[tuple[str, bytes]]:
        return self

    def __next__(self) -> tuple[str, bytes]:
        start = time.perf_counter()
        try:
            return next(self.items)
        finally:
            self.seconds += time.perf_counter() - start
