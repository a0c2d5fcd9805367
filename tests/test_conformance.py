"""One conformance suite, run against both servers of a tree: `statusgen serve`
(the preview server) and the real nginx with the configuration `statusgen
nginx-conf` writes. Each test states a rule of docs/api.md; both must keep it.

Each test speaks from client addresses of its own (the rate limit of
production stays on); see tests/conformance.py.
"""

from __future__ import annotations

import json
import re
import socket
import time
from calendar import timegm
from collections.abc import Iterator
from email.utils import formatdate, parsedate
from pathlib import Path

import feedparser
import httpx
import pytest
import requests
import schemathesis
from hypothesis import HealthCheck, given, settings
from requests.adapters import HTTPAdapter
from schemathesis import GenerationMode

from statusgen import routes
from statusgen.model import RANGES, STATUSES
from statusgen.policy import GZIP_MIN_BYTES
from statusgen.web.serve import arguments
from tests.conformance import Server, fresh_address, rewrite, scenario, served, start

CATEGORIES = ("apis", "web", "payments")
SLUGS = ("alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf")
JSON = "application/json; charset=utf-8"
HTML = "text/html; charset=utf-8"
ATOM = "application/atom+xml; charset=utf-8"
MAX_AGE = "public, max-age=15"
IDENTITY = {"Accept-Encoding": "identity"}
#: The documented limits and policies, written here so that a change in statusgen.policy shows as a
#: failure, never as a test that changes with it. docs/api.md: 120 requests a minute per address to
#: the interface (a burst of 120 answered), 1,200 to the pages, past them 429 with Retry-After (whole
#: seconds: nginx's bucket frees a slot every 0.5 s, so it says 1; the preview server says when its
#: 60 s window frees one, docs/deploy.md).
INTERFACE_PER_MINUTE = 120
PAGES_PER_MINUTE = 1200
#: docs/deploy.md, "Security headers": the pages run the site's own script and stylesheet, fetch its
#: own interface, load its own images and nothing else, and no other site frames them; every other
#: answer is read, never run as a document.
PAGE_POLICY = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; "
    "base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
)
DOCUMENT_POLICY = "default-src 'none'; frame-ancestors 'none'"


def assert_retry_after(server, r) -> None:
    """429 with Retry-After in whole seconds: 1 from nginx's leaky bucket, 1 to 60 from the preview
    server's sliding window of a minute."""
    assert r.status_code == 429 and re.fullmatch(r"[0-9]+", r.headers["retry-after"]), r.headers
    if server.kind == "nginx":
        assert r.headers["retry-after"] == "1"
    else:
        assert 1 <= int(r.headers["retry-after"]) <= 60


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    return scenario(tmp_path_factory, "conformance")


@pytest.fixture(scope="module", params=["serve", "nginx"])
def server(request, site, tmp_path_factory) -> Iterator[Server]:
    yield from served(request.param, site, tmp_path_factory.mktemp("nginx-prefix"))


@pytest.fixture
def http(server) -> Iterator[httpx.Client]:
    with server.client() as client:
        yield client


def assert_common_headers(r: httpx.Response, cache: str = MAX_AGE) -> None:
    assert r.headers["cache-control"] == cache, r.url
    assert r.headers["access-control-allow-origin"] == "*"
    exposed = {h.strip().lower() for h in r.headers["access-control-expose-headers"].split(",")}
    assert {"etag", "retry-after"} <= exposed


def assert_error(server: Server, r: httpx.Response, status: int, name: str) -> None:
    """The interface's error ``name``: its JSON body."""
    assert r.status_code == status, (r.url, r.status_code, r.text[:200])
    assert r.headers["content-type"] == JSON
    assert r.content == server.file(routes.error_file(name)), r.url
    assert r.json()["error"]["status"] == status
    assert r.headers["etag"]
    assert_common_headers(r, "no-store" if status == 429 else MAX_AGE)


def assert_page_error(server: Server, r: httpx.Response, status: int) -> None:
    """An error told to people: the HTML page of that status, in the site's layout."""
    assert r.status_code == status, (r.url, r.status_code, r.text[:200])
    assert r.headers["content-type"] == HTML
    assert r.content == server.file(routes.error_page_file(str(status))), r.url
    assert r.text.startswith("<!doctype html>") and '<a class="brand" href="/">' in r.text
    assert r.headers["etag"]
    assert_common_headers(r, "no-store" if status == 429 else MAX_AGE)


# -- every endpoint, filter and range --------------------------------------------


def endpoint_files() -> dict[str, str]:
    """Each public URL (no query) and the file of the tree it answers with."""
    files = {
        "/api/v1/snapshot": "api/v1/snapshot.json",
        "/api/v1/services": routes.services_file(),
        "/api/v1/incidents": routes.incidents_file(),
        "/api/v1/health": "api/v1/health.json",
        "/api/v1/openapi.json": "api/v1/openapi.json",
        "/feed/incidents.xml": "feed/incidents.xml",
        "/": "index.html",
    }
    for slug in SLUGS:
        files[f"/api/v1/services/{slug}"] = routes.service_file(slug)
        files[f"/api/v1/services/{slug}/history"] = routes.history_file(slug, "24h")
        files[f"/feed/services/{slug}.xml"] = routes.service_feed_file(slug)
    return files


def test_every_endpoint_answers_with_its_file(server, http):
    for url, rel in endpoint_files().items():
        r = http.get(url, headers=IDENTITY)
        assert r.status_code == 200, url
        assert r.content == server.file(rel), url
        assert r.headers["etag"] and "content-encoding" not in r.headers
        expected = ATOM if url.startswith("/feed/") else "text/html; charset=utf-8" if url == "/" else JSON
        assert r.headers["content-type"] == expected, url
        assert_common_headers(r)


def test_the_statuspage_documents_are_served_with_the_interfaces_rules(server, http):
    for rel in routes.STATUSPAGE_FILES.values():
        r = http.get("/" + rel)
        assert r.status_code == 200 and r.content == server.file(rel), rel
        assert r.headers["content-type"] == JSON and r.headers["etag"]
        assert_common_headers(r)
        again = http.get("/" + rel, headers={"If-None-Match": r.headers["etag"]})
        assert again.status_code == 304 and again.content == b"", rel
    assert_error(server, http.get("/api/v2/nothing.json"), 404, "404")


def test_the_monthly_reports_are_served_with_the_interfaces_rules(server, http):
    """The list, each month kept (with or without a trailing slash), its CSV and its page; a month
    not kept, or not a month, is the API's 404."""
    listing = http.get("/api/v1/reports", headers=IDENTITY)
    assert listing.status_code == 200 and listing.content == server.file(routes.REPORTS)
    assert listing.headers["content-type"] == JSON
    assert_common_headers(listing)
    months = [m["month"] for m in listing.json()["months"]]
    assert months
    for month in months:
        for url in (routes.report_url(month), routes.report_url(month) + "/"):
            r = http.get(url, headers=IDENTITY)
            assert r.status_code == 200 and r.content == server.file(routes.report_file(month)), url
            again = http.get(url, headers={**IDENTITY, "If-None-Match": r.headers["etag"]})
            assert again.status_code == 304, url
        table = http.get("/" + routes.report_csv_file(month), headers=IDENTITY)
        assert table.status_code == 200 and table.content == server.file(routes.report_csv_file(month))
        assert table.headers["content-type"] == "text/csv; charset=utf-8; header=present"
        page = http.get(routes.report_page_url(month))
        assert page.status_code == 200 and page.headers["content-type"] == "text/html; charset=utf-8"
    for wrong in ("1999-01", "2026-13", "2026-1", "..%2f..%2fhealth", "latest"):
        assert_error(server, http.get(f"/api/v1/reports/{wrong}"), 404, "404")


def test_metrics_are_served_as_the_text_exposition(server, http):
    r = http.get("/metrics")
    assert r.status_code == 200 and r.content == server.file("metrics")
    assert r.headers["content-type"] == "text/plain; version=0.0.4; charset=utf-8" and r.headers["etag"]
    assert_security_headers(r, page=False)


def test_an_unknown_feed_is_an_unknown_service(server, http):
    for path in ("/feed/services/nope.xml", "/feed/services/NOPE.xml", "/feed/services/a%20b.xml"):
        assert_error(server, http.get(path), 404, "404-service")
    assert http.get("/feed/services/alpha.xml").status_code == 200


def test_gzip_refused_with_q_0_is_not_sent_and_a_304_varies_too(server):
    path = "/api/v1/openapi.json"
    assert (server.site / "api/v1/openapi.json.gz").exists()  # a file with a precompressed copy
    for header, gzipped in (
        ("gzip", True),
        ("gzip;q=0", False),
        ("gzip; q=0.0, identity", False),
        ("*", False),
        ("identity, *;q=0", False),
        ("br;q=1, gzip;q=0.5", True),
    ):
        status, headers, _ = server.raw(path, headers={"Accept-Encoding": header})
        assert status == 200 and (headers.get("content-encoding") == "gzip") == gzipped, (server.kind, header)
    status, headers, _ = server.raw(path)
    status, again, _ = server.raw(path, headers={"If-None-Match": headers["etag"]})
    assert status == 304 and again["vary"] == "Accept-Encoding", (server.kind, again)


def test_the_maintenance_calendars_are_served_as_icalendar(server, http):
    for rel in (routes.CALENDAR, routes.service_calendar_file("alpha")):
        r = http.get("/" + rel)
        assert r.status_code == 200 and r.content == server.file(rel), rel
        assert r.headers["content-type"] == "text/calendar; charset=utf-8" and r.headers["etag"]
        assert r.content.startswith(b"BEGIN:VCALENDAR\r\n")
        assert_common_headers(r)


def test_only_the_embeddable_status_may_be_framed(server, http):
    for path in ("/embed/", "/embed/alpha/"):
        r = http.get(path)
        assert r.status_code == 200 and r.headers["content-type"] == HTML, path
        assert "frame-ancestors *" in r.headers["content-security-policy"], (server.kind, path)
        framed = PAGE_POLICY.replace("frame-ancestors 'none'", "frame-ancestors *")
        assert r.headers["content-security-policy"] == framed
    for path in ("/", "/services/alpha/", "/api/"):
        assert "frame-ancestors 'none'" in http.get(path).headers["content-security-policy"], path


def test_precompressed_copies_are_served_to_gzip_clients(server, http):
    for url, rel in endpoint_files().items():
        r = http.get(url, headers={"Accept-Encoding": "gzip"})
        has_gz = (server.site / (rel + ".gz")).exists()
        assert r.headers.get("content-encoding") == ("gzip" if has_gz else None), url
        assert r.content == server.file(rel), url  # httpx decodes
        if has_gz:
            assert "accept-encoding" in r.headers["vary"].lower()
            assert r.headers["etag"] != http.get(url, headers=IDENTITY).headers["etag"]  # one ETag per representation


def test_every_filter_and_pair_answers_with_its_file(server, http):
    for category in (None, *CATEGORIES):
        for status in (None, *STATUSES):
            params = {k: v for k, v in (("category", category), ("status", status)) if v}
            r = http.get("/api/v1/services", params=params)
            assert r.status_code == 200 and r.content == server.file(routes.services_file(category, status)), params
            if params:
                assert r.json()["filters"] == {"category": category, "status": status}


def test_every_history_range_answers_with_its_file(server, http):
    for slug in SLUGS:
        for name in RANGES:
            r = http.get(f"/api/v1/services/{slug}/history", params={"range": name})
            assert r.status_code == 200 and r.content == server.file(routes.history_file(slug, name))
            assert r.json()["range"] == name


def test_incidents_active_filters(server, http):
    for value, rel in (
        ("1", routes.incidents_file("1")),
        ("0", routes.incidents_file("0")),
        ("", routes.incidents_file()),
    ):
        r = http.get(f"/api/v1/incidents?active={value}")
        assert r.status_code == 200 and r.content == server.file(rel)
    open_ = http.get("/api/v1/incidents?active=1").json()["incidents"]
    assert {i["service"] for i in open_} == {"charlie", "delta", "golf"} and all(i["open"] for i in open_)
    assert [i["service"] for i in http.get("/api/v1/incidents?active=0").json()["incidents"]] == ["bravo"]


def test_incidents_of_one_service(server, http):
    for service in ("bravo", "charlie", "alpha"):
        for active in ("", "1", "0"):
            r = http.get(f"/api/v1/incidents?active={active}&service={service}")
            assert r.status_code == 200 and r.content == server.file(routes.incidents_file(active or None, service))
            listed = r.json()
            assert listed["filters"] == {"active": active or None, "service": service}
            assert all(i["service"] == service for i in listed["incidents"])
    assert [i["service"] for i in http.get("/api/v1/incidents?service=bravo").json()["incidents"]] == ["bravo"]
    assert http.get("/api/v1/incidents?service=alpha").json()["incidents"] == []
    assert http.get("/api/v1/incidents?service=").content == server.file(routes.incidents_file())
    link = http.get("/api/v1/services/charlie").json()["service"]["links"]["incidents"]
    assert http.get(link).json()["filters"]["service"] == "charlie"


def test_the_operators_words_are_served_by_both_servers(server, http):
    """A manual incident, a note on a closed incident and a planned maintenance (docs/notes.md),
    in the JSON, the feeds and the pages, as written."""
    [manual] = [i for i in http.get("/api/v1/incidents?service=delta").json()["incidents"] if i["source"] == "operator"]
    assert (manual["id"], manual["open"], manual["title"]) == (
        "delta-operator-delta-cdn",
        True,
        "Delta Web: CDN slow in Asia",
    )
    assert manual["updates"][0]["message"] == "Readers in **Asia** see slow pages."  # Markdown source
    [bravo] = http.get("/api/v1/incidents?service=bravo").json()["incidents"]
    note = bravo["updates"][-1]
    assert (note["kind"], note["ref"], bravo["updated_at"]) == ("note", "bravo-note.md", note["at"])
    assert bravo["source"] == "checks" and not bravo["open"]
    told = http.get("/api/v1/services/alpha").json()["service"]["upcoming_maintenance"]
    assert [(m["source"], m["title"], m["message"]) for m in told] == [
        ("operator", "Moving racks", "Expect *one* minute of errors.")
    ]
    assert told[0] in http.get("/api/v1/snapshot").json()["upcoming_maintenance"]
    feed = feedparser.parse(http.get("/feed/services/bravo.xml").content)
    assert [e.updated for e in feed.entries] == [note["at"]]  # the entry's updated moved to the note
    assert "<strong>database</strong>" in feed.entries[0].content[0].value
    alpha = feedparser.parse(http.get("/feed/services/alpha.xml").content)
    [entry] = [e for e in alpha.entries if ":maintenance/operator/alpha-move" in e.id]
    assert "<em>one</em>" in entry.content[0].value and entry.title == "Maintenance: Moving racks (Alpha API)"
    page = http.get("/services/bravo/incidents/").text
    assert "<strong>database</strong>" in page and "<script>alert" not in page and 'href="javascript' not in page
    assert '&lt;script&gt;alert(1)&lt;/script&gt; <a href=""' in page  # shown as the text it is; the link's gone
    assert "javascript" not in page
    front = http.get("/").text
    assert "Moving racks" in front and "<em>one</em>" in front


def test_the_scenario_has_every_status(server, http):
    listed = {s["slug"]: s["status"] for s in http.get("/api/v1/snapshot").json()["services"]}
    assert set(listed.values()) == set(STATUSES), listed


def test_parameters_in_any_order_unknown_ignored_empty_absent_first_counts(server, http):
    pair = server.file(routes.services_file("web", "major_outage"))
    same = [
        "?category=web&status=major_outage",
        "?status=major_outage&category=web",
        "?utm_source=x&status=major_outage&foo=&category=web",
        "?category=web&status=major_outage&category=bogus",
        "?status=major_outage&category=web&STATUS=bogus&Category=bogus",
        "?xcategory=bogus&category=web&status=major_outage",
    ]
    for query in same:
        r = http.get("/api/v1/services" + query)
        assert r.status_code == 200 and r.content == pair, query
    assert http.get("/api/v1/services?category=&status=").content == server.file(routes.services_file())
    assert http.get("/api/v1/services?category=&status=unknown").content == server.file(
        routes.services_file(None, "unknown")
    )
    assert http.get("/api/v1/services?category").content == server.file(routes.services_file())
    assert http.get("/api/v1/services/alpha/history?range=").content == server.file(routes.history_file("alpha", "24h"))
    assert http.get("/api/v1/snapshot?category=bogus&range=bogus").content == server.file("api/v1/snapshot.json")


def test_a_trailing_slash_names_the_same_resource(server, http):
    for url in ("/api/v1/snapshot/", "/api/v1/services/", "/api/v1/services/alpha/", "/api/v1/incidents/"):
        assert http.get(url).content == http.get(url.rstrip("/")).content, url


# -- invalid values, unknown slugs, unknown paths ----------------------------------

INVALID = [
    ("/api/v1/services?category=space", 400, "400-category"),
    ("/api/v1/services?category=APIS", 400, "400-category"),  # values are case-sensitive
    ("/api/v1/services?category=_all", 400, "400-category"),
    ("/api/v1/services?category=..%2F..%2Fetc", 400, "400-category"),
    ("/api/v1/services?status=fine", 400, "400-status"),
    ("/api/v1/services?status=_all&category=web", 400, "400-status"),
    ("/api/v1/services?status=fine&category=space", 400, "400-category"),  # category is checked first
    ("/api/v1/services/alpha/history?range=1y", 400, "400-range"),
    ("/api/v1/services/alpha/history?range=24H", 400, "400-range"),
    ("/api/v1/services/alpha/history?range=../24h", 400, "400-range"),
    ("/api/v1/incidents?active=yes", 400, "400-active"),
    ("/api/v1/incidents?active=01", 400, "400-active"),
    ("/api/v1/incidents?active=2&service=nope", 400, "400-active"),  # active is checked first
    ("/api/v1/incidents?service=nope", 404, "404-service"),
    ("/api/v1/incidents?service=Alpha", 404, "404-service"),
    ("/api/v1/incidents?service=..%2Falpha", 404, "404-service"),
    ("/api/v1/incidents?service=alpha%0A", 404, "404-service"),
    ("/api/v1/services/nope", 404, "404-service"),
    ("/api/v1/services/Alpha", 404, "404-service"),
    ("/api/v1/services/alpha.json", 404, "404-service"),
    ("/api/v1/services/_filter", 404, "404-service"),
    ("/api/v1/services/nope/history", 404, "404-service"),
    ("/api/v1/services/nope/history?range=1y", 404, "404-service"),  # the slug before the range
    ("/api/v1/services/-alpha/history", 404, "404-service"),
    ("/api/v1/nothing-here", 404, "404"),
    ("/api/v2/snapshot", 404, "404"),
    ("/api/v1", 404, "404"),
    ("/api/v1/", 404, "404"),
    ("/api/v1/services/_filter/", 404, "404-service"),
    ("/api/v1/services/alpha/history/1y.json", 404, "404"),
    ("/feed/services/nope.xml", 404, "404-service"),
    ("/feed/", 404, "404"),
    ("/feed/nothing", 404, "404"),
    ("/api/index.html/x", 404, "404"),
]
#: Paths of no page: a browser is told so in an HTML page.
MISSING_PAGES = ["/nothing.html", "/services/nope/", "/services/nope", "/incidents/nope/", "/feed", "/x/y/z"]


def test_invalid_values_unknown_slugs_and_paths_get_their_error_file(server, http):
    for url, status, name in INVALID:
        assert_error(server, http.get(url), status, name)
        head = http.head(url)
        assert head.status_code == status and head.content == b"" and head.headers["etag"]


def test_a_missing_page_is_an_html_page_in_the_sites_layout(server, http):
    for url in MISSING_PAGES:
        r = http.get(url, follow_redirects=True)
        assert_page_error(server, r, 404)
        assert "Page not found" in r.text and 'href="/static/site.css"' in r.text
        head = http.head(url, follow_redirects=True)
        assert head.status_code == 404 and head.content == b"" and head.headers["etag"]
    assert http.get("/api/", follow_redirects=False).content == server.file("api/index.html")  # the API's page


def test_the_favicon_is_where_browsers_look(server, http):
    r = http.get("/favicon.ico")
    assert r.status_code == 200 and r.headers["content-type"] == "image/x-icon"
    assert r.content == server.file("favicon.ico") and r.content[:4] == b"\x00\x00\x01\x00"  # an ICO file


def test_allowed_values_are_listed_in_400s(server, http):
    assert http.get("/api/v1/services?category=x").json()["error"]["allowed"] == list(CATEGORIES)
    assert http.get("/api/v1/services?status=x").json()["error"]["allowed"] == list(STATUSES)
    assert http.get("/api/v1/services/alpha/history?range=x").json()["error"]["allowed"] == list(RANGES)
    assert http.get("/api/v1/incidents?active=x").json()["error"]["allowed"] == ["0", "1"]


#: Paths that try to leave the tree or read its private files. nginx refuses many of them
#: before it reads the path: those are answered by how they begin, JSON under /api/ and /feed/.
TRAVERSAL = [
    "/../../../etc/passwd",
    "/%2e%2e/%2e%2e/etc/passwd",
    "/%2E%2E%2F%2E%2E%2Fetc%2Fpasswd",
    "/api/v1/services/..%2f..%2f..%2fetc%2fpasswd",  # /etc/passwd: not under /api/ once read
    "//etc/passwd",
    "/.manifest.json",
    "/_errors/404.json",
    "/_errors/404.html",
    "/_errors/429.json",
    "/%",
    "/..",
    "/../",
    "/..%5c..%5cetc%5cpasswd",
    "*",
    "/guide%0d%0aSet-Cookie:%20a=b",
    "/%0d%0aX-Injected:%201",
]


TRAVERSAL_OF_THE_INTERFACE = [
    "/api/v1/services/..%2f..%2f..%2f..%2fetc%2fpasswd",  # above the root: refused, by how it begins
    "/api/v1/services/alpha/../../../../../etc/passwd",
    "/feed/..%2f..%2f.manifest.json",
    "/api/v1/services/%00",
    "/api/v1/%00/snapshot",
    "/api/v1/.manifest.json",
    "/api/v1/services/alpha/../../.manifest.json",
    "/feed/../api/v1/.x",
    "/api/v1/services/_filter/../../../v1/.x",
]


def test_no_path_reaches_outside_the_tree_or_its_private_files(server):
    for paths, file, ctype in (
        (TRAVERSAL, routes.error_page_file("404"), HTML),
        (TRAVERSAL_OF_THE_INTERFACE, routes.error_file("404"), JSON),
    ):
        for path in paths:
            status, headers, body = server.raw(path)
            assert (status, body) == (404, server.file(file)), (path, status, body[:100])
            assert headers["content-type"] == ctype and headers["etag"]
            assert "set-cookie" not in headers and "x-injected" not in headers


def test_raw_query_values_never_reach_a_path(server):
    for query, name in (
        ("category=..%2f..%2f..%2fetc%2fpasswd", "400-category"),
        ("status=../../x", "400-status"),
        ("category=apis%00", "400-category"),
        ("status=%2e%2e", "400-status"),
    ):
        status, _, body = server.raw(f"/api/v1/services?{query}")
        assert (status, body) == (400, server.file(routes.error_file(name))), query
    status, _, body = server.raw("/api/v1/services/alpha/history?range=..%2F..%2F..%2Fsnapshot")
    assert (status, body) == (400, server.file(routes.error_file("400-range")))


# -- security headers ------------------------------------------------------------


def assert_security_headers(r: httpx.Response, page: bool) -> None:
    """A page's policy runs the site's own script and stylesheet; any other answer runs nothing."""
    assert r.headers["content-security-policy"] == (PAGE_POLICY if page else DOCUMENT_POLICY), r.url
    assert r.headers["referrer-policy"] == "no-referrer" and r.headers["x-content-type-options"] == "nosniff"


def test_every_answer_carries_the_security_headers(server, http):
    for url, page in (("/", True), ("/services/alpha/", True), ("/api/", True), ("/nothing-here", True)):
        assert_security_headers(http.get(url), page)
    for url in (
        "/api/v1/snapshot",
        "/feed/incidents.xml",
        "/static/site.css",
        "/api/v1/services/nope",
        "/services/alpha",
    ):
        assert_security_headers(http.get(url, follow_redirects=False), page=False)
    etag = http.get("/").headers["etag"]
    assert_security_headers(http.get("/", headers={"If-None-Match": etag}), page=True)  # a 304 keeps the page's
    status, headers, _ = server.raw("/", "POST")
    assert status == 405 and headers["content-security-policy"] == DOCUMENT_POLICY
    assert "'unsafe-inline'" not in PAGE_POLICY and "frame-ancestors 'none'" in PAGE_POLICY


def wire(server: Server, request: bytes) -> tuple[int, dict[str, str], bytes]:
    """The status, headers and body of the answer to bytes sent as they are (what no client
    library sends), from an address of its own (each test's requests count apart)."""
    with socket.create_connection(("127.0.0.1", server.port), timeout=10, source_address=(fresh_address(), 0)) as sock:
        sock.sendall(request)
        received = b""
        while b"\r\n\r\n" not in received or len(received.split(b"\r\n\r\n", 1)[1]) < length(received):
            piece = sock.recv(65536)
            if not piece:
                break
            received += piece
    head, _, body = received.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    headers = dict(line.split(": ", 1) for line in lines[1:] if ": " in line)
    return int(lines[0].split()[1]), {k.lower(): v for k, v in headers.items()}, body


def length(received: bytes) -> int:
    """The Content-Length of an answer whose head has arrived."""
    found = re.search(rb"\r\ncontent-length: *([0-9]+)", received.split(b"\r\n\r\n", 1)[0], re.IGNORECASE)
    return int(found.group(1)) if found else 0


def get_bytes(target: bytes, headers: bytes = b"") -> bytes:
    """A GET of ``target`` as it is, the connection's last request."""
    return b"GET " + target + b" HTTP/1.1\r\nHost: x\r\nConnection: close\r\n" + headers + b"\r\n"


def assert_refused(server: Server, answer: tuple[int, dict[str, str], bytes], status: int, interface: bool) -> None:
    """A request refused before its path is read: the interface's JSON body of ``status``, or the
    page for people; with the headers of every answer."""
    got, headers, body = answer
    assert got == status, (server.kind, got, body[:80])
    assert headers["content-type"] == (JSON if interface else HTML) and headers["etag"], (server.kind, headers)
    assert body == server.file(routes.error_file(str(status)) if interface else routes.error_page_file("404"))
    assert headers["content-security-policy"] == (DOCUMENT_POLICY if interface else PAGE_POLICY)
    assert headers["x-content-type-options"] == "nosniff" and headers["referrer-policy"] == "no-referrer"
    assert headers["access-control-allow-origin"] == "*" and headers["cache-control"] == MAX_AGE
    if interface:
        assert json.loads(body)["error"]["status"] == status


#: Targets under /api/ and /feed/ with odd bytes in their path: a percent-decoded NUL, a bad
#: escape, invalid UTF-8, an escaped slash, control characters and spaces sent raw, a line feed
#: last, a path that climbs above the root, segments past a file name's length. Each is the interface's JSON 404,
#: whether the server reads the path or refuses it first.
ODD_INTERFACE_TARGETS = [
    b"/api/v1/reports/2026-11%00",
    b"/api/v1/reports/2026-11%ff",
    b"/api/v1/reports/2026-11%ff%fe",
    b"/api/v1/reports/%c0%af",
    b"/api/v1/reports/2026%2F11",
    b"/api/v1/reports/2026-11%0d%0a",
    b"/api/v1/reports/2026-11%0a",  # a decoded line feed last: nginx's $ would match before it
    b"/api/v1/reports/%0a",
    b"/api/v1/snapshot%0a",
    b"/feed/services/alpha.xml%0a",
    b"/api/v1/services/%00",
    b"/api/%00",
    b"/api/v1/%zz",
    b"/api/v1/snapshot%",
    b"/api/v1/snapshot%2",
    b"/api/v1/\x01",
    b"/api/v1/snapshot?\x7f",
    b"/api/v1/\xff\xfe",
    b"/api/v1/\xa0x",
    b"/api/v1/a b",
    b"/api/../../etc/passwd",
    b"//api//v1/%00",
    b"http://status.example.org/api/v1/%00",
    b"/api/v1/reports/" + b"a" * 300,
    b"/api/" + b"b/" * 3000,
    b"/feed/%00",
    b"/feed/services/%00.xml",
]
#: The same bytes elsewhere: the page for people. /api/ itself is the API's page.
ODD_PAGE_TARGETS = [
    b"/%00",
    b"/services/%00/",
    b"/x/%zz",
    b"/x/\x01",
    b"/api/?\x01",
    b"/%61pi/v1/%00",
    b"/feed%00",
    b"/incidents/alpha-20260101t000000.html%0a",
    b"*",
]


def test_every_404_under_the_interface_is_json_whatever_the_bytes_of_its_path(server):
    for targets, interface in ((ODD_INTERFACE_TARGETS, True), (ODD_PAGE_TARGETS, False)):
        for target in targets:
            assert_refused(server, wire(server, get_bytes(target)), 404, interface)
    status, headers, body = wire(server, get_bytes(b"/api/v1/reports/2026-11%00").replace(b"GET", b"HEAD", 1))
    assert (status, body, headers["content-type"]) == (404, b"", JSON)


def headers_of(*sizes: int) -> bytes:
    """Header lines of these sizes in bytes, each with its CRLF."""
    return b"".join(b"X-%05d: " % n + b"a" * (size - 11) + b"\r\n" for n, size in enumerate(sizes))


def test_a_request_past_what_the_servers_read_is_refused_alike(server):
    """Both servers read a request's line and headers as nginx does: a line of at most 8 KB (with
    its CRLF), the head in four buffers of 8 KB, each line whole in one (so five header lines of
    just over 4 KB do not fit where four do). Past them a request is refused before its path is
    read: 414 for the request line, 431 for the headers, and another HTTP version 505, each with
    the interface's JSON body under /api/ and the page for people elsewhere."""
    line = b" HTTP/1.1\r\n"

    def target(prefix: bytes, size: int) -> bytes:  # of a request line of ``size`` bytes
        return prefix + b"a" * (size - len(b"GET ") - len(prefix) - len(line))

    for prefix, interface in ((b"/api/v1/", True), (b"/", False)):
        assert_refused(server, wire(server, get_bytes(target(prefix, 8192))), 404, interface)  # read: no such file
        assert_refused(server, wire(server, get_bytes(target(prefix, 8193))), 414, interface)
        assert_refused(server, wire(server, get_bytes(target(prefix, 70_000))), 414, interface)
    for path, interface in ((b"/api/v1/snapshot", True), (b"/", False)):
        for fits, refused in (((8192,), (8193,)), ((1000,) * 30, (1000,) * 33), ((4100,) * 4, (4100,) * 5)):
            assert wire(server, get_bytes(path, headers_of(*fits)))[0] == 200, (server.kind, len(fits))
            assert_refused(server, wire(server, get_bytes(path, headers_of(*refused))), 431, interface)
        assert_refused(server, wire(server, b"GET " + path + b" HTTP/2.0\r\nHost: x\r\n\r\n"), 505, interface)


def test_a_path_segment_longer_than_a_file_name_is_not_found(server, http):
    """Past the 255 bytes a file name may have, a segment names no file: 404, with its headers."""
    long = "a" * 300
    for path, page in ((f"/{long}", True), (f"/services/{long}/", True), (f"/static/{long}.css", True)):
        r = http.get(path)
        assert r.status_code == 404, (path, r.status_code)
        assert_security_headers(r, page)
    r = http.get(f"/api/v1/services/{long}")
    assert r.status_code == 404 and r.headers["content-type"] == JSON


def test_query_names_and_values_are_read_as_written(server, http):
    """Both servers read a parameter as nginx's $arg_NAME does: its name as written, neither name
    nor value percent-decoded."""
    every = server.file(routes.services_file())
    assert http.get("/api/v1/services?%73tatus=bogus").content == every
    assert http.get("/api/v1/services?STATUS=bogus").content == every
    r = http.get("/api/v1/services?status=%6Dajor_outage")
    assert r.status_code == 400 and r.content == server.file(routes.error_file("400-status"))


# -- methods -------------------------------------------------------------------


def test_methods_other_than_get_and_head_are_405_with_allow(server):
    body = server.file(routes.error_file("405"))
    for method in ("POST", "PUT", "DELETE", "PATCH", "OPTIONS", "TRACE", "PROPFIND", "BREW"):  # OPTIONS: no preflight
        for path in ("/api/v1/snapshot", "/api/v1/services?category=bad", "/nothing-here", "/"):
            status, headers, got = server.raw(path, method)
            assert (status, got) == (405, body), (method, path, status)
            assert headers["allow"] == "GET, HEAD" and headers["etag"]
            assert headers["cache-control"] == MAX_AGE and headers["access-control-allow-origin"] == "*"


def test_a_cors_preflight_is_answered_so_another_origin_may_revalidate(server):
    """A script on another origin that revalidates (If-None-Match) is preflighted first: both
    servers answer 204 with what it may send; an OPTIONS that is no preflight stays 405."""
    asking = {
        "Origin": "http://127.0.0.9:8000",
        "Access-Control-Request-Method": "GET",
        "Access-Control-Request-Headers": "if-none-match",
    }
    for path in ("/api/v1/snapshot", "/api/v2/summary.json", "/feed/incidents.xml", "/"):
        status, headers, body = server.raw(path, "OPTIONS", headers=asking)
        assert (status, body) == (204, b""), (server.kind, path, status)
        assert headers["access-control-allow-origin"] == "*"
        assert headers["access-control-allow-methods"] == "GET, HEAD"
        assert "if-none-match" in headers["access-control-allow-headers"].lower()
        assert int(headers["access-control-max-age"]) > 0
    for asked in (
        {"Origin": "http://x"},
        {"Access-Control-Request-Method": "GET"},
        {"Origin": "http://x", "Access-Control-Request-Method": "POST"},
    ):
        status, headers, _ = server.raw("/api/v1/snapshot", "OPTIONS", headers=asked)
        assert status == 405 and "access-control-allow-methods" not in headers, (server.kind, asked)
    status, headers, _ = server.raw("/api/v1/snapshot")
    assert status == 200 and "access-control-allow-methods" not in headers  # only a preflight says it


def test_head_is_get_without_a_body(server, http):
    for url in ("/api/v1/snapshot", "/api/v1/services?status=degraded", "/feed/incidents.xml", "/"):
        get, head = http.get(url), http.head(url)
        assert head.status_code == 200 and head.content == b""
        for name in ("etag", "content-type", "content-length", "cache-control"):
            assert head.headers[name] == get.headers[name], (url, name)


# -- ETag and 304 --------------------------------------------------------------

CACHED = [
    "/api/v1/snapshot",
    "/api/v1/services?category=web&status=major_outage",
    "/api/v1/services/golf",
    "/api/v1/services/bravo/history?range=7d",
    "/api/v1/incidents?active=0",
    "/feed/incidents.xml",
    "/",
]


def test_if_none_match_gives_304_without_a_body(server, http):
    for url in CACHED:
        for headers in (IDENTITY, {"Accept-Encoding": "gzip"}):
            etag = http.get(url, headers=headers).headers["etag"]
            for header in (etag, f'"other", {etag}', f"W/{etag}", "*"):
                r = http.get(url, headers={**headers, "If-None-Match": header})
                assert r.status_code == 304 and r.content == b"", (url, header)
                assert r.headers["etag"] == etag
                assert_common_headers(r)
            r = http.get(url, headers={**headers, "If-None-Match": '"stale"'})
            assert r.status_code == 200 and r.content
    other = http.get("/api/v1/health").headers["etag"]
    assert http.get("/api/v1/snapshot", headers={"If-None-Match": other}).status_code == 200


#: A file of every kind the tree holds, and the error files.
EVERY_KIND = [
    "/api/v1/snapshot",
    "/api/v1/services/alpha/history",  # a JSON document with a .gz copy
    "/api/v1/incidents?active=1",  # a small one
    "/api/v1/openapi.json",
    "/api/v2/summary.json",
    "/feed/incidents.xml",
    "/feed/services/alpha.xml",
    "/feed/maintenance.ics",
    "/feed/services/echo.ics",
    "/metrics",
    "/api/v1/reports",
    "/api/v1/reports/{month}",
    "/reports/{month}.csv",
    "/badges/alpha.json",
    "/badges/alpha.svg",
    "/",
    "/services/alpha/",
    "/api/",
    "/embed/alpha/",
    "/static/site.css",
    "/static/site.js",
    "/static/icon.svg",
    "/favicon.ico",
    "/api/v1/services/nope",  # the interface's 404
    "/api/v1/services?status=nope",  # its 400
    "/nope/",  # the page for people's 404
]
#: Headers the servers send differently by design (docs/deploy.md, "Where nginx and statusgen
#: serve differ"): their names, nginx's byte ranges, the connection's handling; and the ETag's
#: value, a hash of the bytes from one and the mtime and size from the other (both change exactly
#: with the bytes).
APART = {"date", "server", "connection", "keep-alive", "accept-ranges"}


@pytest.fixture(scope="module")
def both(site, tmp_path_factory) -> Iterator[dict[str, Server]]:
    """Both servers at once, on the same tree."""
    preview, nginx = (start(kind, site, tmp_path_factory.mktemp("both-nginx")) for kind in ("serve", "nginx"))
    yield {"serve": preview, "nginx": nginx}
    preview.stop()
    nginx.stop()


def validators_asked(first: dict[str, str]) -> dict[str, dict[str, str]]:
    """Conditional requests, made of what a first answer said (its own ETag and Last-Modified)."""
    etag, dated = first.get("etag", '"none"'), first.get("last-modified", "Thu, 01 Jan 1970 00:00:00 GMT")
    later = formatdate(timegm(parsedate(dated) or (1970, 1, 1, 0, 0, 0, 0, 1, 0)) + 86400, usegmt=True)
    return {
        "none": {},
        "gzip": {"Accept-Encoding": "gzip"},
        "etag": {"If-None-Match": etag},
        "date": {"If-Modified-Since": dated},
        "older date": {"If-Modified-Since": "Thu, 01 Jan 1970 00:00:00 GMT"},
        "later date": {"If-Modified-Since": later},
        "no date": {"If-Modified-Since": "yesterday"},
        "asctime date": {"If-Modified-Since": time.asctime(time.gmtime(timegm(parsedate(dated) or (1970,) * 9)))},
        "etag and date": {"If-None-Match": etag, "If-Modified-Since": dated},
        "etag, older date": {"If-None-Match": etag, "If-Modified-Since": "Thu, 01 Jan 1970 00:00:00 GMT"},
        "other etag, date": {"If-None-Match": '"other"', "If-Modified-Since": dated},
        "gzip, etag and date": {"Accept-Encoding": "gzip", "If-None-Match": etag, "If-Modified-Since": dated},
    }


def answered_file(site: Path, url: str) -> Path:
    """The file of the tree a URL is answered with (its body, an error's too)."""
    path, _, query = url.partition("?")
    found = routes.resolve(path, arguments(query), lambda rel: (site / rel).is_file())
    return site / found.file


def test_both_servers_send_the_same_headers_for_every_kind_of_file(both, site):
    """Every header but those sent apart by design, the validators included: Last-Modified the
    file's mtime on a 200 and a 304 (no error is dated), Vary for a file with a .gz copy (its 304
    too); and the same answer to each conditional request: If-None-Match and If-Modified-Since
    read alike."""
    month = json.loads((site / routes.REPORTS).read_bytes())["months"][0]["month"]
    for url in (u.replace("{month}", month) for u in EVERY_KIND):
        file = answered_file(site, url)
        dated = formatdate(int(file.stat().st_mtime), usegmt=True)
        has_gz = file.with_name(file.name + ".gz").exists()
        firsts = {kind: s.raw(url, headers={"Accept-Encoding": "gzip"})[1] for kind, s in both.items()}
        asked = {kind: validators_asked(first) for kind, first in firsts.items()}
        for case in asked["serve"]:
            answers = {kind: s.raw(url, headers=asked[kind][case]) for kind, s in both.items()}
            (status, headers, body), (nginx_status, nginx, nginx_body) = answers["serve"], answers["nginx"]
            assert (status, body) == (nginx_status, nginx_body), (url, case, status, nginx_status)
            mine = {k: v for k, v in headers.items() if k not in APART | {"etag"}}
            assert mine == {k: v for k, v in nginx.items() if k not in APART | {"etag"}}, (url, case)
            assert "etag" in headers and "etag" in nginx, (url, case)
            assert headers.get("last-modified") == (dated if status in (200, 304) else None), (url, case)
            assert headers.get("vary") == ("Accept-Encoding" if has_gz else None), (url, case)


def test_if_modified_since_its_last_modified_gives_304(server, http):
    """Last-Modified is the file's mtime; If-Modified-Since of that very date is 304 (nginx's
    ``if_modified_since exact``), any other date, or one that cannot be read, the file."""
    for url in CACHED:
        first = http.get(url, headers=IDENTITY)
        dated = first.headers["last-modified"]
        assert dated == formatdate(int(answered_file(server.site, url).stat().st_mtime), usegmt=True), url
        r = http.get(url, headers={**IDENTITY, "If-Modified-Since": dated})
        assert r.status_code == 304 and r.content == b"", (server.kind, url)
        assert (r.headers["etag"], r.headers["last-modified"]) == (first.headers["etag"], dated)
        assert_common_headers(r)
        for other in ("Thu, 01 Jan 1970 00:00:00 GMT", "Fri, 01 Jan 2100 00:00:00 GMT", "yesterday"):
            assert http.get(url, headers={**IDENTITY, "If-Modified-Since": other}).status_code == 200, (url, other)
    missing = http.get("/api/v1/services/nope", headers={"If-Modified-Since": dated})
    assert missing.status_code == 404 and "last-modified" not in missing.headers


def test_errors_are_never_304(server, http):
    etag = http.get("/api/v1/services/nope").headers["etag"]
    r = http.get("/api/v1/services/nope", headers={"If-None-Match": etag})
    assert r.status_code == 404 and r.content == server.file(routes.error_file("404-service"))


def same_size_variant(data: bytes) -> bytes:
    """``data`` with the last digit of its as_of changed: same size, still valid JSON."""
    match = re.search(rb'"as_of":"[^"]*(\d)Z"', data)
    assert match
    digit = str((int(match.group(1)) + 1) % 10).encode()
    return data[: match.start(1)] + digit + data[match.end(1) :]


def test_a_change_of_the_same_size_within_one_second_changes_the_etag(server, http):
    rel, url = routes.history_file("alpha", "24h"), "/api/v1/services/alpha/history"
    original = server.file(rel)
    assert len(original) >= GZIP_MIN_BYTES, "a file with a .gz copy, so that both representations are seen"
    kept = http.get("/api/v1/snapshot").headers["etag"]
    seen: list[tuple[str, str]] = []
    try:
        for _ in range(2):  # two rewrites in a row: within one second
            variant = same_size_variant(server.file(rel))
            before = http.get(url, headers=IDENTITY).headers["etag"], http.get(url).headers["etag"]
            rewrite(server.site, {rel: variant})
            plain, gz = http.get(url, headers=IDENTITY), http.get(url, headers={"Accept-Encoding": "gzip"})
            assert plain.content == variant and gz.content == variant and len(variant) == len(original)
            assert gz.headers["content-encoding"] == "gzip"  # the .gz copy moved with it
            assert plain.headers["etag"] != before[0] and gz.headers["etag"] != before[1]
            stale = http.get(url, headers={**IDENTITY, "If-None-Match": before[0]})
            assert stale.status_code == 200 and stale.content == variant
            seen.append((plain.headers["etag"], gz.headers["etag"]))
        assert len(set(seen)) == 2
        assert http.get("/api/v1/snapshot").headers["etag"] == kept  # unchanged files keep theirs
    finally:
        rewrite(server.site, {rel: original})
    assert http.get(url, headers=IDENTITY).content == original


def test_directories_are_their_index_never_a_listing(server, http):
    try:
        rewrite(server.site, {"guide/index.html": b"<!doctype html><title>guide</title>\n"})
        r = http.get("/guide", follow_redirects=False)
        assert r.status_code == 301 and r.headers["location"] == "/guide/"
        page = http.get("/guide/")
        assert page.status_code == 200 and page.content.startswith(b"<!doctype html>")
        assert page.headers["content-type"] == "text/html; charset=utf-8"
        assert_error(server, http.get("/feed/services/"), 404, "404")
        assert_error(server, http.get("/feed/services"), 404, "404")
    finally:
        rewrite(server.site, {"guide/index.html": None})
    assert_page_error(server, http.get("/guide/"), 404)


def test_an_incidents_page_of_earlier_versions_is_sent_on_to_where_it_is_told(server, http):
    """Incidents once had a page each (/incidents/{id}.html); links to them live on in feed
    readers and chats, so each goes on to its part of its service's incidents page."""
    incidents = http.get("/api/v1/incidents").json()["incidents"]
    assert incidents
    for incident in incidents[:3]:
        r = http.get(f"/incidents/{incident['id']}.html", follow_redirects=False)
        assert r.status_code == 301 and r.headers["location"] == incident["links"]["page"], r.headers
        assert_common_headers(r)
        page = http.get(incident["links"]["page"])
        assert page.status_code == 200 and f'id="{routes.incident_anchor(incident["id"])}"' in page.text
    assert_page_error(server, http.get("/incidents/nosuch-20250101t000000.html", follow_redirects=False), 404)
    assert_page_error(server, http.get("/incidents/alpha.html", follow_redirects=False), 404)


# -- rate limit ----------------------------------------------------------------


def test_rate_limit_answers_a_burst_of_120_then_429_with_retry_after(server):
    first = fresh_address()
    with server.client(first) as client:
        started = time.monotonic()
        codes = [client.get("/api/v1/health").status_code for _ in range(INTERFACE_PER_MINUTE)]
        assert codes == [200] * INTERFACE_PER_MINUTE
        extra = 0  # nginx's bucket lets one more through every 0.5 s
        while (r := client.get("/api/v1/health")).status_code == 200:
            extra += 1
            assert extra <= 2 * (time.monotonic() - started) + 1
        assert_error(server, r, 429, "429")
        assert_retry_after(server, r)
        for url in ("/api/v1/services?category=bad", "/feed/incidents.xml", "/api/v1/services/nope", "/feed/x"):
            assert_error(server, client.get(url), 429, "429")  # the whole interface is refused to it
        status, headers, _ = server.raw("/", "POST", address=first)
        assert status == 429 and headers["retry-after"]  # 405, a JSON answer, counts as the interface's
    with server.client() as second:  # another client is still served
        assert second.get("/api/v1/health").status_code == 200
    with server.client(first) as again:
        assert again.get("/api/v1/snapshot").status_code == 429


def test_past_the_interfaces_limit_a_browser_still_gets_every_page(server):
    """Pages are for people and count apart: a client that used up the interface's limit (130
    requests) still reads the pages, their files and the API's page, and gets the HTML 404."""
    address = fresh_address()
    with server.client(address) as client:
        codes = [client.get("/api/v1/snapshot").status_code for _ in range(130)]
        assert codes[:120] == [200] * 120 and 429 in codes[120:]
        for url, rel in (
            ("/", "index.html"),
            ("/services/alpha/", "services/alpha/index.html"),
            ("/static/site.css", "static/site.css"),
            ("/static/site.js", "static/site.js"),
            ("/favicon.ico", "favicon.ico"),
            ("/api/", "api/index.html"),
        ):
            r = client.get(url)
            assert r.status_code == 200 and r.content == server.file(rel), url
        assert r.headers["content-type"] == HTML
        assert_page_error(server, client.get("/services/nope/"), 404)


def test_pages_have_a_generous_limit_of_their_own_then_an_html_429(server):
    address = fresh_address()
    with server.client(address) as client:
        started = time.monotonic()
        codes = [client.get("/static/site.css").status_code for _ in range(PAGES_PER_MINUTE)]
        assert codes == [200] * PAGES_PER_MINUTE
        extra, rate = 0, PAGES_PER_MINUTE / 60  # nginx's bucket lets more through as it drains
        while (r := client.get("/")).status_code == 200:
            extra += 1
            assert extra <= rate * (time.monotonic() - started) + 1
        assert_page_error(server, r, 429)
        assert_retry_after(server, r)
        assert "Too many requests" in r.text
        assert client.get("/api/v1/health").status_code == 200  # the interface counts apart


def test_a_burst_of_120_at_once_is_answered(server):
    from concurrent.futures import ThreadPoolExecutor

    address = fresh_address()

    def one(_: int) -> int:
        status, _, _ = server.raw("/api/v1/snapshot", address=address)
        return status

    with ThreadPoolExecutor(24) as pool:
        codes = list(pool.map(one, range(120)))
    assert codes == [200] * 120


# -- the OpenAPI document, by schemathesis ----------------------------------------


class SourceAddress(HTTPAdapter):
    """A requests adapter whose connections come from one loopback address."""

    def __init__(self, address: str) -> None:
        self.address = address
        super().__init__()

    def init_poolmanager(self, *args, **kwargs) -> None:
        kwargs["source_address"] = (self.address, 0)
        super().init_poolmanager(*args, **kwargs)


def session_from(address: str) -> requests.Session:
    session = requests.Session()
    session.mount("http://", SourceAddress(address))
    return session


def fuzz(operation, mode: GenerationMode, base: str, session: requests.Session) -> None:
    """Schemathesis cases of one operation, each sent and checked against the document."""

    @settings(max_examples=25, deadline=None, database=None, derandomize=True, suppress_health_check=list(HealthCheck))
    @given(case=operation.as_strategy(generation_mode=mode))
    def check(case) -> None:
        case.call_and_validate(base_url=base, session=session)

    check()


@pytest.mark.parametrize("document", ["api/v1/openapi.json", "api/v2/openapi.json"])
def test_schemathesis_finds_no_mismatch_with_the_openapi_document(server, document):
    doc = json.loads(server.file(document))
    assert all(
        p.get("allowEmptyValue")
        for item in doc["paths"].values()
        for p in item["get"]["parameters"]
        if p["in"] == "query"
    )
    schema = schemathesis.openapi.from_dict(doc)
    operations = [result.ok() for result in schema.get_all_operations()]
    assert len(operations) == len(doc["paths"]) >= 8
    for operation in operations:
        has_parameters = bool(operation.path_parameters or operation.query)
        for mode in [GenerationMode.POSITIVE] + ([GenerationMode.NEGATIVE] if has_parameters else []):
            fuzz(operation, mode, server.base, session_from(fresh_address()))  # each from an address of its own
