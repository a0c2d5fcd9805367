"""Render: a badge per service, as a shields.io endpoint JSON and as an SVG.

    badges/{slug}.json   {"schemaVersion": 1, "label": ..., "message": ..., "color": ...}
                         (use with https://img.shields.io/endpoint?url=<base>/badges/{slug}.json)
    badges/{slug}.svg    a flat badge that needs no third party

Both are built from the service summary of the JSON API.
"""

from __future__ import annotations

from typing import Any
from xml.sax.saxutils import escape

from statusgen.model import STATUS_WORDS, Status

COLOURS = {  # shields.io colour name, and the hex used in our SVG (white text stays readable on each)
    Status.OPERATIONAL: ("brightgreen", "#1a7f37"), Status.DEGRADED: ("yellow", "#9a6700"),
    Status.PARTIAL_OUTAGE: ("orange", "#bc4c00"), Status.MAJOR_OUTAGE: ("red", "#cf222e"),
    Status.MAINTENANCE: ("blue", "#0969da"), Status.UNKNOWN: ("lightgrey", "#57606a"),
}
CHAR_PX = 6.6      # average advance of 11 px Verdana/DejaVu Sans
PAD_PX = 10


def endpoint_badge(summary: dict[str, Any]) -> dict[str, Any]:
    status = Status(summary["status"])
    return {"schemaVersion": 1, "label": summary["name"], "message": STATUS_WORDS[status],
            "color": COLOURS[status][0], "cacheSeconds": 60}


def _width(text: str) -> int:
    return int(len(text) * CHAR_PX + PAD_PX)


def svg_badge(summary: dict[str, Any]) -> bytes:
    status = Status(summary["status"])
    label, message = summary["name"], STATUS_WORDS[status]
    lw, mw = _width(label), _width(message)
    colour = COLOURS[status][1]
    title = escape(f"{label}: {message}", {"\"": "&quot;"})
    svg = (f'<svg xmlns="http://www.w3.org/2000/svg" width="{lw + mw}" height="20" role="img" aria-label="{title}">'
           f"<title>{title}</title>"
           f'<rect width="{lw}" height="20" fill="#424a53"/><rect x="{lw}" width="{mw}" height="20" fill="{colour}"/>'
           f'<g fill="#fff" font-family="Verdana,DejaVu Sans,sans-serif" font-size="11" text-anchor="middle">'
           f'<text x="{lw / 2:.1f}" y="14">{escape(label)}</text>'
           f'<text x="{lw + mw / 2:.1f}" y="14">{escape(message)}</text></g></svg>\n')
    return svg.encode("utf-8")


def badge_files(services: list[dict[str, Any]]) -> dict[str, Any]:
    """Tree path -> JSON object or SVG bytes, for every service summary."""
    out: dict[str, Any] = {}
    for s in services:
        out[f"badges/{s['slug']}.json"] = endpoint_badge(s)
        out[f"badges/{s['slug']}.svg"] = svg_badge(s)
    return out
