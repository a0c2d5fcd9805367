"""End to end: real loopback targets that change between runs, several real runs,
then every endpoint asserted over HTTP through the preview server."""

from __future__ import annotations

import http.client
import json
import re
import threading
from datetime import datetime
from pathlib import Path
from typing import Any

import feedparser
import httpx
import pytest
from click.testing import CliRunner
from jsonschema import Draft202012Validator

from statusgen.cli import main
from statusgen.config import load_config
from statusgen.cycle import run_cycle
from statusgen.model import RANGES, STATUSES
from statusgen.render.api.shapes import SCHEMAS, schema_for
from tests.conftest import Clock, Targets, start_preview, write_config

SERVICES = """
[categories]
cloud = "Cloud"
payments = "Payments"

[[services]]
slug = "alpha"
name = "Alpha <Cloud> & Co"
category = "cloud"
[[services.checks]]
url = "{a}"
keyword = "OK"

[[services]]
slug = "beta"
name = "Beta"
category = "cloud"
[[services.checks]]
url = "{b}"

[[services]]
slug = "gamma"
name = "Gamma Pay"
category = "payments"
[[services.checks]]
url = "{c}"
timeout = 0.5
"""


@pytest.fixture(scope="module")
def scenario(tmp_path_factory):
    """Runs: all up (2); beta fails (3) and recovers (2); gamma times out (3); one real CLI run."""
    tmp = tmp_path_factory.mktemp("e2e")
    targets = Targets()
    threading.Thread(target=targets.serve_forever, daemon=True).start()
    for p in ("/a", "/b", "/c"):
        targets.set(p)
    path = write_config(tmp, SERVICES.format(a=targets.url("/a"), b=targets.url("/b"), c=targets.url("/c")))
    cfg = load_config(path)
    clock = Clock()
    feeds_after: dict[str, list[str]] = {}

    def runs(n: int) -> None:
        for _ in range(n):
            run_cycle(cfg, clock)
            clock.tick()

    runs(2)
    targets.set("/b", 500, b"Internal <b>Error</b>")
    runs(3)
    targets.set("/b")
    runs(2)
    feeds_after["middle"] = [
        e.id for e in feedparser.parse((cfg.site.output / "feed/incidents.xml").read_bytes()).entries
    ]
    targets.set("/c", delay=2.0)
    runs(3)
    res = CliRunner().invoke(main, ["run", "--config", str(path)])
    assert res.exit_code == 0, res.output
    served = start_preview(cfg.site.output)
    yield {"cfg": cfg, "base": served.base, "site": cfg.site.output, "feeds": feeds_after, "cli": res.output}
    served.server.shutdown()
    targets.shutdown()


def raw_get(base: str, path: str) -> tuple[int, bytes]:
    """A request whose path goes on the wire exactly as given (no client normalization)."""
    host, port = base.removeprefix("http://").split(":")
    conn = http.client.HTTPConnection(host, int(port), timeout=10)
    conn.putrequest("GET", path, skip_accept_encoding=True)
    conn.endheaders()
    r = conn.getresponse()
    body = r.read()
    conn.close()
    return r.status, body


def get(scenario, path: str, **kw) -> httpx.Response:
    return httpx.get(scenario["base"] + path, **kw)


def test_cli_run_prints_one_line(scenario):
    lines = [ln for ln in scenario["cli"].splitlines() if " run 11: " in ln]
    assert len(lines) == 1 and re.search(
        r"; \d+ files built in [\d.]+ s \(store [\d.]+ s, render [\d.]+ s\), "
        r"\d+ written, \d+ kept without rendering$",
        lines[0],
    )
    assert "info: run 11: 3 checks (1 failed) probed in " in lines[0]


def test_snapshot_counts_equal_the_lists(scenario):
    snap = get(scenario, "/api/v1/snapshot").json()
    assert snap["count"] == 3 == len(snap["services"])
    statuses = {s["slug"]: s["status"] for s in snap["services"]}
    assert statuses == {"alpha": "operational", "beta": "operational", "gamma": "major_outage"}
    for status in STATUSES:
        listed = get(scenario, f"/api/v1/services?status={status}").json()
        assert listed["count"] == snap["counts"]["by_status"][status] == len(listed["services"])
        assert all(s["status"] == status for s in listed["services"])
    for cat, counts in snap["counts"]["by_category"].items():
        listed = get(scenario, f"/api/v1/services?category={cat}").json()
        assert listed["count"] == counts["total"]
        for status in STATUSES:
            pair = get(scenario, f"/api/v1/services?status={status}&category={cat}").json()
            assert pair["count"] == counts["by_status"][status]
            assert pair["filters"] == {"category": cat, "status": status}
    assert snap["health_index"] == round((100 + 100 + 0) / 3, 1)
    assert snap["open_incidents"] == 1
    summary = "1 service has a major outage; the other 2 are operating normally."
    assert snap["status"] == "major_outage" and snap["summary"] == summary
    health = get(scenario, "/api/v1/health").json()
    assert (health["status"], health["summary"]) == (snap["status"], snap["summary"])


def test_service_records(scenario):
    for slug in ("alpha", "beta", "gamma"):
        doc = get(scenario, f"/api/v1/services/{slug}").json()
        svc = doc["service"]
        assert svc["slug"] == slug and svc["checks"][0]["last_result"] is not None
        assert svc["last_day"]["count"] == 11 == len(svc["last_day"]["rows"])
        times = [row[0] for row in svc["last_day"]["rows"]]
        assert times == sorted(times) and len(set(times)) == 11  # oldest first, one per run
    gamma = get(scenario, "/api/v1/services/gamma").json()["service"]
    assert gamma["status"] == "major_outage"
    assert "127.0.0.1 timed out after 0.5 s" in gamma["reason"]
    assert gamma["open_incident"]["id"].startswith("gamma-")
    assert get(scenario, "/api/v1/services/alpha").json()["service"]["name"] == "Alpha <Cloud> & Co"


def test_history_ranges(scenario):
    """Each range's closed buckets in its history, the bucket in progress in the record: together,
    every result of the scenario."""
    progress = get(scenario, "/api/v1/services/beta").json()["service"]["in_progress"]
    for name, rng in RANGES.items():
        doc = get(scenario, f"/api/v1/services/beta/history?range={name}").json()
        now = progress[name]
        assert doc["range"] == name and doc["count"] == rng.buckets == len(doc["points"])
        assert doc["resolution_s"] == rng.resolution_s and doc["to"] == doc["as_of"] == now["start"]
        measured = [p for p in doc["points"] if p["checks"]]
        assert sum(p["checks"] for p in measured) == doc["summary"]["checks"]
        assert doc["summary"]["checks"] + now["checks"] == 11
        assert doc["summary"]["failed"] + now["failed"] == 3
        assert any(p["availability"] is None for p in doc["points"])
    default = get(scenario, "/api/v1/services/beta/history")
    assert default.json() == get(scenario, "/api/v1/services/beta/history?range=24h").json()
    day = get(scenario, "/api/v1/services/beta/history?range=24h").json()
    minutes = day["summary"]["incident_minutes"] + progress["24h"]["incident_minutes"]
    assert abs(minutes - 3) <= 1  # opened at the first failure, resolved at the first success (each part rounded)


def test_incidents_active_filters(scenario):
    every = get(scenario, "/api/v1/incidents").json()
    open_ = get(scenario, "/api/v1/incidents?active=1").json()
    closed = get(scenario, "/api/v1/incidents?active=0").json()
    assert every["count"] == 2 and open_["count"] == 1 and closed["count"] == 1
    assert [i["service"] for i in every["incidents"]] == ["gamma", "beta"]  # newest first
    assert open_["incidents"][0]["open"] is True and open_["incidents"][0]["ended_at"] is None
    beta = closed["incidents"][0]
    assert beta["duration_s"] == 180 and beta["updates"][-1]["message"] == "Recovered after 3 min."
    assert [u["kind"] for u in beta["updates"]] == ["opened", "resolved"]


def test_errors_are_json_with_allowed_values(scenario):
    cases = [
        ("/api/v1/services/nope", 404, "unknown_service"),
        ("/api/v1/services/nope/history", 404, "unknown_service"),
        ("/api/v1/nothing-here", 404, "not_found"),
        ("/api/v1/services?category=space", 400, "invalid_parameter"),
        ("/api/v1/services?status=fine", 400, "invalid_parameter"),
        ("/api/v1/services/beta/history?range=1y", 400, "invalid_parameter"),
        ("/api/v1/incidents?active=yes", 400, "invalid_parameter"),
    ]
    for path, status, code in cases:
        r = get(scenario, path)
        assert r.status_code == status, path
        assert r.headers["content-type"] == "application/json; charset=utf-8"
        body = r.json()["error"]
        assert body["code"] == code and body["status"] == status and body["message"]
        assert "etag" in r.headers
    assert get(scenario, "/api/v1/services/beta/history?range=1y").json()["error"]["allowed"] == list(RANGES)
    assert get(scenario, "/api/v1/services?category=space").json()["error"]["allowed"] == ["cloud", "payments"]


def test_unknown_parameters_are_ignored_and_order_does_not_matter(scenario):
    a = get(scenario, "/api/v1/services?status=operational&category=cloud&utm=x")
    b = get(scenario, "/api/v1/services?category=cloud&status=operational")
    assert a.status_code == 200 and a.content == b.content


def test_caching_headers_etag_and_304(scenario):
    r = get(scenario, "/api/v1/snapshot")
    assert r.headers["cache-control"] == "public, max-age=15"
    assert r.headers["access-control-allow-origin"] == "*"
    etag = r.headers["etag"]
    again = get(scenario, "/api/v1/snapshot", headers={"If-None-Match": etag})
    assert again.status_code == 304 and again.content == b"" and again.headers["etag"] == etag
    other = get(scenario, "/api/v1/health", headers={"If-None-Match": etag})
    assert other.status_code == 200


def test_methods_other_than_get_and_head(scenario):
    head = httpx.head(scenario["base"] + "/api/v1/snapshot")
    assert head.status_code == 200 and head.content == b""
    for method in ("POST", "PUT", "DELETE", "PATCH", "OPTIONS"):
        r = httpx.request(method, scenario["base"] + "/api/v1/snapshot")
        assert r.status_code == 405 and r.headers["allow"] == "GET, HEAD"
        assert r.json()["error"]["code"] == "method_not_allowed"


def test_no_file_outside_the_tree(scenario):
    for path in (
        "/../../../etc/passwd",
        "/%2e%2e/%2e%2e/etc/passwd",
        "/api/v1/services/..%2f..%2f..%2fetc%2fpasswd",
        "/.manifest.json",
        "//etc/passwd",
        "/api/v1/services/%00",
    ):
        status, body = raw_get(scenario["base"], path)
        assert status == 404, path
        assert b"root:" not in body


def test_feeds_read_by_a_real_feed_parser(scenario):
    r = get(scenario, "/feed/incidents.xml")
    assert r.headers["content-type"] == "application/atom+xml; charset=utf-8"
    feed = feedparser.parse(r.content)
    assert not feed.bozo, feed.get("bozo_exception")
    titles = [e.title for e in feed.entries]
    assert titles == ["Gamma Pay: major outage", "Beta: major outage (resolved)"]
    updated = [e.updated_parsed for e in feed.entries]
    assert updated == sorted(updated, reverse=True)
    ids = [e.id for e in feed.entries]
    assert ids[1] in scenario["feeds"]["middle"] and scenario["feeds"]["middle"] == ids[1:]
    assert all(i.startswith("tag:status.example.org,") for i in ids)
    beta = feedparser.parse(get(scenario, "/feed/services/beta.xml").content)
    assert [e.id for e in beta.entries] == ids[1:]
    assert "Recovered after 3 min." in beta.entries[0].content[0].value


def test_rate_limit_429_with_retry_after(scenario):
    served = start_preview(scenario["site"])
    try:
        with httpx.Client() as client:
            codes = [client.get(served.base + "/api/v1/health").status_code for _ in range(120)]
            assert codes == [200] * 120
            r = client.get(served.base + "/api/v1/health")
        assert r.status_code == 429 and int(r.headers["retry-after"]) >= 1
        assert r.json()["error"]["code"] == "rate_limited" and r.headers["cache-control"] == "no-store"
    finally:
        served.server.shutdown()


def test_every_json_file_matches_its_shape(scenario):
    root = Path(scenario["site"])
    checked = 0
    for path in root.rglob("*.json"):
        rel = path.relative_to(root).as_posix()
        name = schema_for(rel)
        if name is None:
            continue
        schema = {"$ref": f"#/components/schemas/{name}", "components": {"schemas": SCHEMAS}}
        Draft202012Validator(schema).validate(json.loads(path.read_bytes()))
        checked += 1
    assert checked > 40


def test_openapi_document_lists_every_endpoint(scenario):
    doc = get(scenario, "/api/v1/openapi.json").json()
    assert doc["openapi"] == "3.1.0"
    assert set(doc["paths"]) == {
        "/api/v1/snapshot",
        "/api/v1/services",
        "/api/v1/services/{slug}",
        "/api/v1/services/{slug}/history",
        "/api/v1/incidents",
        "/api/v1/health",
        "/feed/incidents.xml",
        "/feed/services/{slug}.xml",
        "/feed/maintenance.ics",
        "/feed/services/{slug}.ics",
        "/metrics",
        "/api/v1/reports",
        "/api/v1/reports/{month}",
        "/reports/{month}.csv",
        "/badges/{slug}.json",
        "/badges/{slug}.svg",
        "/embed/",
        "/embed/{slug}/",
    }
    params = doc["paths"]["/api/v1/services"]["get"]["parameters"]
    assert params[0]["schema"]["enum"] == ["cloud", "payments"]


def test_openapi_document_is_one_a_client_generator_reads_without_duplicates(scenario):
    """Every operation has its own operationId; no key is asked (security: []); a shape used in
    several documents is one schema, referenced; the Error schema has every field a body carries."""
    doc = get(scenario, "/api/v1/openapi.json").json()
    ids = [op["operationId"] for path in doc["paths"].values() for op in path.values()]
    assert len(ids) == len(set(ids)) == len(doc["paths"]) and all(re.fullmatch(r"[a-z][A-Za-z]+", i) for i in ids)
    assert doc["security"] == []
    schemas = doc["components"]["schemas"]
    text = json.dumps(schemas)
    for name in ("ServiceSummary", "Incident"):
        assert f'"#/components/schemas/{name}"' in text, name  # used, by reference
        inlined = json.dumps(schemas[name])
        assert text.count(inlined) == 1, name  # and written once
    error = schemas["Error"]["properties"]["error"]
    assert {"parameter", "allowed"} <= set(error["properties"]) and error["required"] == ["status", "code", "message"]
    for name in ("400-range", "404", "404-service", "405", "429"):
        body = json.loads((scenario["site"] / "_errors" / f"{name}.json").read_bytes())["error"]
        assert body["code"] in error["properties"]["code"]["enum"] and set(body) <= set(error["properties"])


def test_the_front_page_opens_with_the_overall_sentence(scenario):
    html = get(scenario, "/").text
    first = html[html.index("</h1>") : html.index("</div>", html.index("</h1>"))]
    assert 'class="banner banner-major_outage"' in first
    assert '<p class="headline"><span class="st st-major_outage">Major outage: Gamma Pay</span></p>' in first
    assert "<strong>1 service has a major outage; the other 2 are operating normally.</strong>" in first
    incident = get(scenario, "/api/v1/incidents?active=1").json()["incidents"][0]
    assert f'<a href="{incident["links"]["page"]}">' in first  # the open incident, linked


def test_index_links_the_api_and_escapes_vendor_text(scenario):
    html = get(scenario, "/").text
    assert "/api/" in html and "/feed/incidents.xml" in html
    assert "Alpha &lt;Cloud&gt; &amp; Co" in html and "<Cloud>" not in html


def generated_client(scenario, tmp_path: Path, document: str, package: str) -> tuple[Any, list[str]]:
    """The client openapi-python-client generates from the document the site serves at ``document``
    (importable as ``package``), and the generator's warnings of what it could not read."""
    import importlib
    import subprocess
    import sys

    (tmp_path / "openapi.json").write_bytes(get(scenario, document).content)
    made = subprocess.run(
        [
            str(Path(sys.executable).with_name("openapi-python-client")),
            "generate",
            "--path",
            str(tmp_path / "openapi.json"),
            "--output-path",
            str(tmp_path / package),
            "--meta",
            "none",
        ],
        capture_output=True,
        text=True,
    )
    assert (tmp_path / package / "client.py").exists(), made.stdout + made.stderr
    unread = [line for line in (made.stdout + made.stderr).splitlines() if line.startswith("WARNING parsing")]
    sys.path.insert(0, str(tmp_path))
    return importlib.import_module(f"{package}.client").Client(base_url=scenario["base"]), unread


def moments(value: Any) -> Any:
    """``value`` with each RFC 3339 time as the moment it names."""
    if isinstance(value, dict):
        return {k: moments(v) for k, v in value.items()}
    if isinstance(value, list):
        return [moments(v) for v in value]
    if isinstance(value, str) and re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(Z|\+00:00)", value):
        return datetime.fromisoformat(value.replace("Z", "+00:00"))
    return value


@pytest.fixture
def forget_generated():
    import sys

    yield
    for name in [m for m in sys.modules if m.split(".")[0] in ("statusclient", "statuspageclient")]:
        del sys.modules[name]
    sys.path[:] = [
        p for p in sys.path if not Path(p, "statusclient").exists() and not Path(p, "statuspageclient").exists()
    ]


def test_a_client_generated_from_the_served_document_reads_every_json_endpoint(scenario, tmp_path, forget_generated):
    """openapi-python-client, which many API users run, generates a client from the document the
    site serves; the client reads every JSON endpoint of v1 into its models."""
    import importlib

    client, unread = generated_client(scenario, tmp_path, "/api/v1/openapi.json", "statusclient")
    assert unread == [
        "WARNING parsing GET /feed/incidents.xml within default.",
        "WARNING parsing GET /feed/services/{slug}.xml within default.",
        "WARNING parsing GET /badges/{slug}.svg within default.",
    ]  # Atom and SVG: the generator reads no XML media type (the calendars, CSV and /metrics it reads as text)
    read = {
        name: importlib.import_module(f"statusclient.api.default.{name}")
        for name in (
            "get_snapshot",
            "list_services",
            "get_service",
            "get_service_history",
            "list_incidents",
            "get_health",
            "get_metrics",
            "get_maintenance_calendar",
            "list_reports",
            "get_report",
            "get_report_csv",
            "get_badge",
            "get_embed",
        )
    }
    snapshot = read["get_snapshot"].sync(client=client)
    assert snapshot.status.value == get(scenario, "/api/v1/snapshot").json()["status"]
    assert [s.slug for s in read["list_services"].sync(client=client).services] == ["alpha", "beta", "gamma"]
    assert read["get_service"].sync("gamma", client=client).service.slug == "gamma"
    assert read["get_service_history"].sync("beta", client=client).range_ == "24h"
    assert read["list_incidents"].sync(client=client).count >= 1
    assert read["get_health"].sync(client=client).health_index == snapshot.health_index
    assert read["get_metrics"].sync(client=client) == get(scenario, "/metrics").text
    assert read["get_maintenance_calendar"].sync(client=client).startswith("BEGIN:VCALENDAR")
    months = read["list_reports"].sync(client=client).months
    served = get(scenario, "/api/v1/reports").json()["months"]
    assert [m.month for m in months] == [m["month"] for m in served] and months
    report = read["get_report"].sync(months[0].month, client=client)
    assert [s.slug for s in report.services] == ["alpha", "beta", "gamma"]
    assert (
        report.site.availability == get(scenario, f"/api/v1/reports/{months[0].month}").json()["site"]["availability"]
    )
    csv_text = read["get_report_csv"].sync(months[0].month, client=client)
    assert csv_text == get(scenario, f"/reports/{months[0].month}.csv").text and csv_text.startswith("month,service,")
    badge = read["get_badge"].sync("gamma", client=client)
    assert (badge.label, badge.message) == ("Gamma Pay", "major outage")
    assert read["get_embed"].sync(client=client) == get(scenario, "/embed/").text


def test_a_client_generated_from_one_site_reads_another_with_other_services(scenario, tmp_path, forget_generated):
    """The client generated from this site's document (services alpha, beta and gamma) reads a
    site of other services and categories (the pinned one): a slug is a string of the slugs'
    pattern, not an enum of one site's slugs, so a client is not generated again when a service
    is added."""
    import importlib

    from statusgen import routes
    from tests.pinned import build_pinned_site

    generated_client(scenario, tmp_path, "/api/v1/openapi.json", "statusclient")  # from this site's document
    (tmp_path / "other").mkdir()
    other = build_pinned_site(tmp_path / "other").resolve()
    served = start_preview(other, per_minute=10_000)
    try:
        client = importlib.import_module("statusclient.client").Client(base_url=served.base)

        def call(name: str, *args: Any, **kw: Any) -> Any:
            return importlib.import_module(f"statusclient.api.default.{name}").sync(*args, client=client, **kw)

        slugs = [s["slug"] for s in json.loads((other / "api/v1/snapshot.json").read_bytes())["services"]]
        assert slugs and not set(slugs) & {"alpha", "beta", "gamma"}
        assert [s.slug for s in call("list_services").services] == slugs
        for slug in slugs:
            assert call("get_service", slug).service.slug == slug
            told = json.loads((other / routes.incidents_file(None, slug)).read_bytes())["incidents"]
            assert [i.id for i in call("list_incidents", service=slug).incidents] == [i["id"] for i in told], slug
            assert call("get_badge", slug).label == call("get_service", slug).service.name
        months = call("list_reports").months
        assert [s.slug for s in call("get_report", months[0].month).services] == slugs
    finally:
        served.server.shutdown()


def test_a_client_generated_from_the_statuspage_document_reads_every_v2_document(scenario, tmp_path, forget_generated):
    """The second OpenAPI document, /api/v2/openapi.json: its generated client reads each v2
    document into Statuspage's types, with the same values the files hold."""
    import importlib

    from statusgen.render.formats.statuspage_openapi import STATUSPAGE_OPERATIONS

    client, unread = generated_client(scenario, tmp_path, "/api/v2/openapi.json", "statuspageclient")
    assert unread == []
    for name, (operation, _) in STATUSPAGE_OPERATIONS.items():
        snake = re.sub(r"([A-Z])", r"_\1", operation).lower()
        module = importlib.import_module(f"statuspageclient.api.default.{snake}")
        answer = module.sync_detailed(client=client)
        assert answer.status_code == 200 and answer.parsed is not None, name
        # every field read, none lost (the client writes a time back as +00:00, the same moment)
        assert moments(answer.parsed.to_dict()) == moments(json.loads(answer.content)), name
    summary = importlib.import_module("statuspageclient.api.default.get_summary").sync(client=client)
    served = get(scenario, "/api/v2/summary.json").json()
    assert [c.status.value for c in summary.components] == [c["status"] for c in served["components"]]
    declared = [summary, summary.page, summary.status, *summary.components, *summary.incidents]
    assert [type(m).__name__ for m in declared if m.additional_properties] == []  # each field a declared one
    assert summary.status.indicator.value == served["status"]["indicator"]
