"""The web pages: built from the JSON of the same build, strict HTML, links that resolve,
untrusted text escaped, and a front page small enough for 200 services.

``demo_build()`` runs the bundled demo (its loopback targets, an injected clock, no
sleeps) once per test session; the browser and accessibility tests read the same tree.
"""

from __future__ import annotations

import atexit
import dataclasses
import functools
import itertools
import json
import re
import shutil
import tempfile
import threading
from datetime import UTC, date, datetime, timedelta
from decimal import Decimal
from html.parser import HTMLParser
from importlib.metadata import metadata
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import lxml.etree
import lxml.html
import orjson
import pytest
from markupsafe import Markup

from statusgen import routes
from statusgen.config import Config, ServiceConfig, VendorConfig, load_config
from statusgen.cycle import run_cycle
from statusgen.decide.history import Columns, History
from statusgen.demo import DemoServer, demo_config
from statusgen.errors import RenderError
from statusgen.i18n import SHIPPED, Language
from statusgen.model import RANGES, STATUSES
from statusgen.render.api.documents import site_documents, site_notices
from statusgen.render.api.openapi import openapi_document
from statusgen.render.build import build
from statusgen.render.gather import SiteData, gather
from statusgen.render.pages import charts, views
from statusgen.render.pages.views import DAY_ROWS, PAST_ON_SERVICE_PAGE, RECENT_DAYS
from statusgen.render.templating import environment
from statusgen.render.words import ENGLISH, outside_link, words
from statusgen.simulate import config_text, simulate
from statusgen.store import Store
from statusgen.timeutil import iso, parse_time, utcnow

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
        path.write_text(demo_config(targets.server_address[1], 8080, tmp, tmp / "site", 30), encoding="utf-8")
        config = load_config(path)
        # All but the last run a day before it: their buckets are closed, so the histories, charts
        # and bars have measured buckets (each ends where the bucket of the last run begins).
        clock = StepClock(utcnow().replace(microsecond=0) - timedelta(days=1))
        for n in range(DEMO_CYCLES):
            if n == DEMO_CYCLES - 1:
                clock.t = utcnow().replace(microsecond=0)
            run_cycle(config, clock)
            clock.step()
    finally:
        targets.shutdown()
        targets.server_close()
    return DemoBuild(tmp / "site", config)


@pytest.fixture(scope="module")
def demo() -> DemoBuild:
    return demo_build()


# -- what the pages say, written here rather than taken from the code that says it ----------------

#: The English status words as the pages write them (docs/api.md names the statuses).
STATUS_WORDS_EN = {
    "operational": "Operational",
    "degraded": "Degraded performance",
    "partial_outage": "Partial outage",
    "major_outage": "Major outage",
    "maintenance": "Under maintenance",
    "unknown": "Status unknown",
}
#: A bar's cells name their band with one letter.
BAND_LETTERS = {"f": "a-full", "h": "a-high", "m": "a-mid", "l": "a-low", "x": "a-maint", "n": "a-none"}


def en_number(value: object) -> str:
    """A figure of the JSON as the English pages write it: a comma between thousands, a point
    before decimals, as many decimals as the JSON gives (1200 is 1,200; 99.95 is 99.95; 100.0 is
    100); an em dash for null."""
    if value is None:
        return "\u2014"
    if not isinstance(value, int | float) or isinstance(value, bool):
        return str(value)
    sign, (whole, _, decimals) = "-" if value < 0 else "", format(abs(Decimal(str(value))), "f").partition(".")
    decimals = decimals.rstrip("0")
    return sign + f"{int(whole):,}" + (f".{decimals}" if decimals else "")


def en_status_word(status: str) -> str:
    return STATUS_WORDS_EN[status]


def band(availability: float | None, maintenance: int = 0) -> str:
    """A bucket's band by the legend's thresholds: 100%, at least 99%, at least 95%, below; with no
    counted check, maintenance or no data."""
    if availability is None:
        return "a-maint" if maintenance else "a-none"
    return (
        "a-full"
        if availability >= 100
        else "a-high"
        if availability >= 99
        else "a-mid"
        if availability >= 95
        else "a-low"
    )


def test_the_test_writes_numbers_and_bands_as_the_docs_do() -> None:
    assert [en_number(v) for v in (1200, 300000, 99.95, 100.0, 1234.5, 0, 0.001, None)] == [
        "1,200", "300,000", "99.95", "100", "1,234.5", "0", "0.001", "\u2014"
    ]  # fmt: skip
    assert [band(a) for a in (100, 99.99, 99, 98.99, 95, 94.99, 0)] == [
        "a-full", "a-high", "a-high", "a-mid", "a-mid", "a-low", "a-low"
    ]  # fmt: skip
    assert (band(None, 3), band(None, 0)) == ("a-maint", "a-none")


def test_the_bands_are_100_99_and_95_percent() -> None:
    """The day-by-day table of a service page draws each day in its band: 100%, from 99%, from
    95%, below, by the legend's literal thresholds; the front page's legend says them."""
    figures = [100.0, 99.999, 99.0, 98.999, 95.0, 94.999, 0.0, None, None]
    points = [
        {"start": f"2026-11-{d:02d}T00:00:00Z", "availability": a, "maintenance": 5 if d == 8 else 0,
         "incident_minutes": 0, "checks": 1440, "failed": 0, "latency_p50_ms": 12.5, "latency_p95_ms": 1234.5}
        for d, a in enumerate(figures, start=1)
    ]  # fmt: skip
    rows = list(reversed(charts.day_rows(points, ENGLISH)))
    assert [(r[1], r[2]) for r in rows] == [
        ("a-full", "100%"), ("a-high", "99.999%"), ("a-high", "99%"), ("a-mid", "98.999%"), ("a-mid", "95%"),
        ("a-low", "94.999%"), ("a-low", "0%"), ("a-maint", "maintenance only"), ("a-none", "no data"),
    ]  # fmt: skip
    assert [r[3:] for r in rows][0] == ("0", "1,440", "0", "12.5", "1,234.5")


def test_the_front_page_legend_says_the_bands(demo: DemoBuild) -> None:
    legend = demo.page("index.html").xpath("//ul[@class='legend']/li")
    assert [(li.xpath("i/@class")[0], text_of(li)) for li in legend][:6] == [
        ("a-full", "100%"), ("a-high", "99% to 99.999%"), ("a-mid", "95% to 98.999%"), ("a-low", "under 95%"),
        ("a-maint", "maintenance only"), ("a-none", "no data"),
    ]  # fmt: skip


def text_of(element: lxml.html.HtmlElement) -> str:
    return " ".join(element.text_content().split())


# -- strict HTML -------------------------------------------------------------------------

VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track", "wbr"}
SVG_EMPTY = {"path", "circle", "line", "polyline", "rect"}  # written with a closing tag, never left open


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
    expected |= {routes.subscribe_page_file()}
    expected |= {routes.error_page_file("404"), routes.error_page_file("429")}
    expected |= {f"services/{s['slug']}/index.html" for s in snapshot["services"]}
    expected |= {routes.service_incidents_file(s["slug"]) for s in snapshot["services"]}
    expected |= {routes.embed_file(), *(routes.embed_file(s["slug"]) for s in snapshot["services"])}
    days = {i["started_at"][:10] for i in incidents if not i["open"]}  # the incidents pages of each day and month
    expected |= {routes.incidents_page_file(p) for day_ in days for p in (day_, day_[:7])}
    months = [m["month"] for m in demo.json(routes.REPORTS)["months"]]
    expected |= {routes.report_page_file(), *(routes.report_page_file(m) for m in months)}
    told = {i["links"]["page"].partition("#")[0].lstrip("/") + "index.html" for i in incidents}
    assert told and told <= expected  # a page where the JSON links each incident
    assert set(demo.pages()) == expected
    assert (demo.root / "static/site.css").is_file() and (demo.root / "static/icon.svg").is_file()
    assert (demo.root / "favicon.ico").read_bytes()[:4] == b"\x00\x00\x01\x00"  # an ICO, where browsers look
    assert {i["open"] for i in incidents} == {True, False}, "the demo has open and closed incidents"


def _links(page: lxml.html.HtmlElement) -> list[str]:
    return [v for el in page.iter() for k, v in el.attrib.items() if k in ("href", "src", "action")]


def test_every_link_stays_inside_the_site_and_resolves(demo: DemoBuild) -> None:
    def exists(rel: str) -> bool:
        return (demo.root / rel).is_file()

    # the one address outside: "Powered by statusgen", in the footer, to the project's home page
    (home,) = [u.split(", ", 1)[1] for u in metadata("statusgen").get_all("Project-URL") if u.startswith("Homepage,")]
    # and the subscribe page's mail to the address of [subscriptions]: a message, not a page
    mail = f"mailto:{demo.config.subscriptions.address}?" if demo.config.subscriptions else None
    for tree_path in demo.pages():
        page = demo.page(tree_path)
        written = page.xpath("//a[starts-with(@href, 'mailto:')]/@href")
        assert all(mail and href.startswith(mail) for href in written), tree_path
        assert not written or tree_path == routes.subscribe_page_file(), tree_path
        outside = page.xpath("//a[contains(@href, ':') and not(starts-with(@href, 'mailto:'))]")
        assert all(a.get("href") == home and a.xpath("ancestor::footer") for a in outside), tree_path
        for link in _links(page):
            if link.startswith("mailto:"):
                continue
            if link.startswith("#"):
                assert page.get_element_by_id(link[1:]) is not None, f"{tree_path}: no target for {link}"
                continue
            if link == home:
                continue
            parts = urlsplit(link)
            assert not parts.scheme and not parts.netloc, f"{tree_path} links outside: {link}"
            assert link.startswith("/"), f"{tree_path}: links are root-relative, got {link}"
            found = routes.resolve(parts.path, parse_qs(parts.query, keep_blank_values=True), exists)
            assert found.status in (200, 301), f"{tree_path}: {link} does not resolve"


def test_pages_load_nothing_from_outside(demo: DemoBuild) -> None:
    css = demo.text("static/site.css")
    assert "@font-face" not in css and "@import" not in css and "url(" not in css
    script = demo.text("static/site.js")
    # the one address in it names SVG's namespace (createElementNS), not a place it asks
    outside = script.replace('"http://www.w3.org/2000/svg"', "")
    assert "://" not in outside and "import" not in script, "the script asks only this site, by root-relative URLs"
    assert re.findall(r"\bfetch\((\w+)\)", script) == ["url"] and "`/api/v1/services/${" in script
    for tree_path in demo.pages():
        page = demo.page(tree_path)
        assert page.xpath("//img | //iframe | //object") == [], tree_path
        code = page.xpath("//script[not(@type='application/json')]")
        assert all(s.get("src") == "/static/site.js" and s.get("defer") is not None and not s.text for s in code)
        # the one data block: the words the script says, in the page's language (never run)
        data = page.xpath("//script[@type='application/json']")
        assert [d.get("id") for d in data] == ["words"] and json.loads(data[0].text)["say"], tree_path
        assert [e.get("href") for e in page.xpath("//link[@rel='stylesheet']")] == ["/static/site.css"]
    assert demo.page("index.html").xpath("//script") and demo.page("services/acme-api/index.html").xpath("//script")


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
    assert text_of(page.get_element_by_id("health-index")) == number(snapshot["health_index"])
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


def bar_foot(summary: dict[str, Any], since: str | None = None) -> str:
    """The words under a bar, from the summary of the 90-day history; ``since``, when a site
    younger than 90 days began collecting."""
    minutes = f"{number(summary['incident_minutes'])} min of incidents"
    if since is not None:
        day = f"{parse_time(since):%b} {parse_time(since).day}, {parse_time(since).year}"
        if summary["availability"] is None:
            return f"Collecting since {day}: no whole day counted yet, {minutes}"
        return f"{number(summary['availability'])}% available since {day}, when collecting began, {minutes}"
    share = "No checks counted" if summary["availability"] is None else f"{number(summary['availability'])}% available"
    return f"{share} over 90 days, {minutes}"


def test_front_page_bars_draw_every_day_of_the_90d_history(demo: DemoBuild) -> None:
    page = demo.page("index.html")
    bands = BAND_LETTERS
    for svc in demo.json("api/v1/snapshot.json")["services"]:
        history = demo.json(routes.history_file(svc["slug"], "90d"))
        points = history["points"]
        (item,) = page.xpath(f"//li[@id='svc-{svc['slug']}']")
        cells = item.xpath("div[@class='bar']/i")
        assert all(c.get("style") is None for c in cells)  # classes: the content security policy lists no hash
        classes = [c.get("class").split() for c in cells]
        spans = [next((int(k[1:]) for k in ks if re.fullmatch(r"s\d+", k)), 1) for ks in classes]
        assert sum(spans) == len(points) == 90
        at, before = 0, None
        since = demo.json("api/v1/health.json")["collection"]["collecting_since"]
        for cell, span, ks in zip(cells, spans, classes, strict=True):
            days = points[at : at + span]
            if ks[0] == "y":  # no data yet: days that ended before the site's first run
                css = "y"
                assert all(iso(parse_time(p["start"]) + timedelta(days=1)) <= since for p in days)
            else:
                css = bands[ks[0]]
                assert {band(p["availability"], p["maintenance"]) for p in days} == {css}
            # the days older than the last 60 are o60, than the last 30 o30: hidden where the bar is narrow
            age = "o60" if at + span <= 30 else "o30" if at + span <= 60 else ""
            assert age in ks if age else not {"o60", "o30"} & set(ks), (at, span, ks)
            boundary = at in (30, 60)
            assert (css != before or boundary) and text_of(cell) == "", "a run of days in one band, told by the script"
            at, before = at + span, css
        young = since if since and since > points[0]["start"] else None
        assert text_of(item.xpath("p[@class='bar-foot']")[0]) == bar_foot(history["summary"], young)


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
            assert f"timeout {number(check['timeout_s'])} s" in text_of(row)
            live = row.xpath(".//*[@data-live]")[0]  # site.js tells the last result from the record
            assert live.get("data-live") == f"check-{check['check']}"
            assert live.xpath(".//a/@href") == [record["links"]["self"]]
        state = page.xpath("//section[@data-record]")[0]
        assert state.get("data-record") == record["links"]["self"]
        assert state.get("data-status") == record["state"]["status"]
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
        assert text_of(avail) == number(s["availability"]) + ("%" if s["availability"] is not None else "")
        latency = text_of(panel.xpath(".//dd[@data-field='latency']")[0])
        assert latency == f"p50 {number(s['latency_p50_ms'])} ms, p95 {number(s['latency_p95_ms'])} ms"
        svgs = panel.xpath(".//*[local-name()='svg']")
        assert len(svgs) == 2 and all(svg.get("role") == "img" and svg.get("aria-label") for svg in svgs)
        latency, availability = svgs
        measured = [p for p in history["points"] if p["latency_p50_ms"] is not None]
        latency_matches(latency, history)
        availability_matches(availability, history)
        assert ("No latency measured" in text_of(latency)) == (not measured)
        assert routes.history_url(slug, name) in panel.xpath(".//a/@href")
        assert {svg.get("data-src") for svg in svgs} == {routes.history_url(slug, name)}
        assert [svg.get("data-tell") for svg in svgs] == ["latency", "availability"]


def test_service_pages_chart_every_range_of_every_service(demo: DemoBuild) -> None:
    for svc in demo.json("api/v1/snapshot.json")["services"]:
        page = demo.page(f"services/{svc['slug']}/index.html")
        for name in RANGES:
            history = demo.json(routes.history_file(svc["slug"], name))
            latency, availability = page.get_element_by_id(f"panel-{name}").xpath(".//*[local-name()='svg']")
            latency_matches(latency, history)
            availability_matches(availability, history)


TENTH = 0.051  # coordinates are drawn to a tenth of a unit


def _svg_children(svg: lxml.html.HtmlElement, tag: str) -> list[lxml.html.HtmlElement]:
    return svg.xpath(f"*[local-name()='{tag}']")


def _bucket(x: float, count: int, centre: bool) -> int:
    """The bucket whose centre (lines) or left edge (bars) is at ``x``."""
    at = (x - charts.LEFT) / (charts.PLOT_W / count) - (0.5 if centre else 0)
    assert abs(at - round(at)) < 0.05, (x, at)
    return round(at)


def latency_matches(svg: lxml.html.HtmlElement, history: dict[str, Any]) -> None:
    """Each series passes through every measured bucket at its value and breaks where nothing was measured."""
    points, count = history["points"], history["count"]
    for series, dot in (("latency_p50_ms", "dot50"), ("latency_p95_ms", "dot95")):
        values = [p[series] for p in points]
        top = charts.nice_top(
            max((v for v in values + [p["latency_p95_ms"] for p in points] if v is not None), default=0.0)
        )
        css = series.removeprefix("latency_").removesuffix("_ms")
        drawn: list[list[tuple[int, float]]] = []
        for path in (e for e in _svg_children(svg, "path") if e.get("class") == css):
            for sub in path.get("d").split("M")[1:]:
                pairs = [tuple(map(float, xy.split(","))) for xy in sub.split()]
                drawn.append([(_bucket(x, count, True), y) for x, y in pairs])
        drawn += [
            [(_bucket(float(c.get("cx")), count, True), float(c.get("cy")))]
            for c in _svg_children(svg, "circle")
            if c.get("class") == dot
        ]
        runs = [
            [i for i, _ in run]
            for known, run in itertools.groupby(enumerate(values), lambda iv: iv[1] is not None)
            if known
        ]
        assert sorted(run[0][0] for run in drawn) == [run[0] for run in runs]
        for run in drawn:
            assert [i for i, _ in run] == list(range(run[0][0], run[0][0] + len(run))), "a line never jumps a gap"
            for i, y in run:
                assert abs(y - (charts.BASE - values[i] / top * charts.PLOT_H)) <= TENTH, (series, i, values[i], y)
        top_label = [text_of(t) for t in _svg_children(svg, "text")][2]
        assert top_label == f"{number(top)} ms"


BAR = re.compile(r"M([\d.]+),144V([\d.]+)H([\d.]+)V144z")
STRIP = re.compile(r"M([\d.]+),144v-3H([\d.]+)v3z")


def availability_matches(svg: lxml.html.HtmlElement, history: dict[str, Any]) -> None:
    """Every bucket is under exactly one bar or strip, of its band, as tall as its availability."""
    points, count = history["points"], history["count"]
    covered: list[int] = []
    for path in _svg_children(svg, "path"):
        css, d = path.get("class"), path.get("d")
        if css == "grid":
            continue
        shapes = [(m, True) for m in BAR.finditer(d)] + [(m, False) for m in STRIP.finditer(d)]
        assert sum(len(m.group(0)) for m, _ in shapes) == len(d), d
        for m, counted in shapes:
            first = _bucket(float(m.group(1)), count, False)
            last = _bucket(float(m.group(m.lastindex)), count, False)
            under = points[first:last]
            assert {band(p["availability"], p["maintenance"]) for p in under} == {css}
            if counted:
                (avail,) = {p["availability"] for p in under}
                height = max(avail * charts.PLOT_H / 100, charts.LOW)
                assert abs(float(m.group(2)) - (charts.BASE - height)) <= TENTH
            else:
                assert all(p["availability"] is None for p in under)
            covered += range(first, last)
    assert sorted(covered) == list(range(count))


def test_service_pages_list_that_services_incidents(demo: DemoBuild) -> None:
    """Open incidents with their timelines, then the newest past ones listed, each linking its page."""
    incidents = demo.json("api/v1/incidents.json")["incidents"]
    for svc in demo.json("api/v1/snapshot.json")["services"]:
        page = demo.page(f"services/{svc['slug']}/index.html")
        section = page.xpath("//section[@aria-labelledby='h-incidents']")[0]
        mine = [i for i in incidents if i["service"] == svc["slug"]]
        cards = section.xpath(".//article")
        assert [c.xpath("h3/a/@href")[0] for c in cards] == [i["links"]["page"] for i in mine if i["open"]]
        for card, incident in zip(cards, (i for i in mine if i["open"]), strict=True):
            steps = card.xpath(".//ol[@class='timeline']/li")
            assert [s.xpath("time/@datetime")[0] for s in steps] == [u["at"] for u in incident["updates"]]
        rows = section.xpath(".//table[@id='past']/tbody/tr")
        past = [i for i in mine if not i["open"]][:PAST_ON_SERVICE_PAGE]
        assert [(r.xpath(".//a/@href")[0], text_of(r.xpath(".//a")[0])) for r in rows] == [
            (i["links"]["page"], i["title"]) for i in past
        ]
        for row, incident in zip(rows, past, strict=True):
            assert row.xpath(".//time/@datetime") == [incident["started_at"]]
            assert text_of(row).endswith(duration(incident["duration_s"]))
    assert any(i["open"] for i in incidents) and any(not i["open"] for i in incidents)


def history_of(doc: dict[str, Any]) -> History:
    """A history as a build holds it, from its answer."""
    return History.of(doc)


def test_a_service_page_lists_its_newest_past_incidents_and_links_them_all(demo: DemoBuild) -> None:
    """However many incidents a service has had, its page lists the newest few and says how many
    there are, linking its incidents page where every one is told."""
    svc = demo.json("api/v1/snapshot.json")["services"][0]["slug"]
    record = demo.json(routes.service_file(svc))
    histories = {name: history_of(demo.json(routes.history_file(svc, name))) for name in RANGES}
    template = next(i for i in demo.json("api/v1/incidents.json")["incidents"] if not i["open"])
    past = [
        dict(
            template,
            id=f"past-{n}",
            service=svc,
            title=f"Past {n}",
            links=dict(template["links"], page=routes.incident_page_url(svc, f"past-{n}")),
        )
        for n in range(PAST_ON_SERVICE_PAGE + 3)
    ]
    view = views.service_page_view(demo.config, record, past)
    panels = {name: views.service_panel(svc, name, h, EN) for name, h in histories.items()}
    made = views.service_page(demo.config.site, EN, view, panels, views.service_days(histories["90d"], EN))
    page = lxml.html.document_fromstring(made)
    section = page.xpath("//section[@aria-labelledby='h-incidents']")[0]
    rows = section.xpath(".//table[@id='past']/tbody/tr")
    assert [text_of(r.xpath(".//a")[0]) for r in rows] == [i["title"] for i in past[:PAST_ON_SERVICE_PAGE]]
    assert f"newest of {len(past)} past incidents" in text_of(section)
    every = section.xpath(f".//a[@href='{routes.service_incidents_url(svc)}']")
    assert len(every) == 1 and f"({len(past)})" in text_of(every[0])


def test_service_pages_list_every_day_of_the_90d_history(demo: DemoBuild) -> None:
    """The day-by-day table: what the bar of the front page and the charts tell, in words, without script."""
    for svc in demo.json("api/v1/snapshot.json")["services"]:
        points = demo.json(routes.history_file(svc["slug"], "90d"))["points"]
        page = demo.page(f"services/{svc['slug']}/index.html")
        rows = page.xpath("//table[@id='days']/tbody/tr")
        assert len(rows) == len(points) == 90
        for row, p in zip(rows, reversed(points), strict=True):
            cells = [text_of(c) for c in row.xpath("th | td")]
            avail = (
                f"{number(p['availability'])}%"
                if p["availability"] is not None
                else "maintenance only"
                if p["maintenance"]
                else "no data"
            )
            assert cells == [day(p["start"]), avail] + [
                number(p[k]) for k in ("incident_minutes", "checks", "failed", "latency_p50_ms", "latency_p95_ms")
            ]
            assert row.xpath("td")[0].get("class") == band(p["availability"], p["maintenance"])


# -- incidents ---------------------------------------------------------------------------------


def test_incidents_page_tells_open_incidents_in_full(demo: DemoBuild) -> None:
    expected = demo.json(routes.incidents_file("1"))["incidents"]
    page = demo.page("incidents/index.html")
    cards = page.xpath("//section[@aria-labelledby='h-open']//article")
    assert [text_of(c.xpath("h3")[0]) for c in cards] == [i["title"] for i in expected]
    for card, incident in zip(cards, expected, strict=True):
        steps = card.xpath(".//ol[@class='timeline']/li")
        assert [s.xpath("time/@datetime")[0] for s in steps] == [u["at"] for u in incident["updates"]]
        assert all(u["message"] in text_of(s) for s, u in zip(steps, incident["updates"], strict=True))


def many_past_incidents(demo: DemoBuild, days: int, per_day: int) -> dict[str, Any]:
    """The demo's incident lists with ``per_day`` past incidents on each of ``days`` days."""
    lists = {routes.incidents_file(a): demo.json(routes.incidents_file(a)) for a in (None, "1", "0")}
    template = next(i for i in lists[routes.incidents_file()]["incidents"] if not i["open"])
    start = datetime(2026, 11, 20, 23, 0, tzinfo=UTC)
    past = [
        dict(
            template,
            id=f"x-{d}-{n}",
            title=f"Incident {d}-{n}",
            started_at=iso(start - timedelta(days=d, minutes=n)),
            links=dict(template["links"], page=f"/services/x/incidents/#inc-x-{d}-{n}"),
        )
        for d in range(days)
        for n in range(per_day)
    ]
    lists[routes.incidents_file("0")] = dict(lists[routes.incidents_file("0")], incidents=past, count=len(past))
    return lists


def test_incidents_pages_go_by_day_and_by_month_and_stay_small(demo: DemoBuild) -> None:
    """A large site (80 incidents a day for 90 days, as 1,000 services have): the incidents page
    lists the last 30 days, each with its newest DAY_ROWS incidents and a link to the day's page,
    which lists them all; a page per month; every past incident on its day's page; no page
    over 200 KB."""
    lists = many_past_incidents(demo, 90, 80)
    made = views.incidents_pages(demo.config.site, EN, lists, date(2026, 11, 20))
    past = lists[routes.incidents_file("0")]["incidents"]
    days = sorted({i["started_at"][:10] for i in past}, reverse=True)
    months = sorted({d[:7] for d in days}, reverse=True)
    assert set(made) == {
        "incidents/index.html",
        *(routes.incidents_page_file(m) for m in months),
        *(routes.incidents_page_file(d) for d in days),
    }
    assert max(len(page) for page in made.values()) < 200_000
    front = lxml.html.document_fromstring(made["incidents/index.html"])
    headings = front.xpath("//section[@aria-labelledby='h-past']//h3")
    assert [h.get("id") for h in headings] == [f"day-{d}" for d in days[:RECENT_DAYS]]
    for heading, day_ in zip(headings, days, strict=False):
        assert heading.xpath(".//a/@href") == [routes.incidents_page_url(day_)]
        rows = heading.getnext().xpath(".//tbody/tr")
        assert [text_of(r.xpath(".//a")[0]) for r in rows] == [
            i["title"] for i in past if i["started_at"][:10] == day_
        ][:DAY_ROWS]
    assert front.xpath("//ul[@id='months']//a/@href") == [routes.incidents_page_url(m) for m in months]
    told = []
    for day_ in days:
        page = lxml.html.document_fromstring(made[routes.incidents_page_file(day_)])
        told += [text_of(a) for a in page.xpath("//table[@id='day']//tbody//a")]
    assert told == [i["title"] for i in past]  # every one on its day's page, newest first


def test_each_incident_is_told_where_its_link_points(demo: DemoBuild) -> None:
    """An incident's link is its part of its service's incidents page: the element it names
    tells its title, start, end and every update."""
    incidents = demo.json("api/v1/incidents.json")["incidents"]
    assert incidents and any(not i["open"] for i in incidents)
    for incident in incidents:
        path, _, anchor = incident["links"]["page"].partition("#")
        assert path == routes.service_incidents_url(incident["service"])
        page = demo.page(path.lstrip("/") + "index.html")
        told = page.xpath(f"//*[@id='{anchor}']/ancestor::article[1]")
        assert len(told) == 1, incident["id"]
        assert text_of(told[0].xpath(".//h3")[0]) == incident["title"]
        assert told[0].xpath(".//dl//time/@datetime")[0] == incident["started_at"]
        if not incident["open"]:
            assert f"after {duration(incident['duration_s'])}" in text_of(told[0].xpath(".//dl")[0])
        steps = told[0].xpath(".//ol[@class='timeline']/li")
        assert [s.xpath("time/@datetime")[0] for s in steps] == [u["at"] for u in incident["updates"]]


def test_every_service_has_an_incidents_page_with_all_of_its_incidents_newest_first(demo: DemoBuild) -> None:
    incidents = demo.json("api/v1/incidents.json")["incidents"]
    for svc in demo.config.services:
        page = demo.page(routes.service_incidents_file(svc.slug))
        own = [i for i in incidents if i["service"] == svc.slug]
        ids = [a.get("id") for a in page.xpath("//main//article[@class='incident']/h3")]
        assert sorted(ids) == sorted(routes.incident_anchor(i["id"]) for i in own), svc.slug
        assert [h for h in ids if h in {routes.incident_anchor(i["id"]) for i in own if not i["open"]}] == [
            routes.incident_anchor(i["id"]) for i in own if not i["open"]
        ]
        assert text_of(page.xpath("//h1")[0]) == f"Incidents of {svc.name}"
        if not own:
            assert "No incidents recorded for this service." in text_of(page.xpath("//main")[0])
        service_page = demo.page(f"services/{svc.slug}/index.html")
        links = service_page.xpath("//section[@aria-labelledby='h-incidents']//a/@href")
        assert (routes.service_incidents_url(svc.slug) in links) == bool(own)


# -- method and API pages -------------------------------------------------------------------------


def test_method_page_comes_from_the_configuration(demo: DemoBuild) -> None:
    page = demo.page("method/index.html")
    body = text_of(page.xpath("//main")[0])
    health = demo.json("api/v1/health.json")
    assert demo.config.site.vantage_point in body
    assert f"every {number(health['collection']['interval_s'])} seconds" in body
    # the health document's formula names statuses by their codes; the page by their words
    assert health["formula"].startswith("mean over services") and "operational 100" in health["formula"]
    told = health["formula"]
    for code, said in (("degraded", "degraded performance"), ("partial_outage", "partial outage")):
        told = told.replace(code, said)
    assert told.replace("major_outage", "major outage") in body
    rows = page.xpath("//section[@aria-labelledby='services']//tbody/tr")
    assert len(rows) == sum(len(s.checks) for s in demo.config.services)
    for svc in demo.config.services:
        record = demo.json(routes.service_file(svc.slug))["service"]
        for check in record["checks"]:
            assert any(
                check["url"] in text_of(r)
                and f"{number(check['timeout_s'])} s" in text_of(r)
                and f"{number(check['degraded_ms'])} ms" in text_of(r)
                for r in rows
            )
    assert "Database upgrade" in body, "maintenance windows are listed"


CONFIGURED_VENDOR_FIELDS = ("source", "format", "components", "timeout_s", "stale_after_s")


def test_the_method_page_is_made_of_what_the_records_hold(demo: DemoBuild) -> None:
    """The method page is made before any record (``configured_record``): the same fields, the same values."""
    from statusgen.render.api.documents import configured_record

    for svc in demo.config.services:
        record = demo.json(routes.service_file(svc.slug))["service"]
        assert configured_record(svc) == {
            "name": record["name"],
            "links": record["links"],
            "thresholds": record["thresholds"],
            "checks": [{k: v for k, v in c.items() if k != "last_result"} for c in record["checks"]],
            "vendor": record["vendor"] and {k: record["vendor"][k] for k in CONFIGURED_VENDOR_FIELDS},
        }
    body = text_of(demo.page("method/index.html").xpath("//main")[0])
    first = demo.config.services[0].slug
    for name in RANGES:
        history = demo.json(routes.history_file(first, name))
        assert f"{history['count']} buckets of {duration(history['resolution_s'])}" in body


def test_api_page_lists_every_endpoint_of_the_openapi_document(demo: DemoBuild) -> None:
    page = demo.page("api/index.html")
    shown = [text_of(h) for h in page.xpath("//section[@aria-labelledby='endpoints']//h3")]
    assert shown == [f"GET {p}" for p in openapi_document(demo.config)["paths"]]
    assert "/api/v1/openapi.json" in page.xpath("//a/@href")
    body = text_of(page.xpath("//main")[0])
    assert "max-age=15" in body and "120 requests in any minute" in body and "Retry-After" in body
    for r in RANGES:
        assert r in body


def test_every_example_of_the_api_page_is_a_url_of_the_tree(demo: DemoBuild) -> None:
    """Each endpoint's curl line asks for a file this build wrote: its service, its month and its
    parameters are real ones, never a {placeholder}."""
    base = demo.config.site.base_url.rstrip("/")
    examples = [
        code.split("'")[1].removeprefix(base)
        for code in demo.page("api/index.html").xpath("//pre/code/text()")
        if code.startswith("curl -i '")
    ]
    assert len(examples) == len(openapi_document(demo.config)["paths"])
    for url in examples:
        parts = urlsplit(url)
        assert "{" not in url and "}" not in url, url
        found = routes.resolve(parts.path, parse_qs(parts.query), lambda rel: (demo.root / rel).is_file())
        assert found.status == 200, url


# -- one source of truth, untrusted text ----------------------------------------------------------


def _site_data(demo: DemoBuild, config: Config | None = None) -> SiteData:
    store = Store(demo.config.site.store)
    last = store.last_finished_run()
    assert last is not None and last.finished_at is not None
    try:
        return gather(store, config or demo.config, last.finished_at)
    finally:
        store.close()


def built(
    demo: DemoBuild, config: Config | None = None, sql: tuple[tuple[str, tuple[Any, ...]], ...] = ()
) -> dict[str, bytes]:
    """Every file of a build of a copy of the demo's store (with ``sql`` run on it), with ``config``."""
    work = Path(tempfile.mkdtemp(prefix="statusgen-page-"))
    try:
        store = Store(work / "copy.db")
        with Store(demo.config.site.store) as source:
            source.db.backup(store.db)
        for statement, values in sql:
            store.db.execute(statement, values)
        config = config or demo.config
        config = dataclasses.replace(
            config, site=dataclasses.replace(config.site, store=store.path, output=work / "site")
        )
        last = store.last_finished_run()
        assert last is not None and last.finished_at is not None
        build(store, config, last.finished_at, workers=1)
        root = (work / "site").resolve()
        return {str(p.relative_to(root)): p.read_bytes() for p in root.rglob("*") if p.is_file()}
    finally:
        shutil.rmtree(work, ignore_errors=True)


def test_pages_show_the_documents_not_the_store(demo: DemoBuild) -> None:
    """Change a number in the documents only: the page follows the documents."""
    data = _site_data(demo)
    docs = site_documents(data, site_notices(data))
    snapshot, health = docs["api/v1/snapshot.json"], docs["api/v1/health.json"]
    snapshot["health_index"] = 12.5
    snapshot["counts"]["by_status"]["unknown"] = 417
    ninety = {s["slug"]: demo.json(routes.history_file(s["slug"], "90d")) for s in snapshot["services"]}
    ninety["acme-api"]["summary"]["availability"] = 12.345
    bars = {slug: views.front_bar(History.of(doc), EN) for slug, doc in ninety.items()}
    page = lxml.html.document_fromstring(
        views.front_page(data.config.site, EN, snapshot, health, {"incidents": []}, bars)
    )
    assert text_of(page.get_element_by_id("health-index")) == "12.5"
    assert text_of(page.xpath("//li[@data-status='unknown']")[0]).startswith("417 ")
    assert "12.345% available over 90 days" in text_of(page.get_element_by_id("svc-acme-api"))


def _incident_row(service: str) -> tuple[str, tuple[Any, ...]]:
    """An incident of ``service`` written into a store."""
    record = {
        "id": f"{service}-20261122t200000",
        "service": service,
        "title": "Gone",
        "severity": "major",
        "started_at": "2026-11-22T20:00:00Z",
        "ended_at": "2026-11-22T20:10:00Z",
        "updates": [
            {
                "at": "2026-11-22T20:00:00Z",
                "kind": "opened",
                "status": "partial_outage",
                "message": "Opened",
                "link": None,
                "ref": None,
            }
        ],
    }
    return (
        "INSERT INTO incidents VALUES (?, ?, ?, ?, ?, ?)",
        (record["id"], service, 1795377600, 1795378200, 1795378200, json.dumps(record)),
    )


@pytest.mark.parametrize("bad_slug", ["../../etc", "a/b", ""])
def test_an_incidents_service_never_names_a_file_outside_its_page(demo: DemoBuild, bad_slug: str) -> None:
    """A service no longer configured keeps its incidents page, named by the slug its incidents
    hold: one that is not a slug names no file."""
    with pytest.raises(RenderError, match="cannot name a page file"):
        built(demo, sql=(_incident_row(bad_slug),))


def test_a_service_no_longer_configured_keeps_its_incidents_page(demo: DemoBuild) -> None:
    files = built(demo, sql=(_incident_row("retired"),))
    page = lxml.html.document_fromstring(files[routes.service_incidents_file("retired")])
    assert text_of(page.xpath("//h1")[0]) == "Incidents of retired"
    assert page.xpath("//main//article/h3/@id") == [routes.incident_anchor("retired-20261122t200000")]


HOSTILE = '<script>alert("x")</script><img src=x onerror=alert(1)>'


def _hostile_view() -> dict[str, Any]:
    incident = {
        "id": "i1",
        "title": "Errors " + HOSTILE,
        "impact": "partial_outage",
        "status": "investigating",
        "started_at": "2026-11-22T20:00:00Z",
        "updated_at": "2026-11-22T20:05:00Z",
        "url": "javascript:alert(1)",
        "components": [],
    }
    safe = dict(incident, id="i2", title="Slow logins", impact="degraded", url="https://status.example.com/i2")
    window = {
        "id": "m1",
        "title": "Upgrade " + HOSTILE,
        "status": "scheduled",
        "starts_at": "2026-11-23T01:00:00Z",
        "ends_at": "2026-11-23T02:00:00Z",
        "url": "https://status.example.com/m1",
        "components": [],
    }
    return {
        "format": "statuspage",
        "status": "partial_outage",
        "description": "Partial " + HOSTILE,
        "components": [{"id": "c1", "name": "API " + HOSTILE, "status": "degraded", "group": None}],
        "incidents": [incident, safe],
        "maintenance_active": [],
        "maintenance_upcoming": [window],
        "updated_at": "2026-11-22T20:05:00Z",
        "page_url": "data:text/html,<b>x</b>",
    }


VENDOR_URL = "https://status.example.com/api/v2/summary.json"
SITE_SCRIPT = '<script src="/static/site.js" defer></script>'  # the only script a page may hold
WORDS_BLOCK = re.compile(r'<script type="application/json" id="words">[^<]*</script>')  # its words, escaped


def our_scripts_out(page: str) -> str:
    """A page without the site's script and its words' data block (whose JSON escapes "<")."""
    return WORDS_BLOCK.sub("", page.replace(SITE_SCRIPT, ""), count=1)


def _hostile_site(demo: DemoBuild) -> dict[str, bytes]:
    """The demo with a hostile name on acme-api and a vendor source whose view is hostile."""

    def change(s: ServiceConfig) -> ServiceConfig:
        if s.slug != "acme-api":
            return s
        return dataclasses.replace(s, name=s.name + " " + HOSTILE, vendor=VendorConfig(url=VENDOR_URL))

    config = dataclasses.replace(demo.config, services=tuple(change(s) for s in demo.config.services), by_slug={})
    now = Store(demo.config.site.store).last_finished_run().finished_at.timestamp()  # type: ignore[union-attr]  # the demo ran
    vendor = (
        "INSERT INTO vendor_sources (service, url, last_ok_at, fetched_at, outcome, view) VALUES (?,?,?,?,?,?)",
        ("acme-api", VENDOR_URL, now, now, "ok", json.dumps(_hostile_view())),
    )
    return built(demo, config, (vendor,))


def test_vendor_view_is_shown_and_untrusted_text_escaped(demo: DemoBuild) -> None:
    files = _hostile_site(demo)
    for path, body in files.items():
        if path.endswith(".html"):
            text = our_scripts_out(body.decode("utf-8"))
            assert "<script" not in text and "<img" not in text, path
            assert "javascript:" not in text and 'href="data:' not in text, path
    page = lxml.html.document_fromstring(files["services/acme-api/index.html"])
    vendor = page.xpath("//section[@aria-labelledby='h-vendor']")[0]
    status = text_of(page.get_element_by_id("vendor-status"))
    assert status == f"Partial outage: Partial {HOSTILE} (updated Nov 22, 2026, 20:05 UTC)"
    incidents = page.get_element_by_id("vendor-incidents").xpath("li")
    assert text_of(incidents[0]).startswith("Errors " + HOSTILE + " · impact: Partial outage · status: investigating")
    assert text_of(incidents[1]).startswith("Slow logins · impact: Degraded performance")
    assert "Upgrade " + HOSTILE in text_of(page.get_element_by_id("vendor-maintenance"))
    assert "API " + HOSTILE in text_of(vendor)
    links = vendor.xpath(".//a/@href")
    assert links == [VENDOR_URL, "https://status.example.com/i2", "https://status.example.com/m1"]
    assert text_of(page.xpath("//h1")[0]) == "Acme API " + HOSTILE
    assert html_problems(files["services/acme-api/index.html"].decode("utf-8")) == []


def test_a_service_page_escapes_every_word_of_its_record(demo: DemoBuild) -> None:
    """Every word of the record lands escaped, the site's title too."""
    quoted = 'https://acme.example/"><b>x</b>'

    def change(s: ServiceConfig) -> ServiceConfig:
        if s.slug != "acme-api":
            return s
        check = dataclasses.replace(s.checks[0], url=quoted, keyword="ok " + HOSTILE)
        return dataclasses.replace(
            s, name=HOSTILE, description="About " + HOSTILE, url=quoted, checks=(check, *s.checks[1:])
        )

    config = dataclasses.replace(demo.config, services=tuple(change(s) for s in demo.config.services), by_slug={})
    config = dataclasses.replace(config, site=dataclasses.replace(config.site, title="Status " + HOSTILE))
    body = built(demo, config)["services/acme-api/index.html"].decode("utf-8")
    text = our_scripts_out(body)
    assert "<script" not in text and "<img" not in text and '"><b>' not in text
    assert html_problems(body) == []
    page = lxml.html.document_fromstring(body)
    assert page.findtext(".//title") == f"{HOSTILE} \u00b7 Status {HOSTILE}"
    assert text_of(page.xpath("//h1")[0]) == HOSTILE
    assert page.xpath("//main/p[3]")[0].text_content() == "About " + HOSTILE  # after the stale banner's place
    assert page.xpath("//main/p[4]/a/@href") == [quoted]
    assert page.xpath("//head/link[@type='application/atom+xml']/@title")[-1] == f"{HOSTILE}: incidents"
    row = page.xpath("//section[@aria-labelledby='h-checks']//tbody/tr")[0]
    assert quoted in text_of(row) and f"text \u201cok {HOSTILE}\u201d" in text_of(row)
    assert page.xpath("//nav//a[@aria-current='page']/@href") == ["/"]


def test_outside_links_keep_only_http() -> None:
    assert outside_link("https://status.example.com/x") == "https://status.example.com/x"
    for bad in ("javascript:alert(1)", "data:text/html,x", "//evil.example", "/local", "", None, "http://[::1"):
        assert outside_link(bad) is None


def macro(name: str) -> Any:
    """A macro of ``templates/macros.html``, to call as a function."""
    return getattr(environment().get_template("macros.html").module, name)


def svg_of(chart: charts.Chart) -> lxml.html.HtmlElement:
    return lxml.html.fragment_fromstring(str(macro("chart")(chart)))


def test_chart_words_are_escaped(demo: DemoBuild) -> None:
    doc = demo.json(routes.history_file("acme-api", "24h"))
    hostile = dict(doc, service='a"><script>x</script>', summary=dict(doc["summary"], latency_p50_ms="<b>"))
    svg = str(macro("chart")(charts.latency(history_of(hostile), ENGLISH)))
    assert "<script" not in svg and "<b>" not in svg and 'a">' not in svg
    assert lxml.etree.fromstring(svg.encode("utf-8")).get("aria-label").startswith("Latency, last 24 hours: p50 <b> ms")


def test_incident_markup_escapes_every_word() -> None:
    incident = {
        "id": "x-1",
        "service": "x",
        "service_name": HOSTILE,
        "title": HOSTILE,
        "severity": "major",
        "open": False,
        "started_at": "2026-11-22T20:00:00Z",
        "ended_at": "2026-11-22T21:00:00Z",
        "updated_at": "2026-11-22T21:00:00Z",
        "duration_s": 3600,
        "links": {"page": '/incidents/x-1/"><b>'},
        "updates": [{"at": "2026-11-22T20:00:00Z", "kind": "vendor", "status": "partial_outage", "message": HOSTILE}],
    }
    for markup in (macro("incident_card")(incident), macro("incident_rows")([incident])):
        text = str(markup)
        assert isinstance(markup, Markup)
        assert "<script" not in text and "<img" not in text and '"><b>' not in text
        html_ = lxml.html.fragment_fromstring(text, create_parent="div")
        assert HOSTILE in text_of(html_) and html_.xpath(".//a/@href")[0] == '/incidents/x-1/"><b>'


def test_a_services_incidents_page_escapes_every_word(demo: DemoBuild) -> None:
    incident = {
        "id": 'x-1"><b>',
        "service": "x",
        "service_name": HOSTILE,
        "title": HOSTILE,
        "severity": HOSTILE,
        "open": True,
        "started_at": "2026-11-22T20:00:00Z",
        "ended_at": None,
        "updated_at": "2026-11-22T21:00:00Z",
        "duration_s": None,
        "links": {"page": '/services/x/incidents/#inc-x-1"><b>', "service": '/api/v1/services/x"><b>'},
        "updates": [{"at": "2026-11-22T20:00:00Z", "kind": "vendor", "status": "partial_outage", "message": HOSTILE}],
    }
    site = dataclasses.replace(demo.config.site, title=HOSTILE)
    text = views.service_incidents_page(site, EN, "x", HOSTILE, [incident]).decode("utf-8")
    assert "<script" not in our_scripts_out(text) and "<img" not in text and '"><b>' not in text
    page = lxml.html.document_fromstring(text)
    assert page.findtext(".//title") == f"Incidents of {HOSTILE} \u00b7 {HOSTILE}"
    assert text_of(page.xpath("//h1")[0]) == f"Incidents of {HOSTILE}"
    assert text_of(page.xpath("//main//h3")[0]) == HOSTILE
    assert text_of(page.xpath("//main//ol/li")[0]).endswith(HOSTILE)
    assert page.xpath("//main//article/h3/@id") == ['inc-x-1"><b>']
    assert page.xpath("//main//article/h3/a/@href") == ['/services/x/incidents/#inc-x-1"><b>']
    assert page.xpath("//head/link[@type='application/atom+xml']/@title")[-1] == f"{HOSTILE}: incidents"
    assert page.xpath("//nav//a[@aria-current='page']/@href") == ["/incidents/"]


def _points(values: list[tuple[float | None, int]]) -> list[dict[str, Any]]:
    start = datetime(2026, 1, 1)
    return [
        {
            "start": (start + timedelta(days=i)).strftime("%Y-%m-%dT%H:%M:%SZ"),
            "availability": a,
            "incident_minutes": m,
            "maintenance": 0,
            "latency_p50_ms": None,
            "latency_p95_ms": None,
        }
        for i, (a, m) in enumerate(values)
    ]


def test_latency_lines_break_at_gaps_and_dot_lone_buckets() -> None:
    values = [None, 10.0, None, 20.0, 30.0, 40.0, None, None, 5.5]
    points = [
        dict(p, latency_p50_ms=v, latency_p95_ms=v and v * 2)
        for p, v in zip(_points([(100.0, 0)] * len(values)), values, strict=True)
    ]
    doc = {
        "service": "x",
        "range": "24h",
        "resolution_s": 300,
        "count": len(points),
        "points": points,
        "from": points[0]["start"],
        "to": "2026-01-01T00:45:00Z",
        "summary": {"latency_p50_ms": 20.0, "latency_p95_ms": 40.0},
    }
    svg = svg_of(charts.latency(history_of(doc), ENGLISH))
    assert [c.get("class") for c in _svg_children(svg, "circle")] == ["dot95", "dot95", "dot50", "dot50"]
    assert [p.get("class") for p in _svg_children(svg, "path")] == ["grid", "p95", "p50"]
    assert [p.get("d").count("M") for p in _svg_children(svg, "path")[1:]] == [1, 1], "one line: buckets 3 to 5"
    latency_matches(svg, doc)


def test_a_bar_joins_the_days_of_a_band() -> None:
    points = _points([(None, 0)] * 3 + [(100.0, 0)] * 2 + [(99.5, 12), (99.1, 3), (100.0, 0)])
    assert charts.bar(Columns.of(points)) == [("n", 3, ""), ("f", 2, ""), ("h", 2, ""), ("f", 1, "")]


def test_a_bar_splits_its_runs_where_a_narrow_screen_cuts_it_and_knows_a_new_site() -> None:
    points = _points([(100.0, 0)] * 90)
    assert charts.bar(Columns.of(points)) == [("f", 30, "o60"), ("f", 30, "o30"), ("f", 30, "")]
    starts = [p["start"] for p in points]
    since = parse_time(starts[85]) + timedelta(hours=6)  # the site began on its 86th day
    cells = charts.bar(Columns.of(points), starts, since)
    assert cells == [("y", 30, "o60"), ("y", 30, "o30"), ("y", 25, ""), ("f", 5, "")]


def test_charts_are_well_formed_svg(demo: DemoBuild) -> None:
    for name in RANGES:
        history = history_of(demo.json(routes.history_file("slowpoke", name)))
        for chart in (charts.latency(history, ENGLISH), charts.availability(history, ENGLISH)):
            root = lxml.etree.fromstring(str(macro("chart")(chart)).encode("utf-8"))
            assert root.tag == "{http://www.w3.org/2000/svg}svg" and root.get("role") == "img"


# -- size and speed, on 200 services with 90 days of simulated history -----------------------

SIM_SERVICES, SIM_DAYS = 200, 90
SIM_NOW = datetime(2026, 11, 22, 20, 0, 30, tzinfo=UTC)


@functools.cache
def simulated_build() -> dict[str, bytes]:
    """``statusgen simulate --services 200 --days 90``, built once per session."""
    tmp = Path(tempfile.mkdtemp(prefix="statusgen-sim-"))
    atexit.register(shutil.rmtree, tmp, True)
    simulate(SIM_SERVICES, SIM_DAYS, tmp / "sim.db", SIM_NOW)
    path = tmp / "sim.toml"
    path.write_text(config_text(SIM_SERVICES, tmp / "sim.db", tmp / "site"), encoding="utf-8")
    config = load_config(path)
    with Store(config.site.store) as store:
        build(store, config, SIM_NOW)
    root = (tmp / "site").resolve()
    return {str(p.relative_to(root)): p.read_bytes() for p in root.rglob("*") if p.is_file()}


@pytest.fixture(scope="module")
def simulated() -> dict[str, bytes]:
    return simulated_build()


def test_front_page_for_200_services_with_90_days_is_under_150_kb(simulated: dict[str, bytes]) -> None:
    page = simulated["index.html"]
    histories = [orjson.loads(body) for path, body in simulated.items() if path.endswith("/history/90d.json")]
    runs = [len(charts.bar(Columns.of(h["points"]))) for h in histories]
    assert len(runs) == SIM_SERVICES and sum(runs) / len(runs) >= 10, (
        "realistic history: outages every few weeks make a dozen runs a bar"
    )
    items = lxml.html.document_fromstring(page).xpath("//li[@class='svc']")
    assert len(items) == SIM_SERVICES and all(len(i.xpath("div[@class='bar']/i")) for i in items)
    assert len(page) < SIZE_LIMIT, f"front page of 200 services is {len(page)} bytes"


def test_service_pages_of_200_services_stay_small(simulated: dict[str, bytes]) -> None:
    sizes = [len(body) for path, body in simulated.items() if re.fullmatch(r"services/[^/]+/index\.html", path)]
    assert len(sizes) == SIM_SERVICES and max(sizes) < 64 * 1024


def test_maintenance_is_told_where_readers_look(demo: DemoBuild) -> None:
    from statusgen.demo import MAINTAINED

    (notice,) = demo.json("api/v1/snapshot.json")["upcoming_maintenance"]
    assert (notice["service"], notice["title"], notice["status"], notice["source"]) == (
        MAINTAINED,
        "Database upgrade",
        "in_progress",
        "schedule",
    )
    assert demo.json(routes.service_file(MAINTAINED))["service"]["upcoming_maintenance"] == [notice]
    assert demo.json(routes.service_file("acme-api"))["service"]["upcoming_maintenance"] == []
    front = text_of(demo.page("index.html").xpath("//section[@aria-labelledby='h-maintenance']")[0])
    name = demo.config.by_slug[MAINTAINED].name
    assert (
        f"{name}: Database upgrade" in front and "in progress since" in front and "scheduled by the operator" in front
    )
    page = demo.page(f"services/{MAINTAINED}/index.html")
    assert "Database upgrade" in text_of(page.xpath("//ul[@class='maintenance-list']")[0])


from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

EN = Language("en")
day, duration = ENGLISH.day, ENGLISH.duration
number, status_word = en_number, en_status_word  # the test's own: written from the docs


_FIGURE = st.one_of(st.none(), st.floats(0, 1e7, allow_nan=False), st.integers(0, 10**9))


@settings(deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(
        st.fixed_dictionaries(
            {
                "start": st.datetimes(datetime(2000, 1, 1), datetime(2100, 1, 1)).map(
                    lambda t: t.strftime("%Y-%m-%dT00:00:00Z")
                ),
                "availability": st.one_of(st.none(), st.floats(0, 100, allow_nan=False)),
                "incident_minutes": st.integers(0, 1440),
                "checks": st.integers(0, 10**6),
                "failed": st.integers(0, 10**6),
                "maintenance": st.integers(0, 10**6),
                "latency_p50_ms": _FIGURE,
                "latency_p95_ms": _FIGURE,
            }
        ),
        max_size=5,
    )
)
def test_the_day_table_holds_nothing_to_escape(points):
    """service.html writes the day-by-day table unescaped: each cell must be a date, a number or a
    band's class, which markup cannot hide in."""
    for row in (r for tag in SHIPPED for r in charts.day_rows(points, words(Language(tag)))):
        for cell in row:
            assert str(Markup.escape(cell)) == cell, cell
