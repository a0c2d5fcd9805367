"""Mangled payloads, fed to every adapter and to detection: only VendorParseError may escape.

Random JSON trees built from the keys and words the adapters look for,
mutations of each real sample, truncations, byte flips, random bytes and
random XML. A payload either parses into a sound view or raises one
``VendorParseError`` line naming its format; nothing else, ever.
"""

from __future__ import annotations

import json
import unicodedata
from collections.abc import Callable
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from statusgen.errors import VendorParseError
from statusgen.vendors import (
    FORMATS,
    PARSERS,
    STATUSES,
    VendorView,
    detect_format,
    parse_vendor,
)
from statusgen.vendors.model import IMPACTS

SAMPLES = Path(__file__).resolve().parent / "fixtures" / "vendors"
SAMPLE_FILES = sorted(p for p in SAMPLES.rglob("*") if p.suffix in (".json", ".atom", ".rss"))
SAMPLE_BYTES = {p.name: p.read_bytes() for p in SAMPLE_FILES}
JSON_SAMPLES = sorted(name for name in SAMPLE_BYTES if name.endswith(".json"))
FEED_SAMPLES = sorted(name for name in SAMPLE_BYTES if not name.endswith(".json"))

FAR_EAST = ZoneInfo("Pacific/Kiritimati")
KUMA_BUNDLE = {
    "status_page": orjson.loads(SAMPLE_BYTES["slum_status-page.json"]),
    "heartbeat": orjson.loads(SAMPLE_BYTES["slum_heartbeat.json"]),
}

FAST = settings(  # the whole file stays under ~20 s
    max_examples=200,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)

KEYS = [
    "page",
    "url",
    "updated_at",
    "components",
    "incidents",
    "scheduled_maintenances",
    "status",
    "indicator",
    "description",
    "id",
    "name",
    "group",
    "group_id",
    "shortlink",
    "started_at",
    "created_at",
    "impact",
    "scheduled_for",
    "scheduled_until",
    "result",
    "status_overall",
    "status_code",
    "updated",
    "_id",
    "messages",
    "datetime",
    "state",
    "components_affected",
    "maintenance",
    "active",
    "upcoming",
    "datetime_open",
    "datetime_planned_start",
    "datetime_planned_end",
    "active_incidents",
    "date_updated",
    "date_created",
    "type",
    "title",
    "services",
    "notes",
    "system",
    "resolved",
    "updates",
    "status_prod",
    "update_type",
    "full_url",
    "scheduled",
    "data",
    "enabled",
    "end",
    "modified",
    "external_desc",
    "affected_products",
    "begin",
    "uri",
    "most_recent_update",
    "status_impact",
    "incident_updates",
    "affected_components",
    "code",
    "new_status",
    "display_at",
    "activeIncidents",
    "activeMaintenances",
    "started",
    "updatedAt",
    "start",
    "duration",
    "status_page",
    "heartbeat",
    "publicGroupList",
    "monitorList",
    "heartbeatList",
    "uptimeList",
    "time",
    "style",
    "pin",
    "createdDate",
    "lastUpdatedDate",
    "maintenanceList",
    "timeslotList",
    "startDate",
    "endDate",
    "uptime",
    "uptimeDay",
    "uptimeWeek",
    "slug",
]
WORDS = [
    "operational",
    "degraded_performance",
    "partial_outage",
    "major_outage",
    "under_maintenance",
    "none",
    "minor",
    "major",
    "critical",
    "maintenance",
    "investigating",
    "identified",
    "monitoring",
    "resolved",
    "postmortem",
    "in_progress",
    "verifying",
    "scheduled",
    "completed",
    "active",
    "ok",
    "outage",
    "incident",
    "notice",
    "green",
    "yellow",
    "red",
    "blue",
    "UP",
    "HASISSUES",
    "UNDERMAINTENANCE",
    "MINOROUTAGE",
    "INPROGRESS",
    "NOTSTARTEDYET",
    "under-maintenance",
    "danger",
    "warning",
    "up",
    "down",
    "99.5%",
    "2026-06-22 04:16:17.020",
    "SERVICE_OUTAGE",
    "SERVICE_DISRUPTION",
    "AVAILABLE",
    "100",
    "200",
    "400",
    "600",
]
ODD_TEXT = st.sampled_from(
    [
        "2020-09-05T09:45:32.537Z", "2023-10-11T08:30:44.953-07:00", "9999-12-31T23:59:59-12:00",
        "0001-01-01T00:00:00+14:00", "2020-02-30T00:00:00Z", "2020-10-12 12:20:02", "yesterday",
        "", " ", "\x00\x1b[31m\u202e\r\n", "\ud800", "x" * 5000, "<script>alert(1)</script>",
    ]
)  # fmt: skip
LEAVES = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**63), max_value=2**64 - 1),
    st.floats(allow_nan=False, allow_infinity=False),
    st.sampled_from(WORDS),
    ODD_TEXT,
    st.text(max_size=20),
)
JSON_TREES = st.recursive(
    LEAVES,
    lambda children: st.one_of(
        st.lists(children, max_size=4),
        st.dictionaries(st.sampled_from(KEYS) | st.text(max_size=6), children, max_size=6),
    ),
    max_leaves=30,
)

XML_NAMES = (
    "feed", "entry", "rss", "channel", "item", "title", "link", "id", "updated", "published",
    "content", "summary", "description", "pubDate", "guid", "lastBuildDate",
)  # fmt: skip
XML_TEXT = st.sampled_from(
    ["&lt;strong&gt;Investigating&lt;/strong&gt;", "&lt;small&gt;May 7, 05:02 UTC&lt;/small&gt;",
     "Resolved", "In progress", "2026-05-07T06:14:57Z", "Thu, 09 Jan 2014 16:00:23 -0800",
     "&amp;", "&#0;", "&#x202e;", "]]>", "<![CDATA[<strong>Scheduled</strong>]]>"]
) | st.text(alphabet=st.characters(blacklist_characters="<&"), max_size=12)  # fmt: skip


def _xml_element(children: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
    def render(name: str, atom: bool, body: list[str]) -> str:
        xmlns = ' xmlns="http://www.w3.org/2005/Atom"' if atom else ""
        return f"<{name}{xmlns}>{''.join(body)}</{name}>"

    return st.builds(render, st.sampled_from(XML_NAMES), st.booleans(), st.lists(children, max_size=4))


XML_DOCS = st.recursive(XML_TEXT, _xml_element, max_leaves=25).map(
    lambda body: f'<?xml version="1.0" encoding="UTF-8"?>\n{body}'.encode("utf-8", "surrogatepass")
)


# -- the property -----------------------------------------------------------


def _clean(text: str | None, limit: int = 500) -> bool:
    if text is None:
        return True
    return len(text) <= limit and not any(unicodedata.category(ch).startswith("C") for ch in text)


def assert_sound(view: VendorView) -> None:
    """A view that parsed must be fully normalized."""
    assert view.status in STATUSES
    assert all(c.status in STATUSES and _clean(c.name) and _clean(c.group) for c in view.components)
    assert all(i.impact in IMPACTS and _clean(i.title) and _clean(i.status) for i in view.incidents)
    assert all(a.status in STATUSES and _clean(a.name) for i in view.incidents for a in i.affected)
    assert all(0 <= figure <= 100 for c in view.components for _, figure in c.uptime)
    assert all(m.status == "in_progress" for m in view.maintenance_active)
    assert all(m.status == "scheduled" for m in view.maintenance_upcoming)
    moments = (
        [view.updated_at] + [i.started_at for i in view.incidents] + [m.starts_at for m in view.maintenance_active]
    )
    assert all(m is None or (m.utcoffset() is not None and not m.utcoffset()) for m in moments)
    orjson.dumps(view.to_json())


def only_parse_errors(call: Callable[..., Any], *args: Any, **kwargs: Any) -> None:
    """Run ``call``; it may succeed or raise one clean VendorParseError line, nothing else."""
    try:
        result = call(*args, **kwargs)
    except VendorParseError as exc:
        message = str(exc)
        assert message and "\n" not in message and _clean(message, 1200)
        assert "payload:" in message or message.startswith("unknown vendor format")
        return
    if isinstance(result, VendorView):
        assert_sound(result)
    else:
        assert result in FORMATS


def every_reader(body: bytes) -> None:
    """Every adapter, detection, and parse_vendor with and without narrowing."""
    for parse in PARSERS.values():
        only_parse_errors(parse, body)
    only_parse_errors(detect_format, body)
    only_parse_errors(parse_vendor, body)
    only_parse_errors(parse_vendor, body, components=["API", "Website"])
    only_parse_errors(parse_vendor, body, zone=FAR_EAST)  # zone-less times at the calendar's edges


# -- generated payloads -----------------------------------------------------


def dumps(tree: Any) -> bytes:
    """JSON bytes of a tree; lone surrogates become ``\\udXXX`` escapes (orjson refuses them)."""
    return json.dumps(tree).encode("ascii")


@FAST
@given(tree=JSON_TREES)
def test_random_json_trees(tree: Any) -> None:
    for parse in PARSERS.values():
        only_parse_errors(parse, tree)
    every_reader(dumps(tree))


@FAST
@given(
    tree=JSON_TREES,
    wrapper=st.sampled_from(
        ["statuspage", "statusio", "slack", "heroku", "cachet", "gcp", "instatus", "uptimekuma", "upptime"]
    ),
)
def test_random_trees_in_each_vendors_frame(tree: Any, wrapper: str) -> None:
    """Random values where each vendor's payload keeps its parts, to get past the first checks."""
    framed = {
        "statuspage": {
            "page": {"url": tree},
            "components": [tree],
            "incidents": [tree],
            "status": tree,
        },
        "statusio": {
            "result": {
                "status_overall": tree,
                "status": [tree],
                "incidents": [tree],
                "maintenance": tree,
            }
        },
        "slack": {"status": "active", "active_incidents": [tree], "date_updated": tree},
        "heroku": {"status": [tree], "incidents": [tree], "scheduled": [tree]},
        "cachet": {"data": [tree, tree]},
        "gcp": [tree],
        "instatus": {"page": {"status": "UP", "url": tree}, "activeIncidents": [tree], "activeMaintenances": [tree]},
        "uptimekuma": {
            "status_page": {"publicGroupList": [{"name": "G", "monitorList": [tree]}], "incident": tree},
            "heartbeat": {"heartbeatList": {"1": [tree]}, "uptimeList": tree},
        },
        "upptime": [tree, {"name": "x", "status": "up", "uptime": tree}],
    }[wrapper]
    only_parse_errors(PARSERS[wrapper], framed)
    every_reader(dumps(framed))


def _mutate(value: Any, data: st.DataObject, depth: int = 0) -> Any:
    """Replace one random node of a decoded payload with a random tree (or drop a key)."""
    is_container = isinstance(value, (dict, list)) and len(value) > 0
    if not is_container or depth > 8 or data.draw(st.integers(0, 5)) == 0:
        return data.draw(JSON_TREES)
    if isinstance(value, dict):
        key = data.draw(st.sampled_from(sorted(value)))
        if data.draw(st.booleans()) and depth > 0:
            return {k: v for k, v in value.items() if k != key}
        return {**value, key: _mutate(value[key], data, depth + 1)}
    index = data.draw(st.integers(0, len(value) - 1))
    return [*value[:index], _mutate(value[index], data, depth + 1), *value[index + 1 :]]


@pytest.mark.parametrize("name", JSON_SAMPLES)
@settings(FAST, max_examples=40)
@given(data=st.data())
def test_mutated_samples(name: str, data: st.DataObject) -> None:
    payload = orjson.loads(SAMPLE_BYTES[name])
    for _ in range(data.draw(st.integers(1, 3))):
        payload = _mutate(payload, data)
    for parse in PARSERS.values():
        only_parse_errors(parse, payload)
    only_parse_errors(parse_vendor, dumps(payload))


@settings(FAST, max_examples=80)
@given(data=st.data())
def test_mutated_uptime_kuma_bundle(data: st.DataObject) -> None:
    """The Uptime Kuma page as a run reads it (its two answers in one payload), mangled."""
    payload: Any = KUMA_BUNDLE
    for _ in range(data.draw(st.integers(1, 3))):
        payload = _mutate(payload, data)
    for parse in PARSERS.values():
        only_parse_errors(parse, payload)
    every_reader(dumps(payload))


@pytest.mark.parametrize("name", sorted(SAMPLE_BYTES))
@settings(FAST, max_examples=30)
@given(data=st.data())
def test_truncated_samples(name: str, data: st.DataObject) -> None:
    body = SAMPLE_BYTES[name]
    cut = data.draw(st.integers(0, len(body) - 1))
    every_reader(body[:cut])


@pytest.mark.parametrize("name", sorted(SAMPLE_BYTES))
@settings(FAST, max_examples=30)
@given(data=st.data())
def test_byte_flips(name: str, data: st.DataObject) -> None:
    body = bytearray(SAMPLE_BYTES[name])
    for _ in range(data.draw(st.integers(1, 4))):
        body[data.draw(st.integers(0, len(body) - 1))] = data.draw(st.integers(0, 255))
    every_reader(bytes(body))


@FAST
@given(body=st.binary(max_size=200) | st.text(max_size=200).map(lambda t: t.encode("utf-8", "surrogatepass")))
def test_random_bytes_and_text(body: bytes) -> None:
    every_reader(body)


@FAST
@given(body=XML_DOCS)
def test_random_xml(body: bytes) -> None:
    every_reader(body)
    only_parse_errors(PARSERS["feed"], body.decode("utf-8", "replace"))


# -- known-hostile payloads -------------------------------------------------

BILLION_LAUGHS = b"""<?xml version="1.0"?>
<!DOCTYPE feed [<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;">
<!ENTITY c "&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;"><!ENTITY d "&c;&c;&c;&c;&c;&c;&c;&c;&c;&c;">]>
<feed xmlns="http://www.w3.org/2005/Atom"><title>&d;</title></feed>"""
EXTERNAL_ENTITY = b"""<?xml version="1.0"?>
<!DOCTYPE rss [<!ENTITY x SYSTEM "file:///etc/passwd">]><rss><channel><title>&x;</title></channel></rss>"""
HOSTILE = {
    "billion laughs": BILLION_LAUGHS,
    "external entity": EXTERNAL_ENTITY,
    "undeclared entity": b'<feed xmlns="http://www.w3.org/2005/Atom"><title>&x;</title></feed>',
    "deep xml": b"<rss><channel>" + b"<a>" * 50_000 + b"</a>" * 50_000 + b"</channel></rss>",
    "deep json": b"[" * 100_000 + b"]" * 100_000,
    "deep json object": b'{"page":' * 2000 + b"{}" + b"}" * 2000,
    "huge number": b'{"result": {"status_overall": {"status_code": 1e400}, "status": []}}',
    "huge integer": b'{"data": [{"id": 123456789012345678901234567890, "name": "x", "status": 1}]}',
    "control characters": b'{"page": {"url": "\\u0000\\u001b"}, "components": [{"id": "a", "name": "\\u0007\\u202e", "status": "ok"}]}',
    "lone surrogate": b'{"status": "ok", "active_incidents": [{"id": "\\ud800"}]}',
    "utf-16 xml": '<?xml version="1.0" encoding="UTF-16"?><rss/>'.encode("utf-16"),
    "unknown xml encoding": b'<?xml version="1.0" encoding="x-nope"?><rss/>',
    "html page": b"<!DOCTYPE html><html><body>Service Unavailable</body></html>",
    "empty": b"",
    "bom only": b"\xef\xbb\xbf",
    "nul bytes": b"\x00" * 64,
    "zone-less year one": b'{"publicGroupList": [], "incident": {"id": 1, "createdDate": "0001-01-01 00:00:00"}}',
    "zone-less year 9999": b'{"status_page": {"publicGroupList": [{"monitorList": [{"id": 1, "name": "m"}]}]},'
    b' "heartbeat": {"heartbeatList": {"1": [{"status": 1, "time": "9999-12-31 23:59:59"}]}}}',
    "maintenance past the calendar": b'{"page": {"status": "UP"}, "activeMaintenances": [{"id": "m", "name": "n",'
    b' "status": "INPROGRESS", "start": "9999-12-31T23:00:00Z", "duration": 600}]}',
    "uptime beyond reason": b'[{"name": "a", "status": "up", "uptime": "1e308%", "uptimeDay": 1e308}]',
    "heartbeat list alone": b'{"heartbeatList": {}, "uptimeList": {}}',
}


@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_hostile_payloads(name: str) -> None:
    every_reader(HOSTILE[name])


def test_doctype_is_refused_by_name() -> None:
    with pytest.raises(VendorParseError, match="feed payload: has a DOCTYPE"):
        PARSERS["feed"](BILLION_LAUGHS)
    with pytest.raises(VendorParseError, match="feed payload: has a DOCTYPE"):
        PARSERS["feed"](EXTERNAL_ENTITY)


def test_messages_name_format_and_place() -> None:
    body = b'{"page": {}, "components": [{"id": "a", "name": 7, "status": "operational"}]}'
    with pytest.raises(VendorParseError) as caught:
        parse_vendor(body, "statuspage")
    assert str(caught.value) == "statuspage payload: components[0].name must be a string, got a number"
    with pytest.raises(VendorParseError, match=r"^gcp payload: is not valid JSON \(unexpected end of data"):
        parse_vendor(b'[{"id": ', "gcp")
