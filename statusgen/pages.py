"""Render: the HTML pages, from the same documents as the JSON API."""

from __future__ import annotations

from jinja2 import Environment

from .documents import snapshot_document
from .sitedata import SiteData


def page_files(env: Environment, data: SiteData) -> dict[str, bytes]:
    snapshot = snapshot_document(data)
    html = env.get_template("index.html").render(site=data.config.site, snapshot=snapshot)
    return {"index.html": html.encode("utf-8")}
