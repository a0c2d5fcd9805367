"""The web pages: built from the JSON of the same build, strict HTML, links that resolve,
untrusted text escaped, and a front page small enough for 200 services.

``demo_build()`` runs the bundled demo (its loopback targets, an injected clock, no
sleeps) once per test session; the browser and accessibility tests read the same tree.
"""

from __future__ import annotations

import atexit
import dataclasses
import functools
import json
import re
import shutil
import tempfile
import threading
from collections.abc import Iterator
from datetime import datetime, timedelta
from html.parser import HTMLParser
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import lxml.etree
import lxml.html
import pytest

from statusgen import charts, routes
from statusgen.config import Config, ServiceConfig, VendorConfig, load_config
from statusgen.cycle import run_cycle
from statusgen.demo import DemoServer, demo_config
from statusgen.documents import api_documents
from statusgen.history import RANGES
from statusgen.openapi import openapi_document
from statusgen.pages import (
    PAST_WITH_TIMELINES,
    duration,
    outside_link,
    page_files,
    status_word,
)
from statusgen.render import environment, render_files
from statusgen.sitedata import SiteData, gather
from statusgen.state import STATUSES
from statusgen.store import Store, VendorRow
from statusgen.timeutil import utcnow

from .conftest import Targets, write_config

DEMO_CYCLES = 6
SIZE_LIMIT = 150_000


# -- the demo build, shared by the page, browser and accessibility tests ------------------

class StepClock:
    """An injected clock that stands still during a run and moves 30 s between runs."""

    def __init__(self, start: datetime) -> None:
        self.t = start

    def __call__(self) -> datetime:
        return self.t

    def step(self, seconds: float = 30) -> None:
        self.t += timedelta(seconds=seconds)


@dataclasses.dataclass(frozen=True)
class DemoBuild:
    """A built tree of the demo and the configuration it came from."""

    root: Path
    config: Config

    def json(self, tree_path: str) -> Any:
        return json.loads((self.root / tree_path).read_bytes())

    def text(self, tree_path: str) -> str:
        return (self.root / tree_path).read_text(encoding="utf-8")

    def page(self, tree_path: str) -> lxml.html.HtmlElement:
        return lxml.html.document_fromstring(self.text(tree_path))

    def pages(self) -> list[str]:
        return sorted(str(p.relative_to(self.root)) for p in self.root.rglob("*.html"))


@functools.cache
def demo_build() -> DemoBuild:
    """The demo's eight services, run eight times against its loopback targets."""
    tmp = Path(tempfile.mkdtemp(prefix="statusgen-pages-"))
    atexit.register(shutil.rmtree, tmp, True)
    targets = DemoServer()
    threading.Thread(target=targets.serve_forever, daemon=True).start()
    try:
        path = tmp / "demo.toml"
        path.write_text(demo_config(targets.server_address[1], tmp, tmp / "site", 30), encoding="utf-8")
        config = load_config(path)
        clock = StepClock(utcnow().replace(microsecond=0))
        for _ in range(DEMO_CYCLES):
            run_cycle(config, clock)
            clock.step()
    finally:
        targets.shutdown()
        targets.server_close()
    return DemoBuild(tmp / "site", config)


@pytest.fixture(scope="module")
def demo() -> DemoBuild:
    return demo_build()


def text_of(element: lxml.html.HtmlElement) -> str:
    return " ".join(element.text_content().split())


# -- strict HTML -------------------------------------------------------------------------

VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track", "wbr"}
SVG_EMPTY = {"path", "circle", "line", "polyline", "rect"}   # written with a closing tag, never left open


class TagBalance(HTMLParser):
    """Every element closed in order, no attribute twice, no id twice."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.stack: list[str] = []
        self.ids: set[str] = set()
        self.problems: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        names = [a for a, _ in attrs]
        if len(names) != len(set(names)):
            self.problems.append(f"<{tag}> repeats an attribute: {names}")
        for name, value in attrs:
            if name == "id":
                if value in self.ids:
                    self.problems.append(f"id {value!r} is used twice")
                self.ids.add(value or "")
        if tag not in VOID:
            self.stack.append(tag)

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag not in VOID and tag not in SVG_EMPTY:
            self.problems.append(f"<{tag}/> is not a void element")

    def handle_endtag(self, tag: str) -> None:
        if not self.stack or self.stack[-1] != tag:
            self.problems.append(f"</{tag}> closes {self.stack[-1:] or 'nothing'}")
            return
        self.stack.pop()

    def close(self) -> None:
        super().close()
        if self.stack:
            self.problems.append(f"left open: {self.stack}")


def html_problems(html: str) -> list[str]:
    """What a strict reader finds wrong: libxml2's HTML parser without recovery, and tag balance."""
    parser = lxml.etree.HTMLParser(recover=False)
    problems = []
    try:
        lxml.etree.fromstring(html.encode("utf-8"), parser)
    except lxml.etree.XMLSyntaxError as exc:
        problems.append(str(exc))
    problems += [str(e) for e in parser.error_log]
    balance = TagBalance()
    balance.feed(html)
    balance.close()
    if not html.startswith("<!doctype html>"):
        problems.append("no <!doctype html> first")
    return problems + balance.problems


def test_the_checker_catches_broken_html() -> None:
    assert html_problems("<!doctype html><html><body><p><b>x</p></body></html>")
    assert html_problems('<!doctype html><html><body><p id="a"></p><p id="a"></p></body></html>')
    assert html_problems("<!doctype html><html><body><div><span>x</div></body></html>")


def test_every_page_parses_strictly(demo: DemoBuild) -> None:
    pages = demo.pages()
    assert len(pages) > 10
    for page in pages:
        assert html_problems(demo.text(page)) == [], page


# -- the tree ------------------------------------------------------------------------------

def test_every_page_and_asset_is_built(demo: DemoBuild) -> None:
    snapshot = demo.json("api/v1/snapshot.json")
    incidents = demo.json("api/v1/incidents.json")["incidents"]
    expected = {"index.html", "incidents/index.html", "method/index.html", "api/index.html"}
    expected |= {f"services/{s['slug']}/index.html" for s in snapshot["services"]}
    expected |= {f"incidents/{i['id']}/index.html" for i in incidents}
    assert set(demo.pages()) == expected
    assert (demo.root / "static/site.css").is_file() and (demo.root / "static/icon.svg").is_file()
    assert {i["open"] for i in incidents} == {True, False}, "the demo has open and closed incidents"


def _links(page: lxml.html.HtmlElement) -> list[str]:
    return [v for el in page.iter() for k, v in el.attrib.items() if k in ("href", "src", "action")]


def test_every_link_stays_inside_the_site_and_resolves(demo: DemoBuild) -> None:
    def exists(rel: str) -> bool:
        return (demo.root / rel).is_file()

    for tree_path in demo.pages():
        page = demo.page(tree_path)
        for link in _links(page):
            if link.startswith("#"):
                assert page.get_element_by_id(link[1:]) is not None, f"{tree_path}: no target for {link}"
                continue
            parts = urlsplit(link)
            assert not parts.scheme and not parts.netloc, f"{tree_path} links outside: {link}"
            assert link.startswith("/"), f"{tree_path}: links are root-relative, got {link}"
            found = routes.resolve(parts.path, parse_qs(parts.query, keep_blank_values=True), exists)
            assert found.status in (200, 301), f"{tree_path}: {link} does not resolve"


def test_pages_load_nothing_from_outside(demo: DemoBuild) -> None:
    css = demo.text("static/site.css")
    assert "@font-face" not in css and "@import" not in css and "url(" not in css
    for tree_path in demo.pages():
        page = demo.page(tree_path)
        assert page.xpath("//script | //img | //iframe | //object") == [], tree_path
        assert [e.get("href") for e in page.xpath("//link[@rel='stylesheet']")] == ["/static/site.css"]


def test_every_page_names_the_incident_feed(demo: DemoBuild) -> None:
    for tree_path in demo.pages():
        feeds = demo.page(tree_path).xpath("//head/link[@rel='alternate'][@type='application/atom+xml']/@href")
        assert "/feed/incidents.xml" in feeds, tree_path
    for s in demo.json("api/v1/snapshot.json")["services"]:
        feeds = demo.page(f"services/{s['slug']}/index.html").xpath("//head/link[@rel='alternate']/@href")
        assert s["links"]["feed"] in feeds


# -- the front page against the JSON ---------------------------------------------------------

def test_front_page_shows_the_index_and_counts_of_the_snapshot(demo: DemoBuild) -> None:
    snapshot = demo.json("api/v1/snapshot.json")
    page = demo.page("index.html")
    assert text_of(page.get_element_by_id("health-index")) == charts.number(snapshot["health_index"])
    for status in STATUSES:
        (item,) = page.xpath(f"//ul[@class='counts']/li[@data-status='{status}']")
        assert text_of(item) == f"{snapshot['counts']['by_status'][status]} {status_word(status)}"


def test_front_page_lists_open_incidents_first(demo: DemoBuild) -> None:
    open_ = demo.json("api/v1/incidents/_active/1.json")["incidents"]
    page = demo.page("index.html")
    listed = page.xpath("//ul[@class='open-list']/li/a")
    assert [(a.get("href"), text_of(a)) for a in listed] == [(i["links"]["page"], i["title"]) for i in open_]
    headings = [text_of(h) for h in page.xpath("//main//h2")]
    assert headings.index("Open incidents") < headings.index("Services")


def test_front_page_groups_services_by_category_with_status_words(demo: DemoBuild) -> None:
    snapshot = demo.json("api/v1/snapshot.json")
    page = demo.page("index.html")
    cats = [(c, v["name"]) for c, v in snapshot["counts"]["by_category"].items()]
    sections = page.xpath("//section[starts-with(@aria-labelledby, 'cat-')]")
    assert [s.get("aria-labelledby") for s in sections] == [f"cat-{c}" for c, _ in cats]
    for section, (cat, name) in zip(sections, cats, strict=True):
        assert text_of(section.xpath("h3")[0]).startswith(name)
        expected = [s for s in snapshot["services"] if s["category"] == cat]
        items = section.xpath(".//li[@class='svc']")
        assert [i.get("id") for i in items] == [f"svc-{s['slug']}" for s in expected]
        for item, svc in zip(items, expected, strict=True):
            (word,) = item.xpath(".//span[contains(@class, 'st ')]")
            assert word.get("class") == f"st st-{svc['status']}" and text_of(word) == status_word(svc["status"])
            assert item.xpath(".//a/@href")[0] == svc["links"]["page"]


def test_front_page_bars_tell_every_day_of_the_90d_history(demo: DemoBuild) -> None:
    page = demo.page("index.html")
    for svc in demo.json("api/v1/snapshot.json")["services"]:
        points = demo.json(routes.history_file(svc["slug"], "90d"))["points"]
        cells = page.xpath(f"//li[@id='svc-{svc['slug']}']//ol[@class='bar']/li")
        spans = [int(re.fullmatch(r"--n:(\d+)", c.get("style")).group(1)) if c.get("style") else 1 for c in cells]
        assert sum(spans) == len(points) == 90
        day = 0
        for cell, span in zip(cells, spans, strict=True):
            first, last = points[day], points[day + span - 1]
            label = text_of(cell)
            assert label.startswith(charts.day_text(first["start"], with_year=False))
            assert charts.day_text(last["start"], with_year=False) + ": " in label
            assert cell.get("tabindex") == "0" and cell.get("class").split()[0] == charts.availability_class(
                first["availability"], first["maintenance"])
            if first["availability"] is not None:
                assert f": {charts.number(first['availability'])}%, {first['incident_minutes']} min of incidents" in label
            assert all(p["availability"] == first["availability"] for p in points[day:day + span])
            day += span


# -- service pages ------------------------------------------------------------------------------

def test_service_pages_show_the_record(demo: DemoBuild) -> None:
    for svc in demo.json("api/v1/snapshot.json")["services"]:
        record = demo.json(routes.service_file(svc["slug"]))["service"]
        page = demo.page(f"services/{svc['slug']}/index.html")
        assert text_of(page.get_element_by_id("reason")) == record["state"]["reason"]
        status = page.get_element_by_id("status").xpath(".//span")[0]
        assert status.get("class") == f"st st-{record['state']['status']}"
        rows = page.xpath("//section[@aria-labelledby='h-checks']//tbody/tr")
        assert len(rows) == len(record["checks"])
        for row, check in zip(rows, record["checks"], strict=True):
            assert check["url"] in text_of(row)
            assert f"timeout {charts.number(check['timeout_s'])} s" in text_of(row)
            if check["last_result"] and check["last_result"]["latency_ms"] is not None:
                assert f"{charts.number(check['last_result']['latency_ms'])} ms" in text_of(row)
        hrefs = set(page.xpath("//a/@href"))
        assert {record["links"]["self"], record["links"]["feed"]} <= hrefs


def test_service_pages_chart_every_range_from_its_history(demo: DemoBuild) -> None:
    slug = "payments-eu"
    page = demo.page(f"services/{slug}/index.html")
    radios = page.xpath("//div[@class='tabs']/input[@type='radio']")
    assert [r.get("id") for r in radios] == [f"range-{r}" for r in RANGES]
    assert radios[0].get("checked") is not None
    for name in RANGES:
        history = demo.json(routes.history_file(slug, name))
        panel = page.get_element_by_id(f"panel-{name}")
        s = history["summary"]
        avail = panel.xpath(".//dd[@data-field='availability']")[0]
        assert text_of(avail) == f"{charts.number(s['availability'])}%"
        latency = text_of(panel.xpath(".//dd[@data-field='latency']")[0])
        assert latency == f"p50 {charts.number(s['latency_p50_ms'])} ms, p95 {charts.number(s['latency_p95_ms'])} ms"
        svgs = panel.xpath(".//*[local-name()='svg']")
        assert len(svgs) == 2 and all(svg.get("role") == "img" and svg.get("aria-label") for svg in svgs)
        latency, availability = svgs
        measured = [p for p in history["points"] if p["latency_p50_ms"] is not None]
        hits = latency.xpath(".//*[local-name()='rect'][@class='hit']/*[local-name()='title']")
        assert [text_of(t) for t in hits] == [
            f"{charts.bucket_text(p['start'], history['resolution_s'])}: p50 {charts.number(p['latency_p50_ms'])} ms, "
            f"p95 {charts.number(p['latency_p95_ms'])} ms" for p in measured]
        counted = [p for p in history["points"] if p["availability"] is not None]
        bars = availability.xpath(".//*[local-name()='rect'][not(@class='a-none' or @class='a-maint')]")
        assert [b.get("class") for b in bars] == [charts.availability_class(p["availability"]) for p in counted]
        assert ("No latency measured" in text_of(latency)) == (not measured)
        assert routes.history_url(slug, name) in panel.xpath(".//a/@href")


def test_service_pages_list_that_services_incidents(demo: DemoBuild) -> None:
    incidents = demo.json("api/v1/incidents.json")["incidents"]
    for svc in demo.json("api/v1/snapshot.json")["services"]:
        page = demo.page(f"services/{svc['slug']}/index.html")
        shown = page.xpath("//section[@aria-labelledby='h-incidents']//article/h3/a/@href")
        assert shown == [i["links"]["page"] for i in incidents if i["service"] == svc["slug"]]


# -- incidents ---------------------------------------------------------------------------------

def _incidents_page_matches(page: lxml.html.HtmlElement, lists: dict[str, list[dict[str, Any]]]) -> None:
    for section, expected in lists.items():
        cards = page.xpath(f"//section[@aria-labelledby='{section}']//article")
        older = page.xpath(f"//section[@aria-labelledby='{section}']//table[@id='older']//a")
        assert len(cards) == min(len(expected), PAST_WITH_TIMELINES if section == "h-past" else len(expected))
        assert [text_of(c.xpath("h3")[0]) for c in cards] + [text_of(a) for a in older] == [
            i["title"] for i in expected]
        assert [a.get("href") for a in older] == [i["links"]["page"] for i in expected[len(cards):]]
        for card, incident in zip(cards, expected, strict=False):
            steps = card.xpath(".//ol[@class='timeline']/li")
            assert [s.xpath("time/@datetime")[0] for s in steps] == [u["at"] for u in incident["updates"]]
            assert all(u["message"] in text_of(s) for s, u in zip(steps, incident["updates"], strict=True))


def test_incidents_page_has_open_then_past_with_timelines(demo: DemoBuild) -> None:
    lists = {"h-open": demo.json(routes.incidents_file("1"))["incidents"],
             "h-past": demo.json(routes.incidents_file("0"))["incidents"]}
    _incidents_page_matches(demo.page("incidents/index.html"), lists)


def test_incidents_page_lists_the_oldest_past_incidents_without_timelines(demo: DemoBuild) -> None:
    data = _site_data(demo)
    docs = api_documents(data)
    past = docs[routes.incidents_file("0")]
    template = past["incidents"][0]
    past["incidents"] = [dict(template, id=f"{template['id']}-{n}", title=f"Incident {n}",
                              links=dict(template["links"], page=f"/incidents/{template['id']}-{n}/"))
                         for n in range(PAST_WITH_TIMELINES + 7)]
    page = lxml.html.document_fromstring(page_files(environment(), data, docs)["incidents/index.html"])
    assert len(page.xpath("//table[@id='older']//tbody/tr")) == 7
    _incidents_page_matches(page, {"h-past": past["incidents"]})


def test_incident_pages(demo: DemoBuild) -> None:
    for incident in demo.json("api/v1/incidents.json")["incidents"]:
        page = demo.page(f"incidents/{incident['id']}/index.html")
        assert text_of(page.xpath("//h1")[0]) == incident["title"]
        assert page.xpath("//dl//time/@datetime")[0] == incident["started_at"]
        if not incident["open"]:
            assert f"after {duration(incident['duration_s'])}" in text_of(page.xpath("//dl")[0])
        assert len(page.xpath("//ol[@class='timeline']/li")) == len(incident["updates"])


# -- method and API pages -------------------------------------------------------------------------

def test_method_page_comes_from_the_configuration(demo: DemoBuild) -> None:
    page = demo.page("method/index.html")
    body = text_of(page.xpath("//main")[0])
    health = demo.json("api/v1/health.json")
    assert demo.config.site.vantage_point in body
    assert f"every {charts.number(health['collection']['interval_s'])} seconds" in body
    assert health["formula"] in body
    rows = page.xpath("//section[@aria-labelledby='services']//tbody/tr")
    assert len(rows) == sum(len(s.checks) for s in demo.config.services)
    for svc in demo.config.services:
        record = demo.json(routes.service_file(svc.slug))["service"]
        for check in record["checks"]:
            assert any(check["url"] in text_of(r) and f"{charts.number(check['timeout_s'])} s" in text_of(r)
                       and f"{charts.number(check['degraded_ms'])} ms" in text_of(r) for r in rows)
    assert "Database upgrade" in body, "maintenance windows are listed"


def test_api_page_lists_every_endpoint_of_the_openapi_document(demo: DemoBuild) -> None:
    page = demo.page("api/index.html")
    shown = [text_of(h) for h in page.xpath("//section[@aria-labelledby='endpoints']//h3")]
    assert shown == [f"GET {p}" for p in openapi_document(demo.config)["paths"]]
    assert "/api/v1/openapi.json" in page.xpath("//a/@href")
    body = text_of(page.xpath("//main")[0])
    assert "max-age=15" in body and "120 requests in any minute" in body and "Retry-After" in body
    for r in RANGES:
        assert r in body


# -- one source of truth, untrusted text ----------------------------------------------------------

def _site_data(demo: DemoBuild, config: Config | None = None) -> SiteData:
    store = Store(demo.config.site.store)
    try:
        last = store.last_finished_run()
        assert last is not None and last.finished_at is not None
        return gather(store, config or demo.config, last.finished_at)
    finally:
        store.close()


def test_pages_show_the_documents_not_the_store(demo: DemoBuild) -> None:
    """Change a number in the documents only: the page follows the documents."""
    data = _site_data(demo)
    docs = api_documents(data)
    docs["api/v1/snapshot.json"]["health_index"] = 12.5
    docs["api/v1/snapshot.json"]["counts"]["by_status"]["unknown"] = 417
    history = docs[routes.history_file("acme-api", "90d")]
    history["summary"]["availability"] = 12.345
    page = lxml.html.document_fromstring(page_files(environment(), data, docs)["index.html"])
    assert text_of(page.get_element_by_id("health-index")) == "12.5"
    assert text_of(page.xpath("//li[@data-status='unknown']")[0]).startswith("417 ")
    assert "12.345% over 90 days" in text_of(page.get_element_by_id("svc-acme-api"))


def test_an_incident_id_never_escapes_its_folder(demo: DemoBuild) -> None:
    data = _site_data(demo)
    docs = api_documents(data)
    docs[routes.incidents_file()]["incidents"][0]["id"] = "../../etc"
    with pytest.raises(ValueError, match="cannot name a page folder"):
        page_files(environment(), data, docs)


HOSTILE = '<script>alert("x")</script><img src=x onerror=alert(1)>'


def _hostile_view() -> dict[str, Any]:
    incident = {"id": "i1", "title": "Errors " + HOSTILE, "impact": "partial_outage", "status": "investigating",
                "started_at": "2026-11-22T20:00:00Z", "updated_at": "2026-11-22T20:05:00Z",
                "url": "javascript:alert(1)", "components": []}
    safe = dict(incident, id="i2", title="Slow logins", impact="degraded", url="https://status.example.com/i2")
    window = {"id": "m1", "title": "Upgrade " + HOSTILE, "status": "scheduled", "starts_at": "2026-11-23T01:00:00Z",
              "ends_at": "2026-11-23T02:00:00Z", "url": "https://status.example.com/m1", "components": []}
    return {"format": "statuspage", "status": "partial_outage", "description": "Partial " + HOSTILE,
            "components": [{"id": "c1", "name": "API " + HOSTILE, "status": "degraded", "group": None}],
            "incidents": [incident, safe], "maintenance_active": [], "maintenance_upcoming": [window],
            "updated_at": "2026-11-22T20:05:00Z", "page_url": "data:text/html,<b>x</b>"}


VENDOR_URL = "https://status.example.com/api/v2/summary.json"


def _hostile_site(demo: DemoBuild) -> SiteData:
    """The demo with a hostile name on acme-api and a vendor source whose view is hostile."""
    def change(s: ServiceConfig) -> ServiceConfig:
        if s.slug != "acme-api":
            return s
        return dataclasses.replace(s, name=s.name + " " + HOSTILE, vendor=VendorConfig(url=VENDOR_URL))

    config = dataclasses.replace(demo.config, services=tuple(change(s) for s in demo.config.services), by_slug={})
    data = _site_data(demo, config)
    row = VendorRow("acme-api", VENDOR_URL, fetched_at=data.now, last_ok_at=data.now, outcome="ok",
                    view_json=json.dumps(_hostile_view()))
    return dataclasses.replace(data, vendors={"acme-api": row})


def test_vendor_view_is_shown_and_untrusted_text_escaped(demo: DemoBuild) -> None:
    files = render_files(_hostile_site(demo))
    for path, body in files.items():
        if path.endswith(".html"):
            text = body.decode("utf-8")
            assert "<script" not in text and "<img" not in text, path
            assert "javascript:" not in text and 'href="data:' not in text, path
    page = lxml.html.document_fromstring(files["services/acme-api/index.html"])
    vendor = page.xpath("//section[@aria-labelledby='h-vendor']")[0]
    status = text_of(page.get_element_by_id("vendor-status"))
    assert status == f"Partial outage: Partial {HOSTILE} (updated 2026-11-22 20:05 UTC)"
    incidents = page.get_element_by_id("vendor-incidents").xpath("li")
    assert text_of(incidents[0]).startswith("Errors " + HOSTILE + " · impact: Partial outage · status: investigating")
    assert text_of(incidents[1]).startswith("Slow logins · impact: Degraded performance")
    assert "Upgrade " + HOSTILE in text_of(page.get_element_by_id("vendor-maintenance"))
    assert "API " + HOSTILE in text_of(vendor)
    links = vendor.xpath(".//a/@href")
    assert links == [VENDOR_URL, "https://status.example.com/i2", "https://status.example.com/m1"]
    assert text_of(page.xpath("//h1")[0]) == "Acme API " + HOSTILE
    assert html_problems(files["services/acme-api/index.html"].decode("utf-8")) == []


def test_outside_links_keep_only_http() -> None:
    assert outside_link("https://status.example.com/x") == "https://status.example.com/x"
    for bad in ("javascript:alert(1)", "data:text/html,x", "//evil.example", "/local", "", None, "http://[::1"):
        assert outside_link(bad) is None


def test_svg_is_built_from_escaped_values() -> None:
    svg = charts.el("svg", {"aria-label": 'a"<b>'}, charts.text_el("text", {}, "<script>&"))
    assert svg == '<svg aria-label="a&quot;&lt;b&gt;"><text>&lt;script&gt;&amp;</text></svg>'


def _points(values: list[tuple[float | None, int]]) -> list[dict[str, Any]]:
    start = datetime(2026, 1, 1)
    return [{"start": (start + timedelta(days=i)).strftime("%Y-%m-%dT%H:%M:%SZ"), "availability": a,
             "incident_minutes": m, "maintenance": 0, "latency_p50_ms": None, "latency_p95_ms": None}
            for i, (a, m) in enumerate(values)]


def test_day_runs_join_only_days_that_read_the_same() -> None:
    runs = charts.day_runs(_points([(None, 0)] * 3 + [(100.0, 0)] * 2 + [(99.5, 12), (100.0, 0)]))
    assert [(r.days, r.css, r.right) for r in runs] == [
        (3, "a-none", False), (2, "a-full", False), (1, "a-high", True), (1, "a-full", True)]
    assert [r.label for r in runs] == [
        "1 Jan \u2013 3 Jan: no data",
        "4 Jan \u2013 5 Jan: 100%, 0 min of incidents each day",
        "6 Jan: 99.5%, 12 min of incidents",
        "7 Jan: 100%, 0 min of incidents",
    ]


def test_charts_are_well_formed_svg(demo: DemoBuild) -> None:
    for name in RANGES:
        history = demo.json(routes.history_file("slowpoke", name))
        for chart in (charts.latency_chart(history), charts.availability_chart(history)):
            root = lxml.etree.fromstring(str(chart).encode("utf-8"))
            assert root.tag == "{http://www.w3.org/2000/svg}svg" and root.get("role") == "img"


# -- size --------------------------------------------------------------------------------------

def _many_services(url: str, count: int) -> str:
    cats = ["cloud", "developer-tools", "payments", "communication", "infrastructure"]
    head = "[categories]\n" + "".join(f'{c} = "{c.replace("-", " ").title()}"\n' for c in cats)
    body = "".join(f'\n[[services]]\nslug = "service-{i:03d}"\nname = "Example Service {i:03d}"\n'
                   f'category = "{cats[i % len(cats)]}"\n[[services.checks]]\nurl = "{url}"\n' for i in range(count))
    return head + body


class WideTargets(Targets):
    """Loopback targets that accept 200 connections at once (the default backlog is 5)."""

    request_queue_size = 512


def test_front_page_for_200_services_is_under_150_kb(tmp_path: Path) -> None:
    targets = WideTargets()
    threading.Thread(target=targets.serve_forever, daemon=True).start()
    targets.set("/ok")
    config = load_config(write_config(tmp_path, _many_services(targets.url("/ok"), 200)))
    clock = StepClock(utcnow().replace(microsecond=0))
    try:
        for _ in range(2):
            run_cycle(config, clock)
            clock.step()
    finally:
        targets.shutdown()
        targets.server_close()
    size = (config.site.output / "index.html").stat().st_size
    assert len(demo_html_services(config.site.output)) == 200
    assert size < SIZE_LIMIT, f"front page of 200 services is {size} bytes"


def demo_html_services(root: Path) -> list[str]:
    page = lxml.html.document_fromstring((root / "index.html").read_bytes())
    return page.xpath("//li[@class='svc']/@id")


def iter_status_words(page: lxml.html.HtmlElement) -> Iterator[lxml.html.HtmlElement]:
    yield from page.xpath("//span[starts-with(@class, 'st st-')]")
