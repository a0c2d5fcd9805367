"""Render: a badge per service, as a shields.io endpoint JSON and as an SVG.

    badges/{slug}.json   {"schemaVersion": 1, "label": ..., "message": ..., "color": ...}
                         (use with https://img.shields.io/endpoint?url=<base>/badges/{slug}.json)
    badges/{slug}.svg    a flat badge that needs no third party (``templates/badge.svg``)

Both are built from the service summary of the JSON API.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from statusgen import routes
from statusgen.model import STATUS_WORDS, Status
from statusgen.render.templating import render

COLOURS = {  # shields.io colour name, and the hex used in our SVG (white text stays readable on each)
    Status.OPERATIONAL: ("brightgreen", "#1a7f37"),
    Status.DEGRADED: ("yellow", "#9a6700"),
    Status.PARTIAL_OUTAGE: ("orange", "#bc4c00"),
    Status.MAJOR_OUTAGE: ("red", "#cf222e"),
    Status.MAINTENANCE: ("blue", "#0969da"),
    Status.UNKNOWN: ("lightgrey", "#57606a"),
}
CHAR_PX = 6.6  # average advance of 11 px Verdana/DejaVu Sans
PAD_PX = 10


def endpoint_badge(summary: dict[str, Any]) -> dict[str, Any]:
    status = Status(summary["status"])
    return {
        "schemaVersion": 1,
        "label": summary["name"],
        "message": STATUS_WORDS[status],
        "color": COLOURS[status][0],
        "cacheSeconds": 60,
    }


def _width(text: str) -> int:
    return int(len(text) * CHAR_PX + PAD_PX)


@dataclass(frozen=True)
class Badge:
    """What ``badge.svg`` draws: a label on grey and a status message on its colour."""

    label: str
    message: str
    colour: str
    label_width: int
    message_width: int

    @property
    def width(self) -> int:
        return self.label_width + self.message_width

    @property
    def label_x(self) -> str:
        return f"{self.label_width / 2:.1f}"

    @property
    def message_x(self) -> str:
        return f"{self.label_width + self.message_width / 2:.1f}"


def svg_badge(summary: dict[str, Any]) -> bytes:
    status = Status(summary["status"])
    label, message = summary["name"], STATUS_WORDS[status]
    badge = Badge(label, message, COLOURS[status][1], _width(label), _width(message))
    return render("badge.svg", b=badge)


def badge_paths(slug: str) -> list[str]:
    """A service's badges: the endpoint JSON (``endpoint_badge``) and the image (``svg_badge``)."""
    return [routes.badge_file(slug, "json"), routes.badge_file(slug, "svg")]
