"""Render: the HTML pages, from the same documents as the JSON API."""

from __future__ import annotations

from typing import Any

from jinja2 import Environment

from .sitedata import SiteData


def page_files(env: Environment, data: SiteData, docs: dict[str, Any]) -> dict[str, bytes]:
    """Every page, built from ``docs`` (tree path -> the JSON document of this build)."""
    snapshot = docs["api/v1/snapshot.json"]
    html = env.get_template("index.html").render(site=data.config.site, snapshot=snapshot)
    return {"index.html": html.encode("utf-8")}
