"""The status-mapping rules of each adapter, one small payload per rule."""

from __future__ import annotations

from importlib import import_module
from pathlib import Path

import orjson
import pytest

from statusgen import vendors
from statusgen.errors import VendorParseError
from statusgen.model import VENDOR_FORMATS
from statusgen.vendors import (
    cachet,
    feed,
    heroku,
    parse_vendor,
    slack,
    statusio,
    statuspage,
)
from statusgen.vendors.model import worst_status


def test_worst_status_order_and_unknown() -> None:
    assert worst_status(["operational", "maintenance"]) == "maintenance"
    assert worst_status(["maintenance", "degraded"]) == "degraded"
    assert worst_status(["major_outage", "partial_outage", "unknown"]) == "major_outage"
    assert worst_status(["unknown", "unknown"]) == "unknown"
    assert worst_status([]) == "operational"


@pytest.mark.parametrize(
    ("indicator", "status"),
    [
        ("none", "operational"),
        ("minor", "degraded"),
        ("major", "partial_outage"),
        ("critical", "major_outage"),
        ("maintenance", "maintenance"),
        ("purple", "unknown"),
    ],
)
def test_statuspage_indicator(indicator: str, status: str) -> None:
    view = statuspage.parse({"page": {}, "status": {"indicator": indicator, "description": "x"}})
    assert view.status == status


@pytest.mark.parametrize(
    ("word", "status"),
    [
        ("operational", "operational"),
        ("degraded_performance", "degraded"),
        ("partial_outage", "partial_outage"),
        ("major_outage", "major_outage"),
        ("under_maintenance", "maintenance"),
        ("sideways", "unknown"),
    ],
)
def test_statuspage_component_status(word: str, status: str) -> None:
    view = statuspage.parse({"components": [{"id": "c1", "name": "API", "status": word}]})
    assert view.components[0].status == status
    assert view.status == status  # no indicator: computed


@pytest.mark.parametrize(
    ("impact", "ours"),
    [
        ("none", "none"),
        ("minor", "degraded"),
        ("major", "partial_outage"),
        ("critical", "major_outage"),
    ],
)
def test_statuspage_incident_impact(impact: str, ours: str) -> None:
    incident = {"id": "i1", "name": "Errors", "status": "identified", "impact": impact}
    resolved = {"id": "i2", "name": "Old", "status": "resolved", "impact": "critical"}
    view = statuspage.parse({"page": {"url": "https://status.example.com/"}, "incidents": [incident, resolved]})
    (only,) = view.incidents
    assert (only.impact, only.status) == (ours, "identified")
    assert only.url == "https://status.example.com/incidents/i1"
    assert view.status == ("operational" if ours == "none" else ours)


@pytest.mark.parametrize(
    ("code", "status"),
    [(100, "operational"), (200, "maintenance"), (300, "degraded"), (400, "partial_outage"),
     (500, "major_outage"), (600, "partial_outage"), ("300", "degraded"), (700, "unknown")],
)  # fmt: skip
def test_statusio_codes(code: int | str, status: str) -> None:
    component = {"id": "a", "name": "API", "status_code": code}
    view = statusio.parse({"result": {"status_overall": {"status_code": code}, "status": [component]}})
    assert (view.status, view.components[0].status) == (status, status)


@pytest.mark.parametrize(
    ("colour", "status"),
    [
        ("green", "operational"),
        ("yellow", "degraded"),
        ("red", "major_outage"),
        ("grey", "unknown"),
    ],
)
def test_heroku_colours(colour: str, status: str) -> None:
    view = heroku.parse({"status": [{"system": "Apps", "status": colour}], "incidents": []})
    assert view.status == status


def test_heroku_red_update_and_resolved_incident() -> None:
    updates = [
        {
            "created_at": "2019-10-24T18:00:00Z",
            "status_prod": "yellow",
            "update_type": "investigating",
        },
        {"created_at": "2019-10-24T19:00:00Z", "status_prod": "red", "update_type": "update"},
    ]
    open_one = {"id": 1, "title": "Down", "resolved": False, "updates": updates}
    closed = {"id": 2, "title": "Fixed", "resolved": True, "updates": updates}
    view = heroku.parse({"status": [{"system": "Apps", "status": "green"}], "incidents": [open_one, closed]})
    (incident,) = view.incidents
    assert (incident.impact, incident.status) == ("major_outage", "update")
    assert view.status == "major_outage"


@pytest.mark.parametrize(
    ("kind", "impact", "status"),
    [("outage", "major_outage", "major_outage"), ("incident", "degraded", "degraded"),
     ("notice", "none", "operational")],
)  # fmt: skip
def test_slack_types(kind: str, impact: str, status: str) -> None:
    event = {
        "id": 1,
        "title": "Trouble",
        "type": kind,
        "status": "active",
        "services": ["Messaging"],
    }
    view = slack.parse({"status": "active", "active_incidents": [event]})
    assert (view.incidents[0].impact, view.status) == (impact, status)


def test_slack_ok_and_maintenance() -> None:
    assert slack.parse({"status": "ok", "active_incidents": []}).status == "operational"
    planned = {"id": 2, "title": "Upgrade", "type": "notice", "status": "scheduled", "services": []}
    view = slack.parse({"status": "active", "active_incidents": [planned]})
    assert ([m.title for m in view.maintenance_upcoming], view.incidents) == (["Upgrade"], ())


@pytest.mark.parametrize(
    ("code", "status"),
    [
        (1, "operational"),
        (2, "degraded"),
        (3, "partial_outage"),
        (4, "major_outage"),
        (0, "unknown"),
    ],
)
def test_cachet_codes(code: int, status: str) -> None:
    view = cachet.parse({"data": [{"id": 1, "name": "API", "status": code}]})
    assert view.components[0].status == status


def test_generic_feed_falls_back_to_status_words() -> None:
    body = b"""<feed xmlns="http://www.w3.org/2005/Atom"><title>Example</title>
    <entry><id>urn:a</id><title>API errors</title><updated>2026-11-22T20:00:00Z</updated>
      <summary>We are investigating elevated errors.</summary></entry>
    <entry><id>urn:b</id><title>[Resolved] Login slow</title><updated>2026-11-21T20:00:00Z</updated>
      <summary>We are investigating. Update: all good.</summary></entry>
    <entry><id>urn:c</id><title>Blog post</title><summary>Nothing to see.</summary></entry>
    </feed>"""
    view = feed.parse(body)
    assert [(i.id, i.status) for i in view.incidents] == [("urn:a", "investigating")]
    assert view.status == "degraded"
    assert view.updated_at is not None and view.updated_at.isoformat() == "2026-11-22T20:00:00+00:00"


def test_html_title_becomes_plain_text() -> None:
    body = b"""<feed xmlns="http://www.w3.org/2005/Atom"><entry><id>urn:x</id>
    <title type="html">&lt;b&gt;Errors&lt;/b&gt; &amp;amp; timeouts</title>
    <content type="html">&lt;strong&gt;Identified&lt;/strong&gt; - found it</content>
    </entry></feed>"""
    (incident,) = feed.parse(body).incidents
    assert (incident.title, incident.status) == ("Errors & timeouts", "identified")


def test_vendor_text_is_cleaned_not_escaped() -> None:
    name = "API\u0000 <b>v2</b>\u202e\n" + "x" * 600
    view = statuspage.parse({"components": [{"id": "c1", "name": name, "status": "operational"}]})
    cleaned = view.components[0].name
    assert cleaned.startswith("API <b>v2</b> xxx") and len(cleaned) == 500


def test_group_component_names_select_members() -> None:
    payload = {
        "page": {"id": "p", "url": "https://status.example.com"},
        "components": [
            {"id": "g", "name": "Storage", "status": "operational", "group": True},
            {"id": "a", "name": "S3", "status": "major_outage", "group_id": "g"},
            {"id": "b", "name": "Glacier", "status": "operational", "group_id": "g"},
            {"id": "c", "name": "EC2", "status": "operational"},
        ],
        "status": {"indicator": "critical"},
    }
    body = orjson.dumps(payload)
    assert parse_vendor(body, components=["storage"]).status == "major_outage"
    assert parse_vendor(body, components=["EC2"]).status == "operational"
    assert parse_vendor(body, components="glacier").status == "operational"
    with pytest.raises(VendorParseError, match='no component "RDS"; available: "EC2", "Glacier"'):
        parse_vendor(body, components=["RDS"])


def test_every_listed_format_has_its_adapter_and_no_adapter_is_unlisted() -> None:
    """The format list the configuration checks is the one the adapters are found by."""
    adapters = {
        path.stem
        for path in Path(vendors.__file__).parent.glob("*.py")
        if not path.stem.startswith("_") and hasattr(import_module(f"statusgen.vendors.{path.stem}"), "parse")
    }
    assert set(VENDOR_FORMATS) == adapters == set(vendors.PARSERS)
    assert all(vendors.PARSERS[name].__module__ == f"statusgen.vendors.{name}" for name in VENDOR_FORMATS)
