"""Render: the whole tree as bytes, then written and swapped in (``tree.py``).

A build is two phases, like mkdocs: gather (``sitedata.gather``, the only
read) and render (pure functions of the gathered data), then one write.
"""

from __future__ import annotations

import time
from functools import lru_cache
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from jinja2 import Environment, FileSystemLoader, select_autoescape

from . import jsonout
from .badges import badge_files
from .config import Config
from .documents import api_documents
from .feeds import feed_files
from .openapi import openapi_document
from .pages import page_files
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


def render_files(data: SiteData) -> dict[str, bytes]:
    """Every file of the tree, by path, as bytes."""
    env = environment()
    docs = api_documents(data)
    files = {path: jsonout.dump(doc) for path, doc in docs.items()}
    files["api/v1/openapi.json"] = jsonout.dump_pretty(openapi_document(data.config))
    for path, badge in badge_files(docs["api/v1/snapshot.json"]["services"]).items():
        files[path] = badge if isinstance(badge, bytes) else jsonout.dump(badge)
    files.update(feed_files(env, data))
    files.update(page_files(env, data, docs))   # pages show only what the JSON documents hold
    return files


@dataclass(frozen=True)
class BuildResult:
    stats: WriteStats
    render_ms: float
    write_ms: float


def build(store: Store, config: Config, now: datetime) -> BuildResult:
    t0 = time.perf_counter()
    files = render_files(gather(store, config, now))
    t1 = time.perf_counter()
    stats = write_tree(config.site.output, files)
    t2 = time.perf_counter()
    return BuildResult(stats, (t1 - t0) * 1000, (t2 - t1) * 1000)
