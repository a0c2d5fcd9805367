"""Badges: a shields.io endpoint JSON and an SVG per service, escaped."""

from __future__ import annotations

import json

import lxml.etree as et

from statusgen.demo import main as demo
from statusgen.render.formats.badges import endpoint_badge, svg_badge


def test_badges_in_the_tree_follow_the_snapshot(tmp_path):
    demo(
        [
            "--no-serve",
            "--cycles",
            "4",
            "--pause",
            "0",
            "--workdir",
            str(tmp_path / "d"),
            "--output",
            str(tmp_path / "site"),
        ]
    )
    site = tmp_path / "site"
    snap = json.loads((site / "api/v1/snapshot.json").read_bytes())
    for s in snap["services"]:
        badge = json.loads((site / f"badges/{s['slug']}.json").read_bytes())
        assert badge["schemaVersion"] == 1 and badge["label"] == s["name"]
        assert badge["message"] == s["status"].replace("_", " ").replace("degraded", "degraded performance").replace(
            "maintenance", "under maintenance"
        ).replace("unknown", "status unknown")
        svg = et.fromstring((site / f"badges/{s['slug']}.svg").read_bytes())
        assert svg.tag == "{http://www.w3.org/2000/svg}svg"
        assert svg.get("aria-label") == f"{badge['label']}: {badge['message']}"


def test_badge_text_is_escaped():
    summary = {"slug": "x", "name": 'A <b>&"', "status": "major_outage"}
    svg = svg_badge(summary)
    tree = et.fromstring(svg)
    assert "<b>" not in svg.decode() and tree.findtext("{http://www.w3.org/2000/svg}title") == 'A <b>&": major outage'
    assert endpoint_badge(summary) == {
        "schemaVersion": 1,
        "label": 'A <b>&"',
        "message": "major outage",
        "color": "red",
        "cacheSeconds": 60,
    }
