"""Upptime (``history/summary.json`` of a monitoring repository, or its published site's).

Upptime's workflows commit one summary of every site they watch: its
current ``status`` and uptime figures per window (``"99.56%"``). The summary
is an array of sites and has no incidents (Upptime files those as GitHub
issues) and no maintenance.

Mapping to our scale:

* components are sites (named, no groups; the id is the ``slug``, else the
  name): up -> operational, degraded (answering slowly) -> degraded, down
  -> major_outage; anything else -> unknown. ``uptime`` holds the figures
  the summary gives: ``all`` (since monitoring began), ``day``, ``week``,
  ``month`` and ``year``, in percent.
* page status: as a page of monitors sums up its sites (``_monitors.headline``);
  the description counts the sites down (or slow) out of all.
* the summary carries no time of its own, so ``updated_at`` is null.
"""

from __future__ import annotations

import re
from typing import Any

from statusgen.vendors import _monitors
from statusgen.vendors._payload import Node, load_json
from statusgen.vendors.model import VendorComponent, VendorView

FORMAT = "upptime"

STATUS = {"up": "operational", "degraded": "degraded", "down": "major_outage"}
UPTIME_KEYS = (
    ("all", "uptime"),
    ("day", "uptimeDay"),
    ("week", "uptimeWeek"),
    ("month", "uptimeMonth"),
    ("year", "uptimeYear"),
)
_PERCENT = re.compile(r"\s*(\d{1,3}(?:\.\d{1,6})?)\s*%?\s*")


def parse(data: Any) -> VendorView:
    """Read an Upptime ``summary.json`` payload (bytes, text or decoded JSON)."""
    root = load_json(FORMAT, data)
    found: dict[str, VendorComponent] = {}
    for node in root.items():
        site = _site(node)
        found.setdefault(site.id, site)
    components = tuple(found.values())
    status, _ = _monitors.headline(c.status for c in components)
    return VendorView.of_components(FORMAT, status, _count(components), components)


def _count(sites: tuple[VendorComponent, ...]) -> str:
    """The sites down (or slow) out of all: "6 of 11 sites down", or "All 3 sites up"."""
    for status, word in (("major_outage", "down"), ("degraded", "degraded"), ("unknown", "unknown")):
        count = sum(s.status == status for s in sites)
        if count:
            return f"{count} of {len(sites)} sites {word}"
    return f"All {len(sites)} sites up"


def _site(node: Node) -> VendorComponent:
    name = node["name"].text()
    slug = node.get("slug").text_or_none()
    return VendorComponent(
        id=slug or name,
        name=name,
        status=STATUS.get(node["status"].word(), "unknown"),
        group=None,
        uptime=tuple(
            (window, figure) for window, key in UPTIME_KEYS if (figure := _percent(node.get(key))) is not None
        ),
    )


def _percent(node: Node) -> float | None:
    """``"99.56%"`` (or a bare number) as 99.56; None when missing or not a percentage."""
    if isinstance(node.value, str):
        match = _PERCENT.fullmatch(node.value)
        value = float(match[1]) if match else None
    else:
        value = node.number_or_none()
    return value if value is not None and 0 <= value <= 100 else None
